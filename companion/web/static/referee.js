/* Referee console: forms marked .js are sent with fetch and the session's
   CSRF token in the X-CSRF-Token header; the live panel is re-fetched on
   every ledger event (SSE). */
"use strict";
(function () {
  const C = window.Companion;
  const box = document.getElementById("console");
  if (!box) return;
  const csrf = box.dataset.csrf;
  const panel = document.getElementById("panel");
  const toast = document.getElementById("toast");

  // kind: "ok", "warn" (recorded, but an invalid attempt or a penalty) or
  // "error" (refused).  The toast sits at the foot of the window (app.css),
  // so the answer shows next to the buttons however far the page scrolled;
  // a click dismisses it.
  let hideTimer = null;
  function say(kind, text) {
    const mark = { ok: "\u2713 ", warn: "! ", error: "\u2717 " }[kind];
    const cls = { ok: "flash-ok", warn: "flash-info", error: "flash-error" }[kind];
    toast.replaceChildren(C.el("p", { class: "flash " + cls }, [
      C.el("span", { "aria-hidden": "true", text: mark }), text]));
    toast.classList.add("floating");
    clearTimeout(hideTimer);
    if (kind === "ok") hideTimer = setTimeout(() => toast.replaceChildren(), 8000);
  }
  toast.addEventListener("click", () => toast.replaceChildren());

  // the forms outside the live panel follow the game: whose turn the move
  // form names, and whether there is a move to undo
  function syncForms() {
    const st = document.getElementById("panel-state");
    if (!st) return;
    const turn = st.dataset.turn;
    document.querySelectorAll('form[action$="/move"] select[name=player]').forEach((sel) => {
      if (turn && sel !== document.activeElement && Array.from(sel.options).some((o) => o.value === turn)) sel.value = turn;
    });
    document.querySelectorAll('form[action$="/undo"] button').forEach((b) => { b.disabled = st.dataset.canUndo !== "1"; });
  }

  let busy = false, again = false;
  async function refreshPanel() {
    if (panel.contains(document.activeElement) && document.activeElement !== document.body) { again = true; return; }
    if (busy) { again = true; return; }
    busy = true;
    try {
      const q = box.dataset.game ? "?game=" + encodeURIComponent(box.dataset.game) : "";
      const res = await fetch(box.dataset.panelUrl + q, { cache: "no-store", credentials: "same-origin" });
      if (res.ok) {
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        panel.replaceChildren(...Array.from(doc.body.childNodes).map((n) => document.importNode(n, true)));
        syncForms();
      }
    } finally {
      busy = false;
      if (again) { again = false; setTimeout(refreshPanel, 200); }
    }
  }
  panel.addEventListener("focusout", () => { if (again) setTimeout(refreshPanel, 300); });

  document.addEventListener("submit", async (e) => {
    const form = e.target;
    if (!form.classList.contains("js")) return;
    e.preventDefault();
    const res = await fetch(form.action, {
      method: "POST", body: new FormData(form), credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, Accept: "application/json" },
    });
    let body = {};
    try { body = await res.json(); } catch (err) { body = { ok: false, error: "HTTP " + res.status }; }
    const warn = body.ok && (body.events || []).some((ev) => ev.type === "invalid" || ev.type === "penalty");
    say(body.ok ? (warn ? "warn" : "ok") : "error", body.ok ? (body.message || "done") : body.error || "refused");
    if (document.activeElement) document.activeElement.blur();
    refreshPanel();
  });

  const mode = document.getElementById("mode");
  const variant = document.getElementById("variant");
  if (mode && variant) {
    const sync = () => { const o = mode.selectedOptions[0]; if (o) variant.value = o.dataset.variant; };
    mode.addEventListener("change", sync);
    sync();
  }

  const es = new EventSource(box.dataset.eventsUrl);
  es.addEventListener("ledger", () => refreshPanel());
})();
