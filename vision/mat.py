"""The printed mat: its specification (``mat.json``), slot geometry in mat
millimetres, and the printable image.

Mat frame (../shared/CONTRACT.md, "Physical standard"): millimetres, origin at
the mat's top-left corner, X to the right, Y down (towards the players), and
heights up from the mat, so a point at height ``h`` has ``Z = -h`` in OpenCV's
right-handed object frame.

Mat image (``mat.png``): ``px_per_mm`` pixels per millimetre; pixel ``(i, j)``
(column, row) covers ``[i, i+1) / P`` by ``[j, j+1) / P`` mm, so its centre, the
point OpenCV calls ``(i, j)``, lies at ``((i + 0.5) / P, (j + 0.5) / P)`` mm
(:func:`mm_to_px`, :func:`px_to_mm`).

The default mat is A2 landscape (594 x 420 mm): the 18 x 8 grid of 30 x 40 mm
cells (540 x 320 mm) with a 50 mm band above and below holding five 36 mm
ArUco markers each (``DICT_4X4_50``), and one 18 mm marker in the middle of the
27 mm band on the left and on the right: twelve markers all round, so the pose
survives a hand or a tall stack hiding a few of them.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field, fields
from typing import Iterable

import cv2
import numpy as np

from companion.errors import BadInput
from companion.jsontext import show

DEFAULT_DICTIONARY = "DICT_4X4_50"
DEFAULT_PX_PER_MM = 5.0
A2_MM = (594.0, 420.0)
A4_MM = (210.0, 297.0)
#: papers the mat is tiled on (mm, portrait): ISO A4 and US Letter
PAPERS_MM = {"a4": A4_MM, "letter": (215.9, 279.4)}

_GRID_INK = 70  # grey level of cell outlines and ticks
_LABEL_INK = 150  # grey level of the faint cell labels


def aruco_dictionary(name: str) -> "cv2.aruco.Dictionary":
    """The OpenCV predefined dictionary called ``name`` (e.g. ``"DICT_4X4_50"``).

    Raises:
        BadInput: not a predefined ArUco dictionary name.
    """
    code = getattr(cv2.aruco, name, None) if isinstance(name, str) and name.startswith("DICT_") else None
    if not isinstance(code, int):
        raise BadInput(f"unknown ArUco dictionary {name!r} (expected e.g. 'DICT_4X4_50')")
    return cv2.aruco.getPredefinedDictionary(code)


def _dictionary_size(name: str) -> int:
    return int(aruco_dictionary(name).bytesList.shape[0])


@dataclass(frozen=True)
class MarkerSpec:
    """One printed ArUco marker.

    Attributes:
        dictionary: OpenCV predefined dictionary name, e.g. ``"DICT_4X4_50"``.
        id: marker id in that dictionary.
        corners_mm: its four outer corners ``((x, y), ...)`` in mat mm, OpenCV's
            order: top-left, top-right, bottom-right, bottom-left (clockwise
            as printed, seen from above).
    """

    dictionary: str
    id: int
    corners_mm: tuple[tuple[float, float], ...]

    @property
    def corners(self) -> np.ndarray:
        """``(4, 2) float64`` corners in mat mm."""
        return np.asarray(self.corners_mm, dtype=np.float64).reshape(4, 2)

    def to_json(self) -> dict:
        return {"dictionary": self.dictionary, "id": self.id,
                "corners_mm": [[float(x), float(y)] for x, y in self.corners_mm]}


def _square_marker(dictionary: str, marker_id: int, x: float, y: float, side: float) -> MarkerSpec:
    """An axis-aligned upright marker with top-left corner ``(x, y)`` mm."""
    return MarkerSpec(dictionary, marker_id,
                      ((x, y), (x + side, y), (x + side, y + side), (x, y + side)))


@dataclass(frozen=True)
class MatSpec:
    """Geometry of a printed mat (the contract's ``mat.json``).

    Attributes:
        size_mm: ``(W, H)`` of the sheet in mm.
        grid_origin_mm: ``(gx, gy)``, the grid's top-left corner in mat mm.
        grid_tiles: ``(columns, rows)`` of tile cells, ``(18, 8)``.
        tile_mm: ``(width, height, thickness)`` of a tile in mm, ``(30, 40, 20)``.
        px_per_mm: resolution of ``mat.png`` (>= 4 for a printed mat).
        markers: the printed ArUco markers.
        image: file name of the mat image beside ``mat.json``.
    """

    size_mm: tuple[float, float]
    grid_origin_mm: tuple[float, float]
    grid_tiles: tuple[int, int] = (18, 8)
    tile_mm: tuple[float, float, float] = (30.0, 40.0, 20.0)
    px_per_mm: float = DEFAULT_PX_PER_MM
    markers: tuple[MarkerSpec, ...] = field(default=())
    image: str = "mat.png"

    def __hash__(self) -> int:
        # the fields' hash, computed once: a spec keys the per-slot caches
        # (``vision.artcheck``) thousands of times a photo, and hashing its
        # markers anew each time cost 2.4 us a lookup
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:
        # (a string's hash differs between processes: never pickle the cached one)
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    @classmethod
    def default(cls, px_per_mm: float = DEFAULT_PX_PER_MM) -> "MatSpec":
        """The standard A2 mat (594 x 420 mm) described in the module docstring.

        Marker ids run clockwise from the top-left corner: 0-4 along the top,
        5 on the right, 6-10 along the bottom (right to left), 11 on the left.
        """
        w, h = A2_MM
        gx, gy = 27.0, 50.0
        big, small = 36.0, 18.0
        xs = [7.0, 143.0, 279.0, 415.0, 551.0]  # left edges; centres 25, 161, 297, 433, 569
        top_y, bottom_y = 7.0, h - 7.0 - big
        d = DEFAULT_DICTIONARY
        markers = [_square_marker(d, i, x, top_y, big) for i, x in enumerate(xs)]
        markers.append(_square_marker(d, 5, w - 4.0 - small, (h - small) / 2, small))
        markers += [_square_marker(d, 6 + i, x, bottom_y, big) for i, x in enumerate(reversed(xs))]
        markers.append(_square_marker(d, 11, 4.0, (h - small) / 2, small))
        return cls(size_mm=(w, h), grid_origin_mm=(gx, gy), grid_tiles=(18, 8),
                   tile_mm=(30.0, 40.0, 20.0), px_per_mm=float(px_per_mm), markers=tuple(markers))

    def with_px_per_mm(self, px_per_mm: float) -> "MatSpec":
        """A copy rendered at another resolution (geometry unchanged)."""
        return MatSpec(self.size_mm, self.grid_origin_mm, self.grid_tiles, self.tile_mm,
                       float(px_per_mm), self.markers, self.image)

    @property
    def grid_size_mm(self) -> tuple[float, float]:
        """``(width, height)`` of the tile grid in mm (540 x 320 by default)."""
        return (self.grid_tiles[0] * self.tile_mm[0], self.grid_tiles[1] * self.tile_mm[1])

    @property
    def image_size_px(self) -> tuple[int, int]:
        """``(width, height)`` of ``mat.png`` in pixels."""
        return (int(round(self.size_mm[0] * self.px_per_mm)), int(round(self.size_mm[1] * self.px_per_mm)))

    def marker_object_points(self) -> dict[tuple[str, int], np.ndarray]:
        """``{(dictionary, id): (4, 3) float64}`` marker corners in the mat frame (Z = 0)."""
        out = {}
        for m in self.markers:
            pts = np.zeros((4, 3), np.float64)
            pts[:, :2] = m.corners
            out[(m.dictionary, m.id)] = pts
        return out

    def to_json(self) -> dict:
        """The contract's ``mat.json`` object."""
        return {"size_mm": [float(v) for v in self.size_mm],
                "grid_origin_mm": [float(v) for v in self.grid_origin_mm],
                "grid_tiles": [int(v) for v in self.grid_tiles],
                "tile_mm": [float(v) for v in self.tile_mm],
                "image": self.image,
                "px_per_mm": float(self.px_per_mm),
                "markers": [m.to_json() for m in self.markers]}

    @classmethod
    def from_json(cls, obj) -> "MatSpec":
        """Parse the contract's ``mat.json`` object (already decoded JSON).

        Raises:
            BadInput: a missing or malformed field, a size that is not
                positive or larger than :data:`MAX_MAT_MM`, a grid or a
                marker reaching outside the sheet or onto the tile grid
                (where the tiles would hide it), a grid other than
                :data:`STANDARD_GRID_TILES` (the layouts' half-tile grid,
                :data:`companion.layouts.MAT_HALF_UNITS`), ``px_per_mm < 4``, an
                unknown dictionary, an id outside its dictionary, a repeated
                marker, or fewer markers than a pose needs
                (:data:`MIN_MARKERS`): such a mat could never be found.
        """
        if not isinstance(obj, dict):
            raise BadInput("mat.json: expected a JSON object")
        size = _numbers(obj, "size_mm", 2, positive=True)
        origin = _numbers(obj, "grid_origin_mm", 2)
        tiles = _numbers(obj, "grid_tiles", 2, positive=True)
        if any(t != int(t) for t in tiles):
            raise BadInput(f"mat.json: grid_tiles must be integers, got {show(obj['grid_tiles'])}")
        tile_mm = _numbers(obj, "tile_mm", 3, positive=True)
        for key, values in (("size_mm", size), ("tile_mm", tile_mm)):
            if max(values) > MAX_MAT_MM:
                raise BadInput(f"mat.json: {key} {show(obj[key])} is larger than any mat "
                               f"({MAX_MAT_MM:g} mm at most)")
        grid_end = (origin[0] + tiles[0] * tile_mm[0], origin[1] + tiles[1] * tile_mm[1])
        if min(origin) < 0 or grid_end[0] > size[0] + _EDGE_MM or grid_end[1] > size[1] + _EDGE_MM:
            raise BadInput(f"mat.json: the grid ({show(obj['grid_tiles'])} tiles of {tile_mm[0]:g} x "
                           f"{tile_mm[1]:g} mm from grid_origin_mm {show(obj['grid_origin_mm'])}) does not lie "
                           f"on the {size[0]:g} x {size[1]:g} mm sheet")
        if tuple(int(t) for t in tiles) != STANDARD_GRID_TILES:
            raise BadInput(f"mat.json: grid_tiles {show(obj['grid_tiles'])}: the layouts are read on the standard "
                           f"mat's grid of {STANDARD_GRID_TILES[0]} x {STANDARD_GRID_TILES[1]} tiles "
                           "(the contract's mat.json); print one with companion print-mat")
        p = obj.get("px_per_mm")
        if not _is_number(p) or p < 4:
            raise BadInput(f"mat.json: px_per_mm must be a number >= 4, got {show(p)}")
        image = obj.get("image", "mat.png")
        if not isinstance(image, str) or not image:
            raise BadInput(f"mat.json: image must be a file name, got {show(image)}")
        raw = obj.get("markers")
        if not isinstance(raw, list) or not raw:
            raise BadInput("mat.json: markers must be a non-empty list")
        if len(raw) < MIN_MARKERS:
            raise BadInput(f"mat.json: {len(raw)} marker given; finding the mat in a photo needs at least "
                           f"{MIN_MARKERS} markers")
        markers = []
        seen = set()
        for k, m in enumerate(raw):
            if not isinstance(m, dict):
                raise BadInput(f"mat.json: markers[{k}] is not an object")
            d = m.get("dictionary")
            if not isinstance(d, str):
                raise BadInput(f"mat.json: markers[{k}].dictionary must be a string")
            aruco_dictionary(d)
            mid = m.get("id")
            if not isinstance(mid, int) or isinstance(mid, bool) or not 0 <= mid < _dictionary_size(d):
                raise BadInput(f"mat.json: markers[{k}].id {show(mid)} is not an id of {d}")
            if (d, mid) in seen:
                raise BadInput(f"mat.json: marker {d} id {mid} appears twice")
            seen.add((d, mid))
            c = m.get("corners_mm")
            if (not isinstance(c, list) or len(c) != 4
                    or not all(isinstance(p2, list) and len(p2) == 2 and all(map(_is_number, p2)) for p2 in c)):
                raise BadInput(f"mat.json: markers[{k}].corners_mm must be 4 [x, y] pairs")
            quad = tuple((float(x), float(y)) for x, y in c)
            if _quad_area_mm2(quad) < MIN_MARKER_AREA_MM2:
                raise BadInput(f"mat.json: markers[{k}].corners_mm enclose {_quad_area_mm2(quad):g} mm^2: a marker's "
                               f"four corners must span a square of at least {MIN_MARKER_AREA_MM2:g} mm^2")
            if _signed_area_mm2(quad) < 0:
                # (read so, every marker seen gave a pose from below the mat:
                # "mirrored image?", exit 3, blaming the photo; a break-test)
                raise BadInput(f"mat.json: markers[{k}].corners_mm {show(c)} run anticlockwise: give a marker's "
                               "corners as printed, top-left, top-right, bottom-right, bottom-left")
            side = min(math.dist(quad[i], quad[(i + 1) % 4]) for i in range(4))
            if side < MIN_MARKER_SIDE_MM:
                raise BadInput(f"mat.json: markers[{k}].corners_mm have a side of {side:g} mm: a printed marker's "
                               f"sides are at least {MIN_MARKER_SIDE_MM:g} mm")
            if not all(-_EDGE_MM <= x <= size[0] + _EDGE_MM and -_EDGE_MM <= y <= size[1] + _EDGE_MM
                       for x, y in quad):
                raise BadInput(f"mat.json: markers[{k}].corners_mm {show(c)} reach outside the "
                               f"{size[0]:g} x {size[1]:g} mm sheet")
            overlap = _overlap_mm2(quad, ((origin[0], origin[1]), (grid_end[0], origin[1]),
                                          (grid_end[0], grid_end[1]), (origin[0], grid_end[1])))
            if overlap > MAX_GRID_OVERLAP_MM2:
                raise BadInput(f"mat.json: markers[{k}].corners_mm {show(c)} lie {overlap:.0f} mm^2 on the tile "
                               f"grid: the tiles would cover the marker (markers go outside the grid)")
            centre = (sum(p2[0] for p2 in quad) / 4, sum(p2[1] for p2 in quad) / 4)
            for j, other in enumerate(markers):
                oc = (sum(p2[0] for p2 in other.corners_mm) / 4, sum(p2[1] for p2 in other.corners_mm) / 4)
                if math.dist(centre, oc) < MIN_MARKER_SIDE_MM:
                    raise BadInput(f"mat.json: markers[{j}] and markers[{k}] lie at the same place "
                                   f"(centres {math.dist(centre, oc):g} mm apart)")
            markers.append(MarkerSpec(d, mid, quad))
        return cls(size_mm=(size[0], size[1]), grid_origin_mm=(origin[0], origin[1]),
                   grid_tiles=(int(tiles[0]), int(tiles[1])), tile_mm=(tile_mm[0], tile_mm[1], tile_mm[2]),
                   px_per_mm=float(p), markers=tuple(markers), image=image)


#: the fewest markers a mat.json may describe: a pose rests on at least two
#: markers seen (:func:`vision.pose.estimate_pose`), so a mat with one could
#: never be found
MIN_MARKERS = 2
#: the tile grid (columns, rows) every mat.json gives: the layouts' 36 x 16
#: half-tile grid (:data:`companion.layouts.MAT_HALF_UNITS`) lies on it
STANDARD_GRID_TILES = (18, 8)
#: the largest sheet or tile side a mat.json may give, mm (a 10 m mat; beyond
#: it the numbers are a mistake, and near float's limit they overflow)
MAX_MAT_MM = 10_000.0
#: how far the grid or a marker may reach past the sheet's edge, mm (rounding
#: in a file written by another tool)
_EDGE_MM = 1e-6
#: the smallest marker a mat.json may describe, mm^2: four corners that
#: coincide or lie on a line give no pose (the printed markers are 40 mm wide)
MIN_MARKER_AREA_MM2 = 25.0
#: and the shortest side it may have, mm (a 1000 x 0.03 mm sliver has area
#: enough); two markers whose centres lie closer than this are one place
MIN_MARKER_SIDE_MM = 5.0
#: how much of a marker may lie on the tile grid, mm^2 (rounding in a file
#: written by another tool); more, and the tiles would hide it
MAX_GRID_OVERLAP_MM2 = 1.0


def _overlap_mm2(quad, rect) -> float:
    """Area shared by a marker's quadrilateral and the grid's rectangle,
    mm^2 (``cv2.intersectConvexConvex``; a quad that is not convex, as four
    corners in a crossed order, is taken by its convex hull)."""
    a = cv2.convexHull(np.asarray(quad, np.float32))
    b = np.asarray(rect, np.float32).reshape(-1, 1, 2)
    area, _ = cv2.intersectConvexConvex(a, b)
    return float(area)


def _quad_area_mm2(quad) -> float:
    """Area enclosed by four corners in order, mm^2 (the shoelace formula;
    a self-crossing order counts its two lobes against each other)."""
    return abs(_signed_area_mm2(quad))


def _signed_area_mm2(quad) -> float:
    """The shoelace sum of four corners in order, halved, mm^2: positive
    where they run clockwise as the sheet is seen (x right, y down), as an
    ArUco marker's corners do (top-left, top-right, bottom-right,
    bottom-left: OpenCV's ``detectMarkers``)."""
    xs = [p[0] for p in quad]
    ys = [p[1] for p in quad]
    return sum(xs[i] * ys[(i + 1) % 4] - xs[(i + 1) % 4] * ys[i] for i in range(4)) / 2.0


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _numbers(obj: dict, key: str, n: int, positive: bool = False) -> list[float]:
    v = obj.get(key)
    if not isinstance(v, list) or len(v) != n or not all(map(_is_number, v)):
        raise BadInput(f"mat.json: {key} must be a list of {n} numbers, got {show(v)}")
    if positive and any(x <= 0 for x in v):
        raise BadInput(f"mat.json: {key} must be positive, got {show(v)}")
    return [float(x) for x in v]


# --------------------------------------------------------------------------- geometry

def _slot_array(slots) -> np.ndarray:
    arr = np.asarray(list(slots) if not isinstance(slots, np.ndarray) else slots, dtype=np.float64)
    if arr.size == 0:
        return np.zeros((0, 3), np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise BadInput(f"slots must be (x, y, z) triples, got an array of shape {arr.shape}")
    return arr


def slot_face_corners_mm(slots: Iterable, spec: MatSpec) -> np.ndarray:
    """Object points of each slot's top face in the mat frame.

    A tile at slot ``(x, y, z)`` has its top face over
    ``[gx + (w/2) x, gx + (w/2)(x+2)]`` by ``[gy + (h/2) y, gy + (h/2)(y+2)]`` mm
    at height ``t (z + 1)`` (tile ``w x h x t`` = 30 x 40 x 20 mm by default;
    ../shared/CONTRACT.md, "Physical standard"), i.e. ``Z = -t (z + 1)``.

    Args:
        slots: ``N`` slots (``companion.layouts.Slot`` or any ``(x, y, z)``).
        spec: the mat.

    Returns:
        ``(N, 4, 3) float64`` corners (X, Y, Z) in mm, ordered top-left,
        top-right, bottom-right, bottom-left as seen from above.
    """
    s = _slot_array(slots)
    return _face_corners(s, spec, top=True)


def slot_box_corners_mm(slots: Iterable, spec: MatSpec) -> np.ndarray:
    """The full box of each slot's tile in the mat frame.

    Returns:
        ``(N, 8, 3) float64``: corners 0-3 are the top face (height
        ``t (z + 1)``) and 4-7 the bottom face (height ``t z``), each ordered
        top-left, top-right, bottom-right, bottom-left as seen from above.
    """
    s = _slot_array(slots)
    return np.concatenate([_face_corners(s, spec, top=True), _face_corners(s, spec, top=False)], axis=1)


def _face_corners(s: np.ndarray, spec: MatSpec, top: bool) -> np.ndarray:
    gx, gy = spec.grid_origin_mm
    tw, th, tt = spec.tile_mm
    x0 = gx + s[:, 0] * tw / 2
    y0 = gy + s[:, 1] * th / 2
    z = -tt * (s[:, 2] + (1 if top else 0))
    out = np.empty((len(s), 4, 3), np.float64)
    np.add(x0[:, None], (0.0, tw, tw, 0.0), out=out[:, :, 0])
    np.add(y0[:, None], (0.0, 0.0, th, th), out=out[:, :, 1])
    out[:, :, 2] = z[:, None]
    return out


def mm_to_px(points_mm: np.ndarray, spec: MatSpec) -> np.ndarray:
    """Mat mm ``(..., 2)`` to ``mat.png`` pixel coordinates (pixel centres at
    integers): ``u = x P - 0.5``.  Returns float64 of the same shape."""
    return np.asarray(points_mm, np.float64) * spec.px_per_mm - 0.5


def px_to_mm(points_px: np.ndarray, spec: MatSpec) -> np.ndarray:
    """Inverse of :func:`mm_to_px`: ``x = (u + 0.5) / P``."""
    return (np.asarray(points_px, np.float64) + 0.5) / spec.px_per_mm


def mm_to_px_matrix(spec: MatSpec) -> np.ndarray:
    """``(3, 3) float64`` homogeneous matrix of :func:`mm_to_px` (mat mm -> mat px)."""
    p = spec.px_per_mm
    return np.array([[p, 0, -0.5], [0, p, -0.5], [0, 0, 1]], np.float64)


# --------------------------------------------------------------------------- rendering

def _px_range(a_mm: float, b_mm: float, p: float) -> tuple[int, int]:
    """Pixel index range ``[i0, i1)`` whose centres lie in ``[a, b)`` mm."""
    return int(math.ceil(a_mm * p - 0.5)), int(math.ceil(b_mm * p - 0.5))


def _draw_marker(img: np.ndarray, m: MarkerSpec, p: float) -> None:
    """Paint an axis-aligned marker: each pixel takes the module its centre falls in."""
    c = m.corners
    (x0, y0), (x1, y1) = c.min(axis=0), c.max(axis=0)
    if not (np.allclose(c[0], (x0, y0)) and np.allclose(c[2], (x1, y1))):
        raise BadInput(f"marker {m.id}: only upright axis-aligned markers can be rendered")
    d = aruco_dictionary(m.dictionary)
    n = d.markerSize + 2
    bits = cv2.aruco.generateImageMarker(d, m.id, n, borderBits=1)  # one pixel per module
    i0, i1 = _px_range(x0, x1, p)
    j0, j1 = _px_range(y0, y1, p)
    ci = np.clip(((np.arange(i0, i1) + 0.5) / p - x0) / (x1 - x0) * n, 0, n - 1).astype(int)
    cj = np.clip(((np.arange(j0, j1) + 0.5) / p - y0) / (y1 - y0) * n, 0, n - 1).astype(int)
    img[j0:j1, i0:i1] = bits[np.ix_(cj, ci)][:, :, None]


def _line(img, p, a, b, ink, width_mm):
    t = max(1, int(round(width_mm * p)))
    pa = tuple(int(round(v * p - 0.5)) for v in a)
    pb = tuple(int(round(v * p - 0.5)) for v in b)
    cv2.line(img, pa, pb, (ink, ink, ink), t, cv2.LINE_AA)


def _text(img, p, text, centre_mm, height_mm, ink, thickness_mm=None):
    font = cv2.FONT_HERSHEY_SIMPLEX
    (_, h1), _ = cv2.getTextSize("0", font, 1.0, 1)
    scale = height_mm * p / h1
    th = max(1, int(round((thickness_mm or height_mm / 8) * p)))
    (w, h), _ = cv2.getTextSize(text, font, scale, th)
    org = (int(round(centre_mm[0] * p - w / 2)), int(round(centre_mm[1] * p + h / 2)))
    cv2.putText(img, text, org, font, scale, (ink, ink, ink), th, cv2.LINE_AA)


def render_mat(spec: MatSpec) -> np.ndarray:
    """Draw the printable mat.

    White sheet; the grid of ``grid_tiles`` cells with thin outlines,
    half-tile guides (a tick at the middle of each cell edge, a cross at each
    cell centre, so tiles offset by half a tile can be placed too), a faint
    ``x,y`` label in each cell giving the half-unit slot coordinates of a tile
    placed squarely on it, the markers, and a caption with the physical size
    and a 50 mm scale bar in the bottom band when there is room.

    Args:
        spec: the mat; drawn at ``spec.px_per_mm``.

    Returns:
        ``(H, W, 3) uint8`` BGR image, ``(W, H) = spec.image_size_px``.

    Raises:
        BadInput: a marker that is not an upright axis-aligned square.
    """
    p = float(spec.px_per_mm)
    w_px, h_px = spec.image_size_px
    img = np.full((h_px, w_px, 3), 255, np.uint8)
    gx, gy = spec.grid_origin_mm
    cols, rows = spec.grid_tiles
    tw, th = spec.tile_mm[0], spec.tile_mm[1]
    gw, gh = spec.grid_size_mm
    lw = 0.5  # mm
    for i in range(cols + 1):
        _line(img, p, (gx + i * tw, gy), (gx + i * tw, gy + gh), _GRID_INK, lw)
    for j in range(rows + 1):
        _line(img, p, (gx, gy + j * th), (gx + gw, gy + j * th), _GRID_INK, lw)
    tick = 3.0
    for i in range(cols):
        for j in range(rows):
            x0, y0 = gx + i * tw, gy + j * th
            cx, cy = x0 + tw / 2, y0 + th / 2
            _line(img, p, (cx - tick, cy), (cx + tick, cy), _GRID_INK, lw / 2)
            _line(img, p, (cx, cy - tick), (cx, cy + tick), _GRID_INK, lw / 2)
            for a, b in (((cx, y0), (cx, y0 + tick)), ((cx, y0 + th), (cx, y0 + th - tick)),
                         ((x0, cy), (x0 + tick, cy)), ((x0 + tw, cy), (x0 + tw - tick, cy))):
                _line(img, p, a, b, _GRID_INK, lw)
            _text(img, p, f"{2 * i},{2 * j}", (cx, y0 + th * 0.25), 2.5, _LABEL_INK)
    for m in spec.markers:
        _draw_marker(img, m, p)
    _caption(img, spec)
    return img


def _caption(img: np.ndarray, spec: MatSpec) -> None:
    """Size caption and scale bar in free room of the bottom band (skipped when none)."""
    p = spec.px_per_mm
    gy_end = spec.grid_origin_mm[1] + spec.grid_size_mm[1]
    band = (gy_end, spec.size_mm[1])
    if band[1] - band[0] < 20:
        return
    # free horizontal gaps in the band, keeping 6 mm from any marker
    busy = sorted((m.corners[:, 0].min() - 6, m.corners[:, 0].max() + 6) for m in spec.markers
                  if m.corners[:, 1].max() > band[0] and m.corners[:, 1].min() < band[1])
    gaps, x = [], 6.0
    for a, b in busy:
        if a > x:
            gaps.append((x, a))
        x = max(x, b)
    if spec.size_mm[0] - 6 > x:
        gaps.append((x, spec.size_mm[0] - 6))
    gaps = sorted((g for g in gaps if g[1] - g[0] >= 70), key=lambda g: g[0])
    if not gaps:
        return
    yc = (band[0] + band[1]) / 2
    w, h = spec.size_mm
    lines = [f"companion mat {w:g} x {h:g} mm", "print at 100% (actual size)",
             f"grid {spec.grid_tiles[0]} x {spec.grid_tiles[1]} tiles of {spec.tile_mm[0]:g} x {spec.tile_mm[1]:g} mm"]
    a, b = gaps[0]
    for k, t in enumerate(lines):
        _text(img, p, t, ((a + b) / 2, yc - 7 + 7 * k), 3.0, 60)
    if len(gaps) > 1:
        a, b = gaps[1]
        xm = (a + b) / 2
        x0, x1 = xm - 25, xm + 25
        _line(img, p, (x0, yc), (x1, yc), 0, 1.0)
        for xt in (x0, x0 + 10, x0 + 20, x0 + 30, x0 + 40, x1):
            _line(img, p, (xt, yc - 2.5), (xt, yc + 2.5), 0, 0.4)
        _text(img, p, "50 mm", (xm, yc + 7), 3.0, 60)


# --------------------------------------------------------------------------- PDF

@dataclass(frozen=True)
class A4Tiling:
    """How the mat is cut into A4 pages (:func:`a4_tiling`): ``nx`` x ``ny``
    pages of ``page_mm`` (w, h), each printing ``part_mm`` (w, h) of the mat;
    neighbouring parts overlap by ``overlap_mm`` (across, down; 0 where there
    is one page that way), all in mm."""

    nx: int
    ny: int
    page_mm: tuple[float, float]
    part_mm: tuple[float, float]
    overlap_mm: tuple[float, float]

    @property
    def pages(self) -> int:
        return self.nx * self.ny

    def origin_mm(self, row: int, col: int, size_mm: tuple[float, float]) -> tuple[float, float]:
        """The mat position (x, y) in mm of the top-left corner of page (``row``, ``col``)."""
        w, h = size_mm
        tw, th = self.part_mm
        return (0.0 if self.nx == 1 else col * (w - tw) / (self.nx - 1),
                0.0 if self.ny == 1 else row * (h - th) / (self.ny - 1))


def a4_tiling(size_mm: tuple[float, float], margin_mm: float = 10.0, min_overlap_mm: float = 10.0) -> A4Tiling:
    """:func:`page_tiling` on A4 paper."""
    return page_tiling(size_mm, A4_MM, margin_mm, min_overlap_mm)


def page_tiling(size_mm: tuple[float, float], paper_mm: tuple[float, float] = A4_MM, margin_mm: float = 10.0,
                min_overlap_mm: float = 10.0) -> A4Tiling:
    """The fewest pages of ``paper_mm`` (w, h; portrait or landscape) that
    print a mat of ``size_mm`` inside a ``margin_mm`` margin with neighbours
    overlapping by at least ``min_overlap_mm``; the pages are spread evenly
    over the mat, so the overlaps are usually larger (the default mat on A4:
    8 pages overlapping 55 mm across, 134 mm down; on US Letter: 8 pages, 63
    and 99 mm)."""
    w_mm, h_mm = size_mm
    best = None
    for pw, ph in (tuple(paper_mm), tuple(paper_mm)[::-1]):
        uw, uh = pw - 2 * margin_mm, ph - 2 * margin_mm
        nx = max(1, math.ceil((w_mm - min_overlap_mm) / (uw - min_overlap_mm)))
        ny = max(1, math.ceil((h_mm - min_overlap_mm) / (uh - min_overlap_mm)))
        if best is None or nx * ny < best[0]:
            best = (nx * ny, pw, ph, uw, uh, nx, ny)
    _, pw, ph, uw, uh, nx, ny = best
    tw, th = min(uw, w_mm), min(uh, h_mm)
    ox = 0.0 if nx == 1 else tw - (w_mm - tw) / (nx - 1)
    oy = 0.0 if ny == 1 else th - (h_mm - th) / (ny - 1)
    return A4Tiling(nx, ny, (pw, ph), (tw, th), (ox, oy))


def marker_edge_mm(spec: "MatSpec") -> float:
    """The least distance (mm) from a marker to the mat's edge: printed on
    one sheet of the mat's size, a printer that leaves more than this
    unprinted clips a marker (the default A2 mat: 4 mm, its side markers 5
    and 11; a break-test, session 58, found them clipped and 1.1 mm off
    with a 5 mm margin)."""
    w, h = spec.size_mm
    return float(min(min(c[:, 0].min(), c[:, 1].min(), w - c[:, 0].max(), h - c[:, 1].max())
                     for c in (m.corners for m in spec.markers)))


def render_mat_pdf(spec: MatSpec, image: np.ndarray | None = None, paper: str = "full",
                   margin_mm: float = 10.0, overlap_mm: float = 10.0) -> bytes:
    """A PDF that prints the mat at its physical size.

    Args:
        spec: the mat.
        image: :func:`render_mat` output (rendered when None).
        paper: ``"full"`` one page of ``spec.size_mm`` (A2 for the default
            mat), or ``"a4"`` or ``"letter"``: tiled A4 or US Letter pages
            (portrait or landscape, whichever needs fewer), each printing a
            part of the mat inside a ``margin_mm`` margin, neighbours
            overlapping by at least ``overlap_mm`` (:func:`page_tiling`) so
            the sheets can be trimmed on one side and taped on the grid
            lines; each page's footer (which part it holds) lies 7 mm from
            the paper's edge, inside what printers print.

    Returns:
        The PDF file's bytes (one shared greyscale Flate image, PDF 1.4).

    Raises:
        BadInput: unknown ``paper``.
    """
    if image is None:
        image = render_mat(spec)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    w_mm, h_mm = spec.size_mm
    k = 72.0 / 25.4  # points per mm
    pages: list[tuple[float, float, bytes]] = []  # (page w mm, page h mm, content)
    if paper == "full":
        return image_pdf(gray, spec.size_mm)
    if paper in PAPERS_MM:
        tiling = page_tiling(spec.size_mm, PAPERS_MM[paper], margin_mm, overlap_mm)
        nx, ny = tiling.nx, tiling.ny
        pw, ph = tiling.page_mm
        tw, th = tiling.part_mm
        for r in range(ny):
            for c in range(nx):
                x0, y0 = tiling.origin_mm(r, c, spec.size_mm)
                m = margin_mm
                tx = (m - x0) * k
                ty = (ph - m) * k - (h_mm - y0) * k
                label = (f"companion mat {w_mm:g} x {h_mm:g} mm - page {r * nx + c + 1} of {nx * ny} "
                         f"(row {r + 1}, column {c + 1}); mat mm x {x0:.0f}-{x0 + tw:.0f}, y {y0:.0f}-{y0 + th:.0f}; "
                         f"print at 100%; pages overlap {tiling.overlap_mm[0]:.0f} mm across, "
                         f"{tiling.overlap_mm[1]:.0f} mm down: line up the grid")
                content = (
                    f"q {m * k:.3f} {(ph - m - th) * k:.3f} {tw * k:.3f} {th * k:.3f} re W n\n"
                    f"{w_mm * k:.3f} 0 0 {h_mm * k:.3f} {tx:.3f} {ty:.3f} cm /Im0 Do Q\n"
                    f"q 0.6 G 0.3 w {m * k:.3f} {(ph - m - th) * k:.3f} {tw * k:.3f} {th * k:.3f} re S Q\n"
                    # (the footer 7 mm up: at 4 mm it lay where printers
                    # print nothing; a break-test, session 58)
                    f"BT /F1 6 Tf {m * k:.3f} {max(3.0, m - 3.0) * k:.3f} Td ({label}) Tj ET\n").encode()
                pages.append((pw, ph, content))
    else:
        raise BadInput(f"unknown paper {paper!r} (expected 'full', 'a4' or 'letter')")
    return _pdf(gray, pages)


def image_pdf(image: np.ndarray, size_mm: tuple[float, float]) -> bytes:
    """A one-page PDF of ``size_mm`` (w, h) filled by ``image`` (BGR or grey
    uint8), so that printing it at 100% gives the image its physical size."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    k = 72.0 / 25.4
    w, h = size_mm
    return _pdf(gray, [(w, h, f"q {w * k:.3f} 0 0 {h * k:.3f} 0 0 cm /Im0 Do Q\n".encode())])


def _pdf(gray: np.ndarray, pages: list[tuple[float, float, bytes]]) -> bytes:
    """Assemble a minimal PDF: catalog, pages, one image XObject, Helvetica, pages."""
    k = 72.0 / 25.4
    h, w = gray.shape
    img = zlib.compress(np.ascontiguousarray(gray).tobytes(), 9)
    objs: list[bytes] = []
    n_pages = len(pages)
    page_ids = [5 + 2 * i for i in range(n_pages)]
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objs.append(f"<< /Type /Pages /Count {n_pages} /Kids [{' '.join(f'{i} 0 R' for i in page_ids)}] >>".encode())
    objs.append(f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
                f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(img)} >>\nstream\n".encode()
                + img + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, (pw, ph, content) in enumerate(pages):
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw * k:.3f} {ph * k:.3f}] "
                    f"/Resources << /XObject << /Im0 3 0 R >> /Font << /F1 4 0 R >> >> "
                    f"/Contents {page_ids[i] + 1} 0 R >>".encode())
        objs.append(f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"endstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
