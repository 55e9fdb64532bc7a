"""Synthetic photographs of standard mahjong tiles in random art styles.

Training data for the enrolment embedding (vision/training/train_embedding.py).
Every call to :func:`random_style` draws one imaginary physical set (fonts, ink
palette, dot and bamboo drawing, tile colour, border, corner indices) and
:func:`render_face` draws one of the 42 standard faces in that style as an
upright 240 x 320 px (w x h) BGR uint8 image that fills the crop like the
photos of ../shared/corpus/real-tiles do.  :func:`photo_augment` then turns a
render into a "photograph" (perspective, crop jitter, lighting, glare, blur,
noise, JPEG, optional 180 degree turn).

Only used for training; inference code never imports this module.  Needs
Pillow and CJK fonts (Debian: fonts-noto-cjk fonts-arphic-ukai fonts-arphic-uming
fonts-wqy-zenhei fonts-wqy-microhei fonts-cwtex-kai fonts-cwtex-ming
fonts-cwtex-heib fonts-cwtex-fs fonts-cns11643-kai fonts-cns11643-sung
fonts-ipafont-gothic fonts-ipafont-mincho fonts-lxgw-wenkai fonts-hanazono
fonts-droid-fallback fonts-takao-mincho fonts-vlgothic).  The fonts cwTeX Yen
and Klee are deliberately NOT used here: bench/bench_enroll.py draws its unseen
"one set" style with them.

The face layouts (pip arrangements of dots and bamboo, numeral over the
character for "ten thousand", wind and dragon characters, flower and season
characters with their numbers 1-4) follow the common Chinese / Hong Kong set as
described e.g. in the Mindful Mahjong rule book, 1.2 "Component Inventory".
"""

from __future__ import annotations

import glob
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

# Face ids in the order of the real-tile corpus labels (../shared/corpus/real-tiles).
FACES: tuple[str, ...] = tuple(
    [f"bamboo-{i}" for i in range(1, 10)]
    + [f"characters-{i}" for i in range(1, 10)]
    + [f"dots-{i}" for i in range(1, 10)]
    + ["honors-east", "honors-south", "honors-west", "honors-north",
       "honors-red", "honors-green", "honors-white",
       "bonus-spring", "bonus-summer", "bonus-autumn", "bonus-winter",
       "bonus-plum", "bonus-orchid", "bonus-chrysanthemum", "bonus-bamboo"]
)

W, H = 240, 320  # render size in px (width, height), like the corpus photos

_CN_NUM = {1: "一", 2: "二", 3: "三", 4: "四", 5: "五", 6: "六", 7: "七", 8: "八", 9: "九"}
_WIND = {"east": ("東", "E"), "south": ("南", "S"), "west": ("西", "W"), "north": ("北", "N")}
_BONUS = {"spring": ("春", 1), "summer": ("夏", 2), "autumn": ("秋", 3), "winter": ("冬", 4),
          "plum": ("梅", 1), "orchid": ("蘭", 2), "chrysanthemum": ("菊", 3), "bamboo": ("竹", 4)}

HELD_OUT_FONT_KEYS = ("cwyen", "klee")  # reserved for the bench's unseen style


def cjk_fonts(held_out: bool = False) -> list[str]:
    """Paths of installed CJK fonts holding the traditional glyphs we draw.

    Args:
        held_out: False for the training fonts, True for the fonts reserved
            for the bench (HELD_OUT_FONT_KEYS).
    Raises:
        RuntimeError: when none is installed.
    """
    pats = ["/usr/share/fonts/**/*.tt[fc]", "/usr/share/fonts/**/*.otf"]
    paths = sorted({p for pat in pats for p in glob.glob(pat, recursive=True)})
    out = []
    for p in paths:
        name = os.path.basename(p).lower()
        if any(s in name for s in ("dejavu", "-ext-b", "-plus", "hanaminb", "notomono",
                                   "notosansmono", "zenhei")):
            continue  # no CJK glyphs, or unreadable by FreeType here
        if not any(s in name for s in ("cjk", "ukai", "uming", "tw-kai", "tw-sung", "cw", "ipa",
                                       "wenkai", "hanamin", "droid", "takao", "vl-", "microhei",
                                       "klee")):
            continue
        is_held = any(k in name for k in HELD_OUT_FONT_KEYS)
        if is_held == held_out:
            out.append(p)
    if not out:
        raise RuntimeError("no CJK fonts found; see the module docstring for the Debian packages")
    return out


def latin_fonts() -> list[str]:
    """Paths of installed Latin fonts for corner indices."""
    out = sorted(glob.glob("/usr/share/fonts/truetype/dejavu/DejaVu*.ttf"))
    out = [p for p in out if "Math" not in p and "ExtraLight" not in p]
    if not out:
        raise RuntimeError("no DejaVu fonts found (Debian: fonts-dejavu-core)")
    return out


# Ink colours in BGR.
_RED = (40, 40, 200)
_GREEN = (60, 120, 20)
_BLUE = (160, 60, 20)
_BLACK = (30, 30, 30)


def _jitter(rng: np.random.Generator, c, amount=40):
    return tuple(int(np.clip(v + rng.integers(-amount, amount + 1), 0, 255)) for v in c)


@dataclass
class Style:
    """One imaginary physical tile set (all values drawn by random_style)."""

    seed: int
    bg: tuple
    bg2: tuple
    red: tuple
    green: tuple
    blue: tuple
    black: tuple
    font: str
    font2: str
    latin: str
    dot_style: int
    stick_style: int
    stick_w: float
    dot_scale: float
    dot_colors: dict = field(default_factory=dict)
    stick_main: tuple = (0, 0, 0)
    index: bool = False
    index_corner: int = 0
    border: int = 0
    fade: float = 1.0
    art_scale: float = 1.0
    num_color: tuple = (0, 0, 0)
    wind_color: tuple = (0, 0, 0)
    frame_color: tuple = (0, 0, 0)
    frame_style: int = 0
    wan_simple: bool = False
    bold: int = 0
    five_alt: bool = False
    chinese_bonus_num: bool = False


def random_style(rng: np.random.Generator, held_out_fonts: bool = False) -> Style:
    """Draw one art style.

    Args:
        rng: numpy Generator (all randomness comes from it).
        held_out_fonts: use the fonts reserved for the bench.
    """
    fonts = cjk_fonts(held_out_fonts)
    base = rng.choice([(225, 240, 245), (235, 245, 250), (245, 248, 250), (205, 225, 235),
                       (215, 220, 220), (200, 230, 240), (230, 235, 225), (190, 215, 225)])
    bg = _jitter(rng, base, 18)
    bg2 = tuple(int(np.clip(v * rng.uniform(0.8, 1.0), 0, 255)) for v in bg)
    red = _jitter(rng, _RED, 45)
    green = _jitter(rng, _GREEN, 45)
    blue = _jitter(rng, _BLUE, 45)
    black = _jitter(rng, _BLACK, 25)
    palette = [red, green, blue, black]
    if rng.random() < 0.15:  # monochrome-ish sets
        ink = palette[int(rng.integers(4))]
        red = green = blue = black = ink
        palette = [ink] * 4
    # colours of the dots by role: a=outer/first, b=second, c=third
    perm = rng.permutation(3)
    roles = [[green, blue, red][i] for i in perm]
    dot_colors = {"a": roles[0], "b": roles[1], "c": roles[2], "one": palette[int(rng.integers(4))]}
    if rng.random() < 0.7:  # the common scheme: 2=green+blue, 3=blue/red/green, 6/7 green over red
        dot_colors = {"a": green, "b": blue, "c": red, "one": [green, blue, red][int(rng.integers(3))]}
    stick_main = green if rng.random() < 0.8 else [blue, black, red][int(rng.integers(3))]
    return Style(
        seed=int(rng.integers(1 << 31)), bg=bg, bg2=bg2, red=red, green=green, blue=blue,
        black=black, font=str(rng.choice(fonts)), font2=str(rng.choice(fonts)),
        latin=str(rng.choice(latin_fonts())), dot_style=int(rng.integers(6)),
        stick_style=int(rng.integers(5)), stick_w=float(rng.uniform(0.6, 1.4)),
        dot_scale=float(rng.uniform(0.8, 1.12)), dot_colors=dot_colors, stick_main=stick_main,
        index=bool(rng.random() < 0.5), index_corner=int(rng.integers(2)),
        border=int(rng.integers(3)), fade=float(rng.uniform(0.75, 1.0)),
        art_scale=float(rng.uniform(0.82, 1.0)),
        num_color=[black, blue, black, green][int(rng.integers(4))],
        wind_color=[black, blue, black, green][int(rng.integers(4))],
        frame_color=[blue, black, blue, green][int(rng.integers(4))],
        frame_style=int(rng.integers(5)), wan_simple=bool(rng.random() < 0.1),
        bold=int(rng.integers(0, 3)), five_alt=bool(rng.random() < 0.5),
        chinese_bonus_num=bool(rng.random() < 0.15),
    )


# ---------------------------------------------------------------------------
# drawing helpers (on a PIL RGB image at SS x the render size; colours BGR -> RGB)

SS = 1  # supersampling factor (1: the downscale to the network input anti-aliases)


def _rgb(c):
    return (int(c[2]), int(c[1]), int(c[0]))


def _fade(c, bg, f):
    return tuple(int(bg[i] + (c[i] - bg[i]) * f) for i in range(3))


@lru_cache(maxsize=512)
def _font(path: str, size: int):
    return ImageFont.truetype(path, size)


class _Canvas:
    def __init__(self, style: Style, rng: np.random.Generator):
        self.s = style
        self.rng = rng
        self.img = Image.new("RGB", (W * SS, H * SS), _rgb(style.bg))
        self.d = ImageDraw.Draw(self.img)
        # art box in render px: x0, y0, x1, y1
        m = (1 - style.art_scale)
        self.box = (W * (0.08 + m * 0.3), H * (0.07 + m * 0.3), W * (0.92 - m * 0.3), H * (0.93 - m * 0.3))

    def ink(self, c):
        return _rgb(_fade(c, self.s.bg, self.s.fade))

    def pt(self, u, v):
        x0, y0, x1, y1 = self.box
        return ((x0 + u * (x1 - x0)) * SS, (y0 + v * (y1 - y0)) * SS)

    def scale(self):
        x0, y0, x1, y1 = self.box
        return (x1 - x0) * SS

    def circle(self, cx, cy, r, fill=None, outline=None, width=1):
        self.d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fill, outline=outline,
                       width=max(1, int(width)))

    def text(self, ch, cx, cy, size, color, font=None, stroke=0):
        f = _font(font or self.s.font, max(4, int(size)))
        self.d.text((cx, cy), ch, font=f, fill=color, anchor="mm", stroke_width=int(stroke),
                    stroke_fill=color)

    def to_bgr(self) -> np.ndarray:
        arr = np.asarray(self.img.resize((W, H), Image.LANCZOS))
        return cv2.cvtColor(arr, cv2.COLOR_RGB2BGR)


def _dot(cv: _Canvas, cx, cy, r, color, style, rng):
    s = cv.s
    bg = _rgb(s.bg)
    col = cv.ink(color)
    if style == 0:  # concentric rings
        cv.circle(cx, cy, r, fill=col)
        cv.circle(cx, cy, r * 0.78, fill=bg)
        cv.circle(cx, cy, r * 0.58, fill=col)
        cv.circle(cx, cy, r * 0.38, fill=bg)
        cv.circle(cx, cy, r * 0.18, fill=col)
    elif style == 1:  # ring with a cross / 4 petals inside
        cv.circle(cx, cy, r, fill=col)
        cv.circle(cx, cy, r * 0.8, fill=bg)
        for a in range(4):
            t = math.pi / 4 + a * math.pi / 2
            px, py = cx + math.cos(t) * r * 0.42, cy + math.sin(t) * r * 0.42
            cv.circle(px, py, r * 0.26, fill=col)
        cv.circle(cx, cy, r * 0.12, fill=col)
    elif style == 2:  # rosette: ring of small petals
        n = 8 + int(rng.integers(0, 5))
        for a in range(n):
            t = a * 2 * math.pi / n
            cv.circle(cx + math.cos(t) * r * 0.75, cy + math.sin(t) * r * 0.75, r * 0.26, fill=col)
        cv.circle(cx, cy, r * 0.45, fill=col)
        cv.circle(cx, cy, r * 0.25, fill=bg)
    elif style == 3:  # outline ring with filled centre
        cv.circle(cx, cy, r, outline=col, width=r * 0.18)
        cv.circle(cx, cy, r * 0.5, fill=col)
        cv.circle(cx, cy, r * 0.2, fill=bg)
    elif style == 4:  # double ring
        cv.circle(cx, cy, r, fill=col)
        cv.circle(cx, cy, r * 0.85, fill=bg)
        cv.circle(cx, cy, r * 0.65, fill=col)
        cv.circle(cx, cy, r * 0.3, fill=bg)
    else:  # spoked wheel
        cv.circle(cx, cy, r, fill=col)
        cv.circle(cx, cy, r * 0.82, fill=bg)
        for a in range(8):
            t = a * math.pi / 4
            cv.d.line([cx, cy, cx + math.cos(t) * r * 0.8, cy + math.sin(t) * r * 0.8], fill=col,
                      width=max(1, int(r * 0.12)))
        cv.circle(cx, cy, r * 0.25, fill=col)


# pip positions in the art box (u, v in 0..1) and colour roles, per rank
_DOTS = {
    2: [((0.5, 0.27), "a"), ((0.5, 0.73), "b")],
    3: [((0.2, 0.17), "b"), ((0.5, 0.5), "c"), ((0.8, 0.83), "a")],
    4: [((0.28, 0.28), "b"), ((0.72, 0.28), "a"), ((0.28, 0.72), "a"), ((0.72, 0.72), "b")],
    5: [((0.24, 0.22), "b"), ((0.76, 0.22), "a"), ((0.5, 0.5), "c"), ((0.24, 0.78), "a"),
        ((0.76, 0.78), "b")],
    6: [((0.28, 0.17), "a"), ((0.72, 0.17), "a"), ((0.28, 0.55), "c"), ((0.72, 0.55), "c"),
        ((0.28, 0.84), "c"), ((0.72, 0.84), "c")],
    7: [((0.2, 0.1), "a"), ((0.5, 0.2), "a"), ((0.8, 0.3), "a"), ((0.3, 0.58), "c"),
        ((0.7, 0.58), "c"), ((0.3, 0.86), "c"), ((0.7, 0.86), "c")],
    8: [((0.28, 0.12), "b"), ((0.72, 0.12), "b"), ((0.28, 0.37), "b"), ((0.72, 0.37), "b"),
        ((0.28, 0.63), "b"), ((0.72, 0.63), "b"), ((0.28, 0.88), "b"), ((0.72, 0.88), "b")],
    9: [((u, v), role) for v, role in ((0.17, "a"), (0.5, "c"), (0.83, "b"))
        for u in (0.2, 0.5, 0.8)],
}
_DOT_R = {2: 0.27, 3: 0.2, 4: 0.2, 5: 0.18, 6: 0.16, 7: 0.15, 8: 0.14, 9: 0.15}


def _draw_dots(cv: _Canvas, n: int, rng):
    s = cv.s
    sc = cv.scale()
    if n == 1:
        cx, cy = cv.pt(0.5, 0.5)
        r = sc * 0.46 * s.dot_scale
        col = cv.ink(s.dot_colors["one"])
        col2 = cv.ink([s.red, s.blue, s.green][int(rng.integers(3))])
        bg = _rgb(s.bg)
        n_pet = 12 + int(rng.integers(0, 10))
        for a in range(n_pet):
            t = a * 2 * math.pi / n_pet
            cv.circle(cx + math.cos(t) * r * 0.82, cy + math.sin(t) * r * 0.82, r * 0.18, fill=col)
        cv.circle(cx, cy, r * 0.7, fill=col)
        cv.circle(cx, cy, r * 0.6, fill=bg)
        _dot(cv, cx, cy, r * 0.5, s.dot_colors["one"] if rng.random() < 0.5 else s.red,
             int(rng.integers(6)), rng)
        if rng.random() < 0.5:
            cv.circle(cx, cy, r * 0.15, fill=col2)
        return
    all_one = rng.random() < 0.12
    for (u, v), role in _DOTS[n]:
        cx, cy = cv.pt(u, v)
        color = s.dot_colors[role] if not all_one else s.dot_colors["b"]
        _dot(cv, cx, cy, sc * _DOT_R[n] * s.dot_scale, color, s.dot_style, rng)


def _stick(cv: _Canvas, p, q, w, color, style):
    """One bamboo stick from p to q (canvas px), width w."""
    s = cv.s
    col = cv.ink(color)
    bg = _rgb(s.bg)
    d = cv.d
    (x0, y0), (x1, y1) = p, q
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    if style == 0:  # solid stick with a pale core and a node in the middle
        d.line([x0, y0, x1, y1], fill=col, width=int(w))
        d.line([x0 + ux * w * 0.5, y0 + uy * w * 0.5, x1 - ux * w * 0.5, y1 - uy * w * 0.5],
               fill=bg, width=max(1, int(w * 0.3)))
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        cv.circle(mx, my, w * 0.62, fill=col)
        for e in ((x0, y0), (x1, y1)):
            cv.circle(e[0], e[1], w * 0.55, fill=col)
    elif style == 1:  # chain of beads
        n = max(3, int(length / (w * 0.95)))
        for i in range(n + 1):
            t = i / n
            cx, cy = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
            cv.circle(cx, cy, w * 0.5, outline=col, width=w * 0.22)
    elif style == 2:  # hourglass segments (wavy outline)
        n = 3
        for i in range(n):
            a = i / n
            b = (i + 1) / n
            ax, ay = x0 + (x1 - x0) * a, y0 + (y1 - y0) * a
            bx, by = x0 + (x1 - x0) * b, y0 + (y1 - y0) * b
            mx, my = (ax + bx) / 2, (ay + by) / 2
            px, py = -uy, ux
            poly = [(ax + px * w * 0.55, ay + py * w * 0.55), (mx + px * w * 0.3, my + py * w * 0.3),
                    (bx + px * w * 0.55, by + py * w * 0.55), (bx - px * w * 0.55, by - py * w * 0.55),
                    (mx - px * w * 0.3, my - py * w * 0.3), (ax - px * w * 0.55, ay - py * w * 0.55)]
            d.polygon(poly, fill=col)
            d.line([ax + ux * 2, ay + uy * 2, bx - ux * 2, by - uy * 2], fill=bg,
                   width=max(1, int(w * 0.15)))
    elif style == 3:  # outline capsule
        px, py = -uy * w * 0.5, ux * w * 0.5
        d.line([x0 + px, y0 + py, x1 + px, y1 + py], fill=col, width=max(2, int(w * 0.22)))
        d.line([x0 - px, y0 - py, x1 - px, y1 - py], fill=col, width=max(2, int(w * 0.22)))
        for e in ((x0, y0), ((x0 + x1) / 2, (y0 + y1) / 2), (x1, y1)):
            d.line([e[0] + px * 1.2, e[1] + py * 1.2, e[0] - px * 1.2, e[1] - py * 1.2], fill=col,
                   width=max(2, int(w * 0.3)))
    else:  # plain thick bar with knots
        d.line([x0, y0, x1, y1], fill=col, width=int(w * 0.8))
        for t in (0.0, 0.5, 1.0):
            cx, cy = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
            d.ellipse([cx - w * 0.6, cy - w * 0.3, cx + w * 0.6, cy + w * 0.3], fill=col)


# bamboo layouts: list of (u_top, v_top, u_bot, v_bot, colour role) in the art box
def _col(u, v0, v1, role="g"):
    return (u, v0, u, v1, role)


_BAMBOO = {
    2: [_col(0.5, 0.05, 0.45), _col(0.5, 0.55, 0.95, "b")],
    3: [_col(0.5, 0.05, 0.45), _col(0.28, 0.55, 0.95), _col(0.72, 0.55, 0.95)],
    4: [_col(0.28, 0.05, 0.45), _col(0.72, 0.05, 0.45, "b"), _col(0.28, 0.55, 0.95, "b"),
        _col(0.72, 0.55, 0.95)],
    5: [_col(0.2, 0.05, 0.45), _col(0.8, 0.05, 0.45, "b"), _col(0.5, 0.3, 0.7, "r"),
        _col(0.2, 0.55, 0.95, "b"), _col(0.8, 0.55, 0.95)],
    6: [_col(u, v0, v0 + 0.4) for v0 in (0.05, 0.55) for u in (0.2, 0.5, 0.8)],
    7: [_col(0.5, 0.02, 0.3, "r")] + [_col(u, v0, v0 + 0.28, "b" if u == 0.5 else "g")
                                      for v0 in (0.37, 0.7) for u in (0.2, 0.5, 0.8)],
    8: [(0.12, 0.05, 0.3, 0.45, "g"), (0.45, 0.05, 0.3, 0.45, "g"), (0.55, 0.05, 0.7, 0.45, "g"),
        (0.88, 0.05, 0.7, 0.45, "g"),
        (0.3, 0.55, 0.12, 0.95, "g"), (0.3, 0.55, 0.45, 0.95, "g"), (0.7, 0.55, 0.55, 0.95, "g"),
        (0.7, 0.55, 0.88, 0.95, "g")],
    9: [_col(u, v0, v0 + 0.27, "r" if u == 0.5 else "g") for v0 in (0.03, 0.36, 0.69)
        for u in (0.2, 0.5, 0.8)],
}


def _draw_bamboo(cv: _Canvas, n: int, rng):
    s = cv.s
    if n == 1:
        _draw_bird(cv, rng)
        return
    w = cv.scale() * 0.13 * s.stick_w * (0.85 if n >= 6 else 1.0)
    roles = {"g": s.stick_main, "b": s.blue if rng.random() < 0.3 else s.stick_main,
             "r": s.red if rng.random() < 0.8 else s.stick_main}
    if n == 8 and rng.random() < 0.3:  # variant: two vertical sticks on the sides too
        layout = _BAMBOO[8] + [_col(0.0, 0.1, 0.9), _col(1.0, 0.1, 0.9)]
        w *= 0.8
    else:
        layout = _BAMBOO[n]
    for u0, v0, u1, v1, role in layout:
        _stick(cv, cv.pt(u0, v0), cv.pt(u1, v1), w, roles[role], s.stick_style)


def _blob_curve(cv: _Canvas, rng, p0, color, width, n=4, spread=0.25):
    pts = [p0]
    sc = cv.scale()
    for _ in range(n):
        x, y = pts[-1]
        pts.append((x + rng.normal(0, spread) * sc, y + rng.normal(0, spread) * sc))
    cv.d.line([tuple(p) for p in pts], fill=color, width=max(1, int(width)), joint="curve")


def _draw_bird(cv: _Canvas, rng):
    """A random colourful bird (bamboo-1 art differs in every set)."""
    s = cv.s
    sc = cv.scale()
    cols = [cv.ink(c) for c in (s.red, s.green, s.blue, s.black)]
    cx, cy = cv.pt(rng.uniform(0.4, 0.6), rng.uniform(0.35, 0.55))
    # tail feathers
    for _ in range(int(rng.integers(3, 7))):
        _blob_curve(cv, rng, (cx, cy), cols[int(rng.integers(4))], sc * rng.uniform(0.02, 0.06),
                    n=int(rng.integers(2, 5)), spread=0.18)
    # body
    bw, bh = sc * rng.uniform(0.15, 0.3), sc * rng.uniform(0.25, 0.45)
    ang = rng.uniform(-0.6, 0.6)
    body = [(cx + math.cos(t) * bw * math.cos(ang) - math.sin(t) * bh * math.sin(ang),
             cy + math.cos(t) * bw * math.sin(ang) + math.sin(t) * bh * math.cos(ang))
            for t in np.linspace(0, 2 * math.pi, 24)]
    cv.d.polygon(body, fill=cols[int(rng.integers(4))], outline=cols[3])
    # wing
    wx, wy = cx + rng.normal(0, 0.05) * sc, cy + rng.normal(0, 0.05) * sc
    cv.d.ellipse([wx - bw * 0.6, wy - bh * 0.4, wx + bw * 0.6, wy + bh * 0.4],
                 fill=cols[int(rng.integers(4))])
    # head and beak
    hx, hy = cx + rng.uniform(-0.1, 0.1) * sc, cy - bh * rng.uniform(0.9, 1.2)
    hr = sc * rng.uniform(0.07, 0.12)
    cv.circle(hx, hy, hr, fill=cols[int(rng.integers(4))])
    cv.circle(hx + hr * 0.3, hy - hr * 0.2, hr * 0.25, fill=_rgb(s.bg))
    cv.d.polygon([(hx + hr, hy), (hx + hr * 2, hy + hr * 0.3), (hx + hr, hy + hr * 0.5)],
                 fill=cols[0])
    # legs / branch
    if rng.random() < 0.6:
        _blob_curve(cv, rng, (cx, cy + bh), cols[1], sc * 0.03, n=3, spread=0.12)


def _draw_flower_art(cv: _Canvas, rng, kind: str):
    """Random plant drawing; flowers get a loose nod to their plant."""
    s = cv.s
    sc = cv.scale()
    green = cv.ink(s.green)
    petal_cols = [cv.ink(c) for c in (s.red, s.red, s.blue, (60, 160, 230), (150, 80, 200))]
    base = cv.pt(rng.uniform(0.4, 0.6), rng.uniform(0.85, 0.98))
    if kind == "bamboo":  # bamboo stalks with leaves
        for i in range(int(rng.integers(1, 4))):
            x = base[0] + rng.normal(0, 0.15) * sc
            top = cv.pt(0.5, rng.uniform(0.2, 0.45))[1]
            _stick(cv, (x, top), (x + rng.normal(0, 0.05) * sc, base[1]), sc * 0.06, s.green, 0)
            for _ in range(3):
                ly = rng.uniform(top, base[1])
                cv.d.polygon([(x, ly), (x + rng.choice([-1, 1]) * sc * 0.25, ly - sc * 0.08),
                              (x, ly - sc * 0.03)], fill=green)
        return
    if kind == "orchid":  # long thin leaves
        for _ in range(int(rng.integers(4, 8))):
            _blob_curve(cv, rng, base, green, sc * 0.025, n=3, spread=0.2)
    else:
        for _ in range(int(rng.integers(1, 4))):
            _blob_curve(cv, rng, base, green if rng.random() < 0.6 else cv.ink(s.black),
                        sc * rng.uniform(0.02, 0.045), n=3, spread=0.17)
    n_fl = {"plum": int(rng.integers(2, 6)), "chrysanthemum": 1}.get(kind, int(rng.integers(1, 4)))
    for _ in range(n_fl):
        fx, fy = cv.pt(rng.uniform(0.2, 0.8), rng.uniform(0.3, 0.7))
        r = sc * (rng.uniform(0.12, 0.22) if kind == "chrysanthemum" else rng.uniform(0.06, 0.15))
        col = petal_cols[int(rng.integers(len(petal_cols)))]
        npet = {"plum": 5, "chrysanthemum": int(rng.integers(12, 20))}.get(kind, int(rng.integers(4, 9)))
        for a in range(npet):
            t = a * 2 * math.pi / npet
            cv.circle(fx + math.cos(t) * r * 0.7, fy + math.sin(t) * r * 0.7,
                      r * (0.25 if kind == "chrysanthemum" else 0.45), fill=col)
        cv.circle(fx, fy, r * 0.3, fill=cv.ink([s.red, (40, 200, 230), s.green][int(rng.integers(3))]))
    for _ in range(int(rng.integers(0, 5))):  # leaves
        lx, ly = cv.pt(rng.uniform(0.15, 0.85), rng.uniform(0.3, 0.9))
        a, b = sc * rng.uniform(0.04, 0.1), sc * rng.uniform(0.02, 0.04)
        cv.d.ellipse([lx - a, ly - b, lx + a, ly + b], fill=green)


def _index(cv: _Canvas, text: str, color, rng, corner=None):
    s = cv.s
    corner = s.index_corner if corner is None else corner
    size = H * SS * rng.uniform(0.08, 0.12)
    x = (W * 0.11 if corner == 0 else W * 0.89) * SS
    y = H * 0.08 * SS
    cv.text(text, x, y, size, cv.ink(color), font=s.latin)


def render_face(face: str, style: Style, rng: np.random.Generator) -> np.ndarray:
    """Draw one face upright in a style.

    Args:
        face: one of :data:`FACES`.
        style: from :func:`random_style`.
        rng: numpy Generator for the per-tile details (bird, flowers).
    Returns:
        (320, 240, 3) uint8 BGR image.
    Raises:
        KeyError: unknown face.
    """
    if face not in FACES:
        raise KeyError(face)
    s = style
    cv = _Canvas(s, rng)
    sc = cv.scale()
    suit, _, name = face.partition("-")
    stroke = s.bold
    if suit == "dots":
        n = int(name)
        _draw_dots(cv, n, rng)
        if s.index:
            _index(cv, str(n), s.red if n % 2 else s.blue, rng)
    elif suit == "bamboo":
        n = int(name)
        _draw_bamboo(cv, n, rng)
        if s.index:
            _index(cv, str(n), s.blue, rng)
    elif suit == "characters":
        n = int(name)
        num = "伍" if (n == 5 and s.five_alt) else _CN_NUM[n]
        cx, cy = cv.pt(0.5, 0.27)
        cv.text(num, cx, cy, sc * 0.62, cv.ink(s.num_color), stroke=stroke)
        cx, cy = cv.pt(0.5, 0.72)
        wan = "万" if s.wan_simple and "cw" not in s.font and "ipa" not in s.font else "萬"
        cv.text(wan, cx, cy, sc * 0.72, cv.ink(s.red), font=s.font2, stroke=stroke)
        if s.index:
            _index(cv, str(n), s.red, rng)
    elif suit == "honors" and name in _WIND:
        ch, letter = _WIND[name]
        cx, cy = cv.pt(0.5, 0.52)
        cv.text(ch, cx, cy, sc * rng.uniform(0.85, 1.0), cv.ink(s.wind_color), stroke=stroke)
        if s.index:
            _index(cv, letter, s.red, rng)
    elif face == "honors-red":
        cx, cy = cv.pt(0.5, 0.52)
        cv.text("中", cx, cy, sc * rng.uniform(0.85, 1.0), cv.ink(s.red), stroke=stroke)
        if s.index:
            _index(cv, ["C", "R"][int(rng.integers(2))], s.blue, rng)
    elif face == "honors-green":
        cx, cy = cv.pt(0.5, 0.52)
        cv.text("發", cx, cy, sc * rng.uniform(0.85, 1.0), cv.ink(s.green), stroke=stroke)
        if s.index:
            _index(cv, ["F", "G"][int(rng.integers(2))], s.red, rng)
    elif face == "honors-white":
        _draw_white(cv, rng)
        if s.index:
            _index(cv, ["P", "W", "B"][int(rng.integers(3))], s.blue, rng)
    elif suit == "bonus":
        ch, num = _BONUS[name]
        kind = name if name in ("plum", "orchid", "chrysanthemum", "bamboo") else "season"
        _draw_flower_art(cv, rng, kind)
        corner = int(rng.integers(2)) if rng.random() < 0.3 else s.index_corner
        cx, cy = cv.pt(0.15 if corner == 1 else 0.85, 0.12)
        cv.text(ch, cx, cy, sc * rng.uniform(0.25, 0.38), cv.ink([s.red, s.blue, s.black][num % 3]))
        ntxt = _CN_NUM[num] if s.chinese_bonus_num else str(num)
        nx, ny = cv.pt(0.1 if corner == 0 else 0.9, 0.1)
        cv.text(ntxt, nx, ny, sc * rng.uniform(0.22, 0.32), cv.ink([s.red, s.blue, s.black][num % 3]),
                font=s.latin if not s.chinese_bonus_num else s.font)
    else:  # pragma: no cover - FACES is exhaustive
        raise KeyError(face)
    return cv.to_bgr()


def _draw_white(cv: _Canvas, rng):
    s = cv.s
    col = cv.ink(s.frame_color)
    x0, y0 = cv.pt(0.1, 0.1)
    x1, y1 = cv.pt(0.9, 0.9)
    w = max(2, int(cv.scale() * rng.uniform(0.03, 0.07)))
    st = s.frame_style
    if st == 4:
        return  # blank white dragon
    cv.d.rounded_rectangle([x0, y0, x1, y1], radius=int(cv.scale() * 0.08), outline=col, width=w)
    if st >= 1:
        g = w * 2.2
        cv.d.rounded_rectangle([x0 + g, y0 + g, x1 - g, y1 - g], radius=int(cv.scale() * 0.05),
                               outline=col, width=max(1, w // 2))
    if st == 2:  # corner decorations
        for (x, y) in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
            cv.circle(x, y, w * 1.5, fill=col)
    if st == 3:  # dashed inner pattern
        for i in range(8):
            t = i / 8
            cv.d.line([x0 + (x1 - x0) * t, y0 + w * 3, x0 + (x1 - x0) * (t + 0.05), y0 + w * 3],
                      fill=col, width=w)


# ---------------------------------------------------------------------------
# photographic augmentation

def tile_on_background(face_img: np.ndarray, rng: np.random.Generator, style: Style) -> np.ndarray:
    """Add a bevel / border like a real tile's edge; optionally a bit of table."""
    img = face_img.astype(np.float32)
    h, w = img.shape[:2]
    # shading gradient over the face
    gy, gx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * math.pi)
    grad = ((gx / w - 0.5) * math.cos(a) + (gy / h - 0.5) * math.sin(a))
    img *= (1 + grad[..., None] * rng.uniform(0, 0.35))
    if style.border:
        bw = int(rng.uniform(3, 14))
        edge = np.array(style.bg2, np.float32) * rng.uniform(0.6, 0.95)
        mask = np.zeros((h, w), np.uint8)
        cv2.rectangle(mask, (bw, bw), (w - bw, h - bw), 255, -1)
        mask = cv2.GaussianBlur(mask, (0, 0), bw / 2 + 1).astype(np.float32)[..., None] / 255
        img = img * mask + edge * (1 - mask)
    return np.clip(img, 0, 255).astype(np.uint8)


def photo_augment(img: np.ndarray, rng: np.random.Generator, out_hw=(320, 240),
                  turn: bool | None = None) -> np.ndarray:
    """Turn a clean render into a plausible cropped photo.

    Args:
        img: (H, W, 3) uint8 BGR.
        rng: numpy Generator.
        out_hw: output (height, width) in px.
        turn: rotate 180 degrees (None: at random, p = 0.5).
    Returns:
        (out_hw[0], out_hw[1], 3) uint8 BGR.
    """
    h, w = img.shape[:2]
    # perspective + crop jitter: the crop's corners land near the tile's corners
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    jit = rng.normal(0, 0.02, size=(4, 2)) * [w, h]
    shift = rng.normal(0, 0.012, size=2) * [w, h]
    scale = rng.uniform(0.95, 1.04)
    c = np.float32([w / 2, h / 2])
    dst_pts = (src - c) * scale + c + jit + shift
    oh, ow = out_hw
    M = cv2.getPerspectiveTransform(np.float32(dst_pts), np.float32([[0, 0], [ow, 0], [ow, oh], [0, oh]]))
    border = tuple(int(v) for v in rng.integers(0, 255, 3)) if rng.random() < 0.5 else (
        tuple(int(v * rng.uniform(0.5, 0.9)) for v in img[2, 2]))
    out = cv2.warpPerspective(img, M, (ow, oh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                              borderValue=border)
    out = out.astype(np.float32)
    # lighting: white balance, brightness, contrast, gamma
    out *= rng.uniform(0.92, 1.08, size=3)[None, None, :]
    out = (out - 128) * rng.uniform(0.65, 1.2) + 128 + rng.uniform(-35, 30)
    out = np.clip(out, 0, 255)
    out = 255 * (out / 255) ** rng.uniform(0.7, 1.4)
    # glare: a soft bright blob
    if rng.random() < 0.2:
        gy, gx = np.mgrid[0:oh, 0:ow].astype(np.float32)
        cx, cy = rng.uniform(0, ow), rng.uniform(0, oh)
        sx, sy = rng.uniform(15, 70), rng.uniform(15, 70)
        blob = np.exp(-(((gx - cx) / sx) ** 2 + ((gy - cy) / sy) ** 2))
        out = out + blob[..., None] * rng.uniform(40, 140)
    # shadow edge
    if rng.random() < 0.2:
        gy, gx = np.mgrid[0:oh, 0:ow].astype(np.float32)
        a = rng.uniform(0, 2 * math.pi)
        d = (gx - ow / 2) * math.cos(a) + (gy - oh / 2) * math.sin(a) - rng.uniform(-60, 60)
        out = out * (1 - 0.35 * (1 / (1 + np.exp(-d / rng.uniform(3, 20)))))[..., None]
    out = np.clip(out, 0, 255).astype(np.uint8)
    # blur
    r = rng.random()
    if r < 0.35:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.5, 2.5))
    elif r < 0.5:
        k = int(rng.integers(3, 9))
        kern = np.zeros((k, k), np.float32)
        kern[k // 2, :] = 1.0 / k
        M2 = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
        kern = cv2.warpAffine(kern, M2, (k, k))
        kern /= max(kern.sum(), 1e-6)
        out = cv2.filter2D(out, -1, kern)
    # downscale-upscale (low resolution sources)
    if rng.random() < 0.3:
        f = rng.uniform(0.2, 0.5)
        small = cv2.resize(out, (max(8, int(ow * f)), max(8, int(oh * f))), interpolation=cv2.INTER_AREA)
        out = cv2.resize(small, (ow, oh), interpolation=cv2.INTER_LINEAR)
    # noise
    if rng.random() < 0.6:
        out = np.clip(out.astype(np.float32) + rng.normal(0, rng.uniform(2, 12), out.shape), 0, 255
                      ).astype(np.uint8)
    # JPEG
    if rng.random() < 0.7:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 95))])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    if turn is None:
        turn = bool(rng.random() < 0.5)
    if turn:
        out = cv2.rotate(out, cv2.ROTATE_180)
    return out


def render_photo(face: str, style: Style, rng: np.random.Generator, turn: bool | None = None,
                 out_hw=(320, 240)) -> np.ndarray:
    """render_face + tile edge + photo_augment: one synthetic photo (uint8 BGR)."""
    return photo_augment(tile_on_background(render_face(face, style, rng), rng, style), rng,
                         out_hw=out_hw, turn=turn)
