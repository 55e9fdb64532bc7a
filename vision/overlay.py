"""The referee overlay: what the camera read, drawn over the photo.

Marks differ by pattern, not only by colour (readable in grey print and for
colour-blind referees):

* free tile: solid outline and an upright check mark on a white disc near
  the face's lower edge (the art there is its border);
* blocked tile (face seen, but covered or pinched): outline and a diagonal
  cross-hatch over the face;
* occluded / unknown slot (present, face unseen): dashed outline and ``?``;
* unsure reading (a face read, or a slot judged empty, with a confidence under
  :data:`vision.reconstruct.UNSURE_BELOW`): a ringed ``?`` badge in the top
  right corner of the slot's face, drawn over whatever mark the tile has, so
  a referee knows which few stacks and faces to check by eye;
* covered tiles (under a present tile) are not drawn: the top tile stands for
  its stack; empty slots are not drawn either.

A legend explains the marks and counts the tiles of each kind (and the
unsure readings); the recognition's advice for a surer retake (camera nearly
overhead, markers covered ...), if any, runs along the bottom or top edge.
Both go where they hide the fewest drawn tiles (the legend in a corner, or
halfway down a side), and
in a band added below the photo when every such place would hide a tile or a
marker.  A photo under 720 px on its short side (a 640 x 480 webcam) is drawn
enlarged by a whole factor, so the marks and the text stay readable.
"""

from __future__ import annotations

import cv2
import numpy as np

FREE_COLOUR = (60, 200, 60)      # BGR
BLOCKED_COLOUR = (40, 40, 230)
UNKNOWN_COLOUR = (0, 200, 255)
UNSURE_COLOUR = (200, 40, 200)
_SHIFT = 4                       # fixed-point bits for sub-pixel drawing
_S = 1 << _SHIFT


def _fx(pts: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(pts, np.float64) * _S).astype(np.int32)


def _check(img: np.ndarray, centre, size_px: float, colour, thick: int, disc: bool = False) -> None:
    """An upright check mark (as read, whatever the mat's rotation) of
    ``size_px`` px centred on ``centre`` (x, y) px; on a white disc when
    ``disc``."""
    c = np.asarray(centre, np.float64)
    if disc:
        cv2.circle(img, tuple(int(v) for v in _fx(c)), int(round(size_px * 0.62 * _S)), (255, 255, 255), -1,
                   cv2.LINE_AA, shift=_SHIFT)
    pts = c + size_px * np.array([[-0.40, 0.02], [-0.12, 0.30], [0.42, -0.32]])
    if not disc:
        cv2.polylines(img, [_fx(pts)], False, (255, 255, 255), thick + 2, cv2.LINE_AA, shift=_SHIFT)
    cv2.polylines(img, [_fx(pts)], False, colour, thick, cv2.LINE_AA, shift=_SHIFT)


def _free_mark_centre(q: np.ndarray) -> np.ndarray:
    """Where a free tile's check mark goes: on the face's centre line, near
    the edge ``q[2]``-``q[3]``, where the art has its border only (the
    numeral and the calligraphy are at the other end, the icon in the
    middle; a face turned round hides its border there instead)."""
    bottom = (q[2] + q[3]) / 2
    top = (q[0] + q[1]) / 2
    return bottom + (top - bottom) * 0.17


def _dashed(img: np.ndarray, q: np.ndarray, colour, thick: int, dash_px: float = 6.0) -> None:
    for k in range(4):
        a, b = q[k], q[(k + 1) % 4]
        length = float(np.linalg.norm(b - a))
        n = max(2, int(length / dash_px))
        ts = np.linspace(0, 1, n + 1)
        for i in range(0, n, 2):
            p0 = a + (b - a) * ts[i]
            p1 = a + (b - a) * ts[i + 1]
            cv2.line(img, tuple(_fx(p0)), tuple(_fx(p1)), colour, thick, cv2.LINE_AA, shift=_SHIFT)


def _centre_text(img: np.ndarray, text: str, centre, height_px: float, colour) -> None:
    font = cv2.FONT_HERSHEY_SIMPLEX
    (_, h1), _ = cv2.getTextSize("0", font, 1.0, 1)
    scale = max(0.3, height_px / h1)
    th = max(1, int(round(scale * 1.6)))
    (w, h), _ = cv2.getTextSize(text, font, scale, th)
    org = (int(round(centre[0] - w / 2)), int(round(centre[1] + h / 2)))
    cv2.putText(img, text, org, font, scale, (255, 255, 255), th + 2, cv2.LINE_AA)
    cv2.putText(img, text, org, font, scale, colour, th, cv2.LINE_AA)


def _badge(img: np.ndarray, centre, radius: float, colour) -> None:
    """A ringed ``?`` badge: white disc, ``colour`` ring and mark."""
    c = _fx(np.asarray(centre, np.float64))
    r = int(round(radius * _S))
    cv2.circle(img, (int(c[0]), int(c[1])), r, (255, 255, 255), -1, cv2.LINE_AA, shift=_SHIFT)
    cv2.circle(img, (int(c[0]), int(c[1])), r, colour, max(1, int(round(radius / 5))), cv2.LINE_AA, shift=_SHIFT)
    _centre_text(img, "?", centre, radius * 1.0, colour)


def _hatch(img: np.ndarray, mask: np.ndarray, colour, spacing: int, alpha: float = 0.75, width: int = 2) -> None:
    """Cross-hatch (both diagonals, lines ``width`` px every ``spacing`` px)
    ``img`` where ``mask`` is set; lines blend ``alpha`` of ``colour`` so
    the face stays readable under them."""
    ys, xs = np.nonzero(np.asarray(mask).any(axis=1))[0], np.nonzero(np.asarray(mask).any(axis=0))[0]
    if not len(ys):
        return
    # (only the box round the mask: over a whole 48-megapixel photo the
    # grids cost 8 s and 1.6 GB, a break-test, session 59)
    y0, y1, x0, x1 = int(ys[0]), int(ys[-1]) + 1, int(xs[0]), int(xs[-1]) + 1
    yy, xx = np.ogrid[y0:y1, x0:x1]
    lines = ((xx + yy) % spacing < width) | ((xx - yy) % spacing < width)
    sel = (mask[y0:y1, x0:x1] > 0) & lines
    box = img[y0:y1, x0:x1]
    box[sel] = (box[sel] * (1 - alpha) + np.asarray(colour, np.float64) * alpha).astype(np.uint8)


MIN_SHORT_SIDE_PX = 720
"""A photo whose short side is under this is drawn enlarged by a whole factor
(:func:`overlay_scale`): on a 640 x 480 webcam frame the marks, the legend
and the advice would otherwise cover the tiles they explain."""
MAX_LONG_SIDE_PX = 4096


def overlay_scale(height: int, width: int) -> int:
    """The whole factor (1, 2, 3 ...) a ``height`` x ``width`` px photo is
    enlarged by before the overlay is drawn on it: the least that brings the
    short side to :data:`MIN_SHORT_SIDE_PX`, kept so the long side stays
    within :data:`MAX_LONG_SIDE_PX`; 1 for a photo that large already."""
    short, long_ = min(height, width), max(height, width)
    if short <= 0 or short >= MIN_SHORT_SIDE_PX:
        return 1
    k = -(-MIN_SHORT_SIDE_PX // short)
    return max(1, min(k, MAX_LONG_SIDE_PX // max(1, long_)))


def _scaled(points: np.ndarray, k: int) -> np.ndarray:
    """Pixel coordinates of an image enlarged ``k`` times (pixel centres kept:
    pixel ``x`` spans ``[x - 0.5, x + 0.5]``, as in ``cv2.resize``)."""
    return (np.asarray(points, np.float64) + 0.5) * k - 0.5 if k != 1 else np.asarray(points, np.float64)


def to_overlay(points: np.ndarray, shape: tuple) -> np.ndarray:
    """Points ``(..., 2)`` px of a photo of ``shape`` ``(H, W[, 3])``, as
    float64 px of :func:`draw_overlay`'s picture of it (enlarged by
    :func:`overlay_scale`; the band, if any, lies below the photo, so the
    points keep their place)."""
    return _scaled(points, overlay_scale(shape[0], shape[1]))


def draw_overlay(image: np.ndarray, recognition, quads: np.ndarray | None = None,
                 legend: bool = True) -> np.ndarray:
    """Draw the recognised board over the photo.

    A photo under :data:`MIN_SHORT_SIDE_PX` on its short side is enlarged
    first (:func:`overlay_scale`, bilinear), so the marks and the text stay
    readable.  The legend and the advice go in the corner and along the edge
    where they hide the fewest drawn tiles and markers; when every such place
    would hide one, both go in a band added below the photo instead.

    Args:
        image: ``(H, W, 3)`` uint8 BGR photo (not modified), or ``(H, W)``
            grey.
        recognition: :class:`vision.reconstruct.Recognition`.
        quads: ``(N, 4, 2)`` projected top faces in px of ``image``, one per
            layout slot (``recognition.quads`` when None).
        legend: draw the legend box (and the advice).

    Returns:
        ``(k H + B, k W, 3)`` uint8 BGR annotated copy: ``k`` from
        :func:`overlay_scale`, ``B`` the band's height in px (0 when the
        legend and advice fit over the photo).
    """
    src = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    k = overlay_scale(*src.shape[:2])
    out = (cv2.resize(src, (src.shape[1] * k, src.shape[0] * k), interpolation=cv2.INTER_LINEAR)
           if k > 1 else src.copy())
    q_all = _scaled(recognition.quads if quads is None else quads, k)
    h, w = out.shape[:2]
    sizes = np.linalg.norm(q_all[:, 1] - q_all[:, 0], axis=1) if len(q_all) else np.array([40.0])
    tile_px = float(np.median(sizes)) if len(sizes) else 40.0
    thick = max(1, int(round(tile_px / 25)))
    blocked_mask = np.zeros((h, w), np.uint8)
    blocked, free, unknown = [], [], []
    n_covered = sum(1 for t in recognition.tiles if t.present and t.seen == "covered")
    for t, q in zip(recognition.tiles, q_all):
        if not t.present or t.seen == "covered":
            continue
        if t.seen == "occluded" or t.face is None:
            unknown.append((t, q))
        elif t.free:
            free.append((t, q))
        else:
            blocked.append((t, q))
            cv2.fillConvexPoly(blocked_mask, _fx(q), 255, cv2.LINE_8, shift=_SHIFT)
    # thin lines far apart: the pattern is plain and the face under it can
    # still be checked by eye (which tile was it?)
    _hatch(out, blocked_mask, BLOCKED_COLOUR, max(6, int(tile_px / 4)), alpha=0.7,
           width=1 if tile_px < 60 else 2)
    for t, q in blocked:
        cv2.polylines(out, [_fx(q)], True, BLOCKED_COLOUR, thick, cv2.LINE_AA, shift=_SHIFT)
    for t, q in free:
        cv2.polylines(out, [_fx(q)], True, FREE_COLOUR, thick + 1, cv2.LINE_AA, shift=_SHIFT)
        _check(out, _free_mark_centre(q), max(7.0, tile_px * 0.3), FREE_COLOUR, thick + 1, disc=True)
    for t, q in unknown:
        _dashed(out, q, UNKNOWN_COLOUR, thick + 1, dash_px=max(4.0, tile_px / 6))
        _centre_text(out, "?", q.mean(axis=0), tile_px * 0.45, UNKNOWN_COLOUR)
    from vision.reconstruct import unsure_slots
    radius = max(6.0, tile_px * 0.22)
    badges: list[np.ndarray] = []
    unsure = unsure_slots(recognition.tiles)
    for i in unsure:
        q = q_all[i]
        centre = q[1] + (q[3] - q[1]) * 0.2            # inside the face, near its top-right corner
        if any(np.linalg.norm(centre - b) < 1.5 * radius for b in badges):
            continue                                   # one badge per stack seen nearly from above
        badges.append(centre)
        _badge(out, centre, radius, UNSURE_COLOUR)
    if not legend:
        return out
    # the legend and the advice go where they hide the fewest drawn tiles
    # (weights: the mat under its markers' hull 1, a drawn tile 4, a
    # marker 8 (a referee checks the pose by them), the advice 40)
    avoid = np.zeros((h, w), np.uint8)
    pose = getattr(recognition, "pose", None)
    corners = _scaled(np.asarray(getattr(pose, "image_points", np.zeros((0, 2))), np.float64).reshape(-1, 2), k)
    if len(corners) >= 3:
        cv2.fillConvexPoly(avoid, _fx(cv2.convexHull(corners.astype(np.float32)).reshape(-1, 2)), 1,
                           cv2.LINE_8, shift=_SHIFT)
    for _, q in (*free, *blocked, *unknown):
        cv2.fillConvexPoly(avoid, _fx(q), 4, cv2.LINE_8, shift=_SHIFT)
    for j in range(0, len(corners) - 3, 4):          # each marker's 4 corners
        cv2.fillConvexPoly(avoid, _fx(cv2.convexHull(corners[j:j + 4].astype(np.float32)).reshape(-1, 2)),
                           8, cv2.LINE_8, shift=_SHIFT)
    hidden_ok = max(4, int(0.2 * tile_px * tile_px))     # px of tiles or markers a box may lie over
    # text sized by the picture's short side (a tall portrait photo sized by
    # its height cut the legend at the right edge), and never wider than it
    scale = max(0.4, min(h, w) / 1400)
    key = _Legend(len(free), len(blocked), len(unknown), n_covered, len(unsure), scale)
    if key.w > w - 16:
        scale *= (w - 16) / key.w
        key = _Legend(len(free), len(blocked), len(unknown), n_covered, len(unsure), scale)
    sentences = tuple(getattr(recognition, "advice", ()) or ())
    note = _Advice(sentences, w - 32, scale) if sentences else None
    placed = []
    if note is not None:
        _, y0 = _least_covered(avoid, [(8, max(0, h - 8 - note.h), w - 16, note.h), (8, 8, w - 16, note.h)])
        placed.append((8, y0, w - 16, note.h))
        over = avoid.copy()
        over[y0:y0 + note.h] = 40                        # and the legend keeps off the advice
    else:
        over = avoid
    right, bottom = max(8, w - 9 - key.w), max(8, h - 9 - key.h)
    middle = max(8, (h - key.h) // 2)
    # the corners first, then halfway down either side (a portrait photo's
    # bare table beside the board)
    lx, ly = _least_covered(over, [(8, 8, key.w + 1, key.h + 1), (right, 8, key.w + 1, key.h + 1),
                                   (8, bottom, key.w + 1, key.h + 1), (right, bottom, key.w + 1, key.h + 1),
                                   (8, middle, key.w + 1, key.h + 1), (right, middle, key.w + 1, key.h + 1)])
    placed.append((lx, ly, key.w + 1, key.h + 1))
    hides = any(int((avoid[max(0, y):y + bh, max(0, x):x + bw] >= 4).sum()) > hidden_ok for x, y, bw, bh in placed)
    if not hides:
        if note is not None:
            note.draw(out, 8, placed[0][1], w - 16)
        key.draw(out, lx, ly)
        return out
    # no place over the photo hides no tile: a band below it holds both, the
    # advice beside the legend where it has room (40 % of the width), else under it
    side = w - key.w - 40
    if note is not None and side >= 0.4 * w:
        note = _Advice(sentences, side - 16, scale)
        band = max(key.h, note.h) + 16
    elif note is not None:
        note = _Advice(sentences, w - 32, scale)
        band = key.h + note.h + 24
    else:
        band = key.h + 16
    canvas = np.full((h + band, w, 3), 235, np.uint8)
    canvas[:h] = out
    key.draw(canvas, 8, h + 8)
    if note is not None:
        if side >= 0.4 * w:
            note.draw(canvas, key.w + 24, h + 8, w - key.w - 32)
        else:
            note.draw(canvas, 8, h + key.h + 16, w - 16)
    return canvas


def _least_covered(avoid: np.ndarray | None, boxes) -> tuple[int, int]:
    """The first of ``boxes`` (``(x, y, w, h)``, in order of preference) whose
    area holds the least of ``avoid``'s weight; its ``(x, y)``."""
    if avoid is None:
        return boxes[0][:2]
    cost = [int(avoid[max(0, y):y + bh, max(0, x):x + bw].sum()) for x, y, bw, bh in boxes]
    x, y, _, _ = boxes[int(np.argmin(cost))]
    return x, y


class _Advice:
    """The recognition's advice (:func:`vision.reconstruct.photo_advice`),
    each sentence prefixed "Advice:", wrapped to ``width`` px at font
    ``scale``; ``h`` is its box's height in px."""

    def __init__(self, sentences, width: int, scale: float):
        self.font = cv2.FONT_HERSHEY_SIMPLEX
        self.scale = scale
        (_, self.lh), _ = cv2.getTextSize("Ag", self.font, scale, 1)
        self.lines: list[str] = []
        for text in sentences:
            line = ""
            for word in f"Advice: {text}.".split():
                trial = f"{line} {word}".strip()
                if line and cv2.getTextSize(trial, self.font, scale, 1)[0][0] > width:
                    self.lines.append(line)
                    line = word
                else:
                    line = trial
            self.lines.append(line)
        self.row = int(self.lh * 2.0)
        self.h = self.row * len(self.lines) + 8

    def draw(self, img: np.ndarray, x0: int, y0: int, width: int) -> None:
        """Draw the box at ``(x0, y0)`` px, ``width`` px wide, lightening what
        lies under it."""
        roi = img[y0:y0 + self.h, x0:x0 + width]
        roi[:] = (0.35 * roi + 0.65 * 255).astype(np.uint8)
        cv2.rectangle(img, (x0, y0), (x0 + width - 1, y0 + self.h - 1), (80, 80, 80), 1)
        for j, line in enumerate(self.lines):
            cv2.putText(img, line, (x0 + 8, y0 + 4 + j * self.row + (self.row + self.lh) // 2), self.font,
                        self.scale, (20, 20, 20), 1, cv2.LINE_AA)


class _Legend:
    """The legend box: a swatch and a count for each mark.  Its first four
    counts add up to the tiles found present (covered tiles, under others,
    are counted but not drawn); the last, ``n_unsure``, counts the unsure
    readings (one badge stands for the readings of a stack seen from nearly
    overhead).  It lists every mark, even at a count of 0.  ``w`` and ``h``
    are its size in px at font ``scale``."""

    def __init__(self, n_free: int, n_blocked: int, n_unknown: int, n_covered: int, n_unsure: int,
                 scale: float):
        self.counts = (n_free, n_blocked, n_unknown, n_covered)
        self.n_unsure = n_unsure
        self.font = cv2.FONT_HERSHEY_SIMPLEX
        self.scale = scale
        (_, self.lh), _ = cv2.getTextSize("Ag", self.font, scale, 1)
        self.row = int(self.lh * 2.4)
        self.sw = int(self.row * 0.75)     # swatch width
        self.sh = int(self.row * 0.8)
        self.items = [(f"free ({n_free})", "free"), (f"blocked ({n_blocked})", "blocked"),
                      (f"face unseen / occluded ({n_unknown})", "unknown"),
                      (f"under other tiles, not drawn ({n_covered})", "covered"),
                      (f"unsure: check by eye ({n_unsure})", "unsure")]
        tw = max(cv2.getTextSize(t, self.font, scale, 1)[0][0] for t, _ in self.items)
        self.w, self.h = self.sw + tw + 3 * 8, self.row * len(self.items) + 8

    def draw(self, img: np.ndarray, x0: int, y0: int) -> None:
        """Draw the box with its top-left corner at ``(x0, y0)`` px,
        lightening what lies under it."""
        sw, sh, row, lh = self.sw, self.sh, self.row, self.lh
        roi = img[y0:y0 + self.h, x0:x0 + self.w]
        roi[:] = (0.35 * roi + 0.65 * 255).astype(np.uint8)
        cv2.rectangle(img, (x0, y0), (x0 + self.w, y0 + self.h), (80, 80, 80), 1)
        for k, (text, kind) in enumerate(self.items):
            top = y0 + 4 + k * row + (row - sh) // 2
            q = np.array([[x0 + 8, top], [x0 + 8 + sw, top], [x0 + 8 + sw, top + sh], [x0 + 8, top + sh]],
                         np.float64)
            if kind == "free":
                cv2.polylines(img, [_fx(q)], True, FREE_COLOUR, 2, cv2.LINE_AA, shift=_SHIFT)
                _check(img, q.mean(axis=0), sh * 0.7, FREE_COLOUR, 2)
            elif kind == "blocked":
                m = np.zeros(img.shape[:2], np.uint8)
                cv2.fillConvexPoly(m, _fx(q), 255, cv2.LINE_8, shift=_SHIFT)
                sub = (slice(top, top + sh + 1), slice(x0 + 8, x0 + 9 + sw))
                patch = img[sub]
                _hatch(patch, m[sub], BLOCKED_COLOUR, 6)
                cv2.polylines(img, [_fx(q)], True, BLOCKED_COLOUR, 1, cv2.LINE_AA, shift=_SHIFT)
            elif kind == "unknown":
                _dashed(img, q, UNKNOWN_COLOUR, 2, dash_px=4)
                _centre_text(img, "?", q.mean(axis=0), sh * 0.45, UNKNOWN_COLOUR)
            elif kind == "unsure":
                _badge(img, q.mean(axis=0), sh * 0.45, UNSURE_COLOUR)
            else:                          # a small stack: two offset outlines, within the swatch
                d = max(2.0, sw * 0.2)
                q = q.copy()
                q[1:3, 0] -= d             # (its back outline reached into the text: a newcomer's look, session 58)
                q[[0, 1], 1] += d
                back = q + np.array([d, -d])
                cv2.polylines(img, [_fx(back)], True, (110, 110, 110), 1, cv2.LINE_AA, shift=_SHIFT)
                cv2.fillConvexPoly(img, _fx(q), (235, 235, 235), cv2.LINE_AA, shift=_SHIFT)
                cv2.polylines(img, [_fx(q)], True, (110, 110, 110), 1, cv2.LINE_AA, shift=_SHIFT)
            cv2.putText(img, text, (x0 + 16 + sw, top + sh // 2 + lh // 2), self.font, self.scale, (20, 20, 20),
                        1, cv2.LINE_AA)
