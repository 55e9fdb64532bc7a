"""Tile art (vision/art.py) and ``companion print-tiles``.

Contract checks follow ../shared/CONTRACT.md ("Files", tiles.json); the
distinctness check stands in for the classifier that is trained on these faces
at 3 px/mm.
"""

from __future__ import annotations

import itertools
import json
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion import cli
from companion.errors import BadInput
from companion.tiles import CHINESE_NUMERALS, VARIANTS, tileset
from vision import art

FACE_COUNTS = {"love": 42, "candy": 42, "mindful": 42, "word": 27}


# -- render_face -----------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_face_ids_follow_tileset_order(variant):
    assert art.face_ids(variant) == [f.id for f in tileset(variant).faces]
    assert len(art.face_ids(variant)) == FACE_COUNTS[variant]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_face_renders_with_the_right_shape(variant):
    for fid in art.face_ids(variant):
        img = art.render_face(variant, fid)  # default 10 px/mm
        assert img.shape == (400, 300, 3) and img.dtype == np.uint8
        small = art.render_face(variant, fid, 3.0)
        assert small.shape == (120, 90, 3) and small.dtype == np.uint8
        assert img.std() > 10  # not a blank face


@pytest.mark.parametrize("ppm, shape", [(2.0, (80, 60, 3)), (2.5, (100, 75, 3)),
                                        (300 / 25.4, (472, 354, 3)), (12.0, (480, 360, 3))])
def test_shape_is_rounded_millimetres(ppm, shape):
    assert art.render_face("love", "hearts-5", ppm).shape == shape


def test_render_is_deterministic_and_returns_a_copy():
    a = art.render_face("mindful", "dragon-green", 4.0)
    a[:] = 0
    b = art.render_face("mindful", "dragon-green", 4.0)
    assert b.any()
    art._render_cached.cache_clear()
    art._draw_small_master.cache_clear()
    c = art.render_face("mindful", "dragon-green", 4.0)
    assert np.array_equal(b, c)


@pytest.mark.parametrize("variant", VARIANTS)
def test_faces_are_pairwise_distinct_at_3_px_per_mm_under_blur(variant):
    # Mean absolute difference of blurred 90 x 120 renders, in grey levels (0..255).
    # Measured minimum is about 7.6 (Mindful characters 3 vs 5); keep a margin.
    ims = {f: cv2.GaussianBlur(art.render_face(variant, f, 3.0), (0, 0), 1.0).astype(np.float32)
           for f in art.face_ids(variant)}
    worst = min((float(np.abs(ims[a] - ims[b]).mean()), a, b) for a, b in itertools.combinations(ims, 2))
    assert worst[0] > 4.0, worst


def test_single_copy_bonus_tiles_are_distinct():
    for variant, ids in (("love", [f"emotion-{k}" for k in range(1, 5)] + [f"passion-{k}" for k in range(1, 5)]),
                         ("candy", [f"sprinkles-{k}" for k in range(1, 5)] + [f"sugarglass-{k}" for k in range(1, 5)]),
                         ("mindful", ["season-spring", "season-summer", "season-autumn", "season-winter",
                                      "flower-plum", "flower-orchid", "flower-bamboo", "flower-chrysanthemum"])):
        imgs = [art.render_face(variant, f, 3.0).astype(np.int16) for f in ids]
        for a, b in itertools.combinations(range(len(ids)), 2):
            assert np.abs(imgs[a] - imgs[b]).mean() > 4.0, (variant, ids[a], ids[b])


def test_all_chinese_numerals_have_brush_strokes():
    for ch in CHINESE_NUMERALS + ("萬", "東", "南", "西", "北", "中", "發"):
        assert ch in art._CJK


@pytest.mark.parametrize("args", [("bogus", "hearts-1", 10.0), ("love", "hearts-10", 10.0),
                                  ("love", "A", 10.0), ("love", "hearts-1", 0.0),
                                  ("love", "hearts-1", float("nan")), ("love", "hearts-1", 1000.0),
                                  ("love", "hearts-1", "ten")])
def test_render_face_rejects_bad_input(args):
    with pytest.raises(BadInput):
        art.render_face(*args)


# -- tiles.json and files ----------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_tiles_document_follows_the_contract(variant):
    doc = art.tiles_document(variant)
    assert set(doc) == {"variant", "face_mm", "tiles"}
    assert doc["variant"] == variant and doc["face_mm"] == [30, 40]
    assert all(set(t) == {"id", "image", "copies", "match"} for t in doc["tiles"])
    assert [t["id"] for t in doc["tiles"]] == art.face_ids(variant)
    assert all(t["image"] == t["id"] + ".png" for t in doc["tiles"])
    assert sum(t["copies"] for t in doc["tiles"]) == 144
    ts = tileset(variant)
    assert all(t["match"] == ts.face(t["id"]).match for t in doc["tiles"])
    json.dumps(doc)  # plain JSON types only


def test_wild_groups_share_one_match_key():
    def groups(variant):
        out = {}
        for t in art.tiles_document(variant)["tiles"]:
            out.setdefault(t["match"], []).append(t["id"])
        return {k: v for k, v in out.items() if len(v) > 1}

    assert groups("mindful") == {
        "season": ["season-spring", "season-summer", "season-autumn", "season-winter"],
        "flower": ["flower-plum", "flower-orchid", "flower-bamboo", "flower-chrysanthemum"]}
    assert groups("love") == {"glass": [f"emotion-{k}" for k in range(1, 5)] + [f"passion-{k}" for k in range(1, 5)]}
    assert groups("candy") == {"bonus": [f"sprinkles-{k}" for k in range(1, 5)]
                               + [f"sugarglass-{k}" for k in range(1, 5)]}
    assert groups("word") == {}
    word = {t["id"]: t for t in art.tiles_document("word")["tiles"]}
    assert word["wild"]["copies"] == 4 and word["E"]["copies"] == 14 and word["E"]["match"] == "E"


def test_write_tiles_writes_faces_and_json(tmp_path):
    doc = art.write_tiles("word", tmp_path / "out", sheets=False)
    out = tmp_path / "out"
    assert json.loads((out / "tiles.json").read_text()) == doc == art.tiles_document("word")
    for t in doc["tiles"]:
        img = cv2.imread(str(out / t["image"]))
        assert img.shape == (400, 300, 3)
        assert np.array_equal(img, art.render_face("word", t["id"]))
    assert not (out / "sheets").exists()


def test_write_tiles_refuses_low_resolution_and_bad_paths(tmp_path):
    with pytest.raises(BadInput, match="10 px/mm"):
        art.write_tiles("love", tmp_path / "low", px_per_mm=5, sheets=False)
    assert not (tmp_path / "low").exists()
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    with pytest.raises(BadInput, match="cannot write"):
        art.write_tiles("love", blocker / "sub", sheets=False)
    with pytest.raises(BadInput, match="not a folder"):
        art.write_tiles("love", blocker, sheets=False)


# -- printable sheets ------------------------------------------------------------

def test_sheet_pages_hold_all_144_tiles_at_true_size():
    dpi = 100
    ppm = dpi / 25.4
    pages = art.sheet_pages("mindful", dpi)
    assert len(pages) == 4  # 36 tiles a page
    assert all(p.shape == (round(297 * ppm), round(210 * ppm), 3) and p.dtype == np.uint8 for p in pages)
    # first, middle and last slots of several pages
    _assert_faces_placed(pages, "mindful", ppm, art._SHEET_ORIGIN_MM, 36, (0, 7, 35, 36, 100, 143))


def _assert_faces_placed(pages, variant, ppm, origin_mm, per_page, ks) -> None:
    """Tile ``k`` of the set (for each of ``ks``) lies on its sheet page at
    true size: 6 a row from ``origin_mm`` (x, y), 32 x 42 mm apart (30 x 40
    mm faces, 2 mm gutters), ``per_page`` a page, pixels equal to its face."""
    tiles = tileset(variant).tiles()
    x0, y0 = origin_mm
    for k in ks:
        page, slot = divmod(k, per_page)
        r, c = divmod(slot, 6)
        px, py = round((x0 + c * 32.0) * ppm), round((y0 + r * 42.0) * ppm)
        face = art.render_face(variant, tiles[k], ppm)
        h, w = face.shape[:2]
        assert np.array_equal(pages[page][py:py + h, px:px + w], face), k


def test_sheet_pages_reject_bad_dpi():
    with pytest.raises(BadInput):
        art.sheet_pages("love", 10)
    with pytest.raises(BadInput):
        art.sheet_pages("nope", 300)
    with pytest.raises(BadInput, match="unknown paper 'legal'"):
        art.sheet_pages("love", 300, "legal")


def test_letter_sheets_hold_all_144_tiles_at_true_size_inside_the_printable_area():
    # Letter is 17.6 mm shorter than A4: 6 x 5 tiles a page, 5 pages, the
    # grid centred across (12.95 mm margins) and the scale bar 8 mm up
    dpi = 100
    ppm = dpi / 25.4
    pages = art.sheet_pages("word", dpi, "letter")
    assert len(pages) == 5
    assert all(p.shape == (round(279.4 * ppm), round(215.9 * ppm), 3) for p in pages)
    _assert_faces_placed(pages, "word", ppm, ((215.9 - 190.0) / 2, art._SHEET_ORIGIN_MM[1]), 30, (0, 29, 30, 143))
    # nothing printed within 5 mm of the paper's edge (printers leave 3-5 mm)
    edge = round(5 * ppm)
    for page in pages + art.sheet_pages("word", dpi, "a4"):
        ink = page.min(axis=2) < 250
        assert not ink[:edge].any() and not ink[-edge:].any() and not ink[:, :edge].any() and not ink[:, -edge:].any()


def test_write_sheets_png_dpi_and_pdf(tmp_path):
    dpi = 72
    res = art.write_sheets("candy", tmp_path, dpi)
    assert [p.rsplit("/", 1)[-1] for p in res["pages"]] == [f"candy-a4-{k}.png" for k in range(1, 5)]
    png = (tmp_path / "sheets" / "candy-a4-1.png").read_bytes()
    i = png.index(b"pHYs")
    assert int.from_bytes(png[i + 4:i + 8], "big") == round(dpi / 0.0254) and png[i + 12] == 1
    w, h, data = art._png_idat(png)
    assert (w, h) == (round(210 * dpi / 25.4), round(297 * dpi / 25.4))
    assert len(zlib.decompress(data)) == h * (1 + 3 * w)  # one filter byte per row, RGB
    pdf = (tmp_path / "sheets" / "candy-a4.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    assert b"/Count 4" in pdf and pdf.count(b"/Subtype /Image") == 4
    # the xref offsets point at the objects
    xref = int(pdf.rsplit(b"startxref\n", 1)[1].split()[0])
    lines = pdf[xref:].split(b"\n")
    n = int(lines[1].split()[1])
    for k in range(1, n):
        off = int(lines[2 + k].split()[0])
        assert pdf[off:].startswith(b"%d 0 obj" % k)
    # A4 in points
    assert b"/MediaBox [0 0 595.276 841.890]" in pdf


# -- companion print-tiles ---------------------------------------------------------

@pytest.fixture
def run_cli(monkeypatch, capsys):
    """Run the CLI with only this module's sub-command registered."""
    assert "companion.commands.tiles_art" in cli.COMMAND_MODULES
    monkeypatch.setattr(cli, "COMMAND_MODULES", ["companion.commands.tiles_art"])

    def run(*argv):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_print_tiles_unknown_variant_exits_2_with_one_line(run_cli, tmp_path):
    code, out, err = run_cli("print-tiles", "--variant", "bogus", "--out", str(tmp_path / "x"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "bogus" in err
    assert not (tmp_path / "x").exists()


def test_print_tiles_unwritable_path_exits_2(run_cli, tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    code, out, err = run_cli("print-tiles", "--variant", "love", "--out", str(blocker / "sub"), "--no-sheets")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "cannot write" in err


def test_print_tiles_empty_out_exits_2(run_cli):
    # an empty --out would quietly mean the current folder
    code, out, err = run_cli("print-tiles", "--variant", "love", "--out", "", "--no-sheets")
    assert code == 2 and out == "" and "--out needs a folder name" in err


def test_print_tiles_into_another_sets_folder_notes_its_files(run_cli, tmp_path):
    # a break-test, session 56: Word's tiles.json over Love's faces left 42
    # Love PNGs beside it without a word; they are the user's, so kept
    out = tmp_path / "set"
    code, _, err = run_cli("print-tiles", "--variant", "love", "--out", str(out), "--no-sheets")
    assert code == 0 and err == ""
    code, _, err = run_cli("print-tiles", "--variant", "love", "--out", str(out), "--no-sheets")
    assert code == 0 and err == ""                                  # the same set again: nothing to say
    code, _, err = run_cli("print-tiles", "--variant", "word", "--out", str(out), "--no-sheets")
    assert code == 0 and err == (f"companion print-tiles: note: {out} also holds 42 files of another tile set "
                                 "(faces or sheets of an earlier print-tiles), which its tiles.json does not list: "
                                 "print each set into a folder of its own, or remove them\n")
    assert (out / "roses-1.png").is_file() and json.loads((out / "tiles.json").read_text())["variant"] == "word"


@pytest.mark.parametrize("extra", [["--px-per-mm", "5"], ["--dpi", "20"], ["--px-per-mm", "x"]])
def test_print_tiles_bad_numbers_exit_2(run_cli, tmp_path, extra):
    code, out, err = run_cli("print-tiles", "--variant", "love", "--out", str(tmp_path / "o"), *extra)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("ppm", ["nan", "200", "0.5", "100.0000001", "9.99999999"])
def test_print_tiles_px_per_mm_outside_its_range_names_the_range(run_cli, tmp_path, ppm):
    # --help says 10..100; "nan" and "200" were refused as outside [0.5, 100]
    code, out, err = run_cli("print-tiles", "--variant", "love", "--out", str(tmp_path / "o"), "--px-per-mm", ppm)
    assert code == 2 and out == "" and not (tmp_path / "o").exists()
    assert err == (f"companion print-tiles: --px-per-mm must lie in 10..100 (tile images at 10 px/mm or more), "
                   f"got {float(ppm):.12g}\n")
    assert f"got {ppm}" in err        # as given: "100.0000001" was "got 100", the range's own end


@pytest.mark.parametrize("ppm", ["12.0000001", "3.9999999"])
def test_print_mat_px_per_mm_just_outside_its_range_is_named_as_given(capsys, tmp_path, ppm):
    from companion.cli import main
    assert main(["print-mat", "--out", str(tmp_path / "o"), "--px-per-mm", ppm]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not (tmp_path / "o").exists()
    assert err == f"companion print-mat: --px-per-mm must be between 4 and 12, got {ppm}\n"


def test_print_tiles_writes_the_set(run_cli, tmp_path):
    code, out, err = run_cli("print-tiles", "--variant", "word", "--out", str(tmp_path / "w"), "--no-sheets")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["faces"] == 27 and summary["tiles"] == 144 and summary["sheets"] == []
    doc = json.loads((tmp_path / "w" / "tiles.json").read_text())
    assert doc == art.tiles_document("word")
    assert all((tmp_path / "w" / t["image"]).is_file() for t in doc["tiles"])


def test_print_tiles_writes_all_its_files_or_none(run_cli, tmp_path, monkeypatch):
    # the sheets' PDF cannot be written (a folder of its name): refused
    # before any face is drawn, nothing written, the old tiles.json kept
    out = tmp_path / "set"
    (out / "sheets" / "love-a4.pdf").mkdir(parents=True)
    (out / "tiles.json").write_text("old")

    def never(*a, **k):
        raise AssertionError("drawn before the files were checked")
    with monkeypatch.context() as m:
        m.setattr(art, "_png_bytes", never)
        code, stdout, err = run_cli("print-tiles", "--variant", "love", "--out", str(out))
    assert code == 2 and stdout == ""
    assert err == f"companion print-tiles: cannot write {out / 'sheets' / 'love-a4.pdf'}: it is a folder\n"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["sheets", "sheets/love-a4.pdf", "tiles.json"]
    assert (out / "tiles.json").read_text() == "old"
    # a failure while drawing the sheets: no face written, the folders it made removed
    def fail(*a, **k):
        raise BadInput("drawing failed")
    with monkeypatch.context() as m:
        m.setattr(art, "sheet_pages", fail)
        code, stdout, err = run_cli("print-tiles", "--variant", "love", "--out", str(tmp_path / "new" / "set"))
    assert code == 2 and err == "companion print-tiles: drawing failed\n"
    assert not (tmp_path / "new").exists()


def test_output_files_keep_permissions_follow_links_and_leave_no_temporaries(tmp_path):
    import os
    import stat

    from companion.files import OutputFiles
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    (tmp_path / "link.json").symlink_to(real)
    with OutputFiles(tmp_path, ["link.json", "new.txt", "unused.txt"]) as files:
        files.write("link.json", b"new")
        files.write("new.txt", b"x")
        assert not (tmp_path / "new.txt").exists()          # in place only at the end
    assert (tmp_path / "link.json").is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "new.txt", "real.json"]
    # an exception in the block: nothing changed, no temporary left
    with pytest.raises(KeyboardInterrupt):
        with OutputFiles(tmp_path, ["new.txt"]) as files:
            files.write("new.txt", b"y")
            raise KeyboardInterrupt
    assert (tmp_path / "new.txt").read_bytes() == b"x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "new.txt", "real.json"]


def test_output_files_take_sigterm_as_ctrl_c_and_sweep_old_temporaries(tmp_path):
    # a break-test (session 58): `kill` (SIGTERM) or a closed terminal
    # (SIGHUP) during print-tiles left the folder it made and 48 hidden
    # temporaries, which later runs never removed
    import os
    import signal
    import time

    from companion.files import OutputFiles
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        pytest.skip("SIGTERM is handled by the test runner here")
    out = tmp_path / "new" / "set"
    with pytest.raises(KeyboardInterrupt):
        with OutputFiles(out, ["a.png", "tiles.json"]) as files:
            files.write("a.png", b"x")
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)                       # (the handler runs before this ends)
    assert not (tmp_path / "new").exists()      # the folders it made, and its temporaries, removed
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    # systemd sends SIGTERM then SIGHUP: the second, coming during the
    # clean-up, cut it short and left the temporaries; once one stop signal
    # is taken the next are let go
    from companion.stopping import _stop, stop_signals
    with stop_signals():
        with pytest.raises(KeyboardInterrupt):
            _stop(signal.SIGTERM, None)
        assert _stop(signal.SIGHUP, None) is None
    with stop_signals():                        # a new block takes a stop again
        with pytest.raises(KeyboardInterrupt):
            _stop(signal.SIGTERM, None)
    # an earlier run killed outright (SIGKILL) left temporaries: an hour old,
    # they go once the set is written; younger ones (a run writing now) and
    # other hidden files stay
    tmp_path.joinpath("a.png").write_bytes(b"old")
    old, young, other = (tmp_path / ".a.png.0a1b2c3d.tmp", tmp_path / ".a.png.99999999.tmp",
                         tmp_path / ".a.png.notmine.tmp")
    for p in (old, young, other):
        p.write_bytes(b"half")
    hour_ago = time.time() - OutputFiles.STALE_TEMP_S - 60
    os.utime(old, (hour_ago, hour_ago))
    os.utime(other, (hour_ago, hour_ago))
    with OutputFiles(tmp_path, ["a.png"]) as files:
        files.write("a.png", b"new")
    assert tmp_path.joinpath("a.png").read_bytes() == b"new"
    assert not old.exists() and young.exists() and other.exists()


def _png_px_per_mm(path) -> float | None:
    """The resolution a PNG's pHYs chunk records, px/mm (None without one)."""
    png = Path(path).read_bytes()
    i = png.find(b"pHYs")
    if i < 0:
        return None
    assert png[i + 12] == 1                          # unit: the metre
    return int.from_bytes(png[i + 4:i + 8], "big") / 1000


def test_printable_pngs_record_their_resolution(tmp_path, capsys):
    # the A4 sheets carried their dpi, but mat.png, charuco_board.png and the
    # faces carried none: printed from an image viewer "at 100 %" they came
    # out at its 72 or 96 dpi, or scaled to the page
    from companion.cli import main
    assert main(["print-mat", "--out", str(tmp_path / "mat"), "--px-per-mm", "6"]) == 0
    assert main(["print-board", "--out", str(tmp_path / "board")]) == 0
    assert main(["print-tiles", "--variant", "word", "--out", str(tmp_path / "tiles"), "--no-sheets",
                 "--px-per-mm", "12"]) == 0
    capsys.readouterr()
    assert _png_px_per_mm(tmp_path / "mat" / "mat.png") == 6.0
    assert _png_px_per_mm(tmp_path / "board" / "charuco_board.png") == 12.0
    assert _png_px_per_mm(tmp_path / "tiles" / "A.png") == 12.0
    # and they still read as the pictures they were
    assert cv2.imread(str(tmp_path / "mat" / "mat.png")).shape == (420 * 6, 594 * 6, 3)
    assert cv2.imread(str(tmp_path / "tiles" / "A.png")).shape == (40 * 12, 30 * 12, 3)
