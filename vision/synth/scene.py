"""Synthetic overhead photos of a game in progress, with exact truth.

A scene is the printed mat (:func:`vision.mat.render_mat`, mapped by its plane
homography) on a table, tiles as 30 x 40 x 20 mm boxes stacked on the slots of
a layout with some free pairs already removed, optional hands over the board,
and camera effects.  Truth gives the camera, and per slot: present, face,
visible fraction of the face, placement jitter and the projected face corners.

Rendering (all seeded by one ``np.random.Generator``):

* table: a procedural texture (:mod:`vision.synth.textures`) in the table
  plane, warped with the plane homography ``K [r1 r2 t]``;
* mat: ``render_mat`` at a mip level close to the frame's scale, warped the
  same way (``cv2.warpPerspective``, ``BORDER_TRANSPARENT``);
* tiles, painter's algorithm: layer by layer from the mat up, and within a
  layer from far to near (horizontal distance to the camera).  Every point of
  a layer-``z+1`` box is at least as high as every point of a layer-``z`` box,
  and the camera looks down from above them all, so nothing drawn later on a
  higher layer can be hidden by a lower one: the order is exact between
  layers, and within a layer it is the usual depth sort of disjoint boxes.
  Each box: its visible sides (back-face culled) in three bands (a light
  bevel, ivory, the coloured back layer) shaded by Lambert's law, then the
  face art (:func:`vision.art.render_face`) warped per tile into a small ROI
  (``cv2.warpPerspective`` of a mip level of the face, alpha from an
  anti-aliased polygon), then a bevel line round the face;
* soft shadows: before each layer, its boxes' shadows (hull of the footprint
  and the footprint shifted along the light) are filled, blurred and
  multiplied into what lies below;
* glare: soft specular blobs added on glossy faces (less on the mat);
* hands (:mod:`vision.synth.hands`), then lighting gradient, vignette, white
  balance, defocus or motion blur, sensor noise and JPEG re-encoding.

A label image keeps, for every pixel, the slot whose face is seen there
(``i + 1``), :data:`LABEL_SIDE`, :data:`LABEL_HAND` or 0 (mat / table): the
visible fraction of a face is its label count over its projected area.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import cv2
import numpy as np

from companion.errors import BadInput
from companion.layouts import Layout, Slot
from companion.rules import Board, Geometry, board_after
from companion.tiles import tileset
from vision.mat import MatSpec, render_mat, slot_face_corners_mm
from vision.pose import Camera, MatPose
from vision.art import render_face
from vision.synth.hands import HandPose, draw_hand, sample_hand
from vision.synth.textures import TableLook, sample_table, table_image

LABEL_SIDE = 65534
LABEL_HAND = 65535

DEFAULT_IMAGE_SIZE = (1280, 720)

# Tile body colours (BGR): ivory / bone / white tops and sides, and the coloured
# back layer (None: a one-colour tile, the back as the body).
IVORY_BGR = ((205, 228, 240), (190, 215, 232), (215, 235, 245), (175, 205, 225), (225, 238, 242),
             (236, 238, 238), (242, 240, 234))
BACK_BGR = ((60, 130, 40), (40, 90, 25), (150, 85, 30), (150, 140, 40), (40, 120, 230),
            (40, 45, 175), (45, 185, 230), (130, 70, 150), (160, 160, 60), (70, 70, 70), None, None)

_SH = 4  # sub-pixel bits for cv2 drawing
_ONE = 1 << _SH


# --------------------------------------------------------------------------- options

@dataclass(frozen=True)
class Augment:
    """Strengths of the random effects (0 turns one off; 1 is the default range).

    Attributes:
        jitter_mm: largest offset of a tile from its slot, mm (uniform in a disc).
        jitter_deg: largest rotation of a tile about its centre, degrees.
        flip: probability that a tile lies turned 180 degrees.
        lighting: light gradient, vignette, exposure and white balance.
        shadows: tile shadows (strength).
        glare: specular blobs on faces (probability and strength).
        blur: defocus / motion blur (probability and size).
        noise: sensor noise (sigma up to 6 grey levels at 1).
        jpeg: probability of JPEG re-encoding (quality 35-95).
    """

    jitter_mm: float = 3.0
    jitter_deg: float = 4.0
    flip: float = 0.5
    lighting: float = 1.0
    shadows: float = 1.0
    glare: float = 1.0
    blur: float = 1.0
    noise: float = 1.0
    jpeg: float = 1.0

    @classmethod
    def none(cls) -> "Augment":
        """No jitter, no flips, no photographic effects: a clean render."""
        return cls(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, eq=False)
class TrueCamera:
    """The camera that took a synthetic picture (no lens distortion).

    Attributes:
        K: ``(3, 3) float64`` intrinsics, px.
        rvec: ``(3,) float64`` Rodrigues rotation mat frame -> camera frame.
        tvec: ``(3,) float64`` translation, mm.
        image_size: ``(w, h)`` px.
    """

    K: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    image_size: tuple[int, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "K", np.asarray(self.K, np.float64).reshape(3, 3))
        object.__setattr__(self, "rvec", np.asarray(self.rvec, np.float64).reshape(3))
        object.__setattr__(self, "tvec", np.asarray(self.tvec, np.float64).reshape(3))
        object.__setattr__(self, "image_size", (int(self.image_size[0]), int(self.image_size[1])))

    @classmethod
    def from_rotation(cls, K, R, t, image_size) -> "TrueCamera":
        return cls(K, cv2.Rodrigues(np.asarray(R, np.float64))[0].reshape(3), t, image_size)

    @property
    def dist(self) -> np.ndarray:
        """``(5,) float64`` zeros: synthetic frames have no lens distortion."""
        return np.zeros(5)

    @property
    def R(self) -> np.ndarray:
        """``(3, 3) float64`` rotation matrix of :attr:`rvec`."""
        return cv2.Rodrigues(self.rvec)[0]

    @property
    def centre_mm(self) -> np.ndarray:
        """``(3,)`` camera centre in the mat frame (Z < 0: above the mat)."""
        return -self.R.T @ self.tvec

    def camera(self) -> Camera:
        """The intrinsics as :class:`vision.pose.Camera`."""
        return Camera(self.K, self.dist, self.image_size, "calibrated")

    def pose(self, n_markers: int = 0) -> MatPose:
        """The true pose as :class:`vision.pose.MatPose` (reprojection error 0)."""
        return MatPose(self.rvec, self.tvec, self.camera(), 0.0, n_markers)

    def project(self, points_mm: np.ndarray) -> np.ndarray:
        """Pinhole projection of ``(..., 3)`` mat-frame mm to ``(..., 2) float64`` px
        (same as ``cv2.projectPoints`` without distortion)."""
        p = np.asarray(points_mm, np.float64)
        c = p @ self.R.T + self.tvec
        uvw = c @ self.K.T
        return uvw[..., :2] / uvw[..., 2:3]

    def depth(self, points_mm: np.ndarray) -> np.ndarray:
        """Camera-frame depth (mm) of ``(..., 3)`` points."""
        return np.asarray(points_mm, np.float64) @ self.R[2] + self.tvec[2]

    def plane_homography(self, height_mm: float = 0.0) -> np.ndarray:
        """``(3, 3)`` homography mat mm ``(X, Y, 1)`` at ``height_mm`` -> image px."""
        R = self.R
        H = self.K @ np.column_stack([R[:, 0], R[:, 1], self.tvec - height_mm * R[:, 2]])
        return H / H[2, 2]

    def scale_at(self, point_mm) -> float:
        """Image px per mm (on a fronto-parallel patch) at a mat-frame point."""
        return float(self.K[0, 0] / self.depth(np.asarray(point_mm, np.float64)))

    def rotated(self, R_delta: np.ndarray) -> "TrueCamera":
        """The camera turned by ``R_delta`` about its own centre (camera frame):
        the picture moves by the homography ``K R_delta K^-1``."""
        R = np.asarray(R_delta, np.float64) @ self.R
        return TrueCamera.from_rotation(self.K, R, np.asarray(R_delta) @ self.tvec, self.image_size)

    def moved(self, shift_mm=(0.0, 0.0, 0.0), rot_deg=(0.0, 0.0, 0.0)) -> "TrueCamera":
        """The camera moved by ``shift_mm`` (mat frame) and turned by ``rot_deg``
        (Rodrigues vector in degrees, camera frame) about its centre."""
        Rd = cv2.Rodrigues(np.deg2rad(np.asarray(rot_deg, np.float64)))[0]
        C = self.centre_mm + np.asarray(shift_mm, np.float64)
        R = Rd @ self.R
        return TrueCamera.from_rotation(self.K, R, -R @ C, self.image_size)

    def expanded(self, margin: int) -> "TrueCamera":
        """The same camera with ``margin`` px added on every side of the picture."""
        K = self.K.copy()
        K[0, 2] += margin
        K[1, 2] += margin
        return TrueCamera(K, self.rvec, self.tvec, (self.image_size[0] + 2 * margin, self.image_size[1] + 2 * margin))

    def to_json(self) -> dict:
        """The contract's camera JSON plus ``rvec`` and ``tvec_mm``."""
        return {"camera_matrix": self.K.tolist(), "dist_coeffs": self.dist.tolist(),
                "image_size": list(self.image_size), "rvec": self.rvec.tolist(), "tvec_mm": self.tvec.tolist()}

    @classmethod
    def from_json(cls, obj: dict) -> "TrueCamera":
        return cls(obj["camera_matrix"], obj["rvec"], obj["tvec_mm"], tuple(obj["image_size"]))

    @classmethod
    def of(cls, camera) -> "TrueCamera":
        """Accept a :class:`TrueCamera` or a :class:`vision.pose.MatPose`."""
        if isinstance(camera, TrueCamera):
            return camera
        if hasattr(camera, "camera") and hasattr(camera, "rvec"):
            cam = camera.camera
            if np.any(np.asarray(cam.dist) != 0):
                raise BadInput("synthetic cameras have no distortion; got a pose with dist_coeffs")
            return cls(cam.K, camera.rvec, camera.tvec, cam.image_size)
        raise BadInput(f"camera must be a TrueCamera or a MatPose, got {type(camera).__name__}")


@dataclass(frozen=True, eq=False)
class Placement:
    """How each tile sits on its slot.

    Attributes:
        jitter: ``(N, 3) float64`` per slot ``(dx mm, dy mm, rotation deg)``:
            offset of the tile's centre in the mat frame and its turn about
            the vertical (positive = clockwise seen from above, X towards Y).
        rotated: ``(N,) bool`` the face lies turned 180 degrees.
    """

    jitter: np.ndarray
    rotated: np.ndarray

    def __post_init__(self) -> None:
        j = np.asarray(self.jitter, np.float64).reshape(-1, 3)
        r = np.asarray(self.rotated, bool).reshape(-1)
        if len(j) != len(r):
            raise BadInput("placement: jitter and rotated differ in length")
        object.__setattr__(self, "jitter", j)
        object.__setattr__(self, "rotated", r)

    @classmethod
    def exact(cls, n: int) -> "Placement":
        """Every tile squarely on its slot, upright."""
        return cls(np.zeros((n, 3)), np.zeros(n, bool))


@dataclass(frozen=True)
class Look:
    """Everything about a scene's appearance that is not geometry.

    Attributes:
        table: the table texture.
        ivory, back: BGR tile body colours (top part, coloured back layer).
        back_frac: fraction of the 20 mm thickness that is back layer.
        light: ``(3,)`` unit vector towards the light in the mat frame, with
            the third component UP (positive), i.e. ``(lx, ly, -lz)``.
        ambient: ambient share of the lighting (0-1).
        shadow: shadow darkness (0-1); shadow_soft_mm: blur of shadows, mm.
        glare: specular blobs ``(x, y, rx, ry, angle_deg, amplitude)``, x/y/rx/ry as
            fractions of the image width/height, amplitude in grey levels.
        gradient: ``(gx, gy)`` relative brightness slope across the image.
        vignette: darkening at the corners (0-1).
        exposure: global gain; white: ``(3,)`` BGR gains.
        blur: ``(kind, size, angle_deg)``, kind one of "none", "gauss", "motion".
        noise: Gaussian noise sigma, grey levels.
        jpeg: JPEG quality, 0 for none.
        paper: BGR gains of the mat print; face_tint: BGR gains of the face art.
    """

    table: TableLook
    ivory: tuple[float, float, float] = IVORY_BGR[0]
    back: tuple[float, float, float] = BACK_BGR[0]
    back_frac: float = 0.4
    light: tuple[float, float, float] = (0.35, 0.35, 0.866)
    ambient: float = 0.6
    shadow: float = 0.0
    shadow_soft_mm: float = 2.5
    glare: tuple = ()
    gradient: tuple[float, float] = (0.0, 0.0)
    vignette: float = 0.0
    exposure: float = 1.0
    white: tuple[float, float, float] = (1.0, 1.0, 1.0)
    blur: tuple = ("none", 0.0, 0.0)
    noise: float = 0.0
    jpeg: int = 0
    paper: tuple[float, float, float] = (1.0, 1.0, 1.0)
    face_tint: tuple[float, float, float] = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class SceneSpec:
    """What to render.

    Attributes:
        variant: tile set (``companion.tiles.VARIANTS``).
        layout: the layout, in mat coordinates (slots as placed on the mat's
            36 x 16 half-unit grid, e.g. ``companion.layouts.shifted_to_origin``).
        removed: slots already taken off, in removal order (None: draw
            ``n_removed`` at random as free pairs).
        n_removed: tiles to remove when ``removed`` is None: an int, a
            ``(lo, hi)`` range, or None for 0 to 60% of the layout.  Rounded
            down to pairs; removal stops early when no two tiles are free.
        tilt_deg: range of the camera's tilt from straight down.
        upright: probability that the mat appears roughly upright (yaw within
            a few degrees); otherwise any yaw.
        fill: range of the mat's extent as a fraction of the frame
            (``max(w_mat / W, h_mat / H)`` of its projected box).
        hfov_deg: range of the horizontal field of view.
        hands: probability of hands over the board (True = 1, False = 0).
        image_size: ``(W, H)`` px (ignored when ``camera`` is given).
        face_px_per_mm: resolution of the face art handed to the renderer.
        augment: effect strengths.
        camera: a fixed camera (:class:`TrueCamera` or ``MatPose``) instead of a
            random one, e.g. to render a sequence from one view.
        mat: the mat (default ``MatSpec.default()``).
        faces: face id per slot (None: a random deal).
        placement: per-slot jitter and flips (None: random per ``augment``).
        look: appearance (None: random per ``augment``).
    """

    variant: str
    layout: Layout
    removed: tuple | None = None
    n_removed: int | tuple[int, int] | None = None
    tilt_deg: tuple[float, float] = (0.0, 45.0)
    upright: float = 0.75
    fill: tuple[float, float] = (0.5, 0.95)
    hfov_deg: tuple[float, float] = (48.0, 72.0)
    hands: float | bool = 0.0
    image_size: tuple[int, int] = DEFAULT_IMAGE_SIZE
    face_px_per_mm: float = 10.0
    augment: Augment = field(default_factory=Augment)
    camera: object = None
    mat: MatSpec | None = None
    faces: tuple[str, ...] | None = None
    placement: Placement | None = None
    look: Look | None = None


# --------------------------------------------------------------------------- results

@dataclass(eq=False)
class SceneTruth:
    """What is really in a synthetic picture.  Arrays are indexed like ``layout.slots``.

    Attributes:
        variant, layout, mat: as rendered.
        camera: the true camera (``camera.pose()`` gives a ``MatPose``).
        dealt: face id dealt to each slot (also for removed slots).
        faces: face id of the tile in each slot now, None where removed.
        present: ``(N,) bool`` a tile stands in the slot.
        free: free flag per slot by ``companion.rules`` (None where removed).
        removed: the removed slots in removal order (pairs).
        visible: ``(N,) float64`` fraction of the face's projected area that is
            seen (not hidden by higher tiles, hands or the frame edge); 0 where removed.
        jitter: ``(N, 3)`` ``(dx mm, dy mm, rotation deg)`` of each tile.
        rotated: ``(N,) bool`` face turned 180 degrees.
        slot_corners_px: ``(N, 4, 2)`` the slots' nominal top faces projected
            (``slot_face_corners_mm`` through the true pose), TL, TR, BR, BL.
        face_corners_px: ``(N, 4, 2)`` the drawn top faces (with jitter), same
            corner order in the mat's orientation: for a tile turned 180
            degrees the art's own top-left lies at BR.
        mat_corners_px: ``(4, 2)`` the mat sheet's corners.
        hands: number of hands seen (at least one pixel in the frame).
        hand_mask: ``(H, W) bool`` pixels covered by a hand (None when no hand is seen).
    """

    variant: str
    layout: Layout
    mat: MatSpec
    camera: TrueCamera
    dealt: tuple[str, ...]
    faces: tuple[str | None, ...]
    present: np.ndarray
    free: tuple[bool | None, ...]
    removed: tuple[Slot, ...]
    visible: np.ndarray
    jitter: np.ndarray
    rotated: np.ndarray
    slot_corners_px: np.ndarray
    face_corners_px: np.ndarray
    mat_corners_px: np.ndarray
    hands: int = 0
    hand_mask: np.ndarray | None = None

    def pose(self) -> MatPose:
        """The true pose as ``vision.pose.MatPose``."""
        return self.camera.pose(len(self.mat.markers))

    def recognize_json(self) -> dict:
        """The answer ``companion recognize --json`` should give (faces even where
        hidden; use :attr:`visible` to decide which a recogniser can read)."""
        return {"mat_found": True,
                "tiles": [{"slot": list(s), "present": bool(p), "face": f, "free": fr}
                          for s, p, f, fr in zip(self.layout.slots, self.present, self.faces, self.free)]}

    def to_json(self) -> dict:
        """JSON-ready summary (no masks)."""
        return {"variant": self.variant, "layout": self.layout.to_json(), "camera": self.camera.to_json(),
                "removed": [list(s) for s in self.removed], "hands": self.hands,
                "tiles": [{"slot": list(s), "present": bool(p), "face": f, "dealt": d, "free": fr,
                           "visible": round(float(v), 4), "jitter": [round(float(x), 3) for x in j],
                           "rotated": bool(r),
                           "face_corners_px": np.round(c, 3).tolist()}
                          for s, p, f, d, fr, v, j, r, c in zip(self.layout.slots, self.present, self.faces,
                                                                 self.dealt, self.free, self.visible, self.jitter,
                                                                 self.rotated, self.face_corners_px)]}


@dataclass(eq=False)
class Scene:
    """A rendered picture and its truth.

    Attributes:
        image: ``(H, W, 3) uint8`` BGR.
        truth: :class:`SceneTruth`.
        labels: ``(H, W) uint16``: ``i + 1`` where slot ``i``'s face is seen,
            :data:`LABEL_SIDE` on tile sides, :data:`LABEL_HAND` on hands, 0 elsewhere.
    """

    image: np.ndarray
    truth: SceneTruth
    labels: np.ndarray


# --------------------------------------------------------------------------- sampling

def deal_faces(variant: str, n: int, rng: np.random.Generator) -> tuple[str, ...]:
    """A random deal of ``n`` face ids from the variant's 144-tile set (sets
    repeated when ``n > 144``).

    Raises:
        BadInput: unknown variant.
    """
    tiles = tileset(variant).tiles()
    pool = tiles * -(-n // len(tiles))  # whole sets, as few as hold n tiles
    order = rng.permutation(len(pool))[:n]
    return tuple(pool[i] for i in order)


def remove_free_pairs(layout: Layout, faces: Sequence[str], count: int, rng: np.random.Generator,
                      variant: str | None = None) -> tuple[Slot, ...]:
    """Play ``count // 2`` random moves from the full layout: each removes two
    tiles that are free at that moment (``companion.rules.Board``), a matching
    pair when one is free (needs ``variant``), else any two free tiles.

    Returns:
        The removed slots in order (pairs); fewer when fewer than two tiles are
        free at some point.
    """
    board = Board(layout)
    key = {f.id: f.match for f in tileset(variant).faces} if variant else None
    out: list[Slot] = []
    for _ in range(count // 2):
        free = board.free_indices()
        if len(free) < 2:
            break
        pair = None
        if key is not None:
            groups: dict[str, list[int]] = {}
            for i in free:
                groups.setdefault(key[faces[i]], []).append(i)
            pairs = [g for g in groups.values() if len(g) >= 2]
            if pairs:
                g = pairs[int(rng.integers(len(pairs)))]
                pair = tuple(int(i) for i in rng.choice(g, 2, replace=False))
        if pair is None:
            pair = tuple(int(i) for i in rng.choice(free, 2, replace=False))
        for i in pair:
            board.remove(i)
            out.append(layout.slots[i])
    return tuple(out)


def sample_placement(n: int, rng: np.random.Generator, augment: Augment) -> Placement:
    """Random jitter (uniform in a disc of ``jitter_mm``, rotation uniform in
    ``+-jitter_deg``) and 180-degree flips (probability ``flip``)."""
    r = augment.jitter_mm * np.sqrt(rng.random(n))
    a = rng.uniform(0, 2 * np.pi, n)
    rot = rng.uniform(-1, 1, n) * augment.jitter_deg
    jitter = np.column_stack([r * np.cos(a), r * np.sin(a), rot])
    return Placement(jitter, rng.random(n) < augment.flip)


def sample_look(rng: np.random.Generator, augment: Augment) -> Look:
    """A random appearance; every effect scaled by ``augment``."""
    a = augment
    table = sample_table(rng)
    base_ivory = IVORY_BGR[int(rng.integers(len(IVORY_BGR)))]
    ivory = tuple(float(np.clip(c * rng.uniform(0.95, 1.04), 0, 255)) for c in base_ivory)
    base_back = BACK_BGR[int(rng.integers(len(BACK_BGR)))]
    shade = rng.uniform(0.85, 1.15, 3)
    back = (tuple(c * 0.97 for c in ivory) if base_back is None
            else tuple(float(np.clip(c * f, 0, 255)) for c, f in zip(base_back, shade)))
    if a.lighting > 0:
        elev = math.radians(rng.uniform(48, 85))
        az = rng.uniform(0, 2 * np.pi)
        ambient = float(rng.uniform(0.45, 0.7))
    else:
        elev, az, ambient = math.radians(60), math.radians(225), 0.6
    light = (math.cos(elev) * math.cos(az), math.cos(elev) * math.sin(az), math.sin(elev))
    glare = []
    if a.glare > 0 and rng.random() < 0.7 * min(1.0, a.glare):
        for _ in range(int(rng.integers(1, 3))):
            glare.append((float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.1, 0.9)),
                          float(rng.uniform(0.03, 0.12)), float(rng.uniform(0.03, 0.12)),
                          float(rng.uniform(0, 180)), float(rng.uniform(30, 120) * a.glare)))
    L = a.lighting
    blur = ("none", 0.0, 0.0)
    u = rng.random()
    if u < 0.45 * min(1.0, a.blur):
        blur = ("gauss", float(rng.uniform(0.3, 1.5) * a.blur), 0.0)
    elif u < 0.6 * min(1.0, a.blur):
        blur = ("motion", float(rng.uniform(2, 7) * a.blur), float(rng.uniform(0, 180)))
    jpeg = int(rng.integers(35, 96)) if rng.random() < a.jpeg else 0
    warm = rng.uniform(0, 0.06)
    return Look(
        table=table, ivory=ivory, back=back, back_frac=float(rng.uniform(0.3, 0.5)),
        light=light, ambient=ambient,
        shadow=float(rng.uniform(0.15, 0.4) * a.shadows) if a.shadows > 0 else 0.0,
        shadow_soft_mm=float(rng.uniform(1.5, 4.0)), glare=tuple(glare),
        gradient=(float(rng.uniform(-0.3, 0.3) * L), float(rng.uniform(-0.3, 0.3) * L)),
        vignette=float(rng.uniform(0, 0.35) * L),
        exposure=float(1 + rng.normal(0, 0.08) * L),
        white=tuple(float(1 + rng.normal(0, 0.04) * L) for _ in range(3)),
        blur=blur, noise=float(rng.uniform(0.5, 6.0) * a.noise) if a.noise > 0 else 0.0, jpeg=jpeg,
        paper=(1 - warm * 1.5 * L, 1 - warm * 0.6 * L, 1.0),
        face_tint=(tuple(float(1 - (1 - c / 255) * rng.uniform(0.2, 0.7) * L) for c in ivory)
                   if L > 0 else (1.0, 1.0, 1.0)),
    )


def _look_at(target, u, yaw, D):
    """Camera rotation/centre looking at ``target`` from direction ``u`` (unit,
    target -> camera) at distance ``D``; image-down follows mat +Y turned by ``yaw``."""
    f = -u
    d_ref = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    y = d_ref - (d_ref @ f) * f
    y /= np.linalg.norm(y)
    x = np.cross(y, f)
    R = np.stack([x, y, f])
    C = np.asarray(target, np.float64) + D * u
    return R, C


def sample_camera(rng: np.random.Generator, mat: MatSpec, image_size=DEFAULT_IMAGE_SIZE,
                  tilt_deg=(0.0, 45.0), upright: float = 0.75, fill=(0.5, 0.95),
                  hfov_deg=(48.0, 72.0)) -> TrueCamera:
    """A random camera looking at the mat from above.

    Tilt uniform in ``tilt_deg`` (0 = straight down), the camera mostly on the
    players' side (+Y, azimuth within about 25 degrees) but sometimes anywhere
    round the table, yaw near 0 (mat upright in the picture) with probability
    ``upright`` and uniform otherwise, distance chosen so the mat's projected
    box spans ``fill`` of the frame (``max(w/W, h/H)``), and the mat placed at
    random inside the frame (always entirely in the picture).
    """
    W, H = int(image_size[0]), int(image_size[1])
    mw, mh = mat.size_mm
    corners = np.array([[0, 0, 0], [mw, 0, 0], [mw, mh, 0], [0, mh, 0]], np.float64)
    for attempt in range(20):
        hfov = math.radians(rng.uniform(*hfov_deg))
        fpx = W / 2 / math.tan(hfov / 2)
        K = np.array([[fpx, 0, (W - 1) / 2 + rng.normal(0, W * 0.005)],
                      [0, fpx, (H - 1) / 2 + rng.normal(0, H * 0.005)], [0, 0, 1]])
        tilt = math.radians(rng.uniform(*tilt_deg))
        az = math.radians(rng.normal(0, 25) if rng.random() < 0.75 else rng.uniform(-180, 180))
        yaw = math.radians(rng.normal(0, 5) if rng.random() < upright else rng.uniform(-180, 180))
        target_fill = rng.uniform(*fill) * (0.97 ** attempt)
        u = np.array([math.sin(tilt) * math.sin(az), math.sin(tilt) * math.cos(az), -math.cos(tilt)])
        target = np.array([mw / 2, mh / 2, 0.0])
        D = 1.2 * fpx * max(mw / W, mh / H) / target_fill
        jitter = rng.uniform(-0.4, 0.4, 2)
        for _ in range(3):
            # distance for the wanted extent, then slide along the mat to place the mat's box
            for _ in range(4):
                R, C = _look_at(target, u, yaw, D)
                cam = TrueCamera.from_rotation(K, R, -R @ C, (W, H))
                p = cam.project(corners)
                D *= max(np.ptp(p[:, 0]) / W, np.ptp(p[:, 1]) / H) / target_fill
            R, C = _look_at(target, u, yaw, D)
            cam = TrueCamera.from_rotation(K, R, -R @ C, (W, H))
            p = cam.project(corners)
            slack = np.array([W - np.ptp(p[:, 0]), H - np.ptp(p[:, 1])])
            want = np.array([(W - 1) / 2, (H - 1) / 2]) + jitter * np.maximum(slack, 0)
            centre = (p.min(0) + p.max(0)) / 2
            Hinv = np.linalg.inv(cam.plane_homography())
            a = Hinv @ np.array([*centre, 1.0])
            b = Hinv @ np.array([*want, 1.0])
            target = target + np.array([*(a[:2] / a[2] - b[:2] / b[2]), 0.0])
        R, C = _look_at(target, u, yaw, D)
        cam = TrueCamera.from_rotation(K, R, -R @ C, (W, H))
        p = cam.project(corners)
        if p[:, 0].min() >= 1 and p[:, 1].min() >= 1 and p[:, 0].max() <= W - 2 and p[:, 1].max() <= H - 2:
            return cam
    return cam


# --------------------------------------------------------------------------- caches

@lru_cache(maxsize=4)
def _mat_mips(spec: MatSpec) -> tuple[tuple[float, np.ndarray], ...]:
    """``(px_per_mm, image)`` of the mat at its resolution and successive halvings."""
    img = render_mat(spec)
    out = [(float(spec.px_per_mm), img)]
    while min(img.shape[:2]) > 64:
        img = cv2.pyrDown(img)
        out.append((out[-1][0] / 2, img))
    return tuple(out)


@lru_cache(maxsize=1024)
def _face_mips(variant: str, face_id: str, ppm: float) -> tuple[np.ndarray, ...]:
    """The face art and successive halvings (upright)."""
    img = np.ascontiguousarray(render_face(variant, face_id, px_per_mm=ppm))
    out = [img]
    while min(img.shape[:2]) > 12:
        img = cv2.pyrDown(img)
        out.append(img)
    return tuple(out)


def _pick_mip(mips, width_px: float) -> np.ndarray:
    """The smallest level at least ``width_px`` wide (so minification stays under 2x)."""
    best = mips[0]
    for m in mips:
        if m.shape[1] >= width_px:
            best = m
        else:
            break
    return best


# --------------------------------------------------------------------------- context

@dataclass(eq=False)
class _World:
    """Resolved geometry and appearance shared by the frames of a scene or a recording."""

    variant: str
    layout: Layout
    mat: MatSpec
    dealt: tuple[str, ...]
    placement: Placement
    look: Look
    face_ppm: float
    top: np.ndarray = None      # (N, 4, 3) jittered top-face corners
    bottom: np.ndarray = None   # (N, 4, 3)
    nominal: np.ndarray = None  # (N, 4, 3) slot_face_corners_mm
    geometry: Geometry = None

    def __post_init__(self) -> None:
        slots = self.layout.slots
        self.geometry = Geometry.of(self.layout)
        self.nominal = slot_face_corners_mm(slots, self.mat)
        top = self.nominal.copy()
        j = self.placement.jitter
        centre = top[:, :, :2].mean(axis=1, keepdims=True)
        th = np.deg2rad(j[:, 2])[:, None]
        d = top[:, :, :2] - centre
        c, s = np.cos(th), np.sin(th)
        rot = np.stack([c * d[..., 0] - s * d[..., 1], s * d[..., 0] + c * d[..., 1]], axis=-1)
        top[:, :, :2] = centre + rot + j[:, None, :2]
        self.top = top
        bottom = top.copy()
        bottom[:, :, 2] += self.mat.tile_mm[2]
        self.bottom = bottom


# --------------------------------------------------------------------------- drawing

def _poly(img, pts, colour, aa=True):
    p = np.round(np.asarray(pts) * _ONE).astype(np.int32)
    cv2.fillConvexPoly(img, p, colour, cv2.LINE_AA if aa else cv2.LINE_8, _SH)


def _table_maps(cam: TrueCamera, step: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The table plane (Z = 0) seen on a grid of every ``step``-th pixel: for
    grid cell ``(i, j)``, centred on frame pixel ``(step j + (step - 1) / 2,
    step i + (step - 1) / 2)``, the point ``X, Y`` mm it sees and its footprint
    in mm per frame pixel (all ``float32``)."""
    W, H = cam.image_size
    w_, h_ = -(-W // step), -(-H // step)
    Hi = np.linalg.inv(cam.plane_homography())
    u = np.arange(w_, dtype=np.float64)[None, :] * step + (step - 1) / 2
    v = np.arange(h_, dtype=np.float64)[:, None] * step + (step - 1) / 2
    w = Hi[2, 0] * u + Hi[2, 1] * v + Hi[2, 2]
    w = np.where(w > 1e-9, w, 1e-9)   # above the horizon: far away
    X = np.clip((Hi[0, 0] * u + Hi[0, 1] * v + Hi[0, 2]) / w, -2e4, 2e4).astype(np.float32)
    Y = np.clip((Hi[1, 0] * u + Hi[1, 1] * v + Hi[1, 2]) / w, -2e4, 2e4).astype(np.float32)
    k = max(1, 16 // step)
    Xs, Ys = X[::k, ::k], Y[::k, ::k]
    if min(Xs.shape) < 2:
        return X, Y, np.ones_like(X)
    dXv, dXu = np.gradient(Xs, k * step)
    dYv, dYu = np.gradient(Ys, k * step)
    foot = np.sqrt(np.abs(dXu * dYv - dXv * dYu)).astype(np.float32)
    foot = cv2.resize(foot, (X.shape[1], X.shape[0]), interpolation=cv2.INTER_LINEAR)
    return X, Y, foot


def _draw_table_and_mat(img: np.ndarray, cam: TrueCamera, world: _World) -> None:
    W, H = cam.image_size
    look = world.look
    mat = world.mat
    mw, mh = mat.size_mm
    Hm = cam.plane_homography()
    # the table is evaluated on a half-resolution grid (it lies out of the focus
    # of interest) with each sample's footprint doubled, then enlarged
    X, Y, foot = _table_maps(cam, 2)
    small = table_image(look.table, X, Y, foot * 2)
    img[:] = cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)
    # mat
    s = cam.scale_at([mw / 2, mh / 2, 0])
    mips = _mat_mips(mat)
    ppm, mimg = mips[0]
    for p_, m_ in mips:
        if p_ >= s * 1.4:
            ppm, mimg = p_, m_
    if world.look.paper != (1.0, 1.0, 1.0):
        mimg = np.clip(mimg * np.array(world.look.paper, np.float32), 0, 255).astype(np.uint8)
    # mat px -> mm: x = (u + 0.5) / ppm (vision.mat pixel-centre convention)
    Tm = np.array([[1 / ppm, 0, 0.5 / ppm], [0, 1 / ppm, 0.5 / ppm], [0, 0, 1]])
    cv2.warpPerspective(mimg, Hm @ Tm, (W, H), dst=img, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)


def _draw_shadows(img: np.ndarray, cam: TrueCamera, world: _World, idx: np.ndarray, z: int,
                  buf: np.ndarray) -> None:
    """Darken what lies under the layer-``z`` tiles ``idx`` by their soft shadows."""
    look = world.look
    if look.shadow <= 0 or len(idx) == 0:
        return
    lx, ly, lu = look.light
    t = world.mat.tile_mm[2]
    d = -np.array([lx, ly]) / max(lu, 0.2) * t
    foot = world.bottom[idx]                       # (n, 4, 3) at height t z
    moved = foot.copy()
    moved[:, :, :2] += d
    pts = cam.project(np.concatenate([foot, moved], axis=1))  # (n, 8, 2)
    H, W = buf.shape
    x0 = max(0, int(pts[..., 0].min()) - 20); x1 = min(W, int(pts[..., 0].max()) + 21)
    y0 = max(0, int(pts[..., 1].min()) - 20); y1 = min(H, int(pts[..., 1].max()) + 21)
    if x1 <= x0 or y1 <= y0:
        return
    m = buf[y0:y1, x0:x1]
    m[:] = 0
    off = np.array([x0, y0])
    for p in pts:
        hull = cv2.convexHull(np.round((p - off) * _ONE).astype(np.int32))
        cv2.fillConvexPoly(m, hull, 255, cv2.LINE_AA, _SH)
    sig = max(0.8, look.shadow_soft_mm * cam.scale_at(foot[:, 0].mean(0)))
    mb = cv2.GaussianBlur(m, (0, 0), sig)
    f = 1.0 - (look.shadow / 255.0) * mb.astype(np.float32)
    roi = img[y0:y1, x0:x1]
    roi[:] = np.clip(roi * f[..., None], 0, 255).astype(np.uint8)


_SIDES = ((0, 1), (1, 2), (2, 3), (3, 0))


def _render_static(cam: TrueCamera, world: _World, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Table, mat, shadows and tiles (no hands, no camera effects).

    Returns:
        ``(image (H, W, 3) uint8, labels (H, W) uint16)``.
    """
    W, H = cam.image_size
    img = np.empty((H, W, 3), np.uint8)
    labels = np.zeros((H, W), np.uint16)
    _draw_table_and_mat(img, cam, world)
    look = world.look
    slots = world.layout.slots
    idx_all = np.flatnonzero(present)
    if len(idx_all) == 0:
        return img, labels
    top, bottom = world.top, world.bottom
    C = cam.centre_mm
    bev = 1.2 / world.mat.tile_mm[2]
    levels = np.array([0.0, bev, 1.0 - look.back_frac, 1.0])
    # (N, 4 levels, 4 corners, 3) -> projected
    pts3 = top[:, None] + levels[None, :, None, None] * (bottom - top)[:, None]
    proj = cam.project(pts3)
    # side normals and visibility (mat frame, horizontal)
    edge = np.roll(top[:, :, :2], -1, axis=1) - top[:, :, :2]      # corner k -> k+1
    normal = np.stack([edge[..., 1], -edge[..., 0]], axis=-1)     # outward for TL,TR,BR,BL clockwise (Y down)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    mid = (top[:, :, :2] + np.roll(top[:, :, :2], -1, axis=1)) / 2
    facing = np.einsum("nkc,nkc->nk", normal, C[None, None, :2] - mid) > 0
    lx, ly, lu = look.light
    amb = look.ambient
    top_f = amb + (1 - amb) * lu
    side_f = np.clip((amb + (1 - amb) * np.maximum(0, normal[..., 0] * lx + normal[..., 1] * ly)) / top_f, 0.3, 1.15)
    ivory = np.array(look.ivory, np.float64)
    back = np.array(look.back, np.float64)
    f = side_f[..., None]
    bands = np.stack([ivory * (0.5 + 0.5 * f) * 1.06,                  # bevel band of the side
                      ivory * f,                                         # ivory body
                      back * f * 0.95,                                   # coloured back layer
                      ivory * (0.55 + 0.45 * f) * np.where(f > 0.9, 1.08, 0.92)],  # rim line of the face
                     axis=2)                                             # (N, 4 sides, 4, 3)
    colours = np.clip(bands, 0, 255).tolist()
    tint = np.array(look.face_tint, np.float32)
    face_w = np.linalg.norm(proj[:, 0, 1] - proj[:, 0, 0], axis=-1)
    face_h = np.linalg.norm(proj[:, 0, 3] - proj[:, 0, 0], axis=-1)
    centres = top[:, :, :2].mean(axis=1)
    dist = np.linalg.norm(centres - C[:2], axis=1)
    shadow_buf = np.zeros((H, W), np.uint8)
    z_of = np.array([s.z for s in slots])
    for z in sorted(set(z_of[idx_all].tolist())):
        idx = idx_all[z_of[idx_all] == z]
        _draw_shadows(img, cam, world, idx, z, shadow_buf)
        for i in idx[np.argsort(-dist[idx], kind="stable")]:
            P = proj[i]  # (4 levels, 4 corners, 2)
            cols = colours[i]
            for k, (a, b) in enumerate(_SIDES):
                if not facing[i, k]:
                    continue
                _poly(labels, [P[0, a], P[0, b], P[3, b], P[3, a]], LABEL_SIDE, aa=False)
                for band in range(3):
                    _poly(img, [P[band, a], P[band, b], P[band + 1, b], P[band + 1, a]], cols[k][band])
            _draw_face(img, labels, P[0], i, world, tint, max(face_w[i], face_h[i] * 0.75))
            # bevel: the rounded rim of the face catches the light on one side
            for k, (a, b) in enumerate(_SIDES):
                pa = np.round(P[0, a] * _ONE).astype(np.int32)
                pb = np.round(P[0, b] * _ONE).astype(np.int32)
                cv2.line(img, tuple(pa), tuple(pb), cols[k][3], 1, cv2.LINE_AA, _SH)
    return img, labels


def _draw_face(img, labels, quad, i, world: _World, tint, width_px) -> None:
    H, W = labels.shape
    x0 = max(0, int(math.floor(quad[:, 0].min())) - 1); x1 = min(W, int(math.ceil(quad[:, 0].max())) + 2)
    y0 = max(0, int(math.floor(quad[:, 1].min())) - 1); y1 = min(H, int(math.ceil(quad[:, 1].max())) + 2)
    if x1 <= x0 or y1 <= y0:
        return
    face_id = world.dealt[i]
    tex = _pick_mip(_face_mips(world.variant, face_id, world.face_ppm), width_px)
    th_, tw_ = tex.shape[:2]
    src = np.float32([[-0.5, -0.5], [tw_ - 0.5, -0.5], [tw_ - 0.5, th_ - 0.5], [-0.5, th_ - 0.5]])
    if world.placement.rotated[i]:
        src = src[[2, 3, 0, 1]]
    q = (quad - [x0, y0]).astype(np.float32)
    M = cv2.getPerspectiveTransform(src, q)
    rw, rh = x1 - x0, y1 - y0
    warped = cv2.warpPerspective(tex, M, (rw, rh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    alpha = np.zeros((rh, rw), np.uint8)
    qi = np.round(q * _ONE).astype(np.int32)
    cv2.fillConvexPoly(alpha, qi, 255, cv2.LINE_AA, _SH)
    a = alpha.astype(np.float32)[..., None] * (1 / 255)
    roi = img[y0:y1, x0:x1]
    roi[:] = (roi * (1 - a) + warped * (tint * a)).astype(np.uint8)
    cv2.fillConvexPoly(labels[y0:y1, x0:x1], qi, int(i) + 1, cv2.LINE_8, _SH)


def _add_glare(img: np.ndarray, labels: np.ndarray, look: Look) -> None:
    H, W = labels.shape
    for (gx, gy, rx, ry, ang, amp) in look.glare:
        cx, cy = gx * W, gy * H
        ax, ay = max(2.0, rx * W), max(2.0, ry * H)
        r = 3 * max(ax, ay)
        x0, x1 = max(0, int(cx - r)), min(W, int(cx + r) + 1)
        y0, y1 = max(0, int(cy - r)), min(H, int(cy + r) + 1)
        if x1 <= x0 or y1 <= y0:
            continue
        ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        c, s = math.cos(math.radians(ang)), math.sin(math.radians(ang))
        u = ((xs - cx) * c + (ys - cy) * s) / ax
        v = (-(xs - cx) * s + (ys - cy) * c) / ay
        g = np.exp(-0.5 * (u * u + v * v))
        lab = labels[y0:y1, x0:x1]
        k = np.where((lab > 0) & (lab < LABEL_SIDE), 1.0, np.where(lab == LABEL_SIDE, 0.4, 0.2)).astype(np.float32)
        roi = img[y0:y1, x0:x1]
        roi[:] = np.clip(roi + (amp * g * k)[..., None], 0, 255).astype(np.uint8)


def _post(img: np.ndarray, look: Look, rng: np.random.Generator, gain: float = 1.0,
          jpeg: bool = True) -> np.ndarray:
    """Lighting gradient, vignette, exposure, white balance, blur, noise, JPEG."""
    H, W = img.shape[:2]
    gh, gw = max(2, H // 16), max(2, W // 16)
    ys, xs = np.mgrid[0:gh, 0:gw].astype(np.float32)
    xn, yn = xs / (gw - 1) - 0.5, ys / (gh - 1) - 0.5
    g = (1 + look.gradient[0] * xn * 2 + look.gradient[1] * yn * 2) * (1 - look.vignette * (xn ** 2 + yn ** 2) * 2)
    g = g[..., None] * (np.array(look.white, np.float32) * (look.exposure * gain))
    g = cv2.resize(g, (W, H), interpolation=cv2.INTER_LINEAR)     # (H, W, 3) gains
    f = img.astype(np.float32)
    cv2.multiply(f, g, dst=f)
    kind, size, ang = look.blur
    if kind == "gauss" and size > 0:
        f = cv2.GaussianBlur(f, (0, 0), size)
    elif kind == "motion" and size >= 1:
        n = int(math.ceil(size)) | 1
        k = np.zeros((n, n), np.float32)
        c = n // 2
        dx, dy = math.cos(math.radians(ang)), math.sin(math.radians(ang))
        cv2.line(k, (int(round(c - dx * c)), int(round(c - dy * c))),
                 (int(round(c + dx * c)), int(round(c + dy * c))), 1.0, 1)
        k /= k.sum()
        f = cv2.filter2D(f, -1, k)
    if look.noise > 0:
        f += rng.standard_normal((H, W, 1), dtype=np.float32) * np.float32(look.noise)
    out = cv2.convertScaleAbs(np.maximum(f, 0, out=f))  # saturating cast to uint8
    if jpeg and look.jpeg:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(look.jpeg)])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def _hand_light(cam: TrueCamera, look: Look) -> np.ndarray:
    """Image-plane unit direction towards the light."""
    lx, ly, lu = look.light
    R = cam.R
    d = R @ np.array([lx, ly, -lu])          # towards the light, camera frame
    v = d[:2]
    n = np.linalg.norm(v)
    v = v / n if n > 1e-6 else np.array([0.0, -1.0])
    return v


def _hand_poses_for_scene(rng: np.random.Generator, cam: TrueCamera, world: _World, present: np.ndarray,
                          n: int) -> list[HandPose]:
    mw, mh = world.mat.size_mm
    sides = np.array([[mw / 2, mh + 150, 0], [-150, mh / 2, 0], [mw + 150, mh / 2, 0], [mw / 2, -150, 0]])
    idx = np.flatnonzero(present)
    out = []
    for _ in range(n):
        if len(idx) and rng.random() < 0.85:
            i = int(rng.choice(idx))
            target = world.top[i].mean(axis=0) + np.array([0, 0, -15.0])
        else:
            g = world.mat.grid_origin_mm
            gs = world.mat.grid_size_mm
            target = np.array([g[0] + rng.uniform(0, gs[0]), g[1] + rng.uniform(0, gs[1]), -30.0])
        side = sides[int(rng.choice(4, p=[0.55, 0.15, 0.15, 0.15]))]
        side = side + np.array([rng.uniform(-0.3, 0.3) * mw, rng.uniform(-0.3, 0.3) * mh, 0]) * (side[2] == 0)
        out.append(_hand_at(rng, cam, target, side))
    return out


def _hand_at(rng, cam: TrueCamera, target_mm, from_mm, skin=None) -> HandPose:
    tip = cam.project(np.asarray(target_mm, np.float64))
    src = cam.project(np.asarray(from_mm, np.float64))
    d = tip - src
    ang = math.degrees(math.atan2(d[1], d[0])) + rng.normal(0, 8)
    hand_pt = np.asarray(target_mm, np.float64) + np.array([0, 0, -60.0])
    scale = cam.scale_at(hand_pt) * rng.uniform(1.0, 1.15)
    return sample_hand(rng, tuple(tip), ang, scale, skin)


def _draw_hands(img: np.ndarray, labels: np.ndarray, hands: Sequence[HandPose], cam: TrueCamera,
                look: Look) -> tuple[np.ndarray | None, int]:
    """Draw the hands (shadows included) and mark them in ``labels``.

    Returns:
        ``(mask, n)``: ``(H, W) bool`` union of the hands' pixels (None when no
        hand shows) and the number of hands with at least one pixel in the frame.
    """
    if not hands:
        return None, 0
    H, W = labels.shape
    seen = 0
    lv = _hand_light(cam, look)
    lx, ly, lu = look.light
    mask = np.zeros((H, W), bool)
    for h in hands:
        off = -lv * (70.0 * h.scale) * math.sqrt(max(0.0, 1 - lu * lu)) / max(lu, 0.3)
        off = np.clip(off, -80, 80)
        strength = 0.45 * (look.shadow / 0.5 if look.shadow > 0 else 0.5)
        m = draw_hand(img, h, light_dir=tuple(lv), shadow_px=tuple(off), shadow_strength=min(0.6, strength))
        if m.any():
            seen += 1
            mask |= m
    if not seen:
        return None, 0
    labels[mask] = LABEL_HAND
    return mask, seen


def _visible(labels: np.ndarray, face_px: np.ndarray, present: np.ndarray) -> np.ndarray:
    n = len(face_px)
    counts = np.bincount(labels.ravel(), minlength=n + 1)[1:n + 1].astype(np.float64)
    x, y = face_px[..., 0], face_px[..., 1]
    area = 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1))
    vis = np.where(area > 0, counts / np.maximum(area, 1e-9), 0.0)
    return np.where(present, np.clip(vis, 0.0, 1.0), 0.0)


def _truth(world: _World, cam: TrueCamera, present: np.ndarray, removed, labels, hand_mask, n_hands) -> SceneTruth:
    board = Board(world.geometry)
    for i in np.flatnonzero(~present):
        board.remove(int(i))
    face_px = cam.project(world.top)
    return SceneTruth(
        variant=world.variant, layout=world.layout, mat=world.mat, camera=cam, dealt=world.dealt,
        faces=tuple(f if p else None for f, p in zip(world.dealt, present)),
        present=present.copy(), free=tuple(board.free_flags()), removed=tuple(Slot(*s) for s in removed),
        visible=_visible(labels, face_px, present), jitter=world.placement.jitter.copy(),
        rotated=world.placement.rotated.copy(), slot_corners_px=cam.project(world.nominal),
        face_corners_px=face_px,
        mat_corners_px=cam.project(np.array([[0, 0, 0], [world.mat.size_mm[0], 0, 0],
                                             [world.mat.size_mm[0], world.mat.size_mm[1], 0],
                                             [0, world.mat.size_mm[1], 0]], np.float64)),
        hands=n_hands, hand_mask=hand_mask)


# --------------------------------------------------------------------------- entry point

def _resolve(spec: SceneSpec, rng: np.random.Generator) -> tuple[_World, tuple[Slot, ...], TrueCamera]:
    """Draw everything random about a scene but the hands and the camera effects."""
    layout = spec.layout
    if not isinstance(layout, Layout):
        raise BadInput(f"SceneSpec.layout must be a Layout, got {type(layout).__name__}")
    n = len(layout)
    ts = tileset(spec.variant)
    mat = spec.mat or MatSpec.default()
    if spec.faces is not None:
        if len(spec.faces) != n:
            raise BadInput(f"SceneSpec.faces has {len(spec.faces)} entries for {n} slots")
        for f in spec.faces:
            ts.face(f)
        dealt = tuple(spec.faces)
    else:
        dealt = deal_faces(spec.variant, n, rng)
    if spec.removed is not None:
        removed = tuple(Slot(*s) for s in spec.removed)
        board_after(layout, removed)  # raises BadInput for unknown / repeated slots
    else:
        nr = spec.n_removed
        if nr is None:
            k = int(rng.integers(0, int(0.6 * n) + 1))
        elif isinstance(nr, (tuple, list)):
            k = int(rng.integers(int(nr[0]), int(nr[1]) + 1))
        else:
            k = int(nr)
        removed = remove_free_pairs(layout, dealt, k, rng, spec.variant)
    placement = spec.placement or sample_placement(n, rng, spec.augment)
    if len(placement.rotated) != n:
        raise BadInput(f"SceneSpec.placement has {len(placement.rotated)} entries for {n} slots")
    look = spec.look or sample_look(rng, spec.augment)
    if spec.camera is not None:
        cam = TrueCamera.of(spec.camera)
    else:
        cam = sample_camera(rng, mat, spec.image_size, spec.tilt_deg, spec.upright, spec.fill, spec.hfov_deg)
    world = _World(spec.variant, layout, mat, dealt, placement, look, float(spec.face_px_per_mm))
    return world, removed, cam


def render_scene(spec: SceneSpec, rng: np.random.Generator) -> Scene:
    """Render one synthetic photo of a game in progress.

    Args:
        spec: what to render (:class:`SceneSpec`).
        rng: the only source of randomness: the same seed gives the same scene.

    Returns:
        :class:`Scene` with ``image (H, W, 3) uint8`` BGR, its :class:`SceneTruth`
        and the label image.

    Raises:
        BadInput: unknown variant, a face id or removed slot not in the set /
            layout, or per-slot options of the wrong length.
    """
    world, removed, cam = _resolve(spec, rng)
    present = np.ones(len(world.layout), bool)
    for s in removed:
        present[world.layout.slot_index(s)] = False
    img, labels = _render_static(cam, world, present)
    _add_glare(img, labels, world.look)
    p_hands = float(spec.hands)
    hands = []
    if p_hands > 0 and rng.random() < p_hands:
        hands = _hand_poses_for_scene(rng, cam, world, present, 1 if rng.random() < 0.75 else 2)
    hand_mask, n_hands = _draw_hands(img, labels, hands, cam, world.look)
    truth = _truth(world, cam, present, removed, labels, hand_mask, n_hands)
    image = _post(img, world.look, rng)
    return Scene(image, truth, labels)
