"""Recorded games drawn by the independent renderer (``bench/altrender.py``).

The camera referee was tuned on recordings from ``vision.synth.recording``;
the checks it must pass run it on videos it has never seen.  This module
draws the same scripted games (who lifts which tile when, the hands' paths
in mm and the truth, from :class:`vision.synth.recording.Recording`'s plan)
with pictures made another way:

* every board state by :func:`altrender.render`: its own camera (a tilt drawn
  in the bench's range, field of view 50-70 degrees, any yaw, the mat
  spanning 75-92 % of the frame), table,
  directional light, tile bodies and edges, exposure, blur and JPEG, the
  same for every frame of one game (``altrender.sample_look``);
* per frame 1 % of exposure flicker and sensor noise of 1.5 grey levels;
* hands drawn here as flat-shaded 3D shapes (an arm rising towards the
  player's side of the mat, a palm, four fingers and a thumb, a carried tile
  between the fingers) projected with the frame's camera, with a soft shadow
  on what lies under them, in one of six skin tones and a sleeve colour per
  player.

Nothing here imports ``vision.synth``'s drawing: only its plan.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import altrender  # noqa: E402

#: skin tones (BGR), light to dark
SKIN = ((170, 190, 236), (140, 172, 225), (112, 150, 205), (84, 120, 176), (62, 90, 138), (45, 62, 96))
VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov")


def _cam(tr: altrender.AltTruth, size) -> altrender.Cam:
    R, _ = cv2.Rodrigues(np.asarray(tr.rvec, np.float64))
    return altrender.Cam(np.asarray(tr.K, np.float64), R, np.asarray(tr.tvec, np.float64), tuple(size),
                         tr.tilt_deg, tr.yaw_deg)


def _depth(cam: altrender.Cam, pts: np.ndarray) -> np.ndarray:
    return (np.asarray(pts, np.float64) @ cam.R.T + cam.t)[:, 2]


def _strip(cam, a: np.ndarray, b: np.ndarray, width_a: float, width_b: float, up: float = 0.0):
    """The outline (px) of a flat strip from 3D point ``a`` to ``b`` (mm),
    ``width_a`` wide at ``a`` and ``width_b`` at ``b``, lying in the
    horizontal; None where a corner lies behind the camera."""
    d = b[:2] - a[:2]
    n = np.array([-d[1], d[0]]) / max(1e-9, float(np.hypot(*d)))
    pts = np.array([[*(a[:2] + n * width_a / 2), a[2]], [*(b[:2] + n * width_b / 2), b[2] - up],
                    [*(b[:2] - n * width_b / 2), b[2] - up], [*(a[:2] - n * width_a / 2), a[2]]])
    if (_depth(cam, pts) <= 1.0).any():
        return None
    return cam.project(pts)


def _ellipse(cam, centre: np.ndarray, along: np.ndarray, half_len: float, half_w: float, k: int = 24):
    n = np.array([-along[1], along[0]])
    t = np.linspace(0, 2 * math.pi, k, endpoint=False)
    pts = np.array([[*(centre[:2] + along * half_len * math.cos(a) + n * half_w * math.sin(a)), centre[2]]
                    for a in t])
    if (_depth(cam, pts) <= 1.0).any():
        return None
    return cam.project(pts)


def draw_hand(img: np.ndarray, cam: altrender.Cam, tip_mm, side_mm, carry: int, skin, sleeve,
              tile_colour, light_px: tuple[float, float], sigma: float) -> None:
    """Draw one hand into ``img`` ((H, W, 3) uint8 BGR, in place): fingertips
    at ``tip_mm`` (mat mm, Z = -height), the arm rising towards ``side_mm``;
    ``carry`` tiles held show one tile between the fingers.  A shadow
    offset by ``light_px`` (px) darkens what lies under the hand; the hand is
    blurred by ``sigma`` px like the rest of the picture."""
    H, W = img.shape[:2]
    tip = np.asarray(tip_mm, np.float64)
    d = np.asarray(side_mm, np.float64)[:2] - tip[:2]
    along = d / max(1e-9, float(np.hypot(*d)))          # from the fingertips towards the player
    n = np.array([-along[1], along[0]])
    layer = np.zeros_like(img)
    mask = np.zeros((H, W), np.uint8)

    def fill(poly, colour):
        if poly is None:
            return
        q = np.round(poly * 8).astype(np.int32)
        cv2.fillPoly(layer, [q], colour, cv2.LINE_AA, 3)
        cv2.fillPoly(mask, [q], 255, cv2.LINE_AA, 3)

    def at(dist, side=0.0, rise=0.0):
        p = tip.copy()
        p[:2] += along * dist + n * side
        p[2] -= rise
        return p

    skin = np.asarray(skin, np.float64)
    dark = tuple(float(v) for v in skin * 0.82)
    light = tuple(float(v) for v in np.clip(skin * 1.06, 0, 255))
    # the arm: wrist to far beyond the picture, rising 0.45 mm a mm
    for a0, a1, w0, w1, col in ((80, 220, 62, 78, skin), (220, 1400, 86, 110, sleeve)):
        fill(_strip(cam, at(a0, rise=a0 * 0.45), at(a1, rise=a1 * 0.45), w0, w1), tuple(float(v) for v in col))
    fill(_ellipse(cam, at(55, rise=18), along, 48, 42), tuple(float(v) for v in skin))
    if carry:
        c = at(-4, rise=6)
        tile = np.array([[*(c[:2] + along * 20 + n * 15), c[2]], [*(c[:2] + along * 20 - n * 15), c[2]],
                         [*(c[:2] - along * 20 - n * 15), c[2]], [*(c[:2] - along * 20 + n * 15), c[2]]])
        if (_depth(cam, tile) > 1).all():
            fill(cam.project(tile), tuple(float(v) for v in tile_colour))
    # four fingers from the palm's front edge to the tips, and a thumb
    for k, off in enumerate((-24, -8, 8, 24)):
        length = (62, 70, 68, 56)[k]
        fill(_strip(cam, at(40, off * 1.1, rise=14), at(40 - length, off * 0.8, rise=14 - length * 0.2), 17, 14),
             light if k % 2 else tuple(float(v) for v in skin))
    fill(_strip(cam, at(70, 40, rise=16), at(25, 52, rise=10), 22, 16), dark)
    if not mask.any():
        return
    # shadow: the hand's outline moved along the light, soft
    M = np.float32([[1, 0, light_px[0]], [0, 1, light_px[1]]])
    sh = cv2.warpAffine(mask, M, (W, H))
    sh = cv2.GaussianBlur(sh, (0, 0), 7).astype(np.float32) / 255.0
    out = img.astype(np.float32) * (1 - 0.35 * sh[..., None])
    if sigma > 0.3:
        layer = cv2.GaussianBlur(layer, (0, 0), sigma)
        mask = cv2.GaussianBlur(mask, (0, 0), sigma)
    a = mask.astype(np.float32)[..., None] / 255.0
    out = out * (1 - a) + layer.astype(np.float32) * a
    img[:] = np.clip(out, 0, 255).astype(np.uint8)


def write_alt_recording(out: Path, assets: altrender.Assets, variant: str, layout, faces: Sequence[str], moves,
                        seed: int, fps: float, size: tuple[int, int], tilt_deg: tuple[float, float],
                        fill: tuple[float, float] = (0.75, 0.92), quality: int = 90) -> dict:
    """Render a scripted game with :mod:`altrender` into ``out`` (a folder of
    ``frame_NNNNN.jpg`` or a video path, as ``write_recording``) and return
    its truth (``Recording.truth_json``: the plan's frames, moves and
    events; ``alt_camera`` the picture's K, rvec, tvec); the camera tilted
    ``tilt_deg`` (LO, HI degrees), the mat spanning ``fill`` of the frame."""
    from vision.synth.recording import Recording
    from vision.synth.scene import SceneSpec
    rng = np.random.default_rng([seed, 1])
    spec = SceneSpec(variant, layout, removed=(), faces=tuple(faces), tilt_deg=tilt_deg, upright=1.0,
                     fill=(0.8, 0.92), image_size=size)
    rec = Recording(variant, layout, moves, rng, fps, spec)
    truth = rec.truth_json()
    look_rng = np.random.default_rng([seed, 7])
    look = altrender.sample_look(look_rng, len(layout))
    players = truth["players"] or []
    skins = {p: SKIN[int(look_rng.integers(len(SKIN)))] for p in players}
    sleeves = {p: tuple(float(v) for v in look_rng.uniform(30, 220, 3)) for p in players}
    ang = look_rng.uniform(0, 2 * math.pi)
    light_px = (14 * math.cos(ang), 14 * math.sin(ang))
    frame_rng = np.random.default_rng([seed, 9])
    cache: dict = {}
    cam = None
    writer = None
    video = out.suffix.lower() in VIDEO_SUFFIXES
    if video:
        out.parent.mkdir(parents=True, exist_ok=True)
        writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), float(fps), tuple(size))
    else:
        out.mkdir(parents=True, exist_ok=True)
    try:
        for k, fr in enumerate(rec.frames):
            key = (fr.present.tobytes(), fr.deal)
            if key not in cache:
                if len(cache) > 6:
                    cache.pop(next(iter(cache)))
                img, tr = altrender.render(assets, variant, layout, rec.deals[fr.deal], fr.present,
                                           np.random.default_rng([seed, 8]), size, tilt_deg=tilt_deg, look=look,
                                           fill=fill)
                cache[key] = img
                if cam is None:
                    cam = _cam(tr, size)
                    truth["alt_camera"] = {"K": cam.K.tolist(), "rvec": np.asarray(tr.rvec).tolist(),
                                           "tvec": cam.t.tolist(), "tilt_deg": tr.tilt_deg, "yaw_deg": tr.yaw_deg,
                                           "body": tr.body, "edges": tr.edges}
            f = cache[key].astype(np.float32) * (1.0 + frame_rng.normal(0, 0.01))
            f += frame_rng.normal(0, 1.5, f.shape).astype(np.float32)
            img = np.clip(f, 0, 255).astype(np.uint8)
            for tip, carry, side, _aim, who in fr.hands:
                draw_hand(img, cam, tip, side, carry, skins.get(who, SKIN[1]), sleeves.get(who, (90, 90, 90)),
                          altrender.BODY_COLOURS[truth["alt_camera"]["body"]], light_px, look["sigma"])
            if video:
                writer.write(img)
            else:
                cv2.imwrite(str(out / f"frame_{k:05d}.jpg"), img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    finally:
        if writer is not None:
            writer.release()
    return truth
