"""Camera calibration from photos of a printed ChArUco board.

The board (:func:`charuco_board`) is a 9 x 6 chessboard of 30 mm squares with
22 mm ``DICT_5X5_100`` markers in its white squares (a dictionary the mat does
not use, so neither target is mistaken for the other); printed on A4 it leaves
a 13.5 / 15 mm white margin.  Corners come from ``cv2.aruco.CharucoDetector``
and intrinsics from ``cv2.calibrateCamera`` (Zhang, "A flexible new technique
for camera calibration", PAMI 2000; OpenCV tutorial "Calibration with ArUco
and ChArUco"), estimating ``fx, fy, cx, cy, k1, k2, p1, p2`` (``k3`` fixed at
0, which suits webcam-type lenses and keeps few views stable).

Good views: 6-20 photos, the board filling a good part of the frame, tilted
20-45 degrees in different directions and placed in different parts of the
image (corners too).  Views straight on carry no focal information.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.errors import BadInput
from companion.wording import count
from vision.markers import as_gray
from vision.pose import Camera, focal_from_homographies, homography_tilt_deg

BOARD_SQUARES = (9, 6)  # (columns, rows) of chessboard squares
SQUARE_MM = 30.0
MARKER_MM = 22.0
BOARD_DICTIONARY = "DICT_5X5_100"
PAGE_MM = (297.0, 210.0)  # A4 landscape
PRINT_PX_PER_MM = 12.0  # 304.8 dpi, an integer number of pixels per square
MIN_VIEWS = 4
MIN_CORNERS = 8  # per view, of the 40 inner corners
MIN_MAX_TILT_DEG = 10.0  # at least one view must be tilted this much
MAX_FOCAL_REL_STD = 0.05  # the calibration's own 1-sigma focal uncertainty
#: fits from different starts (:func:`_fits`) as good as the best may end at
#: focal lengths at most this far apart (relative): further, the views leave
#: the focal length free (OpenCV's 1-sigma then says as little as 0.1 %)
FOCAL_SPREAD_MAX = 0.02
#: a view fits poorly when its own RMS reprojection error (px) is over both
#: of these: the px, and the ratio to the median of all views' (:func:`_poor_views`)
POOR_VIEW_PX = 0.5
POOR_VIEW_RATIO = 3.0
#: two views show the board in one position when every board corner they
#: share (:data:`MIN_CORNERS` or more) lies within this share of the
#: picture's diagonal of where the other shows it (7 px in 1280 x 720):
#: photos taken without moving the board or the camera, or frames of a video
#: held still.  They add no view (:func:`_positions`): six photos of one
#: position were calibrated, 15-22 % off in focal length (a break-test).
SAME_POSITION_SHARE = 0.005


def charuco_board() -> "cv2.aruco.CharucoBoard":
    """The calibration board: 9 x 6 squares of 30 mm, 22 mm ``DICT_5X5_100``
    markers; object points in mm, origin at the board's top-left corner,
    x right, y down (``getChessboardCorners()`` gives the 8 x 5 = 40 inner
    corners, ids row by row)."""
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, BOARD_DICTIONARY))
    return cv2.aruco.CharucoBoard(BOARD_SQUARES, SQUARE_MM, MARKER_MM, d)


def board_origin_mm() -> tuple[float, float]:
    """Top-left corner of the board on the A4 page, mm."""
    return ((PAGE_MM[0] - BOARD_SQUARES[0] * SQUARE_MM) / 2, (PAGE_MM[1] - BOARD_SQUARES[1] * SQUARE_MM) / 2)


def board_json(px_per_mm: float = PRINT_PX_PER_MM, image: str = "charuco_board.png") -> dict:
    """Description of the printed board (``calibration/charuco_board.json``)."""
    return {"type": "charuco", "squares": list(BOARD_SQUARES), "square_mm": SQUARE_MM, "marker_mm": MARKER_MM,
            "dictionary": BOARD_DICTIONARY, "page_mm": list(PAGE_MM), "board_origin_mm": list(board_origin_mm()),
            "px_per_mm": float(px_per_mm), "image": image, "legacy_pattern": False,
            "print": "A4 landscape at 100% (actual size); check that a square measures 30 mm; "
                     "glue it flat on card"}


def render_charuco(px_per_mm: float = PRINT_PX_PER_MM) -> np.ndarray:
    """The printable board on an A4 landscape page.

    Args:
        px_per_mm: resolution; the board sits at :func:`board_origin_mm`, so
            page pixel ``(i, j)`` has its centre at ``((i + 0.5) / P,
            (j + 0.5) / P)`` mm.  Choose ``30 P`` integral for exact squares.

    Returns:
        ``(H, W, 3) uint8`` BGR, ``W = 297 P``, ``H = 210 P`` (rounded).
    """
    p = float(px_per_mm)
    w, h = int(round(PAGE_MM[0] * p)), int(round(PAGE_MM[1] * p))
    page = np.full((h, w), 255, np.uint8)
    bw, bh = int(round(BOARD_SQUARES[0] * SQUARE_MM * p)), int(round(BOARD_SQUARES[1] * SQUARE_MM * p))
    board = charuco_board().generateImage((bw, bh), marginSize=0, borderBits=1)
    ox, oy = (int(round(v * p)) for v in board_origin_mm())
    page[oy:oy + bh, ox:ox + bw] = board
    font = cv2.FONT_HERSHEY_SIMPLEX
    text = (f"companion calibration board: {BOARD_SQUARES[0]} x {BOARD_SQUARES[1]} squares of {SQUARE_MM:g} mm, "
            f"{BOARD_DICTIONARY}; print at 100%, glue flat")
    scale = 2.5 * p / cv2.getTextSize("0", font, 1.0, 1)[0][1]
    cv2.putText(page, text, (ox, int(round((oy + bh) + 0.6 * (h - oy - bh)))), font, scale, 90,
                max(1, int(round(0.3 * p))), cv2.LINE_AA)
    return cv2.cvtColor(page, cv2.COLOR_GRAY2BGR)


def detect_charuco(image_bgr: np.ndarray, board: "cv2.aruco.CharucoBoard | None" = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """ChArUco corners in one image.

    Args:
        image_bgr: ``(H, W, 3) uint8`` BGR (grey accepted).

    Returns:
        ``(object_points (M, 3) float32 mm, image_points (M, 2) float32 px)``,
        ``M = 0`` when the board is not seen.
    """
    board = board or charuco_board()
    det = cv2.aruco.CharucoDetector(board)
    corners, ids, _, _ = det.detectBoard(as_gray(image_bgr))
    if ids is None or len(ids) == 0:
        return np.zeros((0, 3), np.float32), np.zeros((0, 2), np.float32)
    obj, img = board.matchImagePoints(corners, ids)
    return np.asarray(obj, np.float32).reshape(-1, 3), np.asarray(img, np.float32).reshape(-1, 2)


def calibrate(images: list[np.ndarray], names: list[str] | None = None,
              left_out: list[str] | None = None, poor_fits: list[tuple[str, float, float]] | None = None
              ) -> tuple[Camera, float, int]:
    """Calibrate a camera from photos of the printed board.

    Args:
        images: ``(H, W, 3) uint8`` BGR photos, all the same size, or
            functions of no argument that read one (each is then read when
            its corners are looked for, and let go after: only the corners
            are kept).
        names: labels for messages (file names), default ``image 1``, ...
        left_out: when given, filled with the names of the photos left out
            (no board with enough corners, or its corners on one line).
        poor_fits: when given, filled with ``(name, rms_px, median_rms_px)``
            for each view used whose own RMS reprojection error is over
            :data:`POOR_VIEW_PX` and :data:`POOR_VIEW_RATIO` times the views'
            median (:func:`_poor_views`): one view zoomed 1.6 times among
            nine made the focal length 9 % short at 0.43 px RMS overall
            (under the warning for a high RMS), itself at 1.2 px.

    Returns:
        ``(camera, rms_px, n_views_used)``: intrinsics with distortion
        ``[k1, k2, p1, p2, 0]`` (``source="calibrated"``), the RMS
        reprojection error over all corners used (px), and how many views
        showed at least :data:`MIN_CORNERS` non-collinear corners.

    Raises:
        BadInput: no images, images of different sizes, fewer than
            :data:`MIN_VIEWS` usable views or positions of the board
            (:func:`_positions`: photos of a board that did not move are
            one view), all views within
            :data:`MIN_MAX_TILT_DEG` of fronto-parallel, or a focal length the
            views do not pin down (fits from different starts as good as the
            best ending over :data:`FOCAL_SPREAD_MAX` apart, as views whose
            board's edges all lie parallel to the picture's do, or a relative
            1-sigma above 5%), or a result
            that fails the checks every camera file meets
            (``vision.pose.Camera.from_json``: field of view, principal
            point, distortion).
    """
    if not images:
        raise BadInput("no images given")
    names = names or [f"image {i + 1}" for i in range(len(images))]
    board = charuco_board()
    objs, imgs, unusable, used = [], [], [], []
    size = None
    # one photo at a time: only its corners are kept (20 views of a 48 MP
    # phone held 3 GB when all were read first)
    first = None
    for name, item in zip(names, images):
        im = _picture(item)
        obj, img = detect_charuco(im, board)
        here = (im.shape[1], im.shape[0])
        del im
        if len(obj) < MIN_CORNERS or _collinear(obj):
            # (a picture without the board is left out whatever its size: one
            # of another size sorted first had the good views refused as
            # differing from it, a break-test, session 59)
            unusable.append(name)
            continue
        if size is None:
            size, first = here, name
        elif here != size:
            # name the first view of another size than the first view's (a
            # break-test was told only the two sizes)
            (w0, h0), (wk, hk) = size, here
            why = ("the camera turned a quarter turn between them: take every view with the camera held the same "
                   "way" if abs(wk / hk * w0 / h0 - 1) <= 0.01 and (wk > hk) != (w0 > h0)
                   else "calibrate one camera at one resolution")
            raise BadInput(f"images differ in size: {name} is {wk}x{hk}, {first} {w0}x{h0} ({why})")
        used.append(name)
        objs.append(obj)
        imgs.append(img)
    if left_out is not None:
        left_out.extend(unusable)
    n = len(objs)
    if n < MIN_VIEWS and not unusable:
        # every photo shows the board: there are just too few of them
        raise BadInput(f"{n} view{'s' if n != 1 else ''} of the ChArUco board {'are' if n != 1 else 'is'} too few: "
                       f"calibration needs {MIN_VIEWS} or more; take {MIN_VIEWS - n} more photo"
                       f"{'s' if MIN_VIEWS - n != 1 else ''} of the ChArUco board (companion print-board) from other angles")
    if n < MIN_VIEWS:
        shown = ", ".join(unusable[:3]) + (", ..." if len(unusable) > 3 else "")
        raise BadInput(f"only {n} of {len(images)} images show the {BOARD_SQUARES[0]}x{BOARD_SQUARES[1]} "
                       f"ChArUco board with {MIN_CORNERS}+ corners (need {MIN_VIEWS}; print the "
                       f"board with companion print-board)" + (f"; no board in {shown}" if unusable else "")
                       + _other_print_hint([item for name, item in zip(names, images) if name in unusable], board))
    places = _positions(objs, imgs, size)
    if places < MIN_VIEWS:
        raise BadInput(f"the {n} views show the board in only {count(places, 'position')} (photos taken without "
                       f"moving the board or the camera count as one view): calibration needs {MIN_VIEWS} or more; "
                       f"between photos tilt the board 20-45 degrees in different directions")
    f_nominal = math.hypot(*size)
    cx, cy = (size[0] - 1) / 2, (size[1] - 1) / 2
    tilts = []
    for obj, img in zip(objs, imgs):
        H, _ = cv2.findHomography(obj[:, :2], img, 0)
        tilts.append(homography_tilt_deg(H, f_nominal, cx, cy) if H is not None else 0.0)
    if max(tilts) < MIN_MAX_TILT_DEG:
        raise BadInput(f"all {n} views face the camera nearly straight on (max tilt {max(tilts):.0f} deg); "
                       f"tilt the board 20-45 degrees in different directions")
    fits = _fits(objs, imgs, size)
    rms, K, dist, std, per_view = fits[0]
    fx, fy = float(K[0, 0]), float(K[1, 1])
    # fits as good as the best (within 1 % of its RMS) that end elsewhere:
    # the views leave the focal length free, whatever OpenCV's std says
    tied = [math.sqrt(fit[1][0, 0] * fit[1][1, 1]) for fit in fits if fit[0] <= 1.01 * rms + 1e-6]
    if max(tied) > (1 + FOCAL_SPREAD_MAX) * min(tied):
        raise BadInput(f"the {n} views do not pin down the focal length (they fit {min(tied):.0f} px as well "
                       f"as {max(tied):.0f} px); between views turn the board 20-45 degrees about its centre (its "
                       f"edges not parallel to the picture's) as well as tilting it 20-45 degrees in different "
                       f"directions")
    if max(std[0] / fx, std[1] / fy) > MAX_FOCAL_REL_STD:
        raise BadInput(f"the {n} views do not pin down the focal length "
                       f"(fx {fx:.0f} +/- {std[0]:.0f} px); add views tilted 20-45 degrees in different directions")
    d = np.zeros(5)
    flat = np.asarray(dist, np.float64).reshape(-1)
    d[:min(5, len(flat))] = flat[:5]
    cam = Camera(K, d, size, "calibrated")
    try:
        Camera.from_json(cam.to_json())    # the checks every camera file meets (vision.pose)
    except BadInput as exc:
        # (a camera file's "is camera_matrix for another resolution?" asks
        # nothing of views all of one size)
        why = str(exc).removeprefix("camera JSON: ").split("; is camera_matrix for another resolution?")[0]
        poor = _poor_views(used, per_view)
        if poor:
            # one view unlike the others (a zoom changed) can pull the fit
            # there: a re-test's one zoomed view among nine put the
            # principal point above the picture, and the line asked for
            # more views rather than naming it
            shown = ", ".join(f"{name} ({e:.2f} px)" for name, e, _ in poor[:3]) + (", ..." if len(poor) > 3 else "")
            raise BadInput(f"implausible result ({why}): {count(len(poor), 'view')} "
                           f"fit{'s' if len(poor) == 1 else ''} the others poorly (their median "
                           f"{poor[0][2]:.2f} px): {shown}; a zoom or focus changed, or the board moved or bent? "
                           f"calibrate again without {'it' if len(poor) == 1 else 'them'}") from None
        raise BadInput(f"implausible result ({why}); add views "
                       "that reach the picture's corners, tilted 20-45 degrees") from None
    if poor_fits is not None:
        poor_fits.extend(_poor_views(used, per_view))
    return cam, float(rms), n


def _fits(objs: list[np.ndarray], imgs: list[np.ndarray], size: tuple[int, int]
          ) -> list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """``cv2.calibrateCameraExtended`` (``k3`` fixed) from several starts,
    the best (lowest RMS) first: OpenCV's own initial intrinsics (Zhang's
    closed form with fx and fy apart), and square pixels with the principal
    point at the picture's centre and the focal length all the views give
    together (:func:`vision.pose.focal_from_homographies`), then 0.8 and
    1.25 times it.  Views tilted about the picture's axes (the board tipped
    towards its edges, the camera held level) tell OpenCV's start little of
    fx or fy: from 5000-6000 px for a 1000 px camera its fit ended at a 45
    times too long focal length at 0.9 px RMS (written as the camera file);
    and where the views leave the focal length free, fits from different
    starts end at different focal lengths with the same RMS
    (:data:`FOCAL_SPREAD_MAX` in :func:`calibrate`).

    Args:
        objs, imgs: per view, ``(M, 3) float32`` board points (mm) and
            ``(M, 2) float32`` their pixels.
        size: ``(w, h)`` of the pictures, px.

    Returns:
        ``[(rms_px, K (3, 3), dist (1, 5), std, per_view), ...]`` by rising
        RMS, one per start that OpenCV fitted; ``std`` the fit's 1-sigma
        uncertainties (``fx, fy, cx, cy, k1, ...``, OpenCV's order),
        ``per_view`` each view's RMS reprojection error (px).

    Raises:
        BadInput: OpenCV failed from every start (the line gives its reason).
    """
    flags = cv2.CALIB_FIX_K3
    crit = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 100, 1e-9)
    cx, cy = (size[0] - 1) / 2, (size[1] - 1) / 2
    starts: list[np.ndarray | None] = [None]
    Hs = [cv2.findHomography(obj[:, :2], img, 0)[0] for obj, img in zip(objs, imgs)]
    f0 = focal_from_homographies([H for H in Hs if H is not None], cx, cy)
    if f0 is not None and math.isfinite(f0):
        starts += [np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]], np.float64) for f in (f0, 0.8 * f0, 1.25 * f0)]
    fits, why = [], ""
    for K0 in starts:
        try:
            rms, K, dist, _, _, std, _, per_view = cv2.calibrateCameraExtended(
                objs, imgs, size, None if K0 is None else K0.copy(), None if K0 is None else np.zeros(5),
                flags=flags | (0 if K0 is None else cv2.CALIB_USE_INTRINSIC_GUESS), criteria=crit)
        except cv2.error as exc:
            why = str(exc).strip().splitlines()[-1][:120]
            continue
        if math.isfinite(rms) and np.all(np.isfinite(K)) and K[0, 0] > 0 and K[1, 1] > 0:
            fits.append((float(rms), K, dist, np.asarray(std, np.float64).reshape(-1),
                         np.asarray(per_view, np.float64).reshape(-1)))
    if not fits:
        raise BadInput(f"OpenCV could not calibrate from these {len(objs)} views ({why or 'no finite fit'})")
    return sorted(fits, key=lambda fit: fit[0])


def board_hint(image_bgr: np.ndarray) -> str:
    """``"; the picture shows the ChArUco calibration board ..."`` when the
    board (:func:`detect_charuco`, :data:`MIN_CORNERS` or more corners) is
    in a picture where the mat was not found (the two printed targets mixed
    up), else ""."""
    if len(detect_charuco(image_bgr)[0]) < MIN_CORNERS:
        return ""
    return ("; the picture shows the ChArUco calibration board (companion print-board), not the mat: "
            "photograph the mat (companion print-mat) with the tiles on it")


def _picture(item) -> np.ndarray:
    """A photo given to :func:`calibrate`: the array, or what the function
    that reads it returns."""
    return item() if callable(item) else item


def _other_print_hint(images: list, board: "cv2.aruco.CharucoBoard") -> str:
    """Why ``images`` (views without the board) may not show it, when half
    or more of them agree: ``"; the pictures look mirrored ..."`` when they
    show it once flipped left to right (a front camera or a video call
    mirrors the picture, and ArUco markers do not read mirrored), or
    ``"; they show the mat ..."`` when 4 or more of the mat's markers read
    in them (``vision.markers.detect_markers``: photos of the table, not of
    the board); else ""."""
    from vision.markers import detect_markers
    from vision.mat import MatSpec

    if not images:
        return ""
    flipped = sum(len(detect_charuco(cv2.flip(_picture(im), 1), board)[0]) >= MIN_CORNERS for im in images)
    if 2 * flipped >= len(images):
        return (f"; the pictures look mirrored ({flipped} of {len(images)} show the board once flipped left to "
                "right, as a front camera or a video call shows it): turn off the camera's mirroring, or flip "
                "the pictures")
    spec = MatSpec.default()
    mats = sum(len(detect_markers(_picture(im), spec)[0]) >= 4 for im in images)
    if 2 * mats >= len(images):
        return (f"; {mats} of {len(images)} show the mat (its markers read), not the calibration board: "
                "photograph the board (companion print-board) on its own, tilted 20-45 degrees")
    return ""


def _poor_views(names: list[str], per_view: np.ndarray) -> list[tuple[str, float, float]]:
    """The views that fit the calibration much worse than the others:
    ``(name, rms_px, median_rms_px)`` for each whose RMS is over
    :data:`POOR_VIEW_PX` and over :data:`POOR_VIEW_RATIO` times the median
    of all views' RMS (sharp views of one camera lie within 3.2 times the
    median, at 0.03-0.13 px), worst first."""
    med = float(np.median(per_view))
    bad = [(name, float(e), med) for name, e in zip(names, per_view)
           if e > POOR_VIEW_PX and e > POOR_VIEW_RATIO * med]
    return sorted(bad, key=lambda b: -b[1])


def _positions(objs: list[np.ndarray], imgs: list[np.ndarray], size: tuple[int, int]) -> int:
    """How many different positions of the board the views show: a view
    whose board corners shared with an earlier position's first view
    (:data:`MIN_CORNERS` or more, matched by their place on the board) all
    lie within :data:`SAME_POSITION_SHARE` of the picture's diagonal of
    that view's is in that position.

    Args:
        objs, imgs: per view, ``(M, 3)`` board points (mm) and ``(M, 2)`` px.
        size: ``(w, h)`` of the pictures, px.
    """
    tol = SAME_POSITION_SHARE * math.hypot(*size)
    firsts: list[dict] = []
    for obj, img in zip(objs, imgs):
        corners = {(round(float(p[0]), 1), round(float(p[1]), 1)): np.asarray(q, np.float64)
                   for p, q in zip(obj, img)}
        for first in firsts:
            shared = first.keys() & corners.keys()
            if len(shared) >= MIN_CORNERS and max(float(np.hypot(*(first[k] - corners[k]))) for k in shared) <= tol:
                break
        else:
            firsts.append(corners)
    return len(firsts)


def _collinear(obj: np.ndarray) -> bool:
    """True when the board points lie on (nearly) one line."""
    pts = obj[:, :2].astype(np.float64)
    pts = pts - pts.mean(axis=0)
    s = np.linalg.svd(pts, compute_uv=False)
    return len(s) < 2 or s[1] < 1e-6 * max(s[0], 1e-12) or s[1] < 0.5 * SQUARE_MM
