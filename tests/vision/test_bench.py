"""The benches' photo generator and options (bench/bench_recognize.py) and
the referee bench's time-lapse (bench/bench_referee.py)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from bench.bench_recognize import _image_size, bench_layouts, bench_photo, layouts_from_specs, split_layout_spec
from companion.errors import BadInput


def test_image_size_parses_w_by_h():
    assert _image_size("1920x1080") == (1920, 1080)
    assert _image_size("3840X2160") == (3840, 2160)


@pytest.mark.parametrize("text", ["1920", "1920x", "axb", "1920x1080x3", "32x32", "9000x100"])
def test_image_size_refuses_bad_sizes(text):
    with pytest.raises(argparse.ArgumentTypeError):
        _image_size(text)


def test_other_size_renders_the_same_scene():
    """``--size`` changes the pixels only: same layout, tiles, pose and camera
    (the focal length in px scales with the width)."""
    layouts = bench_layouts()
    v1, l1, a = bench_photo(3, layouts)
    v2, l2, b = bench_photo(3, layouts, size=(640, 360))
    assert (v1, l1.name) == (v2, l2.name)
    assert a.image.shape == (720, 1280, 3) and b.image.shape == (360, 640, 3)
    assert list(a.truth.present) == list(b.truth.present)
    assert a.truth.faces == b.truth.faces
    assert a.truth.pose().tilt_deg == pytest.approx(b.truth.pose().tilt_deg)
    assert b.truth.camera.K[0, 0] == pytest.approx(a.truth.camera.K[0, 0] / 2)
    assert np.allclose(np.asarray(b.truth.jitter), np.asarray(a.truth.jitter))


def test_a_slot_right_behind_a_taller_stack_in_a_low_view_is_unseeable():
    """bench_recognize.unseeable_slots: a three-tile stack (top face 60 mm up)
    between a low camera and the slot behind it hides that slot's face region;
    seen from overhead nothing is hidden, and a lone tile no taller than the
    slot's face hides nothing (only boxes rising above the face count)."""
    from bench.bench_recognize import unseeable_slots
    from companion.layouts import Layout, Slot
    from companion.rules import Geometry
    from vision.mat import MatSpec

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    layout = Layout("stack-and-neighbour", (Slot(0, 0, 0), Slot(0, 0, 1), Slot(0, 0, 2), Slot(2, 0, 0)), "")
    g = Geometry.of(layout)
    low = np.array([gx - 400.0, gy + 20.0, -100.0])       # 400 mm to the left, 100 mm up (Z < 0 is up)
    overhead = np.array([gx + 30.0, gy + 20.0, -600.0])
    stack = np.array([True, True, True, True])
    assert unseeable_slots(layout, spec, low, stack, g) == {3}      # the stack's lower tiles are covered, not unseen
    assert unseeable_slots(layout, spec, overhead, stack, g) == set()
    empty_behind = np.array([True, True, True, False])               # an empty slot's region is hidden all the same
    assert unseeable_slots(layout, spec, low, empty_behind, g) == {3}
    lone = np.array([True, False, False, True])
    assert unseeable_slots(layout, spec, low, lone, g) == set()


def test_layout_specs_name_a_map_of_a_file_after_the_last_hash(tmp_path):
    assert split_layout_spec("maps/mahjongg.map#Pyramid's Walls") == ("maps/mahjongg.map", "Pyramid's Walls")
    assert split_layout_spec("a#b.map#Easy") == ("a#b.map", "Easy")
    assert split_layout_spec("turtle") == ("turtle", None)
    odd = tmp_path / "odd#name.json"           # a file whose own name holds a '#'
    odd.write_text('{"name": "odd", "slots": [[0, 0, 0], [2, 0, 0]]}')
    assert split_layout_spec(str(odd)) == (str(odd), None)


def test_bench_layouts_from_specs_are_shifted_and_unbuildable_ones_skipped(tmp_path):
    """``--layouts``: a built-in and a file are benched, shifted to the mat's
    origin; a layout the mat cannot hold is skipped with one line; an unknown
    name is refused."""
    import io
    near = tmp_path / "near.json"
    near.write_text('{"name": "near", "slots": [[10, 4, 0], [12, 4, 0], [14, 4, 0], [11, 4, 1]]}')
    wide = tmp_path / "wide.json"           # 40 half-units wide: over the mat's 36
    wide.write_text('{"name": "wide", "slots": [[0, 0, 0], [38, 0, 0]]}')
    log = io.StringIO()
    got = layouts_from_specs(["sprint-flat", str(near), str(wide)], log=log)
    assert [l.name for l in got] == ["sprint-flat", "near"]
    from companion.layout_files import read_layout_file
    from companion.layouts import shifted_to_origin
    assert got[1].slots == shifted_to_origin(read_layout_file(near)).slots != read_layout_file(near).slots
    assert log.getvalue().count("\n") == 1 and "skipped layout 'wide'" in log.getvalue()
    with pytest.raises(BadInput):
        layouts_from_specs(["no-such-layout"], log=log)
    assert [l.name for l in bench_layouts()] == [l.name for l in bench_layouts(None)]


def test_saved_photos_name_the_slots_the_bench_used(tmp_path, capsys):
    # the bench builds Pagoda of Peace a row higher than the built-in: its
    # saved truth named the built-in, whose slots are elsewhere
    import json

    from bench.bench_recognize import save_photo
    from companion import codex
    from companion.cli import main

    layouts = {l.name: l for l in bench_layouts()}
    for k, name in ((0, "turtle"), (1, "pagoda-of-peace")):
        variant, layout, scene = bench_photo(k, [layouts[name]])
        save_photo(tmp_path, k, variant, layout, scene)
    assert json.loads((tmp_path / "photo-0.json").read_text())["layout"] == "turtle"
    assert not (tmp_path / "photo-0-layout.json").exists()
    saved = json.loads((tmp_path / "photo-1.json").read_text())
    assert saved["layout"] == str(tmp_path / "photo-1-layout.json")
    assert main(["layouts", "show", saved["layout"], "--json"]) == 0
    slots = [tuple(s) for s in json.loads(capsys.readouterr().out)["slots"]]
    assert slots == [tuple(s) for s in layouts["pagoda-of-peace"].slots] != list(codex.builtin("pagoda-of-peace").slots)
    assert [tuple(t["slot"]) for t in saved["truth"]["tiles"]] == slots
    # a layout file given with --layouts: its name is no --layout, so its slots are saved too
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": "mine", "slots": [[2 * i, 0, 0] for i in range(8)]}))
    (mine,) = layouts_from_specs([str(path)])
    variant, layout, scene = bench_photo(2, [mine])
    save_photo(tmp_path, 2, variant, layout, scene)
    assert json.loads((tmp_path / "photo-2.json").read_text())["layout"] == str(tmp_path / "photo-2-layout.json")


def test_time_lapse_keeps_every_nth_frame_without_a_hand(tmp_path):
    from bench.bench_referee import time_lapse
    frames = tmp_path / "frames"
    frames.mkdir()
    hands = [False, False, True, True, False, False, False, True, False]
    for k in range(len(hands)):
        (frames / f"frame_{k:05d}.jpg").write_bytes(bytes([k]))
    truth = {"frame_truth": [{"frame": k, "hand": h} for k, h in enumerate(hands)]}
    out = tmp_path / "tl"
    # hand-free frames 0 1 4 5 6 8; every 2nd: 0 4 6
    assert time_lapse(frames, truth, 2, out) == [0, 4, 6]
    assert sorted(p.name for p in out.iterdir()) == ["00000.jpg", "00001.jpg", "00002.jpg"]
    assert (out / "00001.jpg").read_bytes() == bytes([4])
    assert time_lapse(frames, truth, 4, out) == [0, 6]        # made again from scratch
    assert len(list(out.iterdir())) == 2


def test_referee_bench_refuses_a_layout_it_does_not_know(capsys):
    from bench.bench_referee import main
    with pytest.raises(SystemExit) as err:
        main(["--layout", "no-such-layout", "--games", "1"])
    assert err.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--layout: not a built-in layout: no-such-layout (one of turtle, sprint-flat," in line
    assert "pagoda-of-peace" in line


def test_hand_colour_bench_counts_an_arm_of_the_table_s_grey_only_by_colour(tmp_path, capsys):
    # a recording of four pictures: the pink table (grey 162.0) twice, then an
    # orange arm of the same grey (162.2) over part of it twice
    import json

    import cv2
    import numpy as np

    from bench.bench_hand_colour import main, measure
    (tmp_path / "frames").mkdir()
    table = np.zeros((180, 320, 3), np.uint8)
    table[:] = (150, 150, 190)
    arm = table.copy()
    arm[0:90, 100:140] = (100, 150, 210)
    frames = [table, table, table, table, arm, arm]
    for k, img in enumerate(frames):
        cv2.imwrite(str(tmp_path / "frames" / f"frame_{k:05d}.jpg"), img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    ft = [{"frame": k, "hand": k >= 4, "phase": "settled" if k < 4 else "move", "camera": 0, "present": "11"}
          for k in range(len(frames))]
    (tmp_path / "truth.json").write_text(json.dumps({"frame_truth": ft}))
    import random
    m = measure(tmp_path, pairs=3, hands=2, chroma_delta=10.0, rng=random.Random(0))
    assert m["noise_colour"] < 2.0 and m["noise_grey"] < 2.0          # JPEG alone
    assert m["grey_px"] == 0 and m["both_px"] > 2 * 700                 # the arm: 40 x 90 px, 20 x 45 of 160 x 90
    assert main([str(tmp_path), "--pairs", "3", "--hands", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["recording", "noise"] and out[1].split()[0] == tmp_path.name[:44]
