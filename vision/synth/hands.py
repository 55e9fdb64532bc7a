"""Hands over the board: a forearm, palm, four fingers and a thumb drawn in the
image plane with soft shading, nails, an optional sleeve, an optional held
tile, and a blurred drop shadow on the scene below.

The hand is built in a local frame measured in millimetres: ``u`` runs from
the wrist towards the fingertips, ``v`` across the hand; the middle
fingertip sits at ``u = 0, v = 0``, which is :attr:`HandPose.tip` in the
image.  Sizes are those of an adult hand (palm about 85 x 100 mm, fingers
60-85 mm, Pheasant & Haslegrave, "Bodyspace", 3rd ed., table 10.3, rounded).
The whole hand is scaled by :attr:`HandPose.scale` image px per mm, which
the scene sets slightly above the board's scale because a hand hovers above
the tiles, nearer the camera.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

SKIN_TONES = ((170, 190, 230), (140, 170, 220), (120, 150, 200), (95, 125, 175),
              (75, 100, 150), (55, 75, 115), (45, 60, 95))
SLEEVE_COLOURS = ((40, 40, 40), (120, 70, 30), (200, 200, 200), (60, 60, 150), (50, 110, 60),
                  (150, 150, 150), (30, 30, 90), (140, 100, 80))

_FINGERS = (  # (v offset of knuckle, width, length) in mm, index -> pinky, right hand, thumb at -v
    (-28.0, 19.0, 74.0), (-9.0, 19.5, 82.0), (10.0, 18.5, 77.0), (28.0, 16.0, 62.0))
_PALM_W, _PALM_L = 86.0, 100.0


@dataclass(frozen=True)
class HandPose:
    """One hand in image coordinates.

    Attributes:
        tip: ``(x, y)`` px where the middle fingertip points (over a tile).
        angle_deg: image direction from wrist to fingertips (0 = +x, 90 = +y down).
        scale: image px per mm of the hand.
        skin: BGR skin colour.
        sleeve: BGR sleeve colour, or None for a bare forearm.
        sleeve_mm: distance from the wrist to the sleeve's cuff.
        spread_deg: angle between neighbouring fingers.
        curl: 0 (flat, extended) to 1 (curled: fingers look shorter).
        right: right hand (thumb on the left seen from above) or left.
        carry: tiles held between thumb and fingers (0, 1 or 2).
        tile_bgr: ``(ivory, back)`` BGR colours of a held tile.
    """

    tip: tuple[float, float]
    angle_deg: float
    scale: float
    skin: tuple[float, float, float]
    sleeve: tuple[float, float, float] | None = None
    sleeve_mm: float = 80.0
    spread_deg: float = 6.0
    curl: float = 0.3
    right: bool = True
    carry: int = 0
    tile_bgr: tuple[tuple[float, float, float], tuple[float, float, float]] = ((215, 235, 245), (60, 130, 40))

    def moved(self, tip: tuple[float, float], carry: int | None = None) -> "HandPose":
        """The same hand with its tip elsewhere (and optionally a new tile count)."""
        return HandPose(tuple(map(float, tip)), self.angle_deg, self.scale, self.skin, self.sleeve,
                        self.sleeve_mm, self.spread_deg, self.curl, self.right,
                        self.carry if carry is None else carry, self.tile_bgr)


def sample_hand(rng: np.random.Generator, tip: tuple[float, float], angle_deg: float, scale: float,
                skin: tuple[float, float, float] | None = None) -> HandPose:
    """A random hand (skin, sleeve, pose) pointing at ``tip`` from ``angle_deg``."""
    if skin is None:
        skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    skin = tuple(float(np.clip(c * rng.uniform(0.92, 1.08), 0, 255)) for c in skin)
    sleeve = SLEEVE_COLOURS[int(rng.integers(len(SLEEVE_COLOURS)))] if rng.random() < 0.6 else None
    return HandPose(tuple(map(float, tip)), float(angle_deg), float(scale), skin, sleeve,
                    float(rng.uniform(50, 160)), float(rng.uniform(1, 6)), float(rng.uniform(0.1, 0.7)),
                    bool(rng.random() < 0.8))


def _blur(a: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a float image, done at 1/2 or 1/4 resolution for wide kernels."""
    k = 4 if sigma > 12 else 2 if sigma > 4 else 1
    if k == 1:
        return cv2.GaussianBlur(a, (0, 0), sigma)
    h, w = a.shape[:2]
    small = cv2.resize(a, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma / k)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _frame(hand: HandPose):
    a = math.radians(hand.angle_deg)
    du = np.array([math.cos(a), math.sin(a)])
    dv = np.array([-math.sin(a), math.cos(a)])
    if not hand.right:
        dv = -dv
    tip = np.asarray(hand.tip, np.float64)
    s = hand.scale

    def at(u, v):
        return tip + du * (u * s) + dv * (v * s)
    return at, du, dv


def hand_outline(hand: HandPose) -> np.ndarray:
    """``(M, 2) float64`` image points bounding the hand (palm, fingers, wrist), no arm."""
    at, _, _ = _frame(hand)
    knuckle_u = -_FINGERS[1][2] * (1 - 0.45 * hand.curl)
    pts = [at(knuckle_u - _PALM_L * 1.3, v) for v in (-60, 60)]
    pts += [at(u, v) for u in (knuckle_u, 5.0) for v in (-55, 55)]
    return np.array(pts)


def draw_hand(img: np.ndarray, hand: HandPose, light_dir=(0.4, -0.6), shadow_px=(10.0, 14.0),
              shadow_strength: float = 0.45) -> np.ndarray:
    """Draw ``hand`` into ``img`` in place (drop shadow first, then the hand).

    Args:
        img: ``(H, W, 3) uint8`` BGR frame.
        hand: the hand.
        light_dir: image-plane direction the light comes from (unit-ish), for
            the shading of the rounded fingers.
        shadow_px: offset of the drop shadow in px.
        shadow_strength: darkening at the shadow's core, 0-1.

    Returns:
        ``(H, W) bool`` mask of the pixels the hand covers (alpha > 0.5).
    """
    H, W = img.shape[:2]
    at, du, dv = _frame(hand)
    s = hand.scale
    curl = hand.curl
    knuckle_u = -_FINGERS[1][2] * (1 - 0.45 * curl)
    wrist_u = knuckle_u - _PALM_L
    far = -(W + H) / s * 1.5  # forearm runs out of the frame
    # bounding box of everything (clipped), padded for blur and shadow
    outline = [at(u, v) for u in (8.0, far) for v in (-70, 70)]
    pad = int(8 * s + abs(shadow_px[0]) + abs(shadow_px[1]) + 4)
    box = np.array(outline)
    x0 = int(max(0, math.floor(box[:, 0].min()) - pad)); x1 = int(min(W, math.ceil(box[:, 0].max()) + pad))
    y0 = int(max(0, math.floor(box[:, 1].min()) - pad)); y1 = int(min(H, math.ceil(box[:, 1].max()) + pad))
    mask_full = np.zeros((H, W), bool)
    if x1 <= x0 or y1 <= y0:
        return mask_full
    rw, rh = x1 - x0, y1 - y0
    origin = np.array([x0, y0], np.float64)
    SH = 3  # sub-pixel bits

    def P(p):
        return np.round((np.asarray(p, np.float64) - origin) * (1 << SH)).astype(np.int32)

    canvas = np.zeros((rh, rw, 3), np.float32)
    alpha = np.zeros((rh, rw), np.uint8)
    skin = np.array(hand.skin, np.float32)
    dark = tuple(float(c) for c in skin * 0.72)
    skin_t = tuple(float(c) for c in skin)

    def poly(pts, colour):
        p = P(pts)
        cv2.fillConvexPoly(canvas, p, colour, cv2.LINE_AA, SH)
        cv2.fillConvexPoly(alpha, p, 255, cv2.LINE_AA, SH)

    circle = np.stack([np.cos(np.linspace(0, 2 * np.pi, 16, endpoint=False)),
                       np.sin(np.linspace(0, 2 * np.pi, 16, endpoint=False))], axis=1)

    def stroke(a, b, width_mm, colour, mark=True, taper=0.82):
        # a finger: the hull of a circle at the base and a smaller one at the tip
        r0 = max(0.5, width_mm * s / 2)
        pts = np.vstack([np.asarray(a) + circle * r0, np.asarray(b) + circle * r0 * taper])
        hull = cv2.convexHull(P(pts))
        cv2.fillConvexPoly(canvas, hull, colour, cv2.LINE_AA, SH)
        if mark:
            cv2.fillConvexPoly(alpha, hull, 255, cv2.LINE_AA, SH)

    # forearm (tapered), then sleeve
    # the forearm widens towards the elbow, which is also nearer the camera
    arm = [at(wrist_u + 10, -34), at(wrist_u + 10, 34), at(wrist_u - 220, 52), at(far, 75),
           at(far, -75), at(wrist_u - 220, -52)]
    poly(arm, skin_t)
    if hand.sleeve is not None:
        cu = wrist_u - hand.sleeve_mm
        wc = 34 + 18 * min(1.0, hand.sleeve_mm / 220) + 4
        poly([at(cu, -wc), at(cu, wc), at(far, 82), at(far, -82)], tuple(float(c) for c in hand.sleeve))
    # palm: a rounded quad (ellipse polygon)
    # thumb from the palm's side near the wrist, angled outwards (forward when holding),
    # drawn first so that the palm covers its root
    th_ang = math.radians(-15 if hand.carry else -32)
    t0 = np.array([wrist_u + 30, -30.0])
    t1 = t0 + 52 * (1 - 0.3 * curl) * np.array([math.cos(th_ang), math.sin(th_ang)])
    stroke(at(*t0), at(*t1), 23, dark)
    stroke(at(*t0), at(*t1), 23 - max(2.0 / s, 0.12 * 23), skin_t, mark=False)
    thumb_tip = (t1, th_ang, 21)
    # palm: a superellipse (squarish with rounded corners), slightly narrower at the wrist
    th = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    cu_, sv_ = np.cos(th), np.sin(th)
    pu = np.sign(cu_) * np.abs(cu_) ** (2 / 3.5) * _PALM_L * 0.53
    pv = np.sign(sv_) * np.abs(sv_) ** (2 / 3.5) * _PALM_W * 0.5 * (0.92 + 0.08 * np.sign(cu_) * np.abs(cu_))
    c0 = knuckle_u - _PALM_L * 0.5
    palm = np.array([at(c0 + a_, b_) for a_, b_ in zip(pu, pv)])
    poly(palm, skin_t)
    # the web of skin between thumb and index finger
    web = [at(*(t0 + (t1 - t0) * 0.55)), at(*t0), at(knuckle_u - 12, -36.0), at(knuckle_u + 2, -30.0)]
    poly(web, skin_t)
    # a held tile, between thumb and index finger
    if hand.carry:
        ivory, back = hand.tile_bgr
        for k in range(hand.carry):
            cu, cv_ = knuckle_u * 0.45 - 6 * k, -30.0 - 10 * k
            rect = [at(cu + 20, cv_ - 15), at(cu + 20, cv_ + 15), at(cu - 20, cv_ + 15), at(cu - 20, cv_ - 15)]
            poly(rect, tuple(float(c) for c in back))
            inner = [at(cu + 18, cv_ - 15), at(cu + 18, cv_ + 9), at(cu - 20, cv_ + 9), at(cu - 20, cv_ - 15)]
            poly(inner, tuple(float(c) for c in ivory))
    # fingers, pinky first so the index lies on top; each an outline then a fill
    finger_tips = [thumb_tip]
    for k in (3, 2, 1, 0):
        v0, w, length = _FINGERS[k]
        spread = math.radians(hand.spread_deg * (k - 1.3))
        eff = length * (1 - 0.45 * curl) * (0.75 if hand.carry and k == 0 else 1.0)
        base = np.array([knuckle_u + 4, v0 * 0.95])
        tipp = base + eff * np.array([math.cos(spread), math.sin(spread)])
        a, b = at(*base), at(*tipp)
        stroke(a, b, w, dark)
        stroke(a, b, w - max(2.0 / s, 0.12 * w), skin_t, mark=False)
        finger_tips.append((tipp, spread, w))
    # nails: a lighter, pinker spot near each tip
    nail = tuple(float(c) for c in np.clip(skin * np.array([1.03, 1.05, 1.08]) + 6, 0, 255))
    for tipp, a_, w in finger_tips:
        d = np.array([math.cos(a_), math.sin(a_)])
        c0 = at(*(tipp - d * 8))
        c1 = at(*(tipp - d * 3))
        stroke(c0, c1, w * 0.45, nail, mark=False)
    # shading: rounded look from a blurred alpha (thick parts bright, edges dark),
    # a directional term from its gradient, and a little skin mottling
    a = alpha.astype(np.float32) / 255.0
    sig = max(1.0, 4.0 * s)
    hm = _blur(a, sig)
    gx = cv2.Sobel(hm, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(hm, cv2.CV_32F, 0, 1, ksize=3)
    lx, ly = light_dir
    shade = 0.72 + 0.34 * hm - (gx * lx + gy * ly) * (1.5 * sig)
    shade = np.clip(shade, 0.5, 1.1)
    canvas *= shade[..., None]
    # drop shadow on the scene below
    roi = img[y0:y1, x0:x1].astype(np.float32)
    if shadow_strength > 0:
        M = np.float32([[1, 0, shadow_px[0]], [0, 1, shadow_px[1]]])
        sh = cv2.warpAffine(a, M, (rw, rh))
        sh = _blur(sh, max(1.0, 6.0 * s))
        roi *= (1 - shadow_strength * sh)[..., None]
    roi = roi * (1 - a[..., None]) + canvas  # canvas is premultiplied by alpha at its rim
    img[y0:y1, x0:x1] = np.clip(roi, 0, 255).astype(np.uint8)
    mask_full[y0:y1, x0:x1] = alpha > 127
    return mask_full
