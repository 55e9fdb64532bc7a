"""Patch-level evaluation of an exported tile classifier on held-out scenes:

    python -m vision.training.evaluate [--model models/tiles.onnx] [--scenes 60]
                                       [--seed 2000000] [--worst DIR]

Cuts labelled patches exactly as training does (vision/training/dataset.py)
from scenes of a seed stream training never uses, runs the ONNX model with
onnxruntime (as inference does, softmax restricted to the scene's variant plus
none / occluded), and prints the accuracy per kind of label and the most
frequent confusions.  ``--worst DIR`` writes the worst-scored patches as PNG
montages to look at.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from companion.tiles import VARIANTS
from vision.crops import normalise
from vision.faces import ClassifierSettings, TileClassifier
from vision.training.dataset import make_scene_samples


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--scenes", type=int, default=60)
    ap.add_argument("--seed", type=int, default=2_000_000)
    ap.add_argument("--worst", type=Path, default=None)
    args = ap.parse_args(argv)
    import cv2

    clf = TileClassifier(ClassifierSettings(model_path=args.model) if args.model else ClassifierSettings())
    rows = []   # (variant, true label, predicted label, p(true), patch)
    for k in range(args.scenes):
        raw, labels, _ = make_scene_samples(args.seed, k, clf.crop)
        variant = VARIANTS[k % len(VARIANTS)]
        if not len(raw):
            continue
        sc = clf.scores(normalise(raw, clf.crop), variant)
        col = {l: i for i, l in enumerate(sc.labels)}
        pred, _ = sc.best()
        for r, lab, p, probs in zip(raw, labels, pred, sc.probs):
            short = lab.split("/", 1)[1] if "/" in lab else lab
            rows.append((variant, short, p, float(probs[col[short]]), r))
    kinds = {"face": lambda t: t not in ("none", "occluded"), "none": lambda t: t == "none",
             "occluded": lambda t: t == "occluded"}
    print(f"{len(rows)} patches from {args.scenes} scenes (seed stream {args.seed})")
    for name, f in kinds.items():
        sel = [r for r in rows if f(r[1])]
        acc = sum(r[1] == r[2] for r in sel) / max(len(sel), 1)
        print(f"  {name:9s} {len(sel):6d} patches  accuracy {acc:.4f}")
    for v in VARIANTS:
        sel = [r for r in rows if r[0] == v and kinds["face"](r[1])]
        print(f"  faces {v:8s} {len(sel):6d}  accuracy {sum(r[1] == r[2] for r in sel) / max(len(sel), 1):.4f}")
    conf = Counter((r[0], r[1], r[2]) for r in rows if r[1] != r[2])
    print("most frequent confusions (variant, truth -> predicted):")
    for (v, t, p), n in conf.most_common(15):
        print(f"  {n:4d}  {v}: {t} -> {p}")
    if args.worst:
        args.worst.mkdir(parents=True, exist_ok=True)
        worst = sorted(rows, key=lambda r: r[3])[:120]
        for name, f in kinds.items():
            sel = [r for r in worst if f(r[1])][:40]
            if not sel:
                continue
            tiles = []
            for v, t, p, pt, patch in sel:
                im = cv2.resize(patch, None, fx=3, fy=3, interpolation=cv2.INTER_NEAREST)
                im = cv2.copyMakeBorder(im, 0, 24, 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255))
                cv2.putText(im, f"{t[:9]}", (1, im.shape[0] - 14), cv2.FONT_HERSHEY_PLAIN, 0.7, (0, 120, 0), 1)
                cv2.putText(im, f"{p[:9]}", (1, im.shape[0] - 3), cv2.FONT_HERSHEY_PLAIN, 0.7, (0, 0, 200), 1)
                tiles.append(im)
            while len(tiles) % 10:
                tiles.append(np.full_like(tiles[0], 255))
            grid = np.vstack([np.hstack(tiles[i:i + 10]) for i in range(0, len(tiles), 10)])
            cv2.imwrite(str(args.worst / f"worst-{name}.png"), grid)
        print(f"wrote worst patches to {args.worst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
