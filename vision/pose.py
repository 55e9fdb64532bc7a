"""Camera model, pose of the mat, and projection of slots at their layer height.

The pose maps the mat frame (mm; X right, Y down, Z = -height; see
:mod:`vision.mat`) to the camera frame: ``x_cam = R(rvec) X + tvec``, and
pixels follow OpenCV's pinhole model with distortion ``[k1, k2, p1, p2, k3]``
(OpenCV docs, "Camera Calibration and 3D Reconstruction").

Pose: the visible mat markers' corners are matched to their printed positions,
outliers rejected with a RANSAC homography, the pose found with
``cv2.SOLVEPNP_IPPE`` (Collins & Bartoli, "Infinitesimal Plane-based Pose
Estimation", IJCV 2014) and refined with ``cv2.solvePnPRefineLM``.

Without a calibrated camera, the focal length comes from the mat's homography
with Zhang's two constraints on the image of the absolute conic, assuming
square pixels, no skew and the principal point at the image centre (Zhang,
"A flexible new technique for camera calibration", PAMI 2000, sec. 2.3), then
refined jointly with the pose.  A fronto-parallel view carries no focal
information: below :data:`MIN_TILT_FOR_FOCAL_DEG` of tilt a 60-degree diagonal
field of view is assumed, which places the tops of stacked tiles only as well
as that guess fits the real lens; calibrate (``companion calibrate``) for an
overhead camera, or give :func:`refine_with_points` a few located points off
the mat (tile-top corners) to fit ``f``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

import cv2
import numpy as np

from companion.errors import BadInput, CameraMisfit, MatNotFound
from vision.mat import MIN_MARKERS, MatSpec, slot_face_corners_mm
from vision.markers import as_gray, detect_markers_by_dictionary

FALLBACK_DIAGONAL_FOV_DEG = 60.0
MIN_TILT_FOR_FOCAL_DEG = 4.0  # below this the homography's focal estimate is noise
PLAUSIBLE_DIAGONAL_FOV_DEG = (10.0, 140.0)
#: RMS over the marker corners (px) above which the "mat" is not believed, for
#: a 1280 x 720 picture; a larger one is allowed :data:`MAX_REPROJECTION_SHARE`
#: of its diagonal (:func:`max_reprojection_px`)
MAX_REPROJECTION_PX = 6.0
MAX_REPROJECTION_SHARE = 0.004
#: a camera file the mat's markers fit worse than this (RMS px), or than
#: this share of the picture's diagonal where that is more, is suspect: it
#: is refused where guessed intrinsics fit the same markers
#: :data:`CAMERA_FILE_MISFIT_RATIO` times better (:func:`estimate_pose`)
CAMERA_FILE_MISFIT_PX = 2.5
CAMERA_FILE_MISFIT_SHARE = 0.001
#: how many times better guessed intrinsics must fit the markers than a
#: suspect camera file's for the file to be refused.  A true file fits at
#: least as well as the guess (it models the lens's distortion, the guess
#: none); a break-test's files for another lens (k1 of -0.4 to +0.5, the
#: demo picture) fitted 2.6-5.9 px where the guess fitted 0.4 px
CAMERA_FILE_MISFIT_RATIO = 3.0
_DIST_LENGTHS = (4, 5, 8, 12, 14)


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Camera:
    """Pinhole camera with OpenCV distortion.

    Attributes:
        K: ``(3, 3) float64`` camera matrix ``[[fx, 0, cx], [0, fy, cy], [0, 0, 1]]`` (px).
        dist: ``(5,) float64`` ``[k1, k2, p1, p2, k3]`` (OpenCV's longer
            forms of 8, 12 or 14 coefficients are kept as given).
        image_size: ``(w, h)`` in px of the images these intrinsics belong to.
        source: how K was obtained: ``"calibrated"`` (file / calibration),
            ``"estimated"`` (from the mat's homography), ``"assumed"``
            (60-degree diagonal field of view), ``"searched"`` (a nearly
            overhead view's assumed focal length replaced by the one under
            which the raised tiles' faces line up best,
            ``vision.reconstruct.focal_from_faces``) or ``"fitted"`` (to
            points off the mat, :func:`refine_with_points`).
        file: the camera file these intrinsics were read from, for
            messages (None when not read from a file).
    """

    K: np.ndarray
    dist: np.ndarray
    image_size: tuple[int, int]
    source: str = "calibrated"
    file: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "K", _ro(np.asarray(self.K, np.float64).reshape(3, 3)))
        object.__setattr__(self, "dist", _ro(np.asarray(self.dist, np.float64).reshape(-1)))
        object.__setattr__(self, "image_size", (int(self.image_size[0]), int(self.image_size[1])))

    def __repr__(self) -> str:
        k = self.K
        return (f"Camera(fx={k[0, 0]:.1f}, fy={k[1, 1]:.1f}, cx={k[0, 2]:.1f}, cy={k[1, 2]:.1f}, "
                f"dist={np.round(self.dist, 4).tolist()}, image_size={self.image_size}, source={self.source!r})")

    def to_json(self) -> dict:
        """The contract's camera JSON (``camera_matrix``, ``dist_coeffs``, ``image_size``)."""
        return {"camera_matrix": [[float(v) for v in row] for row in self.K],
                "dist_coeffs": [float(v) for v in self.dist],
                "image_size": [int(self.image_size[0]), int(self.image_size[1])]}

    @classmethod
    def from_json(cls, obj) -> "Camera":
        """Parse the contract's camera JSON (already decoded).

        Raises:
            BadInput: missing or malformed ``camera_matrix`` (3 x 3, positive
                focal lengths, last row ``[0, 0, 1]``), ``dist_coeffs`` (4, 5,
                8, 12 or 14 numbers; 4 are padded with k3 = 0; missing or
                null means no distortion) or ``image_size`` (two positive
                integers).
        """
        if not isinstance(obj, dict):
            raise BadInput("camera JSON: expected an object")
        km = obj.get("camera_matrix")
        try:
            K = np.array(km, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            K = None
        if K is None or K.shape != (3, 3) or not np.all(np.isfinite(K)) or _has_non_number(km):
            raise BadInput(f"camera JSON: camera_matrix must be 3 x 3 numbers, got {_short(km)}")
        if K[0, 0] <= 0 or K[1, 1] <= 0 or not np.allclose(K[2], (0, 0, 1)) or K[1, 0] != 0:
            raise BadInput("camera JSON: camera_matrix must be [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0")
        if abs(K[0, 1]) > 1e-6 * K[0, 0]:
            raise BadInput(f"camera JSON: camera_matrix has skew {K[0, 1]:.4g}; OpenCV's camera model has none "
                           "(the entry after fx must be 0)")
        dm = obj.get("dist_coeffs")
        if dm is None:          # missing, or null: no distortion
            dm = [0, 0, 0, 0, 0]
        try:
            d = np.array(dm, dtype=np.float64).reshape(-1) if isinstance(dm, list) and not _has_non_number(dm) else None
        except (TypeError, ValueError, OverflowError):
            d = None
        if d is None or len(d) not in _DIST_LENGTHS or not np.all(np.isfinite(d)):
            raise BadInput("camera JSON: dist_coeffs must be a list of 4, 5, 8, 12 or 14 numbers (OpenCV's "
                           f"[k1, k2, p1, p2, k3, ...]), got {_short(dm)}")
        if len(d) == 4:
            d = np.append(d, 0.0)
        size = obj.get("image_size")
        if isinstance(size, list):
            # whole numbers written as floats (numpy's tolist() of a float
            # array: [1280.0, 720.0]) are whole numbers; 1280.5 is not
            size = [int(v) if isinstance(v, float) and math.isfinite(v) and v == int(v) else v for v in size]
        if (not isinstance(size, list) or len(size) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_IMAGE_SIDE for v in size)):
            raise BadInput(f"camera JSON: image_size must be [w, h] integers from 1 to {MAX_IMAGE_SIDE}, "
                           f"got {_short(size)}")
        _check_intrinsics(K, (size[0], size[1]))
        _check_distortion(K, d, (size[0], size[1]))
        return cls(K, d, (size[0], size[1]), "calibrated")

    @classmethod
    def guess(cls, image_size: tuple[int, int], homography: np.ndarray | None = None) -> "Camera":
        """Intrinsics without calibration: no distortion, square pixels, the
        principal point at the image centre, and the focal length from the
        mat-plane ``homography`` (mat mm ``(X, Y, 1)`` -> image px) with Zhang's
        constraints (module docstring).  Falls back to a 60-degree diagonal
        field of view (``f = diag / (2 tan 30deg)``, ``source="assumed"``) when
        no homography is given, the view is within
        :data:`MIN_TILT_FOR_FOCAL_DEG` of fronto-parallel (at the assumed focal
        length, or at the estimated one: both must see the view as tilted
        enough), or the estimate is implausible (diagonal field of view
        outside 10-140 degrees).

        Args:
            image_size: ``(w, h)`` px.
            homography: ``(3, 3)`` mat mm -> px, or None.
        """
        w, h = int(image_size[0]), int(image_size[1])
        cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
        diag = math.hypot(w, h)
        f_fallback = diag / (2 * math.tan(math.radians(FALLBACK_DIAGONAL_FOV_DEG) / 2))
        f, source = f_fallback, "assumed"
        if homography is not None:
            H = np.asarray(homography, np.float64).reshape(3, 3)
            if homography_tilt_deg(H, f_fallback, cx, cy) >= MIN_TILT_FOR_FOCAL_DEG:
                est = _focal_from_homography(H, cx, cy)
                lo, hi = (diag / (2 * math.tan(math.radians(a) / 2)) for a in PLAUSIBLE_DIAGONAL_FOV_DEG[::-1])
                # the estimate must itself see the view as tilted enough: from a view
                # of about 2 degrees, noise in the marker corners can pass the first
                # check and then give a focal length 30-40 % short
                if (est is not None and lo <= est <= hi
                        and homography_tilt_deg(H, est, cx, cy) >= MIN_TILT_FOR_FOCAL_DEG):
                    f, source = est, "estimated"
        K = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]], np.float64)
        return cls(K, np.zeros(5), (w, h), source)

    def scaled_to(self, image_size: tuple[int, int]) -> "Camera":
        """These intrinsics for images of another resolution with the same
        aspect ratio (the sensor area is the same; K scales, distortion does not).

        Raises:
            BadInput: the aspect ratio differs by more than 1%.
        """
        w, h = int(image_size[0]), int(image_size[1])
        if (w, h) == self.image_size:
            return self
        sx, sy = w / self.image_size[0], h / self.image_size[1]
        if abs(sx / sy - 1) > 0.01:
            raise BadInput(f"{self.named} is for {self.image_size[0]}x{self.image_size[1]} images and this "
                           f"picture is {w}x{h}: another aspect ratio, so its intrinsics cannot be scaled to it "
                           "(calibrate at this resolution, or leave out --camera)")
        K = self.K.copy()
        K[0, :] *= sx
        K[1, :] *= sy
        # pixel-centre convention: u' = s (u + 0.5) - 0.5
        K[0, 2] += 0.5 * sx - 0.5
        K[1, 2] += 0.5 * sy - 0.5
        return Camera(K, self.dist, (w, h), self.source, self.file)

    def turned_to(self, image_size: tuple[int, int]) -> tuple["Camera", "Camera"]:
        """These intrinsics for a picture taken with the camera turned a
        quarter turn (a phone calibrated held one way and used the other:
        ``image_size`` is this camera's with width and height swapped, up to
        a common scale): ``(turned clockwise, turned counter-clockwise)``,
        scaled to ``image_size``.  The focal lengths swap; the principal
        point turns with the picture; the radial distortion stays; the
        tangential terms turn with it (clockwise, normalised x' = -y, y' = x:
        p1' = p2, p2' = -p1; counter-clockwise p1' = -p2, p2' = p1; OpenCV's
        distortion model, "Camera Calibration and 3D Reconstruction").

        Raises:
            BadInput: ``image_size`` is not a turned picture of this camera's
                aspect ratio, or the camera has more than the 5 distortion
                coefficients k1, k2, p1, p2, k3.
        """
        w, h = int(image_size[0]), int(image_size[1])
        W, H = self.image_size
        if abs((w / H) / (h / W) - 1) > 0.01 or len(np.ravel(self.dist)) > 5:
            raise BadInput(f"{self.named} is for {W}x{H} images and this picture is {w}x{h}: another aspect "
                           "ratio, so its intrinsics cannot be scaled to it (calibrate at this resolution, or "
                           "leave out --camera)")
        fx, fy, cx, cy = self.K[0, 0], self.K[1, 1], self.K[0, 2], self.K[1, 2]
        d = np.zeros(5)
        d[:len(np.ravel(self.dist))] = np.ravel(self.dist)
        k1, k2, p1, p2, k3 = d
        out = []
        for ccx, ccy, q1, q2 in ((H - 1 - cy, cx, p2, -p1), (cy, W - 1 - cx, -p2, p1)):
            K = np.array([[fy, 0.0, ccx], [0.0, fx, ccy], [0.0, 0.0, 1.0]])
            turned = Camera(K, np.array([k1, k2, q1, q2, k3]), (H, W), self.source, self.file)
            out.append(turned.scaled_to((w, h)))
        return out[0], out[1]

    @property
    def named(self) -> str:
        """``"the camera file NAME"`` (or ``"the camera file"``), for messages."""
        return f"the camera file {self.file}" if self.file else "the camera file"


#: the largest image side a camera file may name, px
MAX_IMAGE_SIDE = 100_000
#: the distortion may scale a point's distance from the principal point by
#: at most this factor either way, anywhere in the picture
MAX_DISTORTION_FACTOR = 4.0
#: a calibrated camera's diagonal field of view must lie in this range,
#: degrees: OpenCV's pinhole model cannot describe 180 degrees or more, and
#: under 1 degree the mat could not fill a picture from a table's height.
CALIBRATED_DIAGONAL_FOV_DEG = (1.0, 170.0)


def _check_intrinsics(K: np.ndarray, image_size: tuple[int, int]) -> None:
    """Refuse intrinsics that cannot belong to ``image_size`` images: a
    diagonal field of view outside :data:`CALIBRATED_DIAGONAL_FOV_DEG`, focal
    lengths more than twice apart, or the principal point outside the image
    (anywhere inside it is accepted: a cropped photo's true principal point
    lies far from its centre, and ``calibrate`` finds it there; a matrix
    written for a larger resolution puts it outside).

    Raises:
        BadInput: one line naming the value and the likely cause.
    """
    w, h = image_size
    fx, fy, cx, cy = float(K[0, 0]), float(K[1, 1]), float(K[0, 2]), float(K[1, 2])
    f = math.sqrt(fx) * math.sqrt(fy)          # (fx * fy can underflow or overflow)
    fov = math.degrees(2 * math.atan2(math.hypot(w, h) / 2, f))
    lo, hi = CALIBRATED_DIAGONAL_FOV_DEG
    if not lo <= fov <= hi:
        raise BadInput(f"camera JSON: focal length {f:.4g} px gives a {fov:.1f}-degree diagonal "
                       f"field of view on {w}x{h} images (allowed {lo:g}-{hi:g}); is camera_matrix in px of "
                       f"image_size?")
    if not 0.5 <= fx / fy <= 2.0:
        raise BadInput(f"camera JSON: fx {fx:.4g} and fy {fy:.4g} px are more than twice apart")
    # pixel centres at integer coordinates: the image spans [-0.5, w - 0.5] x [-0.5, h - 0.5]
    if not (-0.5 <= cx <= w - 0.5 and -0.5 <= cy <= h - 0.5):
        raise BadInput(f"camera JSON: principal point ({cx:.4g}, {cy:.4g}) px lies outside the {w}x{h} image; "
                       "is camera_matrix for another resolution?")


def _check_distortion(K: np.ndarray, dist: np.ndarray, image_size: tuple[int, int]) -> None:
    """Refuse distortion coefficients that fold or wildly stretch the picture:
    along the rays towards the image corners (pinhole directions, 32 steps
    to the corner's pinhole direction and on, up to
    :data:`MAX_DISTORTION_FACTOR` times as far, until the distorted ray
    reaches the corner: a barrel lens sees the corner along a ray beyond
    its pinhole direction), the distorted distance from the principal point
    must grow steadily and stay within :data:`MAX_DISTORTION_FACTOR` of the
    undistorted one (``cv2.projectPoints``; OpenCV's camera model, calib3d
    docs).  Coefficients whose rays turn back before reaching the corners
    (``[-0.3, 0.12, 0, 0, -0.025]`` at 650 px on 1280 x 720: no ray lands
    beyond 632 px of the 734 px to the corners) describe no lens.

    Raises:
        BadInput: one line giving the factor found.
    """
    import cv2

    if not np.any(dist):
        return
    w, h = image_size
    fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    steps = 32                                     # per pinhole corner direction
    t = np.arange(1, steps * int(MAX_DISTORTION_FACTOR) + 1) / steps
    corners = ((0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1))
    rays = []
    for u, v in corners:
        x, y = (u - cx) / fx, (v - cy) / fy
        rays.append(np.column_stack([t * x, t * y, np.ones_like(t)]))
    pts = np.concatenate(rays)
    with np.errstate(all="ignore"):
        img, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), K, dist)
        img = img.reshape(-1, 2)
        ideal = pts[:, :2] * [fx, fy] + [cx, cy]
        r_img = np.hypot(img[:, 0] - cx, img[:, 1] - cy).reshape(4, -1)
        r_ideal = np.hypot(ideal[:, 0] - cx, ideal[:, 1] - cy).reshape(4, -1)
        factor = r_img / r_ideal
        r_corner = np.array([math.hypot(u - cx, v - cy) for u, v in corners])
        reached = r_img >= r_corner[:, None]
    # each ray up to its pinhole corner direction (t = 1), or on to where it reaches the corner
    first = np.where(reached.any(axis=1), reached.argmax(axis=1), len(t) - 1)
    upto = np.maximum(first, steps - 1)
    used = np.arange(len(t))[None, :] <= upto[:, None]
    finite = bool(np.all(np.isfinite(factor[used])))
    with np.errstate(all="ignore"):
        worst = float(np.max(np.abs(np.log(np.where(used & finite & (factor > 0), factor,
                                                     np.where(used, np.inf, 1.0))))))
        grows = np.all((np.diff(r_img, axis=1) > 0) | ~used[:, 1:])
    if finite and not grows:
        shown = "fold the picture back on itself"
    elif worst > math.log(MAX_DISTORTION_FACTOR):
        shown = f"scale distances from the centre by up to {math.exp(min(worst, 700)):.3g}x"
    elif not reached.any(axis=1).all():
        shown = "leave the picture's corners beyond every ray"
    else:
        return
    raise BadInput(f"camera JSON: dist_coeffs {shown} within the {w}x{h} image (allowed at most "
                   f"{MAX_DISTORTION_FACTOR:g}x either way, growing outwards); was the calibration sound?")


def _short(v, limit: int = 60) -> str:
    """``v`` as JSON text (``true``, not ``True``; ``nothing`` when missing)
    cut to ``limit`` characters, for one-line error messages."""
    from companion.jsontext import show
    return show(v, limit)


def _has_non_number(v) -> bool:
    """True when ``v`` (nested lists) holds anything but int and float
    numbers: a bool, a string ("1000"), None or an object, which
    ``np.array(..., float64)`` would otherwise read or refuse obscurely."""
    if isinstance(v, list):
        return any(_has_non_number(x) for x in v)
    return isinstance(v, bool) or not isinstance(v, (int, float))


def _focal_from_homography(H: np.ndarray, cx: float, cy: float) -> float | None:
    """Least-squares ``f`` from Zhang's constraints ``h1' w h2 = 0`` and
    ``h1' w h1 = h2' w h2`` with ``w = diag(1/f^2, 1/f^2, 1)`` after moving the
    principal point to the origin; None when ``1/f^2`` comes out non-positive."""
    return focal_from_homographies([H], cx, cy)


def focal_from_homographies(Hs, cx: float, cy: float) -> float | None:
    """One focal length ``f`` (px) for several views of planes by one camera
    with square pixels and its principal point at ``(cx, cy)``: Zhang's two
    constraints of every plane-to-image homography (:func:`_focal_from_homography`)
    solved together by least squares (a view tilted about an image axis tells
    only fx or fy apart; together the views tell ``f``).

    Args:
        Hs: ``(3, 3)`` plane-to-image homographies.
        cx, cy: principal point, px.

    Returns:
        ``f`` in px, or None when ``1/f^2`` comes out non-positive (views
        straight on, or no homography).
    """
    a, b = _zhang_rows(Hs, cx, cy)
    den = float(a @ a)
    if den <= 0:
        return None
    inv_f2 = -float(a @ b) / den
    if not inv_f2 > 0:
        return None
    return 1.0 / math.sqrt(inv_f2)


def _zhang_rows(Hs, cx: float, cy: float) -> tuple[np.ndarray, np.ndarray]:
    """Zhang's two constraints of each homography as ``a * (1 / f^2) + b =
    0`` (:func:`focal_from_homographies`): ``(a, b)``, each ``(2 n,)``
    float64, every homography scaled to unit norm after moving the
    principal point to the origin."""
    T = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], np.float64)
    a_rows, b_rows = [], []
    for H in Hs:
        Hc = T @ np.asarray(H, np.float64).reshape(3, 3)
        Hc = Hc / np.linalg.norm(Hc)
        (h11, h12), (h21, h22), (h31, h32) = Hc[0, :2], Hc[1, :2], Hc[2, :2]
        a_rows += [h11 * h12 + h21 * h22, h11 ** 2 + h21 ** 2 - h12 ** 2 - h22 ** 2]
        b_rows += [h31 * h32, h31 ** 2 - h32 ** 2]
    return np.array(a_rows, np.float64), np.array(b_rows, np.float64)


#: :func:`centred_camera_misfit` above this: the markers fit no camera
#: centred on the picture with a lens that keeps lines straight.
#: Development photos 1000-1199 (session 59) tilted 15 degrees or more (123
#: of 199): at most 0.075 (tilted 10-15 degrees, one of 30 reached 0.23);
#: crops of photos 1000-1079 that keep the mat, their centre moved 10 % of
#: the diagonal or more, tilted 15 degrees or more: over 0.3 in 18 of 21 (a
#: break-test's crop of a photo's right 900 px, read with 7 confident
#: mistakes: 0.79, but seen 9.9 degrees from overhead; a phone's screenshot
#: of a photo: 0.41).  A barrel lens without a camera file shows too: k1 of
#: -0.15 0.15, of -0.3 0.33 (two tiles misread).
CENTRED_MISFIT_MAX = 0.3
#: :func:`centred_camera_misfit` is asked only of views tilted this much or
#: more, resting on this many markers or more: a break-test (session 59)
#: found a whole photo tilted 11 degrees at 0.33, and small mats on 4
#: markers at 0.38-0.95, whose homographies hold too little
CENTRED_MISFIT_MIN_TILT_DEG = 15.0
CENTRED_MISFIT_MIN_MARKERS = 6


def centred_camera_misfit(pose: "MatPose") -> float | None:
    """How badly the mat's markers fit a camera whose principal point is the
    picture's centre: the relative residual of Zhang's two constraints
    (:func:`focal_from_homographies`) on the markers' plane-to-image
    homography, ``|a x + b| / |b|`` at the least-squares ``x = 1 / f^2``.

    With square pixels and no skew one homography gives two equations for
    one unknown focal length, and they agree when the principal point is
    where it is assumed.  A cropped photo, or a screenshot of one, moves the
    camera's centre off the picture's, and the two disagree; so do views
    nearly straight down (their equations hold little), so call it only
    for views tilted well away from overhead (Z. Zhang, "A flexible new
    technique for camera calibration", IEEE TPAMI 22(11), 2000, section
    2.3).

    Args:
        pose: a :class:`MatPose` with its marker corners (``object_points``,
            ``image_points``) and its camera's ``image_size``.

    Returns:
        The residual (0 for a perfect fit; see :data:`CENTRED_MISFIT_MAX`),
        or None without 4 corners or a homography.
    """
    obj, img = pose.object_points, pose.image_points
    if len(obj) < 4:
        return None
    H, _ = cv2.findHomography(np.asarray(obj[:, :2], np.float64), np.asarray(img, np.float64), 0)
    if H is None:
        return None
    w, h = pose.camera.image_size
    a, b = _zhang_rows([H], (w - 1) / 2, (h - 1) / 2)
    if not float(a @ a) > 0 or not float(b @ b) > 0:
        return None
    x = -float(a @ b) / float(a @ a)
    return float(np.linalg.norm(a * x + b) / np.linalg.norm(b))


def markers_focal_px(pose: "MatPose") -> float | None:
    """The focal length (px) the pose's marker corners give on their own:
    their homography, undistorted with the pose's camera, through Zhang's
    constraints with that camera's principal point
    (:func:`_focal_from_homography`).  None with fewer than 4 corners or no
    positive solution.  How far it can be trusted depends on the view
    (:data:`FOCAL_CHECK_MIN_TILT_DEG`, :data:`FOCAL_CHECK_MIN_MARKERS`)."""
    obj = np.asarray(pose.object_points, np.float64).reshape(-1, 3)[:, :2]
    img = np.asarray(pose.image_points, np.float64).reshape(-1, 1, 2)
    if len(obj) < 4 or len(obj) != len(img):
        return None
    K = pose.camera.K
    und = cv2.undistortPoints(img, K, pose.camera.dist, P=K).reshape(-1, 2)
    H, _ = cv2.findHomography(obj, und, 0)
    if H is None:
        return None
    return _focal_from_homography(H, float(K[0, 2]), float(K[1, 2]))


#: the markers' own focal length (:func:`markers_focal_px`) is compared
#: with a camera file's only from views tilted this much and resting on this
#: many markers: with the true camera, 80 of the bench's 100 even photos
#: qualify and all give it within 3.3 %, while views within 5 degrees of
#: overhead were up to 95 % off, and views on 4-5 markers up to 24 %
FOCAL_CHECK_MIN_TILT_DEG = 10.0
FOCAL_CHECK_MIN_MARKERS = 8


def homography_tilt_deg(H: np.ndarray, f: float, cx: float, cy: float) -> float:
    """Angle (degrees) between the optical axis and a plane's normal implied by the
    plane-to-image homography ``H`` (3, 3) for focal length ``f`` and principal
    point ``(cx, cy)`` px (0 = seen straight on)."""
    Kinv = np.array([[1 / f, 0, -cx / f], [0, 1 / f, -cy / f], [0, 0, 1]], np.float64)
    m = Kinv @ H
    r1 = m[:, 0] / np.linalg.norm(m[:, 0])
    r2 = m[:, 1] / np.linalg.norm(m[:, 1])
    r3 = np.cross(r1, r2)
    n = np.linalg.norm(r3)
    if n == 0:
        return 90.0
    return math.degrees(math.acos(min(1.0, abs(r3[2]) / n)))


@dataclass(frozen=True, eq=False)
class MatPose:
    """Where the mat lies in front of the camera.

    Attributes:
        rvec: ``(3,) float64`` Rodrigues rotation, mat frame -> camera frame.
        tvec: ``(3,) float64`` translation in mm (mat origin in camera coordinates).
        camera: the intrinsics used (given, or guessed: see ``camera.source``).
        reprojection_px: RMS reprojection error of the marker corners used, px.
        n_markers: number of markers the pose rests on.
        marker_ids: their ids, ascending.
        object_points: ``(M, 3) float64`` mm, the marker corners used (Z = 0).
        image_points: ``(M, 2) float64`` px, where they were detected.
        other_mat: a second mat showed in the picture (a marker id read
            twice, :func:`vision.markers.nearer_mat`); this is the pose of
            the one nearer the picture's centre.
    """

    rvec: np.ndarray
    tvec: np.ndarray
    camera: Camera
    reprojection_px: float
    n_markers: int
    marker_ids: tuple[int, ...] = ()
    object_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    image_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    other_mat: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "rvec", _ro(np.asarray(self.rvec, np.float64).reshape(3)))
        object.__setattr__(self, "tvec", _ro(np.asarray(self.tvec, np.float64).reshape(3)))
        object.__setattr__(self, "object_points", _ro(np.asarray(self.object_points, np.float64).reshape(-1, 3)))
        object.__setattr__(self, "image_points", _ro(np.asarray(self.image_points, np.float64).reshape(-1, 2)))

    @property
    def rotation(self) -> np.ndarray:
        """``(3, 3) float64`` rotation matrix of :attr:`rvec`."""
        return cv2.Rodrigues(self.rvec)[0]

    @property
    def camera_centre_mm(self) -> np.ndarray:
        """``(3,) float64`` camera centre in the mat frame (Z < 0: above the mat)."""
        return -self.rotation.T @ self.tvec

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and the mat's normal, degrees (0 = straight down)."""
        return math.degrees(math.acos(min(1.0, abs(float(self.rotation[2, 2])))))

    def to_json(self) -> dict:
        """Diagnostic JSON: pose, tilt, camera, error, markers."""
        return {"rvec": [float(v) for v in self.rvec], "tvec_mm": [float(v) for v in self.tvec],
                "camera_centre_mm": [round(float(v), 2) for v in self.camera_centre_mm],
                "tilt_deg": round(self.tilt_deg, 2), "reprojection_px": round(self.reprojection_px, 4),
                "n_markers": self.n_markers, "marker_ids": list(self.marker_ids),
                "camera": self.camera.to_json(), "focal_source": self.camera.source}


class _Matches(list):
    """:func:`_correspondences`' list, with ``other_mat`` (a second mat
    was left out by the marker search, :class:`vision.markers.Found`)."""

    other_mat: bool = False


def _correspondences(image: np.ndarray, spec: MatSpec):
    """Detected markers matched to the spec: list of (id, obj (4,3) mm, img (4,2) px)."""
    objs = spec.marker_object_points()
    found = detect_markers_by_dictionary(image, spec)
    out = _Matches()
    out.other_mat = bool(getattr(found, "other_mat", False))
    for name, (ids, corners) in found.items():
        for i, c in zip(ids, corners):
            out.append((int(i), objs[(name, int(i))], c.astype(np.float64)))
    return out


#: iterations and tolerance (px, normalised) of :func:`_undistort`: OpenCV's
#: ``undistortPoints`` stops after 5, which far from the centre of a strong
#: barrel lens (k1 about -0.5, a 100-degree view) left marker corners 170-450
#: px off, and a true camera file threw good markers out (a break-test,
#: session 56)
UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-9)


def _undistort(pts: np.ndarray, cam: Camera | None) -> np.ndarray:
    """``(N, 2)`` image px as a pinhole camera with ``cam.K`` would see them
    (``cv2.undistortPoints`` iterated to convergence, :data:`UNDISTORT_CRITERIA`)."""
    if cam is None or not np.any(cam.dist):
        return pts
    return cv2.undistortPoints(np.asarray(pts, np.float64).reshape(-1, 1, 2), cam.K, cam.dist, P=cam.K,
                               criteria=UNDISTORT_CRITERIA).reshape(-1, 2)


def max_reprojection_px(image_size: tuple[int, int]) -> float:
    """The largest RMS reprojection error of the marker corners (px) at which
    the mat is believed in a ``(w, h)`` px picture: :data:`MAX_REPROJECTION_PX`,
    or :data:`MAX_REPROJECTION_SHARE` of the diagonal where that is more.  The
    errors an uncalibrated lens's distortion and a soft picture's corners
    leave grow with the picture's size in px (an 8K picture upscaled from a
    sharp 1280 x 720 one shows 6.3 px; a 1280 x 720 one at most about 1.5
    px), as :func:`_reject_outliers`' RANSAC threshold does."""
    return max(MAX_REPROJECTION_PX, MAX_REPROJECTION_SHARE * math.hypot(*image_size))


def _reject_outliers(matches, cam: Camera | None, image_size):
    """Keep the markers consistent with one plane homography (RANSAC), one
    detection per id."""
    if len(matches) < 2:
        return matches
    if len({m[0] for m in matches}) < len(matches):
        # an id read twice: two mats in the picture, the one nearer the
        # centre is read (vision.markers.nearer_mat)
        from vision.markers import nearer_mat
        kept, _ = nearer_mat([m[0] for m in matches], np.stack([m[2] for m in matches]),
                             {m[0]: m[1] for m in matches}, image_size)
        matches = [matches[k] for k in kept]
        if len(matches) < 2:
            return matches
    obj = np.concatenate([m[1][:, :2] for m in matches])
    img = _undistort(np.concatenate([m[2] for m in matches]), cam)
    thr = max(4.0, 0.006 * math.hypot(*image_size))
    H, mask = cv2.findHomography(obj, img, cv2.RANSAC, thr, maxIters=2000, confidence=0.999)
    if H is None:
        return []
    mask = mask.reshape(-1, 4).all(axis=1)
    proj = cv2.perspectiveTransform(obj.reshape(-1, 1, 2), H).reshape(-1, 4, 2)
    resid = np.linalg.norm(proj - img.reshape(-1, 4, 2), axis=2).mean(axis=1)
    best: dict[int, int] = {}
    for k, m in enumerate(matches):
        if mask[k] and (m[0] not in best or resid[k] < resid[best[m[0]]]):
            best[m[0]] = k
    return [matches[k] for k in sorted(best.values(), key=lambda k: matches[k][0])]


def _solve(obj: np.ndarray, img: np.ndarray, cam: Camera) -> tuple[np.ndarray, np.ndarray, float]:
    """IPPE (both solutions), keep the camera-above-mat one with the smaller
    error, refine with Levenberg-Marquardt.  Returns (rvec, tvec, rms px)."""
    n, rvecs, tvecs, errs = cv2.solvePnPGeneric(obj, img, cam.K, cam.dist, flags=cv2.SOLVEPNP_IPPE)
    if n == 0:
        raise MatNotFound("mat markers found but no pose fits them")
    cands = []
    for r, t in zip(rvecs, tvecs):
        R = cv2.Rodrigues(r)[0]
        centre = -R.T @ t.reshape(3)
        if t.reshape(3)[2] > 0 and centre[2] < 0:
            cands.append((r.reshape(3), t.reshape(3)))
    if not cands:
        raise MatNotFound("mat markers found but the mat would be seen from below (mirrored image?)")
    best = None
    for r, t in cands:
        # (3, 1) arrays: with 1-D (3,) ones OpenCV 5.0 returns them unrefined
        r, t = cv2.solvePnPRefineLM(obj, img, cam.K, cam.dist, r.reshape(3, 1).copy(), t.reshape(3, 1).copy(),
                                    criteria=(cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 100, 1e-10))
        proj = cv2.projectPoints(obj, r, t, cam.K, cam.dist)[0].reshape(-1, 2)
        rms = float(np.sqrt(np.mean(np.sum((proj - img) ** 2, axis=1))))
        if best is None or rms < best[2]:
            best = (r.reshape(3), t.reshape(3), rms)
    return best


def _fit_focal(obj: np.ndarray, img: np.ndarray, cam: Camera, source: str):
    """Joint least-squares fit of ``f`` and the pose to one view
    (``cv2.calibrateCamera`` from ``cam``'s intrinsics, principal point fixed,
    square pixels, no distortion).  Returns ``(camera, rvec, tvec, rms)``, or
    None when OpenCV fails, ``f`` moves by more than a factor of 2, or the
    camera ends up below the mat."""
    flags = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_PRINCIPAL_POINT | cv2.CALIB_FIX_ASPECT_RATIO
             | cv2.CALIB_ZERO_TANGENT_DIST | cv2.CALIB_FIX_K1 | cv2.CALIB_FIX_K2 | cv2.CALIB_FIX_K3)
    try:
        rms, K, _, rvecs, tvecs = cv2.calibrateCamera(
            [obj.astype(np.float32)], [img.astype(np.float32)], cam.image_size, cam.K.copy(), np.zeros(5),
            flags=flags, criteria=(cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 200, 1e-12))
    except cv2.error:
        return None
    f, f0 = float(K[0, 0]), float(cam.K[0, 0])
    if not (np.isfinite(f) and 0.5 * f0 < f < 2.0 * f0):
        return None
    r, t = np.asarray(rvecs[0], np.float64).reshape(3), np.asarray(tvecs[0], np.float64).reshape(3)
    if (-cv2.Rodrigues(r)[0].T @ t)[2] >= 0:  # camera centre must be above the mat
        return None
    K2 = cam.K.copy()
    K2[0, 0] = K2[1, 1] = f
    return Camera(K2, np.zeros(5), cam.image_size, source), r, t, float(rms)


def _guessed_rms(obj: np.ndarray, img: np.ndarray, size: tuple[int, int]) -> float | None:
    """RMS reprojection error (px) of marker corners ``obj`` ``(N, 3)`` mm
    seen at ``img`` ``(N, 2)`` px under intrinsics guessed from them
    (:meth:`Camera.guess`, the focal length fitted), None where no pose
    fits."""
    H, _ = cv2.findHomography(obj[:, :2], img, 0)
    if H is None:
        return None
    guess = Camera.guess(size, H)
    try:
        fit = _fit_focal(obj, img, guess, guess.source) if guess.source == "estimated" else None
        return fit[3] if fit is not None else _solve(obj, img, guess)[2]
    except MatNotFound:
        return None


def _refuse_camera_that_does_not_fit(obj: np.ndarray, img: np.ndarray, size: tuple[int, int], camera: Camera,
                                     rms: float | None, kept: tuple[int, int] | None = None,
                                     ratio: float = 1.0) -> None:
    """The markers do not fit together under the calibrated ``camera``
    (RMS ``rms`` px; or, ``kept`` = ``(k, n)``, only ``k`` of the ``n``
    markers that fit one plane in the picture fit one mat under it): if
    they fit well under guessed intrinsics (half of
    :func:`max_reprojection_px` or better, and ``ratio`` times better than
    ``rms``), the mat is there and the camera file is wrong for this
    picture (intrinsics for another camera or lens, or for another
    resolution under this one's ``image_size``): say so.  Returns when the
    guess does not fit either (the mat is then not believed, or the file
    kept).

    Args:
        obj: ``(N, 3)`` marker corners, mat mm; img: ``(N, 2)`` their image
            px (with ``kept``: those of the ``n`` markers).
        size: ``(w, h)`` of the picture, px.

    Raises:
        CameraMisfit: the camera file does not fit the picture.
    """
    g_rms = _guessed_rms(obj, img, size)
    if g_rms is None or not g_rms <= max_reprojection_px(size) / 2:
        return
    if rms is not None and not g_rms * ratio <= rms:        # (NaN or inf compare as no fit: refused)
        return
    w0, h0 = camera.image_size
    scaled = "" if (w0, h0) == size else f" (written for {w0}x{h0} images, scaled to {size[0]}x{size[1]})"
    how = (f"the markers lie {rms:.1f} px RMS from where they should (without the file {g_rms:.1f} px)"
           if kept is None else f"only {kept[0]} of the {kept[1]} markers read fit one mat together (without "
           f"the file all {kept[1]} do, {g_rms:.1f} px RMS)")
    raise CameraMisfit(f"{camera.named} does not fit this picture: the mat is found, but with its intrinsics"
                       f"{scaled} {how}; was it calibrated for another camera "
                       "or lens, or at another resolution than its image_size? Calibrate again, or leave out "
                       "--camera")


def mirror_hint(image_bgr: np.ndarray, spec: MatSpec, camera: Camera | None = None,
                min_markers: int = MIN_MARKERS) -> str:
    """For a picture in which :func:`estimate_pose` found no mat:
    ``"; the picture looks mirrored ..."`` when the picture flipped left to
    right shows ``min_markers`` consistent markers (a front camera or a video
    call shows the table mirrored, and ArUco markers do not read mirrored),
    else ``""``.  One more marker search (a few ms at 720p): for the one-line
    error of a command, not for every frame of a stream.

    Args:
        image_bgr: ``(H, W, 3) uint8`` BGR (grey accepted).
    """
    gray = as_gray(image_bgr)
    size = (gray.shape[1], gray.shape[0])
    matches = _correspondences(np.ascontiguousarray(gray[:, ::-1]), spec)
    if matches:
        turned = camera is not None and (size[0] - size[1]) * (camera.image_size[0] - camera.image_size[1]) < 0
        cam = None if camera is None else camera.turned_to(size)[0] if turned else camera.scaled_to(size)
        matches = _reject_outliers(matches, cam, size)
    if len(matches) < max(1, min_markers):
        return ""
    return (f"; the picture looks mirrored ({len(matches)} markers read once it is flipped left to right, as a "
            "front camera or a video call shows the table): turn off the camera's mirroring, or flip the "
            "picture")


#: a picture whose shorter side is under this many pixels, and whose mat was
#: not found, is named as small (:func:`small_picture_hint`): a break-test's
#: 1280 x 720 photo shrunk to 200 x 112 px (a chat app's preview) read no
#: marker at all, and was told only "no mat markers found"
SMALL_PICTURE_PX = 360


def small_picture_hint(image_bgr: np.ndarray) -> str:
    """For a picture in which :func:`estimate_pose` found no mat: ``"; the
    picture is only W x H px ..."`` when its shorter side is under
    :data:`SMALL_PICTURE_PX` (a thumbnail, or a preview a chat app sent in
    place of the photo: the markers may be too few pixels across to read),
    else ``""``.

    Args:
        image_bgr: ``(H, W[, C])`` picture (any depth).
    """
    shape = np.shape(image_bgr)
    if len(shape) < 2:
        return ""
    h, w = int(shape[0]), int(shape[1])
    if min(w, h) >= SMALL_PICTURE_PX:
        return ""
    return (f"; the picture is only {w} x {h} px, where the mat's markers may be too small to read: give the "
            "photo at its full size, as taken (not a thumbnail or a preview)")


STILL_SHARE = 0.002     # marker corners within this share of the picture's diagonal: the camera stood still


def _spread(matches) -> float:
    """mm²: the area of the convex hull of the matches' marker corners on
    the mat (``matches``: (id, obj (4,3) mm, img (4,2) px) each)."""
    pts = np.concatenate([np.asarray(obj, np.float64)[:, :2] for _, obj, _ in matches]).astype(np.float32)
    return float(cv2.contourArea(cv2.convexHull(pts))) if len(pts) >= 3 else 0.0


class MarkerMemory:
    """The markers read in the last frames of one camera (a video), for
    :func:`estimate_pose`'s ``memory``: a marker this frame misses counts
    where a kept frame read it, moved as the markers read in both moved.

    A pose from the markers read alone shifts with the set read: at 640 x
    480 the mat's small far markers are missed now and then (a hand over
    one, blur, noise), and a pose from the near ones, nearly in a line,
    tilts by a degree or more and moves the far slots' faces by a third of
    a tile (bench game 17403, the Sundae Mountain: 10 far tiles read "no
    face" 5 to 10 px off in such a frame, and were taken for gone).

    What is lent, and when:

    * only where the markers read span under ``spread_below`` of the mat's
      area that they and the lent ones span (:func:`_spread`): a pose from
      markers spread over the mat is well held, and every lent marker is a
      little off (bench game 17403's read markers spanned 15 % of the area
      with the far one; lent wherever one of 7-10 was missed, markers took
      a claim from bench game 15600, on the Alphabet Tower at 1280 x 720,
      its camera shaken by 1-2 px; bench game 16200, whose near markers
      span 57 %, is read as before, two claims and the penalties wrong);
    * a marker two kept frames read within ``still_share`` of the picture's
      diagonal of each other (bench game 15903: a marker beside a hand,
      read once, put the focal length 7 % off);
    * from the newest frame that read it, moved by the similarity
      (``cv2.estimateAffinePartial2D``) that takes the markers read there
      to where they are read now, when those moved, in the median, by at
      most ``still_share`` of the diagonal (1.6 px at 640 x 480, 2.9 px at
      1280 x 720: a camera shaken, not moved; corners read again in a still
      picture move by 0.2-1.0 px at 640 x 480), and the similarity fits
      them within half of that (a shaken camera's picture moves as one;
      the fit leaves 0.2-0.6 px of the corners' noise at 640 x 480; bench
      game 17103: markers lent where they had been, before a shake of a
      pixel or two, invented a claim).

    When the markers read move more than that from the newest kept frame,
    the camera moved and the kept frames are forgotten.

    Without a camera file it also holds one focal length for the video
    (:meth:`focal_for`): a camera's focal length does not change when a
    marker is missed, but the one fitted to a view of a plane swings with
    the markers read.  Bench game 16200 (640 x 480, 24 degrees from
    overhead, true focal length 476 px): 487-492 px from frames that read
    markers 0, 4 and 6-10, 524-537 px from those that missed marker 0 (a
    hand over it), and the view's tilt a degree off with it.

    Args:
        still_share: see above.
        frames: how many frames are kept.
        spread_below: see above.
        focal_frames: how many frames' focal lengths are kept.
        focal_spread: the focal length held is the median of those fitted
            to frames whose markers span at least this share of the widest
            span kept (:func:`_spread`).
        focal_rms_ratio, focal_misfit_px, focal_misfit_share: see
            :meth:`focal_for`.
    """

    def __init__(self, still_share: float = STILL_SHARE, frames: int = 12, spread_below: float = 0.5,
                 focal_frames: int = 100, focal_spread: float = 0.9, focal_rms_ratio: float = 2.0,
                 focal_misfit_px: float = 0.5, focal_misfit_share: float = 0.0006):
        self.still_share = still_share
        self.frames = max(2, int(frames))
        self.spread_below = spread_below
        self.focal_frames = max(1, int(focal_frames))
        self.focal_spread = focal_spread
        self.focal_rms_ratio = focal_rms_ratio
        self.focal_misfit_px, self.focal_misfit_share = focal_misfit_px, focal_misfit_share
        self.kept: list[dict] = []     # oldest first: {marker key: (id, obj (4,3), img (4,2))} as read
        self.focals: list[tuple[float, float, float]] = []   # oldest first: (spread mm², focal px, RMS px)
        self.searched: list[float] = []     # oldest first: focal lengths searched from the faces, px
        #: the first frame shows the whole deal, every tile standing (the
        #: referee's default; ``vision.reconstruct.read_slots`` searches its
        #: focal length so)
        self.whole_deal = False

    @staticmethod
    def _key(obj: np.ndarray) -> tuple:
        return tuple(np.round(np.asarray(obj, np.float64)[0], 3))

    def _read(self, matches) -> dict:
        return {self._key(obj): (int(i), np.asarray(obj, np.float64), np.asarray(img, np.float64))
                for i, obj, img in matches}

    @staticmethod
    def _moves(then: dict, now: dict) -> list[float]:
        return [float(d) for k in then.keys() & now.keys()
                for d in np.linalg.norm(now[k][2] - then[k][2], axis=1)]

    def _still(self, now: dict, image_size) -> bool:
        moves = self._moves(self.kept[-1], now) if self.kept else []
        return bool(moves) and float(np.median(moves)) <= self.still_share * math.hypot(*image_size)

    def lend(self, matches, image_size) -> list:
        """``matches`` (list of (id, obj (4,3) mm, img (4,2) px), as read)
        with the markers this class's rules lend; ``matches`` as they are
        where none is."""
        now = self._read(matches)
        if not self._still(now, image_size):
            return list(matches)
        limit = self.still_share * math.hypot(*image_size)
        out = list(matches)
        missing = {k for f in self.kept for k in f} - now.keys()
        for key in missing:
            reads = [f for f in reversed(self.kept) if key in f]
            if len(reads) < 2 or float(np.median(np.linalg.norm(reads[0][key][2] - reads[1][key][2], axis=1))) > limit:
                continue
            then = reads[0]
            common = sorted(then.keys() & now.keys())
            if len(common) < 2:
                continue
            src = np.concatenate([then[k][2] for k in common]).astype(np.float32)
            dst = np.concatenate([now[k][2] for k in common]).astype(np.float32)
            if float(np.median(np.linalg.norm(dst - src, axis=1))) > limit:
                continue
            m, _ = cv2.estimateAffinePartial2D(src, dst, method=cv2.LMEDS)
            if m is None:
                continue
            fit = src @ m[:, :2].T + m[:, 2]
            if float(np.median(np.linalg.norm(fit - dst, axis=1))) > 0.5 * limit:
                continue
            i, obj, img = then[key]
            out.append((i, obj.copy(), img @ m[:, :2].T + m[:, 2]))
        if len(out) > len(matches) and _spread(matches) >= self.spread_below * _spread(out):
            return list(matches)
        return out

    def _held(self, camera: Camera) -> Camera:
        """``camera`` with the focal length held (:meth:`focal_for`)."""
        typical = float(np.median([r for _, _, r in self.focals]))
        pool = [(s, f) for s, f, r in self.focals if r <= self.focal_rms_ratio * typical] \
            or [(s, f) for s, f, _ in self.focals]
        top = max(s for s, _ in pool)
        K = camera.K.copy()
        K[0, 0] = K[1, 1] = float(np.median([f for s, f in pool if s >= self.focal_spread * top]))
        return Camera(K, camera.dist.copy(), camera.image_size, camera.source)

    def focal_for(self, camera: Camera, obj: np.ndarray, img: np.ndarray, matches) -> Camera:
        """The camera to solve this frame's pose with, and this frame's
        focal length kept.

        ``camera`` has the focal length fitted to this frame's markers
        alone: ``obj`` (``(N, 3)`` mm, their corners on the mat), read at
        ``img`` (``(N, 2)`` px), ``matches`` (id, obj, img each).  The
        focal length held for the video is the median of those kept from
        the frames whose markers span at least ``focal_spread`` of the
        widest span (:func:`_spread`: markers spread over the mat hold the
        focal length best), among the frames whose markers fit their own
        pose within ``focal_rms_ratio`` times the median RMS error kept (a
        marker read a few px off spoils the focal length fitted to it:
        bench game 17102, 1280 x 720, true focal length 1098 px: 1110-1124
        px from frames fitting within 0.08-0.2 px, but 1041 px from a frame
        that also read a far marker half hidden, 1.9 px RMS).

        Where the markers lie more than ``focal_misfit_share`` of the
        picture's diagonal (at least ``focal_misfit_px``) further, RMS,
        from the pose with the focal length held than from the one with
        their own, the camera was zoomed or changed: the focal lengths kept
        are forgotten, and ``camera`` is returned (bench game 16200: the
        focal length held cost the frames that fitted 7 % more at most
        0.15 px; a camera zoomed by 30 %, a 1280 x 960 view 25 degrees
        from overhead, 2.2 px).  Principal point, distortion and
        ``source`` are ``camera``'s."""
        try:
            own_rms = _solve(obj, img, camera)[2]
        except MatNotFound:
            return camera
        if not (math.isfinite(own_rms) and math.isfinite(float(camera.K[0, 0]))):
            return camera
        self.focals.append((_spread(matches), float(camera.K[0, 0]), own_rms))
        del self.focals[:-self.focal_frames]
        held = self._held(camera)
        if held.K[0, 0] == camera.K[0, 0]:
            return held
        try:
            held_rms = _solve(obj, img, held)[2]
        except MatNotFound:
            held_rms = math.inf
        w, h = camera.image_size
        if held_rms - own_rms <= max(self.focal_misfit_px, self.focal_misfit_share * math.hypot(w, h)):
            return held
        self.focals = self.focals[-1:]
        return camera

    def hold_searched(self, f: float) -> float:
        """Keep ``f``, the focal length (px) searched from one frame's faces
        (a nearly overhead view, ``vision.reconstruct.focal_from_faces``),
        and return the median of those kept (the last ``focal_frames``): each
        frame's search is a noisy witness of the one focal length (bench
        game 17803, 2 degrees from overhead, 945 px true: 900-966 px frame by
        frame)."""
        if math.isfinite(f):
            self.searched.append(float(f))
            del self.searched[:-self.focal_frames]
        return float(np.median(self.searched)) if self.searched else float(f)

    def update(self, matches, image_size) -> None:
        """Keep the markers read in this frame (``matches`` as read);
        forget the frames kept before when the camera moved."""
        now = self._read(matches)
        if not self._still(now, image_size):
            self.kept = []
        self.kept.append(now)
        del self.kept[:-self.frames]


def estimate_pose(image_bgr: np.ndarray, spec: MatSpec, camera: Camera | None = None,
                  min_markers: int = MIN_MARKERS, memory: MarkerMemory | None = None) -> MatPose:
    """Find the mat in an image and the camera's pose relative to it.

    Works from whichever markers are visible (a hand or a stack over some of
    them is fine) as long as ``min_markers`` consistent ones remain.

    Args:
        image_bgr: ``(H, W, 3) uint8`` BGR (grey accepted).
        spec: the printed mat.
        camera: calibrated intrinsics (rescaled if the image has another
            resolution with the same aspect ratio), or None to guess them
            (:meth:`Camera.guess` on the markers' homography, then a joint
            refinement of focal length and pose).
        min_markers: fewest consistent markers accepted.
        memory: the markers of the last frames of the same camera (a
            video, :class:`MarkerMemory`): while the camera stands still, a
            marker this image misses counts where they read it; the
            markers read here are added to it.  Without ``camera``, a
            focal length estimated from the markers is the one it holds
            for the video (:meth:`MarkerMemory.focal_for`; the frame's
            own where the one held does not fit its markers).

    Returns:
        The :class:`MatPose` (its markers those read, then those lent by
        ``memory``).

    Raises:
        MatNotFound: fewer than ``min_markers`` consistent markers, an RMS
            reprojection error above :func:`max_reprojection_px`, or a pose
            with the camera below the mat.
        BadInput: not an image, a camera for another aspect ratio, or a
            camera whose intrinsics do not fit the picture (the markers fit
            guessed intrinsics but not these).
    """
    gray = as_gray(image_bgr)
    size = (gray.shape[1], gray.shape[0])
    if camera is not None and (size[0] - size[1]) * (camera.image_size[0] - camera.image_size[1]) < 0:
        # a camera calibrated held one way, the picture taken the other
        # (a phone held upright): the pose on whichever quarter turn of the
        # intrinsics fits the markers better
        best = None
        for turned in camera.turned_to(size):
            try:
                pose = estimate_pose(image_bgr, spec, turned, min_markers)
            except MatNotFound:
                continue
            if best is None or pose.reprojection_px < best.reprojection_px:
                best = pose
        if best is None:
            return estimate_pose(image_bgr, spec, camera.turned_to(size)[0], min_markers)
        return best
    cam = camera.scaled_to(size) if camera is not None else None
    total = len(spec.markers)
    need = max(1, min_markers)
    matches = _correspondences(gray, spec)
    if not matches:
        raise MatNotFound(f"no mat markers found in the image (0 of {total})")
    found = len(matches)
    other_mat = bool(getattr(matches, "other_mat", False))
    if len({m[0] for m in matches}) < len(matches):        # (the full-size look keeps repeated ids)
        from vision.markers import nearer_mat
        other_mat = other_mat or nearer_mat([m[0] for m in matches], np.stack([m[2] for m in matches]),
                                            {m[0]: m[1] for m in matches}, size)[1]
    calibrated = camera is not None and cam.source == "calibrated"
    plain = _reject_outliers(matches, None, size) if calibrated else []
    matches = _reject_outliers(matches, cam, size)
    if len(plain) >= need and len(plain) > len(matches):
        # markers that fit one plane as seen, fewer of which fit one under
        # the file's undistortion: where the file maps them all onto the mat
        # (projected forwards, as the pose is fitted), the undistortion was
        # off, not the markers (far from the centre of a strong barrel lens
        # it need not converge: a break-test's true file for a k1 of -0.55
        # threw 3 of 12 good markers out); where it does not, and they fit
        # guessed intrinsics far better, the file is wrong (a break-test's
        # k1 of 3.5 to 8 for a lens without distortion kept 1-3 of 9-12)
        obj_p, img_p = np.concatenate([m[1] for m in plain]), np.concatenate([m[2] for m in plain])
        try:
            f_rms = _solve(obj_p, img_p, cam)[2]
        except MatNotFound:
            f_rms = math.inf
        if f_rms <= max(CAMERA_FILE_MISFIT_PX, CAMERA_FILE_MISFIT_SHARE * math.hypot(*size)):
            matches = plain
        elif len(plain) - len(matches) >= max(2, len(plain) // 4):
            _refuse_camera_that_does_not_fit(obj_p, img_p, size, camera, f_rms, kept=(len(matches), len(plain)),
                                             ratio=CAMERA_FILE_MISFIT_RATIO)
    if len(matches) < need:
        if len(matches) == found:
            raise MatNotFound(f"only {found} of {total} mat markers found (need {need})")
        fit = "none of them fit" if not matches else f"only {len(matches)} of them fit"
        raise MatNotFound(f"{found} of {total} mat markers read, but {fit} one mat together (need {need})")
    if memory is not None:
        read = matches
        matches = memory.lend(read, size)
        memory.update(read, size)
    obj = np.concatenate([m[1] for m in matches])
    img = np.concatenate([m[2] for m in matches])
    if cam is None:
        H, _ = cv2.findHomography(obj[:, :2], img, 0)
        if H is None:
            raise MatNotFound("mat markers found but no plane fits them")
        cam = Camera.guess(size, H)
        if cam.source == "estimated":
            fit = _fit_focal(obj, img, cam, "estimated")
            cam = fit[0] if fit is not None else cam
            if memory is not None:
                cam = memory.focal_for(cam, obj, img, matches)
    hint = "" if cam.source in ("assumed", "estimated", "searched") else " (check the camera file)"
    try:
        rvec, tvec, rms = _solve(obj, img, cam)
    except MatNotFound as exc:
        raise MatNotFound(f"{exc}{hint}") from None
    if not rms <= max_reprojection_px(size):
        if calibrated:
            _refuse_camera_that_does_not_fit(obj, img, size, camera, rms)
        raise MatNotFound(f"mat markers inconsistent: reprojection error {rms:.1f} px{hint}")
    if calibrated and rms > max(CAMERA_FILE_MISFIT_PX, CAMERA_FILE_MISFIT_SHARE * math.hypot(*size)):
        # fitting, but poorly, where guessed intrinsics fit the markers far better
        _refuse_camera_that_does_not_fit(obj, img, size, camera, rms, ratio=CAMERA_FILE_MISFIT_RATIO)
    return MatPose(rvec, tvec, cam, rms, len(matches), tuple(m[0] for m in matches), obj, img, other_mat)


def refine_with_points(pose: MatPose, object_points_mm: np.ndarray, image_points_px: np.ndarray) -> MatPose:
    """Refine a pose whose focal length was guessed, using extra points off the mat.

    Seen straight down, the mat alone cannot tell the focal length (module
    docstring), so the heights of stacked tiles project wrongly.  Points at
    known heights (e.g. the top-face corners of tiles a later stage has
    located) make it observable: this re-fits ``f`` and the pose to the marker
    corners plus these points (``cv2.calibrateCamera`` on one view, principal
    point fixed, square pixels, no distortion).

    Args:
        pose: from :func:`estimate_pose`; returned unchanged when its camera
            is calibrated (``camera.source == "calibrated"``).
        object_points_mm: ``(N, 3)`` mat-frame points (some with Z != 0).
        image_points_px: ``(N, 2)`` where they are seen.

    Returns:
        A new :class:`MatPose` with ``camera.source == "fitted"`` and the
        RMS error over all points; ``pose`` itself if the fit fails or moves
        ``f`` by more than a factor of 2.

    Raises:
        BadInput: mismatched or malformed point arrays.
    """
    extra_obj = np.asarray(object_points_mm, np.float64)
    extra_img = np.asarray(image_points_px, np.float64)
    if extra_obj.ndim != 2 or extra_obj.shape[1] != 3 or extra_img.shape != (len(extra_obj), 2):
        raise BadInput(f"refine_with_points: expected (N, 3) and (N, 2) points, got {extra_obj.shape} "
                       f"and {extra_img.shape}")
    if pose.camera.source == "calibrated" or len(extra_obj) == 0:
        return pose
    obj = np.concatenate([pose.object_points, extra_obj])
    img = np.concatenate([pose.image_points, extra_img])
    fit = _fit_focal(obj, img, pose.camera, "fitted")
    if fit is None:
        return pose
    fitted, r, t, rms = fit
    return MatPose(r, t, fitted, rms, pose.n_markers, pose.marker_ids, pose.object_points, pose.image_points,
                   pose.other_mat)


def project_points(points_mm: np.ndarray, pose: MatPose) -> np.ndarray:
    """Project mat-frame points to the image (``cv2.projectPoints``, with distortion).

    Args:
        points_mm: ``(N, 3)`` X, Y, Z mm (Z = -height).
        pose: the mat pose.

    Returns:
        ``(N, 2) float64`` pixels.
    """
    pts = np.asarray(points_mm, np.float64).reshape(-1, 3)
    if len(pts) == 0:
        return np.zeros((0, 2), np.float64)
    out, _ = cv2.projectPoints(pts, pose.rvec, pose.tvec, pose.camera.K, pose.camera.dist)
    return out.reshape(-1, 2)


def project_slot_faces(slots: Iterable, spec: MatSpec, pose: MatPose) -> np.ndarray:
    """Image quadrilaterals of the slots' top faces, each at its own layer height.

    Args:
        slots: ``N`` slots ``(x, y, z)``.
        spec: the mat.
        pose: the mat pose.

    Returns:
        ``(N, 4, 2) float32`` pixels: top-left, top-right, bottom-right,
        bottom-left corners of each face as seen from above (mat orientation,
        see :func:`vision.mat.slot_face_corners_mm`).
    """
    obj = slot_face_corners_mm(slots, spec)
    return project_points(obj.reshape(-1, 3), pose).reshape(-1, 4, 2).astype(np.float32)


def layer_homography(pose: MatPose, height_mm: float = 0.0) -> np.ndarray:
    """``(3, 3) float64`` homography from mat mm ``(X, Y, 1)`` at ``height_mm``
    above the mat to undistorted image px: ``K [r1 r2 (t - h r3)]``.  Exact for
    a camera without distortion; with distortion, apply it to undistorted
    images (``cv2.undistort``) or use :func:`project_points`."""
    R = pose.rotation
    M = np.column_stack([R[:, 0], R[:, 1], pose.tvec - height_mm * R[:, 2]])
    H = pose.camera.K @ M
    return H / H[2, 2]


def draw_overlay(image_bgr: np.ndarray, spec: MatSpec, pose: MatPose, slots: Iterable = (),
                 color=(0, 200, 255)) -> np.ndarray:
    """A copy of the image with the mat's grid (green, at height 0), the
    marker outlines used (blue) and the given slots' top faces (``color``,
    at their layer heights) drawn on it.  For checking a setup by eye.

    Returns:
        ``(H, W, 3) uint8`` BGR.
    """
    out = image_bgr.copy() if image_bgr.ndim == 3 else cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    gx, gy = spec.grid_origin_mm
    gw, gh = spec.grid_size_mm
    cols, rows = spec.grid_tiles
    segs = [((gx + i * spec.tile_mm[0], gy, 0), (gx + i * spec.tile_mm[0], gy + gh, 0)) for i in range(cols + 1)]
    segs += [((gx, gy + j * spec.tile_mm[1], 0), (gx + gw, gy + j * spec.tile_mm[1], 0)) for j in range(rows + 1)]
    for a, b in segs:
        pts = project_points(np.linspace(a, b, 20), pose)
        cv2.polylines(out, [np.round(pts * 16).astype(np.int32)], False, (0, 200, 0), 1, cv2.LINE_AA, shift=4)
    objs = spec.marker_object_points()
    for m in spec.markers:
        if m.id in pose.marker_ids:
            q = project_points(objs[(m.dictionary, m.id)], pose)
            cv2.polylines(out, [np.round(q * 16).astype(np.int32)], True, (255, 80, 0), 2, cv2.LINE_AA, shift=4)
    for q in project_slot_faces(list(slots), spec, pose):
        cv2.polylines(out, [np.round(q * 16).astype(np.int32)], True, color, 2, cv2.LINE_AA, shift=4)
    return out
