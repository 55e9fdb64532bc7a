"""Original tile art for the four games, and printable tile sheets.

Every face is drawn from scratch with OpenCV primitives, no bitmaps.  Latin
numerals and letters use the fonts inside OpenCV (OpenCV 5: the embedded
variable sans and italic faces through ``cv2.FontFace``; OpenCV 4: Hershey
vector fonts).  Chinese numerals and calligraphy are our own brush-stroke
polylines (``_CJK``): OpenCV 4's ``putText`` cannot draw CJK and a CJK font is
not reliably present on a fresh machine, so the strokes look the same
everywhere.

Design language (rule books in ../shared/seeds/, section 1.3 "Visual
Aesthetics" of each; accessibility: "every tile features standard Western
numerals and ... icons alongside traditional Chinese calligraphy, accompanied by
distinct geometric border patterns"):

* every face carries a Western numeral or letter label, an icon, a Chinese
  numeral or calligraphy where the game has it, and a geometric border pattern
  that differs per suit, so that no face depends on colour alone;
* ``love``: crimson, rose pink and rose-gold on porcelain white; hearts,
  roses and envelopes as pips, seasons and cupids as large emblems with their
  own calligraphy (春夏秋冬, 矢弓羽), glass tiles as faceted gems (心 / 火);
* ``candy``: pastel pinks, sky blue and mint on glossy white, extra-bold
  numerals; peppermints, chocolate bars and gummy bears as pips, flavour winds
  with 東南西北, cupcakes and the bonus treats / sugar-glass flowers with a seal;
* ``mindful``: jade, mahogany and cinnabar on cream parchment, the classic
  bamboo sticks, 萬 characters and circles; winds 東南西北 with a compass,
  dragons 中 / 發 / a white-dragon frame; seasons and flowers with a seal;
* ``word``: ink on ivory, big capitals; vowels sit in a gold cartouche, rare
  letters (Q X Z) are oxblood with three diamonds, the wildcard is a star.

Geometry: a face is the upright top of a 30 x 40 mm tile (x right, y down, mm
from the face's top-left corner).  Renders up to 5 px/mm (the scene
generator's 2-4 px/mm) are reduced with ``cv2.INTER_AREA`` from a cached
10 px/mm master; larger ones are drawn at ``max(20, 2 * px_per_mm)`` px/mm and
reduced, so edges stay clean at every size.  Strokes and numerals are thick on
purpose.
"""

from __future__ import annotations

import json
import math
import zlib
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from companion.errors import BadInput
from companion.tiles import CHINESE_NUMERALS, VARIANTS, Face, tileset

FACE_MM: tuple[int, int] = (30, 40)
"""Face size in mm, (width, height)."""

DEFAULT_PX_PER_MM = 10.0
_MIN_DRAW_PX_PER_MM = 20.0
_SHIFT = 4
_FIX = 1 << _SHIFT

Color = tuple[int, int, int]


def _c(hexrgb: str) -> Color:
    """``"#RRGGBB"`` -> BGR tuple."""
    h = hexrgb.lstrip("#")
    return (int(h[4:6], 16), int(h[2:4], 16), int(h[0:2], 16))


def _mix(a: Color, b: Color, t: float) -> Color:
    return tuple(int(round(a[i] * (1 - t) + b[i] * t)) for i in range(3))  # type: ignore[return-value]


# --------------------------------------------------------------------------
# Chinese characters as brush strokes.  Unit box, x right, y down.  Each stroke
# is (kind, points); the kind sets the width profile along the stroke:
# h/v/z uniform (pressed start), p left-falling (tapers), n right-falling
# (swells), d dot (swells), t rising (tapers).

_CJK: dict[str, list[tuple[str, list[tuple[float, float]]]]] = {
    "一": [("h", [(0.06, 0.53), (0.94, 0.47)])],
    "二": [("h", [(0.2, 0.28), (0.8, 0.25)]), ("h", [(0.05, 0.76), (0.95, 0.72)])],
    "三": [("h", [(0.18, 0.14), (0.82, 0.11)]), ("h", [(0.26, 0.47), (0.74, 0.45)]),
          ("h", [(0.05, 0.84), (0.95, 0.8)])],
    "四": [("v", [(0.08, 0.16), (0.08, 0.9)]), ("z", [(0.08, 0.16), (0.92, 0.16), (0.92, 0.9)]),
          ("p", [(0.4, 0.18), (0.38, 0.46), (0.2, 0.66)]),
          ("z", [(0.6, 0.18), (0.6, 0.58), (0.78, 0.6)]), ("h", [(0.08, 0.86), (0.92, 0.86)])],
    "五": [("h", [(0.12, 0.1), (0.88, 0.08)]), ("v", [(0.48, 0.09), (0.38, 0.86)]),
          ("z", [(0.16, 0.44), (0.76, 0.44), (0.72, 0.86)]), ("h", [(0.04, 0.88), (0.96, 0.86)])],
    "六": [("d", [(0.42, 0.02), (0.56, 0.18)]), ("h", [(0.06, 0.34), (0.94, 0.32)]),
          ("p", [(0.36, 0.5), (0.28, 0.72), (0.1, 0.9)]),
          ("d", [(0.62, 0.52), (0.76, 0.7), (0.88, 0.86)])],
    "七": [("t", [(0.04, 0.54), (0.96, 0.36)]),
          ("z", [(0.36, 0.04), (0.36, 0.8), (0.46, 0.9), (0.88, 0.9), (0.94, 0.72)])],
    "八": [("p", [(0.4, 0.12), (0.36, 0.5), (0.04, 0.9)]), ("n", [(0.58, 0.1), (0.66, 0.5), (0.96, 0.88)])],
    "九": [("p", [(0.42, 0.02), (0.42, 0.42), (0.32, 0.7), (0.04, 0.94)]),
          ("z", [(0.08, 0.32), (0.7, 0.32), (0.68, 0.8), (0.76, 0.9), (0.92, 0.9), (0.96, 0.72)])],
    "萬": [("h", [(0.04, 0.13), (0.96, 0.13)]), ("v", [(0.3, 0.01), (0.3, 0.24)]),
          ("v", [(0.7, 0.01), (0.7, 0.24)]),
          ("v", [(0.22, 0.3), (0.22, 0.55)]), ("z", [(0.22, 0.3), (0.78, 0.3), (0.78, 0.55)]),
          ("h", [(0.22, 0.425), (0.78, 0.425)]), ("h", [(0.22, 0.55), (0.78, 0.55)]),
          ("v", [(0.5, 0.3), (0.5, 0.92)]),
          ("v", [(0.1, 0.64), (0.1, 0.99)]), ("z", [(0.1, 0.64), (0.9, 0.64), (0.9, 0.92), (0.8, 0.99)]),
          ("z", [(0.36, 0.72), (0.26, 0.86), (0.72, 0.84)]), ("d", [(0.62, 0.74), (0.72, 0.88)])],
    "東": [("h", [(0.06, 0.16), (0.94, 0.16)]), ("v", [(0.5, 0.01), (0.5, 0.99)]),
          ("v", [(0.2, 0.28), (0.2, 0.63)]), ("z", [(0.2, 0.28), (0.8, 0.28), (0.8, 0.63)]),
          ("h", [(0.2, 0.455), (0.8, 0.455)]), ("h", [(0.2, 0.63), (0.8, 0.63)]),
          ("p", [(0.45, 0.67), (0.3, 0.8), (0.04, 0.93)]), ("n", [(0.55, 0.67), (0.72, 0.8), (0.96, 0.93)])],
    "南": [("h", [(0.06, 0.14), (0.94, 0.14)]), ("v", [(0.5, 0.01), (0.5, 0.3)]),
          ("v", [(0.1, 0.32), (0.1, 0.99)]), ("z", [(0.1, 0.32), (0.9, 0.32), (0.9, 0.92), (0.8, 0.99)]),
          ("d", [(0.33, 0.41), (0.41, 0.52)]), ("d", [(0.67, 0.41), (0.59, 0.52)]),
          ("h", [(0.26, 0.59), (0.74, 0.59)]), ("h", [(0.22, 0.77), (0.78, 0.77)]),
          ("v", [(0.5, 0.59), (0.5, 0.99)])],
    "西": [("h", [(0.04, 0.1), (0.96, 0.1)]), ("v", [(0.1, 0.34), (0.1, 0.96)]),
          ("z", [(0.1, 0.34), (0.9, 0.34), (0.9, 0.96)]),
          ("p", [(0.38, 0.12), (0.38, 0.5), (0.24, 0.7)]),
          ("z", [(0.62, 0.12), (0.62, 0.62), (0.7, 0.68), (0.82, 0.68)]), ("h", [(0.1, 0.91), (0.9, 0.91)])],
    "北": [("v", [(0.36, 0.04), (0.36, 0.96)]), ("h", [(0.08, 0.4), (0.36, 0.4)]),
          ("t", [(0.04, 0.84), (0.36, 0.68)]),
          ("z", [(0.64, 0.04), (0.64, 0.84), (0.72, 0.92), (0.92, 0.92), (0.96, 0.76)]),
          ("t", [(0.64, 0.5), (0.92, 0.32)])],
    "中": [("v", [(0.1, 0.27), (0.1, 0.71)]), ("z", [(0.1, 0.27), (0.9, 0.27), (0.9, 0.71)]),
          ("h", [(0.1, 0.67), (0.9, 0.67)]), ("v", [(0.5, 0.01), (0.5, 0.99)])],
    "發": [("z", [(0.1, 0.07), (0.38, 0.07), (0.06, 0.42)]), ("d", [(0.2, 0.22), (0.3, 0.3)]),
          ("d", [(0.3, 0.3), (0.42, 0.4)]),
          ("h", [(0.62, 0.12), (0.84, 0.08)]), ("d", [(0.76, 0.01), (0.84, 0.1)]),
          ("n", [(0.56, 0.03), (0.66, 0.22), (0.96, 0.42)]),
          ("z", [(0.06, 0.5), (0.4, 0.5), (0.38, 0.63), (0.1, 0.63), (0.08, 0.77), (0.42, 0.77),
                 (0.4, 0.96), (0.28, 0.92)]),
          ("p", [(0.6, 0.47), (0.58, 0.6), (0.5, 0.67)]),
          ("z", [(0.6, 0.47), (0.8, 0.47), (0.8, 0.6), (0.92, 0.63)]),
          ("z", [(0.54, 0.71), (0.88, 0.71), (0.72, 0.86), (0.52, 0.98)]),
          ("n", [(0.62, 0.78), (0.76, 0.9), (0.96, 0.98)])],
    "春": [("h", [(0.2, 0.14), (0.8, 0.13)]), ("h", [(0.24, 0.28), (0.76, 0.27)]),
          ("h", [(0.04, 0.42), (0.96, 0.41)]), ("p", [(0.5, 0.02), (0.46, 0.4), (0.3, 0.6), (0.04, 0.74)]),
          ("n", [(0.54, 0.44), (0.74, 0.6), (0.96, 0.72)]),
          ("v", [(0.31, 0.58), (0.31, 0.97)]), ("z", [(0.31, 0.58), (0.69, 0.58), (0.69, 0.97)]),
          ("h", [(0.31, 0.775), (0.69, 0.775)]), ("h", [(0.31, 0.95), (0.69, 0.95)])],
    "夏": [("h", [(0.04, 0.07), (0.96, 0.07)]),
          ("v", [(0.25, 0.17), (0.25, 0.56)]), ("z", [(0.25, 0.17), (0.75, 0.17), (0.75, 0.56)]),
          ("h", [(0.25, 0.3), (0.75, 0.3)]), ("h", [(0.25, 0.43), (0.75, 0.43)]),
          ("h", [(0.25, 0.56), (0.75, 0.56)]),
          ("p", [(0.42, 0.6), (0.3, 0.72), (0.12, 0.8)]),
          ("z", [(0.36, 0.68), (0.72, 0.68), (0.5, 0.85), (0.18, 0.98)]),
          ("n", [(0.42, 0.8), (0.66, 0.9), (0.96, 0.98)])],
    "秋": [("p", [(0.38, 0.04), (0.08, 0.14)]), ("h", [(0.04, 0.34), (0.44, 0.33)]),
          ("v", [(0.24, 0.12), (0.24, 0.98)]), ("p", [(0.22, 0.42), (0.02, 0.72)]),
          ("d", [(0.28, 0.48), (0.42, 0.6)]),
          ("d", [(0.54, 0.26), (0.6, 0.44)]), ("d", [(0.92, 0.22), (0.84, 0.42)]),
          ("p", [(0.74, 0.04), (0.72, 0.5), (0.48, 0.97)]),
          ("n", [(0.74, 0.56), (0.86, 0.8), (0.98, 0.96)])],
    "冬": [("p", [(0.46, 0.02), (0.3, 0.2), (0.08, 0.34)]),
          ("z", [(0.38, 0.14), (0.78, 0.14), (0.5, 0.38), (0.14, 0.56)]),
          ("n", [(0.4, 0.3), (0.66, 0.46), (0.96, 0.56)]),
          ("d", [(0.4, 0.64), (0.56, 0.74)]), ("d", [(0.32, 0.82), (0.54, 0.96)])],
    "弓": [("z", [(0.14, 0.06), (0.78, 0.06), (0.76, 0.38), (0.24, 0.38), (0.2, 0.64), (0.84, 0.64),
                 (0.82, 0.9), (0.68, 0.98), (0.56, 0.92)])],
    "矢": [("p", [(0.3, 0.02), (0.14, 0.3)]), ("h", [(0.2, 0.24), (0.84, 0.23)]),
          ("h", [(0.04, 0.52), (0.96, 0.51)]), ("p", [(0.5, 0.24), (0.48, 0.52), (0.3, 0.8), (0.04, 0.97)]),
          ("n", [(0.52, 0.6), (0.74, 0.82), (0.97, 0.96)])],
    "羽": [("z", [(0.04, 0.08), (0.42, 0.08), (0.42, 0.9), (0.32, 0.97)]), ("d", [(0.12, 0.28), (0.24, 0.4)]),
          ("t", [(0.06, 0.74), (0.32, 0.56)]),
          ("z", [(0.54, 0.08), (0.94, 0.08), (0.94, 0.9), (0.84, 0.97)]), ("d", [(0.62, 0.28), (0.74, 0.4)]),
          ("t", [(0.56, 0.74), (0.84, 0.56)])],
    "心": [("d", [(0.06, 0.5), (0.16, 0.74)]),
          ("z", [(0.3, 0.22), (0.3, 0.84), (0.38, 0.93), (0.78, 0.93), (0.86, 0.76)]),
          ("d", [(0.46, 0.14), (0.58, 0.36)]), ("d", [(0.76, 0.3), (0.92, 0.56)])],
    "火": [("d", [(0.14, 0.3), (0.22, 0.52)]), ("d", [(0.86, 0.26), (0.76, 0.48)]),
          ("p", [(0.5, 0.02), (0.5, 0.5), (0.34, 0.78), (0.04, 0.97)]),
          ("n", [(0.52, 0.56), (0.72, 0.8), (0.97, 0.96)])],
}


def _stroke_width(kind: str, t: float) -> float:
    """Relative brush width at arclength fraction ``t`` of a stroke of ``kind``."""
    if kind == "p":
        return 1.12 - 0.8 * t
    if kind == "t":
        return 1.15 - 0.75 * t
    if kind == "n":
        return 0.6 + 0.75 * t if t < 0.85 else 1.24 - 2.5 * (t - 0.85)
    if kind == "d":
        return 0.65 + 0.6 * t
    # h / v / z: a pressed start, an even body and a slight swell at the end
    if t < 0.06:
        return 1.08 - 1.3 * t
    if t > 0.9:
        return 1.0 + 0.6 * (t - 0.9)
    return 1.0


def _brush_polygons(strokes, x0: float, y0: float, w: float, h: float, width: float):
    """Yield (p0, p1, r0, r1) brush segments in the caller's units."""
    for kind, pts in strokes:
        p = np.array([(x0 + u * w, y0 + v * h) for u, v in pts], np.float64)
        seg = np.hypot(*np.diff(p, axis=0).T)
        total = float(seg.sum()) or 1.0
        dense = [p[0]]
        for i in range(len(seg)):
            n = max(1, int(math.ceil(seg[i] / (0.04 * max(w, h)))))
            for k in range(1, n + 1):
                dense.append(p[i] + (p[i + 1] - p[i]) * k / n)
        dense = np.array(dense)
        cum = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(dense, axis=0).T))]) / total
        radii = [0.5 * width * max(0.12, _stroke_width(kind, float(t))) for t in cum]
        for i in range(len(dense) - 1):
            yield dense[i], dense[i + 1], radii[i], radii[i + 1]


# --------------------------------------------------------------------------
# Drawing in millimetres.

class _Pen:
    """A BGR uint8 canvas of one face (or any mm-sized area) at ``s`` px/mm.

    All coordinates are mm (x right, y down); widths are mm.  Drawing uses
    anti-aliased OpenCV primitives with sub-pixel ``shift``.
    """

    def __init__(self, s: float, bg: Color | None, size_mm: tuple[float, float] = FACE_MM):
        self.s = s
        self.h = int(round(size_mm[1] * s))
        self.w = int(round(size_mm[0] * s))
        self.img = np.full((self.h, self.w, 3), bg, np.uint8) if bg is not None else None

    # coordinates -----------------------------------------------------------
    def p(self, x: float, y: float) -> tuple[int, int]:
        return (int(round((x * self.s - 0.5) * _FIX)), int(round((y * self.s - 0.5) * _FIX)))

    def pts(self, seq) -> np.ndarray:
        a = np.asarray(seq, np.float64) * self.s - 0.5
        return np.round(a * _FIX).astype(np.int32)

    def wpx(self, mm: float) -> int:
        return max(1, int(round(mm * self.s)))

    # primitives --------------------------------------------------------------
    def circle(self, c, r: float, color: Color, width: float | None = None) -> None:
        th = -1 if width is None else self.wpx(width)
        cv2.circle(self.img, self.p(*c), max(1, int(round(r * self.s * _FIX))), color, th,
                   cv2.LINE_AA, _SHIFT)

    def line(self, a, b, color: Color, width: float) -> None:
        cv2.line(self.img, self.p(*a), self.p(*b), color, self.wpx(width), cv2.LINE_AA, _SHIFT)

    def polyline(self, seq, color: Color, width: float, closed: bool = False) -> None:
        cv2.polylines(self.img, [self.pts(seq)], closed, color, self.wpx(width), cv2.LINE_AA, _SHIFT)

    def fill(self, seq, color: Color) -> None:
        cv2.fillPoly(self.img, [self.pts(seq)], color, cv2.LINE_AA, _SHIFT)

    def ellipse(self, c, axes, angle: float, color: Color, width: float | None = None,
                start: float = 0, end: float = 360) -> None:
        th = -1 if width is None else self.wpx(width)
        ax = (max(1, int(round(axes[0] * self.s * _FIX))), max(1, int(round(axes[1] * self.s * _FIX))))
        cv2.ellipse(self.img, self.p(*c), ax, angle, start, end, color, th, cv2.LINE_AA, _SHIFT)

    def rect(self, x0, y0, x1, y1, color: Color, width: float | None = None) -> None:
        seq = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        if width is None:
            self.fill(seq, color)
        else:
            self.polyline(seq, color, width, closed=True)

    def rounded_rect(self, x0, y0, x1, y1, r, color: Color, width: float | None = None) -> None:
        seq = _rounded_rect_pts(x0, y0, x1, y1, r)
        if width is None:
            self.fill(seq, color)
        else:
            self.polyline(seq, color, width, closed=True)

    # masks -------------------------------------------------------------------
    def paint(self, mask: np.ndarray, x_px: int, y_px: int, color: Color, alpha: float = 1.0) -> None:
        """Blend ``color`` through float mask (0..1) placed with its top-left at (x_px, y_px)."""
        mh, mw = mask.shape
        ya, xa = max(0, y_px), max(0, x_px)
        yb, xb = min(self.h, y_px + mh), min(self.w, x_px + mw)
        if ya >= yb or xa >= xb:
            return
        m = mask[ya - y_px:yb - y_px, xa - x_px:xb - x_px, None] * alpha
        reg = self.img[ya:yb, xa:xb].astype(np.float32)
        reg += (np.array(color, np.float32) - reg) * m
        self.img[ya:yb, xa:xb] = np.clip(reg + 0.5, 0, 255).astype(np.uint8)

    def text(self, text: str, box, color: Color, face: str = "sans", weight: int = 800,
             halign: str = "center", valign: str = "center",
             shadow: Color | None = None, tight: bool = True) -> tuple[float, float, float, float]:
        """Fit ``text`` inside ``box`` (x0, y0, x1, y1 mm), keeping its aspect.

        ``face`` is "sans" or "italic", ``weight`` 100..1000 (see :func:`_text_mask`);
        ``tight=False`` fits the cap-to-descender band instead of the ink, so that
        glyphs of different heights keep one size.
        Returns the mm box actually covered.
        """
        mask = _text_mask(text, face, weight, tight)
        return self._place(mask, box, color, halign, valign, shadow)

    def cjk(self, char: str, box, color: Color, weight: float = 0.11,
            shadow: Color | None = None) -> None:
        """Draw one Chinese character from :data:`_CJK` as brush strokes filling ``box`` (mm)."""
        x0, y0, x1, y1 = box
        w, h = (x1 - x0) * self.s, (y1 - y0) * self.s
        n = len(_CJK[char])
        width = weight * min(w, h) * (1.0 if n <= 5 else 0.86 if n <= 8 else 0.74)
        pad = int(math.ceil(width)) + 2
        mw, mh = int(math.ceil(w)) + 2 * pad, int(math.ceil(h)) + 2 * pad
        m = np.zeros((mh, mw), np.uint8)
        for a, b, ra, rb in _brush_polygons(_CJK[char], pad, pad, w, h, width):
            _brush_segment(m, a, b, ra, rb)
        mask = m.astype(np.float32) / 255.0
        px, py = int(round(x0 * self.s)) - pad, int(round(y0 * self.s)) - pad
        if shadow is not None:
            off = max(1, int(round(0.25 * self.s)))
            self.paint(mask, px + off, py + off, shadow)
        self.paint(mask, px, py, color)

    def _place(self, mask, box, color, halign, valign, shadow):
        x0, y0, x1, y1 = box
        bw, bh = (x1 - x0) * self.s, (y1 - y0) * self.s
        mh, mw = mask.shape
        k = min(bw / mw, bh / mh)
        tw, th = max(1, int(round(mw * k))), max(1, int(round(mh * k)))
        interp = cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR
        m = cv2.resize(mask, (tw, th), interpolation=interp)
        if halign == "left":
            px = x0 * self.s
        elif halign == "right":
            px = x1 * self.s - tw
        else:
            px = (x0 + x1) / 2 * self.s - tw / 2
        if valign == "top":
            py = y0 * self.s
        elif valign == "bottom":
            py = y1 * self.s - th
        else:
            py = (y0 + y1) / 2 * self.s - th / 2
        px, py = int(round(px)), int(round(py))
        if shadow is not None:
            off = max(1, int(round(0.25 * self.s)))
            self.paint(m, px + off, py + off, shadow)
        self.paint(m, px, py, color)
        return (px / self.s, py / self.s, (px + tw) / self.s, (py + th) / self.s)


def _brush_segment(m: np.ndarray, a, b, ra: float, rb: float) -> None:
    """One tapered brush segment (two discs and their convex hull) into uint8 mask ``m``."""
    d = b - a
    n = math.hypot(*d)
    for c, r in ((a, ra), (b, rb)):
        cv2.circle(m, (int(round(c[0] * _FIX)), int(round(c[1] * _FIX))),
                   max(1, int(round(r * _FIX))), 255, -1, cv2.LINE_AA, _SHIFT)
    if n < 1e-6:
        return
    nx, ny = -d[1] / n, d[0] / n
    quad = np.array([[a[0] + nx * ra, a[1] + ny * ra], [b[0] + nx * rb, b[1] + ny * rb],
                     [b[0] - nx * rb, b[1] - ny * rb], [a[0] - nx * ra, a[1] - ny * ra]])
    cv2.fillConvexPoly(m, np.round(quad * _FIX).astype(np.int32), 255, cv2.LINE_AA, _SHIFT)


@lru_cache(maxsize=4)
def _font_face(name: str):
    return cv2.FontFace(name)


_HERSHEY = {"sans": cv2.FONT_HERSHEY_DUPLEX, "italic": cv2.FONT_HERSHEY_SCRIPT_SIMPLEX}


@lru_cache(maxsize=1024)
def _text_mask(text: str, face: str = "sans", weight: int = 800, tight: bool = True) -> np.ndarray:
    """Tight float32 mask (0..1) of ``text``, glyph height about 160 px.

    OpenCV 5 draws its embedded variable sans / italic faces (``cv2.FontFace``,
    weight 100..1000); OpenCV 4 falls back to Hershey vector fonts with a stroke
    thickness standing in for the weight.  Boxes are fitted after cropping, so the
    layout is the same either way.
    """
    size = 160
    pad = 40
    m = np.zeros((size * 2 + 2 * pad, int(size * 0.9 * len(text)) + 2 * pad + size), np.uint8)
    if hasattr(cv2, "FontFace"):
        cv2.putText(m, text, (pad, pad + int(size * 1.3)), 255, _font_face(face), size, weight)
    else:  # pragma: no cover - OpenCV 4.x
        font = _HERSHEY[face]
        scale = size / 22.0
        th = max(1, int(round(size * 0.05 * weight / 400)))
        cv2.putText(m, text, (pad, pad + int(size * 1.3)), font, scale, 255, th, cv2.LINE_AA)
    ys, xs = np.nonzero(m)
    if len(ys) == 0:  # pragma: no cover - blank text
        return np.zeros((1, 1), np.float32)
    if tight:
        y0, y1 = ys.min(), ys.max() + 1
    else:  # a fixed band from cap height to descender, so sizes stay consistent
        ref = np.nonzero(_band_probe(face, weight))[0]
        y0, y1 = ref.min(), ref.max() + 1
    m = m[y0:y1, xs.min():xs.max() + 1]
    out = m.astype(np.float32) / 255.0
    out.setflags(write=False)
    return out


@lru_cache(maxsize=16)
def _band_probe(face: str, weight: int) -> np.ndarray:
    """Row profile of "Hgjy" drawn exactly as in :func:`_text_mask` (cap top to descender)."""
    size, pad = 160, 40
    m = np.zeros((size * 2 + 2 * pad, int(size * 0.9 * 4) + 2 * pad + size), np.uint8)
    if hasattr(cv2, "FontFace"):
        cv2.putText(m, "Hgjy", (pad, pad + int(size * 1.3)), 255, _font_face(face), size, weight)
    else:  # pragma: no cover - OpenCV 4.x
        th = max(1, int(round(size * 0.05 * weight / 400)))
        cv2.putText(m, "Hgjy", (pad, pad + int(size * 1.3)), _HERSHEY[face], size / 22.0, 255, th, cv2.LINE_AA)
    return m.max(axis=1)


def _rounded_rect_pts(x0, y0, x1, y1, r, n: int = 8) -> list[tuple[float, float]]:
    out = []
    for cx, cy, a0 in ((x1 - r, y0 + r, -90), (x1 - r, y1 - r, 0), (x0 + r, y1 - r, 90), (x0 + r, y0 + r, 180)):
        for k in range(n + 1):
            a = math.radians(a0 + 90 * k / n)
            out.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return out


# --------------------------------------------------------------------------
# Palettes.

_PALETTES: dict[str, dict[str, Color]] = {
    # Love 1.3: porcelain-white faces, deep crimson and rose-gold.
    "love": {k: _c(v) for k, v in dict(
        bg="#FBF7F2", edge="#B76E79", bevel="#EBD3CF", ink="#6E0F22", crimson="#B3172F",
        rose="#D9466A", blush="#F8D3DB", gold="#C49A58", gold_dark="#8A6330", rosegold="#B76E79",
        rosegold_dark="#8E4B56", green="#5E8551", green_dark="#3A5F3E", sky="#8DB9CF",
        sky_dark="#4A7893", orange="#D9792E", white="#FFFFFF", cream="#FFF3E4").items()},
    # Candy 1.3: glossy porcelain-white faces, candy-pink and sky-blue, pastels.
    "candy": {k: _c(v) for k, v in dict(
        bg="#FFFCF8", edge="#F29BB9", bevel="#FBD8E4", ink="#7A3B5C", raspberry="#D63C72",
        pink="#F7A9C4", pink_light="#FCD9E6", blue="#3C86BF", sky="#A6D6F3", sky_light="#D9EEFA",
        mint="#7ACFAE", mint_dark="#2F9472", lemon="#FBE38E", lemon_dark="#C99A24",
        cocoa="#6B3E26", cocoa_light="#9A6446", cocoa_dark="#4A2817", lavender="#C9B3EE",
        lavender_dark="#7A5BB5", red="#D8475C", white="#FFFFFF", cream="#FFF4DC").items()},
    # Mindful 1.3: soft jade, warm mahogany, cream parchment, muted earth tones.
    "mindful": {k: _c(v) for k, v in dict(
        bg="#F3E9D3", edge="#6E3B28", bevel="#DCC9A6", ink="#2E241C", jade="#3F8A6B",
        jade_dark="#285E48", jade_light="#A8CDB7", mahogany="#7A3B26", cinnabar="#AE452F",
        ochre="#B98A3A", indigo="#3B5876", indigo_light="#A7B7C8", earth="#8A7356",
        plum="#9C5A74", cream="#FBF5E6", white="#FFFDF8").items()},
    # Word 1.3: polished ivory faces, ink, calligraphic type.
    "word": {k: _c(v) for k, v in dict(
        bg="#FBF4E2", edge="#5A3E2B", bevel="#E4D5B4", ink="#1F1B17", sepia="#6E5238",
        gold="#B8903A", gold_light="#EAD9A8", oxblood="#7B2420", navy="#22395A",
        white="#FFFFFF").items()},
}

# Type weight of numerals and labels per variant (100..1000).
_WEIGHTS = {"love": 700, "candy": 900, "mindful": 650, "word": 700}

# Border pattern per (variant, suit); distinct within each variant.
_BORDERS: dict[str, dict[str, str]] = {
    "love": {"hearts": "dots", "roses": "waves", "letters": "double", "season": "scallops",
             "cupid": "rope", "emotion": "diamonds", "passion": "checker"},
    "candy": {"hardcandy": "dots", "chocolate": "checker", "gummy": "zigzag", "wind": "waves",
              "cupcake": "scallops", "sprinkles": "confetti", "sugarglass": "diamonds"},
    "mindful": {"bamboo": "ladder", "characters": "double", "circles": "dots", "wind": "waves",
                "dragon": "fret", "season": "diamonds", "flower": "scallops"},
    "word": {"consonant": "double", "vowel": "dots", "rare": "diamonds", "wild": "stars"},
}

# --------------------------------------------------------------------------
# Frame: tile body colour at the rounded corners, a bevel, the face, a border.

_BAND_C = 2.35   # centre line of the border band, mm from the face edge


@lru_cache(maxsize=16)
def _shading(h: int, w: int, variant: str) -> np.ndarray:
    """Per-pixel brightness factor (float32, h x w): a soft light from the top left
    plus, for parchment and ivory, a faint deterministic paper texture."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    f = 1.0 + 0.035 * (1.0 - (xx / w + yy / h))
    if variant in ("mindful", "word"):
        rng = np.random.default_rng(zlib.crc32(variant.encode()))
        n = rng.standard_normal((max(2, h // 24), max(2, w // 24))).astype(np.float32)
        n = cv2.resize(n, (w, h), interpolation=cv2.INTER_CUBIC)
        f += (0.012 if variant == "mindful" else 0.007) * n
    f.setflags(write=False)
    return f


@lru_cache(maxsize=64)
def _blank(variant: str, s: float, pattern: str, color: Color) -> np.ndarray:
    """The framed face (body colour, bevel, shaded face, border pattern) at ``s`` px/mm."""
    pal = _PALETTES[variant]
    pen = _Pen(s, pal["edge"])
    _frame(pen, variant)
    _draw_border(pen, pattern, color, pal["bg"])
    pen.img.setflags(write=False)
    return pen.img


def _border(pen: _Pen, variant: str, pattern: str, color: Color) -> None:
    """Start a face: copy in the framed face with its border ``pattern`` in ``color``.
    Must come before any other drawing on ``pen``."""
    pen.img = _blank(variant, pen.s, pattern, color).copy()


def _frame(pen: _Pen, variant: str) -> None:
    pal = _PALETTES[variant]
    W, H = FACE_MM
    pen.rounded_rect(0.25, 0.25, W - 0.25, H - 0.25, 2.4, _mix(pal["edge"], pal["bevel"], 0.35))
    pen.rounded_rect(0.55, 0.55, W - 0.55, H - 0.55, 2.1, pal["bevel"])
    pen.rounded_rect(0.95, 0.95, W - 0.95, H - 0.95, 1.7, pal["bg"])
    f = _shading(pen.h, pen.w, variant)
    pen.img[:] = np.clip(pen.img.astype(np.float32) * f[..., None], 0, 255).astype(np.uint8)
    pen.rounded_rect(0.95, 0.95, W - 0.95, H - 0.95, 1.7, _mix(pal["bevel"], pal["edge"], 0.25), width=0.12)
    if variant == "candy":  # glossy highlight
        m = np.zeros((pen.h, pen.w), np.float32)
        cv2.ellipse(m, (int(pen.w * 0.22), int(pen.h * 0.1)), (int(pen.w * 0.3), int(pen.h * 0.07)),
                    -20, 0, 360, 1.0, -1, cv2.LINE_AA)
        m = cv2.GaussianBlur(m, (0, 0), pen.s * 0.8)
        pen.paint(m, 0, 0, (255, 255, 255), 0.35)


def _sides():
    """The four sides of the border band's centre line: (start, end, inward normal)."""
    W, H = FACE_MM
    c = _BAND_C
    return [((c, c), (W - c, c), (0.0, 1.0)), ((W - c, c), (W - c, H - c), (-1.0, 0.0)),
            ((W - c, H - c), (c, H - c), (0.0, -1.0)), ((c, H - c), (c, c), (1.0, 0.0))]


def _draw_border(pen: _Pen, pattern: str, color: Color, bg: Color) -> None:
    """Draw a geometric border ``pattern`` in the band 1.4..3.3 mm from the edge."""
    W, H = FACE_MM
    c = _BAND_C
    corners = [(c, c), (W - c, c), (W - c, H - c), (c, H - c)]
    for (P, Q, N) in _sides():
        P, Q, N = np.array(P), np.array(Q), np.array(N)
        L = float(np.hypot(*(Q - P)))
        T = (Q - P) / L

        def at(u, v, P=P, T=T, N=N):
            return tuple(P + T * u + N * v)

        usable0, usable1 = 1.5, L - 1.5
        span = usable1 - usable0
        if pattern == "dots":
            n = max(1, int(round(span / 2.0)))
            for k in range(n + 1):
                pen.circle(at(usable0 + span * k / n, -0.1), 0.55, color)
            pen.line(at(0, 0.9), at(L, 0.9), color, 0.22)
        elif pattern == "double":
            pass  # drawn as rectangles below
        elif pattern == "waves":
            n = max(1, int(round(span / 2.6)))
            pts = [at(usable0 + span * t / 200, 0.62 * math.sin(2 * math.pi * n * t / 200)) for t in range(201)]
            pen.polyline(pts, color, 0.42)
        elif pattern == "zigzag":
            n = max(1, int(round(span / 1.8)))
            pts = [at(usable0 + span * k / (2 * n), 0.7 if k % 2 else -0.7) for k in range(2 * n + 1)]
            pen.polyline(pts, color, 0.45)
        elif pattern == "checker":
            n = max(1, int(round(span / 0.95)))
            d = span / n
            for k in range(n):
                for row, v0 in enumerate((-0.95, 0.0)):
                    if (k + row) % 2 == 0:
                        u0 = usable0 + k * d
                        pen.fill([at(u0, v0), at(u0 + d, v0), at(u0 + d, v0 + 0.95), at(u0, v0 + 0.95)], color)
        elif pattern == "diamonds":
            n = max(1, int(round(span / 2.1)))
            for k in range(n):
                u = usable0 + span * (k + 0.5) / n
                pen.fill([at(u - 0.85, 0), at(u, -0.8), at(u + 0.85, 0), at(u, 0.8)], color)
        elif pattern == "scallops":
            n = max(1, int(round(span / 2.2)))
            for k in range(n):
                u0 = usable0 + span * k / n
                d = span / n
                pts = [at(u0 + d * t / 16, 0.75 - 1.35 * math.sin(math.pi * t / 16)) for t in range(17)]
                pen.polyline(pts, color, 0.4)
                pen.circle(at(u0 + d / 2, 0.15), 0.32, color)
            pen.line(at(0, 0.85), at(L, 0.85), color, 0.22)
        elif pattern == "rope":
            n = max(1, int(round(span / 1.1)))
            for k in range(n):
                u = usable0 + span * (k + 0.5) / n
                pen.line(at(u - 0.45, 0.62), at(u + 0.45, -0.62), color, 0.4)
            pen.line(at(0, -0.92), at(L, -0.92), color, 0.2)
            pen.line(at(0, 0.92), at(L, 0.92), color, 0.2)
        elif pattern == "ladder":
            pen.line(at(0, -0.78), at(L, -0.78), color, 0.34)
            pen.line(at(0, 0.78), at(L, 0.78), color, 0.34)
            n = max(1, int(round(span / 1.5)))
            for k in range(n + 1):
                u = usable0 + span * k / n
                pen.line(at(u, -0.78), at(u, 0.78), color, 0.34)
        elif pattern == "fret":
            n = max(1, int(round(span / 2.4)))
            d = span / n
            pts = []
            for k in range(n):
                u = usable0 + k * d
                pts += [at(u, 0.75), at(u, -0.75), at(u + d * 0.5, -0.75), at(u + d * 0.5, 0.75)]
            pts.append(at(usable1, 0.75))
            pen.polyline(pts, color, 0.36)
        elif pattern == "confetti":
            n = max(1, int(round(span / 1.5)))
            for k in range(n + 1):
                u = usable0 + span * k / n
                a = 0.5 if k % 2 else -0.5
                pen.line(at(u - 0.45, -a), at(u + 0.45, a), color, 0.42)
        elif pattern == "stars":
            n = max(1, int(round(span / 2.4)))
            for k in range(n):
                u = usable0 + span * (k + 0.5) / n
                cx, cy = at(u, 0)
                pen.fill(_star_pts(cx, cy, 0.85, 0.36, 5, -90), color)
        else:  # pragma: no cover - programming error
            raise ValueError(pattern)
    if pattern == "double":
        pen.rect(c - 0.7, c - 0.7, W - c + 0.7, H - c + 0.7, color, 0.34)
        pen.rect(c + 0.55, c + 0.55, W - c - 0.55, H - c - 0.55, color, 0.34)
    for (x, y) in corners:
        if pattern in ("dots", "scallops", "confetti"):
            pen.circle((x, y), 0.75, color)
        elif pattern == "double":
            pen.rect(x - 0.7, y - 0.7, x + 0.7, y + 0.7, color)
        else:
            pen.fill([(x - 0.95, y), (x, y - 0.95), (x + 0.95, y), (x, y + 0.95)], color)
            pen.circle((x, y), 0.3, bg)


# --------------------------------------------------------------------------
# Geometry helpers for icons.

def _star_pts(cx, cy, r_out, r_in, n=5, rot=-90.0):
    pts = []
    for k in range(2 * n):
        r = r_out if k % 2 == 0 else r_in
        a = math.radians(rot + 180.0 * k / n)
        pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return pts


@lru_cache(maxsize=1)
def _heart_unit() -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    x = (x - (x.max() + x.min()) / 2)
    y = (y - (y.max() + y.min()) / 2)
    k = y.max() - y.min()
    return np.stack([x / k, y / k], axis=1)  # height 1, width ~1.1


def _heart_pts(cx, cy, s, angle: float = 0.0):
    u = _heart_unit() * s
    if angle:
        a = math.radians(angle)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        u = u @ rot.T
    return u + np.array([cx, cy])


def _poly_radial(cx, cy, radii, rot=-90.0):
    n = len(radii)
    return [(cx + r * math.cos(math.radians(rot + 360.0 * k / n)),
             cy + r * math.sin(math.radians(rot + 360.0 * k / n))) for k, r in enumerate(radii)]


def _light(c: Color, t: float = 0.5) -> Color:
    return _mix(c, (255, 255, 255), t)


def _dark(c: Color, t: float = 0.35) -> Color:
    return _mix(c, (0, 0, 0), t)


# --------------------------------------------------------------------------
# Icons.  Each draws centred at (cx, cy) with height s (mm); ``_ASPECT`` gives
# width / height for pip fitting.

def _i_heart(pen, cx, cy, s, pal, fill=None, edge=None):
    fill = fill or pal["crimson"]
    edge = edge or _dark(fill, 0.3)
    pts = _heart_pts(cx, cy, s)
    pen.fill(pts, fill)
    pen.polyline(pts, edge, max(0.12, 0.07 * s), closed=True)
    pen.ellipse((cx - 0.24 * s, cy - 0.2 * s), (0.12 * s, 0.065 * s), -40, _light(fill, 0.55))


def _i_rose(pen, cx, cy, s, pal):
    g, gd = pal["green"], pal["green_dark"]
    for sx in (-1, 1):
        c = (cx + sx * 0.3 * s, cy + 0.28 * s)
        pen.ellipse(c, (0.24 * s, 0.11 * s), sx * 35 + 0, g)
        pen.line((cx, cy + 0.2 * s), (c[0] + sx * 0.16 * s, c[1] + 0.1 * s), gd, max(0.1, 0.035 * s))
    r = 0.37 * s
    c = (cx, cy - 0.1 * s)
    pen.circle(c, r, pal["rose"])
    pts = []
    for k in range(120):
        th = 2.7 * 2 * math.pi * k / 119
        rr = r * 0.85 * (1 - k / 125)
        pts.append((c[0] + rr * math.cos(th + 1.0), c[1] + rr * math.sin(th + 1.0)))
    pen.polyline(pts, pal["crimson"], max(0.12, 0.06 * s))
    pen.circle(c, r, _dark(pal["crimson"], 0.2), max(0.12, 0.06 * s))


def _i_envelope(pen, cx, cy, s, pal):
    w, h = 1.4 * s, s * 0.95
    x0, y0, x1, y1 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
    lw = max(0.12, 0.065 * s)
    pen.rect(x0, y0, x1, y1, pal["cream"])
    pen.line((x0, y1), (cx, cy + 0.02 * h), pal["rosegold"], lw * 0.7)
    pen.line((x1, y1), (cx, cy + 0.02 * h), pal["rosegold"], lw * 0.7)
    pen.fill([(x0, y0), (x1, y0), (cx, cy + 0.18 * h)], _light(pal["rosegold"], 0.55))
    pen.polyline([(x0, y0), (cx, cy + 0.18 * h), (x1, y0)], pal["rosegold_dark"], lw)
    pen.rect(x0, y0, x1, y1, pal["rosegold_dark"], lw)
    pen.fill(_heart_pts(cx, cy + 0.16 * h, 0.34 * s), pal["crimson"])


def _i_bloom(pen, cx, cy, s, petal, centre, edge, n=5):
    for k in range(n):
        a = math.radians(-90 + 360 * k / n)
        pen.circle((cx + 0.25 * s * math.cos(a), cy + 0.25 * s * math.sin(a)), 0.21 * s, petal)
    for k in range(n):
        a = math.radians(-90 + 360 * k / n)
        pen.circle((cx + 0.25 * s * math.cos(a), cy + 0.25 * s * math.sin(a)), 0.21 * s, edge,
                   max(0.1, 0.04 * s))
    pen.circle((cx, cy), 0.13 * s, centre)
    for k in range(n):
        a = math.radians(-90 + 360 * k / n + 180 / n)
        pen.circle((cx + 0.08 * s * math.cos(a), cy + 0.08 * s * math.sin(a)), 0.03 * s, edge)


def _i_sun(pen, cx, cy, s, fill, edge):
    for k in range(12):
        a = math.radians(360 * k / 12)
        b = math.radians(7.5)
        r0, r1 = 0.3 * s, (0.5 if k % 2 == 0 else 0.42) * s
        pen.fill([(cx + r0 * math.cos(a - b), cy + r0 * math.sin(a - b)),
                  (cx + r1 * math.cos(a), cy + r1 * math.sin(a)),
                  (cx + r0 * math.cos(a + b), cy + r0 * math.sin(a + b))], fill)
    pen.circle((cx, cy), 0.28 * s, fill)
    pen.circle((cx, cy), 0.28 * s, edge, max(0.12, 0.05 * s))
    pen.circle((cx, cy), 0.17 * s, _light(fill, 0.45))


def _i_sunset(pen, cx, cy, s, fill, edge, water):
    hy = cy + 0.12 * s
    for k in range(7):
        a = math.radians(180 + 180 * (k + 0.5) / 7)
        pen.line((cx + 0.36 * s * math.cos(a), hy + 0.36 * s * math.sin(a)),
                 (cx + 0.5 * s * math.cos(a), hy + 0.5 * s * math.sin(a)), fill, max(0.15, 0.07 * s))
    pen.ellipse((cx, hy), (0.3 * s, 0.3 * s), 0, fill, None, 180, 360)
    pen.ellipse((cx, hy), (0.3 * s, 0.3 * s), 0, edge, max(0.12, 0.05 * s), 180, 360)
    for k, (w, dy) in enumerate(((0.5, 0.0), (0.36, 0.13), (0.22, 0.26))):
        pen.line((cx - w * s, hy + dy * s), (cx + w * s, hy + dy * s), water if k else edge, max(0.14, 0.06 * s))


def _i_sparkle(pen, cx, cy, s, fill, edge):
    pen.fill(_star_pts(cx, cy, 0.5 * s, 0.11 * s, 4, -90), fill)
    pen.polyline(_star_pts(cx, cy, 0.5 * s, 0.11 * s, 4, -90), edge, max(0.1, 0.035 * s), closed=True)
    for dx, dy, r in ((0.3, -0.3, 0.16), (-0.3, 0.3, 0.12), (0.32, 0.3, 0.09)):
        pen.fill(_star_pts(cx + dx * s, cy + dy * s, r * s, 0.035 * s, 4, -90), edge)


def _i_snowflake(pen, cx, cy, s, color):
    lw = max(0.14, 0.065 * s)
    for k in range(6):
        a = math.radians(-90 + 60 * k)
        ex, ey = cx + 0.48 * s * math.cos(a), cy + 0.48 * s * math.sin(a)
        pen.line((cx, cy), (ex, ey), color, lw)
        for f in (0.55,):
            bx, by = cx + f * 0.48 * s * math.cos(a), cy + f * 0.48 * s * math.sin(a)
            for db in (-40, 40):
                b = a + math.radians(db)
                pen.line((bx, by), (bx + 0.17 * s * math.cos(b), by + 0.17 * s * math.sin(b)), color, lw)
    pen.circle((cx, cy), 0.08 * s, color)


_MAPLE_RIGHT = [(0.0, -0.5), (0.07, -0.33), (0.18, -0.39), (0.15, -0.17), (0.41, -0.31), (0.33, -0.1),
                (0.48, 0.0), (0.26, 0.08), (0.31, 0.25), (0.06, 0.15), (0.02, 0.22)]


def _i_maple(pen, cx, cy, s, fill, edge):
    half = [(x * s, y * s) for x, y in _MAPLE_RIGHT]
    pts = [(cx + x, cy + y) for x, y in half] + [(cx - x, cy + y) for x, y in reversed(half[1:])]
    pen.fill(pts, fill)
    pen.polyline(pts, edge, max(0.1, 0.04 * s), closed=True)
    pen.line((cx, cy - 0.38 * s), (cx, cy + 0.5 * s), edge, max(0.12, 0.05 * s))
    for (x, y) in ((0.36, -0.26), (0.42, 0.0), (0.26, 0.2)):
        pen.line((cx, cy + 0.12 * s), (cx + x * s, cy + y * s), edge, max(0.08, 0.03 * s))
        pen.line((cx, cy + 0.12 * s), (cx - x * s, cy + y * s), edge, max(0.08, 0.03 * s))


def _i_sprout(pen, cx, cy, s, leaf, edge, earth):
    pen.ellipse((cx, cy + 0.38 * s), (0.4 * s, 0.1 * s), 0, earth)
    pen.polyline([(cx, cy + 0.36 * s), (cx - 0.02 * s, cy), (cx + 0.02 * s, cy - 0.2 * s)], edge,
                 max(0.14, 0.06 * s))
    pen.ellipse((cx - 0.2 * s, cy - 0.12 * s), (0.22 * s, 0.1 * s), 25, leaf)
    pen.ellipse((cx + 0.22 * s, cy - 0.28 * s), (0.24 * s, 0.11 * s), -30, leaf)
    pen.ellipse((cx - 0.2 * s, cy - 0.12 * s), (0.22 * s, 0.1 * s), 25, edge, max(0.08, 0.03 * s))
    pen.ellipse((cx + 0.22 * s, cy - 0.28 * s), (0.24 * s, 0.11 * s), -30, edge, max(0.08, 0.03 * s))


def _i_cupid_arrow(pen, cx, cy, s, pal):
    lw = max(0.16, 0.07 * s)
    a, b = (cx - 0.46 * s, cy + 0.46 * s), (cx + 0.36 * s, cy - 0.36 * s)
    _i_heart(pen, cx + 0.02 * s, cy + 0.04 * s, 0.55 * s, pal)
    pen.line(a, b, pal["gold_dark"], lw)
    pen.fill([(cx + 0.5 * s, cy - 0.5 * s), (cx + 0.22 * s, cy - 0.4 * s), (cx + 0.4 * s, cy - 0.22 * s)],
             pal["gold_dark"])
    for k in range(3):
        o = 0.09 * s * k
        px, py = a[0] + o, a[1] - o
        pen.fill([(px, py), (px + 0.06 * s, py - 0.06 * s), (px - 0.1 * s, py - 0.16 * s),
                  (px - 0.16 * s, py - 0.1 * s)], pal["rose"])
        pen.fill([(px, py), (px + 0.06 * s, py - 0.06 * s), (px + 0.16 * s, py + 0.1 * s),
                  (px + 0.1 * s, py + 0.16 * s)], pal["rose"])


def _i_cupid_bow(pen, cx, cy, s, pal):
    lw = max(0.2, 0.1 * s)
    pen.ellipse((cx + 0.12 * s, cy), (0.42 * s, 0.5 * s), 0, pal["gold_dark"], lw, 110, 250)
    top = (cx + 0.12 * s + 0.42 * s * math.cos(math.radians(110)), cy - 0.5 * s * math.sin(math.radians(70)))
    bot = (top[0], cy + 0.5 * s * math.sin(math.radians(70)))
    pen.line(top, bot, pal["rosegold_dark"], max(0.08, 0.03 * s))
    pen.line((cx - 0.4 * s, cy), (cx + 0.34 * s, cy), pal["gold_dark"], max(0.12, 0.05 * s))
    pen.fill(_heart_pts(cx + 0.38 * s, cy, 0.26 * s, 90), pal["crimson"])
    pen.circle((cx - 0.3 * s, cy), 0.07 * s, pal["crimson"])


def _i_cupid_wings(pen, cx, cy, s, pal):
    for sx in (-1, 1):
        for k, (dx, dy, ax, ay, ang) in enumerate(((0.2, -0.12, 0.3, 0.12, -25), (0.24, 0.02, 0.26, 0.1, -8),
                                                    (0.22, 0.15, 0.2, 0.08, 12))):
            c = (cx + sx * dx * s, cy + dy * s)
            pen.ellipse(c, (ax * s, ay * s), sx * ang, pal["cream"])
            pen.ellipse(c, (ax * s, ay * s), sx * ang, pal["gold_dark"], max(0.1, 0.04 * s))
    pen.fill(_heart_pts(cx, cy + 0.02 * s, 0.32 * s), pal["crimson"])


def _i_gem(pen, cx, cy, s, cut: str, fill, edge):
    """Faceted glass gem; ``cut`` picks the outline so each bonus tile is distinct."""
    lw = max(0.12, 0.05 * s)
    if cut == "round":
        outline = _poly_radial(cx, cy, [0.46 * s] * 16, -90)
        inner = _poly_radial(cx, cy, [0.24 * s] * 8, -90)
    elif cut == "emerald":
        w, h, k = 0.36 * s, 0.48 * s, 0.14 * s
        outline = [(cx - w + k, cy - h), (cx + w - k, cy - h), (cx + w, cy - h + k), (cx + w, cy + h - k),
                   (cx + w - k, cy + h), (cx - w + k, cy + h), (cx - w, cy + h - k), (cx - w, cy - h + k)]
        inner = [(cx - w * 0.5, cy - h * 0.6), (cx + w * 0.5, cy - h * 0.6), (cx + w * 0.5, cy + h * 0.6),
                 (cx - w * 0.5, cy + h * 0.6)]
    elif cut == "pear":
        outline = [(cx + 0.36 * s * math.cos(math.radians(a)), cy + 0.14 * s + 0.34 * s * math.sin(math.radians(a)))
                   for a in range(-20, 201, 10)] + [(cx, cy - 0.5 * s)]
        inner = [(cx, cy - 0.22 * s), (cx + 0.16 * s, cy + 0.12 * s), (cx, cy + 0.3 * s), (cx - 0.16 * s, cy + 0.12 * s)]
    elif cut == "marquise":
        outline = [(cx + 0.3 * s * math.sin(math.radians(a)), cy - 0.5 * s * math.cos(math.radians(a)))
                   for a in range(0, 360, 12)]
        outline = [(x if abs(y - cy) < 0.49 * s else cx, y) for x, y in outline]
        inner = [(cx, cy - 0.26 * s), (cx + 0.13 * s, cy), (cx, cy + 0.26 * s), (cx - 0.13 * s, cy)]
    elif cut == "heart":
        outline = [tuple(p) for p in _heart_pts(cx, cy, 0.92 * s)]
        inner = [(cx, cy - 0.12 * s), (cx + 0.16 * s, cy + 0.06 * s), (cx, cy + 0.24 * s), (cx - 0.16 * s, cy + 0.06 * s)]
    elif cut == "trillion":
        outline = _poly_radial(cx, cy + 0.08 * s, [0.55 * s] * 3, -90)
        inner = _poly_radial(cx, cy + 0.08 * s, [0.24 * s] * 3, 90)
    elif cut == "hexagon":
        outline = _poly_radial(cx, cy, [0.48 * s] * 6, -90)
        inner = _poly_radial(cx, cy, [0.24 * s] * 6, -90)
    else:  # "star"
        outline = _star_pts(cx, cy, 0.52 * s, 0.26 * s, 6, -90)
        inner = _poly_radial(cx, cy, [0.18 * s] * 6, -90)
    pen.fill(outline, fill)
    pen.fill(inner, _light(fill, 0.45))
    for p in outline[:: max(1, len(outline) // 8)]:
        q = min(inner, key=lambda q: (q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2)
        pen.line(p, q, _light(fill, 0.6), max(0.08, 0.025 * s))
    pen.polyline(inner, _light(fill, 0.7), max(0.08, 0.03 * s), closed=True)
    pen.polyline(outline, edge, lw, closed=True)
    pen.ellipse((cx - 0.14 * s, cy - 0.2 * s), (0.09 * s, 0.04 * s), -35, (255, 255, 255))


# Candy -----------------------------------------------------------------------

def _i_peppermint(pen, cx, cy, s, pal):
    r = 0.4 * s
    lw = max(0.1, 0.045 * s)
    for sx in (-1, 1):
        ear = [(cx + sx * (r - 0.06 * s), cy), (cx + sx * 0.64 * s, cy - 0.3 * s), (cx + sx * 0.58 * s, cy),
               (cx + sx * 0.64 * s, cy + 0.3 * s)]
        pen.fill(ear, pal["sky_light"])
        pen.polyline(ear, pal["blue"], lw, closed=True)
        pen.line((cx + sx * 0.46 * s, cy - 0.08 * s), (cx + sx * 0.58 * s, cy - 0.18 * s), pal["blue"], lw * 0.8)
        pen.line((cx + sx * 0.46 * s, cy + 0.08 * s), (cx + sx * 0.58 * s, cy + 0.18 * s), pal["blue"], lw * 0.8)
    pen.circle((cx, cy), r, pal["white"])
    for k in range(8):
        if k % 2 == 0:
            continue
        a0, a1 = 45 * k - 10, 45 * k + 30
        pts = [(cx, cy)] + [(cx + r * math.cos(math.radians(a)), cy + r * math.sin(math.radians(a)))
                            for a in np.linspace(a0, a1, 8)]
        pen.fill(pts, pal["raspberry"])
    pen.circle((cx, cy), r, _dark(pal["raspberry"], 0.25), lw)
    pen.circle((cx, cy), 0.08 * s, pal["white"])


def _i_chocolate(pen, cx, cy, s, pal):
    w, h = 0.72 * s, s
    x0, y0, x1, y1 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
    pen.rounded_rect(x0, y0, x1, y1, 0.08 * s, pal["cocoa"])
    gw, gh = (w - 0.12 * s) / 2, (h * 0.62 - 0.1 * s) / 3
    for i in range(2):
        for j in range(3):
            a = x0 + 0.06 * s + i * gw
            b = y0 + 0.06 * s + j * gh
            pen.rect(a + 0.025 * s, b + 0.025 * s, a + gw - 0.025 * s, b + gh - 0.025 * s, pal["cocoa_light"])
            pen.line((a + 0.04 * s, b + 0.04 * s), (a + gw - 0.05 * s, b + 0.04 * s), _light(pal["cocoa_light"], 0.4),
                     max(0.06, 0.025 * s))
    wy = y0 + h * 0.62
    n = 6
    zig = [(x0 + w * k / n, wy + (0.05 * s if k % 2 else -0.02 * s)) for k in range(n + 1)]
    pen.fill(zig + [(x1, y1), (x0, y1)], pal["sky"])
    pen.rect(x0, wy + 0.13 * s, x1, wy + 0.22 * s, pal["pink"])
    pen.rounded_rect(x0, y0, x1, y1, 0.08 * s, pal["cocoa_dark"], max(0.1, 0.045 * s))


def _i_gummy(pen, cx, cy, s, pal, fill=None):
    fill = fill or pal["sky"]
    edge = pal["blue"]
    parts = [("c", (cx, cy - 0.27 * s), 0.2 * s), ("c", (cx - 0.15 * s, cy - 0.42 * s), 0.08 * s),
             ("c", (cx + 0.15 * s, cy - 0.42 * s), 0.08 * s),
             ("e", (cx, cy + 0.12 * s), (0.24 * s, 0.28 * s), 0),
             ("e", (cx - 0.23 * s, cy - 0.0 * s), (0.08 * s, 0.15 * s), 35),
             ("e", (cx + 0.23 * s, cy - 0.0 * s), (0.08 * s, 0.15 * s), -35),
             ("c", (cx - 0.15 * s, cy + 0.38 * s), 0.11 * s), ("c", (cx + 0.15 * s, cy + 0.38 * s), 0.11 * s)]
    o = 0.045 * s
    for color, grow in ((edge, o), (fill, 0.0)):
        for p in parts:
            if p[0] == "c":
                pen.circle(p[1], p[2] + grow, color)
            else:
                pen.ellipse(p[1], (p[2][0] + grow, p[2][1] + grow), p[3], color)
    pen.ellipse((cx, cy + 0.14 * s), (0.13 * s, 0.16 * s), 0, _light(fill, 0.45))
    pen.ellipse((cx, cy - 0.21 * s), (0.08 * s, 0.06 * s), 0, _light(fill, 0.45))
    for sx in (-1, 1):
        pen.circle((cx + sx * 0.08 * s, cy - 0.3 * s), 0.03 * s, _dark(edge, 0.4))


def _i_strawberry(pen, cx, cy, s, pal):
    body = [tuple(p) for p in _heart_pts(cx, cy + 0.08 * s, 0.82 * s)]
    pen.fill(body, pal["red"])
    pen.polyline(body, _dark(pal["red"], 0.3), max(0.1, 0.045 * s), closed=True)
    for dx, dy in ((-0.2, -0.05), (0.0, -0.08), (0.2, -0.05), (-0.12, 0.12), (0.12, 0.12), (0.0, 0.28),
                   (-0.26, -0.2) , (0.26, -0.2)):
        pen.ellipse((cx + dx * s, cy + 0.08 * s + dy * s), (0.025 * s, 0.045 * s), 0, pal["lemon"])
    for a in (-150, -90, -30):
        r = math.radians(a)
        pen.ellipse((cx + 0.16 * s * math.cos(r), cy - 0.36 * s + 0.1 * s * math.sin(r)), (0.14 * s, 0.06 * s), a,
                    pal["mint_dark"])
    pen.line((cx, cy - 0.4 * s), (cx + 0.05 * s, cy - 0.52 * s), pal["mint_dark"], max(0.1, 0.04 * s))


def _i_vanilla(pen, cx, cy, s, pal):
    pen.ellipse((cx + 0.1 * s, cy + 0.22 * s), (0.44 * s, 0.06 * s), -20, pal["cocoa_dark"])
    _i_bloom(pen, cx - 0.04 * s, cy - 0.1 * s, 0.82 * s, pal["cream"], pal["lemon"], pal["lemon_dark"], 5)


def _i_choc_drop(pen, cx, cy, s, pal):
    """A chocolate kiss: round base, pointed top, a paper plume."""
    pts = [(cx + 0.42 * s * math.cos(math.radians(a)), cy + 0.16 * s + 0.3 * s * math.sin(math.radians(a)))
           for a in range(-10, 191, 10)]
    pts += [(cx - 0.3 * s, cy - 0.02 * s), (cx - 0.08 * s, cy - 0.28 * s), (cx, cy - 0.38 * s),
            (cx + 0.08 * s, cy - 0.28 * s), (cx + 0.3 * s, cy - 0.02 * s)]
    pen.fill(pts, pal["cocoa"])
    pen.polyline(pts, pal["cocoa_dark"], max(0.1, 0.045 * s), closed=True)
    pen.polyline([(cx, cy - 0.36 * s), (cx + 0.1 * s, cy - 0.48 * s), (cx + 0.22 * s, cy - 0.5 * s)], pal["sky"],
                 max(0.18, 0.08 * s))
    pen.ellipse((cx - 0.16 * s, cy + 0.08 * s), (0.06 * s, 0.12 * s), 30, pal["cocoa_light"])


def _i_mint(pen, cx, cy, s, pal):
    for ang, dx in ((-30, -0.17), (30, 0.17)):
        c = (cx + dx * s, cy - 0.05 * s)
        pen.ellipse(c, (0.16 * s, 0.38 * s), ang, pal["mint"])
        pen.ellipse(c, (0.16 * s, 0.38 * s), ang, pal["mint_dark"], max(0.1, 0.04 * s))
        a = math.radians(ang)
        pen.line((c[0] - 0.3 * s * math.sin(-a), c[1] - 0.3 * s * math.cos(a)),
                 (c[0] + 0.3 * s * math.sin(-a), c[1] + 0.3 * s * math.cos(a)), pal["mint_dark"], max(0.08, 0.03 * s))
    pen.line((cx, cy + 0.22 * s), (cx, cy + 0.48 * s), pal["mint_dark"], max(0.12, 0.05 * s))


def _i_cupcake(pen, cx, cy, s, pal, kind: str):
    frost = {"redvelvet": pal["pink"], "goldenvanilla": pal["lemon"], "doublefudge": pal["cocoa_light"]}[kind]
    liner = {"redvelvet": pal["red"], "goldenvanilla": pal["sky"], "doublefudge": pal["cocoa"]}[kind]
    lw = max(0.1, 0.04 * s)
    cup = [(cx - 0.36 * s, cy + 0.02 * s), (cx + 0.36 * s, cy + 0.02 * s), (cx + 0.26 * s, cy + 0.5 * s),
           (cx - 0.26 * s, cy + 0.5 * s)]
    pen.fill(cup, liner)
    for k in range(1, 6):
        t = k / 6
        pen.line((cx - 0.36 * s + 0.72 * s * t, cy + 0.02 * s), (cx - 0.26 * s + 0.52 * s * t, cy + 0.5 * s),
                 _light(liner, 0.5), lw)
    pen.polyline(cup, _dark(liner, 0.3), lw, closed=True)
    edge = _dark(frost, 0.3)
    for (dy, ax, ay) in ((0.0, 0.42, 0.13), (-0.15, 0.33, 0.12), (-0.28, 0.22, 0.1)):
        pen.ellipse((cx, cy + dy * s), (ax * s, ay * s), 0, frost)
        pen.ellipse((cx, cy + dy * s), (ax * s, ay * s), 0, edge, lw, 0, 180)
    if kind == "redvelvet":
        pen.fill(_heart_pts(cx, cy - 0.42 * s, 0.2 * s), pal["red"])
    elif kind == "goldenvanilla":
        pen.fill(_star_pts(cx, cy - 0.42 * s, 0.14 * s, 0.06 * s, 5), pal["lemon_dark"])
    else:
        for sx in (-1, 1):
            pen.circle((cx + sx * 0.08 * s, cy - 0.4 * s), 0.07 * s, pal["cocoa_dark"])
        pen.polyline([(cx - 0.08 * s, cy - 0.46 * s), (cx, cy - 0.56 * s), (cx + 0.08 * s, cy - 0.46 * s)],
                     pal["cocoa_dark"], lw)


_SPRINKLE_COLORS = ("raspberry", "blue", "mint_dark", "lemon_dark", "lavender_dark")


def _sprinkles(pen, cx, cy, rx, ry, s, pal, n, seed):
    rng = np.random.default_rng(seed)
    for k in range(n):
        a = rng.uniform(0, 2 * math.pi)
        r = math.sqrt(rng.uniform(0, 1))
        x, y = cx + rx * r * math.cos(a), cy + ry * r * math.sin(a)
        b = rng.uniform(0, math.pi)
        d = 0.06 * s
        pen.line((x - d * math.cos(b), y - d * math.sin(b)), (x + d * math.cos(b), y + d * math.sin(b)),
                 pal[_SPRINKLE_COLORS[k % 5]], max(0.12, 0.045 * s))


def _i_treat(pen, cx, cy, s, pal, k: int):
    lw = max(0.1, 0.045 * s)
    if k == 1:  # donut
        pen.circle((cx, cy), 0.46 * s, pal["cream"])
        pen.circle((cx, cy), 0.4 * s, pal["pink"])
        pen.circle((cx, cy), 0.46 * s, pal["cocoa"], lw)
        _sprinkles(pen, cx, cy, 0.32 * s, 0.32 * s, s, pal, 14, 11)
        pen.circle((cx, cy), 0.14 * s, pal["bg"])
        pen.circle((cx, cy), 0.14 * s, pal["cocoa"], lw)
    elif k == 2:  # ice-cream cone
        cone = [(cx - 0.26 * s, cy - 0.02 * s), (cx + 0.26 * s, cy - 0.02 * s), (cx, cy + 0.52 * s)]
        pen.fill(cone, pal["lemon"])
        for t in (0.33, 0.66):
            y = cy - 0.02 * s + 0.54 * s * t
            half = 0.26 * s * (1 - t)
            pen.line((cx - half, y), (cx + half, y), pal["lemon_dark"], lw * 0.7)
        for t in (-0.5, 0.0, 0.5):
            pen.line((cx + 0.26 * s * t, cy - 0.02 * s), (cx, cy + 0.5 * s), pal["lemon_dark"], lw * 0.7)
        pen.polyline(cone, pal["lemon_dark"], lw, closed=True)
        pen.circle((cx, cy - 0.18 * s), 0.3 * s, pal["sky"])
        pen.circle((cx, cy - 0.18 * s), 0.3 * s, pal["blue"], lw)
        _sprinkles(pen, cx, cy - 0.22 * s, 0.2 * s, 0.18 * s, s, pal, 8, 12)
    elif k == 3:  # cookie
        pen.circle((cx, cy), 0.46 * s, pal["lemon_dark"])
        pen.circle((cx, cy), 0.4 * s, pal["cream"])
        _sprinkles(pen, cx, cy, 0.32 * s, 0.32 * s, s, pal, 16, 13)
        pen.circle((cx, cy), 0.46 * s, pal["cocoa"], lw)
    else:  # shaker
        pen.rounded_rect(cx - 0.24 * s, cy - 0.2 * s, cx + 0.24 * s, cy + 0.5 * s, 0.06 * s, pal["lavender"])
        pen.rect(cx - 0.26 * s, cy - 0.36 * s, cx + 0.26 * s, cy - 0.2 * s, pal["lavender_dark"])
        for dx in (-0.12, 0.0, 0.12):
            pen.circle((cx + dx * s, cy - 0.28 * s), 0.03 * s, pal["white"])
        _sprinkles(pen, cx, cy + 0.16 * s, 0.16 * s, 0.26 * s, s, pal, 9, 14)
        pen.rounded_rect(cx - 0.24 * s, cy - 0.2 * s, cx + 0.24 * s, cy + 0.5 * s, 0.06 * s, pal["lavender_dark"], lw)
        _sprinkles(pen, cx, cy - 0.48 * s, 0.2 * s, 0.06 * s, s, pal, 5, 15)


def _i_sugarglass(pen, cx, cy, s, pal, k: int):
    n = (4, 5, 6, 8)[k - 1]
    fill = pal["lavender"] if k % 2 else pal["sky"]
    edge = pal["lavender_dark"] if k % 2 else pal["blue"]
    for j in range(n):
        a = -90 + 360 * j / n
        r = math.radians(a)
        c = (cx + 0.25 * s * math.cos(r), cy + 0.25 * s * math.sin(r))
        pen.ellipse(c, (0.24 * s, 0.13 * s * (5 / n) ** 0.5 + 0.03 * s), a, fill)
        pen.ellipse(c, (0.24 * s, 0.13 * s * (5 / n) ** 0.5 + 0.03 * s), a, edge, max(0.08, 0.035 * s))
        pen.line((cx, cy), (cx + 0.42 * s * math.cos(r), cy + 0.42 * s * math.sin(r)), _light(fill, 0.6),
                 max(0.06, 0.02 * s))
    pen.circle((cx, cy), 0.1 * s, pal["white"])
    pen.circle((cx, cy), 0.1 * s, edge, max(0.08, 0.03 * s))


# Mindful ---------------------------------------------------------------------

def _i_bamboo(pen, cx, cy, s, pal, color=None):
    color = color or pal["jade"]
    w = min(0.3 * s, 2.6)
    x0, x1, y0, y1 = cx - w / 2, cx + w / 2, cy - s / 2, cy + s / 2
    pen.rounded_rect(x0, y0, x1, y1, w * 0.35, color)
    pen.line((cx - w * 0.18, y0 + w * 0.5), (cx - w * 0.18, y1 - w * 0.5), _light(color, 0.45), w * 0.16)
    for t in (0.5,) if s < 6 else (0.34, 0.67):
        y = y0 + s * t
        pen.line((x0 - w * 0.08, y), (x1 + w * 0.08, y), _dark(color, 0.35), w * 0.2)
    pen.rounded_rect(x0, y0, x1, y1, w * 0.35, _dark(color, 0.35), max(0.1, w * 0.09))


def _i_bamboo_sprig(pen, cx, cy, s, pal):
    _i_bamboo(pen, cx - 0.08 * s, cy + 0.04 * s, 0.92 * s, pal)
    for (dx, dy, ang, ln) in ((0.18, -0.22, -35, 0.26), (0.2, 0.02, -10, 0.22), (-0.3, -0.08, 30, 0.22),
                              (0.16, 0.24, 15, 0.2)):
        c = (cx + dx * s, cy + dy * s)
        pen.ellipse(c, (ln * s, 0.06 * s), ang, pal["jade_dark"])
        pen.ellipse(c, (ln * s, 0.06 * s), ang, _dark(pal["jade_dark"], 0.3), max(0.08, 0.02 * s))


def _i_coin(pen, cx, cy, s, pal, big: bool = False):
    r = 0.5 * s
    pen.circle((cx, cy), r, pal["jade"])
    pen.circle((cx, cy), r * 0.74, pal["cream"])
    pen.circle((cx, cy), r * 0.56, pal["indigo"])
    pen.circle((cx, cy), r * 0.34, pal["cream"])
    pen.circle((cx, cy), r * 0.2, pal["cinnabar"])
    if big:
        for k in range(12):
            a = math.radians(30 * k)
            pen.circle((cx + r * 0.65 * math.cos(a), cy + r * 0.65 * math.sin(a)), r * 0.06, pal["cinnabar"])
        for k in range(8):
            a = math.radians(45 * k + 22.5)
            pen.ellipse((cx + r * 0.88 * math.cos(a), cy + r * 0.88 * math.sin(a)), (r * 0.1, r * 0.05),
                        45 * k + 22.5, pal["jade_light"])
    pen.circle((cx, cy), r, pal["jade_dark"], max(0.1, 0.05 * s))


def _i_compass(pen, cx, cy, s, pal, direction: str):
    ang = {"east": 0, "south": 90, "west": 180, "north": -90}[direction]
    pen.circle((cx, cy), 0.48 * s, pal["earth"], max(0.1, 0.05 * s))
    for k in range(8):
        a = math.radians(45 * k)
        r0 = 0.4 * s if k % 2 else 0.34 * s
        pen.line((cx + r0 * math.cos(a), cy + r0 * math.sin(a)), (cx + 0.48 * s * math.cos(a), cy + 0.48 * s * math.sin(a)),
                 pal["earth"], max(0.08, 0.035 * s))
    a = math.radians(ang)
    tip = (cx + 0.44 * s * math.cos(a), cy + 0.44 * s * math.sin(a))
    tail = (cx - 0.3 * s * math.cos(a), cy - 0.3 * s * math.sin(a))
    sx, sy = -math.sin(a) * 0.12 * s, math.cos(a) * 0.12 * s
    pen.fill([tip, (cx + sx, cy + sy), (cx - sx, cy - sy)], pal["cinnabar"])
    pen.fill([tail, (cx + sx, cy + sy), (cx - sx, cy - sy)], pal["indigo"])
    pen.circle((cx, cy), 0.05 * s, pal["cream"])


def _i_flame(pen, cx, cy, s, fill, edge):
    pts = []
    for k in range(41):
        a = 2 * math.pi * k / 40
        x = cx + 0.3 * s * math.sin(a)
        y = cy + 0.12 * s - 0.3 * s * math.cos(a) * (1.8 if math.cos(a) > 0 else 1.0)
        pts.append((x, y))
    pen.fill(pts, fill)
    pen.polyline(pts, edge, max(0.08, 0.04 * s), closed=True)
    pen.ellipse((cx, cy + 0.18 * s), (0.12 * s, 0.16 * s), 0, _light(fill, 0.5))


def _i_leaf(pen, cx, cy, s, fill, edge):
    pen.ellipse((cx, cy), (0.22 * s, 0.46 * s), 30, fill)
    pen.ellipse((cx, cy), (0.22 * s, 0.46 * s), 30, edge, max(0.08, 0.04 * s))
    a = math.radians(30)
    pen.line((cx + 0.5 * s * math.sin(a), cy - 0.5 * s * math.cos(a)),
             (cx - 0.5 * s * math.sin(a), cy + 0.5 * s * math.cos(a)), edge, max(0.08, 0.035 * s))


def _i_cloud(pen, cx, cy, s, fill, edge):
    parts = [((-0.22, 0.05), 0.2), ((0.0, -0.08), 0.26), ((0.24, 0.04), 0.2), ((0.02, 0.12), 0.2)]
    for color, grow in ((edge, 0.05 * s), (fill, 0.0)):
        for (dx, dy), r in parts:
            pen.circle((cx + dx * s, cy + dy * s), r * s + grow, color)
    pen.ellipse((cx + 0.02 * s, cy + 0.02 * s), (0.16 * s, 0.08 * s), 0, edge, max(0.06, 0.03 * s), 200, 340)


def _i_orchid(pen, cx, cy, s, fill, edge, centre):
    for a, ln, wd in ((-90, 0.5, 0.12), (-18, 0.46, 0.11), (198, 0.46, 0.11), (55, 0.36, 0.1), (125, 0.36, 0.1)):
        r = math.radians(a)
        c = (cx + ln * 0.5 * s * math.cos(r), cy + ln * 0.5 * s * math.sin(r))
        pen.ellipse(c, (ln * 0.5 * s, wd * s), a, fill)
        pen.ellipse(c, (ln * 0.5 * s, wd * s), a, edge, max(0.08, 0.03 * s))
    pen.ellipse((cx, cy + 0.05 * s), (0.06 * s, 0.09 * s), 0, edge)
    pen.circle((cx, cy), 0.065 * s, centre)


def _i_chrysanthemum(pen, cx, cy, s, fill, edge, centre):
    for layer, (n, ln, wd) in enumerate(((18, 0.48, 0.05), (12, 0.32, 0.055))):
        for k in range(n):
            a = 360 * k / n + layer * 15
            r = math.radians(a)
            c = (cx + ln * 0.5 * s * math.cos(r), cy + ln * 0.5 * s * math.sin(r))
            pen.ellipse(c, (ln * 0.5 * s, wd * s), a, fill if layer == 0 else _light(fill, 0.3))
            pen.ellipse(c, (ln * 0.5 * s, wd * s), a, edge, max(0.06, 0.018 * s))
    pen.circle((cx, cy), 0.1 * s, centre)


def _i_bamboo_leaves(pen, cx, cy, s, fill, edge):
    pen.polyline([(cx - 0.05 * s, cy + 0.5 * s), (cx, cy), (cx + 0.06 * s, cy - 0.45 * s)], edge, max(0.12, 0.05 * s))
    for dx, dy, a in ((0.0, -0.02, -40), (0.0, -0.02, 220), (0.04, -0.3, -60), (0.04, -0.3, 250), (-0.02, 0.24, -20)):
        r = math.radians(a)
        c = (cx + dx * s + 0.22 * s * math.cos(r), cy + dy * s + 0.22 * s * math.sin(r))
        pen.ellipse(c, (0.24 * s, 0.06 * s), a, fill)
        pen.ellipse(c, (0.24 * s, 0.06 * s), a, edge, max(0.06, 0.02 * s))


def _i_star(pen, cx, cy, s, fill, edge):
    pts = _star_pts(cx, cy + 0.04 * s, 0.52 * s, 0.22 * s, 5, -90)
    pen.fill(pts, fill)
    pen.polyline(pts, edge, max(0.12, 0.05 * s), closed=True)
    pen.fill(_star_pts(cx, cy + 0.04 * s, 0.26 * s, 0.11 * s, 5, -90), _light(fill, 0.35))


# --------------------------------------------------------------------------
# Face layouts (mm boxes: x0, y0, x1, y1).

_NUM_BOX = (4.1, 4.0, 14.4, 14.9)      # Western numeral of a numbered suit
_CJK_BOX = (16.0, 4.7, 25.7, 14.3)     # Chinese numeral of a numbered suit
_PIP_BOX = (4.6, 16.5, 25.4, 35.7)     # pips
_LABEL_BOX = (4.3, 4.6, 16.4, 11.8)    # honour label ("Spr", "E1")
_SEAL_BOX = (17.9, 4.3, 25.7, 12.1)    # honour calligraphy / index seal
_ICON_BOX = (4.6, 13.6, 25.4, 35.8)    # honour icon

# Pip positions in the unit box, and the (cols, rows) grid that sizes a pip.
_PIPS: dict[int, tuple[list[tuple[float, float]], tuple[float, float]]] = {
    1: ([(0.5, 0.5)], (1, 1)),
    2: ([(0.5, 0.25), (0.5, 0.75)], (1, 2)),
    3: ([(0.2, 1 / 6), (0.5, 0.5), (0.8, 5 / 6)], (1.7, 3)),
    4: ([(0.27, 0.25), (0.73, 0.25), (0.27, 0.75), (0.73, 0.75)], (2, 2)),
    5: ([(0.25, 1 / 6), (0.75, 1 / 6), (0.5, 0.5), (0.25, 5 / 6), (0.75, 5 / 6)], (2, 3)),
    6: ([(x, y) for y in (1 / 6, 0.5, 5 / 6) for x in (0.27, 0.73)], (2, 3)),
    7: ([(0.27, 1 / 6), (0.73, 1 / 6), (1 / 6, 0.5), (0.5, 0.5), (5 / 6, 0.5), (0.27, 5 / 6), (0.73, 5 / 6)],
        (3, 3)),
    8: ([(1 / 6, 1 / 6), (0.5, 1 / 6), (5 / 6, 1 / 6), (0.27, 0.5), (0.73, 0.5), (1 / 6, 5 / 6), (0.5, 5 / 6),
         (5 / 6, 5 / 6)], (3, 3)),
    9: ([(x, y) for y in (1 / 6, 0.5, 5 / 6) for x in (1 / 6, 0.5, 5 / 6)], (3, 3)),
}

# Bamboo sticks: positions and stick height as a fraction of the pip box height.
_STICKS: dict[int, tuple[list[tuple[float, float]], float]] = {
    2: ([(0.5, 0.25), (0.5, 0.75)], 0.44),
    3: ([(0.5, 0.25), (0.3, 0.75), (0.7, 0.75)], 0.44),
    4: ([(0.3, 0.25), (0.7, 0.25), (0.3, 0.75), (0.7, 0.75)], 0.44),
    5: ([(0.2, 0.25), (0.8, 0.25), (0.5, 0.5), (0.2, 0.75), (0.8, 0.75)], 0.44),
    6: ([(x, y) for y in (0.25, 0.75) for x in (0.2, 0.5, 0.8)], 0.44),
    7: ([(0.5, 1 / 6)] + [(x, y) for y in (0.5, 5 / 6) for x in (0.2, 0.5, 0.8)], 0.29),
    8: ([(x, y) for y in (0.25, 0.75) for x in (0.13, 0.38, 0.62, 0.87)], 0.44),
    9: ([(x, y) for y in (1 / 6, 0.5, 5 / 6) for x in (0.2, 0.5, 0.8)], 0.29),
}


def _pips(pen, rank: int, draw, aspect: float, box=_PIP_BOX, fill: float = 0.84) -> None:
    x0, y0, x1, y1 = box
    W, H = x1 - x0, y1 - y0
    pos, (cols, rows) = _PIPS[rank]
    cw, ch = W / cols, H / rows
    s = (0.8 if rank == 1 else fill if rank < 7 else fill * 0.94) * min(ch, cw / aspect)
    for u, v in pos:
        draw(pen, x0 + u * W, y0 + v * H, s)


def _numeral(pen, text: str, color: Color, variant: str, box=_NUM_BOX, weight: int | None = None) -> None:
    pal = _PALETTES[variant]
    pen.text(text, box, color, "sans", weight or _WEIGHTS[variant], halign="center", valign="center",
             shadow=_mix(pal["bg"], pal["bevel"], 0.9))


def _label(pen, text: str, color: Color, variant: str, box=_LABEL_BOX) -> None:
    pal = _PALETTES[variant]
    pen.text(text, box, color, "sans", _WEIGHTS[variant], halign="left", valign="center",
             shadow=_mix(pal["bg"], pal["bevel"], 0.9))


def _seal(pen, char: str, color: Color, paper: Color, box=_SEAL_BOX) -> None:
    """A square chop: ``char`` reversed out of a ``color`` seal."""
    x0, y0, x1, y1 = box
    pen.rounded_rect(x0, y0, x1, y1, 0.9, color)
    pen.cjk(char, (x0 + 1.1, y0 + 1.1, x1 - 1.1, y1 - 1.1), paper, weight=0.13)


def _cjk_numeral(rank: int) -> str:
    return CHINESE_NUMERALS[rank - 1]


# Love ------------------------------------------------------------------------

def _love(pen: _Pen, f: Face) -> None:
    pal = _PALETTES["love"]
    border = _BORDERS["love"][f.suit]
    if f.suit in ("hearts", "roses", "letters"):
        color, icon, aspect = {
            "hearts": (pal["crimson"], lambda p, x, y, s: _i_heart(p, x, y, s, pal), 1.1),
            "roses": (pal["green_dark"], lambda p, x, y, s: _i_rose(p, x, y, s, pal), 1.1),
            "letters": (pal["rosegold_dark"], lambda p, x, y, s: _i_envelope(p, x, y, s, pal), 1.45),
        }[f.suit]
        _border(pen, "love", border, color)
        _numeral(pen, str(f.rank), color, "love")
        pen.cjk(_cjk_numeral(f.rank), _CJK_BOX, pal["ink"], shadow=_mix(pal["bg"], pal["bevel"], 0.9))
        _pips(pen, f.rank, icon, aspect)
        return
    key = f.id.split("-", 1)[1]
    x0, y0, x1, y1 = _ICON_BOX
    cx, cy, s = (x0 + x1) / 2, (y0 + y1) / 2 + 0.4, min(x1 - x0, y1 - y0) * 0.94
    if f.suit == "season":
        color = pal["gold_dark"]
        _border(pen, "love", border, color)
        _label(pen, f.short, pal["ink"], "love")
        pen.cjk({"spring": "春", "summer": "夏", "autumn": "秋", "winter": "冬"}[key], _SEAL_BOX, pal["ink"])
        if key == "spring":
            _i_bloom(pen, cx, cy, s * 0.95, pal["blush"], pal["gold"], pal["rose"], 5)
        elif key == "summer":
            _i_sun(pen, cx, cy, s * 0.95, pal["gold"], pal["gold_dark"])
        elif key == "autumn":
            _i_sunset(pen, cx, cy, s, pal["orange"], _dark(pal["orange"], 0.35), pal["rosegold"])
        else:
            _i_sparkle(pen, cx, cy, s, _light(pal["sky"], 0.3), pal["sky_dark"])
    elif f.suit == "cupid":
        color = pal["rosegold_dark"]
        _border(pen, "love", border, color)
        _label(pen, f.short, pal["ink"], "love")
        pen.cjk({"arrow": "矢", "bow": "弓", "wings": "羽"}[key], _SEAL_BOX, pal["ink"])
        {"arrow": _i_cupid_arrow, "bow": _i_cupid_bow, "wings": _i_cupid_wings}[key](pen, cx, cy, s, pal)
    else:  # emotion / passion glass, single copies: a distinct gem cut each
        k = int(key)
        emotion = f.suit == "emotion"
        color = pal["rose"] if emotion else pal["crimson"]
        _border(pen, "love", border, color)
        _label(pen, f.short, pal["ink"], "love")
        pen.cjk("心" if emotion else "火", _SEAL_BOX, pal["ink"])
        cut = ("round", "emerald", "pear", "marquise")[k - 1] if emotion else ("heart", "trillion", "hexagon", "star")[k - 1]
        fill = _light(pal["rose"], 0.35) if emotion else pal["crimson"]
        _i_gem(pen, cx, cy, s * 0.92, cut, fill, pal["rosegold_dark"])


# Candy -----------------------------------------------------------------------

def _candy(pen: _Pen, f: Face) -> None:
    pal = _PALETTES["candy"]
    border = _BORDERS["candy"][f.suit]
    if f.rank is not None:
        color, icon, aspect = {
            "hardcandy": (pal["raspberry"], lambda p, x, y, s: _i_peppermint(p, x, y, s, pal), 1.3),
            "chocolate": (pal["cocoa"], lambda p, x, y, s: _i_chocolate(p, x, y, s, pal), 0.72),
            "gummy": (pal["blue"], lambda p, x, y, s: _i_gummy(p, x, y, s, pal), 0.8),
        }[f.suit]
        _border(pen, "candy", border, color)
        _numeral(pen, str(f.rank), color, "candy")
        pen.cjk(_cjk_numeral(f.rank), _CJK_BOX, pal["ink"], shadow=_mix(pal["bg"], pal["bevel"], 0.9))
        _pips(pen, f.rank, icon, aspect)
        return
    key = f.id.split("-", 1)[1]
    x0, y0, x1, y1 = _ICON_BOX
    cx, cy, s = (x0 + x1) / 2, (y0 + y1) / 2 + 0.4, min(x1 - x0, y1 - y0) * 0.94
    if f.suit == "wind":
        color = {"strawberry": pal["red"], "vanilla": pal["lemon_dark"], "chocolate": pal["cocoa"],
                 "mint": pal["mint_dark"]}[key]
        _border(pen, "candy", border, pal["lavender_dark"])
        _label(pen, f.short, color, "candy")
        pen.cjk({"strawberry": "東", "vanilla": "南", "chocolate": "西", "mint": "北"}[key], _SEAL_BOX, pal["ink"])
        {"strawberry": _i_strawberry, "vanilla": _i_vanilla, "chocolate": _i_choc_drop,
         "mint": _i_mint}[key](pen, cx, cy, s * 0.95, pal)
    elif f.suit == "cupcake":
        idx = ("redvelvet", "goldenvanilla", "doublefudge").index(key) + 1
        _border(pen, "candy", border, pal["raspberry"])
        _label(pen, f.short, pal["ink"], "candy")
        _seal(pen, _cjk_numeral(idx), pal["raspberry"], pal["bg"])
        _i_cupcake(pen, cx, cy, s * 0.95, pal, key)
    else:  # single-copy bonus tiles
        k = int(key)
        sprinkles = f.suit == "sprinkles"
        color = pal["lavender_dark"] if sprinkles else pal["blue"]
        _border(pen, "candy", border, color)
        _label(pen, f.short, pal["ink"], "candy")
        _seal(pen, _cjk_numeral(k), color, pal["bg"])
        if sprinkles:
            _i_treat(pen, cx, cy, s * 0.9, pal, k)
        else:
            _i_sugarglass(pen, cx, cy, s * 0.95, pal, k)


# Mindful ---------------------------------------------------------------------

def _mindful(pen: _Pen, f: Face) -> None:
    pal = _PALETTES["mindful"]
    border = _BORDERS["mindful"][f.suit]
    shadow = _mix(pal["bg"], pal["bevel"], 0.9)
    if f.suit == "characters":
        _border(pen, "mindful", border, pal["mahogany"])
        _numeral(pen, str(f.rank), pal["cinnabar"], "mindful", box=(4.1, 4.0, 12.6, 14.4))
        pen.cjk(_cjk_numeral(f.rank), (13.8, 4.6, 25.6, 16.4), pal["ink"], weight=0.12, shadow=shadow)
        pen.cjk("萬", (5.6, 18.0, 24.4, 35.8), pal["cinnabar"], weight=0.12, shadow=shadow)
        return
    if f.suit in ("bamboo", "circles"):
        color = pal["jade_dark"] if f.suit == "bamboo" else pal["indigo"]
        _border(pen, "mindful", border, pal["jade"] if f.suit == "bamboo" else pal["indigo"])
        _numeral(pen, str(f.rank), color, "mindful")
        pen.cjk(_cjk_numeral(f.rank), _CJK_BOX, pal["mahogany"], shadow=shadow)
        if f.suit == "circles":
            _pips(pen, f.rank, lambda p, x, y, s: _i_coin(p, x, y, s, pal, big=f.rank == 1), 1.0, fill=0.9)
            return
        x0, y0, x1, y1 = _PIP_BOX
        if f.rank == 1:
            _i_bamboo_sprig(pen, (x0 + x1) / 2, (y0 + y1) / 2, (y1 - y0) * 0.92, pal)
            return
        pos, frac = _STICKS[f.rank]
        red = {5: {2}, 7: {0}, 9: {1, 4, 7}}.get(f.rank, set())
        for i, (u, v) in enumerate(pos):
            _i_bamboo(pen, x0 + u * (x1 - x0), y0 + v * (y1 - y0), frac * (y1 - y0), pal,
                      pal["cinnabar"] if i in red else pal["jade"])
        return
    key = f.id.split("-", 1)[1]
    x0, y0, x1, y1 = _ICON_BOX
    cx, cy, s = (x0 + x1) / 2, (y0 + y1) / 2 + 0.4, min(x1 - x0, y1 - y0) * 0.94
    if f.suit == "wind":
        _border(pen, "mindful", border, pal["earth"])
        _numeral(pen, f.short, pal["ink"], "mindful", box=(4.2, 4.0, 12.8, 13.4))
        _i_compass(pen, 21.2, 8.8, 8.4, pal, key)
        pen.cjk({"east": "東", "south": "南", "west": "西", "north": "北"}[key], (5.4, 15.2, 24.6, 35.4),
                pal["ink"], weight=0.12, shadow=shadow)
    elif f.suit == "dragon":
        _border(pen, "mindful", border, pal["mahogany"])
        color = {"red": pal["cinnabar"], "green": pal["jade"], "white": pal["indigo"]}[key]
        _numeral(pen, f.short, color, "mindful", box=(4.2, 4.0, 13.6 if key == "white" else 12.8, 13.4))
        icon_c = (21.4, 8.8)
        if key == "red":
            _i_flame(pen, *icon_c, 8.0, pal["cinnabar"], _dark(pal["cinnabar"], 0.3))
            pen.cjk("中", (5.6, 15.2, 24.4, 35.4), color, weight=0.13, shadow=shadow)
        elif key == "green":
            _i_leaf(pen, *icon_c, 8.4, pal["jade_light"], pal["jade_dark"])
            pen.cjk("發", (5.4, 15.2, 24.6, 35.4), color, weight=0.12, shadow=shadow)
        else:
            _i_cloud(pen, *icon_c, 8.4, pal["indigo_light"], pal["indigo"])
            fx0, fy0, fx1, fy1 = 6.6, 16.0, 23.4, 34.6
            pen.rect(fx0, fy0, fx1, fy1, color, 1.3)
            pen.rect(fx0 + 2.3, fy0 + 2.3, fx1 - 2.3, fy1 - 2.3, color, 0.5)
            for (x, y) in ((fx0, fy0), (fx1, fy0), (fx1, fy1), (fx0, fy1)):
                pen.rect(x - 1.3, y - 1.3, x + 1.3, y + 1.3, color)
                pen.rect(x - 0.5, y - 0.5, x + 0.5, y + 0.5, pal["bg"])
    elif f.suit == "season":
        k = ("spring", "summer", "autumn", "winter").index(key) + 1
        _border(pen, "mindful", border, pal["ochre"])
        _label(pen, f.short, pal["ink"], "mindful")
        _seal(pen, _cjk_numeral(k), pal["cinnabar"], pal["cream"])
        if key == "spring":
            _i_sprout(pen, cx, cy, s * 0.95, pal["jade_light"], pal["jade_dark"], pal["earth"])
        elif key == "summer":
            _i_sun(pen, cx, cy, s * 0.92, pal["ochre"], _dark(pal["ochre"], 0.3))
        elif key == "autumn":
            _i_maple(pen, cx, cy, s * 0.95, pal["cinnabar"], pal["mahogany"])
        else:
            _i_snowflake(pen, cx, cy, s * 0.95, pal["indigo"])
    else:  # flower
        k = ("plum", "orchid", "bamboo", "chrysanthemum").index(key) + 1
        _border(pen, "mindful", border, pal["plum"])
        _label(pen, f.short, pal["ink"], "mindful")
        _seal(pen, _cjk_numeral(k), pal["jade_dark"], pal["cream"])
        if key == "plum":
            _i_bloom(pen, cx, cy, s * 0.92, _light(pal["plum"], 0.45), pal["ochre"], pal["plum"], 5)
        elif key == "orchid":
            _i_orchid(pen, cx, cy, s * 0.95, _light(pal["plum"], 0.25), pal["plum"], pal["ochre"])
        elif key == "bamboo":
            _i_bamboo_leaves(pen, cx, cy, s * 0.95, pal["jade"], pal["jade_dark"])
        else:
            _i_chrysanthemum(pen, cx, cy, s * 0.95, pal["ochre"], _dark(pal["ochre"], 0.35), pal["mahogany"])


# Word ------------------------------------------------------------------------

def _word(pen: _Pen, f: Face) -> None:
    pal = _PALETTES["word"]
    shadow = _mix(pal["bg"], pal["bevel"], 0.9)
    if f.cls == "wild":
        _border(pen, "word", "stars", pal["navy"])
        pen.fill(_star_pts(6.6, 6.8, 2.3, 1.0, 5), pal["navy"])
        _i_star(pen, 15.0, 18.2, 19.0, pal["gold_light"], pal["navy"])
        pen.text("WILD", (7.5, 30.0, 22.5, 34.6), pal["navy"], "sans", 800, shadow=shadow)
        return
    color = {"vowel": pal["ink"], "consonant": pal["ink"], "rare": pal["oxblood"]}[f.cls]
    if f.cls == "vowel":  # "glowing vowels" (Word 1.2): a gold cartouche frame
        _border(pen, "word", _BORDERS["word"]["vowel"], pal["gold"])
        pen.rounded_rect(5.0, 7.8, 25.0, 34.4, 4.2, _mix(pal["bg"], pal["gold_light"], 0.5))
        pen.rounded_rect(5.0, 7.8, 25.0, 34.4, 4.2, pal["gold"], 0.6)
        pen.rounded_rect(6.2, 9.0, 23.8, 33.2, 3.2, pal["gold"], 0.22)
        for x, y in ((15.0, 7.8), (15.0, 34.4)):
            pen.fill([(x - 1.4, y), (x, y - 1.0), (x + 1.4, y), (x, y + 1.0)], pal["gold"])
        big = (7.6, 11.2, 22.4, 30.8)
    elif f.cls == "rare":  # high-value rare letters: oxblood ink and three diamonds
        _border(pen, "word", _BORDERS["word"]["rare"], pal["oxblood"])
        for dx in (-2.3, 0.0, 2.3):
            pen.fill([(15 + dx - 0.85, 33.9), (15 + dx, 32.9), (15 + dx + 0.85, 33.9), (15 + dx, 34.9)],
                     pal["oxblood"])
        big = (6.0, 9.6, 24.0, 30.6)
    else:
        _border(pen, "word", _BORDERS["word"]["consonant"], pal["sepia"])
        big = (6.0, 9.6, 24.0, 30.6)
    pen.text(f.short, big, color, "sans", 720, shadow=shadow)
    pen.text(f.short, (4.7, 4.6, 9.4, 10.2), color, "sans", 700, halign="left", valign="top", tight=False)
    pen.text(f.short.lower(), (19.4, 31.0, 25.4, 36.0), _mix(color, pal["bg"], 0.2), "italic", 600,
             halign="right", valign="bottom", tight=False)


_DESIGNERS = {"love": _love, "candy": _candy, "mindful": _mindful, "word": _word}


# --------------------------------------------------------------------------
# Public API.

def face_ids(variant: str) -> list[str]:
    """Face ids of ``variant`` in :func:`companion.tiles.tileset` order.

    Raises:
        BadInput: unknown variant.
    """
    return [f.id for f in tileset(variant).faces]


def _check_ppm(px_per_mm: float) -> float:
    try:
        ppm = float(px_per_mm)
    except (TypeError, ValueError):
        raise BadInput(f"px_per_mm must be a number, got {px_per_mm!r}") from None
    if not math.isfinite(ppm) or not 0.5 <= ppm <= 100.0:
        raise BadInput(f"px_per_mm must lie in [0.5, 100], got {px_per_mm!r}")
    return ppm


def _draw(variant: str, face_id: str, s: float) -> np.ndarray:
    pen = _Pen(s, None)  # the designer's first call, _border(), lays the framed face
    _DESIGNERS[variant](pen, tileset(variant).face(face_id))
    return pen.img


@lru_cache(maxsize=160)
def _draw_small_master(variant: str, face_id: str) -> np.ndarray:
    img = _draw(variant, face_id, 10.0)
    img.setflags(write=False)
    return img


def _render(variant: str, face_id: str, ppm: float) -> np.ndarray:
    size = (int(round(FACE_MM[0] * ppm)), int(round(FACE_MM[1] * ppm)))
    if ppm <= 5.0:
        master = _draw_small_master(variant, face_id)
    else:
        # (drawn at twice the scale and shrunk, for smooth edges; over 25
        # px/mm, where a pixel is 0.04 mm, at the scale itself: at 100 px/mm
        # the master and the caches of its borders took gigabytes)
        master = _draw(variant, face_id, max(_MIN_DRAW_PX_PER_MM, 2.0 * ppm if ppm <= 25.0 else ppm))
    return cv2.resize(master, size, interpolation=cv2.INTER_AREA)


@lru_cache(maxsize=640)
def _render_cached(variant: str, face_id: str, ppm: float) -> np.ndarray:
    img = _render(variant, face_id, ppm)
    img.setflags(write=False)
    return img


def render_face(variant: str, face_id: str, px_per_mm: float = DEFAULT_PX_PER_MM) -> np.ndarray:
    """The upright top face of one tile, art covering the whole 30 x 40 mm face.

    Args:
        variant: one of :data:`companion.tiles.VARIANTS`.
        face_id: a face id of that variant (see :func:`face_ids`).
        px_per_mm: output scale, 0.5 to 100 px/mm.

    Returns:
        uint8 BGR array of shape ``(round(40 * px_per_mm), round(30 * px_per_mm), 3)``;
        row 0 is the face's top edge (far from the player).  Deterministic; a
        fresh copy on each call (results are cached).

    Raises:
        BadInput: unknown variant or face id, or px_per_mm out of range.
    """
    ts = tileset(variant)
    ts.face(face_id)
    ppm = _check_ppm(px_per_mm)
    return _render_cached(variant, face_id, ppm).copy()


# --------------------------------------------------------------------------
# Files: face PNGs, tiles.json (CONTRACT.md), printable A4 sheets.

A4_MM = (210.0, 297.0)
#: the papers the sheets are laid out for (mm, portrait): ISO A4 and US Letter
PAPERS_MM = {"a4": A4_MM, "letter": (215.9, 279.4)}
SHEET_GRID = (6, 6)        # tiles per row, rows per page on A4: 36 a page, 4 pages a set
#: tiles per row and rows per page on each paper (Letter is 17.6 mm shorter:
#: 30 a page, 5 pages a set)
SHEET_GRIDS = {"a4": SHEET_GRID, "letter": (6, 5)}
SHEET_GUTTER_MM = 2.0      # gap between neighbouring tiles, so that cuts have slack
_SHEET_ORIGIN_MM = (10.0, 27.0)
_TITLES = {"love": "Love Mahjong", "candy": "Candy Mahjong", "mindful": "Mindful Mahjong",
           "word": "Word Mahjong"}


def tiles_document(variant: str) -> dict:
    """The ``tiles.json`` document of ``variant`` (CONTRACT.md, "Files").

    ``{"variant", "face_mm": [30, 40], "tiles": [{"id", "image", "copies", "match"}, ...]}``
    in face order; copies sum to 144; ``match`` is :attr:`companion.tiles.Face.match`.

    Raises:
        BadInput: unknown variant.
    """
    ts = tileset(variant)
    return {"variant": variant, "face_mm": list(FACE_MM),
            "tiles": [{"id": f.id, "image": f"{f.id}.png", "copies": f.copies, "match": f.match}
                      for f in ts.faces]}


def _png_bytes(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img, [cv2.IMWRITE_PNG_COMPRESSION, 6])
    if not ok:  # pragma: no cover - cv2 failure
        raise BadInput("PNG encoding failed")
    return buf.tobytes()


def write_tiles(variant: str, out_dir: Path, px_per_mm: float = DEFAULT_PX_PER_MM, *,
                sheets: bool = True, dpi: int = 300) -> dict:
    """Write the art of ``variant`` into ``out_dir`` (created if missing).

    Writes one PNG per distinct face (``<id>.png``, upright, ``px_per_mm`` >= 10 as
    CONTRACT.md asks), ``tiles.json`` (see :func:`tiles_document`) and, unless
    ``sheets=False``, the printable A4 sheets of :func:`write_sheets`: all
    together or none (:func:`write_tile_set`).

    Returns:
        The ``tiles.json`` document that was written.

    Raises:
        BadInput: unknown variant, px_per_mm below 10 or above 100, or a path that
            cannot be written (one-line message naming it).
    """
    return write_tile_set(variant, out_dir, px_per_mm, sheets=sheets, dpi=dpi)[0]


def write_tile_set(variant: str, out_dir: Path, px_per_mm: float = DEFAULT_PX_PER_MM, *,
                   sheets: bool = True, dpi: int = 300, paper: str = "a4") -> tuple[dict, dict]:
    """Write what :func:`write_tiles` writes, all files together or none
    (:class:`companion.files.OutputFiles`: the arguments and every target
    are checked before any art is drawn, and a failure leaves ``out_dir`` as
    it was).

    Returns:
        ``(tiles.json document, {"pages": [png paths], "pdf": pdf path})``;
        without sheets ``{"pages": [], "pdf": None}``.

    Raises:
        BadInput: unknown variant, px_per_mm below 10 or above 100, dpi
            outside 72..600, or a path that cannot be written (one-line
            message naming it).
    """
    from companion.files import OutputFiles

    doc = tiles_document(variant)
    ppm = _check_ppm(px_per_mm)
    if ppm < 10.0:
        raise BadInput(f"tile images must be at 10 px/mm or more (CONTRACT.md), got {px_per_mm!r}")
    if sheets:
        _check_dpi(dpi)
        _check_paper(paper)
    names = [t["image"] for t in doc["tiles"]] + ["tiles.json"] + (
        _sheet_names(variant, "sheets/", paper) if sheets else [])
    with OutputFiles(out_dir, names) as files:      # every file checked before the art is drawn
        # (faces over 20 px/mm are drawn uncached: at 100 px/mm the cache
        # held every 36 MB face, 3.7 GB in all; a break-test, session 58)
        draw = _render_cached if ppm <= 20.0 else _render
        for t in doc["tiles"]:
            files.write(t["image"], png_with_px_per_mm(_png_bytes(draw(variant, t["id"], ppm)), ppm))
        files.write("tiles.json", (json.dumps(doc, indent=2) + "\n").encode())
        written = (_write_sheet_files(files, "sheets/", variant, dpi, paper) if sheets
                   else {"pages": [], "pdf": None})
    if ppm > 20.0:
        _blank.cache_clear()            # (borders at that scale: tens of MB each)
        _shading.cache_clear()
    return doc, written


def other_sets_files(variant: str, out_dir: Path) -> int:
    """How many files in ``out_dir`` :func:`write_tile_set` writes for
    another variant and not for ``variant`` (an earlier ``print-tiles``
    into the same folder): its face PNGs and sheets, for a note (a
    break-test, session 56: Love's 42 faces and sheets lay beside Word's
    ``tiles.json``).  Nothing is removed: the folder is the user's."""
    out_dir = Path(out_dir)
    ours = {t["image"] for t in tiles_document(variant)["tiles"]} | {
        n for paper in PAPERS_MM for n in _sheet_names(variant, "sheets/", paper)}
    theirs = {name for other in VARIANTS if other != variant
              for name in [t["image"] for t in tiles_document(other)["tiles"]]
              + [n for paper in PAPERS_MM for n in _sheet_names(other, "sheets/", paper)]}
    return sum(1 for name in theirs - ours if (out_dir / name).is_file())


def _check_dpi(dpi) -> None:
    if not isinstance(dpi, int) or isinstance(dpi, bool) or not 72 <= dpi <= 600:
        raise BadInput(f"dpi must be an integer in 72..600, got {dpi!r}")


def _check_paper(paper) -> str:
    if paper not in PAPERS_MM:
        raise BadInput(f"unknown paper {paper!r} (expected {' or '.join(PAPERS_MM)})")
    return paper


def sheet_pages(variant: str, dpi: int = 300, paper: str = "a4") -> list[np.ndarray]:
    """Printable pages (portrait) holding every tile of the set, all 144 copies.

    Each page: 6 x 6 faces (A4; 6 x 5 on US Letter) at true size (30 x 40 mm)
    with 2 mm gutters, crop marks in the margins on every tile edge, the
    game's name and "sheet k of n", and a 50 mm scale bar to check that the
    print is at 100 %; everything at least 5.5 mm inside the paper's edge
    (printers leave 3-5 mm unprinted).

    Args:
        paper: ``"a4"`` (210 x 297 mm) or ``"letter"`` (215.9 x 279.4 mm).

    Returns:
        uint8 BGR arrays of shape ``(round(h * dpi / 25.4), round(w * dpi / 25.4), 3)``
        for the paper's ``(w, h)`` in mm.

    Raises:
        BadInput: unknown variant or paper, or dpi outside 72..600.
    """
    tiles = tileset(variant).tiles()
    _check_dpi(dpi)
    page_w, page_h = PAPERS_MM[_check_paper(paper)]
    ppm = dpi / 25.4
    cols, rows = SHEET_GRIDS[paper]
    per_page = cols * rows
    n_pages = -(-len(tiles) // per_page)
    faces = {fid: _render(variant, fid, ppm) for fid in dict.fromkeys(tiles)}
    pal = _PALETTES[variant]
    ink = (40, 40, 40)
    W, H = FACE_MM
    g = SHEET_GUTTER_MM
    x0 = (page_w - (cols * (W + g) - g)) / 2          # (10 mm on A4)
    y0 = _SHEET_ORIGIN_MM[1]
    right = page_w - x0
    paper_name = "A4" if paper == "a4" else "US Letter"
    pages = []
    for p in range(n_pages):
        pen = _Pen(ppm, (255, 255, 255), PAPERS_MM[paper])
        pen.text(f"{_TITLES[variant]}  -  tile faces", (x0, 9.0, right - 50.0, 15.5), pal["ink"], "sans", 700,
                 halign="left", tight=False)
        pen.text(f"sheet {p + 1} of {n_pages}", (right - 50.0, 9.0, right, 15.5), pal["ink"], "sans", 600,
                 halign="right", tight=False)
        pen.text(f"Print on {paper_name} at 100% (actual size, no fit-to-page). Cut along the marks: each face "
                 "is 30 x 40 mm.", (x0, 17.0, right, 21.0), ink, "sans", 400, halign="left", tight=False)
        chunk = tiles[p * per_page:(p + 1) * per_page]
        used_rows = -(-len(chunk) // cols)
        for k, fid in enumerate(chunk):
            r, c = divmod(k, cols)
            tx, ty = x0 + c * (W + g), y0 + r * (H + g)
            img = faces[fid]
            px, py = int(round(tx * ppm)), int(round(ty * ppm))
            pen.img[py:py + img.shape[0], px:px + img.shape[1]] = img
        # crop marks on every tile edge, in the margins
        xs = sorted({x0 + c * (W + g) + d for c in range(cols) for d in (0.0, W)})
        ys = sorted({y0 + r * (H + g) + d for r in range(used_rows) for d in (0.0, H)})
        top, bottom = ys[0], ys[-1]
        for x in xs:
            pen.line((x, top - 5.0), (x, top - 1.2), ink, 0.15)
            pen.line((x, bottom + 1.2), (x, bottom + 5.0), ink, 0.15)
        for y in ys:
            # (in the 10 mm margin, 5.5 mm from the edge: they reached 3.8 mm
            # from it, where printers print nothing; a break-test, session 58)
            pen.line((x0 - 4.5, y), (x0 - 1.2, y), ink, 0.15)
            pen.line((xs[-1] + 1.2, y), (xs[-1] + 4.5, y), ink, 0.15)
        # 50 mm scale bar
        by = page_h - 8.0
        pen.line((x0, by), (x0 + 50.0, by), ink, 0.3)
        for k in range(6):
            pen.line((x0 + 10.0 * k, by - (1.6 if k % 5 == 0 else 0.9)), (x0 + 10.0 * k, by), ink, 0.25)
        pen.text("50 mm", (x0 + 52.0, by - 2.6, x0 + 70.0, by + 0.6), ink, "sans", 500, halign="left",
                 tight=False)
        pen.text(f"{variant}  {p + 1}/{n_pages}", (right - 50.0, by - 2.6, right, by + 0.6), ink, "sans", 500,
                 halign="right", tight=False)
        pages.append(pen.img)
    return pages


def png_with_px_per_mm(png: bytes, px_per_mm: float) -> bytes:
    """``png`` (as OpenCV encodes it) with a pHYs chunk of ``px_per_mm``
    (1000 times as many pixels per metre), so that an image viewer or a
    printer prints it at its true size (without one they assume 72 or 96
    dpi and scale it to the page)."""
    return _png_with_dpi(png, px_per_mm * 25.4)


def _png_with_dpi(png: bytes, dpi: float) -> bytes:
    """Insert a pHYs chunk (pixels per metre) after IHDR, so printers know the size."""
    ppm = int(round(dpi / 0.0254))
    body = b"pHYs" + ppm.to_bytes(4, "big") * 2 + b"\x01"
    chunk = (9).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    end_ihdr = 8 + 8 + 13 + 4
    return png[:end_ihdr] + chunk + png[end_ihdr:]


def _png_idat(png: bytes) -> tuple[int, int, bytes]:
    """(width, height, concatenated IDAT zlib stream) of an 8-bit RGB, non-interlaced PNG."""
    pos, idat = 8, []
    width = height = 0
    while pos < len(png):
        n = int.from_bytes(png[pos:pos + 4], "big")
        kind = png[pos + 4:pos + 8]
        data = png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height = int.from_bytes(data[0:4], "big"), int.from_bytes(data[4:8], "big")
            if data[8] != 8 or data[9] != 2 or data[12] != 0:  # pragma: no cover - cv2 always gives this
                raise ValueError("expected an 8-bit RGB non-interlaced PNG")
        elif kind == b"IDAT":
            idat.append(data)
        pos += 12 + n
    return width, height, b"".join(idat)


def _pdf_from_pngs(pngs: list[bytes], page_mm: tuple[float, float], title: str) -> bytes:
    """A minimal PDF, one ``page_mm`` page per PNG, each image filling its page, lossless.

    The PNG's IDAT stream is embedded as is: a FlateDecode image with the PNG
    predictor (PDF 1.4 reference, 3.3.3 "LZW and Flate predictor functions").
    """
    objs: list[bytes] = []

    def add(b: bytes) -> int:
        objs.append(b)
        return len(objs)

    catalog = add(b"")
    pages = add(b"")
    kids = []
    for png in pngs:
        w, h, data = _png_idat(png)
        img = add(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                  b"/BitsPerComponent 8 /Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors 3 "
                  b"/BitsPerComponent 8 /Columns %d >> /Length %d >>\nstream\n" % (w, h, w, len(data))
                  + data + b"\nendstream")
        pw, ph = page_mm[0] / 25.4 * 72.0, page_mm[1] / 25.4 * 72.0
        content = b"q %.3f 0 0 %.3f 0 0 cm /Im0 Do Q" % (pw, ph)
        cont = add(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %.3f %.3f] "
                        b"/Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>"
                        % (pages, pw, ph, img, cont)))
    objs[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages
    objs[pages - 1] = (b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids)
                       + b"] /Count %d >>" % len(kids))
    safe = title.encode("ascii", "replace").replace(b"\\", b"").replace(b"(", b"").replace(b")", b"")
    info = add(b"<< /Title (" + safe + b") /Producer (companion vision.art) >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += (b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objs) + 1, catalog, info, xref))
    return bytes(out)


def write_sheets(variant: str, out_dir: Path, dpi: int = 300, paper: str = "a4") -> dict:
    """Write the sheets of :func:`sheet_pages` under ``out_dir/sheets/``,
    all together or none.

    Files: ``<variant>-<paper>-<k>.png`` (one per page, dpi recorded in a
    pHYs chunk) and ``<variant>-<paper>.pdf`` (all pages in one lossless PDF,
    written with numpy, OpenCV and zlib only); ``paper`` is ``"a4"`` or
    ``"letter"``.

    Returns:
        ``{"pages": [png paths], "pdf": pdf path}`` (paths as str).

    Raises:
        BadInput: unknown variant, bad dpi, or a path that cannot be written.
    """
    from companion.files import OutputFiles

    tileset(variant)
    _check_dpi(dpi)
    _check_paper(paper)
    with OutputFiles(out_dir) as files:
        written = _write_sheet_files(files, "sheets/", variant, dpi, paper)
    return written


def _sheet_names(variant: str, folder: str, paper: str = "a4") -> list[str]:
    """The files of :func:`write_sheets` under ``folder`` (``"sheets/"``):
    the pages' PNGs, then the PDF."""
    cols, rows = SHEET_GRIDS[paper]
    n_pages = -(-len(tileset(variant).tiles()) // (cols * rows))
    return ([f"{folder}{variant}-{paper}-{k}.png" for k in range(1, n_pages + 1)]
            + [f"{folder}{variant}-{paper}.pdf"])


def _write_sheet_files(files, folder: str, variant: str, dpi: int, paper: str = "a4") -> dict:
    """Give ``files`` (:class:`companion.files.OutputFiles`) the sheets of
    :func:`write_sheets` under ``folder`` (``"sheets/"``); returns their
    paths as :func:`write_sheets` does."""
    names = _sheet_names(variant, folder, paper)
    for name in names:      # checked before the pages are drawn
        files.reserve(name)
    paths, pngs = [], []
    for name, page in zip(names, sheet_pages(variant, dpi, paper)):
        png = _png_with_dpi(_png_bytes(page), dpi)
        paths.append(str(files.write(name, png)))
        pngs.append(png)
    pdf = files.write(names[-1], _pdf_from_pngs(pngs, PAPERS_MM[paper], f"{_TITLES[variant]} tile faces"))
    return {"pages": paths, "pdf": str(pdf)}
