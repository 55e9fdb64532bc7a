"""ChArUco calibration from synthetic photos of the printed board, the
calibration/ targets, and ``companion calibrate``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from synthetic_views import look_at_pose, render_view

from companion.cli import main
from companion.errors import BadInput
from vision.calibration import (BOARD_SQUARES, PRINT_PX_PER_MM, SQUARE_MM, board_json, board_origin_mm, calibrate,
                                charuco_board, detect_charuco, render_charuco)
from vision.pose import Camera

REPO = Path(__file__).resolve().parents[2]
SIZE = (960, 720)
K_TRUE = np.array([[820.0, 0, 470.0], [0, 815.0, 365.0], [0, 0, 1]])
P = 6.0  # px/mm of the rendered print (enough for 960 x 720 views)
# (tilt, azimuth, roll) in degrees: tilted 20-45 degrees towards all sides
POSES = [(25, 0, 5), (30, 90, -10), (35, 180, 15), (40, 270, 0), (30, 45, 20),
         (25, 135, -20), (35, 225, 10), (30, 315, -5), (45, 30, 0), (20, 200, 30)]


@pytest.fixture(scope="module")
def page() -> np.ndarray:
    return render_charuco(P)


def _views(page, poses, K=K_TRUE, dist=None, distance=420.0):
    out = []
    for i, (tilt, az, roll) in enumerate(poses):
        target = (148.5 + 40 * math.cos(i), 105 + 30 * math.sin(i), 0)
        rv, tv = look_at_pose(target, distance, tilt, yaw_deg=roll, azimuth_deg=az)
        img = render_view(page, P, K, rv, tv, SIZE)
        if dist is not None:
            grid = np.stack(np.meshgrid(np.arange(SIZE[0]), np.arange(SIZE[1])), axis=-1)
            ideal = cv2.undistortPoints(grid.reshape(-1, 1, 2).astype(np.float32), K, dist, R=None, P=K)
            m = ideal.reshape(SIZE[1], SIZE[0], 2)
            img = cv2.remap(img, m[..., 0], m[..., 1], cv2.INTER_LINEAR, borderValue=(70, 95, 120))
        out.append(img)
    return out


def _write(images, folder) -> list[str]:
    paths = []
    for i, img in enumerate(images):
        paths.append(str(folder / f"view{i}.png"))
        cv2.imwrite(paths[-1], img)
    return paths


def test_board_definition():
    board = charuco_board()
    assert board.getChessboardSize() == BOARD_SQUARES
    assert board.getSquareLength() == 30.0 and board.getMarkerLength() == 22.0
    assert len(board.getChessboardCorners()) == 40
    assert board_origin_mm() == (13.5, 15.0)


def test_render_charuco_places_the_board_on_a4(page):
    assert page.shape == (1260, 1782, 3)
    # flat, straight on: every inner corner found where the print puts it
    obj, img = detect_charuco(page)
    assert len(obj) == 40
    ox, oy = board_origin_mm()
    want = (obj[:, :2] + [ox, oy]) * P - 0.5
    assert np.abs(img - want).max() < 0.2


def test_calibration_recovers_known_intrinsics(page):
    cam, rms, n = calibrate(_views(page, POSES))
    assert n == 10 and rms < 0.3
    K = cam.K
    assert K[0, 0] == pytest.approx(820, rel=0.01) and K[1, 1] == pytest.approx(815, rel=0.01)
    assert K[0, 2] == pytest.approx(470, rel=0.01) and K[1, 2] == pytest.approx(365, rel=0.01)
    assert np.abs(cam.dist).max() < 0.02
    assert cam.image_size == SIZE and cam.source == "calibrated" and cam.dist.shape == (5,)


def test_calibration_reads_the_photos_one_at_a_time(page):
    # a break-test's 8 views of 24 MP held 754 MB at once: given as readers,
    # each photo is read when its corners are looked for, once, and let go
    views = _views(page, POSES)
    reads = []

    def reader(k):
        def read():
            reads.append(k)
            return views[k].copy()
        return read
    cam, rms, n = calibrate([reader(k) for k in range(len(views))])
    assert reads == list(range(len(views)))
    ref, ref_rms, _ = calibrate(views)
    assert n == 10 and rms == pytest.approx(ref_rms) and np.allclose(cam.K, ref.K)
    # the hint for photos without the board reads those again, on refusal only
    mirrored = [cv2.flip(v, 1) for v in views[:5]]
    reads.clear()
    views = mirrored
    with pytest.raises(BadInput, match="the pictures look mirrored"):
        calibrate([reader(k) for k in range(5)])
    assert sorted(reads) == sorted(list(range(5)) * 2)       # corners, then the look for a mirrored board


def test_calibration_recovers_lens_distortion(page):
    dist = np.array([-0.15, 0.04, 0.0, 0.0, 0.0])
    cam, rms, n = calibrate(_views(page, POSES, dist=dist))
    assert n == 10 and rms < 0.3
    assert cam.K[0, 0] == pytest.approx(820, rel=0.01) and cam.K[1, 1] == pytest.approx(815, rel=0.01)
    assert cam.K[0, 2] == pytest.approx(470, rel=0.01) and cam.K[1, 2] == pytest.approx(365, rel=0.01)
    assert cam.dist[0] == pytest.approx(-0.15, abs=0.02) and cam.dist[1] == pytest.approx(0.04, abs=0.05)


def test_too_few_views_is_bad_input(page):
    with pytest.raises(BadInput, match="only 3 of 5 images") as exc:
        calibrate(_views(page, POSES[:3]) + [np.full((SIZE[1], SIZE[0], 3), 128, np.uint8)] * 2)
    assert "\n" not in str(exc.value)
    with pytest.raises(BadInput, match="no images"):
        calibrate([])


def test_straight_on_views_are_bad_input(page):
    flat = _views(page, [(0, 0, r) for r in (0, 10, 20, 30, 40)])
    with pytest.raises(BadInput, match="straight on"):
        calibrate(flat)


def test_images_of_different_sizes_are_bad_input(page):
    views = _views(page, POSES[:4])
    views[1] = cv2.resize(views[1], (640, 480))
    with pytest.raises(BadInput) as err:
        calibrate(views)
    w, h = views[0].shape[1], views[0].shape[0]
    assert str(err.value) == (f"images differ in size: image 2 is 640x480, image 1 {w}x{h} "
                              "(calibrate one camera at one resolution)")
    # a phone held upright for one view, sideways for the others: said so
    views[1] = cv2.rotate(views[0], cv2.ROTATE_90_CLOCKWISE)
    with pytest.raises(BadInput) as err:
        calibrate(views)
    assert str(err.value) == (f"images differ in size: image 2 is {h}x{w}, image 1 {w}x{h} (the camera turned a "
                              "quarter turn between them: take every view with the camera held the same way)")


def test_a_picture_without_the_board_is_left_out_whatever_its_size(page):
    # a stray picture of another size sorted first (a break-test's selfie
    # before six good views) had the good views refused as differing from it
    views = _views(page, POSES[:6])
    stray = np.full((240, 320, 3), 128, np.uint8)
    left_out: list[str] = []
    cam, rms, n = calibrate([stray] + views, ["selfie.jpg"] + [f"view{i}.jpg" for i in range(len(views))],
                            left_out=left_out)
    assert left_out == ["selfie.jpg"] and n == len(views)
    assert tuple(cam.image_size) == (views[0].shape[1], views[0].shape[0])


def test_calibration_targets_in_the_repo_match_the_code():
    folder = REPO / "calibration"
    meta = json.loads((folder / "charuco_board.json").read_text())
    assert meta == json.loads(json.dumps(board_json(PRINT_PX_PER_MM)))
    img = cv2.imread(str(folder / meta["image"]), cv2.IMREAD_GRAYSCALE)
    assert img.shape == (2520, 3564)
    rendered = cv2.cvtColor(render_charuco(PRINT_PX_PER_MM), cv2.COLOR_BGR2GRAY)
    # the board itself (squares and markers) is pixel for pixel the code's
    p = PRINT_PX_PER_MM
    ox, oy = (int(round(v * p)) for v in board_origin_mm())
    bw, bh = int(round(BOARD_SQUARES[0] * SQUARE_MM * p)), int(round(BOARD_SQUARES[1] * SQUARE_MM * p))
    board_diff = (img > 127) != (rendered > 127)
    assert not board_diff[oy:oy + bh, ox:ox + bw].any()
    # the caption under it is text, whose anti-aliased edges OpenCV releases
    # draw a little differently (5.0 and 5.1 differ on 0.15 % of the page):
    # the same caption at the same place, within 0.5 % of the page
    assert np.mean(board_diff) < 0.005
    obj, _ = detect_charuco(cv2.resize(img, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA))
    assert len(obj) == 40


def test_calibrate_cli(page, tmp_path, capsys):
    paths = _write(_views(page, POSES[:8]), tmp_path)
    out = tmp_path / "cams" / "camera.json"          # a missing folder is made, as for every output file
    assert main(["calibrate", *paths, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "RMS reprojection error" in text and "over 8 of 8 views" in text and "fx 8" in text
    cam = Camera.from_json(json.loads(out.read_text()))
    assert cam.K[0, 0] == pytest.approx(820, rel=0.01) and cam.image_size == SIZE

    assert main(["calibrate", *paths[:4], "--out", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["views_used"] == 4 and info["rms_px"] < 0.3 and len(info["dist_coeffs"]) == 5

    # the same view named twice, or a copy of one, is one view: counted once
    copy = tmp_path / "copy.png"
    copy.write_bytes(Path(paths[1]).read_bytes())
    assert main(["calibrate", *paths[:4], paths[0], str(copy), "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    info = json.loads(captured.out)
    assert info["views_used"] == 4 and info["views"] == 4
    assert "2 views given twice left out" in captured.err and "copy.png" in captured.err
    # too few views once the repeats are left out: the refusal says so
    assert main(["calibrate", *paths[:3], paths[0], str(copy), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "2 views given twice counted once" in err
    assert err.startswith("companion calibrate: 3 views of the ChArUco board are too few: calibration needs 4 "
                          "or more; take 1 more photo of the ChArUco board (companion print-board)")      # the command named once
    assert main(["calibrate", *paths[:4], "--out", ""]) == 2
    assert "--out needs a file name" in capsys.readouterr().err
    # a view without the board is left out by name (a break-test saw only "over 4 of 5 views")
    empty = tmp_path / "table.png"
    cv2.imwrite(str(empty), np.full((SIZE[1], SIZE[0], 3), 128, np.uint8))
    assert main(["calibrate", *paths[:4], str(empty), "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    info = json.loads(captured.out)
    assert info["views_used"] == 4 and info["views_left_out"] == [str(empty)]
    assert captured.err == (f"companion calibrate: 1 view left out (no board with 8+ corners off one line): "
                            f"{empty}\n")


def test_calibrate_warns_of_a_high_rms_but_writes_the_file(page, tmp_path, capsys):
    # the zoom changed between the photos: no one camera fits them all
    images = []
    for i, f in enumerate((560.0, 820.0, 1150.0, 700.0, 1000.0, 620.0)):
        K = np.array([[f, 0, 470.0], [0, f, 365.0], [0, 0, 1]])
        images += _views(page, [POSES[i]], K=K, distance=420.0 * f / 820.0)
    paths = _write(images, tmp_path)
    out = tmp_path / "camera.json"
    assert main(["calibrate", *paths, "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    rms = json.loads(captured.out)["rms_px"]
    assert rms > 1.0
    assert captured.err == (f"companion calibrate: warning: the RMS reprojection error {rms:.2f} px is high (a good "
                            "calibration stays under 1 px): blurred views, a board not lying flat, or a zoom or "
                            "focus changed between the photos; the file was written, but take the views again "
                            "for a better one\n")
    assert Camera.from_json(json.loads(out.read_text())).image_size == SIZE
    # sharp views of one camera: no warning
    assert main(["calibrate", *_write(_views(page, POSES[:4]), tmp_path / "."), "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""


def test_calibrate_cli_errors_exit_2(page, tmp_path, capsys):
    paths = _write(_views(page, POSES[:3]), tmp_path)
    out = tmp_path / "camera.json"
    assert main(["calibrate", *paths, "--out", str(out)]) == 2  # too few views
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"\xff\xd8 not really")
    assert main(["calibrate", *paths, str(junk), "--out", str(out)]) == 2  # unreadable image
    assert main(["calibrate", str(tmp_path / "missing.png"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("companion calibrate: ") for line in err)
    assert "3 views of the ChArUco board are too few" in err[0] and "junk.jpg" in err[1] and "missing.png" in err[2]
    assert not out.exists()


def test_calibrate_out_may_not_overwrite_a_view_and_a_folder_is_named(tmp_path, capsys):
    from companion.cli import main
    view = tmp_path / "v0.png"
    view.write_bytes(b"not really a png")
    assert main(["calibrate", str(view), str(view), "--out", str(view)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "would overwrite" in err and view.read_bytes() == b"not really a png"
    assert main(["calibrate", str(tmp_path), "--out", str(tmp_path / "cam.json")]) == 2
    assert "it is a folder" in capsys.readouterr().err


def test_calibrate_refuses_a_pipe_or_a_device_as_a_view(tmp_path, capsys):
    # the views were hashed (to drop repeats) before they were read: a pipe
    # hung and /dev/zero filled the memory
    import os
    from companion.cli import main
    os.mkfifo(tmp_path / "pipe.png")
    os.symlink("/dev/zero", tmp_path / "zero.png")
    for view in ("pipe.png", "zero.png"):
        assert main(["calibrate", str(tmp_path / view), "--out", str(tmp_path / "cam.json")]) == 2
        err = capsys.readouterr().err
        assert err == f"companion calibrate: cannot read image {tmp_path / view}: not a regular file (a pipe or a device)\n"


def test_calibrate_out_that_cannot_be_written_is_refused_before_the_work(page, tmp_path, capsys, monkeypatch):
    import vision.calibration
    paths = _write(_views(page, POSES[:4]), tmp_path)

    def never(*a, **k):
        raise AssertionError("calibrated before checking --out")
    monkeypatch.setattr(vision.calibration, "calibrate", never)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    import os
    os.mkfifo(tmp_path / "pipe.json")
    device = "it is not a plain file (a pipe or a device); give a file name"
    for out, says in ((tmp_path / "afile" / "c.json", f"{tmp_path / 'afile'} is a file, not a folder"),
                      (tmp_path / "adir", "it is a folder"),
                      # a device or a pipe, as other commands' outputs: refused before the work too
                      (Path("/dev/full"), device), (Path("/dev/null"), device), (tmp_path / "pipe.json", device)):
        assert main(["calibrate", *paths, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err == f"companion calibrate: cannot write --out {out}: {says}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["afile", "adir", "pipe.json",
                                                                 *(Path(p).name for p in paths)])



def test_calibrate_out_ending_in_a_slash_is_a_folder_not_the_camera_file(page, tmp_path, capsys):
    """``calibrate --out cams/`` with no folder ``cams`` yet: the name says a
    folder, so it is refused as one, naming a file to give (the line said
    "it is a folder" of a name that did not exist)."""
    from companion.cli import main
    paths = _write(_views(page, POSES[:4]), tmp_path)
    out = f"{tmp_path}/cams/"
    assert main(["calibrate", *paths, "--out", out]) == 2
    assert capsys.readouterr().err == (f"companion calibrate: cannot write --out {out}: a name ending in / names "
                                       f"a folder; give the file's name (e.g. --out {out}camera.json)\n")
    assert not (tmp_path / "cams").exists()


def _level_views(page, roll_deg):
    """1280 x 720 views of a 1000 px camera (principal point (650, 350)), the
    board tilted 15 degrees towards each edge and two corners of the picture
    and turned ``roll_deg[i]`` about its centre, with sensor noise."""
    size, K = (1280, 720), np.array([[1000.0, 0, 650.0], [0, 1000.0, 350.0], [0, 0, 1]])
    rng = np.random.default_rng(0)
    out = []
    for i, (az, roll) in enumerate(zip((0, 90, 180, 270, 45, 135), roll_deg)):
        target = (148.5 + 40 * math.cos(i), 105 + 30 * math.sin(i), 0)
        rv, tv = look_at_pose(target, 500.0, 15, yaw_deg=roll, azimuth_deg=az)
        img = render_view(page, P, K, rv, tv, size).astype(np.float64)
        out.append(np.clip(img + rng.normal(0, 2.0, img.shape), 0, 255).astype(np.uint8))
    return out


def test_calibration_refuses_views_that_leave_the_focal_length_free(page, tmp_path, capsys):
    # the board tipped towards the picture's edges, its edges parallel to the
    # picture's: OpenCV's own start put the focal length at 5800 px and the
    # fit ended at fx 45734, fy 23082 px (0.9 px RMS), written as the camera
    # file; fits from other starts end anywhere from 1056 to 1348 px at the
    # same RMS: the views do not tell the focal length
    paths = _write(_level_views(page, [0] * 6), tmp_path)
    out = tmp_path / "camera.json"
    assert main(["calibrate", *paths, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the 6 views do not pin down the focal length" in err
    assert "turn the board 20-45 degrees about its centre" in err and not out.exists()
    # the same views with the board turned about its centre: the camera, within 1 %
    cam, rms, n = calibrate(_level_views(page, [20, 110, -60, 200, 30, -150]))
    assert n == 6 and rms < 0.3
    assert cam.K[0, 0] == pytest.approx(1000, rel=0.01) and cam.K[1, 1] == pytest.approx(1000, rel=0.01)
    assert cam.K[0, 2] == pytest.approx(650, abs=10) and cam.K[1, 2] == pytest.approx(350, abs=10)


def test_a_pattern_that_matched_no_file_is_named_as_such(tmp_path, capsys):
    # the shell passes "views/*.JPG" on as it stands when the files end in
    # .jpg: the line said only "no such file"
    pattern = str(tmp_path / "*.JPG")
    assert main(["calibrate", pattern, "--out", str(tmp_path / "cam.json")]) == 2
    assert capsys.readouterr().err == (f"companion calibrate: cannot read image {pattern}: no such file (a pattern "
                                       "that matched no file: check the folder and the name's case, e.g. .jpg or "
                                       ".JPG)\n")
    assert main(["calibrate", str(tmp_path / "view1.jpg"), "--out", str(tmp_path / "cam.json")]) == 2
    assert capsys.readouterr().err.endswith("view1.jpg: no such file\n")


def test_a_pattern_the_shell_passed_on_as_typed_is_expanded(page, tmp_path, capsys):
    # Windows' cmd and PowerShell pass "views\\*.jpg" on unexpanded: the line
    # said the pattern matched no file, where it matched every view
    _write(_views(page, POSES[:6]), tmp_path)
    out = tmp_path / "camera.json"
    assert main(["calibrate", str(tmp_path / "*.png"), "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["views"] == 6 and out.exists()
    # one picture asked for: the line says what the pattern matches
    assert main(["find-mat", str(tmp_path / "view*.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(
        "no such file (a pattern the shell did not expand, as Windows' cmd and PowerShell do not: it matches 6 "
        f"files, e.g. {tmp_path / 'view0.png'}; name one file)\n")
    # one file matched: that file, as a POSIX shell would give it
    assert main(["find-mat", str(tmp_path / "view0.*")]) != 2
    capsys.readouterr()
    # brackets are part of a name (phones write "IMG [1].jpg"), not a pattern
    folder = tmp_path / "views [2024]"
    folder.mkdir()
    _write(_views(page, POSES[:6]), folder)
    assert main(["calibrate", str(folder / "*.png"), "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["views"] == 6
    (tmp_path / "IMG_1.png").write_bytes((tmp_path / "view0.png").read_bytes())
    assert main(["find-mat", str(tmp_path / "IMG_[1].png")]) == 2
    assert capsys.readouterr().err.endswith("IMG_[1].png: no such file\n")


def test_an_empty_picture_file_is_named_as_empty(tmp_path, capsys):
    empty = tmp_path / "IMG_0001.jpg"
    empty.write_bytes(b"")
    assert main(["find-mat", str(empty)]) == 2
    assert capsys.readouterr().err == (f"companion find-mat: cannot read image {empty}: the file is empty (0 bytes); "
                                       "copy the photo again\n")


def test_calibrate_names_a_view_that_fits_the_others_poorly(page, tmp_path, capsys):
    # nine views of one camera and one taken zoomed in 1.6 times: the fit's
    # RMS stayed under 1 px (0.43 px: no warning) while the focal length came
    # out 746 px for 820 (9 % short); the odd view's own RMS (1.2 px against
    # the views' median 0.21 px) stands out and is named
    images = _views(page, POSES[:9])
    K = K_TRUE.copy()
    K[0, 0], K[1, 1] = 1.6 * K[0, 0], 1.6 * K[1, 1]
    images += _views(page, [POSES[9]], K=K, distance=420.0 * 1.6)
    paths = _write(images, tmp_path)
    out = tmp_path / "camera.json"
    assert main(["calibrate", *paths, "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    info = json.loads(captured.out)
    assert info["rms_px"] < 1.0 and info["views_fitting_poorly"] == [paths[9]]
    assert captured.err.count("\n") == 1 and captured.err.startswith(
        f"companion calibrate: warning: 1 view fits the others poorly (their median ")
    assert f"px): {paths[9]} (" in captured.err and captured.err.endswith(
        "a zoom or focus changed, or the board moved or bent? the file was written; calibrate again without it\n")
    assert out.exists()
    # without it: the camera, and no warning
    assert main(["calibrate", *paths[:9], "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)["views_fitting_poorly"] == []
    assert json.loads(captured.out)["camera_matrix"][0][0] == pytest.approx(820, rel=0.01)


def test_a_view_that_pulls_the_fit_off_the_picture_is_named_in_the_refusal(page, tmp_path, capsys):
    # eight views and one of another zoom (1.6 times, further away): the
    # best fit put the principal point above the picture, and the refusal
    # asked for views reaching the corners, with a camera file's "is
    # camera_matrix for another resolution?" (re-test); it names the view
    images = _views(page, POSES[:8])
    K = K_TRUE.copy()
    K[0, 0], K[1, 1] = 1.6 * K[0, 0], 1.6 * K[1, 1]
    images += _views(page, [POSES[8]], K=K, distance=650.0)
    paths = _write(images, tmp_path)
    out = tmp_path / "camera.json"
    assert main(["calibrate", *paths, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and not out.exists()
    assert captured.err.startswith("companion calibrate: implausible result (principal point (")
    assert "camera_matrix" not in captured.err and "the others poorly" in captured.err
    assert f"px): {paths[8]} (" in captured.err and "calibrate again without" in captured.err
    assert main(["calibrate", *paths[:8], "--out", str(out)]) == 0


def test_mirrored_views_are_named_as_such(page):
    # a front camera or a video call mirrors the picture: the markers do not
    # read and the line said only "no board in image 1, image 2, image 3, ..."
    mirrored = [cv2.flip(v, 1) for v in _views(page, POSES[:5])]
    with pytest.raises(BadInput) as err:
        calibrate(mirrored)
    assert str(err.value) == ("only 0 of 5 images show the 9x6 ChArUco board with 8+ corners (need 4; print the "
                              "board with companion print-board); no board in image 1, image 2, image 3, ...; the "
                              "pictures look mirrored (5 of 5 show the board once flipped left to right, as a front "
                              "camera or a video call shows it): turn off the camera's mirroring, or flip the "
                              "pictures")
    # pictures of no board at all: no such hint
    with pytest.raises(BadInput) as err:
        calibrate([np.full((SIZE[1], SIZE[0], 3), 128, np.uint8)] * 4)
    assert "mirrored" not in str(err.value)


def test_calibrate_notes_show_a_name_that_is_not_utf8_as_json_does(page, tmp_path, capsys):
    # the note naming a view left out wrote the byte FD of "blank<FD>.png" as
    # "\udcfd"; the error lines and the JSON write "\xfd"
    import os
    paths = _write(_views(page, POSES[:4]), tmp_path)
    blank = os.path.join(os.fsencode(tmp_path), b"blank\xfd.png")
    ok, buf = cv2.imencode(".png", np.full((SIZE[1], SIZE[0], 3), 128, np.uint8))
    with open(blank, "wb") as f:
        f.write(buf.tobytes())
    out = tmp_path / "cam.json"
    assert main(["calibrate", *paths, os.fsdecode(blank), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (f"companion calibrate: 1 view left out (no board with 8+ corners off one line): "
                            f"{tmp_path}/blank\\xfd.png\n")
    assert captured.out.endswith(f"wrote {out}\n")


def test_photos_of_the_mat_given_to_calibrate_are_named_as_such(tmp_path):
    # the two printed targets mixed up: the line said only "no board in ..."
    from synthetic_views import look_at_pose as pose_at, render_view as view_of
    from vision.mat import MatSpec, render_mat
    spec = MatSpec.default()
    mat = render_mat(spec)
    photos = []
    for tilt, az in ((20, 0), (25, 90), (30, 200), (20, 300)):
        rv, tv = pose_at((297, 210, 0), 650.0, tilt, azimuth_deg=az)
        photos.append(view_of(mat, spec.px_per_mm, K_TRUE, rv, tv, SIZE))
    with pytest.raises(BadInput) as err:
        calibrate(photos)
    assert str(err.value).endswith("; 4 of 4 show the mat (its markers read), not the calibration board: photograph "
                                   "the board (companion print-board) on its own, tilted 20-45 degrees")


def test_a_photo_of_the_board_where_the_mat_is_looked_for_is_named_as_such(page, tmp_path, capsys):
    # find-mat and recognize said only "no mat markers found in the image (0 of 12)"
    photo = _write(_views(page, POSES[:1]), tmp_path)[0]
    says = ("; the picture shows the ChArUco calibration board (companion print-board), not the mat: "
            "photograph the mat (companion print-mat) with the tiles on it\n")
    assert main(["find-mat", photo]) == 3
    err = capsys.readouterr().err
    assert err.startswith("companion find-mat: no mat markers found") and err.endswith(says)
    assert main(["recognize", photo, "--variant", "love", "--layout", "turtle", "--json"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(says)
    # a picture of neither: no such hint
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((SIZE[1], SIZE[0], 3), 128, np.uint8))
    assert main(["find-mat", str(blank)]) == 3 and "calibration board" not in capsys.readouterr().err


def _one_position_views(n: int = 6) -> list[np.ndarray]:
    """``n`` photos (1280 x 720, f 1000 px) of the board in one position, as a
    camera on a stand takes them: the same picture but for the sensor's
    noise (grey levels +-3)."""
    K = np.array([[1000.0, 0, 639.5], [0, 1000.0, 359.5], [0, 0, 1]])
    R = cv2.Rodrigues(np.array([0.8, -0.6, 0.0]) * math.radians(30))[0]     # tilted 30 degrees
    p = PRINT_PX_PER_MM
    mm_from_px = np.array([[1 / p, 0, 0.5 / p - 148.5], [0, 1 / p, 0.5 / p - 105], [0, 0, 1]])
    H = K @ np.column_stack([R[:, 0], R[:, 1], [50.0, 0.0, 460.0]]) @ mm_from_px
    img = cv2.warpPerspective(render_charuco(p), H, (1280, 720), flags=cv2.INTER_AREA, borderValue=(120, 130, 140))
    rng = np.random.default_rng(0)
    return [np.clip(img.astype(np.int16) + rng.integers(-3, 4, img.shape), 0, 255).astype(np.uint8)
            for _ in range(n)]


def test_photos_of_a_board_that_did_not_move_count_as_one_view(page, tmp_path, capsys):
    """Six photos of the board in one position (a camera on a stand, the
    board not moved: not copies of one file, but the same picture) were
    calibrated, fx 1219 and fy 1181 px for a 1000 px camera, the principal
    point 150 px off, at 0.27 px RMS: the file was written.  They show one
    view: refused, saying so, and nothing written; among views of other
    positions they are welcome."""
    still = _one_position_views()
    with pytest.raises(BadInput) as exc:
        calibrate(still)
    assert str(exc.value) == ("the 6 views show the board in only 1 position (photos taken without moving the board "
                              "or the camera count as one view): calibration needs 4 or more; between photos tilt "
                              "the board 20-45 degrees in different directions")
    paths = _write(still, tmp_path)
    out = tmp_path / "camera.json"
    capsys.readouterr()
    assert main(["calibrate", *paths, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "only 1 position" in err and not out.exists()
    # three positions, each photographed twice: still too few; a fourth
    # position makes them enough
    views = _views(page, POSES[:4])
    again = [np.clip(v.astype(np.int16) + 2, 0, 255).astype(np.uint8) for v in views]
    with pytest.raises(BadInput, match="the 6 views show the board in only 3 positions"):
        calibrate(views[:3] + again[:3])
    cam, rms, n = calibrate(views + again)
    assert n == 8 and rms < 0.3
    assert cam.K[0, 0] == pytest.approx(820, rel=0.02) and cam.K[1, 1] == pytest.approx(815, rel=0.02)
