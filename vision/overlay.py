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
Both go where they hide the fewest drawn tiles (the legend in a corner).
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
    h, w = mask.shape
    yy, xx = np.mgrid[0:h, 0:w]
    lines = ((xx + yy) % spacing < width) | ((xx - yy) % spacing < width)
    sel = (mask > 0) & lines
    img[sel] = (img[sel] * (1 - alpha) + np.asarray(colour, np.float64) * alpha).astype(np.uint8)


def draw_overlay(image: np.ndarray, recognition, quads: np.ndarray | None = None,
                 legend: bool = True) -> np.ndarray:
    """Draw the recognised board over the photo.

    Args:
        image: ``(H, W, 3)`` uint8 BGR photo (not modified).
        recognition: :class:`vision.reconstruct.Recognition`.
        quads: ``(N, 4, 2)`` projected top faces in px, one per layout slot
            (``recognition.quads`` when None).
        legend: draw the legend box.

    Returns:
        ``(H, W, 3)`` uint8 BGR annotated copy.
    """
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    q_all = np.asarray(recognition.quads if quads is None else quads, np.float64)
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
    if legend:
        # the legend and the advice go where they hide the fewest drawn tiles
        # (on a small picture the legend's box is a third of it)
        # (weights: the mat under its markers' hull 1, a drawn tile 4, a
        # marker 8 (a referee checks the pose by them), the advice 40)
        avoid = np.zeros((h, w), np.uint8)
        pose = getattr(recognition, "pose", None)
        corners = np.asarray(getattr(pose, "image_points", np.zeros((0, 2))), np.float64).reshape(-1, 2)
        if len(corners) >= 3:
            cv2.fillConvexPoly(avoid, _fx(cv2.convexHull(corners.astype(np.float32)).reshape(-1, 2)), 1,
                               cv2.LINE_8, shift=_SHIFT)
        for _, q in (*free, *blocked, *unknown):
            cv2.fillConvexPoly(avoid, _fx(q), 4, cv2.LINE_8, shift=_SHIFT)
        for k in range(0, len(corners) - 3, 4):          # each marker's 4 corners
            cv2.fillConvexPoly(avoid, _fx(cv2.convexHull(corners[k:k + 4].astype(np.float32)).reshape(-1, 2)),
                               8, cv2.LINE_8, shift=_SHIFT)
        band = _advice(out, getattr(recognition, "advice", ()), avoid)
        if band is not None:
            avoid[band[0]:band[1]] = 40                  # and the legend keeps off the advice
        _legend(out, len(free), len(blocked), len(unknown), n_covered, avoid=avoid, n_unsure=len(unsure))
    return out


def _least_covered(avoid: np.ndarray | None, boxes) -> tuple[int, int]:
    """The first of ``boxes`` (``(x, y, w, h)``, in order of preference) whose
    area holds the least of ``avoid``'s weight; its ``(x, y)``."""
    if avoid is None:
        return boxes[0][:2]
    cost = [int(avoid[max(0, y):y + bh, max(0, x):x + bw].sum()) for x, y, bw, bh in boxes]
    x, y, _, _ = boxes[int(np.argmin(cost))]
    return x, y


def _advice(img: np.ndarray, sentences, avoid: np.ndarray | None = None) -> tuple[int, int] | None:
    """The recognition's advice (:func:`vision.reconstruct.photo_advice`),
    wrapped to the image's width, in a box along the bottom edge, or the top
    one where that hides fewer of the tiles marked in ``avoid`` (``(H, W)``
    weights).  Returns the rows ``(y0, y1)`` the box takes, or None."""
    if not sentences:
        return None
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(0.4, img.shape[0] / 1400)
    (_, lh), _ = cv2.getTextSize("Ag", font, scale, 1)
    width = img.shape[1] - 32
    lines = []
    for text in sentences:
        line = ""
        for word in f"Advice: {text}.".split():
            trial = f"{line} {word}".strip()
            if line and cv2.getTextSize(trial, font, scale, 1)[0][0] > width:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    row = int(lh * 2.0)
    h = row * len(lines) + 8
    W = img.shape[1]
    _, y0 = _least_covered(avoid, [(8, max(0, img.shape[0] - 8 - h), W - 16, h), (8, 8, W - 16, h)])
    roi = img[y0:y0 + h, 8:img.shape[1] - 8]
    roi[:] = (0.35 * roi + 0.65 * 255).astype(np.uint8)
    cv2.rectangle(img, (8, y0), (img.shape[1] - 9, y0 + h - 1), (80, 80, 80), 1)
    for k, line in enumerate(lines):
        cv2.putText(img, line, (16, y0 + 4 + k * row + (row + lh) // 2), font, scale, (20, 20, 20), 1, cv2.LINE_AA)
    return y0, y0 + h


def _legend(img: np.ndarray, n_free: int, n_blocked: int, n_unknown: int, n_covered: int = 0,
            avoid: np.ndarray | None = None, n_unsure: int = 0) -> None:
    """The legend box; its first four counts add up to the tiles found
    present (covered tiles, under others, are counted but not drawn); the
    last, ``n_unsure``, counts the unsure readings (one badge stands for
    the readings of a stack seen from nearly overhead).  It lists every
    mark, even at a count of 0.  It goes in the corner
    (top left, top right, bottom left, bottom right, in that preference)
    that hides the least of ``avoid`` (``(H, W)`` weights: the tiles drawn,
    the advice)."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(0.4, img.shape[0] / 1400)
    th = 1
    (_, lh), _ = cv2.getTextSize("Ag", font, scale, th)
    row = int(lh * 2.4)
    sw = int(row * 0.75)     # swatch width
    sh = int(row * 0.8)
    items = [(f"free ({n_free})", "free"), (f"blocked ({n_blocked})", "blocked"),
             (f"face unseen / occluded ({n_unknown})", "unknown"),
             (f"under other tiles, not drawn ({n_covered})", "covered"),
             (f"unsure: check by eye ({n_unsure})", "unsure")]
    tw = max(cv2.getTextSize(t, font, scale, th)[0][0] for t, _ in items)
    box_w, box_h = sw + tw + 3 * 8, row * len(items) + 8
    H, W = img.shape[:2]
    right, bottom = max(8, W - 9 - box_w), max(8, H - 9 - box_h)
    x0, y0 = _least_covered(avoid, [(8, 8, box_w + 1, box_h + 1), (right, 8, box_w + 1, box_h + 1),
                                    (8, bottom, box_w + 1, box_h + 1), (right, bottom, box_w + 1, box_h + 1)])
    roi = img[y0:y0 + box_h, x0:x0 + box_w]
    roi[:] = (0.35 * roi + 0.65 * 255).astype(np.uint8)
    cv2.rectangle(img, (x0, y0), (x0 + box_w, y0 + box_h), (80, 80, 80), 1)
    for k, (text, kind) in enumerate(items):
        top = y0 + 4 + k * row + (row - sh) // 2
        q = np.array([[x0 + 8, top], [x0 + 8 + sw, top], [x0 + 8 + sw, top + sh], [x0 + 8, top + sh]], np.float64)
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
        else:                          # a small stack: two offset outlines
            d = max(2.0, sw * 0.2)
            back = q + np.array([d, -d])
            cv2.polylines(img, [_fx(back)], True, (110, 110, 110), 1, cv2.LINE_AA, shift=_SHIFT)
            cv2.fillConvexPoly(img, _fx(q), (235, 235, 235), cv2.LINE_AA, shift=_SHIFT)
            cv2.polylines(img, [_fx(q)], True, (110, 110, 110), 1, cv2.LINE_AA, shift=_SHIFT)
        cv2.putText(img, text, (x0 + 16 + sw, top + sh // 2 + lh // 2), font, scale, (20, 20, 20), th, cv2.LINE_AA)
