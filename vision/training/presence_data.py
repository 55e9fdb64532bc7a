"""Training data for the presence model (:mod:`vision.presence`).

Per scene (:func:`presence_scene_spec`, rendered by :mod:`vision.synth`): find the mat with the real pose estimator
(without intrinsics in most scenes, as the CLI runs by default), then cut the
two windows of every **candidate** slot (:func:`vision.presence.candidates`)
whose presence is a question: no present tile lies above it (a covered slot
is known to be present).  Label: the truth's ``present``.  Windows that a hand
covers for more than ``hand_max`` of the face area are left out (the face
classifier's "occluded" handles hands).

Seeds: scene ``k`` of a run with seed ``s`` comes from
``np.random.default_rng((PRESENCE_STREAM + s, k))``: tuple seeds, so never a
bench photo (integer seeds) nor a face-classifier training scene (stream ``s``).

    python -m vision.training.presence_data --seed 0 --scenes 3600
    python -m vision.training.presence_data --seed 1 --scenes 300
    python -m vision.training.presence_data --seed 2 --scenes 2400 --tilt 0 15

The third set adds nearly overhead views, where a stack's height shows only
as a few pixels of parallax (the presence model's weakest range).  Since
session 10 the shipped model is fine-tuned with a fourth set of scenes that
cast no shadows, and seed 5 is their validation set (``models/MODEL_CARD.md``,
"Presence model")::

    python -m vision.training.presence_data --seed 4 --scenes 1600 --tilt 0 25 --shadow-free 1
    python -m vision.training.presence_data --seed 5 --scenes 150 --tilt 0 25 --shadow-free 1
"""

from __future__ import annotations

import argparse
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np

from companion.errors import MatNotFound
from companion.rules import Geometry
from vision.crops import sampling_maps
from vision.pose import Camera, estimate_pose
from vision.presence import PRESENCE_CROP, candidates, presence_raw, window_quads

PRESENCE_STREAM = 3_000_000
HAND_MAX = 0.3
TRUE_CAMERA_SHARE = 0.25
#: pose error added to a sample's windows, px: one shift shared by both windows
#: and all four corners (an estimated pose is off by about 0.3 px on bench-like
#: photos, the same way for every slot and height), and a small independent
#: jitter per corner.  The parallax between the two windows, the cue for a
#: stack's height when the camera is nearly overhead, is what the estimated pose
#: gets right best (0.06 px median error against 1-3 px of parallax), so the
#: noise must not blur it (session 4's training drew 0.6 px independently per
#: corner and window).
POSE_NOISE_PX = 0.3
CORNER_NOISE_PX = 0.05


def scene_presence_samples(scene, rng: np.random.Generator):
    """Labelled window pairs of one scene.

    Returns:
        ``(raw, labels, info)``: ``raw (M, 2, h, w, 3) uint8``, ``labels (M,)
        uint8`` (1 present), ``info`` a dict of per-sample metadata arrays
        (``z``: layer, ``tilt``: the camera tilt in degrees).
    """
    from vision.synth import LABEL_HAND

    tr = scene.truth
    layout = tr.layout
    spec = tr.mat
    img = scene.image
    cam = Camera(tr.camera.K, np.zeros(5), tr.camera.image_size) if rng.random() < TRUE_CAMERA_SHARE else None
    try:
        pose = estimate_pose(img, spec, cam)
    except MatNotFound:
        pose = tr.pose()
    present = np.asarray(tr.present, bool)
    g = Geometry.of(layout)
    covered = np.array([any(present[j] for j in g.covered_by[i]) for i in range(len(layout))], bool)
    idx = np.flatnonzero(candidates(layout.slots) & ~covered)
    if len(idx) == 0:
        return np.zeros((0, 2, *PRESENCE_CROP.shape[1:], 3), np.uint8), np.zeros(0, np.uint8), {}
    slots = [layout.slots[i] for i in idx]
    q2 = window_quads(slots, spec, pose)
    shift = rng.normal(0, POSE_NOISE_PX, (1, q2.shape[1], 1, 2))
    q2 = (q2 + shift + rng.normal(0, CORNER_NOISE_PX, q2.shape)).astype(np.float32)
    # hand cover over each own-height face (label image on the classifier's grid)
    from vision.crops import CropSettings
    face_grid = CropSettings(height=16, width=12, margin=0.0)
    maps = sampling_maps(q2[0], face_grid)
    lp = cv2.remap(scene.labels, maps, None, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT,
                   borderValue=LABEL_HAND).reshape(len(idx), -1)
    hand = (lp == LABEL_HAND).mean(axis=1)
    keep = hand <= HAND_MAX
    raw = presence_raw(img, q2[:, keep])
    labels = present[idx[keep]].astype(np.uint8)
    z = np.array([s.z for s in slots], np.int64)[keep]
    return raw, labels, {"z": z, "tilt": np.full(len(labels), float(tr.pose().tilt_deg))}


def layouts_from_files(specs) -> list:
    """The layouts ``specs`` name (``--layouts``), each shifted to the mat's
    origin: built-in names or layout files as
    :func:`companion.layout_files.load_layout` reads them, ``PATH#NAME`` for
    one map of a GNOME ``.map`` or one board of a mah ``boards.json``; those
    the mat cannot hold (:func:`companion.layouts.check_layout`) are left
    out.

    Raises:
        BadInput: a spec that names no layout.
    """
    from companion.layout_files import load_layout
    from companion.layouts import check_layout, shifted_to_origin
    out = []
    for spec in specs:
        path, name = (spec.rsplit("#", 1) if "#" in spec and not Path(spec).is_file() else (spec, None))
        layout = load_layout(path, name)
        if check_layout(layout).buildable:
            out.append(shifted_to_origin(layout))
    return out


def presence_scene_spec(k: int, rng: np.random.Generator, tilt_deg: tuple[float, float] = (0.0, 45.0),
                        shadows: bool = True, layouts: tuple = ()):
    """Scene ``k``: variant by turns; layout turtle or sprint-2layer (1 in 3),
    one of ``vision.training.dataset.EXTRA_LAYOUTS`` (1 in 3; the bench's
    other layouts are never used) or a random stacked layout
    (:func:`vision.training.dataset.random_layout`); 0-60 % of the tiles
    removed as free pairs, camera tilt in ``tilt_deg`` (degrees), hands in 1
    scene in 5; ``shadows=False`` renders the tiles without cast shadows (a
    renderer or a room whose light casts none: the stack's height must then be
    read from parallax and walls).  With ``layouts`` (:func:`layouts_from_files`)
    the layout is one of them, drawn at random, instead."""
    from companion import codex
    from companion.layouts import shifted_to_origin
    from companion.tiles import VARIANTS
    from vision.synth import Augment, SceneSpec
    from vision.training.dataset import EXTRA_LAYOUTS, random_layout
    variant = VARIANTS[k % len(VARIANTS)]
    u = rng.random()
    if layouts:
        layout = layouts[int(rng.integers(len(layouts)))]
    elif u < 1 / 3:
        layout = shifted_to_origin(codex.builtin(("turtle", "sprint-2layer")[int(rng.integers(2))]))
    elif u < 2 / 3:
        layout = shifted_to_origin(codex.builtin(EXTRA_LAYOUTS[int(rng.integers(len(EXTRA_LAYOUTS)))]))
    else:
        layout = random_layout(rng)
    extra = {} if shadows else {"augment": Augment(shadows=0.0)}
    return SceneSpec(variant, layout, hands=0.2, tilt_deg=tuple(tilt_deg), **extra)


_LAYOUTS: tuple = ()      # --layouts, read once per worker process (:func:`_init_worker`)


def _init_worker(specs) -> None:
    global _LAYOUTS
    _LAYOUTS = tuple(layouts_from_files(specs)) if specs else ()


def make_samples(args):
    seed, k, tilt_deg, shadow_free = args
    from vision.synth import render_scene
    rng = np.random.default_rng((PRESENCE_STREAM + seed, k))
    # drawn from a stream of its own, so a run without shadow-free scenes renders as before
    shadows = not (shadow_free > 0 and np.random.default_rng((PRESENCE_STREAM + seed, k, 1)).random() < shadow_free)
    scene = render_scene(presence_scene_spec(k, rng, tilt_deg, shadows, _LAYOUTS), rng)
    return scene_presence_samples(scene, rng)


def build(seed: int, scenes: int, out: Path, start: int = 0, workers: int = 2, chunk: int = 100,
          tilt_deg: tuple[float, float] = (0.0, 45.0), shadow_free: float = 0.0, layouts=()) -> None:
    """Render scenes ``start .. start + scenes`` (camera tilt in ``tilt_deg``,
    degrees; a share ``shadow_free`` of them without cast shadows; on the
    layouts ``layouts`` names, :func:`layouts_from_files`, when given) and
    write ``out/presence-{seed}-{first}.npz`` chunks of ``chunk`` scenes."""
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with Pool(workers, initializer=_init_worker, initargs=(tuple(layouts),)) as pool:
        for c0 in range(start, start + scenes, chunk):
            path = out / f"presence-{seed}-{c0:06d}.npz"
            if path.exists():
                continue
            ks = [(seed, k, tilt_deg, shadow_free) for k in range(c0, min(c0 + chunk, start + scenes))]
            res = pool.map(make_samples, ks, chunksize=4)
            raw = np.concatenate([r[0] for r in res])
            lab = np.concatenate([r[1] for r in res])
            z = np.concatenate([r[2].get("z", np.zeros(0, np.int64)) for r in res])
            tilt = np.concatenate([r[2].get("tilt", np.zeros(0)) for r in res])
            np.savez(path, raw=raw, labels=lab, z=z, tilt=tilt)
            print(f"{path.name}: {len(lab)} windows ({lab.mean():.2f} present), {time.time() - t0:.0f} s",
                  flush=True)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, exit 2 (as the companion CLI)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def main(argv=None) -> int:
    ap = _Parser(prog="python -m vision.training.presence_data", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scenes", type=int, default=3600)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/presence-cache"))
    ap.add_argument("--tilt", type=float, nargs=2, default=(0.0, 45.0), metavar=("LO", "HI"),
                    help="range of the camera tilt, degrees")
    ap.add_argument("--shadow-free", type=float, default=0.0, metavar="SHARE",
                    help="share of the scenes rendered without cast shadows (0-1)")
    ap.add_argument("--layouts", nargs="+", default=(), metavar="SPEC",
                    help="render on these layouts only (built-in names or layout files, PATH#NAME for one map "
                         "of a .map or board of a boards.json; those the mat cannot hold are left out)")
    a = ap.parse_args(argv)
    if not 0 <= a.shadow_free <= 1:
        ap.error("--shadow-free needs a share from 0 to 1")
    if not 0 <= a.tilt[0] <= a.tilt[1] <= 80:
        ap.error("--tilt needs 0 <= LO <= HI <= 80")
    if a.scenes < 1 or a.start < 0 or a.workers < 1:
        ap.error("--scenes and --workers need at least 1, --start at least 0")
    if a.out.exists() and not a.out.is_dir():
        ap.error(f"--out {a.out} is a file, not a folder")
    if a.layouts:
        from companion.errors import BadInput
        try:
            if not layouts_from_files(a.layouts):
                ap.error("none of the --layouts can be built on the mat")
        except BadInput as exc:
            ap.error(str(exc))
    cv2.setNumThreads(1)
    try:
        build(a.seed, a.scenes, a.out, a.start, a.workers, tilt_deg=tuple(a.tilt), shadow_free=a.shadow_free,
              layouts=a.layouts)
    except OSError as exc:
        ap.error(f"cannot write to {a.out}: {exc.strerror or exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
