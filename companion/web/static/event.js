/* The evidence page: tappable tiles over the overlay (from slots.json) and
   over the drawn board at that moment; each tap asks /api/check?at=<event>.
   It follows the ledger (/api/events) as the player page does: a void,
   correction or undo recorded later redraws its card and its board. */
"use strict";
(function () {
  const C = window.Companion;
  const root = document.getElementById("evapp");
  const at = root.dataset.event;
  const params = () => ({ game: root.dataset.game, at: at });
  const boardBox = document.getElementById("board");
  const boardCheck = boardBox ? C.bindBoard(boardBox, root.dataset.checkUrl, params, document.getElementById("check2")) : null;

  // ------------------------------------------------------------ live
  // The page was drawn once: an event voided from the console went on
  // showing its scoring with no badge and no word that it was old.  Each
  // ledger event of the game now draws the card and the board again (a
  // correction of an earlier event changes this one's board too); the line
  // under the badge says as of when, and "not live" when the stream is down.
  const live = document.getElementById("live");
  const asof = document.getElementById("asof");
  function setLive(on, text) {
    if (!live) return;
    live.classList.toggle("on", on);
    live.classList.toggle("off", !on);
    live.querySelector(".live-text").textContent = text;
  }
  function stamp(lastId, following) {
    if (!asof) return;
    const at = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    asof.textContent = following ? "Following the ledger live (last looked at " + at + ", event #" + lastId + ")."
      : "As the ledger stood at " + at + " (event #" + lastId + "): not live, so reload the page for anything newer.";
  }
  let lastId = parseInt(root.dataset.lastId || "0", 10);
  let following = false;
  const redraw = C.oneAtATime(async () => {
    try {
      const res = await fetch(window.location.pathname, { cache: "no-store" });
      if (!res.ok) { setLive(false, "not live"); stamp(lastId, false); return; }
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const head = doc.getElementById("ev-head"), mine = document.getElementById("ev-head");
      if (head && mine) mine.replaceChildren(...Array.from(head.childNodes).map((n) => document.importNode(n, true)));
      const board = doc.getElementById("board");
      if (board && boardBox) {
        boardBox.replaceChildren(...Array.from(board.childNodes).map((n) => document.importNode(n, true)));
        if (boardCheck) boardCheck.recheck();
      }
      stamp(lastId, following);
    } catch (err) {
      setLive(false, "not live");
      stamp(lastId, false);
    }
  });
  let retryMs = 5000, stream = null;
  // a stream silent past two keep-alives is dead (a host asleep): "not live", and connect again
  const watch = C.watchStream(() => stream, root.dataset.keepaliveS, () => {
    stream.close();
    following = false;
    setLive(false, "not live");
    stamp(lastId, false);
    connect();
  });
  function connect() {
    const es = new EventSource(root.dataset.eventsUrl + "?" + new URLSearchParams({ game: root.dataset.game, last_id: String(lastId) }));
    stream = es;
    es.onopen = () => { retryMs = 5000; following = true; watch.heard(); setLive(true, "live"); redraw(); };
    es.addEventListener("alive", () => watch.heard());
    es.onerror = () => {
      following = false;
      setLive(false, "not live");
      stamp(lastId, false);
      if (es.readyState === EventSource.CLOSED) { setTimeout(connect, retryMs); retryMs = Math.min(retryMs * 2, 60000); }
    };
    es.addEventListener("ledger", (m) => {
      watch.heard();
      try { lastId = Math.max(lastId, JSON.parse(m.data).id); } catch (err) { /* keep the last */ }
      redraw();
    });
    es.addEventListener("evicted", () => {        // newer pages from this address took its place
      es.close();
      stream = null;
      following = false;
      setLive(false, "not live");
      stamp(lastId, false);
    });
  }
  if (root.dataset.eventsUrl) connect();

  const img = document.getElementById("overlay-img");
  const svg = document.getElementById("overlay-svg");
  if (!img || !svg) return;
  const NS = "http://www.w3.org/2000/svg";
  let data = null;

  function draw() {
    if (!data || !img.naturalWidth) return;
    svg.setAttribute("viewBox", "0 0 " + img.naturalWidth + " " + img.naturalHeight);
    const taken = new Set((data.event.slots || []).map((s) => s.join(",")));
    const items = data.slots.slice().sort((a, b) => a.slot[2] - b.slot[2]);
    const nodes = [];
    for (const s of items) {
      const k = s.slot.join(",");
      const clickable = s.present && !s.covered;
      if (!clickable && !taken.has(k)) continue;
      const poly = document.createElementNS(NS, "polygon");
      poly.setAttribute("points", s.quad.map((p) => p.join(",")).join(" "));
      poly.setAttribute("data-slot", k);
      if (clickable) {
        poly.setAttribute("tabindex", "0");
        poly.setAttribute("role", "button");
        poly.setAttribute("aria-label", "tile " + k + (s.free ? ", free" : ", blocked"));
      } else {
        poly.setAttribute("class", "taken");
        poly.removeAttribute("data-slot");
      }
      nodes.push(poly);
    }
    svg.replaceChildren(...nodes);
  }

  // close-ups: on a phone the whole frame is ~340 px wide and a tile 8-14 px;
  // the event's tiles and a tile and a half round them (where whatever
  // blocks them stands), cut from the overlay and the frame before it
  function closeups() {
    const box = document.getElementById("closeups");
    const mine = new Set((data.event.slots || []).map((s) => s.join(",")));
    const quads = data.slots.filter((s) => mine.has(s.slot.join(","))).map((s) => s.quad);
    if (!box || !quads.length) return;
    const xs = quads.flat().map((p) => p[0]), ys = quads.flat().map((p) => p[1]);
    const tileW = Math.max(...quads.map((q) => Math.hypot(q[1][0] - q[0][0], q[1][1] - q[0][1])), 8);
    const pad = 1.5 * tileW;
    const W = img.naturalWidth, H = img.naturalHeight;
    let x0 = Math.max(0, Math.min(...xs) - pad), x1 = Math.min(W, Math.max(...xs) + pad);
    let y0 = Math.max(0, Math.min(...ys) - pad), y1 = Math.min(H, Math.max(...ys) + pad);
    if (x1 - x0 >= 0.8 * W) return;                        // the tiles lie far apart: the whole frame says it
    const figs = [];
    for (const [src, cap] of [[img.src, "Close-up (overlay)"], [data.files.before, "Close-up, before"]]) {
      if (!src) continue;
      const s = document.createElementNS(NS, "svg");
      s.setAttribute("viewBox", [x0, y0, x1 - x0, y1 - y0].map((v) => v.toFixed(1)).join(" "));
      s.setAttribute("class", "closeup");
      s.setAttribute("role", "img");
      s.setAttribute("aria-label", cap + " of this event's tiles");
      const im = document.createElementNS(NS, "image");
      im.setAttribute("href", src);
      im.setAttribute("width", W);
      im.setAttribute("height", H);
      s.appendChild(im);
      for (const q of quads) {
        const poly = document.createElementNS(NS, "polygon");
        poly.setAttribute("points", q.map((p) => p.join(",")).join(" "));
        poly.setAttribute("class", "mine");
        s.appendChild(poly);
      }
      const fig = document.createElement("figure");
      const fc = document.createElement("figcaption");
      fc.textContent = cap;
      fig.append(s, fc);
      figs.push(fig);
    }
    box.replaceChildren(...figs);
    box.hidden = !figs.length;
  }

  C.bindBoard(svg, root.dataset.checkUrl, params, document.getElementById("check"));
  fetch(root.dataset.api, { headers: { Accept: "application/json" } })
    .then((r) => r.json())
    .then((d) => {
      data = d;
      const both = () => { draw(); closeups(); };
      if (img.complete) both(); else img.addEventListener("load", both);
    });
})();
