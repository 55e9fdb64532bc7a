"""Helpers shared by the vision tests: synthetic camera views of printed planes.

A planar print (mat.png or the ChArUco board) seen by a pinhole camera without
distortion is the print warped by the plane homography ``K [r1 r2 t]``
(Hartley & Zisserman, "Multiple View Geometry", 2nd ed., sec. 8.1.1).  Views are
rendered at twice the size and shrunk with area averaging, which keeps marker
edges anti-aliased like a real camera's.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

TABLE_BGR = (70, 95, 120)


def look_at_pose(target_mm, distance_mm: float, tilt_deg: float, yaw_deg: float = 0.0,
                 azimuth_deg: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(rvec, tvec)`` of a camera ``distance_mm`` from ``target_mm`` (on the
    plane Z = 0, camera above it at Z < 0), tilted ``tilt_deg`` from straight
    down towards +Y rotated by ``azimuth_deg`` about the plane normal, and
    rolled ``yaw_deg`` about its optical axis.  Image right ~ +X at yaw 0."""
    t, a = math.radians(tilt_deg), math.radians(azimuth_deg)
    target = np.asarray(target_mm, np.float64)
    offset = np.array([-math.sin(a) * math.sin(t), math.cos(a) * math.sin(t), -math.cos(t)])
    centre = target + distance_mm * offset
    z = (target - centre) / np.linalg.norm(target - centre)
    x = np.array([math.cos(a), math.sin(a), 0.0])
    x -= z * (x @ z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    R = np.stack([x, y, z])
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ R
    tvec = -R @ centre
    return cv2.Rodrigues(R)[0].reshape(3), tvec


def plane_homography(K: np.ndarray, rvec, tvec) -> np.ndarray:
    """``(3, 3)`` homography from plane mm ``(X, Y, 1)`` (Z = 0) to image px."""
    R = cv2.Rodrigues(np.asarray(rvec, np.float64))[0]
    return K @ np.column_stack([R[:, 0], R[:, 1], np.asarray(tvec, np.float64)])


def render_view(print_bgr: np.ndarray, px_per_mm: float, K: np.ndarray, rvec, tvec,
                size: tuple[int, int], background=TABLE_BGR, supersample: int = 2) -> np.ndarray:
    """``(h, w, 3) uint8`` BGR view of a print whose pixel ``(i, j)`` centre
    lies at ``((i + 0.5) / P, (j + 0.5) / P)`` mm, by a distortion-free camera."""
    w, h = size
    mm_from_px = np.array([[1 / px_per_mm, 0, 0.5 / px_per_mm], [0, 1 / px_per_mm, 0.5 / px_per_mm], [0, 0, 1]])
    s = supersample
    S = np.array([[s, 0, (s - 1) / 2], [0, s, (s - 1) / 2], [0, 0, 1]], np.float64)
    H = S @ plane_homography(K, rvec, tvec) @ mm_from_px
    big = cv2.warpPerspective(print_bgr, H, (w * s, h * s), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=background)
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA) if s > 1 else big


def camera_matrix(size: tuple[int, int], f: float) -> np.ndarray:
    """Square-pixel K with the principal point at the image centre."""
    w, h = size
    return np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]], np.float64)


def project(points_mm: np.ndarray, K: np.ndarray, rvec, tvec) -> np.ndarray:
    """Ground-truth projection ``(N, 2)`` of ``(N, 3)`` points, no distortion."""
    pts = np.asarray(points_mm, np.float64).reshape(-1, 3)
    return cv2.projectPoints(pts, np.asarray(rvec, np.float64), np.asarray(tvec, np.float64), K, None)[0].reshape(-1, 2)


def printed_faces_view(shrink: float, tilt_deg: float = 0.0):
    """A camera view of faces on layer 0 (their tops 20 mm above the mat),
    each printed ``shrink`` times the size ``print-tiles`` prints, centred on
    a blank ivory top, the rest of the plane a grey table.  Rendered as the
    plane of the faces (a flat print) under a pinhole camera 700 mm away:
    nothing but the faces' size differs from the art's.

    Returns:
        ``(grey, slots, faces, pose, spec)``: the ``(720, 1280) uint8`` grey
        photo, 8 slots on layer 0, their Mindful faces, the true pose (no
        distortion) and the default mat.
    """
    from companion.layouts import Slot
    from vision.artcheck import art_template
    from vision.mat import MatSpec, slot_face_corners_mm
    from vision.pose import Camera, MatPose
    spec = MatSpec.default()
    faces = ["circles-5", "bamboo-7", "characters-3", "circles-8", "bamboo-3", "characters-7",
             "circles-2", "bamboo-9"]
    slots = [Slot(10 + 4 * (k % 4), 4 + 4 * (k // 4), 0) for k in range(len(faces))]
    p = 4.0                                                       # print px per mm
    corners = slot_face_corners_mm(slots, spec)
    w_mm, h_mm = float(corners[..., 0].max()) + 30, float(corners[..., 1].max()) + 30
    canvas = np.full((int(h_mm * p), int(w_mm * p), 3), 120, np.uint8)
    for face, c in zip(faces, corners):
        x0, y0 = c[0, 0], c[0, 1]
        cv2.rectangle(canvas, (int(x0 * p), int(y0 * p)), (int((x0 + 30) * p) - 1, int((y0 + 40) * p) - 1),
                      (225, 235, 240), -1)
        art = cv2.cvtColor(art_template("mindful", face, p, shrink), cv2.COLOR_GRAY2BGR)
        ah, aw = art.shape[:2]
        cx, cy = int(round((x0 + 15) * p - aw / 2)), int(round((y0 + 20) * p - ah / 2))
        canvas[cy:cy + ah, cx:cx + aw] = np.clip(art, 0, 255).astype(np.uint8)
    size = (1280, 720)
    K = camera_matrix(size, 1000.0)
    z_face = float(corners[0, 0, 2])                              # -20 mm: the faces' plane
    target = np.array([corners[..., 0].mean(), corners[..., 1].mean(), 0.0])
    rvec, tvec = look_at_pose(target, 700.0, tilt_deg)
    # the print's plane is the faces' plane: the same camera sees it shifted by z_face
    R = cv2.Rodrigues(rvec)[0]
    img = render_view(canvas, p, K, rvec, tvec + R @ np.array([0.0, 0.0, z_face]), size)
    pose = MatPose(rvec, tvec, Camera(K, np.zeros(5), size), 0.0, 4)
    return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), slots, faces, pose, spec


def table_frame(gone=(), rows: int = 4, shift: int = 0, gain: float = 1.0, noise=None) -> np.ndarray:
    """A (720, 1280) uint8 grey frame: a mottled light mat with ``rows`` x 5
    ivory tiles (44 x 56 px, dark faces), as a camera a metre away sees them;
    ``gone`` lists the (row, col) tiles taken away; ``shift`` rolls the
    picture right by that many px, ``gain`` scales its light and ``noise`` (a
    ``np.random.Generator``) adds sensor noise of 3 grey levels.  One tile
    gone changes about 14 pixels of the motion gate's 128 x 72 signature by
    more than 6 grey levels and none by 10: too little to count as motion."""
    rng = np.random.default_rng(7)
    img = np.repeat(np.repeat((rng.random((18, 32)) * 30 + 180).astype(np.float32), 40, axis=0), 40, axis=1)
    for r in range(rows):
        for c in range(5):
            if (r, c) not in gone:
                y, x = 200 + 60 * r + (100 if rows == 1 else 0), 480 + 48 * c
                img[y:y + 56, x:x + 44] = 215
                img[y + 14:y + 42, x + 12:x + 32] = 100
    if shift:
        img = np.roll(img, shift, axis=1)
    img = img * gain
    if noise is not None:
        img = img + noise.normal(0, 3.0, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)
