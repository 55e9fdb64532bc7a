/* Shared helpers of the scoreboard pages: safe element building, "check a
   tile" (GET /api/check), drawn on the board SVG or an overlay, and the
   Word timer's clock. */
"use strict";
window.Companion = (function () {
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k === "class") node.className = v;
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of [].concat(children || [])) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function key(slot) { return slot.join(","); }

  /* A watchdog over a page's live stream: the server sends an "alive"
     event every keepalive seconds on an idle stream, so an open stream
     that brings nothing for two of them (and 5 s more) is dead, though the
     browser still calls it open (a host asleep or frozen, a network gone
     quiet under a half-open connection).  heard() is called on every
     message; onStale(seconds) once such a silence is found, at most every
     2 s while getStream() gives an open stream. */
  function watchStream(getStream, keepaliveS, onStale) {
    let lastHeard = Date.now();
    const staleMs = (2 * (Number(keepaliveS) || 15) + 5) * 1000;
    setInterval(() => {
      const es = getStream();
      if (!es || es.readyState !== EventSource.OPEN) { lastHeard = Date.now(); return; }
      const quiet = Date.now() - lastHeard;
      if (quiet > staleMs) { lastHeard = Date.now(); onStale(Math.round(quiet / 1000)); }
    }, 2000);
    return { heard() { lastHeard = Date.now(); } };
  }

  function clearMarks(root) {
    root.querySelectorAll(".sel, .cover, .pinch").forEach((n) => n.classList.remove("sel", "cover", "pinch"));
  }

  function mark(root, r) {
    clearMarks(root);
    const find = (s) => root.querySelector('[data-slot="' + key(s) + '"]');
    const add = (s, cls) => { const n = find(s); if (n) n.classList.add(cls); };
    add(r.slot, "sel");
    (r.covered_by || []).forEach((s) => add(s, "cover"));
    if (r.pinched) { (r.left || []).forEach((s) => add(s, "pinch")); (r.right || []).forEach((s) => add(s, "pinch")); }
  }

  /* The answer in words a table reads (the outlines on the board point at
     the tiles), then the engine's own sentence with coordinates, small, for
     the referee. */
  function plain(r) {
    if (r.verdict === "empty" && r.off_table_item != null)
      return ["Its tile left the table with a move the referee has still to settle (item #" + r.off_table_item + ")."];
    if (r.verdict === "empty") return ["No tile stands here now."];
    const out = [];
    if (r.covered) out.push((r.covered_by || []).length > 1 ? (r.covered_by.length + " tiles lie on top of it (outlined with dashes).")
      : "Another tile lies on top of it (outlined with dashes).");
    if (r.pinched) out.push("Tiles touch it on both its left and its right (outlined with dots), so it cannot slide out.");
    if (r.verdict === "free") out.push("Nothing lies on top of it and one side is open: it can be taken.");
    return out;
  }

  function renderCheck(box, r) {
    const icon = r.off_table_item != null ? "? OFF THE TABLE"
      : ({ free: "\u2713 FREE", blocked: "\u2715 BLOCKED", empty: "\u25CB EMPTY" }[r.verdict] || r.verdict);
    const parts = [el("p", { class: "verdict " + r.verdict, text: icon + (r.face ? " \u00B7 " + r.face.name : "") })];
    plain(r).forEach((t) => parts.push(el("p", { text: t })));
    parts.push(el("p", { class: "hint", text: "For the referee: " + r.text }));
    box.replaceChildren(...parts);
    // with the bigger tiles the answer can lie below the screen: bring it up
    const rect = box.getBoundingClientRect();
    if (rect.bottom > window.innerHeight || rect.top < 0) box.scrollIntoView({ block: "nearest",
      behavior: window.matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
  }

  async function check(url, params, box, roots) {
    const res = await fetch(url + "?" + new URLSearchParams(params), { headers: { Accept: "application/json" } });
    const r = await res.json();
    if (!res.ok) { box.replaceChildren(el("p", { text: r.error || "cannot check that tile" })); return null; }
    renderCheck(box, r);
    roots.forEach((root) => root && mark(root, r));
    return r;
  }

  /* Tapping (or Enter/Space on) a tile of container's board asks /api/check. */
  function bindBoard(container, url, params, box, extraRoots) {
    let selected = null;
    const go = (tile) => {
      selected = tile.dataset.slot;
      check(url, Object.assign({ slot: selected }, params()), box, [container].concat(extraRoots || []));
    };
    container.addEventListener("click", (e) => {
      const tile = e.target.closest("[data-slot]");
      if (tile && container.contains(tile)) go(tile);
    });
    container.addEventListener("keydown", (e) => {
      const tile = e.target.closest("[data-slot]");
      if (tile && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); go(tile); }
    });
    return {
      selected: () => selected,
      recheck: () => { if (selected) check(url, Object.assign({ slot: selected }, params()), box, [container]); },
    };
  }

  /* Seconds as "m:ss" (whole seconds, down; a dash for none). */
  function clock(sec) {
    if (sec === null || sec === undefined) return "\u2013";
    sec = Math.max(0, Math.floor(sec));
    return Math.floor(sec / 60) + ":" + String(sec % 60).padStart(2, "0");
  }

  /* A Word timer (/api/state's "timer") as the pages show it, now:
     {value: "4:59", label: "time left" | "time's up" | ..., up: a countdown
     at 0 that no move has ended yet, low: under 30 s}.  serverTime is the
     state's server_time, offset the server's clock minus this device's.
     The player page and the console both run it each second;
     companion.web.scoreboard.timer_view gives the same words on the server. */
  function timerView(t, serverTime, ended, offset) {
    const now = Date.now() / 1000 + (offset || 0);
    // a start on the wall clock (seconds since 1970, after 2001; not a
    // recording's own seconds from 0), however long ago
    const wall = t.running && t.start_t && serverTime && t.start_t > 1e9 && t.start_t <= serverTime + 86400;
    if (t.kind === "countdown") {
      let left = t.remaining;
      if (wall && t.deadline_t) left = t.deadline_t - now;
      const known = left !== null && left !== undefined;
      const out = known && left <= 0;
      // after the end: "time's up" when the clock ended it, else the time that was left
      return { value: clock(left), label: out ? "time's up" : ended ? "time left at the end" : "time left",
               up: out && !ended, low: known && left < 30 && !ended };
    }
    const spent = wall ? now - t.start_t : t.elapsed;
    return { value: clock(spent), label: t.target_seconds ? "time (target " + clock(t.target_seconds) + ")" : "time",
             up: false, low: false };
  }

  // An async task run one at a time: a call while it runs asks for one more
  // run after it (several calls, one run), so a burst of ledger events
  // fetches the page's state once or twice, never in parallel.  A run that
  // throws drops the run asked for meanwhile; the task says what failed.
  function oneAtATime(task) {
    let busy = false, again = false;
    return async function run() {
      if (busy) { again = true; return; }
      busy = true;
      try {
        do {
          again = false;
          await task();
        } while (again);
      } catch (err) {
        again = false;
      } finally {
        busy = false;
      }
    };
  }

  return { el, key, renderCheck, mark, check, bindBoard, clock, timerView, oneAtATime, watchStream };
})();
