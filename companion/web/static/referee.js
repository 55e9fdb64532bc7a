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

  function say(ok, text) {
    toast.replaceChildren(C.el("p", { class: "flash " + (ok ? "flash-ok" : "flash-error") }, [
      C.el("span", { "aria-hidden": "true", text: ok ? "\u2713 " : "\u2717 " }), text]));
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
    say(body.ok, body.ok ? (body.message || "done") : body.error || "refused");
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
