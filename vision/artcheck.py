"""A second look at unsure faces: the printed art, at the photo's own resolution.

The face classifier (:mod:`vision.faces`) reads a 36 x 48 px patch, 1.2
px/mm, while a 1280 x 720 photo of the mat holds 0.5-1.7 px/mm (the bench's
photos: median 1.1, the nearer tenth above 1.45).  Most
faces need no more, but between look-alikes (five dots against six, a blurred
character, a glare spot) the classifier sometimes ends nearly tied.  For such a
slot this stage cuts the face again from the photo at :data:`ART_PX_PER_MM`,
turned by the tile's own small rotation on its slot (:func:`tile_angle`), and
compares it with the print art of the classifier's leading candidates
(:func:`vision.art.render_face`, the art ``companion print-tiles`` prints) by
normalised cross-correlation (``cv2.matchTemplate`` with
``TM_CCOEFF_NORMED``; J. P. Lewis, "Fast Normalized Cross-Correlation",
Vision Interface 1995).  The search runs over the tile's offset on its slot
(``margin_mm`` either way) and both ways round (tiles are placed either way
round, so a face may lie turned 180 degrees).

A face partly hidden by a taller tile in front (a steep view) is compared on
its visible part only: the rays from the face's points to the camera centre
that pass through a standing tile's box (:func:`vision.reconstruct.hidden_points`)
mark the hidden strip, and the largest band of the face in full sight is
matched (:func:`visible_region`).  Then the hidden part, which shows
the tile in front, cannot outvote the part in sight, where a Mindful
character's numeral or a Word tile's letter usually still shows.

The correlations reweigh the classifier's probabilities of those candidates
within their summed mass (:func:`reweigh`), so the face classifier's
"face vs none" mass, which the presence decision uses, is unchanged.

The same comparison answers a second question, for stacks seen nearly from
overhead, where the face of the tile below lands almost where the top tile's
would: is the face in a raised slot's window at the slot's height, or 20 mm
lower and so 2-3 % smaller (:func:`height_evidence`)?  The presence
classifier's 64 x 48 windows (0.8 px/mm) cannot see that; the photo's own
resolution often can.

Used by :func:`vision.reconstruct.recognize` when the faces come from the
bundled classifier (an enrolled profile's faces are not this art).  The
numbers (``ReconstructSettings.art_check_*`` and ``art_height_*``) were chosen
on development photos (``bench/tune_reconstruct.py``).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import cv2
import numpy as np

#: resolution of the rectified face windows and of the art, px/mm: above
#: every bench photo's own (0.5-1.7 px/mm), so the window keeps all the photo
#: holds; 3 and 4 px/mm read no better on
#: development photos.
ART_PX_PER_MM = 2.0
#: the scales tried, as ratios of the face's size at its slot's height.  The
#: window is rectified at that height, so one suffices: 0.985, 1 and 1.015
#: together gave 72 photos entirely right and 189 wrong faces on development
#: photos 1000-1159, 1 alone 71 and 191, at half the time.
ART_SCALES = (1.0,)
#: a tile's rotation on its slot is read within this many degrees either way.
MAX_ANGLE_DEG = 8.0
#: correlations below this are noise (a blurred, shadowed or grey face):
#: neither comparison then says anything (``ReconstructSettings.art_min_score``
#: gives the figures).
MIN_SCORE = 0.3


def tile_angle(gray: np.ndarray) -> float:
    """In-plane rotation of a tile in a rectified window, radians.

    The art's strokes and borders run mostly along and across the tile, so the
    gradient directions gather at four angles 90 degrees apart: the angle of
    ``sum(|g|^2 exp(4 i phi)) / 4`` is the tile's rotation modulo 90 degrees
    (the fourth-order orientation tensor; cf. the structure tensor, Bigun and
    Granlund 1987).  Clipped to :data:`MAX_ANGLE_DEG` either way.  On the
    print art turned 2-6 degrees it reads the turn within 0.7 degrees (the
    art's own slanted strokes; Sobel's gradients read 25 % short).

    Args:
        gray: ``(h, w)`` float32 window whose axes run along the slot.

    Returns:
        The angle in radians (positive: turned from the window's x axis
        towards its y axis).
    """
    gx = cv2.Scharr(gray, cv2.CV_32F, 1, 0)       # Scharr: nearer rotation-invariant than Sobel
    gy = cv2.Scharr(gray, cv2.CV_32F, 0, 1)
    # |g|^2 exp(4 i phi) = (gx + i gy)^4 / |g|^2, without trigonometry
    a = gx * gx - gy * gy
    b = 2 * gx * gy
    m2 = gx * gx + gy * gy
    w = np.divide(1.0, m2, out=np.zeros_like(m2), where=m2 > 0)
    z = complex(float(((a * a - b * b) * w).sum()), float((2 * a * b * w).sum()))
    if z == 0:
        return 0.0
    lim = math.radians(MAX_ANGLE_DEG)
    return float(np.clip(math.atan2(z.imag, z.real) / 4, -lim, lim))


#: context around the face in a window, mm on every side: a tile lies up to
#: 3 mm off its slot, plus the pose's error.
MARGIN_MM = 4.5
#: the part of the face compared when some of it is hidden: the face less this
#: much on every side (wherever the tile lies on its slot, this part is face).
CORE_INSET_MM = 3.5


def _window_frame(slot, spec, margin_mm: float, angle: float):
    """Centre (mat mm), half sizes (mm) and axes of a slot's window, and its
    face's height (read-only arrays, cached: a photo asks for the same
    slots' windows many times)."""
    return _window_frame_of(tuple(int(v) for v in slot), spec, float(margin_mm), float(angle))


@functools.lru_cache(maxsize=4096)
def _window_frame_of(slot: tuple, spec, margin_mm: float, angle: float):
    from vision.mat import slot_face_corners_mm

    face = slot_face_corners_mm([slot], spec)[0]
    centre = face[:, :2].mean(axis=0)
    hw, hh = float(spec.tile_mm[0]) / 2 + margin_mm, float(spec.tile_mm[1]) / 2 + margin_mm
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, s], [-s, c]])
    centre.setflags(write=False)
    rot.setflags(write=False)
    return centre, hw, hh, rot, float(face[0, 2])


def window_points_mm(slot, spec, margin_mm: float = MARGIN_MM, px_per_mm: float = ART_PX_PER_MM,
                     angle: float = 0.0) -> np.ndarray:
    """Where the pixel centres of :func:`face_window`'s window lie on the mat.

    Returns:
        ``(h, w, 2) float64`` mat mm ``(X, Y)``, on the plane of the slot's face.
    """
    centre, hw, hh, rot, _ = _window_frame(slot, spec, margin_mm, angle)
    w, h = int(round(2 * hw * px_per_mm)), int(round(2 * hh * px_per_mm))
    u = -hw + (np.arange(w) + 0.5) / px_per_mm
    v = -hh + (np.arange(h) + 0.5) / px_per_mm
    uv = np.stack(np.meshgrid(u, v), axis=-1)
    return centre + uv @ rot


def face_window(image_bgr: np.ndarray, slot, spec, pose, margin_mm: float = MARGIN_MM,
                px_per_mm: float = ART_PX_PER_MM, angle: float = 0.0) -> np.ndarray:
    """The slot's face cut from the photo, rectified at the slot's own height.

    The window covers the face plus ``margin_mm`` on every side, its axes
    along the slot turned by ``angle`` about the face's centre; the four
    corners are projected with the full camera model
    (:func:`vision.pose.project_points`) and the window warped through the
    homography they give (``cv2.warpPerspective``).

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo, or ``(H, W)`` uint8 grey
            (converted once for many windows: :func:`grey_of`).
        slot: ``(x, y, z)``.
        spec: ``vision.mat.MatSpec``.
        pose: ``vision.pose.MatPose``.
        margin_mm: context on every side, mm (a tile may lie up to a few mm
            off its slot).
        px_per_mm: window resolution.
        angle: rotation of the window's axes, radians.

    Returns:
        ``(round((40 + 2 m) p), round((30 + 2 m) p)) float32`` grey levels
        0-255 (rows down the 40 mm side).
    """
    H, w, h = _window_homography(slot, spec, pose, margin_mm, px_per_mm, angle)
    return _warp_window(image_bgr, H, w, h)


def _window_homography(slot, spec, pose, margin_mm: float, px_per_mm: float, angle: float):
    """``(H, w, h)``: the homography from :func:`face_window`'s window pixels
    to the photo's, and the window's size."""
    from vision.pose import project_points

    obj, dst, w, h = _window_corners_of(tuple(int(v) for v in slot), spec, float(margin_mm), float(px_per_mm),
                                        float(angle))
    img = project_points(obj, pose).astype(np.float32)
    return cv2.getPerspectiveTransform(dst, img), w, h


@functools.lru_cache(maxsize=8192)
def _window_corners_of(slot: tuple, spec, margin_mm: float, px_per_mm: float, angle: float):
    """The window's corners on the mat (``(4, 3)`` mm, at the face's height)
    and in the window (``(4, 2) float32`` px, pixel edges), and its size
    (read-only, cached: the same windows are cut many times a photo)."""
    centre, hw, hh, rot, z = _window_frame(slot, spec, margin_mm, angle)
    uv = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
    obj = np.column_stack([centre + uv @ rot, np.full(4, z)])
    w, h = int(round(2 * hw * px_per_mm)), int(round(2 * hh * px_per_mm))
    dst = np.float32([[0, 0], [w, 0], [w, h], [0, h]]) - 0.5
    obj.setflags(write=False)
    dst.setflags(write=False)
    return obj, dst, w, h


def _warp_window(image_bgr: np.ndarray, H: np.ndarray, w: int, h: int) -> np.ndarray:
    win = cv2.warpPerspective(image_bgr, H, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_REPLICATE)
    if win.ndim == 3:
        win = cv2.cvtColor(win, cv2.COLOR_BGR2GRAY)
    return win.astype(np.float32)


def grey_of(image_bgr: np.ndarray) -> np.ndarray:
    """``(H, W) uint8`` grey photo for :func:`face_window` (``cv2.cvtColor``,
    BGR weights); a grey image is returned as it is."""
    return image_bgr if image_bgr.ndim == 2 else cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)


def core_mask(shape: tuple[int, int], spec, margin_mm: float = MARGIN_MM, px_per_mm: float = ART_PX_PER_MM,
              inset_mm: float = CORE_INSET_MM) -> np.ndarray:
    """``(h, w) bool``: the window's pixels that show the tile's face wherever
    it lies on its slot (the face less ``inset_mm`` on every side)."""
    h, w = shape
    hw, hh = float(spec.tile_mm[0]) / 2 - inset_mm, float(spec.tile_mm[1]) / 2 - inset_mm
    u = np.abs((np.arange(w) + 0.5) / px_per_mm - w / (2 * px_per_mm))
    v = np.abs((np.arange(h) + 0.5) / px_per_mm - h / (2 * px_per_mm))
    return (v[:, None] <= hh) & (u[None, :] <= hw)


@functools.lru_cache(maxsize=1024)
def art_template(variant: str, face_id: str, px_per_mm: float = ART_PX_PER_MM, scale: float = 1.0) -> np.ndarray:
    """The upright print art of one face in grey, ``scale`` times its size at
    ``px_per_mm``: ``(round(40 p s), round(30 p s)) float32`` (read-only;
    cached)."""
    from vision.art import render_face

    art = cv2.cvtColor(render_face(variant, face_id, px_per_mm=10.0), cv2.COLOR_BGR2GRAY).astype(np.float32)
    size = (int(round(30 * px_per_mm * scale)), int(round(40 * px_per_mm * scale)))
    out = cv2.resize(art, size, interpolation=cv2.INTER_AREA)
    out.setflags(write=False)
    return out


def preload(variant: str) -> int:
    """Build the art of every face of ``variant`` now (about 11 ms a face, 0.5 s a
    tile set) rather than on first need, as a long-running referee or a
    timing bench would.  Returns the number of templates built.

    Raises:
        BadInput: unknown variant.
    """
    from vision.art import face_ids

    n = 0
    for face in face_ids(variant):
        for s in ART_SCALES:
            art_template(variant, face, ART_PX_PER_MM, s)
            n += 1
    return n


def visible_region(seen: np.ndarray, core: np.ndarray) -> tuple[int, int, int, int] | None:
    """The largest band of the face's core in full sight: whole rows or whole
    columns of the core (a tile in front hides a strip along one side).

    Args:
        seen: ``(h, w)`` bool, the window's pixels in sight.
        core: ``(h, w)`` bool rectangle from :func:`core_mask`.

    Returns:
        ``(r0, r1, c0, c1)``, window rows ``r0:r1`` and columns ``c0:c1``,
        or None when no row or column of the core is in full sight.
    """
    rows, cols = np.flatnonzero(core.any(axis=1)), np.flatnonzero(core.any(axis=0))
    if len(rows) == 0:
        return None
    R0, R1, C0, C1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    sub = seen[R0:R1, C0:C1]

    def longest(flags):
        best, start, run = (0, 0), 0, 0
        for k, f in enumerate(list(flags) + [False]):
            if f:
                run += 1
            else:
                if run > best[1] - best[0]:
                    best = (start, start + run)
                start, run = k + 1, 0
        return best
    a, b = longest(sub.all(axis=1))
    c, d = longest(sub.all(axis=0))
    if max(b - a, d - c) == 0:
        return None
    if (b - a) * (C1 - C0) >= (d - c) * (R1 - R0):
        return int(R0 + a), int(R0 + b), int(C0), int(C1)
    return int(R0), int(R1), int(C0 + c), int(C0 + d)


def art_scores(window: np.ndarray, variant: str, face_ids, px_per_mm: float = ART_PX_PER_MM,
               scales=ART_SCALES, region: tuple[int, int, int, int] | None = None,
               turns: tuple[bool, ...] = (False, True)) -> np.ndarray:
    """How well each face's art matches a window: the best normalised
    cross-correlation over offsets, ``scales`` and both ways round.

    With a ``region`` (a face partly hidden by a tile in front, see
    :func:`visible_region`), only that part of the window is compared: it
    slides over the art, padded on every side by the window's margin twice
    over, through the same offsets as the whole art slides over the window.

    Args:
        window: ``(h, w)`` float32 from :func:`face_window` (larger than the
            art at the largest scale).
        variant: the tile set.
        face_ids: ``K`` face ids of that set.
        region: ``(r0, r1, c0, c1)``: compare window rows ``r0:r1``, columns
            ``c0:c1`` only; None: the whole window.
        turns: the ways round to try (True: the art turned 180 degrees).

    Returns:
        ``(K,) float64`` correlations in [-1, 1].

    Raises:
        ValueError: the window is smaller than the art.
    """
    window = np.ascontiguousarray(window, np.float32)
    if region is not None and (region[1] <= region[0] or region[3] <= region[2]):
        raise ValueError(f"empty region {region}")
    out = np.empty(len(face_ids))
    for k, face in enumerate(face_ids):
        best = -1.0
        for s in scales:
            t = art_template(variant, face, px_per_mm, s)
            dy, dx = window.shape[0] - t.shape[0], window.shape[1] - t.shape[1]
            if dy < 0 or dx < 0:
                raise ValueError(f"window {window.shape} is smaller than the art {t.shape}")
            for tt in (t[::-1, ::-1] if turn else t for turn in turns):
                if region is None:
                    r = cv2.matchTemplate(window, np.ascontiguousarray(tt), cv2.TM_CCOEFF_NORMED)
                else:
                    r0, r1, c0, c1 = region
                    padded = cv2.copyMakeBorder(np.ascontiguousarray(tt), dy, dy, dx, dx, cv2.BORDER_REPLICATE)
                    r = cv2.matchTemplate(padded, np.ascontiguousarray(window[r0:r1, c0:c1]), cv2.TM_CCOEFF_NORMED)
                    r = r[r0:r0 + dy + 1, c0:c0 + dx + 1]
                best = max(best, float(r.max()))
        out[k] = min(best, 1.0)
    return out


def _peak_subpixel(r: np.ndarray) -> tuple[float, float, float]:
    """Column, row and value of the maximum of a correlation map, the position
    refined by a parabola through the peak and its neighbours on each axis."""
    y, x = divmod(int(r.argmax()), r.shape[1])

    def vertex(a: float, b: float, c: float) -> float:
        den = a - 2.0 * b + c
        return 0.0 if den >= 0 else min(0.5, max(-0.5, 0.5 * (a - c) / den))
    ox = vertex(float(r[y, x - 1]), float(r[y, x]), float(r[y, x + 1])) if 0 < x < r.shape[1] - 1 else 0.0
    oy = vertex(float(r[y - 1, x]), float(r[y, x]), float(r[y + 1, x])) if 0 < y < r.shape[0] - 1 else 0.0
    return x + ox, y + oy, float(r[y, x])


def face_offset(grey: np.ndarray, variant: str, slot, face_id: str, spec, pose,
                margin_mm: float = MARGIN_MM, px_per_mm: float = ART_PX_PER_MM,
                scale: float = 1.0) -> tuple[float, float, float]:
    """Where a face lies on its slot: the offset of its print art's centre from
    the slot's centre, found by normalised cross-correlation in the window
    rectified at the slot's height (:func:`face_window`), both ways round, the
    peak refined to a fraction of a pixel (a parabola on each axis).

    Args:
        grey: ``(H, W)`` uint8 grey photo (:func:`grey_of`).
        variant, face_id: the face expected there.
        slot: ``(x, y, z)``; spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.
        scale: the photo's faces' size against their art (:func:`face_scale`):
            the window is cut at ``px_per_mm / scale``, so the art fits.

    Returns:
        ``(dx, dy, score)``: the offset in mm along the mat's x and y axes, in
        the plane of the slot's face as this pose sees it, and the peak
        correlation in [-1, 1].
    """
    p = px_per_mm / scale
    win = face_window(grey, slot, spec, pose, margin_mm, p)
    art = art_template(variant, face_id, px_per_mm, 1.0)
    best = (0.0, 0.0, -2.0)
    for t in (art, art[::-1, ::-1]):
        x, y, v = _peak_subpixel(cv2.matchTemplate(win, np.ascontiguousarray(t), cv2.TM_CCOEFF_NORMED))
        if v > best[2]:
            best = (x, y, v)
    x, y, v = best
    return ((x - (win.shape[1] - art.shape[1]) / 2) / p,
            (y - (win.shape[0] - art.shape[0]) / 2) / p, min(v, 1.0))


def parallax_evidence(grey: np.ndarray, variant: str, slot, face_id: str, spec, pose,
                      sigma_mm: float = 1.7, min_score: float = MIN_SCORE, scale: float = 1.0) -> float:
    """Log-likelihood ratio that the face in a raised slot's window lies at
    the slot's height rather than one layer lower, from where it lies.

    The face is located in the window rectified at the slot's height
    (:func:`face_offset`).  A face at that height lies off the slot's centre
    only by the tile's own placement; the face of the tile below, seen
    through the same window, lies off by its parallax ``p`` as well (the
    vector, in mm of the slot's plane, from where a point at the slot's
    height appears to where the same point 20 mm lower appears).  With the
    placement taken as Gaussian, ``sigma_mm`` per axis, the ratio is
    ``(|o - p|^2 - |o|^2) / (2 sigma^2)`` for the offset ``o``.

    ``scale`` is the photo's faces' size against their art (:func:`face_scale`).

    Returns:
        The log-likelihood ratio (positive: at the slot's height), 0 where
        the art is not found (correlation under ``min_score``) or the view
        is degenerate.
    """
    from vision.mat import slot_face_corners_mm
    from vision.pose import project_points

    try:
        dx, dy, score = face_offset(grey, variant, slot, face_id, spec, pose, scale=scale)
        if score < min_score:
            return 0.0
        c = slot_face_corners_mm([tuple(slot)], spec)[0]
        x, y, z = float(c[:, 0].mean()), float(c[:, 1].mean()), float(c[0, 2])
        t = float(spec.tile_mm[2])
        img = project_points(np.array([[x, y, z], [x + 1, y, z], [x, y + 1, z], [x, y, z + t]]), pose)
        J = np.column_stack([img[1] - img[0], img[2] - img[0]])      # px per mm in the slot's plane
        p = np.linalg.solve(J, img[3] - img[0])                       # the lower face's parallax, mm
        o = np.array([dx, dy])
        return float((np.sum((o - p) ** 2) - np.sum(o ** 2)) / (2 * sigma_mm ** 2))
    except (cv2.error, np.linalg.LinAlgError, ValueError):
        return 0.0


def reweigh(probs: np.ndarray, scores: np.ndarray, weight: float) -> np.ndarray:
    """Candidates' probabilities times ``exp(weight x score)``, renormalised to
    the mass they had.

    Args:
        probs: ``(K,)`` the classifier's probabilities of the candidates.
        scores: ``(K,)`` their :func:`art_scores`.
        weight: log-odds per unit of correlation.

    Returns:
        ``(K,) float64``, summing to ``probs.sum()``.
    """
    p = np.asarray(probs, np.float64)
    if p.size == 0:
        return p.copy()
    lg = np.log(np.maximum(p, 1e-12)) + weight * np.asarray(scores, np.float64)
    e = np.exp(lg - lg.max())
    return e * (p.sum() / e.sum())


def unsure_faces(face_probs: np.ndarray, idx, below: float = 0.6) -> list[int]:
    """The slots of ``idx`` whose best face holds less than ``below`` of their
    faces' summed probability (``face_probs``: ``(N, K)``)."""
    out = []
    for i in idx:
        row = face_probs[i]
        total = float(row.sum())
        if total > 0 and float(row.max()) < below * total:
            out.append(int(i))
    return out


def check_faces(image_bgr: np.ndarray, variant: str, slots, face_probs: np.ndarray, labels, spec, pose,
                weight: float = 10.0, candidates: int = 3, occluders=None, visible_min: float = 0.3,
                min_score: float = MIN_SCORE, scale: float = 1.0) -> np.ndarray:
    """Face probabilities of some slots looked at again.

    Each slot's ``candidates`` most probable faces are scored by
    :func:`art_scores` in the window at the slot's height
    (:func:`face_window`, turned by :func:`tile_angle`) and reweighed by
    :func:`reweigh`.  Where ``occluders`` hide part of the face's core
    (:func:`core_mask`; the rays to the camera centre,
    :func:`vision.reconstruct.hidden_points`, on every other pixel), only the
    largest band of the core in full sight is compared
    (:func:`visible_region`); a slot with less than ``visible_min`` of its
    core in such a band keeps its row, and so does one whose best
    correlation stays under ``min_score`` (no candidate's art is there to
    see: a blurred or shadowed face, where the correlations are noise).

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo or ``(H, W)`` grey (:func:`grey_of`).
        variant: the tile set.
        slots: ``M`` slots ``(x, y, z)`` to look at.
        face_probs: ``(M, K)`` their face probabilities (tile-set order).
        labels: the ``K`` face ids of the columns.
        spec, pose: the mat and its pose.
        occluders: None, or ``M`` lists of slots: the tiles standing on
            higher layers that may hide each slot's face.
        scale: the photo's faces' size against their art (:func:`face_scale`):
            the windows are cut at ``ART_PX_PER_MM / scale``.

    Returns:
        ``(M, K) float64``: the rows reweighed (row sums unchanged); a slot
        whose window the camera cannot give (a degenerate view) keeps its row.
    """
    fp = np.array(face_probs, np.float64).reshape(len(slots), len(labels))
    for i, slot in enumerate(slots):
        try:
            fp[i] = _checked_row(image_bgr, variant, slot, fp[i], labels, spec, pose, weight, candidates,
                                 None if occluders is None else occluders[i], visible_min, min_score, scale)
        except (cv2.error, np.linalg.LinAlgError, ValueError):
            pass                # a window the camera cannot give (degenerate view): the row stands
    return fp


def _checked_row(image_bgr, variant, slot, row, labels, spec, pose, weight, candidates, occluders, visible_min,
                 min_score, scale=1.0):
    """One row of :func:`check_faces` (a copy, reweighed)."""
    from vision.reconstruct import hidden_points

    row = row.copy()
    cand = np.argsort(-row)[:candidates]
    p = ART_PX_PER_MM / scale          # the window at the photo's faces' size
    win = face_window(image_bgr, slot, spec, pose, px_per_mm=p)
    ang = tile_angle(win)
    if abs(ang) > 1e-3:
        win = face_window(image_bgr, slot, spec, pose, px_per_mm=p, angle=ang)
    region = None
    if occluders is not None and len(occluders):
        core = core_mask(win.shape, spec, px_per_mm=p)
        pts = window_points_mm(slot, spec, px_per_mm=p, angle=ang)
        hidden = hidden_points(slot, pts[::2, ::2], occluders, pose.camera_centre_mm, spec)
        hidden = np.repeat(np.repeat(hidden, 2, axis=0), 2, axis=1)[:win.shape[0], :win.shape[1]]
        if (core & hidden).any():
            region = visible_region(core & ~hidden, core)
            if region is None or (region[1] - region[0]) * (region[3] - region[2]) < visible_min * core.sum():
                return row
    sc = art_scores(win, variant, [labels[c] for c in cand], ART_PX_PER_MM, ART_SCALES, region)
    if sc.max() >= min_score:          # else no candidate's art is there to see: noise
        row[cand] = reweigh(row[cand], sc, weight)
    return row


class FaceFit(NamedTuple):
    """How a face sits in its window: :func:`face_scale`'s answer."""

    ratio: float       # the face's size over its art's
    score: float       # the best correlation over the ratios tried, in [-1, 1] (-1: no window)
    dx_mm: float       # the art's centre off the slot's centre, mm, along the window's axes,
    dy_mm: float       # where it fits best


def face_scale(grey: np.ndarray, variant: str, slot, face_id: str, spec, pose,
               scales: tuple[float, ...] = (0.92, 0.96, 1.0, 1.04, 1.08), search_px: int = 2) -> FaceFit:
    """How large a face looks against its print art, at the slot's height,
    and where it lies.

    The art is found in the window at the slot's height (:func:`face_window`,
    unturned and turned by :func:`tile_angle`, the better correlation of the
    two: an unturned tile's art can read as turned by the 8 degree clip;
    both ways round); for each other ratio
    ``s`` of ``scales`` the part of the window round it is cut again from the
    photo at ``ART_PX_PER_MM / s`` px/mm (the same homography, its pixels
    rescaled: a face ``s`` times the art's size then fills the art at
    :data:`ART_PX_PER_MM`) and the art, the same way round, is correlated
    within ``search_px`` of where it was found.  A parabola through the best
    ratio and its neighbours refines it.  Faces printed smaller than
    ``print-tiles`` prints (a printer's "fit to page"), another renderer's
    faces, or a pose whose scale is a little off read under or over 1 on
    every face of the photo alike.

    Args:
        grey: ``(H, W)`` uint8 grey photo (:func:`grey_of`).
        variant, face_id: the face expected there.
        slot: ``(x, y, z)``; spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.
        scales: the ratios tried: ascending, evenly spaced, holding 1.0.
        search_px: how far from the first peak the others are looked for, px.

    Returns:
        :class:`FaceFit`; ratio 1 and score -1 where the view is degenerate.
    """
    try:
        win0 = face_window(grey, slot, spec, pose)
        art = art_template(variant, face_id, ART_PX_PER_MM, 1.0)
        best = None
        turns = (art, art_turned(variant, face_id))
        for ang in _angles_to_try(win0):
            H, w, h = _window_homography(slot, spec, pose, MARGIN_MM, ART_PX_PER_MM, ang)
            win = win0 if ang == 0.0 else _warp_window(grey, H, w, h)
            # the way round is told by the unturned window; the turned one
            # is tried that way round only
            for t in (turns if best is None else (best[3],)):
                x, y, v = _peak_subpixel(cv2.matchTemplate(win, t, cv2.TM_CCOEFF_NORMED))
                if best is None or v > best[2]:
                    best = (x, y, v, t, ang, win, (H, w, h))
        x1, y1, v1, t, ang, win, (H1, w1, h1) = best
        _, hw, hh, _, _ = _window_frame(slot, spec, MARGIN_MM, ang)
        th, tw = t.shape
        # the art's centre, mm from the window's centre (the same at every ratio)
        ox = (x1 + tw / 2 - win.shape[1] / 2) / ART_PX_PER_MM
        oy = (y1 + th / 2 - win.shape[0] / 2) / ART_PX_PER_MM
        sc, where = [], []
        for s in scales:
            if s == 1.0:
                sc.append(v1)
                where.append((ox, oy))
                continue
            # the part of face_window(px_per_mm = ART_PX_PER_MM / s) around
            # where the art lies: the window of ratio 1's homography, its
            # pixels rescaled (both windows span the same mm) and shifted
            p = ART_PX_PER_MM / s
            ws, hs = int(round(2 * hw * p)), int(round(2 * hh * p))
            cx = int(round(ws / 2 + ox * p - tw / 2))
            cy = int(round(hs / 2 + oy * p - th / 2))
            r0, c0 = max(0, cy - search_px), max(0, cx - search_px)
            r1, c1 = min(hs, cy + search_px + th), min(ws, cx + search_px + tw)
            if r1 - r0 < th or c1 - c0 < tw:
                return FaceFit(1.0, -1.0, 0.0, 0.0)
            ax, ay = w1 / ws, h1 / hs
            A = np.array([[ax, 0.0, (c0 + 0.5) * ax - 0.5], [0.0, ay, (r0 + 0.5) * ay - 0.5], [0.0, 0.0, 1.0]])
            r = cv2.matchTemplate(_warp_window(grey, H1 @ A, c1 - c0, r1 - r0), t, cv2.TM_CCOEFF_NORMED)
            sc.append(float(r.max()))
            where.append((r, c0, r0, p, ws, hs))
        k = int(np.argmax(sc))
        if len(where[k]) > 2:       # the best fit at another ratio: where the art lies there
            r, c0, r0, p, ws, hs = where[k]
            x, y, _ = _peak_subpixel(r)
            where[k] = ((c0 + x + tw / 2 - ws / 2) / p, (r0 + y + th / 2 - hs / 2) / p)
    except (cv2.error, np.linalg.LinAlgError, ValueError):
        return FaceFit(1.0, -1.0, 0.0, 0.0)
    ratio = _parabola_vertex(np.asarray(scales, np.float64), np.asarray(sc, np.float64))
    return FaceFit(ratio, float(min(sc[k], 1.0)), float(where[k][0]), float(where[k][1]))


#: :func:`face_scale` tries the window turned by :func:`tile_angle`'s reading
#: only where it reads at least this much (radians): half a degree moves the
#: art's corners by a third of a window pixel
MIN_ANGLE = math.radians(0.5)


def _angles_to_try(win0: np.ndarray) -> tuple[float, ...]:
    """The window's turns :func:`face_scale` tries: unturned, and
    :func:`tile_angle`'s reading where it is at least :data:`MIN_ANGLE`."""
    ang = tile_angle(win0)
    return (0.0,) if abs(ang) < MIN_ANGLE else (0.0, ang)


@functools.lru_cache(maxsize=1024)
def art_turned(variant: str, face_id: str) -> np.ndarray:
    """:func:`art_template` at :data:`ART_PX_PER_MM` turned 180 degrees
    (contiguous, read-only; cached)."""
    out = np.ascontiguousarray(art_template(variant, face_id, ART_PX_PER_MM, 1.0)[::-1, ::-1])
    out.setflags(write=False)
    return out


def _parabola_vertex(x: np.ndarray, y: np.ndarray) -> float:
    """``x`` at the top of the parabola through the best sample of ``y`` and
    its two neighbours (evenly spaced ``x``); the best ``x`` itself at an end."""
    k = int(np.argmax(y))
    if k == 0 or k == len(y) - 1:
        return float(x[k])
    a, b, c = y[k - 1], y[k], y[k + 1]
    den = a - 2.0 * b + c
    off = 0.0 if den >= 0 else float(np.clip(0.5 * (a - c) / den, -0.5, 0.5))
    return float(x[k] + off * (x[1] - x[0]))


def height_evidence(image_bgr: np.ndarray, variant: str, slot, face_id: str, spec, pose,
                    min_score: float = MIN_SCORE, scale: float = 1.0) -> float:
    """Does the face in a raised slot's window lie at the slot's height or
    one layer lower?

    Seen from the camera, the face of the tile below, 20 mm lower, lands on
    the slot's plane shrunk by ``k = (H - h) / (H - h + t)`` about the
    camera's foot (camera height ``H`` above the mat, face height ``h``, tile
    thickness ``t``, mm).  The window is cut twice, at :data:`ART_PX_PER_MM`
    and at ``ART_PX_PER_MM / k`` (so a face ``k`` times smaller fills the art's
    size: the art is never resized by a fraction of a pixel), and the face's
    art is correlated with both (:func:`art_scores`, the way round that fits
    best at the slot's height; the search over offsets absorbs the lower
    face's parallax).

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo or ``(H, W)`` grey (:func:`grey_of`).
        variant: the tile set.
        slot: ``(x, y, z)`` with ``z >= 1``.
        face_id: the face read in the slot's window.
        spec, pose: the mat and its pose.
        scale: the size of this photo's faces against their art
            (:func:`face_scale` on faces known to lie at their slot's
            height): both windows are cut that much finer, so a face
            printed or seen a little small is not taken for a lower one.

    Returns:
        The correlation at the slot's height less that one layer lower
        (about -0.1 to 0.1; positive: the face lies at the slot's height);
        0 where the camera cannot give the windows (a degenerate view, or a
        camera no higher than the tile below's face) or where neither
        correlation reaches ``min_score``.
    """
    try:
        return _height_evidence(image_bgr, variant, slot, face_id, spec, pose, min_score, scale)
    except (cv2.error, np.linalg.LinAlgError, ValueError):
        return 0.0


def _height_evidence(image_bgr, variant, slot, face_id, spec, pose, min_score, scale=1.0) -> float:
    tt = float(spec.tile_mm[2])
    h = tt * (slot[2] + 1)
    cam_h = -float(pose.camera_centre_mm[2])
    if cam_h <= h + tt:
        return 0.0
    k = (cam_h - h) / (cam_h - h + tt)
    win = face_window(image_bgr, slot, spec, pose)
    ang = tile_angle(win)
    top = face_window(image_bgr, slot, spec, pose, px_per_mm=ART_PX_PER_MM / scale, angle=ang)
    low = face_window(image_bgr, slot, spec, pose, px_per_mm=ART_PX_PER_MM / (k * scale), angle=ang)
    a = [art_scores(top, variant, [face_id], ART_PX_PER_MM, (1.0,), turns=(turn,))[0] for turn in (False, True)]
    turn = bool(a[1] > a[0])             # the face lies this way round, at either height
    b = art_scores(low, variant, [face_id], ART_PX_PER_MM, (1.0,), turns=(turn,))[0]
    if max(a[turn], b) < min_score:
        return 0.0                     # the art is not there to see at either height
    return float(a[turn] - b)


#: :func:`size_evidence`: where a face's size places it between the face one
#: layer lower (0) and a face at the slot's height (1), for top tiles still
#: standing and for top tiles taken: the medians on 5 220 raised slots of
#: development photos 1000-1099 and 1400-1499 (supports standing, a face read)
SIZE_PLACE_STANDING, SIZE_PLACE_TAKEN = 0.9, -0.2

#: ... and the spread of the place about them by how well the art fits
#: (``(lowest correlation, spread)``, the best first): the same slots,
#: correlation 0.8 and over: 0.39 standing / 0.46 taken; 0.7-0.8: 0.66 /
#: 0.65; 0.6-0.7: 0.77 / 0.61
SIZE_PLACE_SPREAD = ((0.8, 0.42), (0.7, 0.65), (-1.0, 0.72))

#: the place is clipped to this range first (a misfit's ratio is not evidence
#: without bound)
SIZE_PLACE_CLIP = (-1.0, 2.0)


def size_evidence(grey: np.ndarray, variant: str, slot, face_id: str, spec, pose,
                  scale: float = 1.0, min_score: float = 0.6) -> float:
    """Log-likelihood ratio that a raised slot's face has the size of a face
    at the slot's height rather than that of the face one layer lower.

    The same cue as :func:`height_evidence` (the face of the tile below,
    20 mm lower, looks ``k = (H - h) / (H - h + t)`` times as large: camera
    height ``H`` above the mat, face height ``h``, tile thickness ``t``, mm),
    read another way: :func:`face_scale` fits the face's size over ratios
    0.92-1.08 and a parabola, and the ratio found, over the photo's own
    ``scale``, is placed between ``k`` (place 0) and 1 (place 1), clipped by
    :data:`SIZE_PLACE_CLIP`.  The place is taken as Gaussian about
    :data:`SIZE_PLACE_STANDING` or :data:`SIZE_PLACE_TAKEN` with the spread
    :data:`SIZE_PLACE_SPREAD` gives for the fit's correlation (a sharp face
    is sized about twice as finely as a blurred one), and the ratio of the two
    likelihoods is returned.

    Args:
        grey: ``(H, W)`` uint8 grey photo (:func:`grey_of`).
        variant, face_id: the face read in the slot's window.
        slot: ``(x, y, z)`` with ``z >= 1``; spec: ``vision.mat.MatSpec``;
        pose: ``vision.pose.MatPose``.
        scale: the size of this photo's faces against their art
            (:class:`~vision.reconstruct.ArtFit`), 1 when unknown.
        min_score: no evidence where the art correlates less (a blurred,
            hidden or wrongly read face); :func:`face_scale`'s answer for a
            view it cannot size (correlation -1) is never evidence.

    Returns:
        The log-likelihood ratio (positive: the size of a face at the slot's
        height; at the clip -8.4 to +10.3 for a sharp fit, -2.9 to +3.5 at
        the widest spread; 0 at place 0.35, midway between
        :data:`SIZE_PLACE_TAKEN` and :data:`SIZE_PLACE_STANDING`); 0 where
        the camera is no more than a tile's thickness above the slot's face
        (as :func:`height_evidence`), ``scale`` is not above 0, the art is
        not found, or the best fit lies at the end of the ratios tried.
    """
    tt = float(spec.tile_mm[2])
    h = tt * (int(slot[2]) + 1)
    cam_h = -float(pose.camera_centre_mm[2])
    if cam_h <= h + tt or not scale > 0:
        return 0.0
    k = (cam_h - h) / (cam_h - h + tt)
    scales = (0.92, 0.96, 1.0, 1.04, 1.08)
    fit = face_scale(grey, variant, slot, face_id, spec, pose, scales)
    if not fit.score >= min_score or not fit.score > -1.0 or not scales[0] < fit.ratio < scales[-1]:
        return 0.0                     # no art to see (-1: no view), or its size beyond the range tried
    place = float(np.clip((fit.ratio / scale - k) / (1.0 - k), *SIZE_PLACE_CLIP))
    sigma = next(s for lowest, s in SIZE_PLACE_SPREAD if fit.score >= lowest)
    return ((place - SIZE_PLACE_TAKEN) ** 2 - (place - SIZE_PLACE_STANDING) ** 2) / (2.0 * sigma * sigma)
