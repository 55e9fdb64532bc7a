"""Training data for the tile classifier: labelled patches cut from synthetic
scenes (:mod:`vision.synth`) with the SAME crop function as inference
(:func:`vision.crops.extract_raw` / :func:`vision.crops.normalise`).

Per scene: render it, find the mat with the real pose estimator
(:func:`vision.pose.estimate_pose`, without intrinsics for most scenes, as the
CLI does by default; the true pose when the markers are hidden), then cut a
window for every layout slot at its own height plus "virtual" windows that
teach "none": one layer above visible tiles (a face seen too high), and half a
tile to the side (parts of two faces).  Each window is labelled from the
scene's per-pixel label image, sampled on the very same grid as the patch
(:func:`vision.crops.sampling_maps`, nearest neighbour), over the face area
inside the margin:

* the slot's own face fills >= ``face_min`` of it -> that face
  (``"variant/face-id"``);
* a hand or the frame edge covers >= ``hidden_min`` -> ``"occluded"``; a
  present top tile whose face shows < ``own_max_occluded`` (hidden by a taller
  stack in a tilted view) -> ``"occluded"`` too;
* otherwise (empty slot, a covered tile's window showing the tile above, a
  virtual window) -> ``"none"``.  A virtual window within ``ambiguous`` (mean
  corner distance / face width) of a drawn face, i.e. a face seen at the
  wrong height with almost no parallax, looks exactly like a real face and is
  left out; real slots keep their true label even then (see the comment in
  :func:`scene_samples`).

Seeds: scene ``k`` of a training run with seed ``s`` is rendered from
``np.random.default_rng((s, k))``; the bench (bench/bench_recognize.py) uses
``np.random.default_rng(BENCH_SEED_BASE + k)``, integer seeds that a training
tuple seed never equals.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.errors import MatNotFound
from companion.layouts import MAT_HALF_UNITS, Layout, Slot, shifted_to_origin
from companion.tiles import VARIANTS, tileset
from vision.crops import CropSettings, extract_raw, sampling_maps
from vision.pose import Camera, estimate_pose, project_slot_faces

NONE = "none"
OCCLUDED = "occluded"
OUTSIDE = 65533          # label of samples outside the frame
BENCH_SEED_BASE = 9_000_000
TRAIN_LAYOUTS = ("turtle", "sprint-flat", "sprint-2layer")
#: more stacked built-in layouts for training scenes.  The bench's other
#: layouts (bench/bench_recognize.py ``LAYOUTS``: pagoda-of-peace, twin-hearts,
#: sugar-pyramid, dragons-tail, alphabet-tower) are never used in training.
EXTRA_LAYOUTS = ("cupids-citadel", "eternal-garden", "gingerbread-castle", "sundae-mountain", "twin-peaks",
                 "imperial-palace", "turtle-of-longevity", "monogram-pyramid", "scholars-bookrest",
                 "typewriter-key")


def all_classes() -> tuple[str, ...]:
    """Every face of the four sets as ``"variant/face-id"``, then ``"none"``, ``"occluded"``."""
    return tuple(f"{v}/{f.id}" for v in VARIANTS for f in tileset(v).faces) + (NONE, OCCLUDED)


@dataclass(frozen=True)
class LabelSettings:
    """Thresholds of the window labelling (fractions of the face area)."""

    face_min: float = 0.6
    hidden_min: float = 0.4
    own_max_occluded: float = 0.35
    ambiguous: float = 0.2
    easy_none_keep: float = 0.25
    virtual_offsets: int = 16
    corner_noise_px: float = 0.6
    true_camera_share: float = 0.25


def builtin_layouts(names: tuple[str, ...] = TRAIN_LAYOUTS) -> list[Layout]:
    """The built-in layouts ``names`` (those that exist), shifted to the mat's origin."""
    from companion import codex
    out = []
    for name in names:
        try:
            out.append(shifted_to_origin(codex.builtin(name)))
        except Exception:  # a layout a colleague has not added yet
            continue
    return out


def random_layout(rng: np.random.Generator) -> Layout:
    """A random buildable layout on the mat: stacked blocks of tiles, some
    upper blocks offset by half a tile, some rows offset by half a tile, so
    that the classifier sees many stacking contexts besides the built-ins."""
    W, H = MAT_HALF_UNITS
    slots: set[Slot] = set()
    for _ in range(int(rng.integers(1, 4))):
        cols = int(rng.integers(2, 10))
        rows = int(rng.integers(1, 5))
        x0 = int(rng.integers(0, max(1, W - 2 * cols + 1)))
        y0 = int(rng.integers(0, max(1, H - 2 * rows + 1)))
        block = {Slot(x0 + 2 * i, y0 + 2 * j, 0) for i in range(cols) for j in range(rows)}
        if any(abs(s.x - t.x) < 2 and abs(s.y - t.y) < 2 for s in block for t in slots):
            continue
        slots |= block
    z = 0
    layer = sorted(slots)
    while layer and z < 4 and rng.random() < 0.8:
        xs = [s.x for s in layer]
        ys = [s.y for s in layer]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        dx = int(rng.integers(0, 2))
        dy = int(rng.integers(0, 2))
        cand = []
        for s in layer:
            t = Slot(s.x + dx, s.y + dy, z + 1)
            if t.x + 2 <= x1 + 2 and t.y + 2 <= y1 + 2 and rng.random() < 0.75:
                cand.append(t)
        # keep only supported (all four quarter cells on the layer below), non-overlapping
        below = {(s.x + i, s.y + j) for s in layer for i in (0, 1) for j in (0, 1)}
        new: list[Slot] = []
        for t in cand:
            if not all((t.x + i, t.y + j) in below for i in (0, 1) for j in (0, 1)):
                continue
            if any(abs(t.x - u.x) < 2 and abs(t.y - u.y) < 2 for u in new):
                continue
            new.append(t)
        if not new:
            break
        slots |= set(new)
        layer = new
        z += 1
    ordered = sorted(slots, key=lambda s: (s.z, s.y, s.x))
    return Layout("random", tuple(ordered), "random")


def scene_samples(scene, rng: np.random.Generator, crop: CropSettings = CropSettings(),
                  lab: LabelSettings = LabelSettings(), masks: bool = False):
    """Labelled raw patches from one rendered scene.

    Args:
        scene: ``vision.synth.Scene``.
        rng: randomness for pose source, window choice and corner noise.
        crop: patch geometry (the model's).
        lab: labelling thresholds.
        masks: also return each patch's hidden mask: for the window of a
            slot that no standing tile covers, the pixels that the tiles
            truly standing on higher layers hide from the pose's camera
            centre (:func:`vision.reconstruct.window_hidden_masks`, the mask
            ``recognize`` blanks before reading a partly hidden face again);
            nothing hidden for covered slots and virtual windows.  No draw
            of ``rng`` depends on it, so the patches and labels are the same
            either way.

    Returns:
        ``(raw, labels, info)``: ``raw (M, h, w, 3) uint8`` BGR patches,
        ``labels`` class names (``"variant/face-id"``, ``"none"``,
        ``"occluded"``), ``info`` counters; with ``masks``, a fourth item,
        ``(M, h, w) bool``.
    """
    tr = scene.truth
    layout = tr.layout
    spec = tr.mat
    n = len(layout)
    img = scene.image
    Hh, Ww = img.shape[:2]
    # ---- pose as inference sees it
    try:
        cam = None
        if rng.random() < lab.true_camera_share:
            cam = Camera(tr.camera.K, np.zeros(5), tr.camera.image_size)
        pose = estimate_pose(img, spec, cam)
        pose_src = "estimated"
    except MatNotFound:
        pose = tr.pose()
        pose_src = "true"
    # ---- windows: real slots + virtual ones
    present = np.asarray(tr.present, bool)
    slots = np.array([tuple(s) for s in layout.slots], np.float64).reshape(-1, 3)
    occupied = {tuple(s) for s, p in zip(layout.slots, present) if p}
    from companion.rules import Geometry
    g = Geometry.of(layout)
    covered = np.array([any(present[j] for j in g.covered_by[i]) for i in range(n)], bool)
    top = present & ~covered
    virtual = []
    for i in np.flatnonzero(top):
        s = layout.slots[i]
        v = (s.x, s.y, s.z + 1)
        if v not in occupied:
            virtual.append(v)
    offs = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)]
    tops = np.flatnonzero(top)
    if len(tops):
        for i in rng.choice(tops, min(lab.virtual_offsets, len(tops)), replace=False):
            s = layout.slots[int(i)]
            dx, dy = offs[int(rng.integers(len(offs)))]
            dz = int(rng.integers(0, 2))
            v = (s.x + dx, s.y + dy, s.z + dz)
            if v not in occupied:
                virtual.append(v)
    allw = np.concatenate([slots, np.array(virtual, np.float64).reshape(-1, 3)])
    m = len(allw)
    quads = project_slot_faces(allw, spec, pose).astype(np.float32)
    quads += rng.normal(0, lab.corner_noise_px, quads.shape).astype(np.float32)
    raw = extract_raw(img, quads, crop)
    # ---- label image sampled on the same grid (full resolution, nearest)
    maps = sampling_maps(quads, crop)
    labimg = scene.labels
    lp = cv2.remap(labimg, maps, None, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT,
                   borderValue=OUTSIDE).reshape(m, crop.height, crop.width)
    mh = int(round(crop.height * crop.margin / (1 + 2 * crop.margin)))
    mw = int(round(crop.width * crop.margin / (1 + 2 * crop.margin)))
    inner = lp[:, mh:crop.height - mh, mw:crop.width - mw].reshape(m, -1).astype(np.int64)
    area = inner.shape[1]
    from vision.synth import LABEL_HAND
    hidden = ((inner == LABEL_HAND) | (inner == OUTSIDE)).sum(axis=1) / area
    # windows in the true pose, to measure how far a window is from a drawn face
    true_quads = project_slot_faces(allw, spec, tr.pose())
    face_px = np.asarray(tr.face_corners_px, np.float64)
    face_w = np.linalg.norm(face_px[:, 1] - face_px[:, 0], axis=1)
    variant = tr.variant
    labels: list[str | None] = []
    info = {"pose": pose_src, "face": 0, "none": 0, "occluded": 0, "skipped": 0}
    for k in range(m):
        row = inner[k]
        faces_here = row[(row >= 1) & (row <= n)] - 1
        own = float((faces_here == k).sum()) / area if k < n else 0.0
        if k < n and present[k] and own >= lab.face_min:
            labels.append(f"{variant}/{tr.faces[k]}")
            continue
        if hidden[k] >= lab.hidden_min:
            labels.append(OCCLUDED)
            continue
        if k < n and top[k]:
            labels.append(OCCLUDED if own < lab.own_max_occluded else None)
            continue
        # none.  A real slot's window keeps its true label even when it sits
        # almost exactly on another face (a face one layer down or up seen with
        # little parallax): the model then learns what cues there are (scale,
        # shadows of the walls round a hole) and, where there are none, the
        # odds of the two cases as they occur in play.  A virtual window that
        # close to a face is left out (it has no counterpart at inference).
        label: str | None = NONE
        if len(faces_here):
            counts = np.bincount(faces_here, minlength=n)
            j = int(counts.argmax())
            if counts[j] / area >= 0.3:
                shift = np.linalg.norm(true_quads[k] - face_px[j], axis=1).mean() / max(face_w[j], 1e-6)
                if k >= n and shift < lab.ambiguous:
                    label = None          # every other "hard" none is kept
            elif rng.random() > lab.easy_none_keep:
                label = None
        elif rng.random() > lab.easy_none_keep:
            label = None
        labels.append(label)
    keep = [k for k, l in enumerate(labels) if l is not None]
    if masks:
        hid = np.zeros((len(keep), crop.height, crop.width), bool)
        _hidden_masks(hid, keep, n, layout, present, covered, spec, pose, crop)
    for l in labels:
        if l is None:
            info["skipped"] += 1
        elif l == NONE:
            info["none"] += 1
        elif l == OCCLUDED:
            info["occluded"] += 1
        else:
            info["face"] += 1
    if masks:
        return raw[keep], [labels[k] for k in keep], info, hid
    return raw[keep], [labels[k] for k in keep], info


def _hidden_masks(out: np.ndarray, keep: list[int], n: int, layout: Layout, present: np.ndarray,
                  covered: np.ndarray, spec, pose, crop: CropSettings) -> None:
    """Fill ``out[r]`` with the hidden mask of window ``keep[r]`` (see
    :func:`scene_samples`): real, uncovered slots only, and only where a
    standing tile of a higher layer hides some of the face (a 5 x 5 probe of
    :func:`vision.reconstruct.hidden_fraction` first)."""
    from vision.reconstruct import hidden_fraction, window_hidden_masks
    slots = layout.slots
    cam = pose.camera_centre_mm
    rows = [(r, k) for r, k in enumerate(keep) if k < n and not covered[k]]
    for z in sorted({slots[k].z for _, k in rows}):
        above = [slots[j] for j in range(n) if present[j] and slots[j].z > z]
        if not above:
            continue
        here = [(r, k) for r, k in rows if slots[k].z == z]
        frac = hidden_fraction([slots[k] for _, k in here], above, cam, spec, 5)
        part = [(r, k) for (r, k), f in zip(here, frac) if f > 0]
        if part:
            out[[r for r, _ in part]] = window_hidden_masks([slots[k] for _, k in part], above, cam, spec, crop)


def scene_spec_for(k: int, rng: np.random.Generator, hands: float = 0.35):
    """The ``SceneSpec`` of training scene ``k``: variant by turns; layout one
    of :data:`TRAIN_LAYOUTS` (1 in 3), one of :data:`EXTRA_LAYOUTS` (1 in 3)
    or a random one; 0-60 % of the tiles removed as free pairs, tilt 0-45
    degrees."""
    from vision.synth import SceneSpec
    variant = VARIANTS[k % len(VARIANTS)]
    u = rng.random()
    layouts = builtin_layouts(TRAIN_LAYOUTS if u < 1 / 3 else EXTRA_LAYOUTS) if u < 2 / 3 else []
    if layouts:
        layout = layouts[int(rng.integers(len(layouts)))]
    else:
        layout = random_layout(rng)
    return SceneSpec(variant, layout, hands=hands, tilt_deg=(0.0, 45.0))


def make_scene_samples(seed: int, k: int, crop: CropSettings = CropSettings(),
                       lab: LabelSettings = LabelSettings(), masks: bool = False):
    """Render training scene ``k`` of run ``seed`` and cut its samples
    (see :func:`scene_samples`)."""
    from vision.synth import render_scene
    rng = np.random.default_rng((seed, k))
    spec = scene_spec_for(k, rng)
    scene = render_scene(spec, rng)
    return scene_samples(scene, rng, crop, lab, masks)
