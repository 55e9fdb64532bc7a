/* The evidence page: tappable tiles over the overlay (from slots.json) and
   over the drawn board at that moment; each tap asks /api/check?at=<event>. */
"use strict";
(function () {
  const C = window.Companion;
  const root = document.getElementById("evapp");
  const at = root.dataset.event;
  const params = () => ({ game: root.dataset.game, at: at });
  const boardBox = document.getElementById("board");
  if (boardBox) C.bindBoard(boardBox, root.dataset.checkUrl, params, document.getElementById("check2"));

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

  C.bindBoard(svg, root.dataset.checkUrl, params, document.getElementById("check"));
  fetch(root.dataset.api, { headers: { Accept: "application/json" } })
    .then((r) => r.json())
    .then((d) => { data = d; if (img.complete) draw(); else img.addEventListener("load", draw); });
})();
