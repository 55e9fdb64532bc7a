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
