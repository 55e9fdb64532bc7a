/* Referee console: forms marked .js are sent with fetch and the session's
   CSRF token in the X-CSRF-Token header; the live panel is re-fetched on
   every ledger event (SSE), keeping what the referee typed in its forms. */
"use strict";
(function () {
  const C = window.Companion;
  const box = document.getElementById("console");
  if (!box) return;
  const csrf = box.dataset.csrf;
  const panel = document.getElementById("panel");
  const toast = document.getElementById("toast");
  const moveBoard = document.getElementById("move-board");
  const moveSlots = document.getElementById("move-slots");

  // tapping a tile of the move form's board puts it in (or takes it out of)
  // the Tiles field, in tapping order: the referee need not read coordinates
  const picked = () => (moveSlots ? moveSlots.value.split(/[\s;]+/).filter(Boolean) : []);
  function markPicked() {
    if (!moveBoard) return;
    const on = new Set(picked());
    moveBoard.querySelectorAll("[data-slot]:not(.offtable)").forEach((t) => t.classList.toggle("sel", on.has(t.dataset.slot)));
  }
  if (moveBoard && moveSlots) {
    const tap = (tile) => {
      const list = picked();
      const k = list.indexOf(tile.dataset.slot);
      if (k >= 0) list.splice(k, 1); else list.push(tile.dataset.slot);
      moveSlots.value = list.join(" ");
      markPicked();
    };
    moveBoard.addEventListener("click", (e) => { const t = e.target.closest("[data-slot]:not(.offtable)"); if (t) tap(t); });
    moveBoard.addEventListener("keydown", (e) => {
      const t = e.target.closest("[data-slot]:not(.offtable)");
      if (t && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); tap(t); }
    });
    moveSlots.addEventListener("input", markPicked);
    const zoom = document.getElementById("move-zoom");
    if (zoom) zoom.addEventListener("click", () => {
      const on = moveBoard.classList.toggle("zoomed");
      zoom.setAttribute("aria-pressed", on ? "true" : "false");
      zoom.textContent = on ? "Whole board" : "Bigger tiles";
    });
  }

  // kind: "ok", "warn" (recorded, but an invalid attempt or a penalty) or
  // "error" (refused).  The toast sits at the foot of the window (app.css),
  // so the answer shows next to the buttons however far the page scrolled;
  // a click dismisses it.
  let hideTimer = null;
  // a stream ended for newer pages (see "evicted" below) leaves a note with
  // a button under every later message, until it is tapped
  let pausedNote = null;
  // keep: the messages shown stay, this one goes under them (and none then
  // goes by itself: a warning must be read)
  function say(kind, text, keep) {
    const mark = { ok: "\u2713 ", warn: "! ", error: "\u2717 " }[kind];
    const cls = { ok: "flash-ok", warn: "flash-warn", error: "flash-error" }[kind];
    const before = keep ? Array.from(toast.children).filter((n) => n !== pausedNote) : [];
    toast.replaceChildren(...before, C.el("p", { class: "flash " + cls }, [
      C.el("span", { "aria-hidden": "true", text: mark }), text,
      C.el("button", { type: "button", class: "flash-close", "aria-label": "Close this message", text: "\u2715" })]),
      ...(pausedNote ? [pausedNote] : []));
    toast.classList.add("floating");
    document.body.classList.add("toast-open");       // room below the last button (app.css)
    clearTimeout(hideTimer);
    if (kind === "ok" && !before.length) hideTimer = setTimeout(hide, 8000);
  }
  function hide() {
    toast.replaceChildren(...(pausedNote ? [pausedNote] : []));
    document.body.classList.toggle("toast-open", !!pausedNote);
  }
  toast.addEventListener("click", hide);

  // the forms outside the live panel follow the game: whose turn the move
  // form names, and whether there is a move to undo
  function syncForms() {
    const st = document.getElementById("panel-state");
    if (!st) return;
    if (st.dataset.ended !== box.dataset.ended) {
      // the game ended (or an end was voided): the page's forms no longer fit it
      window.location.reload();
      return;
    }
    const turn = st.dataset.turn;
    document.querySelectorAll('form[action$="/move"] select[name=player]').forEach((sel) => {
      if (turn && sel !== document.activeElement && Array.from(sel.options).some((o) => o.value === turn)) sel.value = turn;
    });
    // Undo names the move it takes back: the label, the question and the
    // target the server checks follow the game (they once kept naming the
    // move of the page's first drawing while the server undid a newer one)
    document.querySelectorAll('form[action$="/undo"]').forEach((f) => {
      const b = f.querySelector("button");
      if (b) b.disabled = st.dataset.canUndo !== "1";
      const label = f.querySelector(".undo-label");
      if (label && st.dataset.undoLabel) label.textContent = st.dataset.undoLabel;
      if (st.dataset.undoConfirm) f.dataset.confirm = st.dataset.undoConfirm;
      else delete f.dataset.confirm;
      const target = f.querySelector("input[name=target]");
      if (target) target.value = st.dataset.undoId || "";
    });
    // the last event the page has shown: the server refuses a form that
    // saw an older one (a double tap, or a move recorded meanwhile)
    document.querySelectorAll("form input[name=after]").forEach((inp) => {
      if (!panel.contains(inp)) inp.value = st.dataset.last || "";
    });
    // the Start form: the ledger's newest event (a second tap of Start, sent
    // before the page moved to the new game, is then refused)
    document.querySelectorAll("form input[name=ledger_after]").forEach((inp) => {
      if (st.dataset.ledgerLast) inp.value = st.dataset.ledgerLast;
    });
  }

  const ledger = document.getElementById("ledger");
  const inLive = (el) => el && el !== document.body && (panel.contains(el) || (ledger && ledger.contains(el)));

  // ------------------------------------------------------------ forms kept over a refresh
  // The live parts are drawn anew on every ledger event: a Settle form half
  // filled in (a decision, faces, a note) was put back to its defaults
  // silently, and a referee who then tapped Settle settled the item wrongly.
  // What was typed, and which Correct forms were open, is now carried over
  // to the same form of the new drawing (known by its action and its item
  // or event); when that form is gone, the toast says so.
  function formKey(form) {
    const id = form.querySelector("input[name=item_id], input[name=event_id]");
    return id ? new URL(form.action, window.location.href).pathname + "#" + id.value : null;
  }
  const typed = (form) => Array.from(form.elements).filter((f) => f.name && f.type !== "hidden" &&
                                                                 f.tagName !== "BUTTON" && f.type !== "submit");
  function firstChoice(sel) {
    let k = 0;
    Array.from(sel.options).forEach((o, i) => { if (o.defaultSelected) k = i; });
    return k;
  }
  function changed(f) {
    if (f.type === "checkbox" || f.type === "radio") return f.checked !== f.defaultChecked;
    if (f.tagName === "SELECT") return f.selectedIndex !== firstChoice(f);
    return f.value !== f.defaultValue;
  }
  // key -> {open, values: [[name, value]] or null, what: the fields' words for the toast}
  function remember(root) {
    const kept = new Map();
    if (!root) return kept;
    root.querySelectorAll("form").forEach((form) => {
      const key = formKey(form);
      if (!key || form.dataset.sent) return;        // (a form sent and recorded starts afresh)
      const details = form.closest("details");
      const edited = typed(form).filter(changed);
      if (!edited.length && !(details && details.open)) return;
      kept.set(key, {
        open: !!(details && details.open),
        values: edited.length ? typed(form).map((f) => [f.name, f.type === "checkbox" ? f.checked : f.value]) : null,
        what: edited.map((f) => {
          const label = f.closest("label");
          const name = label ? label.textContent.replace(f.tagName === "SELECT" ? f.textContent : "", "").trim() : f.name;
          const v = f.type === "checkbox" ? (f.checked ? "ticked" : "not ticked")
            : f.tagName === "SELECT" ? (f.selectedOptions[0] ? f.selectedOptions[0].textContent : "") : f.value;
          return name.replace(/,.*$/, "") + ": " + (v.length > 40 ? v.slice(0, 40) + "\u2026" : v);
        }).join("; "),
      });
    });
    return kept;
  }
  function restore(root, kept) {
    if (!root) return;
    root.querySelectorAll("form").forEach((form) => {
      const key = formKey(form);
      const k = key && kept.get(key);
      if (!k) return;
      kept.delete(key);
      const details = form.closest("details");
      if (details && k.open) details.open = true;
      (k.values || []).forEach(([name, value]) => {
        const f = form.elements.namedItem(name);
        if (!f || f.type === "hidden" || f instanceof RadioNodeList) return;
        if (f.type === "checkbox") f.checked = value;
        else if (f.tagName !== "SELECT" || Array.from(f.options).some((o) => o.value === value)) f.value = value;
      });
    });
  }
  // what the toast says of a form that the new drawing no longer has
  function lostWords(key, k) {
    const [path, id] = key.split("#");
    const row = ledger && ledger.querySelector('tr[data-event="' + id + '"]');
    const voided = row && row.dataset.status === "voided";
    const typedText = " (" + k.what + ")";
    if (path.endsWith("/settle")) {
      return "Item #" + id + (voided ? " was voided meanwhile" : " was settled meanwhile (in another console?)") +
        ": what you typed for it" + typedText + " was not sent.";
    }
    const why = voided ? " was voided meanwhile (in another console?)"
      : !row ? " is no longer among the events shown" : " can no longer be corrected here";
    return "Event #" + id + why + ": the correction you typed for it" + typedText + " was not sent.";
  }
  let busy = false, again = false;
  // the console's session can end under an open page (the server restarted
  // and drew a new key, or Log out in another tab): the panel is then
  // refused (403), and the page said nothing while its game went on
  let stale = false;
  function outOfDate(text) {
    if (stale) return;
    stale = true;
    say("error", text + " The console below is out of date.");
  }
  async function refreshPanel() {
    if (inLive(document.activeElement)) { again = true; return; }
    if (busy) { again = true; return; }
    // a form of the live parts on its way: its answer decides whether what
    // it holds is kept (refused) or done with (recorded)
    if ([panel, ledger].some((b) => b && b.querySelector("form[data-busy]"))) { again = true; return; }
    busy = true;
    try {
      const params = new URLSearchParams();
      if (box.dataset.game) params.set("game", box.dataset.game);
      if (box.dataset.all) params.set("all", "1");
      const q = params.toString() ? "?" + params : "";
      const res = await fetch(box.dataset.panelUrl + q, { cache: "no-store", credentials: "same-origin" });
      if (res.ok) {
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const put = (box, part) => {
          const src = doc.querySelector('[data-part="' + part + '"]');
          if (box && src) box.replaceChildren(...Array.from(src.childNodes).map((n) => document.importNode(n, true)));
        };
        const kept = new Map([...remember(panel), ...remember(ledger)]);
        put(panel, "panel");
        put(ledger, "ledger");
        put(moveBoard, "move-board");
        restore(panel, kept);
        restore(ledger, kept);
        const lost = Array.from(kept).filter(([, k]) => k.values).map(([key, k]) => lostWords(key, k));
        if (lost.length) say("warn", lost.join(" "), true);
        markPicked();
        syncForms();
        tickClock();
        if (stale) { stale = false; hide(); }
      } else if (res.status === 403) {
        outOfDate("The referee session has ended (the server was restarted, or the console logged out " +
                  "elsewhere): reload the page and enter the PIN again.");
      } else {
        outOfDate("The console could not be brought up to date (HTTP " + res.status + "): reload the page.");
      }
    } catch (err) {
      outOfDate("No answer from the server: check the connection, then reload the page.");
    } finally {
      busy = false;
      if (again) { again = false; setTimeout(refreshPanel, 200); }
    }
  }
  [panel, ledger].forEach((box) => box && box.addEventListener("focusout", () => { if (again) setTimeout(refreshPanel, 300); }));

  document.addEventListener("submit", async (e) => {
    const form = e.target;
    if (!form.classList.contains("js")) return;
    e.preventDefault();
    if (form.dataset.busy) return;              // a second tap while the first is on its way
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    form.dataset.busy = "1";
    let res, body = {};
    try {
      res = await fetch(form.action, {
        method: "POST", body: new FormData(form), credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf, Accept: "application/json" },
      });
      try { body = await res.json(); } catch (err) { body = { ok: false, error: "HTTP " + res.status }; }
    } catch (err) {
      body = { ok: false, error: "no answer from the server: check the connection, then look at the ledger" };
    } finally {
      delete form.dataset.busy;
    }
    const written = body.events || [];
    // recorded: a Settle or Correct form is done with, and the refresh
    // below draws it afresh (a refused one keeps what was typed)
    if (body.ok || written.length) form.dataset.sent = "1";
    if (body.ok && form.dataset.go === "game" && body.game_id) {
      // a new game: open the console on it (the form's values are kept on a refusal)
      window.location.assign(window.location.pathname + "?game=" + encodeURIComponent(body.game_id));
      return;
    }
    if (body.ok) {
      const warn = body.warning || written.some((ev) => ev.type === "invalid" || ev.type === "penalty");
      say(warn ? "warn" : "ok", (body.message || "done") + (body.warning ? ". But " + body.warning + "." : ""));
    } else if (written.length) {
      // refused, but what it cost stands (e.g. a claim of blocked tiles:
      // the penalties are recorded): say both, so it is not sent again
      say("warn", (body.error || "refused").replace(/[.\s]*$/, ".") + " Recorded: " +
          written.map((ev) => "#" + ev.id + " " + ev.type).join(", ") + ".");
    } else {
      say("error", body.error || "refused");
    }
    if (written.length && form.action.endsWith("/move")) {
      // the move is in the ledger: clear its tiles so a second tap cannot send it again
      form.querySelectorAll("input[name=slots], input[name=faces], input[name=word]").forEach((inp) => { inp.value = ""; });
    }
    if (document.activeElement) document.activeElement.blur();
    refreshPanel();
  });

  // ------------------------------------------------------------ the Word clock
  // The panel's clock as the phones run it (common.js timerView), each
  // second between refreshes; a countdown reaching 0 brings the panel up to
  // date once, which then says that time is up.
  function tickClock() {
    const box = document.getElementById("console-clock");
    if (!box) return;
    let t = null;
    try { t = JSON.parse(box.dataset.timer); } catch (err) { t = null; }
    if (!t) return;
    const serverTime = parseFloat(box.dataset.serverTime);
    if (box.companionOffset === undefined) box.companionOffset = serverTime ? serverTime - Date.now() / 1000 : 0;
    const v = C.timerView(t, serverTime, box.dataset.ended === "1", box.companionOffset);
    box.querySelector(".clock-value").textContent = v.value;
    box.querySelector(".clock-label").textContent = v.label;
    box.classList.toggle("low", v.low);
    if (v.up && box.dataset.up !== "1" && !box.companionAsked) { box.companionAsked = true; refreshPanel(); }
  }
  tickClock();
  setInterval(tickClock, 1000);

  const mode = document.getElementById("mode");
  if (mode) {
    // the option fields a mode reads (companion.game._option_applies): the
    // others are hidden and emptied, so they are never sent
    const applies = (only, o) => only === "mindful" ? o.dataset.variant === "mindful"
      : only === "solo" ? o.dataset.kind === "solo"
      : only === "word-timed" ? o.dataset.variant === "word" && o.dataset.kind === "timed" : true;
    const sync = () => {
      const o = mode.selectedOptions[0];
      if (!o) return;
      mode.form.querySelectorAll("label[data-only]").forEach((lab) => {
        const on = applies(lab.dataset.only, o);
        lab.hidden = !on;
        if (!on) lab.querySelectorAll("input, select").forEach((f) => { f.value = ""; });
      });
    };
    mode.addEventListener("change", sync);
    sync();
  }

  let retryMs = 5000, stream = null, silent = false, downTimer = null;
  // an open stream silent past two keep-alives is dead (the host asleep or
  // frozen): the console says so and connects again, and the new stream's
  // opening fetches the panel afresh (a break-test, session 58, found the
  // phone pages "live" over old scores; the console had no word either)
  const watch = C.watchStream(() => stream, box.dataset.keepaliveS, (quiet) => {
    if (!stream) return;
    stream.close();
    silent = true;
    say("error", "No word from the scoreboard for " + quiet + " s: is its computer asleep, or off the " +
        "network? The console below may be out of date; connecting again.");
    connect();
  });
  function connect() {
    // from the ledger's newest event the page has shown, so that events
    // written while the stream was down are replayed (without it, a stream
    // that had carried no event yet restarted at the newest one), and the
    // panel is fetched again on every (re)connection
    const st = document.getElementById("panel-state");
    const since = st && st.dataset.ledgerLast ? "?" + new URLSearchParams({ last_id: st.dataset.ledgerLast }) : "";
    const es = new EventSource(box.dataset.eventsUrl + since);
    stream = es;
    let opened = false;
    es.onopen = () => {
      retryMs = 5000;
      watch.heard();
      if (opened || silent) refreshPanel();
      if (silent) { silent = false; say("ok", "Connected to the scoreboard again: the console is up to date."); }
      opened = true;
    };
    es.addEventListener("alive", () => watch.heard());
    es.onerror = () => {
      // a stream that cannot reconnect for 6 s: the server stopped, crashed
      // or is off the network; said, and the console says so again when it
      // answers (a break-test, session 59: the phone said "not live" in 6 s,
      // the console nothing in 95 s)
      if (!downTimer) {
        downTimer = setTimeout(() => {
          downTimer = null;
          if (stream && stream.readyState !== EventSource.OPEN && !silent) {
            silent = true;
            say("error", "The scoreboard does not answer: is it still running, and on the network? The " +
                "console below may be out of date; it keeps trying.");
          }
        }, 6000);
      }
      if (es.readyState === EventSource.CLOSED) {
        // refused (too many live pages, or the ledger unreadable): browsers
        // give up on such a stream, so the console tries again later
        refreshPanel();
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, 60000);
      }
    };
    es.addEventListener("ledger", (m) => {
      watch.heard();
      let ev = null;
      try { ev = JSON.parse(m.data); } catch (err) { ev = null; }
      if (ev && ev.type === "game_started" && box.dataset.game && ev.game_id !== box.dataset.game) {
        // a newer game started (the console stays on its own: its forms
        // name it): said, with a link to the newer one
        const note = document.getElementById("newer");
        if (note) {
          document.getElementById("newer-id").textContent = ev.game_id;
          document.getElementById("newer-link").href = note.dataset.consoleUrl + "?" + new URLSearchParams({ game: ev.game_id });
          note.hidden = false;
        }
      }
      refreshPanel();
    });
    es.addEventListener("evicted", () => {
      // newer pages from this address took this one's place: it stops
      // following rather than take another page's place in turn, and offers
      // to follow again at a tap (the oldest other page then gives way)
      es.close();
      stream = null;
      const again = C.el("button", { type: "button", class: "reconnect", text: "Follow live again" });
      again.addEventListener("click", (e) => {
        e.stopPropagation();
        pausedNote = null;
        hide();
        connect();
        refreshPanel();
      });
      pausedNote = C.el("p", { class: "flash flash-error paused" }, [
        C.el("span", { "aria-hidden": "true", text: "\u2717 " }),
        "Live updates paused: more pages follow the ledger from this device or network address than the " +
        "server serves at once, so the console below may be out of date. ", again]);
      hide();
      toast.classList.add("floating");
    });
  }
  connect();
})();
