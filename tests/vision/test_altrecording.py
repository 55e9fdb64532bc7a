"""The independent renderer's videos (bench/altrecording.py, bench/altrender.py's
``look``): the referee bench's ``--renderer alt``."""

from __future__ import annotations

import numpy as np
import pytest

from bench import altrecording
from bench.bench_recognize import deal
from companion import codex

altrender = altrecording.altrender


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    return altrender.Assets.load(altrender.ensure_assets(tmp_path_factory.mktemp("alt-assets")))


def _frame(assets, layout, faces, present, look):
    return altrender.render(assets, "mindful", layout, faces, present, np.random.default_rng([5, 8]),
                            tilt_deg=(15.0, 15.0), look=look, fill=(0.85, 0.85))


def test_frames_of_one_video_differ_only_where_the_board_changed(assets):
    # a video's frames share camera, light, exposure, noise and JPEG: a
    # tile lifted changes its own neighbourhood and nothing else (without
    # ``look`` the exposure was drawn after the tiles' gains, so it jumped
    # whenever a tile left)
    layout = codex.builtin("sprint-flat")
    faces = deal("mindful", len(layout), np.random.default_rng(3))
    look = altrender.sample_look(np.random.default_rng(4), len(layout))
    present = np.ones(len(layout), bool)
    a, tr = _frame(assets, layout, faces, present, look)
    i = 40
    present[i] = False
    b, tr_b = _frame(assets, layout, faces, present, look)
    assert tr.tilt_deg == pytest.approx(15.0) and np.allclose(tr.K, tr_b.K) and np.allclose(tr.tvec, tr_b.tvec)
    cam = altrecording._cam(tr, (1280, 720))
    x, y, z = layout.slots[i]
    gx, gy = assets.grid_origin
    box = cam.project(np.array([[gx + 15 * x + dx, gy + 20 * y + dy, -20.0 * dz]
                                for dx in (0, 30) for dy in (0, 40) for dz in (0, 1)], np.float64))
    x0, y0 = np.floor(box.min(axis=0)).astype(int) - 16
    x1, y1 = np.ceil(box.max(axis=0)).astype(int) + 16
    diff = np.abs(a.astype(int) - b.astype(int)).max(axis=2)
    inside = np.zeros(diff.shape, bool)
    inside[max(y0, 0):y1, max(x0, 0):x1] = True
    assert diff[~inside].max() == 0
    assert (diff[inside] > 40).sum() > 100          # the tile's face and sides are gone
    assert tr_b.visible[i] == 0 and tr.visible[i] > 0.9


def test_a_drawn_hand_covers_its_fingertips_and_reaches_out_towards_its_side(assets):
    layout = codex.builtin("sprint-flat")
    faces = deal("mindful", len(layout), np.random.default_rng(3))
    look = altrender.sample_look(np.random.default_rng(4), len(layout))
    img, tr = _frame(assets, layout, faces, np.ones(len(layout), bool), look)
    cam = altrecording._cam(tr, (1280, 720))
    mw, mh = assets.mat["size_mm"]
    tip = np.array([mw / 2, mh / 2, -32.0])            # over a layer-0 tile
    side = np.array([mw / 2, mh + 900.0, -150.0])      # the player sits on the +y side
    drawn = img.copy()
    altrecording.draw_hand(drawn, cam, tip, side, 1, (140, 172, 225), (40, 40, 160), (215, 240, 250),
                           (10.0, 0.0), 0.0)
    changed = np.abs(drawn.astype(int) - img.astype(int)).max(axis=2) > 30
    u, v = np.round(cam.project(tip[None])[0]).astype(int)
    assert changed[v - 3:v + 4, u - 3:u + 4].all()                 # the fingertips (a carried tile)
    towards = np.round(cam.project(np.array([[mw / 2, mh / 2 + 150, -100.0]]))[0]).astype(int)
    away = np.round(cam.project(np.array([[mw / 2, mh / 2 - 150, -20.0]]))[0]).astype(int)
    assert changed[towards[1], towards[0]]                          # the arm, on the player's side
    assert not changed[away[1], away[0]]                            # nothing beyond the fingertips
    assert 0.01 < changed.mean() < 0.3
