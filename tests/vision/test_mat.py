"""The printed mat: spec, slot geometry, mat.json, mat.png, PDF and ``print-mat``."""

from __future__ import annotations

import json
import re

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.errors import BadInput
from companion.layouts import Slot
from vision.mat import (MatSpec, mm_to_px, mm_to_px_matrix, px_to_mm, render_mat, render_mat_pdf,
                        slot_box_corners_mm, slot_face_corners_mm)
from vision.markers import detect_markers


# --------------------------------------------------------------------------- spec

def test_default_mat_is_a2_with_the_standard_grid(spec):
    assert spec.size_mm == (594.0, 420.0)
    assert spec.grid_tiles == (18, 8)
    assert spec.tile_mm == (30.0, 40.0, 20.0)
    assert spec.grid_size_mm == (540.0, 320.0)
    gx, gy = spec.grid_origin_mm
    assert (gx, gy) == (27.0, 50.0)
    assert gx + 540 <= 594 and gy + 320 <= 420
    assert spec.image_size_px == (2970, 2100)


def test_markers_lie_outside_the_grid_on_all_four_sides(spec):
    gx, gy = spec.grid_origin_mm
    gw, gh = spec.grid_size_mm
    assert len(spec.markers) == 12
    assert sorted(m.id for m in spec.markers) == list(range(12))
    assert {m.dictionary for m in spec.markers} == {"DICT_4X4_50"}
    sides = set()
    for m in spec.markers:
        c = m.corners
        lo, hi = c.min(axis=0), c.max(axis=0)
        assert lo[0] >= 3 and lo[1] >= 3 and hi[0] <= 594 - 3 and hi[1] <= 420 - 3  # on the sheet
        outside = hi[0] <= gx or lo[0] >= gx + gw or hi[1] <= gy or lo[1] >= gy + gh
        assert outside, f"marker {m.id} overlaps the grid"
        # corners in OpenCV order: TL, TR, BR, BL (clockwise with y down)
        assert c[0][0] < c[1][0] and c[1][1] < c[2][1] and c[3][0] < c[2][0]
        sides.add("top" if hi[1] <= gy else "bottom" if lo[1] >= gy + gh else "left" if hi[0] <= gx else "right")
    assert sides == {"top", "bottom", "left", "right"}
    # no two markers overlap, each keeps 4 mm of white around it
    boxes = [(m.corners.min(axis=0), m.corners.max(axis=0)) for m in spec.markers]
    for i, (a0, a1) in enumerate(boxes):
        for b0, b1 in boxes[i + 1:]:
            assert (a1[0] + 4 <= b0[0] or b1[0] + 4 <= a0[0] or a1[1] + 4 <= b0[1] or b1[1] + 4 <= a0[1])


def test_mat_json_round_trip(spec):
    obj = json.loads(json.dumps(spec.to_json()))
    assert set(obj) >= {"size_mm", "grid_origin_mm", "grid_tiles", "tile_mm", "image", "px_per_mm", "markers"}
    assert obj["image"] == "mat.png" and obj["grid_tiles"] == [18, 8] and obj["tile_mm"] == [30, 40, 20]
    assert obj["markers"][0] == {"dictionary": "DICT_4X4_50", "id": 0,
                                 "corners_mm": [[7, 7], [43, 7], [43, 43], [7, 43]]}
    back = MatSpec.from_json(obj)
    assert back == spec


def _spoil(path, value):
    obj = MatSpec.default().to_json()
    target = obj
    for k in path[:-1]:
        target = target[k]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return obj


@pytest.mark.parametrize("obj, words", [
    ([1, 2], "object"),
    (_spoil(["size_mm"], [594]), "size_mm"),
    (_spoil(["size_mm"], [594, -1]), "positive"),
    (_spoil(["grid_tiles"], [18.5, 8]), "integers"),
    (_spoil(["tile_mm"], KeyError), "tile_mm"),
    (_spoil(["px_per_mm"], 3), "px_per_mm"),
    (_spoil(["px_per_mm"], True), "px_per_mm"),
    (_spoil(["markers"], []), "markers"),
    (_spoil(["markers", 0, "dictionary"], "DICT_9X9_1"), "dictionary"),
    (_spoil(["markers", 0, "id"], 50), "not an id"),
    (_spoil(["markers", 1, "id"], 0), "twice"),
    (_spoil(["markers", 0, "corners_mm"], [[0, 0], [1, 0], [1, 1]]), "corners_mm"),
    (_spoil(["markers", 0, "corners_mm"], [[0, 0], [1, 0], [1, "x"], [0, 1]]), "corners_mm"),
    # four corners at one point, or on one line, enclose nothing: no pose from them
    (_spoil(["markers", 0, "corners_mm"], [[10, 10]] * 4), "enclose 0 mm"),
    (_spoil(["markers", 0, "corners_mm"], [[0, 0], [10, 0], [20, 0], [30, 0]]), "enclose 0 mm"),
    # a 4 x 4 mm square (16 mm^2) is too small to be a printed marker
    (_spoil(["markers", 0, "corners_mm"], [[0, 0], [4, 0], [4, 4], [0, 4]]), "enclose 16 mm"),
    # a 1000 x 0.03 mm sliver has 30 mm^2 but no printable side
    (_spoil(["markers", 0, "corners_mm"], [[0, 0], [1000, 0], [1000, 0.03], [0, 0.03]]), "a side of 0.03 mm"),
    # corners anticlockwise (a file written by another tool): every pose would
    # come out from below the mat, blamed on the photo ("mirrored image?")
    (_spoil(["markers", 0, "corners_mm"], [[7, 43], [43, 43], [43, 7], [7, 7]]),
     r"markers\[0\].corners_mm .* run anticlockwise: give a marker's corners as printed, top-left"),
    # one marker can never give a pose (it needs two seen): refused when read
    (_spoil(["markers"], MatSpec.default().to_json()["markers"][:1]), "needs at least 2 markers"),
    # a grid or a marker off the sheet, and sizes no mat has
    (_spoil(["grid_origin_mm"], [1e308, 1e308]), "does not lie on the 594 x 420 mm sheet"),
    (_spoil(["grid_origin_mm"], [-1, 50]), "does not lie on the 594 x 420 mm sheet"),
    (_spoil(["grid_origin_mm"], [60, 50]), "does not lie on the 594 x 420 mm sheet"),
    (_spoil(["grid_tiles"], [18, 10]), "does not lie on the 594 x 420 mm sheet"),
    # a smaller grid fits the sheet, but the layouts lie on the 18 x 8 one
    (_spoil(["grid_tiles"], [10, 8]), r"grid_tiles \[10, 8\]: the layouts are read on the standard mat's grid of 18 x 8"),
    (_spoil(["size_mm"], [1e308, 1e308]), "larger than any mat"),
    (_spoil(["tile_mm"], [30, 40, 1e300]), "larger than any mat"),
    (_spoil(["size_mm"], [594, float("inf")]), "size_mm must be a list of 2 numbers"),
    (_spoil(["markers", 4, "corners_mm"], [[551, 7], [587, 7], [600, 43], [551, 43]]),
     r"markers\[4\].corners_mm .* reach outside the 594 x 420 mm sheet"),
    (_spoil(["markers", 0, "corners_mm"], [[-7, 7], [29, 7], [29, 43], [-7, 43]]), "reach outside"),
    # a marker on the tile grid (x 27-567, y 50-370 mm) would lie under the tiles
    (_spoil(["markers", 0, "corners_mm"], [[100, 100], [136, 100], [136, 136], [100, 136]]),
     r"markers\[0\].corners_mm .* lie 1296 mm\^2 on the tile grid"),
    (_spoil(["markers", 0, "corners_mm"], [[7, 30], [43, 30], [43, 66], [7, 66]]), "lie 256 mm\\^2 on the tile grid"),
    # two markers at one place
    (_spoil(["markers", 1, "corners_mm"], MatSpec.default().to_json()["markers"][0]["corners_mm"]),
     r"markers\[0\] and markers\[1\] lie at the same place"),
])
def test_malformed_mat_json_is_bad_input(obj, words):
    with pytest.raises(BadInput, match=words) as exc:
        MatSpec.from_json(obj)
    assert "\n" not in str(exc.value)


def test_a_marker_may_touch_the_grid_edge():
    # the grid starts at y = 50 mm: a marker whose lower edge lies on it hides no tile
    obj = _spoil(["markers", 0, "corners_mm"], [[7, 14], [43, 14], [43, 50], [7, 50]])
    assert MatSpec.from_json(obj).markers[0].corners_mm == ((7, 14), (43, 14), (43, 50), (7, 50))


# --------------------------------------------------------------------------- geometry

def test_slot_face_corners_follow_the_contract(spec):
    # contract: top face [gx + 15x, gx + 15(x+2)] x [gy + 20y, gy + 20(y+2)] at height 20(z+1)
    faces = slot_face_corners_mm([Slot(0, 0, 0), Slot(1, 1, 2), (34, 14, 4)], spec)
    assert faces.shape == (3, 4, 3) and faces.dtype == np.float64
    np.testing.assert_array_equal(faces[0], [[27, 50, -20], [57, 50, -20], [57, 90, -20], [27, 90, -20]])
    np.testing.assert_array_equal(faces[1], [[42, 70, -60], [72, 70, -60], [72, 110, -60], [42, 110, -60]])
    # the last cell of the grid: x 27 + 510 .. 567, y 50 + 280 .. 370, five layers up
    np.testing.assert_array_equal(faces[2], [[537, 330, -100], [567, 330, -100], [567, 370, -100], [537, 370, -100]])


def test_slot_geometry_follows_the_spec_sizes():
    s = MatSpec((400, 300), (10, 20), (10, 5), (20, 30, 10), 5.0, MatSpec.default().markers[:2])
    np.testing.assert_array_equal(slot_face_corners_mm([(3, 2, 1)], s)[0],
                                  [[40, 50, -20], [60, 50, -20], [60, 80, -20], [40, 80, -20]])


def test_slot_box_has_top_and_bottom_faces(spec):
    box = slot_box_corners_mm([(4, 2, 3)], spec)
    assert box.shape == (1, 8, 3)
    np.testing.assert_array_equal(box[0, :4], slot_face_corners_mm([(4, 2, 3)], spec)[0])
    np.testing.assert_array_equal(box[0, 4:, :2], box[0, :4, :2])
    assert set(box[0, :4, 2]) == {-80.0} and set(box[0, 4:, 2]) == {-60.0}


def test_empty_and_bad_slot_lists(spec):
    assert slot_face_corners_mm([], spec).shape == (0, 4, 3)
    assert slot_box_corners_mm(np.zeros((0, 3)), spec).shape == (0, 8, 3)
    with pytest.raises(BadInput):
        slot_face_corners_mm([(1, 2)], spec)


def test_mm_px_conversion_uses_pixel_centres(spec):
    # pixel (0, 0) covers [0, 0.2) mm at 5 px/mm: its centre is 0.1 mm
    np.testing.assert_allclose(px_to_mm([0, 0], spec), [0.1, 0.1])
    np.testing.assert_allclose(mm_to_px([7, 43], spec), [34.5, 214.5])
    pts = np.array([[12.3, 45.6], [590, 2]])
    np.testing.assert_allclose(px_to_mm(mm_to_px(pts, spec), spec), pts)
    M = mm_to_px_matrix(spec)
    np.testing.assert_allclose((M @ [7, 43, 1])[:2], [34.5, 214.5])


# --------------------------------------------------------------------------- image

def test_render_mat_draws_grid_and_markers_where_the_spec_says(spec, mat_png):
    assert mat_png.shape == (2100, 2970, 3) and mat_png.dtype == np.uint8
    ids, corners = detect_markers(mat_png, spec)
    assert sorted(ids.tolist()) == list(range(12))
    objs = spec.marker_object_points()
    for i, c in zip(ids, corners):
        want = mm_to_px(objs[("DICT_4X4_50", int(i))][:, :2], spec)
        assert np.abs(c - want).max() < 0.1, f"marker {i}"
    gray = cv2.cvtColor(mat_png, cv2.COLOR_BGR2GRAY)
    px = lambda x, y: gray[int(y * 5), int(x * 5)]  # noqa: E731
    assert px(27, 63) < 128 and px(57, 63) < 128 and px(27 + 540, 63) < 128  # vertical cell lines
    assert px(35, 50) < 128 and px(35, 90) < 128 and px(35, 370) < 128  # horizontal cell lines
    assert px(35, 63) == 255 and px(300, 240) == 255  # empty cell interior
    assert px(5, 5) == 255 and px(10, 10) == 0  # margin white, marker 0 border black


def test_render_mat_at_4_px_per_mm(spec):
    small = spec.with_px_per_mm(4)
    img = render_mat(small)
    assert img.shape == (1680, 2376, 3)
    ids, _ = detect_markers(img, small)
    assert len(ids) == 12


def test_pdf_prints_at_physical_size(spec, mat_png):
    pdf = render_mat_pdf(spec, mat_png)
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    box = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    assert [(float(w), float(h)) for w, h in box] == [(pytest.approx(594 * 72 / 25.4, abs=0.01),
                                                        pytest.approx(420 * 72 / 25.4, abs=0.01))]
    tiled = render_mat_pdf(spec, mat_png, paper="a4")
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", tiled)
    assert len(boxes) == 8  # 4 x 2 portrait A4 pages with 10 mm margins and overlap
    assert {(round(float(w) * 25.4 / 72), round(float(h) * 25.4 / 72)) for w, h in boxes} == {(210, 297)}
    # 190 x 277 mm printed a page, spread evenly over 594 x 420 mm: the
    # pages start at x 0, 134.7, 269.3, 404 and y 0, 143 mm, so neighbours
    # overlap 190 - 134.7 = 55.3 mm across and 277 - 143 = 134 mm down (the
    # footers said "overlap 10 mm", the least allowed; a newcomer's check)
    from vision.mat import a4_tiling
    t = a4_tiling(spec.size_mm)
    assert (t.nx, t.ny, t.part_mm) == (4, 2, (190.0, 277.0))
    assert t.overlap_mm == (pytest.approx(55.333, abs=0.001), pytest.approx(134.0))
    assert t.origin_mm(1, 3, spec.size_mm) == (pytest.approx(404.0), pytest.approx(143.0))
    assert tiled.count(b"pages overlap 55 mm across, 134 mm down: line up the grid") == 8
    # each footer 7 mm up from the paper's edge, inside the 10 mm margin
    # (at 4 mm it lay where printers print nothing: a break-test, session 58)
    assert tiled.count(b"BT /F1 6 Tf 28.346 19.843 Td") == 8
    with pytest.raises(BadInput, match="unknown paper 'legal'"):
        render_mat_pdf(spec, mat_png, paper="legal")


def test_the_mat_tiles_on_us_letter(spec, mat_png):
    # Letter is 215.9 x 279.4 mm: A4 pages printed on it lost the bottom
    # markers 6-10 and every footer (a break-test, session 58)
    from vision.mat import PAPERS_MM, page_tiling
    t = page_tiling(spec.size_mm, PAPERS_MM["letter"])
    # 195.9 x 259.4 mm printed a page (10 mm margins), 4 x 2 portrait pages
    # starting at x 0, 132.7, 265.4, 398.1 and y 0, 160.6 mm
    assert (t.nx, t.ny) == (4, 2) and t.part_mm == (pytest.approx(195.9), pytest.approx(259.4))
    assert t.overlap_mm == (pytest.approx(195.9 - 398.1 / 3, abs=1e-6), pytest.approx(259.4 - 160.6))
    assert t.origin_mm(1, 3, spec.size_mm) == (pytest.approx(398.1), pytest.approx(160.6))
    letter = render_mat_pdf(spec, mat_png, paper="letter")
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", letter)
    assert [(float(w), float(h)) for w, h in boxes] == [(612.0, 792.0)] * 8
    assert letter.count(b"pages overlap 63 mm across, 99 mm down: line up the grid") == 8


def test_marker_edge_of_the_default_mat(spec):
    from vision.mat import marker_edge_mm
    assert marker_edge_mm(spec) == 4.0           # markers 5 and 11 at x 4..22 and 572..590 of 594 mm


# --------------------------------------------------------------------------- print-mat

def test_print_mat_writes_png_json_and_pdfs(tmp_path, capsys):
    out = tmp_path / "mat"
    assert main(["print-mat", "--out", str(out), "--px-per-mm", "4"]) == 0
    text = capsys.readouterr().out
    assert "594 x 420 mm" in text
    # the A2 sheet's markers lie 4 mm from its edge: said, with the tiled pages
    assert "at 100% on A2 without borders (markers lie 4 mm from its edge" in text
    assert "mat-letter.pdf (8 US Letter pages, 63 and 99 mm)" in text
    spec = MatSpec.from_json(json.loads((out / "mat.json").read_text()))
    assert spec == MatSpec.default(px_per_mm=4)
    img = cv2.imread(str(out / "mat.png"))
    assert img.shape == (1680, 2376, 3)
    assert (out / "mat.pdf").read_bytes().startswith(b"%PDF") and (out / "mat-a4.pdf").stat().st_size > 0


def test_print_mat_json_output(tmp_path, capsys):
    assert main(["print-mat", "--out", str(tmp_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["size_mm"] == [594, 420] and info["px_per_mm"] == 5 and info["a4_pages"] == 8
    assert info["letter_pages"] == 8 and info["marker_edge_mm"] == 4.0
    assert info["mat_letter_pdf"] == str(tmp_path / "mat-letter.pdf")


def test_print_mat_and_board_into_a_folder_whose_name_is_not_utf8(tmp_path, capsys):
    # cv2.imwrite crashed the process (segmentation fault) on such a name:
    # the PNG is encoded by OpenCV and written by Python
    import os
    from pathlib import Path
    out = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"mat\xff")))
    try:
        out.mkdir()
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    assert main(["print-mat", "--out", str(out), "--px-per-mm", "4", "--json"]) == 0
    text = capsys.readouterr().out
    assert text.isascii() and json.loads(text)["mat_png"] == str(tmp_path / "mat") + "\\xff/mat.png"
    assert cv2.imdecode(np.fromfile(str(out / "mat.png"), np.uint8), cv2.IMREAD_COLOR).shape == (1680, 2376, 3)
    assert main(["print-board", "--out", str(out)]) == 0
    assert (out / "charuco_board.png").read_bytes().startswith(b"\x89PNG")


def test_print_mat_bad_usage_exits_2(tmp_path, capsys):
    assert main(["print-mat", "--out", str(tmp_path), "--px-per-mm", "2"]) == 2
    err = capsys.readouterr().err
    assert "px-per-mm" in err and len(err.strip().splitlines()) == 1
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["print-mat", "--out", str(blocker)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    # an empty --out would quietly mean the current folder
    assert main(["print-mat", "--out", ""]) == 2
    assert "--out needs a folder name" in capsys.readouterr().err


def _snapshot(folder):
    """Every file and folder under ``folder`` with its bytes (None for a
    folder or a pipe): what a failed command must leave as it was."""
    import stat
    out = {}
    for p in sorted(folder.rglob("*")):
        out[str(p.relative_to(folder))] = p.read_bytes() if stat.S_ISREG(p.lstat().st_mode) else None
    return out


@pytest.mark.parametrize("command, names", [
    ("print-mat", ["mat.png", "mat.json", "mat.pdf", "mat-a4.pdf", "mat-letter.pdf"]),
    ("print-board", ["charuco_board.png", "charuco_board.json", "charuco_board.pdf"]),
])
def test_print_mat_and_board_write_all_their_files_or_none(tmp_path, capsys, command, names):
    import os
    # the last file of the set cannot be written (a folder or a pipe of its
    # name): refused before anything is written, the others left as they were
    for blocker in ("folder", "pipe"):
        out = tmp_path / blocker
        out.mkdir()
        (out / names[0]).write_bytes(b"old")
        if blocker == "folder":
            (out / names[-1]).mkdir()
        else:
            os.mkfifo(out / names[-1])
        before = _snapshot(out)
        assert main([command, "--out", str(out)]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        assert captured.err.startswith(f"companion {command}: cannot write {out / names[-1]}: ")
        assert _snapshot(out) == before and (out / names[0]).read_bytes() == b"old"
    # a failure during the work leaves nothing either: the folder it created is removed
    import vision.calibration
    import vision.mat

    def fail(*a, **k):
        raise BadInput("drawing failed")
    module, name = (vision.mat, "render_mat_pdf") if command == "print-mat" else (vision.calibration, "render_charuco")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(module, name, fail)
        assert main([command, "--out", str(tmp_path / "new" / "sub")]) == 2
    assert capsys.readouterr().err == f"companion {command}: drawing failed\n"
    assert not (tmp_path / "new").exists()
    # and a success replaces the old file, leaving no temporary behind
    out = tmp_path / "folder"
    (out / names[-1]).rmdir()
    assert main([command, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    assert (out / names[0]).read_bytes() != b"old"


def _unprivileged() -> list[str]:
    """The start of a command line that runs without the right to ignore
    file permissions (root's), or skip the test."""
    import os
    import shutil
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions would not apply")
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]


@pytest.mark.parametrize("argv, first", [
    (["print-mat"], "mat.png"),
    (["print-board"], "charuco_board.png"),
    (["print-tiles", "--variant", "love"], "hearts-1.png"),
])
def test_print_commands_into_a_read_only_folder_give_one_line_with_the_reason(tmp_path, argv, first):
    # OpenCV's own warning ("imwrite_ ... can't open file for writing") never
    # reaches stderr: the single line names the file and the system's reason
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        for out in (ro, ro / "sub"):
            proc = subprocess.run([*_unprivileged(), sys.executable, "-m", "companion", *argv, "--out", str(out)],
                                  cwd=root, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 2 and proc.stdout == "", proc.stderr
            assert proc.stderr.count("\n") == 1 and proc.stderr.endswith(": Permission denied\n"), proc.stderr
            if out == ro:
                assert proc.stderr.startswith(f"companion {argv[0]}: cannot write {ro / first}: ")
            else:
                folder = "the --out folder" if argv[0] != "print-tiles" else "the folder"
                assert proc.stderr.startswith(f"companion {argv[0]}: cannot create {folder} {out}: ")
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


def test_print_mat_with_a_read_only_file_in_the_set_writes_nothing(tmp_path):
    # mat.json and mat.pdf read-only: refused naming the first, mat.png not written
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "mat"
    out.mkdir()
    for name in ("mat.json", "mat.pdf"):
        (out / name).write_text("old")
        (out / name).chmod(0o444)
    proc = subprocess.run([*_unprivileged(), sys.executable, "-m", "companion", "print-mat", "--out", str(out)],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"companion print-mat: cannot write {out / 'mat.json'}: Permission denied\n"
    assert sorted(p.name for p in out.iterdir()) == ["mat.json", "mat.pdf"]
    assert all((out / n).read_text() == "old" for n in ("mat.json", "mat.pdf"))


def test_the_standard_grid_is_the_layouts_half_tile_grid():
    from companion.layouts import MAT_HALF_UNITS
    from vision.mat import STANDARD_GRID_TILES
    assert STANDARD_GRID_TILES == (18, 8) and MAT_HALF_UNITS == (36, 16)
