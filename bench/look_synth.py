"""Look at the synthetic scene generator's output and time it.

Writes, for each variant, a grid of sample scenes (``<variant>_grid.jpg``) and
one full-size scene with its truth drawn on it (``<variant>_truth.png``: face
outlines green when at least 90 % visible, yellow from 30 %, red below; a
blue dot marks each face's top-left corner in the mat's orientation; hands
outlined in magenta), and with ``--recording`` a short recorded game
(``recording/`` frames + ``truth.json``, and ``recording_strip.jpg``).
Prints render times per scene (wall clock and this process's CPU time).

    python bench/look_synth.py --out /tmp/synth [--n 6] [--seed 0] [--layout turtle] [--recording]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.codex import builtin  # noqa: E402
from companion.tiles import VARIANTS  # noqa: E402
from vision.synth import SceneSpec, deal_faces, render_scene, script_moves, write_recording  # noqa: E402


def _truth_overlay(scene) -> np.ndarray:
    t = scene.truth
    img = scene.image.copy()
    for i in np.flatnonzero(t.present):
        v = t.visible[i]
        colour = (0, 220, 0) if v >= 0.9 else (0, 220, 220) if v >= 0.3 else (0, 0, 255)
        q = np.round(t.face_corners_px[i] * 16).astype(np.int32)
        cv2.polylines(img, [q], True, colour, 1, cv2.LINE_AA, 4)
        cv2.circle(img, tuple(int(round(c)) for c in t.face_corners_px[i, 0]), 2, (255, 0, 0), -1)
    if t.hand_mask is not None:
        cs, _ = cv2.findContours(t.hand_mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cv2.drawContours(img, cs, -1, (255, 0, 255), 2)
    return img


def _grid(images, cols: int, width: int = 640) -> np.ndarray:
    small = [cv2.resize(im, (width, int(round(im.shape[0] * width / im.shape[1]))), interpolation=cv2.INTER_AREA)
             for im in images]
    h = small[0].shape[0]
    while len(small) % cols:
        small.append(np.zeros_like(small[0]))
    rows = [np.hstack(small[i:i + cols]) for i in range(0, len(small), cols)]
    return np.vstack(rows) if rows else np.zeros((h, width, 3), np.uint8)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the pictures")
    ap.add_argument("--n", type=int, default=6, help="scenes per variant")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layout", default="turtle", help="built-in layout name")
    ap.add_argument("--hands", type=float, default=0.5, help="probability of hands per scene")
    ap.add_argument("--size", default="1280x720", help="image size WxH")
    ap.add_argument("--recording", action="store_true", help="also write a short recorded game")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    w, h = (int(v) for v in args.size.lower().split("x"))
    layout = builtin(args.layout)
    walls, cpus = [], []
    for vi, variant in enumerate(VARIANTS):
        rng = np.random.default_rng(args.seed * 1000 + vi)
        render_scene(SceneSpec(variant, layout, image_size=(w, h)), np.random.default_rng(0))  # warm caches
        images = []
        first = None
        for k in range(args.n):
            t0, c0 = time.perf_counter(), time.process_time()
            sc = render_scene(SceneSpec(variant, layout, hands=args.hands, image_size=(w, h)), rng)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            images.append(sc.image)
            if first is None:
                first = sc
        cv2.imwrite(str(out / f"{variant}_grid.jpg"), _grid(images, 3), [cv2.IMWRITE_JPEG_QUALITY, 90])
        cv2.imwrite(str(out / f"{variant}_truth.png"), _truth_overlay(first))
    walls, cpus = np.array(walls), np.array(cpus)
    print(f"render_scene {w}x{h}, layout {args.layout}, {len(walls)} scenes: "
          f"wall median {np.median(walls) * 1000:.0f} ms (p90 {np.percentile(walls, 90) * 1000:.0f} ms), "
          f"CPU median {np.median(cpus) * 1000:.0f} ms (p90 {np.percentile(cpus, 90) * 1000:.0f} ms)")
    if args.recording:
        rng = np.random.default_rng(args.seed)
        variant = "mindful"
        faces = deal_faces(variant, len(layout), rng)
        moves = script_moves(variant, layout, faces, rng, claims=3, attempts=1, touches=1)
        t0 = time.perf_counter()
        truth = write_recording(out / "recording", variant, layout, moves, rng, fps=8.0,
                                spec=SceneSpec(variant, layout, faces=faces, image_size=(w, h)))
        dt = time.perf_counter() - t0
        print(f"recording: {truth['frames']} frames in {dt:.1f} s ({dt / truth['frames'] * 1000:.0f} ms/frame), "
              f"{len(truth['moves'])} moves, {len(truth['events'])} expected events")
        picks = [m["start_frame"] + (m["end_frame"] - m["start_frame"]) // 2 for m in truth["moves"]][:5]
        picks.append(truth["frames"] - 1)
        strip = [cv2.imread(str(out / "recording" / f"frame_{k:05d}.jpg")) for k in picks]
        for k, im in zip(picks, strip):
            cv2.putText(im, f"frame {k}", (20, 50), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (0, 0, 255), 3)
        cv2.imwrite(str(out / "recording_strip.jpg"), _grid(strip, 3), [cv2.IMWRITE_JPEG_QUALITY, 90])
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
