"""ArUco marker detection for the mat.

Uses OpenCV's ``cv2.aruco.ArucoDetector`` (OpenCV ArUco module docs, "Detection
of ArUco Markers"), once per dictionary named in the mat spec, then refines
each corner as the intersection of straight lines fitted to sub-pixel edge
points along the marker's four outer sides (:func:`refine_corners_batch`, all
markers in one pass).  ``cornerSubPix`` is made for saddle points and pulls
the corners of a lone black square about 0.25 px inwards (0.6 px on small
markers); the line fit brings that to about 0.02 px on synthetic views.

To save time the detector first looks at the photo shrunk to half its size
and then, at full size, only in small regions where the markers it found put
the missing ones (:func:`detect_markers_by_dictionary`); the corners are
always refined on the full-size image.
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
        ``spec`` are kept; the half-size look gives each id once, while the
        whole-photo look may give an id twice when the image shows it twice
        (the pose stage rejects inconsistent ones).  When the spec mixes
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
    ``{dictionary: (ids (K,) int32, corners (K, 4, 2) float32 px)}``.

    First the half-size look (:func:`_detect_half`: the detector on a
    quarter of the pixels, then at full size only in regions around the
    markers still missing); when that gives fewer than
    :data:`UPSCALE_BELOW` markers (or the photo is under
    :data:`HALF_SIZE_MIN_IMAGE` px), the detector on the whole photo, then
    at twice its size and on a sharpened copy while fewer than
    :data:`UPSCALE_BELOW` markers are found.  Corners are refined on the
    photo's grey image (or, for the twice-size look, the enlarged one) with
    :func:`refine_corners_batch`.

    Raises:
        BadInput: not an image.
    """
    gray = as_gray(image_bgr)
    half = _detect_half(gray, spec)
    if half is not None:
        return half
    out = _detect(gray, spec, 1)
    if _count(out) < UPSCALE_BELOW:
        # small or blurred markers: the detector's adaptive threshold and
        # contour filters work in whole pixels, so look again at twice the size
        big = _detect(cv2.resize(gray, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC), spec, 2)
        if _count(big) > _count(out):
            out = big
    if _count(out) < UPSCALE_BELOW:
        # blurred markers (defocus, motion): an unsharp mask (sigma 3 px,
        # amount 2) restores enough contrast between the bits to decode them
        again = _detect(_sharpened(gray), spec, 1)
        if _count(again) > _count(out):
            out = again
    return out


#: a marker outline this long (px, perimeter: sides of 10 px, under 2 px a
#: module) is long enough for the detector whatever the image's size
#: (:func:`_find`; OpenCV's own limit is a share of the image's longest side)
MIN_MARKER_PERIMETER_PX = 40.0

#: fewer markers than this at the image's own size -> look again at twice the
#: size, then on a sharpened image
UPSCALE_BELOW = 4

#: the half-size look goes on when it finds at least this many markers
#: (8 corners: enough for the homography that predicts where the others lie)
HALF_SIZE_MIN_FOUND = 2

#: images narrower or lower than this (px) skip the half-size look
HALF_SIZE_MIN_IMAGE = 480

#: the half-size look's one adaptive-threshold window (px of the half-size
#: image); the full-size looks keep OpenCV's 3, 13 and 23 px
HALF_SIZE_THRESHOLD_WINDOW = 7

#: a marker found at half size whose side lines fit its edge points worse than
#: this (RMS px, worst side) is looked for again at full size: its outline is
#: suspect (a tile or a hand against an edge)
HALF_SIZE_MAX_RESIDUAL_PX = 0.25

#: a marker found at half size that deviates more than this (px, worst corner)
#: from the homography the others agree on is looked for again at full size
HALF_SIZE_MAX_DEVIATION_PX = 1.0

#: a missing marker is searched for at full size in its predicted bounding box
#: grown by this fraction of its size and at least :data:`ROI_MIN_MARGIN_PX`;
#: by :data:`ROI_MARGIN_UNSURE` when fewer than 4 markers agree with the
#: homography within :data:`HALF_SIZE_MAX_DEVIATION_PX` (strong barrel or
#: pincushion distortion, k1 = -0.45 / +0.2, bends the mat away from any
#: plane homography, which then puts the corner markers up to about two
#: marker sizes off)
ROI_MARGIN = 0.5
ROI_MARGIN_UNSURE = 1.5
ROI_MIN_MARGIN_PX = 12

#: with fewer than ROI_UPSCALE_FEWER_THAN markers found, a missing marker
#: predicted smaller than ROI_UPSCALE_BELOW_PX (mean side, px) and not found in
#: its region is looked for there again at twice the size (the full-size
#: look's upscaling, for the regions only)
ROI_UPSCALE_BELOW_PX = 40.0
ROI_UPSCALE_FEWER_THAN = 6


def _count(found: dict[str, tuple[np.ndarray, np.ndarray]]) -> int:
    return sum(len(v[0]) for v in found.values())


def _wanted(spec: MatSpec) -> dict[str, set[int]]:
    """``{dictionary: ids}`` of the spec's markers."""
    wanted: dict[str, set[int]] = {}
    for m in spec.markers:
        wanted.setdefault(m.dictionary, set()).add(m.id)
    return wanted


def _find(gray: np.ndarray, name: str, ids_wanted: set[int],
          params: "cv2.aruco.DetectorParameters | None" = None,
          min_perimeter_px: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The detector's markers of dictionary ``name`` in ``gray`` whose id is
    wanted: ``ids (K,) int32``, ``corners (K, 4, 2) float64`` px of ``gray``
    (before :func:`refine_corners_batch`), with ``params`` (default
    :func:`detector_parameters`; its ``minMarkerPerimeterRate`` is lowered
    so that no outline of ``min_perimeter_px`` or more is dropped, by
    default :data:`MIN_MARKER_PERIMETER_PX`: an image enlarged ``s`` times
    passes ``s`` times that, so the enlarged looks at a photo keep the
    outlines they kept before)."""
    params = params or detector_parameters()
    # OpenCV's contour filter drops outlines shorter than a share of the
    # image's longest side (3 % by default: 38 px in a 1280 x 720 photo, but
    # 180 px in a 6000 x 4000 one, where a mat far off has sharp 40 px
    # markers): never ask for more than MIN_MARKER_PERIMETER_PX
    params.minMarkerPerimeterRate = min(params.minMarkerPerimeterRate,
                                        (min_perimeter_px or MIN_MARKER_PERIMETER_PX) / max(1, *gray.shape[:2]))
    det = cv2.aruco.ArucoDetector(aruco_dictionary(name), params)
    corners, ids, _ = det.detectMarkers(gray)
    if ids is None or len(ids) == 0:
        return np.zeros((0,), np.int32), np.zeros((0, 4, 2), np.float64)
    ids = ids.reshape(-1).astype(np.int32)
    corners = np.asarray(corners, np.float64).reshape(-1, 4, 2)
    keep = np.array([int(i) in ids_wanted for i in ids], bool)
    return ids[keep], corners[keep]


def _half_size_parameters() -> "cv2.aruco.DetectorParameters":
    """The detector settings for the half-size look: :func:`detector_parameters`
    with one adaptive-threshold window of :data:`HALF_SIZE_THRESHOLD_WINDOW`
    px instead of three (3, 13 and 23 px), and the contour's corners as they
    are (``CORNER_REFINE_NONE``: they are refined at full size)."""
    params = detector_parameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE
    params.adaptiveThreshWinSizeMin = params.adaptiveThreshWinSizeMax = HALF_SIZE_THRESHOLD_WINDOW
    return params


def _refined(gray: np.ndarray,
             found: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``found``'s corners (px of ``gray``) refined in one
    :func:`refine_corners_batch` pass over all dictionaries."""
    names = list(found)
    if not names:
        return {}
    corners = refine_corners_batch(gray, np.concatenate([found[n][1] for n in names]).reshape(-1, 4, 2))
    out, k = {}, 0
    for n in names:
        ids = found[n][0]
        out[n] = (ids, corners[k:k + len(ids)])
        k += len(ids)
    return out


def _detect(gray: np.ndarray, spec: MatSpec, scale: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Markers in ``gray`` (an image ``scale`` times the photo's size), corners
    in the photo's px (pixel centres: ``x = (x' + 0.5) / scale - 0.5``)."""
    found = _refined(gray, {name: _find(gray, name, ids, min_perimeter_px=MIN_MARKER_PERIMETER_PX * scale)
                            for name, ids in _wanted(spec).items()})
    return {name: (ids, (((c + 0.5) / scale - 0.5) if scale != 1 else c).astype(np.float32))
            for name, (ids, c) in found.items()}


def _detect_half(gray: np.ndarray, spec: MatSpec) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """Markers found at half the size, then the missing ones at full size near
    where the found ones put them; None when that gives fewer than
    :data:`UPSCALE_BELOW` markers, the half-size image shows fewer than
    :data:`HALF_SIZE_MIN_FOUND` consistent ones, or the photo is small.

    1. ``cv2.resize`` by 1/2 with ``INTER_AREA`` (pixel averaging), detect
       with :func:`_half_size_parameters` (one threshold window, the
       contour's corners), corners to full-size px
       (``x = (x' + 0.5) * 2 - 0.5``);
    2. the mat's homography, mat mm -> px, from those corners
       (``cv2.findHomography`` with RANSAC; OpenCV docs, "Camera Calibration
       and 3D Reconstruction"); markers off it are dropped;
    3. their corners refined on the full-size image
       (:func:`refine_corners_batch`; once more in step 5, since this first
       pass starts up to 2 px off); a marker goes on only if its refinement
       worked, its side lines fit their edge points within
       :data:`HALF_SIZE_MAX_RESIDUAL_PX` and it lies within
       :data:`HALF_SIZE_MAX_DEVIATION_PX` of the homography the others agree
       on (:func:`_agreeing`): half-size outlines of markers with a tile or a
       hand against an edge are found where the full-size look finds none, or
       a worse one; the homography is fitted again to the refined corners;
    4. each spec marker not gone on with, whose predicted corners lie inside
       the image, is looked for at full size in the predicted box grown by
       :data:`ROI_MARGIN` of its size (:data:`ROI_MARGIN_UNSURE` when fewer
       than 4 markers agreed; at least :data:`ROI_MIN_MARGIN_PX`; only the
       predicted id counts), as the full-size look would (detector with
       ``cornerSubPix``); when the homography rested on fewer than 4 markers
       and this found more, once again with the homography fitted to all;
       with fewer than :data:`ROI_UPSCALE_FEWER_THAN` markers, the ones still
       missing are looked for in their regions through an unsharp mask
       (blurred markers), and then small ones (predicted side under
       :data:`ROI_UPSCALE_BELOW_PX`) at twice the size;
    5. all corners refined on the full-size image in one pass (markers found
       at twice the size: on the enlarged region, as :func:`_detect` does).

    Args:
        gray: ``(H, W) uint8`` photo.
        spec: the mat.

    Returns:
        As :func:`detect_markers_by_dictionary` (ids ascending per
        dictionary), or None.
    """
    h, w = gray.shape
    if min(h, w) < HALF_SIZE_MIN_IMAGE:
        return None
    hw, hh = w // 2, h // 2
    small = cv2.resize(gray, (hw, hh), interpolation=cv2.INTER_AREA)
    scale = np.array([w / hw, h / hh])
    objs = spec.marker_object_points()
    half_params = _half_size_parameters()
    keys: list[tuple[str, int]] = []
    parts = []
    for name, ids in _wanted(spec).items():
        i, c = _find(small, name, ids, half_params)
        keys += [(name, int(v)) for v in i]
        parts.append((c + 0.5) * scale - 0.5)
    if len(keys) < HALF_SIZE_MIN_FOUND:
        return None
    corners = np.concatenate(parts)
    kept, other_mat = nearer_mat(keys, corners, objs, (w, h))
    keys, corners = [keys[k] for k in kept], corners[kept]
    if len(keys) < HALF_SIZE_MIN_FOUND:
        return None
    H, mask = cv2.findHomography(np.concatenate([objs[k][:, :2] for k in keys]), corners.reshape(-1, 2),
                                 cv2.RANSAC, max(4.0, 0.006 * float(np.hypot(w, h))))
    if H is None:
        return None
    inlier = mask.reshape(-1, 4).all(axis=1)
    keys = [k for k, ok in zip(keys, inlier) if ok]
    corners, done, resid = _refine_batch(gray, corners[inlier])
    # markers refined cleanly, and where the others' homography puts them,
    # go on; the others (a tile or a hand against an edge, a poor half-size
    # outline) are left to the full-size look, as if not found here
    clean = {k: c for k, c, e in zip(keys, corners, resid) if e <= HALF_SIZE_MAX_RESIDUAL_PX}
    start, H_fit = _agreeing(clean, objs)
    if len(start) >= HALF_SIZE_MIN_FOUND and H_fit is not None:
        # the refined corners predict far better (the found markers may all
        # lie along one edge of the mat, and the prediction extrapolates)
        H = H_fit
    rests_on = len(start)
    margin = ROI_MARGIN if rests_on >= 4 else ROI_MARGIN_UNSURE
    todo = [(m.dictionary, m.id) for m in spec.markers if (m.dictionary, m.id) not in start]
    found, small_missing = _look_near(gray, H, todo, objs, margin)
    start.update(found)
    if rests_on < 4 and found:
        todo = [k for k in todo if k not in found]
        found, small_missing = _look_near(gray, _homography(start, objs), todo, objs, margin)
        start.update(found)
    if len(start) < ROI_UPSCALE_FEWER_THAN:
        # few markers: blurred ones, as the full-size look's last resort
        # would, through an unsharp mask (in their regions only)
        todo = [k for k in todo if k not in start]
        found, _ = _look_near(gray, _homography(start, objs) if len(start) >= 2 else H, todo, objs, margin,
                              sharpen=True)
        start.update(found)
        small_missing = [(k, box) for k, box in small_missing if k not in start]
    done2x = {}
    if len(start) < ROI_UPSCALE_FEWER_THAN:
        # few markers and small ones missing: as the full-size look would,
        # look again at twice the size (in their regions only)
        for key, (x0, y0, x1, y1) in small_missing:
            big = cv2.resize(gray[y0:y1, x0:x1], None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC)
            i, c = _find(big, key[0], {key[1]})
            if len(i):
                done2x[key] = (refine_corners_batch(big, c[:1])[0] + 0.5) / 2 - 0.5 + np.array([x0, y0], np.float64)
    result = {}
    if start:
        result.update(zip(start, refine_corners_batch(gray, np.stack(list(start.values())))))
    result.update(done2x)
    if len(result) < UPSCALE_BELOW:
        return None
    out = Found()
    out.other_mat = other_mat
    for name in _wanted(spec):
        ks = sorted(k for k in result if k[0] == name)
        out[name] = (np.array([k[1] for k in ks], np.int32),
                     np.array([result[k] for k in ks], np.float32).reshape(-1, 4, 2))
    return out


#: markers agreeing on one plane that a mat needs to be chosen over another
#: in the picture (:func:`nearer_mat`)
OTHER_MAT_MARKERS = 3


class Found(dict):
    """:func:`detect_markers_by_dictionary`'s answer, ``{dictionary: (ids,
    corners)}``, with ``other_mat``: a second mat showed in the picture, and
    only the markers of the one nearer its centre are given
    (:func:`nearer_mat`)."""

    other_mat: bool = False


def nearer_mat(keys: list, corners: np.ndarray, objs: dict, size: tuple[int, int]) -> tuple[list[int], bool]:
    """When a marker id is read twice, two mats are in the picture (the next
    table's, a printed spare): keep the markers of the one nearer the
    picture's centre, where a player frames their own table.  Each mat is
    the inlier set of a RANSAC plane homography (``cv2.findHomography``),
    the first over all the markers, the second over the rest; without a
    repeated id, everything is returned as it is.  A break-test's photo of
    two tables side by side was read on whichever mat the homography met
    first.

    Args:
        keys: ``(dictionary, id)`` of each marker, in ``corners``' order.
        corners: ``(K, 4, 2)`` px.
        objs: ``spec.marker_object_points()``: ``{(dictionary, id): (4, 3) mm}``.
        size: the picture's ``(w, h)`` px.

    Returns:
        ``(indices of the markers kept, ascending, two)``: ``two`` when the
        markers left out make a mat of their own (2 or more agreeing on
        one plane; a stray detection of one id is no mat).  The pose rests
        on a mat of :data:`OTHER_MAT_MARKERS` or more markers.
    """
    if len(set(keys)) == len(keys) or len(keys) < 4:
        return list(range(len(keys))), False
    w, h = size
    thr = max(4.0, 0.006 * float(np.hypot(w, h)))

    def plane(idx: list[int]) -> list[int]:
        if len(idx) < 2:
            return []
        obj = np.concatenate([objs[keys[k]][:, :2] for k in idx])
        img = np.asarray(corners, np.float64)[idx].reshape(-1, 2)
        H, mask = cv2.findHomography(obj, img, cv2.RANSAC, thr, maxIters=2000, confidence=0.999)
        if H is None:
            return []
        ok = mask.reshape(-1, 4).all(axis=1)
        seen: set = set()
        out = []
        for k, good in zip(idx, ok):
            if good and keys[k] not in seen:       # one detection per id and mat
                seen.add(keys[k])
                out.append(k)
        return out

    first = plane(list(range(len(keys))))
    second = plane([k for k in range(len(keys)) if k not in set(first)])
    if len(second) < 2:
        return sorted(first), False         # a stray detection of one id is no mat
    # two mats; of those read well enough to rest a pose on, the one nearer
    # the centre (a mat of 2 markers only shows that it is there)
    mats = [m for m in (first, second) if len(m) >= OTHER_MAT_MARKERS] or [max(first, second, key=len)]
    centre = np.array([w / 2.0, h / 2.0])
    best = min(mats, key=lambda m: float(np.linalg.norm(np.asarray(corners)[m].reshape(-1, 2).mean(axis=0) - centre)))
    return sorted(best), True


def _agreeing(found: dict[tuple[str, int], np.ndarray], objs: dict):
    """The markers of ``found`` (``{(dictionary, id): (4, 2) px}``) that one
    plane homography fits within :data:`HALF_SIZE_MAX_DEVIATION_PX` (worst
    corner), and that homography (mat mm -> px; None with no markers).

    Least squares over all, then the worst marker dropped while it deviates
    more (so one bad marker cannot pull the fit onto the others); with fewer
    than 4 markers the fit has too little redundancy to judge, and all are
    kept.
    """
    keys = list(found)
    if len(keys) < 4:
        return dict(found), (_homography(found, objs) if keys else None)
    obj = np.stack([objs[k][:, :2] for k in keys])            # (n, 4, 2) mm
    img = np.stack([found[k] for k in keys])                   # (n, 4, 2) px
    use = np.ones(len(keys), bool)
    while True:
        H = cv2.findHomography(obj[use].reshape(-1, 2), img[use].reshape(-1, 2), 0)[0]
        if H is None:
            return {}, None
        dev = np.linalg.norm(cv2.perspectiveTransform(obj.reshape(-1, 1, 2), H).reshape(-1, 4, 2) - img,
                             axis=2).max(axis=1)
        worst = int(np.argmax(np.where(use, dev, -1.0)))
        if dev[worst] <= HALF_SIZE_MAX_DEVIATION_PX or use.sum() <= 4:
            return {k: found[k] for k, d in zip(keys, dev) if d <= HALF_SIZE_MAX_DEVIATION_PX}, H
        use[worst] = False


def _homography(found: dict[tuple[str, int], np.ndarray], objs: dict) -> np.ndarray | None:
    """Least-squares mat mm -> px homography ``(3, 3)`` from markers'
    ``{(dictionary, id): (4, 2) px}`` (``cv2.findHomography``, all points)."""
    return cv2.findHomography(np.concatenate([objs[k][:, :2] for k in found]),
                              np.concatenate(list(found.values())), 0)[0]


def _look_near(gray: np.ndarray, H: np.ndarray | None, keys: list[tuple[str, int]], objs: dict,
               margin: float = ROI_MARGIN, sharpen: bool = False):
    """Look for the markers ``keys`` at full size where the homography ``H``
    (mat mm -> px) puts them (:func:`_detect_half`, step 4): in the
    predicted box grown by ``margin`` of its size (at least
    :data:`ROI_MIN_MARGIN_PX`), through an unsharp mask when ``sharpen``.

    Returns:
        ``({key: (4, 2) float64 px}`` found (the detector's corners),
        ``[(key, (x0, y0, x1, y1))]`` regions of small markers not found).
    """
    found: dict[tuple[str, int], np.ndarray] = {}
    small_missing = []
    if H is None or not keys:
        return found, small_missing
    h, w = gray.shape
    pred = cv2.perspectiveTransform(np.concatenate([objs[k][:, :2] for k in keys]).reshape(-1, 1, 2),
                                    H).reshape(-1, 4, 2)
    for key, p in zip(keys, pred):
        lo, hi = p.min(axis=0), p.max(axis=0)
        if not (np.all(np.isfinite(p)) and lo[0] >= 0 and lo[1] >= 0 and hi[0] <= w - 1 and hi[1] <= h - 1):
            continue
        pad = max(ROI_MIN_MARGIN_PX, margin * float(np.max(hi - lo)))
        x0, y0 = int(max(0, np.floor(lo[0] - pad))), int(max(0, np.floor(lo[1] - pad)))
        x1, y1 = int(min(w, np.ceil(hi[0] + pad) + 1)), int(min(h, np.ceil(hi[1] + pad) + 1))
        roi = gray[y0:y1, x0:x1]
        i, c = _find(_sharpened(roi) if sharpen else roi, key[0], {key[1]})
        if len(i):
            found[key] = c[0] + np.array([x0, y0], np.float64)
        elif np.mean(np.linalg.norm(p - p[_NEXT], axis=1)) < ROI_UPSCALE_BELOW_PX:
            small_missing.append((key, (x0, y0, x1, y1)))
    return found, small_missing


def _sharpened(gray: np.ndarray) -> np.ndarray:
    """An unsharp mask (sigma 3 px, amount 2) of ``gray`` ``(H, W) uint8``:
    restores enough contrast between a blurred marker's bits to decode them."""
    return cv2.addWeighted(gray, 3.0, cv2.GaussianBlur(gray, (0, 0), 3.0), -2.0, 0)


def refine_marker_corners(gray: np.ndarray, corners: np.ndarray, step: float = 0.25) -> np.ndarray:
    """Sharpen one marker's outer corners by fitting its four sides.

    The one-marker form of :func:`refine_corners_batch` (same algorithm,
    same fallbacks).

    Args:
        gray: ``(H, W) uint8`` image.
        corners: ``(4, 2)`` px, the detector's corners (clockwise in the image).
        step: sample spacing along each profile, px.

    Returns:
        ``(4, 2) float64`` px.
    """
    return refine_corners_batch(gray, np.asarray(corners, np.float64).reshape(1, 4, 2), step)[0]


def refine_corners_batch(gray: np.ndarray, corners: np.ndarray, step: float = 0.25) -> np.ndarray:
    """Sharpen every marker's outer corners by fitting its four sides, all
    markers in one pass.

    Along each side (its middle 76%, ``max(8, length / 1.5)`` profiles),
    intensity profiles across the edge (``r = clip(module / 2, 1.5, 4)`` px
    inwards and outwards, bilinear samples every ``step`` px, one
    ``cv2.remap`` over all markers' profiles) give the sub-pixel point where
    the profile crosses halfway between the black border (mean of its inner
    fifth) and the white quiet zone (mean of its outer fifth); per profile
    the upward crossing nearest the detected side counts, and only profiles
    with a contrast of at least 20 grey levels.  Each side's line is the
    total-least-squares fit through its points (the principal axis of their
    2 x 2 covariance, as ``cv2.fitLine`` with ``DIST_L2``; OpenCV docs,
    "Structural Analysis and Shape Descriptors"), and adjacent lines
    intersected give the corners.  A marker keeps its input corners when a
    side is shorter than 4 px, a side has under 4 usable profiles, two
    adjacent lines are (near) parallel, or a corner would move more than
    ``max(2 px, module / 2)``.  Assumes straight sides (no or mild lens
    distortion over one marker).  ``cornerSubPix`` (the detector's own
    refinement) is made for saddle points and pulls the corners of a lone
    black square inwards; this fit does not.

    Args:
        gray: ``(H, W) uint8`` image.
        corners: ``(K, 4, 2)`` px, the detector's corners of ``K`` markers
            (each clockwise in the image; the module is a sixth of the mean
            side, as for 4 x 4 ArUco markers with their one-module border).
        step: sample spacing along each profile, px.

    Returns:
        ``(K, 4, 2) float64`` px.
    """
    return _refine_batch(gray, corners, step)[0]


def _refine_batch(gray: np.ndarray, corners: np.ndarray,
                  step: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`refine_corners_batch`, plus ``(K,) bool`` which markers were
    refined (False: kept their input corners) and ``(K,) float64`` the RMS
    distance (px) of the edge points from their line on the worst side (inf
    where not refined)."""
    c = np.array(corners, np.float64).reshape(-1, 4, 2)
    out = c.copy()
    done = np.zeros(len(c), bool)
    resid = np.full(len(c), np.inf)
    if len(c) == 0:
        return out, done, resid
    h, w = gray.shape[:2]
    nxt = c[:, _NEXT]                                              # corner k + 1
    vec = nxt - c                                                  # (K, 4, 2) side k: corner k -> k + 1
    length = np.sqrt(np.sum(vec * vec, axis=2))                    # (K, 4) px
    area = 0.5 * np.sum(c[:, :, 0] * nxt[:, :, 1] - nxt[:, :, 0] * c[:, :, 1], axis=1)
    module = length.mean(axis=1) / 6.0
    r = np.clip(0.5 * module, 1.5, 4.0)                            # profile half-length, px
    pad = np.ceil(r) + 3
    with np.errstate(invalid="ignore"):
        # each marker's box: the samples stay at least 2 px inside it unless
        # the image edge clips it
        x0 = np.maximum(0, np.floor(c[:, :, 0].min(axis=1)) - pad)
        y0 = np.maximum(0, np.floor(c[:, :, 1].min(axis=1)) - pad)
        x1 = np.minimum(w, np.ceil(c[:, :, 0].max(axis=1)) + pad + 1)
        y1 = np.minimum(h, np.ceil(c[:, :, 1].max(axis=1)) + pad + 1)
        good = (x1 - x0 >= 4) & (y1 - y0 >= 4) & np.all(length >= 4, axis=1)
    idx = np.flatnonzero(good)
    if len(idx) == 0:
        return out, done, resid
    if (y1 - y0)[idx].sum() >= _REMAP_ROWS and len(idx) > 1:
        # the stacked boxes would be too tall for cv2.remap: two halves
        half = len(idx) // 2
        for part in (idx[:half], idx[half:]):
            out[part], done[part], resid[part] = _refine_batch(gray, c[part], step)
        return out, done, resid
    m = len(idx)
    cg, vec, length, r, module = c[idx], vec[idx], length[idx], r[idx], module[idx]
    sign = np.where(area[idx] > 0, 1.0, -1.0)
    n_off = np.ceil(((r + 1e-9) + r) / step).astype(np.int64)     # samples: len(np.arange(-r, r + 1e-9, step))
    q = np.maximum(1, n_off // 5)                                  # samples averaged for black and white
    # the boxes as float32, stacked one under the other
    x0, y0, x1, y1 = (v[idx].astype(np.int64) for v in (x0, y0, x1, y1))
    bw, bh = x1 - x0, y1 - y0
    top = np.cumsum(bh) - bh
    atlas = np.zeros((int(bh.sum()), int(bw.max())), np.float32)   # zeros: padding samples read finite values
    for k in range(m):
        atlas[top[k]:top[k] + bh[k], :bw[k]] = gray[y0[k]:y1[k], x0[k]:x1[k]]
    # profiles: per side of every marker, evenly along its middle 76%
    n_ts = np.maximum(8, (length / 1.5).astype(np.int64)).reshape(-1)   # (4m,) profiles per side
    side = np.repeat(np.arange(4 * m), n_ts)                              # profile -> side (4 per marker)
    mk = side // 4                                                        # profile -> marker
    pos = np.arange(len(side)) - (np.cumsum(n_ts) - n_ts)[side]
    ts = 0.12 + pos * (0.76 / (n_ts[side] - 1))
    p0 = cg.reshape(-1, 2)[side]
    d = vec.reshape(-1, 2)[side]
    nx = sign[mk] * d[:, 1] / length.reshape(-1)[side]                    # outward unit normal
    ny = -sign[mk] * d[:, 0] / length.reshape(-1)[side]
    n_max = int(n_off.max())
    jj = np.arange(n_max)
    offs = step * jj - r[mk, None]                                        # (P, n_max) px along the normal
    sx = (p0[:, 0] + ts * d[:, 0] - x0[mk])[:, None] + offs * nx[:, None]  # px in the marker's box
    sy = (p0[:, 1] + ts * d[:, 1] - y0[mk])[:, None] + offs * ny[:, None]
    if np.any((x0 == 0) | (y0 == 0) | (x1 == w) | (y1 == h)):
        # boxes cut by the image edge: clamping the positions replicates the
        # edge pixels, as cv2.remap's BORDER_REPLICATE does
        sx = np.clip(sx, 0, (bw - 1)[mk, None])
        sy = np.clip(sy, 0, (bh - 1)[mk, None])
    prof = _remap(atlas, sx.astype(np.float32), (sy + top[mk, None]).astype(np.float32))
    # black (inner fifth) and white (outer fifth) levels from the rows'
    # running sums (cv2.integral: ii[i, j] = sum of prof[:i, :j])
    ii = cv2.integral(prof, sdepth=cv2.CV_64F)
    rows = np.arange(len(side))
    n_p, q_p = n_off[mk], q[mk]
    dark = (ii[rows + 1, q_p] - ii[rows, q_p]) / q_p
    light = ((ii[rows + 1, n_p] - ii[rows, n_p]) - (ii[rows + 1, n_p - q_p] - ii[rows, n_p - q_p])) / q_p
    mid = ((dark + light) / 2).astype(np.float32)
    # upward crossings of the half-way level; per profile the one nearest the detected side
    cross = (prof[:, :-1] < mid[:, None]) & (prof[:, 1:] >= mid[:, None]) & (jj[None, :-1] < (n_p - 1)[:, None])
    j = np.where(cross, np.abs(offs[:, :-1]), np.inf).argmin(axis=1)
    ok = (light - dark >= 20) & cross[rows, j]
    v0, v1 = prof[rows, j].astype(np.float64), prof[rows, j + 1].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_ = np.where(ok, offs[rows, j] + (mid - v0) / (v1 - v0) * step, 0.0)
    # edge points relative to their side's first corner; a total least
    # squares line per side (centroid + principal axis)
    ex = np.where(ok, ts * d[:, 0] + s_ * nx, 0.0)
    ey = np.where(ok, ts * d[:, 1] + s_ * ny, 0.0)
    wgt = ok.astype(np.float64)
    ns = 4 * m
    cnt = np.bincount(side, wgt, ns)
    with np.errstate(all="ignore"):  # sides without usable profiles give nan, rejected below
        cx, cy = np.bincount(side, ex, ns) / cnt, np.bincount(side, ey, ns) / cnt
        dx, dy = (ex - cx[side]) * wgt, (ey - cy[side]) * wgt
        sxx, syy, sxy = np.bincount(side, dx * dx, ns), np.bincount(side, dy * dy, ns), np.bincount(side, dx * dy, ns)
        theta = 0.5 * np.arctan2(2 * sxy, sxx - syy)
        ux, uy = np.cos(theta).reshape(m, 4), np.sin(theta).reshape(m, 4)
        ax, ay = cg[:, :, 0] + cx.reshape(m, 4), cg[:, :, 1] + cy.reshape(m, 4)   # a point on each line
        # corner k: line of side k - 1 (a', u') meets line of side k (a, u): a' + s u' = a + t u
        apx, apy, upx, upy = ax[:, _PREV], ay[:, _PREV], ux[:, _PREV], uy[:, _PREV]
        det = upy * ux - upx * uy
        s = ((ay - apy) * ux - (ax - apx) * uy) / det
        new = np.stack([apx + s * upx, apy + s * upy], axis=2)
        move = np.sqrt(np.sum((new - cg) ** 2, axis=2)).max(axis=1)
        fine = (np.all(cnt.reshape(m, 4) >= 4, axis=1) & np.all(np.abs(det) >= 1e-6, axis=1)
                & (move <= np.maximum(2.0, module / 2)))
        # quality: RMS distance of the edge points from their side's line
        # (smaller eigenvalue of the scatter matrix), worst side, px
        lam = 0.5 * (sxx + syy) - np.sqrt(0.25 * (sxx - syy) ** 2 + sxy ** 2)
        rms = np.sqrt(np.maximum(lam, 0) / cnt).reshape(m, 4).max(axis=1)
    out[idx[fine]] = new[fine]
    done[idx[fine]] = True
    resid[idx[fine]] = rms[fine]
    return out, done, resid


_NEXT = np.array([1, 2, 3, 0])
_PREV = np.array([3, 0, 1, 2])


#: cv2.remap's images and maps must have fewer than 32767 rows (SHRT_MAX)
_REMAP_ROWS = 32000


def _remap(img: np.ndarray, mx: np.ndarray, my: np.ndarray) -> np.ndarray:
    """Bilinear samples of ``img`` ``(h, w) float32`` at ``(P, N) float32``
    maps (px), border replicated (``cv2.remap``), in blocks of rows within
    cv2.remap's size limit."""
    parts = [cv2.remap(img, mx[i:i + _REMAP_ROWS], my[i:i + _REMAP_ROWS], cv2.INTER_LINEAR,
                       borderMode=cv2.BORDER_REPLICATE) for i in range(0, len(mx), _REMAP_ROWS)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


