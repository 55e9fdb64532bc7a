"""How much the hand tests' signatures change with a hand in view, and
without one: grey alone against grey or colour (``vision.referee.hand_signature``,
``signature_change``).

For each recording folder (``frames/`` and ``truth.json``, as
``bench/bench_referee.py --keep`` leaves them under ``--work``), it takes
``--pairs`` random pairs of pictures without a hand, 3 frames or more apart,
the same camera pose and board (noise: the largest colour and grey change
in any signature px), and ``--hands`` pictures with a hand in view against
the last picture without one before it (the px the tests count as changed,
grey alone and grey or colour).  Prints one line a recording.

    python bench/bench_referee.py --renderer alt --seed 19700 --games 4 --fps 10 --work /tmp/w --keep
    python bench/bench_hand_colour.py /tmp/w/game-*
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.referee import hand_signature, signature_change  # noqa: E402


def _frame(folder: Path, k: int) -> np.ndarray:
    img = cv2.imread(str(folder / "frames" / f"frame_{k:05d}.jpg"))
    if img is None:
        raise SystemExit(f"cannot read frame {k} of {folder}")
    return img


def measure(folder: Path, pairs: int, hands: int, chroma_delta: float, rng: random.Random) -> dict:
    """Noise and hand figures of one recording folder (see the module's text)."""
    truth = json.loads((folder / "truth.json").read_text())
    ft = truth["frame_truth"]
    still = [f for f in ft if not f["hand"] and f["phase"] == "settled"]
    noise_colour, noise_grey = 0.0, 0.0
    for _ in range(pairs):
        a = rng.choice(still)
        cands = [b for b in still if b["camera"] == a["camera"] and b["present"] == a["present"]
                 and abs(b["frame"] - a["frame"]) >= 3]
        if not cands:
            continue
        b = rng.choice(cands)
        sa, sb = hand_signature(_frame(folder, a["frame"])), hand_signature(_frame(folder, b["frame"]))
        noise_colour = max(noise_colour, float(np.linalg.norm(sa[..., 1:] - sb[..., 1:], axis=2).max()))
        noise_grey = max(noise_grey, float(np.abs(sa[..., 0] - sb[..., 0]).max()))
    grey_px = both_px = 0
    with_hand = [f for f in ft if f["hand"]]
    for f in rng.sample(with_hand, min(hands, len(with_hand))):
        clear = [b for b in still if b["camera"] == f["camera"] and b["frame"] < f["frame"]]
        if not clear:
            continue
        before = hand_signature(_frame(folder, clear[-1]["frame"]))
        after = hand_signature(_frame(folder, f["frame"]))
        grey_px += int(signature_change(before, after, chroma_delta=0.0).sum())
        both_px += int(signature_change(before, after, chroma_delta=chroma_delta).sum())
    return {"noise_colour": noise_colour, "noise_grey": noise_grey, "grey_px": grey_px, "both_px": both_px}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, help="recording folders (frames/, truth.json)")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--hands", type=int, default=10)
    ap.add_argument("--chroma-delta", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    print(f"{'recording':44s} {'noise colour':>12s} {'noise grey':>10s} {'hand px grey':>12s} "
          f"{'grey or colour':>14s}")
    for folder in args.folders:
        if not (folder / "truth.json").is_file() or not (folder / "frames").is_dir():
            print(f"{folder.name:44s} skipped: no frames/ and truth.json")
            continue
        m = measure(folder, args.pairs, args.hands, args.chroma_delta, rng)
        print(f"{folder.name[:44]:44s} {m['noise_colour']:12.1f} {m['noise_grey']:10.1f} {m['grey_px']:12d} "
              f"{m['both_px']:14d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
