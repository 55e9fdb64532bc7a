"""Procedural table textures (wood, cloth, laminate) for the synthetic scenes.

The pattern is a function of table millimetres evaluated at every pixel of the
frame (the pixel's point on the table comes from the plane's homography), so
wood grain recedes with exact perspective and needs no texture warp.  Noise
comes from small periodic grids drawn from the look's own seed and
interpolated with ``cv2.remap``: the table stays the same whatever the camera.
Detail finer than a pixel's footprint is faded out (no moire far away).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

TABLE_KINDS = ("wood", "cloth", "laminate")

# BGR base colours (light, dark) per kind.
_WOOD = [((120, 170, 215), (60, 100, 150)),    # oak / pine
         ((70, 105, 150), (30, 50, 85)),       # walnut
         ((80, 110, 170), (40, 55, 110)),      # cherry
         ((175, 195, 210), (130, 150, 170)),   # whitewashed
         ((95, 125, 150), (55, 75, 95))]       # grey-brown
_CLOTH = [(60, 110, 40), (110, 60, 30), (40, 40, 120), (60, 60, 60), (150, 150, 150),
          (90, 120, 140), (120, 90, 110), (40, 90, 90), (160, 175, 185)]
_LAMINATE = [(235, 235, 235), (200, 205, 210), (60, 60, 65), (150, 170, 180), (210, 225, 235)]


@dataclass(frozen=True)
class TableLook:
    """How the table looks.

    Attributes:
        kind: one of :data:`TABLE_KINDS`.
        light, dark: BGR colours (0-255) the pattern blends between.
        grain_deg: direction of the wood grain / cloth weave in the mat plane.
        scale_mm: wood grain period in mm (planks are 18-30 periods wide).
        seed: seed of the texture's own noise (so a recording keeps one table).
    """

    kind: str
    light: tuple[float, float, float]
    dark: tuple[float, float, float]
    grain_deg: float
    scale_mm: float
    seed: int


def sample_table(rng: np.random.Generator) -> TableLook:
    """A random table look (kind, colours, grain direction)."""
    kind = TABLE_KINDS[int(rng.choice(3, p=[0.55, 0.3, 0.15]))]
    jitter = lambda c, s: tuple(float(np.clip(v * (1 + rng.normal(0, s)), 0, 255)) for v in c)  # noqa: E731
    if kind == "wood":
        light, dark = _WOOD[int(rng.integers(len(_WOOD)))]
        light, dark = jitter(light, 0.08), jitter(dark, 0.08)
    elif kind == "cloth":
        c = _CLOTH[int(rng.integers(len(_CLOTH)))]
        light = jitter(c, 0.1)
        dark = tuple(v * 0.75 for v in light)
    else:
        c = _LAMINATE[int(rng.integers(len(_LAMINATE)))]
        light = jitter(c, 0.04)
        dark = tuple(v * 0.93 for v in light)
    grain = float(rng.choice([0.0, 90.0]) + rng.normal(0, 4)) if rng.random() < 0.8 else float(rng.uniform(0, 180))
    return TableLook(kind, light, dark, grain, float(rng.uniform(3.0, 7.0)), int(rng.integers(2**31)))


def _wrap_noise(rng: np.random.Generator, n: int, u: np.ndarray, v: np.ndarray, cubic: bool = True) -> np.ndarray:
    """Smooth periodic noise sampled at ``(u, v)`` (float32 maps, in grid cells):
    an ``n x n`` grid of unit normals drawn from ``rng``, interpolated
    (``cv2.remap``, wrapping at the borders).  The grid depends only on the
    generator's state, so the pattern is fixed in the table frame."""
    g = rng.standard_normal((n, n), dtype=np.float32)
    mx = np.mod(u, n, dtype=np.float32)
    my = np.mod(v, n, dtype=np.float32)
    return cv2.remap(g, mx, my, cv2.INTER_CUBIC if cubic else cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)


def _colour_lut(t: np.ndarray, light: np.ndarray, dark: np.ndarray) -> np.ndarray:
    """Blend ``light`` -> ``dark`` by ``t`` in [0, 1] through a 256-entry table."""
    lut = np.clip(light[None] + (dark - light)[None] * np.linspace(0, 1, 256, dtype=np.float32)[:, None], 0, 255)
    idx = cv2.convertScaleAbs(np.maximum(t, 0), alpha=255.0)   # saturating -> uint8
    return cv2.LUT(cv2.merge([idx, idx, idx]), lut.astype(np.uint8).reshape(1, 256, 3))


def _hash01(k: np.ndarray, salt: float) -> np.ndarray:
    """A pseudo-random value in [0, 1) per integer ``k``."""
    return ((np.sin(k * 12.9898 + salt) * 43758.5453) % 1.0).astype(np.float32)


def table_image(look: TableLook, X: np.ndarray, Y: np.ndarray, mm_per_px: np.ndarray) -> np.ndarray:
    """Evaluate the table pattern at every pixel of a frame.

    The pattern is procedural in table millimetres, so it is drawn straight in
    the frame with exact perspective: ``X, Y`` give each pixel's point on the
    table (the mat's plane), ``mm_per_px`` its footprint, which fades pattern
    detail finer than a pixel (no moire far away).

    Args:
        look: the table.
        X, Y: ``(H, W) float32`` table coordinates in mm (mat frame).
        mm_per_px: ``(H, W) float32`` size of a pixel on the table, mm.

    Returns:
        ``(H, W, 3) uint8`` BGR.
    """
    rng = np.random.default_rng(look.seed)
    H, W = X.shape
    light = np.array(look.light, np.float32)
    dark = np.array(look.dark, np.float32)
    g = np.deg2rad(look.grain_deg)
    c, s = np.float32(np.cos(g)), np.float32(np.sin(g))
    along = c * X + s * Y
    across = c * Y - s * X
    if look.kind == "wood":
        period = np.float32(look.scale_mm)
        plank_w = np.float32(period * rng.uniform(18, 30))
        warp = (_wrap_noise(rng, 64, along / 250, across / 12) * period * 1.5
                + _wrap_noise(rng, 128, along / 60, across / 4) * period * 0.25)
        ring = (0.5 + 0.5 * np.sin((across + warp) * np.float32(2 * np.pi) / period)) ** 2
        aa = np.clip(2.0 - 3.0 * mm_per_px / period, 0, 1)
        ring = aa * ring + (1 - aa) * np.float32(0.375)
        plank = np.floor(across / plank_w)
        tone = _hash01(plank, look.seed % 97)
        fibre = (_wrap_noise(rng, 256, along / 30, across / 0.7, cubic=False) * 0.12
                 * np.clip(1.25 - mm_per_px, 0, 1))
        t = 0.5 * ring + 0.3 * tone + 0.15 + fibre
        # seams between planks (long edges) and butt joints along them, at least a pixel wide, faded when thinner
        half = np.maximum(np.float32(0.45), mm_per_px * 0.5)
        d_long = np.abs(across - (plank + 0.5) * plank_w)
        joint_len = np.float32(period * rng.uniform(150, 300))
        off = _hash01(plank, 7.0 + look.seed % 31) * joint_len
        d_joint = np.abs(np.mod(along + off, joint_len) - joint_len / 2)
        seam = (d_long > plank_w / 2 - half) | (d_joint > joint_len / 2 - half)
        img = _colour_lut(t, light, dark)
        fade = np.clip(0.9 / (2 * half), 0, 1)[seam]
        img[seam] = (img[seam] * (1 - 0.45 * fade)[:, None]).astype(np.uint8)
        return img
    if look.kind == "cloth":
        mott = _wrap_noise(rng, 128, X / 40, Y / 40) * 0.06 + _wrap_noise(rng, 256, X / 8, Y / 8) * 0.03
        speck = rng.standard_normal((H, W), dtype=np.float32) * 0.05
        t = np.clip(0.5 + mott * 4 + speck, 0, 1)
        wrinkle = 1 + _wrap_noise(rng, 64, X / 80, Y / 80) * 0.05
        t3 = t[..., None] * 0.3
        img = (light[None, None] * (1 - t3) + dark[None, None] * t3) * wrinkle[..., None]
    else:
        mott = _wrap_noise(rng, 128, X / 50, Y / 50) * 0.02 + rng.standard_normal((H, W), dtype=np.float32) * 0.01
        img = light[None, None] * (1 + mott[..., None])
    return np.clip(img, 0, 255).astype(np.uint8)
