/* The players' page: renders /api/state, stays live on /api/events (SSE). */
"use strict";
(function () {
  const C = window.Companion;
  const el = C.el;
  const app = document.getElementById("app");
  const $ = (id) => document.getElementById(id);
  let state = JSON.parse($("state-data").textContent || "null");
  let game = app.dataset.game || "";
  const follow = app.dataset.follow === "1";
  let lastId = parseInt(app.dataset.lastId || "0", 10);
  let seenMax = state ? state.last_id : 0;
  let clockOffset = 0;
  let clockFrom = null;          // the state clockOffset was taken from
  let timeUp = false;           // a Word Sprint countdown at 0 that no move or tick has ended yet
  const ENDS = { "cleared": "board cleared", "time-up": "time's up", "no-moves": "no moves left",
                 "abandoned": "ended by the referee", "turn-limit": "turn limit reached",
                 "stalemate": "no pair left to take", "declared": "hand declared" };

  const ICONS = {
    game_started: "\u25B6", claim: "\u2713", invalid: "\u2717", penalty: "\u26A0", touch: "\u261D", word: "\u270E",
    pass: "\u23ED", meld: "\u25A6", steal: "\u21C6", declare: "\u2605", hint: "?", reshuffle: "\u27F3",
    undo: "\u21B6", correction: "\u270D", needs_referee: "\u2691", "needs-referee": "\u2691", game_ended: "\u25A0",
  };
  const LINKED = ["claim", "invalid", "penalty", "needs_referee", "needs-referee"];

  function fmt(n) { return typeof n === "number" ? n.toLocaleString("en-US") : (n === null || n === undefined ? "\u2013" : String(n)); }
  function eventUrl(id) { return app.dataset.eventUrl.replace(/0$/, String(id)); }

  function tileChip(st, p, f) {
    const info = p.faces[f] || { short: f, name: f, suit: "" };
    const sub = /^\d+$/.test(info.short) ? info.suit.slice(0, 3) : "";
    // a button: a phone has no hover, so a tap names the tile under the rack
    return el("button", { type: "button", class: "tilechip", title: info.name, "aria-label": info.name, "data-name": info.name },
      [info.short, sub ? el("small", { text: sub }) : null]);
  }

  function playerCard(st, p) {
    const turn = !st.ended && st.turn === p.name;
    const winner = st.ended && (st.winners || []).includes(p.name);
    const head = el("h2", {}, [
      el("span", { class: "seat-mark", "aria-hidden": "true", text: p.mark.symbol }),
      el("bdi", { class: "pname", text: p.name }),   // (bdi: a right-to-left name keeps its place)
      el("span", { class: "seat-label", text: p.mark.label }),
      turn && !timeUp ? el("span", { class: "flag", text: "\u25B6 TO PLAY" }) : null,
      winner ? el("span", { class: "flag win", text: "\u2605 WINNER" }) : null,
    ]);
    const label = st.token_name && st.variant !== "mindful" ? st.token_name : "points";
    const score = el("div", { class: "score" }, [el("span", { class: "num", text: fmt(p.score) }), " ", el("span", { class: "lbl", text: label })]);
    const extra = [];
    if (st.variant === "mindful") extra.push(st.token_name + ": " + fmt(p.tokens));
    const words = p.words || [];
    if (words.length) {
      // a word counts as a match too: "3 matches · words: SKI, HOP" meant 1 pair and 2 words
      const pairs = Math.max(0, p.matches - words.length);
      if (pairs) extra.push(pairs + " pair" + (pairs === 1 ? "" : "s"));
      extra.push(words.length + " word" + (words.length === 1 ? "" : "s") + ": " + words.slice(-5).join(", ")
                 + (words.length > 5 ? " \u2026" : ""));
    } else {
      extra.push(p.matches + " match" + (p.matches === 1 ? "" : "es"));
    }
    if (p.invalid) extra.push(p.invalid + " invalid");
    if (p.penalties) extra.push(p.penalties + " penalt" + (p.penalties === 1 ? "y" : "ies"));
    const card = el("article", { class: "player seat-" + (p.seat % 4) + (turn ? " turn" : ""), "aria-current": turn ? "true" : null },
      [head, score, el("p", { class: "lines", text: extra.join(" \u00B7 ") })]);
    if (st.hand_mode) {
      const rack = el("div", { class: "rack" }, [el("span", { class: "rack-title", text: "Rack (" + p.rack.length + ")" })]);
      p.rack.forEach((f) => rack.append(tileChip(st, p, f)));
      card.append(rack);
      if (p.melds.length) {
        const melds = el("div", { class: "melds" }, [el("span", { class: "rack-title", text: "Melds" })]);
        p.melds.forEach((m) => melds.append(el("span", { class: "meld", "aria-label": m.kind }, [el("span", { class: "meld-kind", text: m.kind })].concat(m.faces.map((f) => tileChip(st, p, f))))));
        card.append(melds);
      }
    }
    return card;
  }

  function statusLine(st) {
    if (st.ended) {
      const who = st.winner === "team" ? "the team" : (st.winners || []).join(" and ");
      const why = ENDS[st.end_reason] || String(st.end_reason).replace("-", " ");
      return "\u25A0 Game over (" + why + ")" + (who ? ": \u2605 " + who + " win" + ((st.winners || []).length > 1 || st.winner === "team" ? "" : "s") : "");
    }
    if (timeUp) return "Time's up: the game ends with the next move";
    return "\u25B6 " + st.turn + " to play" + (st.stuck ? " \u00B7 no free pair left" : "");
  }

  function renderEvents(st) {
    const items = st.last_events.slice(-12).reverse();
    const out = items.map((e) => {
      const st2 = e.status || "ok";
      const body = el("div", { class: "ev-body" }, [
        el("span", { class: "ev-text", text: e.text }),
        st2 !== "ok" ? el("span", { class: "badge st-" + st2, text: st2.toUpperCase() }) : null,
        el("div", { class: "ev-meta" }, [
          "#" + e.id + (e.ref ? " \u2192 #" + e.ref : ""),
          LINKED.includes(e.type) ? [" \u00B7 ", el("a", { class: "evlink", href: eventUrl(e.id), text: (e.has_evidence ? "evidence & reason" : "reason") + " \u203A" })] : null,
        ].flat()),
      ]);
      return el("li", { class: "ev type-" + e.type + " st-" + st2 + (e.id > seenMax ? " new" : ""), "data-id": e.id },
        [el("span", { class: "ev-icon", "aria-hidden": "true", text: st2 === "rejected" ? "\u2715" : (ICONS[e.type] || "\u2022") }), body]);
    });
    $("events").replaceChildren(...out);
  }

  function render(st) {
    if (!st) return;
    ["stats", "events-card", "board-card"].forEach((id) => { $(id).hidden = false; });   // (hidden until a game starts)
    document.title = st.variant_title + " \u00B7 " + st.mode_title;
    $("title").textContent = st.variant_title;
    $("subtitle").textContent = st.mode_title + " \u00B7 " + (st.layout_title || st.layout)
      + ((st.games || []).length > 1 ? " \u00B7 " + st.game_id : "");
    const status = [el("p", { class: "big", text: statusLine(st) })];
    if (st.players.length > 2) {
      // every score on the first screen: the cards below take two screens for four players
      status.push(el("p", { class: "scoreline", "aria-label": "Scores" }, st.players.map((p) =>
        el("span", { class: "scorechip seat-" + (p.seat % 4) + (!st.ended && st.turn === p.name ? " turn" : "") }, [
          el("span", { "aria-hidden": "true", text: p.mark.symbol + " " }), el("bdi", { class: "sc-name", text: p.name }),
          " ", el("strong", { text: fmt(p.score) })]))));
    }
    const waiting = (st.needs_referee || []).length;
    if (waiting) status.push(el("p", { class: "alert" }, [el("a", { href: "#needs", text: "\u2691 Waiting for the referee: "
      + waiting + (waiting === 1 ? " thing" : " things") + " to settle \u203A" })]));
    if (st.team) status.push(el("p", {}, ["Team score: ", el("strong", { text: fmt(st.team.score) })]));
    if (st.result && st.result.stars !== undefined) status.push(el("p", { text: "\u2605".repeat(st.result.stars) + " " + st.result.stars + " star(s)" }));
    $("status").replaceChildren(...status);
    $("tiles-left").textContent = fmt(st.tiles_left);
    // free tiles of unknown face (a camera game records the faces it saw at
    // the start): the count is a lower bound, and says so
    const unseen = st.free_faces_unknown || 0;
    $("pairs-left").textContent = fmt(st.free_matches_left) + (unseen ? "+" : "");
    $("pairs-lbl").textContent = unseen ? "free pairs known (" + unseen + " free tile" + (unseen > 1 ? "s" : "") + " not yet seen)" : "free pairs left";
    // a Solo Quest's turn limit (docs/RULES.md 2.5: each pair attempt is a turn)
    const turns = st.turns;
    $("turns").hidden = !turns;
    if (turns) {
      $("turns-left").textContent = fmt(turns.left);
      $("turns-lbl").textContent = "turns left (turns " + turns.used + " of " + turns.limit + ")";
    }
    $("players").replaceChildren(...st.players.map((p) => playerCard(st, p)));
    renderEvents(st);
    const needs = st.needs_referee || [];
    $("needs").hidden = needs.length === 0;
    // tiles of an item that left the table: drawn "?" on the board, counted here
    const offText = (n) => {
      const k = (n.off_table || []).length;
      return k ? " (" + k + " tile" + (k > 1 ? "s" : "") + " off the table, ? on the board)" : "";
    };
    $("needs-list").replaceChildren(...needs.map((n) => el("li", {}, ["#" + n.id + " " + (n.reason || "unclear") + offText(n) + " ", el("a", { href: eventUrl(n.id), text: "evidence \u203A" })])));
    if (st.server_time && st !== clockFrom) {   // (a new state only: tick() re-renders the same one)
      clockFrom = st;
      clockOffset = st.server_time - Date.now() / 1000;
    }
    tick();
    seenMax = Math.max(seenMax, st.last_id || 0);
  }

  function tick() {
    const t = state && state.timer;
    const box = $("timer");
    if (!t) { box.hidden = true; return; }
    box.hidden = false;
    const v = C.timerView(t, state.server_time, state.ended, clockOffset);     // (the console runs it too)
    $("timer-value").textContent = v.value;
    $("timer-label").textContent = v.label;
    box.classList.toggle("low", v.low);
    if (t.kind === "countdown" && v.up !== timeUp) { timeUp = v.up; render(state); }
  }
  setInterval(tick, 1000);

  // ------------------------------------------------------------------ live updates
  // a state that could not be fetched (a Wi-Fi blip, a server busy for a
  // moment) is asked for again, 3 s later and then less often: the stream
  // may stay open with no event to come (the game's last move), and the
  // page kept "not live" and the old scores until the next one
  let retryTimer = null, retryWait = 3000;
  function retryLater() {
    if (retryTimer) return;
    retryTimer = setTimeout(() => { retryTimer = null; refresh(); }, retryWait);
    retryWait = Math.min(retryWait * 2, 30000);
  }
  // (one fetch at a time: events coming during one ask for one more)
  const refresh = C.oneAtATime(async () => {
    try {
      const q = game && !follow ? "?game=" + encodeURIComponent(game) : "";
      const res = await fetch(app.dataset.stateUrl + q, { headers: { Accept: "application/json" }, cache: "no-store" });
      // no game yet (the state's "waiting", while following the latest
      // game): the page waits for the first, which its stream brings; that
      // is no trouble (the page said "not live" and that scores it had not
      // shown "may be out of date", and asked again and again)
      trouble(res.ok ? "" : await problem(res));
      if (!res.ok) retryLater();
      const got = res.ok ? await res.json() : null;
      if (got && got.waiting) retryWait = 3000;
      if (got && !got.waiting) {
        retryWait = 3000;
        state = got;
        game = state.game_id;
        render(state);
        const svg = await fetch(app.dataset.boardUrl + "?game=" + encodeURIComponent(game), { cache: "no-store" });
        if (svg.ok) {
          const doc = new DOMParser().parseFromString(await svg.text(), "image/svg+xml");
          const root = doc.documentElement;
          if (root && root.nodeName === "svg") $("board").replaceChildren(document.importNode(root, true));
          board.recheck();
        }
      }
    } catch (err) {
      trouble("The scoreboard does not answer: is its computer still on the network?");
      retryLater();
      throw err;            // (the run asked for meanwhile is dropped: retryLater asks again)
    }
  });

  // what the server said when it could not answer (its JSON error, in words)
  async function problem(res) {
    try {
      const body = await res.json();
      if (body && body.error) return body.error;
    } catch (err) { /* not JSON */ }
    return "The scoreboard could not answer (" + res.status + ").";
  }

  // a line over the page while the scores shown may be out of date
  let paused = false;      // the stream was ended for newer pages from this address ("evicted")
  function trouble(text) {
    if (paused) return;        // the paused line (scores may be out of date) and its button stay
    const box = $("trouble");
    box.hidden = !text;
    box.textContent = text ? text + " The scores below may be out of date." : "";
    if (text) setLive(false, "not live");
    else if (stream && stream.readyState === EventSource.OPEN) setLive(true, "live");
  }

  function setLive(on, text) {
    const live = $("live");
    live.classList.toggle("on", on);
    live.classList.toggle("off", !on);
    live.querySelector(".live-text").textContent = text;
  }

  let stream = null, retryMs = 5000;
  // an open stream silent past two keep-alives is dead (a host asleep or
  // frozen): say so, and connect again (a break-test, session 58: the page
  // said "live" over scores 45 s old)
  const watch = C.watchStream(() => stream, app.dataset.keepaliveS, (quiet) => {
    if (paused || !stream) return;
    stream.close();
    stream = null;
    trouble("No word from the scoreboard for " + quiet + " s: is its computer asleep, or off the network?");
    connect();
  });
  // a stream that cannot reconnect for 6 s (the server stopped or crashed):
  // the state is asked for, whose failure says the scores may be out of
  // date (the page said only "reconnecting" for as long as it was down)
  let downTimer = null;
  function connect() {
    const params = new URLSearchParams({ last_id: String(lastId) });
    const es = new EventSource(app.dataset.eventsUrl + "?" + params);
    stream = es;
    es.onopen = () => { retryMs = 5000; watch.heard(); setLive(true, "live"); refresh(); };
    es.addEventListener("alive", () => watch.heard());
    es.onerror = () => {
      if (!$("trouble").textContent) setLive(false, "reconnecting\u2026");
      if (!downTimer) {
        downTimer = setTimeout(() => {
          downTimer = null;
          if (stream === es && es.readyState !== EventSource.OPEN) refresh();
        }, 6000);
      }
      if (es.readyState === EventSource.CLOSED) {
        // the server refused the stream (busy, or its ledger unreadable):
        // browsers give up on such a stream, so try again later, and say why
        refresh();
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 60000);
      }
    };
    es.addEventListener("evicted", () => {
      // newer pages from this address took this page's place (several
      // phones behind one proxy or network address): stop here rather than
      // take another page's place in turn, and let the player choose
      es.close();
      stream = null;
      paused = true;
      setLive(false, "paused");
      const box = $("trouble");
      const again = el("button", { type: "button", class: "reconnect", text: "Follow live again" });
      again.addEventListener("click", () => {
        paused = false;
        box.hidden = true;
        box.replaceChildren();
        connect();
        refresh();
      });
      box.replaceChildren("Live updates paused: more pages follow the scoreboard from this device or network " +
                          "address than it serves at once. The scores below may be out of date. ", again);
      box.hidden = false;
    });
    es.addEventListener("ledger", (m) => {
      watch.heard();
      const ev = JSON.parse(m.data);
      lastId = ev.id;
      if (follow && ev.type === "game_started") game = ev.game_id;
      else if (ev.type === "game_started" && ev.game_id !== game) {
        // a page kept on an older game's link: say a newer one has started
        $("newer-id").textContent = ev.game_id;
        $("newer").hidden = false;
      }
      if (!game || ev.game_id === game) refresh();
    });
    window.companionStream = es;
  }

  const board = C.bindBoard($("board"), app.dataset.checkUrl, () => (game ? { game: game } : {}), $("check"));
  const zoom = $("zoom");
  if (zoom) {
    zoom.addEventListener("click", () => {
      const on = $("board").classList.toggle("zoomed");
      zoom.setAttribute("aria-pressed", on ? "true" : "false");
      zoom.textContent = on ? "Whole board" : "Bigger tiles";
    });
  }
  $("players").addEventListener("click", (e) => {
    const chip = e.target.closest(".tilechip");
    if (!chip) return;
    const card = chip.closest(".player");
    let line = card.querySelector(".chip-name");
    if (!line) { line = el("p", { class: "chip-name", role: "status" }); card.append(line); }
    line.textContent = chip.dataset.name;
  });
  // a phone back on the network, or woken with the page in front: ask at once
  window.addEventListener("online", () => refresh());
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  render(state);
  connect();
})();
