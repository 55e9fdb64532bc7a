"""A second, deliberately simple renderer of mat photos, independent of ``vision.synth``.

Only numpy, OpenCV and the printable assets (``companion print-mat`` /
``companion print-tiles``) are used, with the public contract's geometry
(CONTRACT.md, "Physical standard"):

* pinhole camera, 1280 x 720 px, fx = fy from a horizontal FOV of 50-70 deg,
  principal point at the centre, no distortion; the camera looks at the mat
  centre from a tilt of 0-40 deg (0 = straight down) and a random yaw (the
  whole rig turned about the vertical through the mat centre), at the distance
  that makes the mat's projected box span 60-90 % of the frame;
* the mat: mat.png warped by the homography of the plane z = 0, on a plain
  table colour;
* each present tile a 30 x 40 x 20 mm box at its slot, drawn far-to-near
  (lower layers first): flat body-coloured sides shaded by a Lambert factor,
  the top face = the face PNG warped at the layer height (turned 180 deg half
  the time), optional thin dark edge lines;
* global brightness / contrast, Gaussian blur (sigma 0-1.2 px), Gaussian
  noise, JPEG (quality 60-95).

It must not import ``vision.synth`` (the point is independence).  Object frame
as OpenCV: x right, y down on the mat (mm from its top-left corner), Z = -height.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

IMAGE_SIZE = (1280, 720)
DEFAULT_ASSETS = Path("/tmp/alt-assets")
VARIANTS = ("love", "candy", "mindful", "word")

# tile body colours (BGR)
BODY_COLOURS = {
    "ivory": (215, 240, 250),
    "white": (245, 245, 245),
    "pale green": (200, 235, 205),
    "pale yellow": (180, 235, 250),
}
TABLE_COLOURS = ((60, 90, 130), (40, 60, 85), (120, 120, 120), (50, 90, 50), (30, 30, 30),
                 (150, 170, 190), (90, 60, 40), (200, 200, 205))


# --------------------------------------------------------------------------- assets

def _companion_cmd() -> list[str]:
    exe = shutil.which("companion")
    return [exe] if exe else [sys.executable, "-m", "companion"]


def _run(cmd: list[str]) -> None:
    """Run one CLI command; its own one-line error ends the bench."""
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"altrender: {' '.join(cmd[-4:])} failed: {done.stderr.strip()}")


def ensure_assets(root: Path = DEFAULT_ASSETS) -> Path:
    """Write the printable mat and the four variants' face art under ``root``
    (via the public CLI) unless already there."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise SystemExit(f"altrender: assets folder {root} is a file")
    if not (root / "mat" / "mat.json").exists():
        _run(_companion_cmd() + ["print-mat", "--out", str(root / "mat")])
    for v in VARIANTS:
        if not (root / v / "tiles.json").exists():
            _run(_companion_cmd() + ["print-tiles", "--variant", v, "--out", str(root / v)])
    return root


def _pyramid(img: np.ndarray, px_per_mm: float) -> list[tuple[float, np.ndarray]]:
    """The image at its resolution and successive halvings (INTER_AREA), as
    (px_per_mm, image) pairs, finest first."""
    out = [(px_per_mm, img)]
    while min(out[-1][1].shape[:2]) > 16:
        p, im = out[-1]
        h, w = im.shape[:2]
        out.append((p / 2, cv2.resize(im, ((w + 1) // 2, (h + 1) // 2), interpolation=cv2.INTER_AREA)))
    return out


def _pick(pyr: list[tuple[float, np.ndarray]], want_px_per_mm: float) -> tuple[float, np.ndarray]:
    """The coarsest level still at least 1.5x the wanted resolution."""
    best = pyr[0]
    for p, im in pyr:
        if p >= 1.5 * want_px_per_mm:
            best = (p, im)
    return best


@dataclass
class Assets:
    root: Path
    mat: dict
    mat_pyr: list
    faces: dict = field(default_factory=dict)     # variant -> {face id: pyramid}
    face_px: dict = field(default_factory=dict)   # variant -> px/mm of the face images
    match: dict = field(default_factory=dict)     # variant -> {face id: match key}

    @classmethod
    def load(cls, root: Path = DEFAULT_ASSETS) -> "Assets":
        root = ensure_assets(root)
        mat = json.loads((root / "mat" / "mat.json").read_text())
        img = cv2.imread(str(root / "mat" / mat["image"]), cv2.IMREAD_COLOR)
        a = cls(root, mat, _pyramid(img, float(mat["px_per_mm"])))
        for v in VARIANTS:
            tj = json.loads((root / v / "tiles.json").read_text())
            fw, fh = tj["face_mm"]
            faces, px = {}, None
            for t in tj["tiles"]:
                im = cv2.imread(str(root / v / t["image"]), cv2.IMREAD_COLOR)
                px = im.shape[1] / fw
                faces[t["id"]] = _pyramid(im, px)
            a.faces[v], a.face_px[v] = faces, px
            a.match[v] = {t["id"]: t["match"] for t in tj["tiles"]}
        return a

    @property
    def grid_origin(self) -> tuple[float, float]:
        return tuple(self.mat["grid_origin_mm"])

    @property
    def tile_mm(self) -> tuple[float, float, float]:
        return tuple(self.mat["tile_mm"])


# --------------------------------------------------------------------------- camera

@dataclass
class Cam:
    K: np.ndarray
    R: np.ndarray          # world -> camera rotation
    t: np.ndarray          # world -> camera translation
    size: tuple[int, int]
    tilt_deg: float
    yaw_deg: float

    @property
    def centre(self) -> np.ndarray:
        return -self.R.T @ self.t

    def project(self, pts: np.ndarray) -> np.ndarray:
        pc = np.asarray(pts, np.float64) @ self.R.T + self.t
        uv = pc @ self.K.T
        return uv[:, :2] / uv[:, 2:3]

    def plane_h(self, height_mm: float) -> np.ndarray:
        """Homography from (x, y) mm on the plane at ``height_mm`` (Z = -h) to px."""
        r1, r2, r3 = self.R[:, 0], self.R[:, 1], self.R[:, 2]
        return self.K @ np.column_stack([r1, r2, self.t - height_mm * r3])


def _look(target: np.ndarray, tilt: float, yaw: float, D: float) -> tuple[np.ndarray, np.ndarray]:
    """Camera at distance D from ``target``, tilted ``tilt`` from the vertical,
    on the players' side (+y) turned by ``yaw`` about the vertical axis."""
    s, c = math.sin(tilt), math.cos(tilt)
    # yaw 0: camera on the +y side, image right = mat +x, image down = towards the player
    C0 = np.array([0.0, D * s, -D * c])
    x0 = np.array([1.0, 0.0, 0.0])
    f0 = np.array([0.0, -s, c])
    y0 = np.cross(f0, x0)
    cy, sy = math.cos(yaw), math.sin(yaw)
    Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    x, y, f = Rz @ x0, Rz @ y0, Rz @ f0
    R = np.stack([x, y, f])
    C = target + Rz @ C0
    return R, -R @ C


def sample_camera(rng: np.random.Generator, mat_size_mm, size=IMAGE_SIZE,
                  tilt_deg: tuple[float, float] = (0.0, 40.0), fill: tuple[float, float] = (0.6, 0.9)) -> Cam:
    """A random camera looking at the mat centre, tilted ``tilt_deg`` (LO, HI
    degrees from straight down), at the distance that makes the mat's
    projected box span ``fill`` (LO, HI) of the frame."""
    W, H = size
    mw, mh = mat_size_mm
    hfov = math.radians(rng.uniform(50.0, 70.0))
    f = (W / 2) / math.tan(hfov / 2)
    K = np.array([[f, 0, W / 2], [0, f, H / 2], [0, 0, 1.0]])
    tilt = math.radians(rng.uniform(*tilt_deg))
    yaw = math.radians(rng.uniform(-180.0, 180.0))
    fill = rng.uniform(*fill)
    target = np.array([mw / 2, mh / 2, 0.0])
    corners = np.array([[0, 0, 0], [mw, 0, 0], [mw, mh, 0], [0, mh, 0]], np.float64)
    D = 1000.0
    for _ in range(30):
        R, t = _look(target, tilt, yaw, D)
        cam = Cam(K, R, t, (W, H), math.degrees(tilt), math.degrees(yaw))
        p = cam.project(corners)
        span = max(np.ptp(p[:, 0]) / W, np.ptp(p[:, 1]) / H)
        inside = p[:, 0].min() >= 2 and p[:, 1].min() >= 2 and p[:, 0].max() <= W - 3 and p[:, 1].max() <= H - 3
        if abs(span - fill) < 0.003 and inside:
            break
        if not inside and span <= fill:   # perspective pushes a corner out: back off a little
            fill *= 0.98
        D *= span / fill
    return cam


# --------------------------------------------------------------------------- drawing

def _warp_into(dst: np.ndarray, src: np.ndarray, H_src_to_dst: np.ndarray, quad: np.ndarray,
               label: np.ndarray | None = None, label_value: int = 0, factor: float = 1.0) -> None:
    """Warp ``src`` into ``dst`` inside the convex ``quad`` (px), only over its
    bounding box; also paint ``label`` with ``label_value`` there."""
    Hh, Ww = dst.shape[:2]
    x0 = max(int(math.floor(quad[:, 0].min())) - 1, 0)
    y0 = max(int(math.floor(quad[:, 1].min())) - 1, 0)
    x1 = min(int(math.ceil(quad[:, 0].max())) + 2, Ww)
    y1 = min(int(math.ceil(quad[:, 1].max())) + 2, Hh)
    if x1 <= x0 or y1 <= y0:
        return
    T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]])
    patch = cv2.warpPerspective(src, T @ H_src_to_dst, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    q = np.round((quad - [x0, y0]) * 16).astype(np.int32)
    cv2.fillConvexPoly(mask, q, 255, cv2.LINE_AA, 4)
    a = (mask.astype(np.float32) / 255.0)[..., None]
    roi = dst[y0:y1, x0:x1].astype(np.float32)
    dst[y0:y1, x0:x1] = np.clip(roi * (1 - a) + patch.astype(np.float32) * factor * a, 0, 255).astype(np.uint8)
    if label is not None:
        cv2.fillConvexPoly(label, np.round(quad * 16).astype(np.int32), label_value, cv2.LINE_8, 4)


def _poly(img, quad, colour, label=None, label_value=-1):
    q = np.round(np.asarray(quad) * 16).astype(np.int32)
    cv2.fillConvexPoly(img, q, colour, cv2.LINE_AA, 4)
    if label is not None:
        cv2.fillConvexPoly(label, q, label_value, cv2.LINE_8, 4)


def _scale_at(Hm: np.ndarray, xy) -> float:
    """Pixels per unit of the homography ``Hm`` near the point ``xy`` (sqrt of
    the Jacobian's determinant)."""
    x, y = xy
    p = Hm @ [x, y, 1.0]
    px = Hm @ [x + 1, y, 1.0]
    py = Hm @ [x, y + 1, 1.0]
    a = px[:2] / px[2] - p[:2] / p[2]
    b = py[:2] / py[2] - p[:2] / p[2]
    return math.sqrt(abs(a[0] * b[1] - a[1] * b[0]))


@dataclass
class AltTruth:
    variant: str
    layout_name: str
    slots: list
    present: np.ndarray     # (N,) bool
    faces: tuple            # (N,) face ids (whether present or not)
    visible: np.ndarray     # (N,) fraction of the top face seen (0 for absent)
    K: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    tilt_deg: float
    yaw_deg: float
    body: str
    turned: np.ndarray      # (N,) bool: face drawn rotated 180 deg
    edges: bool


def sample_look(rng: np.random.Generator, n: int) -> dict:
    """Exposure, blur, noise and JPEG settings, and a print gain per slot
    (``n`` slots), for :func:`render`'s ``look``: the frames of one video
    share them."""
    return {"contrast": rng.uniform(0.75, 1.25), "bright": rng.uniform(-30, 30), "sigma": rng.uniform(0.0, 1.2),
            "noise": rng.uniform(1.0, 6.0), "quality": int(rng.integers(60, 96)),
            "gains": rng.uniform(0.97, 1.03, n), "noise_seed": int(rng.integers(2 ** 31))}


def render(assets: Assets, variant: str, layout, faces: Sequence[str], present: Sequence[bool],
           rng: np.random.Generator, size=IMAGE_SIZE, face_scale: float = 1.0,
           tilt_deg: tuple[float, float] = (0.0, 40.0), look: dict | None = None,
           fill: tuple[float, float] = (0.6, 0.9)) -> tuple[np.ndarray, AltTruth]:
    """One photo of ``layout`` (slots already in mat grid coordinates) with the
    tiles where ``present`` is true, showing ``faces``.  ``face_scale`` below 1
    prints each face that much smaller, centred on a blank tile of the body
    colour (stickers printed with a printer's "fit to page" shrink); the
    camera tilted ``tilt_deg`` (LO, HI degrees), the mat spanning ``fill``
    of the frame.  ``look``
    (:func:`sample_look`) fixes the exposure, blur, noise, JPEG and print
    gains, else they are drawn from ``rng`` after the scene: with ``look``
    and an ``rng`` seeded alike, boards with other tiles standing come out
    as frames of one video.  Returns (BGR image, truth)."""
    W, H = size
    mw, mh = assets.mat["size_mm"]
    gx, gy = assets.grid_origin
    tw, th, tz = assets.tile_mm
    cam = sample_camera(rng, (mw, mh), size, tilt_deg, fill)
    C = cam.centre

    # ---- table and mat
    table = np.array(TABLE_COLOURS[int(rng.integers(len(TABLE_COLOURS)))], np.float64)
    table = np.clip(table + rng.normal(0, 12, 3), 0, 255)
    img = np.empty((H, W, 3), np.uint8)
    img[:] = table.astype(np.uint8)
    H0 = cam.plane_h(0.0)
    p_mm, mat_img = _pick(assets.mat_pyr, _scale_at(H0, (mw / 2, mh / 2)) * 1.3)
    S = np.array([[1 / p_mm, 0, 0.5 / p_mm], [0, 1 / p_mm, 0.5 / p_mm], [0, 0, 1.0]])  # mat px centre -> mm
    mat_quad = cam.project(np.array([[0, 0, 0], [mw, 0, 0], [mw, mh, 0], [0, mh, 0]], np.float64))
    paper = rng.uniform(0.85, 1.0) * np.array([1.0, rng.uniform(0.97, 1.0), rng.uniform(0.93, 1.0)])
    mat_t = np.clip(mat_img.astype(np.float32) * paper.astype(np.float32), 0, 255).astype(np.uint8)
    _warp_into(img, mat_t, H0 @ S, mat_quad)

    # ---- lighting: a directional light from above
    el = math.radians(rng.uniform(35, 80))
    az = rng.uniform(0, 2 * math.pi)
    L = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), -math.sin(el)])  # towards the light
    ambient = rng.uniform(0.35, 0.55)

    def lam(n):
        return ambient + (1 - ambient) * max(0.0, float(np.dot(n, L)))

    # the top keeps the print's own tones (exposure is set later); sides relative to it
    top_lam = lam(np.array([0, 0, -1.0]))
    top_factor = 1.0
    body_name = list(BODY_COLOURS)[int(rng.integers(len(BODY_COLOURS)))]
    body = np.clip(np.array(BODY_COLOURS[body_name], np.float64) + rng.normal(0, 6, 3), 0, 255)
    edges = bool(rng.random() < 0.5)
    edge_col = tuple(float(v) for v in rng.uniform(20, 70, 3))

    slots = [tuple(int(v) for v in s) for s in layout.slots]
    n = len(slots)
    present = np.asarray(present, bool)
    turned = rng.random(n) < 0.5
    label = np.full((H, W), -1, np.int32)
    order = []
    for i in np.flatnonzero(present):
        x, y, z = slots[i]
        cx, cy = gx + 15 * x + tw / 2, gy + 20 * y + th / 2
        d = math.hypot(cx - C[0], cy - C[1])
        order.append((z, -d, i))
    order.sort()

    face_pyrs = assets.faces[variant]
    full_area = np.zeros(n)
    for z, _, i in order:
        x, y, _z = slots[i]
        X0, Y0 = gx + 15 * x, gy + 20 * y
        X1, Y1 = X0 + tw, Y0 + th
        zb, zt = -tz * z, -tz * (z + 1)    # object-frame Z of the bottom and top
        # side faces visible from the camera (outward normal towards it)
        sides = []
        if C[0] > X1:
            sides.append(((1, 0, 0), [[X1, Y0, zt], [X1, Y1, zt], [X1, Y1, zb], [X1, Y0, zb]]))
        if C[0] < X0:
            sides.append(((-1, 0, 0), [[X0, Y0, zt], [X0, Y1, zt], [X0, Y1, zb], [X0, Y0, zb]]))
        if C[1] > Y1:
            sides.append(((0, 1, 0), [[X0, Y1, zt], [X1, Y1, zt], [X1, Y1, zb], [X0, Y1, zb]]))
        if C[1] < Y0:
            sides.append(((0, -1, 0), [[X0, Y0, zt], [X1, Y0, zt], [X1, Y0, zb], [X0, Y0, zb]]))
        for nrm, pts in sides:
            q = cam.project(np.array(pts, np.float64))
            col = tuple(float(v) for v in np.clip(body * lam(np.array(nrm, float)) / top_lam, 0, 255))
            _poly(img, q, col, label, -1)
            if edges:
                cv2.polylines(img, [np.round(q * 16).astype(np.int32)], True, edge_col, 1, cv2.LINE_AA, 4)
        # top face: the face art warped at the layer height
        top = np.array([[X0, Y0, zt], [X1, Y0, zt], [X1, Y1, zt], [X0, Y1, zt]], np.float64)
        qt = cam.project(top)
        Ht = cam.plane_h(tz * (z + 1))
        p_face, face = _pick(face_pyrs[faces[i]], _scale_at(Ht, (X0 + tw / 2, Y0 + th / 2)))
        fh_px, fw_px = face.shape[:2]
        if turned[i]:
            face = cv2.rotate(face, cv2.ROTATE_180)
        # face px -> mm on the slot (face image spans the whole top face,
        # or face_scale of it about its centre on a blank top)
        gain = top_factor * (rng.uniform(0.97, 1.03) if look is None else float(look["gains"][i]))
        fx0, fy0 = X0 + tw * (1 - face_scale) / 2, Y0 + th * (1 - face_scale) / 2
        sx, sy = tw * face_scale / fw_px, th * face_scale / fh_px
        A = np.array([[sx, 0, fx0 + 0.5 * sx], [0, sy, fy0 + 0.5 * sy], [0, 0, 1.0]])
        if face_scale != 1.0:
            _poly(img, qt, tuple(float(v) for v in np.clip(body * gain, 0, 255)), label, int(i))
            inner = np.array([[fx0, fy0, zt], [fx0 + tw * face_scale, fy0, zt],
                              [fx0 + tw * face_scale, fy0 + th * face_scale, zt], [fx0, fy0 + th * face_scale, zt]])
            _warp_into(img, face, Ht @ A, cam.project(inner), None, int(i), gain)
        else:
            _warp_into(img, face, Ht @ A, qt, label, int(i), gain)
        if edges:
            cv2.polylines(img, [np.round(qt * 16).astype(np.int32)], True, edge_col, 1, cv2.LINE_AA, 4)
        full_area[i] = max(cv2.contourArea(qt.astype(np.float32)), 1.0)
    counts = np.bincount(label[label >= 0].ravel(), minlength=n).astype(np.float64)
    visible = np.where(present, np.minimum(counts / np.maximum(full_area, 1.0), 1.0), 0.0)

    # ---- photometric changes
    f = img.astype(np.float32)
    if look is None:
        contrast = rng.uniform(0.75, 1.25)
        bright = rng.uniform(-30, 30)
    else:
        contrast, bright = look["contrast"], look["bright"]
    f = (f - 128.0) * contrast + 128.0 + bright
    sigma = rng.uniform(0.0, 1.2) if look is None else look["sigma"]
    if sigma > 0.05:
        f = cv2.GaussianBlur(f, (0, 0), sigma)
    if look is None:
        f += rng.normal(0, rng.uniform(1.0, 6.0), f.shape).astype(np.float32)
    else:
        f += np.random.default_rng(look["noise_seed"]).normal(0, look["noise"], f.shape).astype(np.float32)
    img = np.clip(f, 0, 255).astype(np.uint8)
    q = int(rng.integers(60, 96)) if look is None else look["quality"]
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    img = cv2.imdecode(buf, cv2.IMREAD_COLOR)

    rvec, _ = cv2.Rodrigues(cam.R)
    truth = AltTruth(variant, layout.name, slots, present, tuple(faces), visible, cam.K, rvec.ravel(),
                     cam.t.copy(), cam.tilt_deg, cam.yaw_deg, body_name, turned, edges)
    return img, truth


# --------------------------------------------------------------------------- game state

def remove_free_pairs(layout, faces: Sequence[str], fraction: float, rng: np.random.Generator,
                      match: dict | None = None) -> np.ndarray:
    """Present flags after removing about ``fraction`` of the tiles as pairs of
    tiles free at their turn (a matching pair when one is free and ``match``
    is given).  Uses ``companion.rules.Board``."""
    from companion.rules import Board
    board = Board(layout)
    pairs = int(round(fraction * len(layout))) // 2
    for _ in range(pairs):
        free = board.free_indices()
        if len(free) < 2:
            break
        pair = None
        if match is not None:
            groups: dict = {}
            for i in free:
                groups.setdefault(match[faces[i]], []).append(i)
            cand = [g for g in groups.values() if len(g) >= 2]
            if cand:
                pair = rng.choice(cand[int(rng.integers(len(cand)))], 2, replace=False)
        if pair is None:
            pair = rng.choice(free, 2, replace=False)
        for i in pair:
            board.remove(int(i))
    return np.array(board.present, bool)
