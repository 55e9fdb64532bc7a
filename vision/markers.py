"""ArUco marker detection for the mat.

Uses OpenCV's ``cv2.aruco.ArucoDetector`` (OpenCV ArUco module docs, "Detection
of ArUco Markers") with sub-pixel corner refinement, once per dictionary named
in the mat spec, then refines each corner as the intersection of straight
lines fitted to sub-pixel edge points along the marker's four outer sides
(:func:`refine_marker_corners`).  ``cornerSubPix`` is made for saddle points
and pulls the corners of a lone black square about 0.25 px inwards (0.6 px on
small markers); the line fit brings that to about 0.02 px on synthetic views.
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.errors import BadInput
from vision.mat import MatSpec, aruco_dictionary


def detector_parameters() -> "cv2.aruco.DetectorParameters":
    """The detector settings used for the mat: OpenCV defaults plus
    ``CORNER_REFINE_SUBPIX`` (window 5 px, 50 iterations, 0.01 px)."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.cornerRefinementWinSize = 5
    params.cornerRefinementMaxIterations = 50
    params.cornerRefinementMinAccuracy = 0.01
    return params


def as_gray(image: np.ndarray) -> np.ndarray:
    """``(H, W) uint8`` from a BGR ``(H, W, 3)``, BGRA ``(H, W, 4)`` or grey image.

    Raises:
        BadInput: not a 2-D or 3-D uint8 image.
    """
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3) or image.size == 0:
        raise BadInput("expected a non-empty uint8 image (H, W) or (H, W, 3)")
    if image.ndim == 2:
        return image
    if image.shape[2] == 1:
        return image[:, :, 0]
    if image.shape[2] == 3:
        return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    raise BadInput(f"unexpected image with {image.shape[2]} channels")


def detect_markers(image_bgr: np.ndarray, spec: MatSpec) -> tuple[np.ndarray, np.ndarray]:
    """Find the mat's markers in an image.

    Args:
        image_bgr: ``(H, W, 3) uint8`` BGR image (grey ``(H, W)`` also accepted).
        spec: the mat; every dictionary its markers use is searched.

    Returns:
        ``(ids, corners)``: ``ids`` ``(K,) int32`` marker ids and ``corners``
        ``(K, 4, 2) float32`` image pixels (top-left, top-right, bottom-right,
        bottom-left of the printed marker).  Only markers whose id appears in
        ``spec`` are kept; an id may appear twice when the image shows it
        twice (the pose stage rejects inconsistent ones).  When the spec mixes
        dictionaries, use :func:`detect_markers_by_dictionary`.

    Raises:
        BadInput: not an image.
    """
    found = detect_markers_by_dictionary(image_bgr, spec)
    ids = [i for d in found for i in found[d][0]]
    corners = [c for d in found for c in found[d][1]]
    if not ids:
        return np.zeros((0,), np.int32), np.zeros((0, 4, 2), np.float32)
    return np.asarray(ids, np.int32), np.asarray(corners, np.float32).reshape(-1, 4, 2)


def detect_markers_by_dictionary(image_bgr: np.ndarray, spec: MatSpec) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Like :func:`detect_markers`, keyed by dictionary name:
    ``{dictionary: (ids (K,) int32, corners (K, 4, 2) float32 px)}``."""
    gray = as_gray(image_bgr)
    out = _detect(gray, spec, 1)
    if sum(len(v[0]) for v in out.values()) < UPSCALE_BELOW:
        # small or blurred markers: the detector's adaptive threshold and
        # contour filters work in whole pixels, so look again at twice the size
        big = _detect(cv2.resize(gray, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC), spec, 2)
        if sum(len(v[0]) for v in big.values()) > sum(len(v[0]) for v in out.values()):
            out = big
    if sum(len(v[0]) for v in out.values()) < UPSCALE_BELOW:
        # blurred markers (defocus, motion): an unsharp mask (sigma 3 px,
        # amount 2) restores enough contrast between the bits to decode them
        sharp = cv2.addWeighted(gray, 3.0, cv2.GaussianBlur(gray, (0, 0), 3.0), -2.0, 0)
        again = _detect(sharp, spec, 1)
        if sum(len(v[0]) for v in again.values()) > sum(len(v[0]) for v in out.values()):
            out = again
    return out


#: fewer markers than this at the image's own size -> look again at twice the
#: size, then on a sharpened image
UPSCALE_BELOW = 4


def _detect(gray: np.ndarray, spec: MatSpec, scale: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Markers in ``gray`` (an image ``scale`` times the photo's size), corners
    in the photo's px (pixel centres: ``x = (x' + 0.5) / scale - 0.5``)."""
    wanted: dict[str, set[int]] = {}
    for m in spec.markers:
        wanted.setdefault(m.dictionary, set()).add(m.id)
    out = {}
    for name, ids_wanted in wanted.items():
        det = cv2.aruco.ArucoDetector(aruco_dictionary(name), detector_parameters())
        corners, ids, _ = det.detectMarkers(gray)
        if ids is None or len(ids) == 0:
            out[name] = (np.zeros((0,), np.int32), np.zeros((0, 4, 2), np.float32))
            continue
        ids = ids.reshape(-1).astype(np.int32)
        corners = np.asarray(corners, np.float32).reshape(-1, 4, 2)
        keep = np.array([i in ids_wanted for i in ids], bool)
        ids, corners = ids[keep], corners[keep]
        refined = np.array([refine_marker_corners(gray, c) for c in corners], np.float64).reshape(-1, 4, 2)
        if scale != 1:
            refined = (refined + 0.5) / scale - 0.5
        out[name] = (ids, refined.astype(np.float32))
    return out


def refine_marker_corners(gray: np.ndarray, corners: np.ndarray, step: float = 0.25) -> np.ndarray:
    """Sharpen a marker's outer corners by fitting its four sides.

    Along each side (its middle 76%), intensity profiles across the edge
    (half a module inwards and outwards, bilinear samples every ``step`` px)
    give the sub-pixel point where the profile crosses halfway between the
    black border and the white quiet zone; a least-squares line through those
    points per side, and adjacent lines intersected, give the corners.  A
    side with under 4 usable profiles, or a corner moving more than
    ``max(2 px, module / 2)``, leaves the input unchanged.  Assumes straight
    sides (no or mild lens distortion over one marker).

    Args:
        gray: ``(H, W) uint8`` image.
        corners: ``(4, 2)`` px, the detector's corners (clockwise in the image).

    Returns:
        ``(4, 2) float64`` px.
    """
    c = np.asarray(corners, np.float64).reshape(4, 2)
    area = 0.5 * float(np.sum(c[:, 0] * np.roll(c[:, 1], -1) - np.roll(c[:, 0], -1) * c[:, 1]))
    sign = 1.0 if area > 0 else -1.0
    module = np.mean([np.linalg.norm(c[(k + 1) % 4] - c[k]) for k in range(4)]) / 6.0
    r = float(np.clip(0.5 * module, 1.5, 4.0))
    offs = np.arange(-r, r + 1e-9, step)
    q = max(1, len(offs) // 5)
    # work on a float copy of the marker's surroundings only
    pad = int(np.ceil(r)) + 3
    x0i = max(0, int(np.floor(c[:, 0].min())) - pad)
    y0i = max(0, int(np.floor(c[:, 1].min())) - pad)
    x1i = min(gray.shape[1], int(np.ceil(c[:, 0].max())) + pad + 1)
    y1i = min(gray.shape[0], int(np.ceil(c[:, 1].max())) + pad + 1)
    if x1i - x0i < 4 or y1i - y0i < 4:
        return c
    img = gray[y0i:y1i, x0i:x1i].astype(np.float32)
    origin = np.array([x0i, y0i], np.float64)
    # the four sides' profiles, sampled in one remap
    bases, normals, side = [], [], []
    for k in range(4):
        p0, p1 = c[k], c[(k + 1) % 4]
        length = float(np.linalg.norm(p1 - p0))
        if length < 4:
            return c
        d = (p1 - p0) / length
        ts = np.linspace(0.12, 0.88, int(max(8, length / 1.5)))
        bases.append(p0[None, :] + ts[:, None] * (p1 - p0)[None, :])
        normals.append(np.broadcast_to(sign * np.array([d[1], -d[0]]), (len(ts), 2)))   # outwards
        side.append(np.full(len(ts), k))
    base, normal, side = np.concatenate(bases), np.concatenate(normals), np.concatenate(side)
    pts = base[:, None, :] + offs[None, :, None] * normal[:, None, :] - origin
    prof = cv2.remap(img, pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32),
                     cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    dark, light = prof[:, :q].mean(axis=1), prof[:, -q:].mean(axis=1)
    mid = (dark + light) / 2
    # upward crossings of the half-way level; per profile the one nearest the detected side
    cross = (prof[:, :-1] < mid[:, None]) & (prof[:, 1:] >= mid[:, None])
    cost = np.where(cross, np.abs(offs[:-1])[None, :], np.inf)
    j = cost.argmin(axis=1)
    ok = (light - dark >= 20) & cross.any(axis=1)
    rows = np.arange(len(base))
    v0, v1 = prof[rows, j], prof[rows, np.minimum(j + 1, len(offs) - 1)]
    with np.errstate(divide="ignore", invalid="ignore"):
        s_ = offs[j] + (mid - v0) / (v1 - v0) * step
    edges = base + s_[:, None] * normal
    lines = []
    for k in range(4):
        edge = edges[ok & (side == k)]
        if len(edge) < 4:
            return c
        vx, vy, x0, y0 = cv2.fitLine(np.asarray(edge, np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = np.empty((4, 2), np.float64)
    for k in range(4):
        (a, u), (b, v) = lines[(k - 1) % 4], lines[k]
        A = np.array([u, -v]).T
        if abs(np.linalg.det(A)) < 1e-6:
            return c
        s = np.linalg.solve(A, b - a)
        out[k] = a + s[0] * u
    if np.max(np.linalg.norm(out - c, axis=1)) > max(2.0, module / 2):
        return c
    return out
