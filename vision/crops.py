"""Crop-and-normalise: the one function that turns projected slot faces into the
classifier's input patches, shared by training (vision/training) and inference
(vision/reconstruct).

Each patch samples the slot's top face, as projected at the slot's layer
height, plus a small context margin around it, in the face's own frame: the
patch's top-left is the face's top-left corner (TL of the projected quad) grown
by the margin, rows run down the face's long (40 mm) side.  All N patches come
from ONE ``cv2.remap`` over a precomputed map (an ``(N*h, w)`` stack of
per-slot sampling grids), which is much cheaper than N ``warpPerspective``
calls.  The homography from the unit square to each quad is Heckbert's
closed form ("Fundamentals of Texture Mapping and Image Warping", 1989,
section 2.2.3), evaluated for all quads at once with numpy.

Normalisation (per patch): subtract the per-channel mean, divide by the
patch's standard deviation over all channels (floored at
:attr:`CropSettings.std_floor` so that a flat, empty patch is not blown up).
That removes global brightness, contrast and additive colour casts; colour
differences inside a patch survive.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SHRT_MAX = 32767  # OpenCV's limit on the rows and columns of a remap


@dataclass(frozen=True)
class CropSettings:
    """Geometry and normalisation of the classifier's input patches.

    Attributes:
        height, width: patch size in px (rows down the face's 40 mm side).
        margin: context margin added on every side, as a fraction of the
            face's width (resp. height): the patch spans ``1 + 2 * margin``
            face widths.
        std_floor: lower bound of the per-patch standard deviation, in 0-255
            grey levels.
        prefilter_above: when the image holds more than this many image px per
            patch px (median over the quads), the image is first halved with
            ``cv2.pyrDown`` (Gaussian pyramid) to limit aliasing.
    """

    height: int = 48
    width: int = 36
    margin: float = 0.1
    std_floor: float = 12.0
    prefilter_above: float = 1.9

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(C, h, w)`` of one patch."""
        return (3, self.height, self.width)

    def to_json(self) -> dict:
        return {"height": self.height, "width": self.width, "channels": 3, "margin": self.margin,
                "std_floor": self.std_floor, "prefilter_above": self.prefilter_above,
                "normalisation": "per patch: (x - mean per channel) / max(std over all, std_floor); BGR"}

    @classmethod
    def from_json(cls, d: dict) -> "CropSettings":
        return cls(int(d["height"]), int(d["width"]), float(d["margin"]), float(d["std_floor"]),
                   float(d.get("prefilter_above", 1.9)))


def square_to_quad(quads: np.ndarray) -> np.ndarray:
    """Homographies mapping the unit square to each quad.

    Args:
        quads: ``(N, 4, 2)`` float, corners TL, TR, BR, BL in image px.

    Returns:
        ``(N, 3, 3)`` float64 ``H`` with ``H @ (u, v, 1)`` proportional to the image
        point, ``(0,0) -> TL``, ``(1,0) -> TR``, ``(1,1) -> BR``, ``(0,1) -> BL``
        (Heckbert 1989, closed form for square-to-quadrilateral).
    """
    q = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    x0, y0 = q[:, 0, 0], q[:, 0, 1]
    x1, y1 = q[:, 1, 0], q[:, 1, 1]
    x2, y2 = q[:, 2, 0], q[:, 2, 1]
    x3, y3 = q[:, 3, 0], q[:, 3, 1]
    sx = x0 - x1 + x2 - x3
    sy = y0 - y1 + y2 - y3
    dx1, dx2 = x1 - x2, x3 - x2
    dy1, dy2 = y1 - y2, y3 - y2
    den = dx1 * dy2 - dx2 * dy1
    den = np.where(np.abs(den) < 1e-12, 1e-12, den)
    g = (sx * dy2 - dx2 * sy) / den
    h = (dx1 * sy - sx * dy1) / den
    H = np.empty((len(q), 3, 3))
    H[:, 0, 0] = x1 - x0 + g * x1
    H[:, 0, 1] = x3 - x0 + h * x3
    H[:, 0, 2] = x0
    H[:, 1, 0] = y1 - y0 + g * y1
    H[:, 1, 1] = y3 - y0 + h * y3
    H[:, 1, 2] = y0
    H[:, 2, 0] = g
    H[:, 2, 1] = h
    H[:, 2, 2] = 1.0
    return H


def sampling_maps(quads: np.ndarray, settings: CropSettings = CropSettings(),
                  scale: float = 1.0) -> np.ndarray:
    """The remap grid of every patch, x and y interleaved.

    Args:
        quads: ``(N, 4, 2)`` projected faces (TL, TR, BR, BL) in image px.
        settings: patch geometry.
        scale: multiply the image coordinates by this (0.5 after a ``pyrDown``).

    Returns:
        ``(N * h, w, 2)`` float32 image coordinates (x, y) in px, patch ``i``
        in rows ``i*h .. (i+1)*h`` (:func:`sampling_maps_xy`, stacked).
    """
    mx, my = sampling_maps_xy(quads, settings, scale)
    return np.stack([mx, my], axis=-1)


def sampling_maps_xy(quads: np.ndarray, settings: CropSettings = CropSettings(),
                     scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The remap grid of every patch as two maps, ``cv2.remap``'s
    ``map1``/``map2`` form (x, y).

    Each patch's grid is the unit square's homography (:func:`square_to_quad`)
    at the pixel centres of a ``w x h`` grid spanning the face plus the
    margin.  A homography's numerator and denominator are separable sums of
    a part in ``u`` and a part in ``v``, so each map costs one broadcast sum
    and one product over the ``(N, h, w)`` grid.

    Args:
        quads: ``(N, 4, 2)`` projected faces (TL, TR, BR, BL) in image px.
        settings: patch geometry.
        scale: multiply the image coordinates by this (0.5 after a ``pyrDown``).

    Returns:
        ``(mx, my)``, each ``(N * h, w)`` float32 image px, patch ``i`` in
        rows ``i*h .. (i+1)*h``.
    """
    h, w = settings.height, settings.width
    H = square_to_quad(quads)                                    # (N,3,3)
    if scale != 1.0:   # x' = (x + 0.5) * scale - 0.5, folded into H
        S = np.array([[scale, 0, 0.5 * scale - 0.5], [0, scale, 0.5 * scale - 0.5], [0, 0, 1]])
        H = S @ H
    n = len(H)
    u, v = patch_grid_uv(settings)
    U = H[:, :, 0, None] * u                                     # (N,3,w): each row of H times u
    V = H[:, :, 1, None] * v + H[:, :, 2, None]                  # (N,3,h): times v, plus the constant
    # the denominator is affine in (u, v): its extremes lie at the grid's
    # corners, so where those four share a sign and stay clear of 0 (a face
    # in front of the camera: always) so does every sample
    zc = U[:, 2][:, None, [0, -1]] + V[:, 2][:, [0, -1], None]   # (N,2,2)
    safe = bool(np.all(zc > 1e-9)) or bool(np.all(zc < -1e-9))
    U, V = U.astype(np.float32), V.astype(np.float32)
    z = np.add(U[:, 2, None, :], V[:, 2, :, None])               # (N,h,w)
    if not safe:
        np.copysign(np.maximum(np.abs(z), 1e-9), z, out=z)
    np.reciprocal(z, out=z)
    mx = np.add(U[:, 0, None, :], V[:, 0, :, None])
    mx *= z
    my = np.add(U[:, 1, None, :], V[:, 1, :, None])
    my *= z
    return mx.reshape(n * h, w), my.reshape(n * h, w)


def patch_grid_uv(settings: CropSettings = CropSettings()) -> tuple[np.ndarray, np.ndarray]:
    """Where a patch's pixel centres lie on the face, in face units.

    Returns:
        ``(u, v)``: ``(w,)`` and ``(h,)`` float64, 0 at the face's left (top)
        edge and 1 at its right (bottom) edge; the margin lies below 0 and
        above 1.
    """
    h, w, m = settings.height, settings.width, settings.margin
    u = (np.arange(w) + 0.5) / w * (1 + 2 * m) - m
    v = (np.arange(h) + 0.5) / h * (1 + 2 * m) - m
    return u, v


def blank_hidden(raw: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Patches with their hidden pixels blanked: each pixel marked in
    ``hidden`` takes the mean colour of the patch's pixels in sight, so after
    :func:`normalise` the hidden part reads 0 and the part in sight keeps its
    contrast.  The classifier learns to read a face from what is left of it
    (``vision.training.train_classifier``); ``vision.reconstruct`` blanks
    the part of a face that taller tiles in front hide before reading it
    again.

    Args:
        raw: ``(N, h, w, 3)`` uint8 patches (:func:`extract_raw`).
        hidden: ``(N, h, w)`` bool, True where the patch's point is hidden.

    Returns:
        A new ``(N, h, w, 3)`` uint8 array; a patch with every pixel or no
        pixel hidden is returned as it was.

    Raises:
        ValueError: ``raw`` is not ``(N, h, w, 3)`` uint8, or ``hidden`` not
            ``(N, h, w)`` bool.
    """
    raw, hidden = np.asarray(raw), np.asarray(hidden)
    if raw.dtype != np.uint8 or raw.ndim != 4 or raw.shape[3] != 3:
        raise ValueError(f"patches must be (N, h, w, 3) uint8, not {raw.shape} {raw.dtype}")
    if hidden.dtype != bool or hidden.shape != raw.shape[:3]:
        raise ValueError(f"the hidden mask must be {raw.shape[:3]} bool, not {hidden.shape} {hidden.dtype}")
    out = raw.copy()
    for i in np.flatnonzero(hidden.any(axis=(1, 2)) & ~hidden.all(axis=(1, 2))):
        seen = out[i][~hidden[i]]
        out[i][hidden[i]] = np.round(seen.mean(axis=0)).astype(np.uint8)
    return out


def _px_per_patch_px(quads: np.ndarray, settings: CropSettings) -> float:
    q = np.asarray(quads, dtype=np.float64)
    widths = 0.5 * (np.linalg.norm(q[:, 1] - q[:, 0], axis=1) + np.linalg.norm(q[:, 2] - q[:, 3], axis=1))
    face_px = settings.width / (1 + 2 * settings.margin)
    return float(np.median(widths)) / face_px


def extract_patches(image_bgr: np.ndarray, quads: np.ndarray,
                    settings: CropSettings = CropSettings()) -> np.ndarray:
    """Crop every projected face (plus margin) and normalise it.

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR image.
        quads: ``(N, 4, 2)`` float projected top faces, corners TL, TR, BR, BL
            in image px (e.g. ``vision.pose.project_slot_faces``).
        settings: patch geometry and normalisation.

    Returns:
        ``(N, 3, h, w)`` float32 normalised patches, channels in BGR order.
        Samples outside the image are replicated from its border.
    """
    raw = extract_raw(image_bgr, quads, settings)
    return normalise(raw, settings)


def extract_raw(image_bgr: np.ndarray, quads: np.ndarray,
                settings: CropSettings = CropSettings()) -> np.ndarray:
    """Crop every projected face (plus margin) without normalising.

    Returns:
        ``(N, h, w, 3)`` uint8 BGR patches (for looking at, and the input of
        :func:`normalise`).
    """
    quads = np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)
    n = len(quads)
    h, w = settings.height, settings.width
    if n == 0:
        return np.zeros((0, h, w, 3), np.uint8)
    src = image_bgr
    scale = 1.0
    if _px_per_patch_px(quads, settings) > settings.prefilter_above:
        src = cv2.pyrDown(image_bgr)
        scale = 0.5
    # cv2.remap's output is limited to 32767 rows: stack at most that many patches per call
    per_call = max(1, (SHRT_MAX - 1) // h)
    out = np.empty((n, h, w, 3), np.uint8)
    for a in range(0, n, per_call):
        mx, my = sampling_maps_xy(quads[a:a + per_call], settings, scale)
        part = cv2.remap(src, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        out[a:a + per_call] = part.reshape(-1, h, w, 3)
    return out


def normalise(raw: np.ndarray, settings: CropSettings = CropSettings()) -> np.ndarray:
    """Normalise uint8 patches ``(N, h, w, 3)`` to float32 ``(N, 3, h, w)``
    (see the module docstring)."""
    n, h, w, c = raw.shape
    x = np.empty((n, c, h * w), np.float32)
    x[...] = raw.reshape(n, h * w, c).transpose(0, 2, 1)
    x -= (np.einsum("nck->nc", x) / (h * w))[:, :, None]
    ss = np.einsum("nck,nck->n", x, x) / (c * h * w)
    x *= (1.0 / np.maximum(np.sqrt(ss), settings.std_floor)).astype(np.float32)[:, None, None]
    return x.reshape(n, c, h, w)
