"""The engine's commands as ../shared/CONTRACT.md gives them: ``layouts``,
``free``, ``deal`` and ``solve`` (formats, worked values, exit codes and
one-line errors)."""

from __future__ import annotations

import json
import os

import pytest

from companion.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, command: str) -> str:
    assert err.count("\n") == 1 and err.startswith(f"companion {command}: ") and "Traceback" not in err
    return err


# ----------------------------------------------------------------- layouts


def test_layouts_list_and_show(capsys):
    code, out, _ = run(capsys, "layouts", "list")
    assert code == 0 and "turtle" in out.split()
    code, out, _ = run(capsys, "layouts", "show", "turtle", "--json")
    doc = json.loads(out)
    assert code == 0 and set(doc) >= {"name", "slots"} and doc["name"] == "turtle"
    assert len(doc["slots"]) == 144 and [16, 7, 4] in doc["slots"]      # the Turtle's cap tile


def test_layouts_show_a_gnome_map_with_a_doctype(tmp_path, capsys):
    # a bare <!DOCTYPE mahjongg> is well-formed XML and read; an internal
    # subset (entity declarations) is refused in one line that says so
    body = ('<mahjongg>\n<map name="Pair">\n<row y="0" left="0" right="1"/>\n</map>\n</mahjongg>\n')
    dt = tmp_path / "dt.map"
    dt.write_text('<?xml version="1.0"?>\n<!DOCTYPE mahjongg>\n' + body)
    code, out, err = run(capsys, "layouts", "show", str(dt), "--json")
    assert code == 0 and err == "" and json.loads(out) == {"name": "Pair", "slots": [[0, 0, 0], [2, 0, 0]]}
    dt.write_text('<!DOCTYPE mahjongg [<!ENTITY x "y">]>\n' + body)
    code, out, err = run(capsys, "layouts", "show", str(dt), "--json")
    assert code == 2 and out == ""
    assert f"{dt}:1: a DOCTYPE with an internal subset" in one_line_error(err, "layouts")


# ----------------------------------------------------------------- free


@pytest.fixture
def row_layout(tmp_path):
    """One row of four tiles (x 0, 2, 4, 6) and a tile on top of the second,
    written with negative x to check that a file's own coordinates are kept."""
    path = tmp_path / "row.json"
    path.write_text(json.dumps({"name": "row", "slots": [[-4, 0, 0], [-2, 0, 0], [0, 0, 0], [2, 0, 0],
                                                         [-2, 0, 1]]}))
    return str(path)


def test_free_lists_the_tiles_that_cover_and_pinch(capsys, row_layout):
    code, out, _ = run(capsys, "free", "--layout", row_layout, "--json")
    by = {tuple(s["slot"]): s for s in json.loads(out)["slots"]}
    assert code == 0
    # the row's ends are free; -2,0,0 is covered by the tile above and pinched
    assert by[(-4, 0, 0)] == {"slot": [-4, 0, 0], "present": True, "free": True, "covered_by": [],
                              "left": [], "right": [[-2, 0, 0]]}
    assert by[(-2, 0, 0)]["free"] is False and by[(-2, 0, 0)]["covered_by"] == [[-2, 0, 1]]
    assert by[(0, 0, 0)] == {"slot": [0, 0, 0], "present": True, "free": False, "covered_by": [],
                             "left": [[-2, 0, 0]], "right": [[2, 0, 0]]}
    assert by[(-2, 0, 1)]["free"] is True


def test_free_after_removals_given_any_way(capsys, row_layout):
    # negative slots as values; --removed repeated; several after one --removed
    for argv in (["--removed", "-4,0,0", "-2,0,1"], ["--removed", "-4,0,0", "--removed", "-2,0,1"]):
        code, out, _ = run(capsys, "free", "--layout", row_layout, *argv, "--json")
        by = {tuple(s["slot"]): s for s in json.loads(out)["slots"]}
        assert code == 0
        assert by[(-4, 0, 0)]["present"] is False and by[(-4, 0, 0)]["free"] is None
        assert by[(-2, 0, 0)]["free"] is True and by[(-2, 0, 0)]["left"] == []
        assert by[(0, 0, 0)]["free"] is False


@pytest.mark.parametrize("removed, message", [
    (["--removed", "2,0,0", "--removed", "2,0,0"], "removed twice"),
    (["--removed", "2,0,0", "2,0,0"], "removed twice"),
    (["--removed", "8,0,0"], "8,0,0"),
])
def test_free_refuses_bad_removals(capsys, row_layout, removed, message):
    code, _, err = run(capsys, "free", "--layout", row_layout, *removed, "--json")
    assert code == 2 and message in one_line_error(err, "free")


def test_free_refuses_removed_with_no_slot(capsys, row_layout):
    # a script's empty variable, `--removed $SLOTS`, would otherwise print the
    # whole board as if nothing were meant to be removed
    with pytest.raises(SystemExit) as e:
        main(["free", "--layout", row_layout, "--removed", "--json"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "--removed: expected at least one argument" in one_line_error(err, "free")


# ----------------------------------------------------------------- deal and solve


def test_deal_then_solve_and_replay(capsys, tmp_path):
    from companion import codex
    from companion.rules import Board
    from companion.tiles import tileset

    code, out, _ = run(capsys, "deal", "--variant", "mindful", "--layout", "turtle", "--seed", "7", "--solvable",
                       "--json")
    deal = json.loads(out)
    assert code == 0 and list(deal) == ["variant", "layout", "tiles"] and len(deal["tiles"]) == 144
    path = tmp_path / "d.json"
    # another tool's file: a byte order mark, keys in another order, an extra field
    other = {"tiles": deal["tiles"], "layout": "turtle", "variant": "mindful", "by": "another tool"}
    path.write_text("\ufeff" + json.dumps(other), encoding="utf-8")
    code, out, _ = run(capsys, "solve", str(path), "--json")
    res = json.loads(out)
    assert code == 0 and list(res) == ["deal", "solvable", "moves", "ms"]
    assert res["deal"] == str(path) and res["solvable"] is True and res["ms"] >= 0
    layout = codex.builtin("turtle")
    ts = tileset("mindful")
    face = {tuple(t["slot"]): t["face"] for t in deal["tiles"]}
    board = Board(layout)
    for a, b in res["moves"]:
        i, j = layout.slot_index(a), layout.slot_index(b)
        assert board.is_free(i) and board.is_free(j) and ts.matches(face[tuple(a)], face[tuple(b)])
        board.remove(i)
        board.remove(j)
    assert board.n_present == 0


def test_a_long_search_in_the_pure_python_core_says_the_c_core_is_missing(capsys, tmp_path, monkeypatch):
    # an install without a C compiler gave no sign that the solver would be
    # hundreds of times slower (a newcomer's check, session 36)
    import companion.commands.engine as E
    import companion.solver as S
    code, out, _ = run(capsys, "deal", "--variant", "love", "--layout", "sprint-flat", "--seed", "3", "--json")
    path = tmp_path / "d.json"
    path.write_text(out)
    code, out, err = run(capsys, "solve", str(path), "--json")
    assert code == 0 and "note" not in err                        # short, or the C core: nothing said
    monkeypatch.setattr(S, "HAVE_C", False)
    monkeypatch.setattr(E, "SLOW_CORE_NOTE_S", 0.0)                # (any search counts as long here)
    code, out, err = run(capsys, "solve", str(path), "--json")
    assert code == 0 and json.loads(out)["deal"] == str(path)
    assert err == ("companion solve: note: the solver ran in pure Python, hundreds of times slower than its C "
                   "core, which was not built at install (no C compiler?): install one (e.g. apt install gcc) "
                   "and run pip install -e . again\n")


def test_ctrl_c_stops_a_search_in_the_c_core_at_once(capsys, tmp_path):
    # the C searches run without the GIL: Python saw Ctrl+C only between two
    # turns of them, 9-11 s late on this deal (a newcomer's check, session 36)
    import signal
    import subprocess
    import sys
    import time
    from companion.solver import HAVE_C
    if not HAVE_C:
        pytest.skip("the solver's C core is not built here (its pure-Python core sees Ctrl+C at once)")
    code, out, _ = run(capsys, "deal", "--variant", "love", "--layout", "turtle", "--seed", "15", "--json")
    path = tmp_path / "love15.json"                     # unwinnable; about 10 s to decide on 2 cores
    path.write_text(out)
    proc = subprocess.Popen([sys.executable, "-m", "companion", "solve", str(path), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(4.5)                                 # into a long turn of the searches (before: 9 s late)
        assert proc.poll() is None
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        waited = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130 and out == "" and err == "companion solve: interrupted\n"
    assert waited < 1.0, waited


def test_solve_an_unwinnable_deal_and_bad_files(capsys, tmp_path):
    # two stacked tiles of one face: the lower is never free while the upper stands
    stacked = tmp_path / "stack.json"
    stacked.write_text(json.dumps({"name": "stack", "slots": [[0, 0, 0], [0, 0, 1]]}))
    deal = tmp_path / "d.json"
    deal.write_text(json.dumps({"variant": "mindful", "layout": str(stacked),
                                "tiles": [{"slot": [0, 0, 0], "face": "circles-1"},
                                          {"slot": [0, 0, 1], "face": "circles-1"}]}))
    code, out, _ = run(capsys, "solve", str(deal), "--json")
    assert code == 0 and json.loads(out)["solvable"] is False and json.loads(out)["moves"] == []
    huge = tmp_path / "huge.json"
    huge.write_text('{"variant": "mindful", "layout": "turtle", "tiles": [' + "9" * 5000 + "]}")
    code, _, err = run(capsys, "solve", str(huge), "--json")
    assert code == 2 and "4300 digits" in one_line_error(err, "solve")
    code, _, err = run(capsys, "solve", str(tmp_path / "missing.json"), "--json")
    assert code == 2 and "missing.json" in one_line_error(err, "solve")


def test_solve_echoes_a_deal_name_that_is_not_utf8_as_strict_json(capsys, tmp_path):
    # "deal" is the path as given; its bytes that are not UTF-8 are written
    # as the text \xNN, not as the lone surrogate "\udcff" strict parsers refuse
    import os
    from pathlib import Path
    code, out, _ = run(capsys, "deal", "--variant", "mindful", "--layout", "turtle", "--seed", "7", "--solvable",
                       "--json")
    try:
        path = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"d\xe9al.json")))
        path.write_text(out)
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    code, out, _ = run(capsys, "solve", str(path), "--json")
    assert code == 0 and out.isascii() and "\\ud" not in out
    assert json.loads(out)["deal"] == str(tmp_path / "d") + "\\xe9al.json"


def test_print_json_refuses_numbers_json_cannot_hold(capsys):
    from companion.cli import print_json
    from companion.errors import BadInput
    with pytest.raises(BadInput, match=r"cannot write the JSON output: \[1\]\.ms is not a finite number"):
        print_json([{"ms": 1.0}, {"ms": float("inf")}])
    assert capsys.readouterr().out == ""
    print_json({"name": "caf\u00e9 \U0001f004"})           # text that is UTF-8 keeps its characters
    assert json.loads(capsys.readouterr().out) == {"name": "caf\u00e9 \U0001f004"}


def test_solve_max_seconds_marks_a_deal_left_undecided(capsys, tmp_path):
    # Love on the Turtle, seed 15: unwinnable, and proving it takes seconds
    code, out, _ = run(capsys, "deal", "--variant", "love", "--layout", "turtle", "--seed", "15", "--json")
    hard = tmp_path / "hard.json"
    hard.write_text(out)
    code, out, _ = run(capsys, "deal", "--variant", "word", "--layout", "sprint-2layer", "--seed", "48", "--json")
    easy = tmp_path / "easy.json"
    easy.write_text(out)
    code, out, err = run(capsys, "solve", str(hard), str(easy), "--json", "--max-seconds", "1")
    first, second = (json.loads(line) for line in out.splitlines())
    assert code == 0 and str(hard) in one_line_error(err, "solve")     # a note, not a failure
    assert first["solvable"] is None and first["decided"] is False and first["moves"] == []
    assert second["solvable"] is True and second["decided"] is True and len(second["moves"]) == 72
    for bad in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(SystemExit) as e:
            main(["solve", str(easy), "--max-seconds", bad])
        err = capsys.readouterr().err
        assert e.value.code == 2 and "--max-seconds" in err and len(err.strip().splitlines()) == 1


def test_deal_refuses_a_negative_seed(capsys):
    # random.Random(-1) deals exactly what random.Random(1) deals, so a
    # negative seed would silently repeat another deal
    import random
    assert random.Random(-1).random() == random.Random(1).random()
    with pytest.raises(SystemExit) as e:
        main(["deal", "--variant", "love", "--layout", "turtle", "--seed", "-1", "--json"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "0 or more" in err and len(err.strip().splitlines()) == 1
    assert main(["deal", "--variant", "love", "--layout", "turtle", "--seed", "0", "--json"]) == 0


def test_a_reader_that_goes_away_ends_the_command_quietly(monkeypatch, capsys):
    # `companion layouts show turtle --json | head -c 10`: the pipe closes,
    # the write fails with EPIPE; no message, exit 0
    import sys

    class ClosedPipe:
        def write(self, _text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["layouts", "show", "turtle", "--json"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("text", [" 5", "1_000", "\u0663", "5.0", ""])
def test_a_seed_is_written_in_ascii_digits(text, capsys):
    # int() would take " 5", "1_000" and the Arabic-Indic digit three
    with pytest.raises(SystemExit) as e:
        main(["deal", "--variant", "love", "--layout", "turtle", "--seed", text, "--json"])
    assert e.value.code == 2 and "expected a whole number" in capsys.readouterr().err


def test_a_closed_stdout_is_no_traceback(monkeypatch, capsys, tmp_path):
    # `companion layouts show turtle --json >&-`: Python starts with sys.stdout None
    import sys
    # (and JSON or an export written nowhere is refused: session 56)
    ledger = str(tmp_path / "g.db")
    assert main(["game", "start", "--ledger", ledger, "--variant", "love", "--mode", "sprint", "--layout",
                 "sprint-flat", "--players", "A,B", "--seed", "1"]) == 0
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["layouts", "list"]) == 0
    assert main(["layouts", "show", "turtle", "--json"]) == 2
    assert capsys.readouterr().err.startswith("companion layouts: standard output is closed, so the JSON has nowhere")
    assert main(["game", "export", "--ledger", ledger, "--format", "csv"]) == 2
    assert capsys.readouterr().err.startswith("companion game: standard output is closed, so the export has nowhere")
    assert main(["game", "export", "--ledger", ledger, "--format", "csv", "--out", str(tmp_path / "g.csv")]) == 0



def test_layout_files_that_would_fill_the_memory_are_refused_before_they_are_expanded(capsys, tmp_path):
    # a GNOME <row> or a mah [x0, count] of a billion tiles, and a JSON list
    # of thousands of slots: refused in one line (layouts hold 144 tiles; the
    # largest known under 400), before any slot is made
    rows = tmp_path / "h.map"
    rows.write_text('<?xml version="1.0"?><mahjongg><map name="A">'
                    '<row left="0" right="999999999" y="0" layer="0"/></map></mahjongg>')
    boards = tmp_path / "b.json"
    boards.write_text('[{"id":"1","name":"A","cat":"x","map":[[0,[[0,[[0,999999999]]]]]]}]')
    many = tmp_path / "many.json"
    many.write_text(json.dumps({"name": "many", "slots": [[2 * i, 0, 0] for i in range(3000)]}))
    for path in (rows, boards, many):
        code, out, err = run(capsys, "layouts", "show", str(path), "--json")
        assert code == 2 and "more than 2,048 slots" in err and len(err.strip().splitlines()) == 1, err


def test_a_file_of_many_layouts_is_limited_in_all(capsys, tmp_path):
    # 20,000 boards of 2,000 slots each: every board is within the limit, the
    # file is not (it would take 40 million slots)
    many = tmp_path / "many.json"
    many.write_text("[" + ",".join('{"name":"b%d","map":[[0,[[0,[[0,2000]]]]]]}' % i for i in range(20000)) + "]")
    code, out, err = run(capsys, "layouts", "show", str(many))
    assert code == 2 and "the file would hold more than 200,000 slots" in err


def test_a_layout_far_from_its_origin_shows_without_a_top_view(capsys, tmp_path):
    far = tmp_path / "far.json"
    far.write_text('{"name":"far","slots":[[0,0,0],[2147483640,2147483640,2147483640]]}')
    code, out, err = run(capsys, "layouts", "show", str(far))
    assert code == 0 and "no top view: the layout spans 2,147,483,642 x 2,147,483,642 half-tiles" in out


def test_pipes_and_devices_are_refused_as_layout_and_deal_files(capsys, tmp_path):
    import os
    fifo = tmp_path / "ff.json"
    os.mkfifo(fifo)                                   # reading it would wait for a writer for ever
    code, out, err = run(capsys, "free", "--layout", str(fifo), "--json")
    assert code == 2 and "not a regular file (a pipe or a device)" in err
    code, out, err = run(capsys, "solve", "/dev/zero", "--json")      # reading it would never end
    assert code == 2 and "cannot read deal file /dev/zero: not a regular file" in err


def test_version_and_python_dash_m(capsys):
    import subprocess
    import sys
    from importlib import metadata
    want = metadata.version("companion-referee")
    try:
        code = main(["--version"])
    except SystemExit as exc:          # argparse's version action exits
        code = exc.code
    assert code == 0 and capsys.readouterr().out.strip() == f"companion {want}"
    done = subprocess.run([sys.executable, "-m", "companion", "layouts", "list"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("turtle")


def test_deal_refuses_a_layout_that_cannot_be_played(capsys, tmp_path):
    ov = tmp_path / "ov.json"
    ov.write_text('{"name":"ov","slots":[[0,0,0],[1,0,0],[4,0,0],[6,0,0]]}')   # two tiles overlap
    code, out, err = run(capsys, "deal", "--layout", str(ov), "--variant", "love", "--seed", "1", "--json")
    assert code == 2 and "is not playable: tiles 0,0,0 and 1,0,0 overlap on layer 0" in err and out == ""
    # the file is named, not only the name it gives its layout (a file of
    # 143 tiles that calls itself "turtle" read as if the built-in were odd)
    assert err.startswith(f"companion deal: {ov}: layout 'ov' is not playable")


def test_a_layout_name_with_a_lone_surrogate_is_refused_at_load(capsys, tmp_path):
    # JSON's "\ud800" escape decodes to half a surrogate pair: no output can
    # print it, so the file is refused when it is read, for every command
    bad = tmp_path / "s.json"
    bad.write_text('{"name":"\\ud800","slots":[[0,0,0],[2,0,0]]}')
    for argv in (["layouts", "show", str(bad)], ["layouts", "show", str(bad), "--json"],
                 ["deal", "--layout", str(bad), "--variant", "love", "--seed", "1", "--json"],
                 ["free", "--layout", str(bad), "--json"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        assert "s.json:1: \"name\" holds \\ud800, half of a UTF-16 surrogate pair" in one_line_error(err, argv[0])
    boards = tmp_path / "boards.json"
    boards.write_text('[{"id": "a", "name": "\\udc00a", "map": [[0, [[0, 0]]]]}]')
    code, _, err = run(capsys, "layouts", "show", str(boards), "--map-name", "a")
    assert code == 2 and "board 0's \"name\" holds \\udc00" in one_line_error(err, "layouts")
    # a whole pair is a real character (U+1F004, the red dragon tile)
    good = tmp_path / "g.json"
    good.write_text('{"name":"\\ud83c\\udc04","slots":[[0,0,0]]}')
    code, out, _ = run(capsys, "layouts", "show", str(good), "--json")
    assert code == 0 and json.loads(out)["name"] == "\U0001F004"


def test_a_map_name_held_by_two_maps_or_boards_is_refused(capsys, tmp_path):
    gnome = tmp_path / "dup.map"
    gnome.write_text('<mahjongg><map name="A"><tile x="0" y="0"/></map><map name="A"><tile x="1" y="0"/></map>'
                     '</mahjongg>')
    code, out, err = run(capsys, "layouts", "show", str(gnome), "--map-name", "A", "--json")
    assert code == 2 and out == ""
    assert f"{gnome}: holds 2 maps named 'A', so --map-name 'A' cannot tell them apart" in one_line_error(err, "layouts")
    boards = tmp_path / "boards.json"
    boards.write_text(json.dumps([{"id": "a1", "name": "A", "map": [[0, [[0, 0]]]]},
                                  {"id": "a2", "name": "A", "map": [[0, [[0, 2]]]]}]))
    code, out, err = run(capsys, "free", "--layout", str(boards), "--map-name", "A", "--json")
    assert code == 2 and out == ""
    assert "holds 2 boards named 'A', so --map-name 'A' cannot tell them apart" in one_line_error(err, "free")


def test_the_top_view_gives_every_cell_one_character_however_tall_the_stack(capsys, tmp_path):
    # a stack of 12 printed "12" in each of its cells, shifting its rows
    tall = tmp_path / "tall.json"
    tall.write_text(json.dumps({"name": "tall", "slots": [[0, 0, z] for z in range(12)] + [[2, 0, 0], [4, 0, 0]]}))
    code, out, _ = run(capsys, "layouts", "show", str(tall))
    assert code == 0
    assert out.splitlines()[1:] == ["cc1111", "cc1111"], out


def test_a_leading_the_does_not_matter_in_a_map_name(capsys, tmp_path):
    # as in built-in names (README); a break-test's "The Turtle" on GNOME's
    # map "Turtle" and "The Fly" on mah's board "Fly" were refused
    gnome = tmp_path / "two.map"
    gnome.write_text('<mahjongg><map name="Turtle"><tile x="0" y="0"/><tile x="1" y="0"/></map>'
                     '<map name="The Ziggurat"><tile x="3" y="0"/><tile x="4" y="0"/></map></mahjongg>')
    for name, got in (("The Turtle", "Turtle"), ("turtle", "Turtle"), ("Ziggurat", "The Ziggurat")):
        code, out, err = run(capsys, "layouts", "show", str(gnome), "--map-name", name, "--json")
        assert code == 0 and json.loads(out)["name"] == got, err
    boards = tmp_path / "boards.json"
    boards.write_text(json.dumps([{"id": "f", "name": "Fly", "map": [[0, [[0, 0], [0, 2]]]]},
                                  {"id": "g", "name": "Gate", "map": [[0, [[0, 0], [0, 2]]]]}]))
    code, out, err = run(capsys, "layouts", "show", str(boards), "--map-name", "The Fly", "--json")
    assert code == 0 and json.loads(out)["name"] == "Fly", err


def test_solve_refuses_a_deal_whose_tiles_overlap_as_deal_refuses_its_layout(capsys, tmp_path):
    deal = tmp_path / "ov.json"
    deal.write_text(json.dumps({"variant": "love", "layout": "ov",
                                "tiles": [{"slot": [0, 0, 0], "face": "hearts-1"},
                                          {"slot": [1, 0, 0], "face": "hearts-1"}]}))
    code, out, err = run(capsys, "solve", str(deal), "--json")
    assert code == 2 and out == ""
    assert one_line_error(err, "solve") == (f"companion solve: {deal}: layout 'ov' is not playable: "
                                            "tiles 0,0,0 and 1,0,0 overlap on layer 0\n")
    # the same two tiles side by side are a board: solvable in one move
    deal.write_text(json.dumps({"variant": "love", "layout": "ok",
                                "tiles": [{"slot": [0, 0, 0], "face": "hearts-1"},
                                          {"slot": [2, 0, 0], "face": "hearts-1"}]}))
    code, out, _ = run(capsys, "solve", str(deal), "--json")
    assert code == 0 and json.loads(out)["moves"] == [[[0, 0, 0], [2, 0, 0]]]


def test_solve_says_plainly_what_a_file_that_is_no_deal_is(capsys, tmp_path):
    layout = tmp_path / "layout.json"
    layout.write_text('{"name": "row", "slots": [[0, 0, 0], [2, 0, 0]]}')
    code, out, err = run(capsys, "solve", str(layout), "--json")
    assert code == 2 and out == ""
    err = one_line_error(err, "solve")
    assert f"{layout} is a layout, not a deal" in err and "None" not in err
    other = tmp_path / "other.json"
    other.write_text('{"tiles": []}')
    code, _, err = run(capsys, "solve", str(other), "--json")
    assert code == 2 and f"{other} is not a deal: it has no \"variant\"" in one_line_error(err, "solve")
    code, _, err = run(capsys, "solve", str(tmp_path / "missing.json"), "--json")
    assert one_line_error(err, "solve") == f"companion solve: deal file {tmp_path / 'missing.json'} not found\n"
    code, _, err = run(capsys, "solve", str(tmp_path), "--json")
    assert code == 2 and "is a folder" in one_line_error(err, "solve")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"variant": "love", "layout": "caf\xe9"}')
    code, _, err = run(capsys, "solve", str(latin), "--json")
    assert code == 2
    err = one_line_error(err, "solve")
    assert "not UTF-8 text" in err and "UnicodeDecodeError" not in err and "codec" not in err


def test_an_os_error_no_command_words_itself_is_still_plain():
    import errno

    from companion.cli import os_error_text
    exc = FileNotFoundError(errno.ENOENT, "No such file or directory", "/proc/nope")
    assert os_error_text(exc) == "cannot read or write /proc/nope: No such file or directory"
    assert "Errno" not in os_error_text(exc) and os_error_text(OSError("odd")) == "the operating system refused it"


def test_print_mat_into_a_folder_that_cannot_be_made(capsys):
    for command in ("print-mat", "print-board"):
        code, out, err = run(capsys, command, "--out", "/proc/nope")
        assert code == 2 and out == ""
        assert one_line_error(err, command) == (f"companion {command}: cannot create the --out folder /proc/nope: "
                                                "No such file or directory\n")


def test_counts_in_the_output_take_the_right_plural(capsys, tmp_path):
    from companion.wording import count
    assert (count(1, "layer"), count(2, "layer"), count(0, "move")) == ("1 layer", "2 layers", "0 moves")
    assert count(1, "penalty", "penalties") == "1 penalty" and count(3, "penalty", "penalties") == "3 penalties"
    code, out, _ = run(capsys, "layouts", "list")
    flat = next(line for line in out.splitlines() if line.startswith("sprint-flat "))
    assert code == 0 and " 1 layer" in flat and "1 layers" not in out
    code, out, _ = run(capsys, "layouts", "show", "sprint-flat")
    assert code == 0 and out.startswith("sprint-flat: 144 tiles, 1 layer, buildable")
    # where on the mat it stands (a file's slots keep their coordinates: the
    # same Turtle from KMahjongg's file stands 2 half-tiles left of ours)
    code, out, _ = run(capsys, "layouts", "show", "turtle")
    assert out.splitlines()[0] == ("turtle: 144 tiles, 5 layers, buildable on the mat at half-tile columns 3-32 "
                                   "and rows 0-15 of its 36 x 16 grid (from its top-left cell)")
    deal = tmp_path / "d.json"
    deal.write_text(json.dumps({"variant": "love", "layout": "two",
                                "tiles": [{"slot": [0, 0, 0], "face": "hearts-1"},
                                          {"slot": [2, 0, 0], "face": "hearts-1"}]}))
    code, out, _ = run(capsys, "solve", str(deal))
    assert code == 0 and f"{deal}: solvable (1 move, " in out


def test_layouts_show_says_when_a_layout_lies_off_the_mats_grid(capsys, tmp_path):
    # break-test: a Turtle whose file put it at x 1003-1032 was shown "buildable
    # on the mat at half-tile columns 1003-1032 and rows 500-515 of its 36 x 16
    # grid", and recognize then refused it as off the mat
    from companion import codex
    slots = [list(s) for s in codex.builtin("turtle").slots]
    far = tmp_path / "far.json"
    far.write_text(json.dumps({"name": "far", "slots": [[x + 1000, y + 500, z] for x, y, z in slots]}))
    code, out, _ = run(capsys, "layouts", "show", str(far))
    lines = out.splitlines()
    assert code == 0 and lines[0] == "far: 144 tiles, 5 layers, buildable on the mat, but not where its coordinates put it"
    assert lines[1] == ("  - its slots lie at half-tile columns 1003 to 1032 and rows 500 to 515, off the mat's "
                        "36 x 16 grid (columns 0-35, rows 0-15), where recognize and referee look for them: "
                        "move its coordinates into the grid (x 0-34, y 0-14)")
    neg = tmp_path / "neg.json"
    neg.write_text(json.dumps({"name": "neg", "slots": [[x - 4, y, z] for x, y, z in slots]}))
    code, out, _ = run(capsys, "layouts", "show", str(neg))
    assert code == 0 and "columns -1 to 28 and rows 0 to 15, off the mat's" in out.splitlines()[1]
    tall = tmp_path / "tall.json"
    tall.write_text(json.dumps({"name": "tall", "slots": [[0, 0, z] for z in range(18)]}))
    code, out, _ = run(capsys, "layouts", "show", str(tall))
    assert out.splitlines()[:2] == ["tall: 18 tiles, 18 layers, buildable on the mat, but too tall for the camera",
                                    "  - it stands 18 layers high, and a camera reads layers 0-15 only "
                                    "(recognize and referee refuse it)"]
    # one on the grid, even against its right edge, is shown where it stands
    edge = tmp_path / "edge.json"
    edge.write_text(json.dumps({"name": "edge", "slots": [[x + 3, y, z] for x, y, z in slots]}))
    code, out, _ = run(capsys, "layouts", "show", str(edge))
    assert out.splitlines()[0] == ("edge: 144 tiles, 5 layers, buildable on the mat at half-tile columns 6-35 "
                                   "and rows 0-15 of its 36 x 16 grid (from its top-left cell)")


def test_solve_names_layout_files_and_bad_tiles_plainly(capsys, tmp_path):
    lay = tmp_path / "star.layout"
    lay.write_text("kmahjongg-layout-v1.0\n")
    code, _, err = run(capsys, "solve", str(lay), "--json")
    assert code == 2 and "is a layout file, not a deal" in one_line_error(err, "solve")
    boards = tmp_path / "boards.json"
    boards.write_text('[{"name": "a", "slots": [[0, 0, 0]]}]')
    code, _, err = run(capsys, "solve", str(boards), "--json")
    assert code == 2 and "holds a list, not a deal" in one_line_error(err, "solve")
    deal = tmp_path / "d.json"
    deal.write_text('{"variant": "love", "layout": "x", "tiles": [{"slot": [0, 0, true], "face": "hearts-1"}]}')
    code, _, err = run(capsys, "solve", str(deal), "--json")
    assert code == 2 and "got [0, 0, true]" in one_line_error(err, "solve")      # JSON's words, not Python's
    deal.write_text('{"variant": "love", "layout": "x", "tiles": [{"slot": [0, 0, 0], "face": null}]}')
    code, _, err = run(capsys, "solve", str(deal), "--json")
    assert code == 2 and "got null" in one_line_error(err, "solve")


def test_an_unrecognized_argument_is_named_with_its_sub_command(capsys):
    # argparse refuses extra words in the top parser's name ("companion:
    # error: ..."); every other usage error names the sub-command
    with pytest.raises(SystemExit) as exc:
        main(["layouts", "show", "turtle", "extra", "--json"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == "companion layouts show: error: unrecognized arguments: extra\n"
    with pytest.raises(SystemExit) as exc:
        main(["free", "--layout", "turtle", "--json", "--nope"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == "companion free: error: unrecognized arguments: --nope\n"


def _parser_running(func):
    """A parser of one sub-command ``x`` whose handler is ``func``."""
    import companion.cli as cli
    parser = cli._Parser(prog="companion")
    sub = parser.add_subparsers(dest="command", parser_class=cli._Parser)
    sub.add_parser("x").set_defaults(func=func)
    return parser


def test_ctrl_c_while_the_commands_load_is_one_line(capsys, monkeypatch):
    import companion.cli as cli

    def interrupted():
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["layouts", "list"]) == 130
    assert capsys.readouterr().err == "companion: interrupted\n"


def test_a_library_that_fails_to_load_is_one_line(capsys, monkeypatch):
    # (onnxruntime's loading cut by Ctrl+C raises ImportError "initialization failed")
    import companion.cli as cli

    def handler(args):
        raise ImportError("initialization failed", name="onnxruntime")
    monkeypatch.setattr(cli, "build_parser", lambda: _parser_running(handler))
    assert main(["x"]) == 2
    assert capsys.readouterr().err == ("companion x: cannot load onnxruntime: initialization failed "
                                       "(reinstall: pip install -e .)\n")


def test_an_error_line_stderr_cannot_take_still_gives_the_exit_code(monkeypatch):
    # 2>/dev/full: writing the error line raised again, and the exit code was 1
    import io
    import sys

    class Full(io.StringIO):
        def write(self, s):
            raise OSError(28, "No space left on device")
    monkeypatch.setattr(sys, "stderr", Full())
    assert main(["layouts", "show", "no-such-layout", "--json"]) == 2


def test_an_over_long_value_in_a_usage_error_is_shown_by_its_ends(capsys):
    # session 22's break-test: a 400-digit --seed was echoed in full (three times)
    seed = "-" + "9" * 400
    with pytest.raises(SystemExit) as exc:
        main(["deal", "--variant", "love", "--layout", "turtle", "--seed", seed, "--json"])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == "" and len(err.splitlines()) == 1
    assert "expected a whole number 0 or more, not -" + "9" * 159 + "...(401 characters)..." + "9" * 60 + " " in err
    assert len(err) < 450


def test_a_control_character_in_an_error_line_is_escaped(tmp_path, capsys):
    code = main(["recognize", str(tmp_path / "x\x1b[31my.png"), "--variant", "love", "--layout", "turtle", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "\x1b" not in err and "x\\x1b[31my.png" in err


def test_a_seed_over_pythons_digit_limit_is_refused_in_words(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["deal", "--variant", "love", "--layout", "turtle", "--seed", "7" * 5000, "--json"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.splitlines()) == 1
    assert "expected a whole number of at most 4300 digits, not one of 5000" in err and "seed_value" not in err


def test_a_right_to_left_override_in_an_error_line_is_escaped(tmp_path, capsys):
    assert main(["layouts", "show", str(tmp_path / "x\u202enosj.json")]) == 2
    err = capsys.readouterr().err
    assert "\u202e" not in err and "x\\u202enosj.json" in err


def test_an_over_long_path_is_counted_without_the_colon_after_it(tmp_path, capsys):
    path = str(tmp_path / ("p" * 400 + ".png"))
    assert main(["recognize", path, "--variant", "love", "--layout", "turtle", "--json"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"...({len(path)} characters)..." in err


def test_single_tiles_count_towards_the_slot_limit_too(capsys, tmp_path):
    # 3,000 GNOME <tile> elements, or a mah row of 2,000 single x cells: the
    # same 2,048 limit as rows, blocks and [x0, count] cells
    tiles = tmp_path / "t.map"
    tiles.write_text('<mahjongg><map name="A">' + "".join(
        f'<tile x="{2 * (i % 50)}" y="{2 * (i // 50)}" z="0"/>' for i in range(3000)) + "</map></mahjongg>")
    singles = tmp_path / "s.json"
    singles.write_text(json.dumps([{"name": "H", "map": [[0, [[y, list(range(0, 4000, 2))]
                                                              for y in range(0, 20, 2)]]]}]))
    for path in (tiles, singles):
        code, out, err = run(capsys, "layouts", "show", str(path), "--json")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "more than 2,048 slots (2,049 at least)" in err, err


@pytest.mark.parametrize("text, fault", [
    # 1e308 tiles doubled to half-units overflows a double: once a traceback
    ('<mahjongg><map name="A"><tile x="1e308" y="0" z="0"/></map></mahjongg>',
     "<tile> attribute x='1e308': positions must lie within +-1073741823 tiles"),
    ('<mahjongg><map name="A"><row y="0" left="0" right="1e308"/></map></mahjongg>',
     "<row> attribute right='1e308': positions must lie within"),
    ('<mahjongg><map name="A"><tile x="1e20" y="0" z="0"/><tile x="1e20" y="4" z="0"/></map></mahjongg>',
     "<tile> attribute x='1e20': positions must lie within"),
    ('<mahjongg><map name="A"><tile x="0" y="0" z="1e20"/></map></mahjongg>',
     "<tile> layer z='1e20': layers must lie within 0-2147483647"),
])
def test_gnome_positions_beyond_32_bits_are_refused_as_json_layouts_are(capsys, tmp_path, text, fault):
    # before, `layouts show`, `free` and `deal` took them and `solve` refused
    # the deal `deal` had written
    path = tmp_path / "big.map"
    path.write_text(text)
    for args in (["layouts", "show", str(path), "--json"], ["free", "--layout", str(path), "--json"],
                 ["deal", "--variant", "love", "--layout", str(path), "--seed", "0", "--json"]):
        code, out, err = run(capsys, *args)
        assert code == 2 and out == "" and err.count("\n") == 1 and fault in err, (args, err)


@pytest.mark.parametrize("board, fault", [
    ({"name": "Big", "map": [[0, [[0, [10 ** 30, 10 ** 30 + 2]]]]]},
     f"cell {10 ** 30} in row y=0 layer 0: coordinates must lie within +-2147483647"),
    ({"name": "Big", "map": [[0, [[0, [[2147483640, 10]]]]]]},
     "cell [2147483640, 10] in row y=0 layer 0: coordinates must lie within"),
    ({"name": "Big", "map": [[0, [[2 ** 31, [0, 2]]]]]}, "row y=2147483648 on layer 0: coordinates must lie"),
    ({"name": "Big", "map": [[2 ** 31, [[0, [0, 2]]]]]}, "row y=0 on layer 2147483648: coordinates must lie"),
])
def test_mah_coordinates_beyond_32_bits_are_refused(capsys, tmp_path, board, fault):
    path = tmp_path / "boards.json"
    path.write_text(json.dumps([board]))
    code, out, err = run(capsys, "free", "--layout", str(path), "--map-name", "Big", "--json")
    assert code == 2 and out == "" and err.count("\n") == 1 and fault in err, err


def test_free_refuses_tiles_that_overlap_on_a_layer(capsys, tmp_path):
    # two tiles half a tile apart on one layer: no table holds them, and
    # before, `free` called both free (neither pinches the other)
    path = tmp_path / "o.json"
    path.write_text('{"name": "x", "slots": [[0, 0, 0], [1, 0, 0]]}')
    code, out, err = run(capsys, "free", "--layout", str(path), "--json")
    assert (code, out) == (2, "")
    assert err == "companion free: layout 'x' cannot stand: tiles 0,0,0 and 1,0,0 overlap on layer 0\n"
    # an odd count still stands: free answers for it
    path.write_text('{"name": "y", "slots": [[0, 0, 0], [2, 0, 0], [4, 0, 0]]}')
    code, out, err = run(capsys, "free", "--layout", str(path), "--json")
    assert code == 0 and [s["free"] for s in json.loads(out)["slots"]] == [True, False, True]


def test_error_lines_show_a_name_byte_that_is_not_utf8_as_json_does(capsys, tmp_path):
    # "cannot read ... d\udce9al.json" showed Python's surrogate; JSON output
    # and the README write such a byte as the four characters \xNN
    from companion.cli import curbed
    assert curbed("d\udce9al.json") == "d\\xe9al.json"
    assert curbed("lone \ud800 high") == "lone \\ud800 high"         # not a file name's byte: \uXXXX
    missing = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"d\xe9al.json"))
    code, out, err = run(capsys, "solve", missing, "--json")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "d\\xe9al.json" in err and "\\udc" not in err, err


# as layout names are not: "--variant Mindful" is the same deal as "mindful";
# nor are spaces at the ends or full-width letters (a break-test, session 56:
# "--variant ' love'" was an invalid choice while "--layout 'turtle '" was
# taken, and a full-width layout name was unknown, with no suggestion)
@pytest.mark.parametrize("variant, layout", [("Mindful", "turtle"), (" MINDFUL ", "ＴＵＲＴＬＥ"),
                                             ("ｍｉｎｄｆｕｌ", "Turtle ")])
def test_variant_names_are_not_case_sensitive(capsys, variant, layout):
    code, typed, _ = run(capsys, "deal", "--variant", variant, "--layout", layout, "--seed", "3", "--json")
    assert code == 0
    code, plain, _ = run(capsys, "deal", "--variant", "mindful", "--layout", "turtle", "--seed", "3", "--json")
    assert code == 0 and typed == plain and json.loads(typed)["variant"] == "mindful"
    for bogus, shown in (("Bogus", "bogus"), ("lo ve", "lo ve")):
        with pytest.raises(SystemExit) as e:
            main(["deal", "--variant", bogus, "--layout", "turtle", "--seed", "3", "--json"])
        assert e.value.code == 2 and f"invalid choice: '{shown}'" in capsys.readouterr().err


def test_the_set_up_commands_take_variant_names_in_any_case(capsys, tmp_path):
    # (a break-test: print-tiles and the enrolment commands refused "Love"
    # where deal, game, recognize and referee took it)
    code, out, _ = run(capsys, "print-tiles", "--variant", "Love", "--out", str(tmp_path / "t"), "--no-sheets")
    assert code == 0 and json.loads(out)["variant"] == "love" and json.loads(out)["faces"] == 42
    code, upper, _ = run(capsys, "print-enrollment-sheet", "--variant", "WORD")
    code2, lower, _ = run(capsys, "print-enrollment-sheet", "--variant", "word")
    assert code == code2 == 0 and upper == lower and "--variant word" in upper


# ----------------------------------------------------------------- empty names


@pytest.mark.parametrize("argv, says", [
    (["game", "show", "--ledger", ""], "companion game: --ledger needs a file name, not an empty one"),
    (["game", "start", "--ledger=", "--variant", "love", "--mode", "sprint", "--players", "A", "--layout", "turtle",
      "--seed", "1"], "companion game: --ledger needs a file name, not an empty one"),
    (["recognize", "", "--variant", "love", "--layout", "turtle"],
     "companion recognize: IMAGE needs a file name, not an empty one"),
    (["recognize", "x.png", "--variant", "love", "--layout", "turtle", "--camera", " "],
     "companion recognize: --camera needs a file name, not an empty one"),
    (["referee", "frames", "--variant", "love", "--layout", "turtle", "--players", "A", "--events-out", "e.jsonl",
      "--ledger", ""], "companion referee: --ledger needs a file name, not an empty one"),
    (["referee", "frames", "--variant", "love", "--layout", "turtle", "--players", "A", "--events-out", "e.jsonl",
      "--evidence", ""], "companion referee: --evidence needs a folder name, not an empty one"),
    (["solve", "a.json", ""], "companion solve: DEAL.json needs a file name, not an empty one"),
    (["print-mat", "--out", ""], "companion print-mat: --out needs a folder name, not an empty one"),
    (["enroll", "--crops", "", "--labels", "l.csv", "--out", "p.npz"],
     "companion enroll: --crops needs a folder name, not an empty one"),
    # a re-test: argparse takes an option's unique beginning (--led for
    # --ledger), and --deal "" so shortened reached the command, a traceback
    (["game", "show", "--led", ""], "companion game: --ledger needs a file name, not an empty one"),
    (["game", "start", "--ledger", "x.db", "--variant", "love", "--mode", "sprint", "--players", "A", "--de", "",
      "--seed", "1"], "companion game: --deal needs a file name, not an empty one"),
    (["game", "start", "--ledger", "x.db", "--variant", "love", "--mode", "sprint", "--players", "A", "--dea=",
      "--seed", "1"], "companion game: --deal needs a file name, not an empty one"),
    (["serve", "--ledger", "l.db", "--evid", "", "--port", "0"],
     "companion serve: --evidence needs a folder name, not an empty one"),
    (["enroll", "--sheet", "a.png", " ", "--variant", "love", "--out", "p.npz"],
     "companion enroll: --sheet needs a file name, not an empty one"),
    # names a script's unset variable would drop: undo --player "" took back
    # the last move as the referee's undo
    (["game", "undo", "--ledger", "x.db", "--player", ""],
     "companion game: --player needs a player's name, not an empty one"),
    (["game", "show", "--ledger", "x.db", "--game="], "companion game: --game needs a game id, not an empty one"),
])
def test_an_empty_file_name_is_refused_by_name_before_the_command_runs(tmp_path, capsys, monkeypatch, argv, says):
    # a break-test (session 49): "" was read as the current folder ("cannot
    # open ledger : it is a folder"), and the referee's --ledger "" as no
    # ledger at all: the run exited 0 and the game's ledger was not kept
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (2, "", says + "\n")
    assert list(tmp_path.iterdir()) == []               # nothing written, no folder made


def test_solve_takes_deals_after_its_options(tmp_path, capsys):
    # `solve a.json --json b.json` (options anywhere, as most commands take
    # them) was "unrecognized arguments: b.json" (a break-test, session 52);
    # the deals keep their order, and a word like an option is still refused
    paths = []
    for seed in (1, 2):
        code, out, _ = run(capsys, "deal", "--variant", "love", "--layout", "turtle", "--seed", str(seed), "--json")
        paths.append(tmp_path / f"d{seed}.json")
        paths[-1].write_text(out)
    code, out, err = run(capsys, "solve", str(paths[0]), "--json", str(paths[1]))
    assert code == 0 and err == ""
    assert [json.loads(line)["deal"] for line in out.splitlines()] == [str(p) for p in paths]
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(paths[0]), "--json", str(paths[1]), "--nope"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"companion solve: error: unrecognized arguments: {paths[1]} --nope\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux) to fill stdout")
def test_an_output_the_disk_refuses_names_standard_output():
    # a break-test, session 56: "> /dev/full" gave "companion layouts: No
    # space left on device", not saying which write failed
    import subprocess
    import sys
    with open("/dev/full", "w") as full:
        for argv in (["layouts", "list"], ["layouts", "show", "turtle", "--json"], ["layouts", "--help"],
                     ["--version"]):
            run = subprocess.run([sys.executable, "-m", "companion", *argv], stdout=full, stderr=subprocess.PIPE,
                                 text=True, timeout=120)
            assert run.returncode == 2, argv           # (--help and --version exited 0, their text lost)
            prog = "companion" if argv == ["--version"] else "companion layouts"
            assert run.stderr == f"{prog}: cannot write to standard output: No space left on device\n", run.stderr


def test_json_for_a_closed_stdout_is_refused_and_plain_lines_are_not():
    # a break-test, session 56: "recognize --json >&-" exited 0, its JSON lost
    import subprocess
    import sys

    def closed(*argv):
        return subprocess.run([sys.executable, "-m", "companion", *argv], stderr=subprocess.PIPE, text=True,
                              timeout=120, preexec_fn=lambda: os.close(1))
    run = closed("layouts", "show", "turtle", "--json")
    assert run.returncode == 2 and run.stderr == (
        "companion layouts: standard output is closed, so the JSON has nowhere to go: run the command with "
        "stdout open, or redirected to a file\n")
    run = closed("layouts", "list")          # a listing nobody reads: lost quietly, as before
    assert run.returncode == 0 and run.stderr == ""
