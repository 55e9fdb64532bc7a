"""Recognition on photos from an independent renderer (bench/altrender.py, not vision.synth).

    python bench/bench_altrender.py [--photos 80] [--seed 0] [--out DIR] [--assets DIR]
                                    [--blank-classifier PATH|none]

Photo ``k`` (k = seed .. seed + photos - 1) is rendered from
``np.random.default_rng((777, k))``: variant ``k % 4``, layouts in turn from
``bench_recognize.bench_layouts()``, faces dealt by ``bench_recognize.deal``,
0-60 % of the tiles removed as pairs of free tiles.  ``recognize`` runs without
the camera (as the CLI without --camera).

Figures per variant and overall, as bench_recognize: mat found, presence
accuracy over all slots, face accuracy on visible tiles (present, uncovered and
at least 60 % of the top face seen; a null face counts as wrong), photos
entirely right; then errors by kind: wrong face (visible tile), null face on a
visible tile, said empty (tile there), said present (slot empty), and wrong
face on a hidden tile.  With --out the first 8 photos and their overlays are
saved as PNGs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import altrender  # noqa: E402
from bench_recognize import VISIBLE_MIN, bench_layouts, deal  # noqa: E402

VARIANTS = ("love", "candy", "mindful", "word")
KINDS = ("wrong face", "null face on visible", "said empty", "said present", "wrong face on hidden")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--photos", type=int, default=80)
    ap.add_argument("--seed", type=int, default=0, help="first photo index")
    ap.add_argument("--out", type=Path, default=None, help="save the first 8 photos and overlays here")
    ap.add_argument("--assets", type=Path, default=altrender.DEFAULT_ASSETS)
    ap.add_argument("--verbose", action="store_true", help="print each photo's errors")
    ap.add_argument("--presence", type=Path, default=None, help="presence.onnx to use (default: models/presence.onnx)")
    ap.add_argument("--settings", default="{}", help="JSON object of ReconstructSettings fields to change")
    ap.add_argument("--blank-classifier", default=None,
                    help="the classifier of blanked windows for the second read of partly hidden faces "
                         "(default: models/tiles-blank.onnx), or 'none' to read them once")
    ap.add_argument("--face-scale", type=float, default=1.0,
                    help="print the faces this much smaller on blank tiles (0.9-1; a printer's 'fit to page')")
    args = ap.parse_args(argv)
    from tune_reconstruct import parse_settings
    try:
        settings = parse_settings(args.settings)
    except ValueError as e:
        ap.error(str(e))
    if not 0.5 <= args.face_scale <= 1.0:
        ap.error("--face-scale must be from 0.5 to 1")
    if args.presence is not None and not args.presence.is_file():
        ap.error(f"no presence model at {args.presence}")

    import cv2
    from companion.errors import MatNotFound
    from companion.rules import Geometry
    from vision.faces import TileClassifier
    from vision.mat import MatSpec
    from vision.presence import PresenceModel, PresenceSettings
    from vision.reconstruct import recognize

    cv2.setNumThreads(2)
    assets = altrender.Assets.load(args.assets)
    from bench_recognize import blank_classifier_at, default_blank_classifier, optional_model
    from companion.errors import BadInput
    try:
        clf = TileClassifier()
        presence = PresenceModel(PresenceSettings(model_path=args.presence)) if args.presence else PresenceModel()
        blanker = optional_model(args.blank_classifier, blank_classifier_at, default_blank_classifier)
    except BadInput as e:
        ap.error(str(e))
    spec = MatSpec.default()
    layouts = bench_layouts()
    print(f"layouts: {', '.join(l.name for l in layouts)}; photos {args.photos} from {args.seed}", flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)

    rows = []
    for n, k in enumerate(range(args.seed, args.seed + args.photos)):
        rng = np.random.default_rng((777, k))
        variant = VARIANTS[k % 4]
        layout = layouts[(k // 4) % len(layouts)]
        faces = deal(variant, len(layout), rng)
        present = altrender.remove_free_pairs(layout, faces, rng.uniform(0.0, 0.6), rng, assets.match[variant])
        img, tr = altrender.render(assets, variant, layout, faces, present, rng, face_scale=args.face_scale)
        t0 = time.perf_counter()
        try:
            rec = recognize(img, variant, layout, classifier=clf, spec=spec, presence=presence, settings=settings,
                            blank_classifier=blanker)
        except MatNotFound:
            rec = None
        ms = (time.perf_counter() - t0) * 1000
        g = Geometry.of(layout)
        covered = np.array([any(present[j] for j in g.covered_by[i]) for i in range(len(layout))])
        visible = present & ~covered & (tr.visible >= VISIBLE_MIN)
        row = {"k": k, "variant": variant, "layout": layout.name, "slots": len(layout), "visible": int(visible.sum()),
               "tilt": tr.tilt_deg, "yaw": tr.yaw_deg, "body": tr.body, "edges": tr.edges, "ms": ms,
               "mat_found": rec is not None, "kinds": Counter(), "errors": []}
        if rec is None:
            row.update(present_ok=0, face_ok=0, right=False)
            row["errors"].append("mat not found")
        else:
            pp = np.array([t.present for t in rec.tiles], bool)
            got = [t.face for t in rec.tiles]
            kinds, errs = row["kinds"], row["errors"]
            for i in range(len(layout)):
                s = tuple(layout.slots[i])
                if pp[i] != present[i]:
                    kind = "said present" if pp[i] else "said empty"
                    kinds[kind] += 1
                    errs.append(f"{kind} {s} (vis {tr.visible[i]:.2f}, seen {rec.tiles[i].seen}, "
                                f"conf {rec.tiles[i].confidence:.2f})")
                if visible[i] and got[i] != faces[i]:
                    kind = "null face on visible" if got[i] is None else "wrong face"
                    kinds[kind] += 1
                    errs.append(f"{kind} {s}: {got[i]} (truth {faces[i]}, vis {tr.visible[i]:.2f}, "
                                f"turned {bool(tr.turned[i])}, conf {rec.tiles[i].confidence:.2f})")
                elif not visible[i] and got[i] is not None and got[i] != faces[i]:
                    kinds["wrong face on hidden"] += 1
                    errs.append(f"wrong face on hidden {s}: {got[i]} (truth {faces[i]}, vis {tr.visible[i]:.2f})")
            row.update(present_ok=int((pp == present).sum()),
                       face_ok=int(sum(1 for i in np.flatnonzero(visible) if got[i] == faces[i])),
                       right=not errs)
        rows.append(row)
        if args.verbose and row["errors"]:
            print(f"photo {k} {variant} {layout.name} tilt {tr.tilt_deg:.0f} yaw {tr.yaw_deg:.0f} {tr.body}"
                  f" edges {tr.edges}:")
            for e in row["errors"][:12]:
                print("   ", e)
        if args.out and n < 8:
            cv2.imwrite(str(args.out / f"alt{k:03d}-{variant}.png"), img)
            if rec is not None:
                from vision.overlay import draw_overlay
                cv2.imwrite(str(args.out / f"alt{k:03d}-{variant}-overlay.png"), draw_overlay(img, rec))
        if (n + 1) % 20 == 0:
            print(f"  {n + 1} photos, {sum(r['right'] for r in rows)} entirely right", flush=True)

    def summary(sel):
        vis = sum(r["visible"] for r in sel)
        slots = sum(r["slots"] for r in sel)
        kinds = Counter()
        for r in sel:
            kinds.update(r["kinds"])
        return {"photos": len(sel), "mat_found": sum(r["mat_found"] for r in sel),
                "presence": sum(r["present_ok"] for r in sel) / max(slots, 1), "slots": slots,
                "face": sum(r["face_ok"] for r in sel) / max(vis, 1), "visible": vis,
                "right": sum(r["right"] for r in sel), "kinds": kinds,
                "ms": float(np.median([r["ms"] for r in sel])) if sel else float("nan")}

    print()
    print(f"{'':10s} {'photos':>6s} {'mat found':>9s} {'presence acc':>20s} {'face acc (visible)':>20s} "
          f"{'entirely right':>15s} {'ms med':>7s}")
    groups = {v: [r for r in rows if r["variant"] == v] for v in VARIANTS}
    groups["overall"] = rows
    sums = {}
    for name, sel in groups.items():
        s = sums[name] = summary(sel)
        print(f"{name:10s} {s['photos']:6d} {s['mat_found']:9d} {s['presence']:11.4f} ({s['slots']:5d}) "
              f"{s['face']:11.4f} ({s['visible']:5d}) {s['right']:6d} ({s['right'] / max(s['photos'], 1):5.3f}) "
              f"{s['ms']:7.0f}")
    print()
    print(f"{'errors':10s} " + " ".join(f"{k:>21s}" for k in KINDS))
    for name, s in sums.items():
        print(f"{name:10s} " + " ".join(f"{s['kinds'][k]:21d}" for k in KINDS))
    print()
    for label, key, vals in (("layout", "layout", [lay.name for lay in layouts]),
                             ("body", "body", list(altrender.BODY_COLOURS)), ("edges", "edges", [False, True])):
        for v in vals:
            sel = [r for r in rows if r[key] == v]
            if sel:
                s = summary(sel)
                print(f"{label} {str(v):16s} photos {s['photos']:3d} presence {s['presence']:.4f} "
                      f"face {s['face']:.4f} right {s['right']}")
    for lo, hi in ((0, 12), (12, 25), (25, 41)):
        sel = [r for r in rows if lo <= r["tilt"] < hi]
        if sel:
            s = summary(sel)
            print(f"tilt {lo:2d}-{hi:2d}          photos {s['photos']:3d} presence {s['presence']:.4f} "
                  f"face {s['face']:.4f} right {s['right']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
