"""``companion referee`` and ``companion demo`` as the contract runs them:
exit codes, one-line errors without tracebacks, the JSON lines, the ledger
and the evidence, the status line; recognition is replaced by a scripted
reader over tiny frames (the real pipeline is measured by
bench/bench_referee.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion import game as G
from companion.cli import main
from companion.layouts import Layout
from companion.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]

A, B, C, D, E, F, GG, H = ((0, 0, 0), (2, 0, 0), (4, 0, 0), (8, 0, 0), (0, 4, 0), (8, 4, 0),
                           (4, 4, 0), (4, 4, 1))
SLOTS = (A, B, C, D, E, F, GG, H)
FACES = ["hearts-1", "hearts-2", "hearts-1", "hearts-2", "roses-3", "roses-3", "cupid-arrow", "cupid-arrow"]
SCENES = {1: (), 2: (B,), 3: (A, C), 4: (A, C, E, F), 5: (A, C, E, F, B, D), 9: "hand"}   # code -> slots gone


def _recognition(layout: Layout, gone, hand: bool):
    from vision.reconstruct import Recognition, SlotState
    tiles = []
    for i, s in enumerate(layout.slots):
        if hand and s in (A, B):
            tiles.append(SlotState(s, True, None, 0.5, None, "occluded"))
        elif s in gone:
            tiles.append(SlotState(s, False, None, 0.97, None, "empty"))
        elif s == GG and H not in gone:
            tiles.append(SlotState(s, True, None, 0.95, False, "covered"))
        else:
            tiles.append(SlotState(s, True, FACES[i], 0.95, None, "face"))
    quads = np.array([[[4 + 6 * s[0], 4 + 5 * s[1]], [10 + 6 * s[0], 4 + 5 * s[1]],
                       [10 + 6 * s[0], 12 + 5 * s[1]], [4 + 6 * s[0], 12 + 5 * s[1]]] for s in layout.slots],
                     np.float32) / 2
    return Recognition("love", layout, tuple(tiles), quads)


@pytest.fixture
def fake_vision(monkeypatch):
    """Recognition by the scene code in each frame's first pixel; no model."""
    import vision.faces
    import vision.referee

    class NoModel:
        def __init__(self, *a, **k):
            pass

    def read_board(frame, variant, layout, camera=None, classifier=None, spec=None, face_reader=None, markers=None):
        code = int(frame[0, 0, 0])
        scene = SCENES[code]
        return _recognition(layout, () if scene == "hand" else scene, scene == "hand")

    monkeypatch.setattr(vision.faces, "TileClassifier", NoModel)
    monkeypatch.setattr(vision.referee, "read_board", read_board)


def _frame(code, hand=False):
    img = np.full((36, 64, 3), 120, np.uint8)
    img[6:30, 14:50] = 60
    if hand:
        x = 8 + 7 * (code % 3)
        img[4:34, x:x + 24] = (90, 160, 230)
    img[0, 0] = 9 if hand else code
    return img


def _recording(folder: Path, script) -> Path:
    """PNG frames (lossless: the scene code survives) from [(code, n), ...]."""
    folder.mkdir(parents=True, exist_ok=True)
    k = 0
    for code, n in script:
        for j in range(n):
            assert cv2.imwrite(str(folder / f"frame_{k:05d}.png"), _frame(code if code != 9 else j, code == 9))
            k += 1
    return folder


@pytest.fixture
def layout_file(tmp_path):
    path = tmp_path / "mini.json"
    path.write_text(json.dumps({"name": "mini", "slots": [list(s) for s in SLOTS]}))
    return path


def _args(source, layout, *extra):
    return ["referee", str(source), "--variant", "love", "--layout", str(layout), "--players", "Ada,Bo", *extra]


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize("source, message", [
    ("{tmp}/nothing", "does not exist"),
    ("{tmp}/x.mp4", "not a video file OpenCV can read"),
    ("99", "camera 99 is not present"),
    ("{tmp}/empty", "holds no image frames"),
])
def test_bad_sources_exit_2_with_one_line(tmp_path, capsys, source, message):
    (tmp_path / "x.mp4").write_text("not a video\n")
    (tmp_path / "empty").mkdir()
    code = main(_args(source.format(tmp=tmp_path), "turtle", "--quiet"))
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("companion referee: ") and message in err


@pytest.mark.parametrize("extra, message", [
    (["--players", "Ada,Ada"], "a name appears twice"),
    (["--players", "A,B,C,D,E"], "at most 4 players"),
    (["--players", "Ada;Bo"], "expected names separated by commas"),
    (["--mode", "zen-solitaire", "--variant", "mindful"], "Zen Solitaire (mindful) is for 1 player, got 2"),
    (["--mode", "nope"], "unknown mode 'nope'"),
])
def test_bad_options_exit_2_before_opening_the_source(tmp_path, capsys, extra, message):
    code = main(_args("99", "turtle", "--quiet") + extra)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err


def test_bad_layout_and_camera_file_exit_2(tmp_path, capsys, fake_vision):
    frames = _recording(tmp_path / "f", [(1, 4)])
    assert main(_args(frames, "no-such-layout", "--quiet")) == 2
    assert capsys.readouterr().err.count("\n") == 1
    (tmp_path / "cam.json").write_text("{not json")
    assert main(_args(frames, "turtle", "--quiet", "--camera", str(tmp_path / "cam.json"))) == 2
    assert "camera file" in capsys.readouterr().err
    # more slots than a set holds tiles: no game can be dealt on it (as
    # `deal` and `game start` say); a break-test's 222-slot layout was
    # refereed into penalties and items
    big = tmp_path / "big.json"
    slots = [[2 * (i % 18), 2 * (i // 18), 0] for i in range(144)] + [[0, 0, 1], [4, 0, 1]]
    big.write_text(json.dumps({"name": "big", "slots": slots}))
    assert main(_args(frames, str(big), "--quiet")) == 2
    assert capsys.readouterr().err == "companion referee: layout 'big' has 146 slots; a set holds 144 tiles\n"


@pytest.mark.parametrize("source", ["x.mp4", "99", "nothing"])
def test_bad_source_in_a_subprocess_has_no_traceback(tmp_path, source):
    (tmp_path / "x.mp4").write_text("not a video\n")
    src = source if source == "99" else str(tmp_path / source)
    proc = subprocess.run([sys.executable, "-m", "companion.cli", *_args(src, "turtle")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("companion referee: ")
    assert proc.stdout == ""


# ----------------------------------------------------------------- a whole run


def test_referee_a_folder_into_events_ledger_and_evidence(tmp_path, capsys, fake_vision, layout_file, monkeypatch):
    # still stretches of 1.2 s: judged after 0.3 s, read again 0.7 s later
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12), (9, 4), (1, 12), (9, 4), (3, 12)])
    events = tmp_path / "out" / "events.jsonl"
    ledger = tmp_path / "out" / "game.sqlite"
    code = main(_args(frames, layout_file, "--events-out", str(events), "--ledger", str(ledger), "--fps", "10"))
    assert code == 0
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    assert [x["type"] for x in lines] == ["penalty", "claim"]
    pen, claim = lines
    assert pen == {**pen, "player": "Ada", "slot": [2, 0, 0], "reason": "blocked", "frame": 10}
    assert claim["valid"] is True and {tuple(s) for s in claim["slots"]} == {A, C} and claim["player"] == "Ada"
    assert claim["frame"] == 42 and claim["t"] == pytest.approx(4.2)
    with Ledger(ledger) as led:
        evs = led.events(led.latest_game_id())
    st = G.replay(evs)
    assert [e.type for e in evs] == ["game_started", "penalty", "claim"]
    assert st.score(st.player("Ada")) == 10_000 - 100 + 200
    # evidence: paths relative to the ledger's folder, files present
    evd = evs[1].data["evidence"]
    for kind in ("before", "after", "overlay", "slots"):
        assert not Path(evd[kind]).is_absolute() and (ledger.parent / evd[kind]).is_file()
    assert "pinched between 0,0,0 (left) and 4,0,0 (right)" in evd["reason"]
    err = capsys.readouterr().err
    # the summary line (stderr is no terminal here: no live line)
    import re
    assert re.fullmatch(r"companion referee: 54 frames in \d+\.\d s \(\d+\.\d fps\); 2 events: 1 claim, 1 penalty; "
                        r"scores: Ada 10,100, Bo 10,000", err.splitlines()[-1]), err
    # a second game given the same --events-out: the first's events are kept
    # beside, numbered, and the summary line says so
    first = events.read_text()
    for k in (1, 2):
        assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 0
        assert capsys.readouterr().err.splitlines()[-1].endswith(
            f"; scores: Ada 10,100, Bo 10,000; the earlier events file was kept as events.jsonl.~{k}~")
    assert (events.parent / "events.jsonl.~1~").read_text() == first
    # in a folder that takes no new name, the earlier game's events cannot
    # be kept aside: refused before any work, the file untouched (it was
    # written over with exit 0, a break-test, session 57)
    import companion.commands.referee as R
    real = os.access
    monkeypatch.setattr(R.os, "access", lambda p, mode, *a, **kw: False if Path(p) == events.parent
                        and mode & os.W_OK else real(p, mode, *a, **kw))
    kept = events.read_text()
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 2
    assert capsys.readouterr().err == (
        f"companion referee: --events-out {events} holds an earlier game's events, which are kept aside as "
        "events.jsonl.~1~ before a new game is written, but its folder cannot be written: move that file, or give "
        "another --events-out\n")
    assert events.read_text() == kept and not (events.parent / "events.jsonl.~3~").exists()


def test_a_full_disk_leaves_the_events_file_on_a_whole_line_and_names_it(tmp_path, capsys, fake_vision,
                                                                         layout_file):
    # a break-test, session 57: on a full disk the events file ended in half
    # a JSON line, and the line said only "No space left on device".  Here
    # the process may not grow a file past 400 bytes (RLIMIT_FSIZE: the
    # write fails with EFBIG); the first event fits, the second does not
    import resource
    import signal
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12), (9, 4), (1, 12), (9, 4), (3, 12)])
    events = tmp_path / "events.jsonl"
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (400, limit[1]))
        code = main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10", "--quiet",
                          "--evidence", str(tmp_path / "ev")))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
        signal.signal(signal.SIGXFSZ, old)
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and err[-1] == (f"companion referee: cannot write to --events-out {events}: File too large (the "
                                     "events written before stay whole)")
    text = events.read_text()
    assert text.endswith("\n") and len(text) <= 400
    assert [json.loads(x)["type"] for x in text.splitlines()] == ["penalty"]


def _act_at_the_last_move(tmp_path, monkeypatch, act):
    """The penalty-then-claim recording of :func:`test_referee_a_folder_into_events_ledger_and_evidence`,
    with ``act(ledger path)`` run once, while the referee runs, before it
    reads the first frame of the last move (another program on the
    ledger: the console).  Returns (frames folder, ledger path, events path,
    the list ``act``'s results are appended to)."""
    import vision.referee
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12), (9, 4), (1, 12), (9, 4), (3, 12)])
    ledger, events = tmp_path / "game.sqlite", tmp_path / "events.jsonl"
    fake = vision.referee.read_board
    done: list = []

    def read_board(frame, *a, **kw):
        if int(frame[0, 0, 0]) == 3 and not done:
            done.append(act(ledger))
        return fake(frame, *a, **kw)

    monkeypatch.setattr(vision.referee, "read_board", read_board)
    return frames, ledger, events, done


def test_the_referee_reads_back_what_the_console_writes_while_it_runs(tmp_path, capsys, fake_vision, layout_file,
                                                                     monkeypatch):
    # the referee's console voids the camera's penalty while the run goes
    # on (another connection to the ledger, as `companion serve` has): the
    # run's later claim is judged on the game as the ledger holds it, and
    # its summary line gives the ledger's scores (before: Ada 10,100, the
    # voided penalty still counted by the camera's own copy of the game)
    from companion.session import GameSession

    def void(path):
        with Ledger(path) as led:
            pen = next(e for e in led.events(led.latest_game_id()) if e.type == "penalty")
            return GameSession(led).void(pen.id, "the hand only brushed it").ok

    frames, ledger, _, voided = _act_at_the_last_move(tmp_path, monkeypatch, void)
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--fps", "10")) == 0
    assert voided == [True]
    with Ledger(ledger) as led:
        evs = led.events(led.latest_game_id())
    assert [e.type for e in evs] == ["game_started", "penalty", "correction", "claim"]
    assert G.replay(evs).scores() == {"Ada": 10_200, "Bo": 10_000}
    assert capsys.readouterr().err.splitlines()[-1].endswith("scores: Ada 10,200, Bo 10,000")


def test_a_game_ended_on_the_console_while_the_referee_runs_gets_no_more_camera_events(
        tmp_path, capsys, fake_vision, layout_file, monkeypatch):
    # the referee ends the game on the console (abandoned) after the
    # penalty: the camera's later claim of A + C is neither written to the
    # ledger (before: a needs_referee item on the ended game for every
    # later move) nor to the events file, and a note says why
    from companion.session import GameSession

    def end(path):
        with Ledger(path) as led:
            return GameSession(led).end("abandoned").ok

    frames, ledger, events, ended = _act_at_the_last_move(tmp_path, monkeypatch, end)
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--events-out", str(events), "--fps", "10")) == 0
    assert ended == [True]
    with Ledger(ledger) as led:
        assert [e.type for e in led.events(led.latest_game_id())] == ["game_started", "penalty", "game_ended"]
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["penalty"]
    err = capsys.readouterr().err
    assert "the game was ended on the ledger (the console or another program) at frame" in err
    assert err.splitlines()[-1].endswith("scores: Ada 9,900, Bo 10,000")


def test_a_ledger_deleted_while_the_referee_runs_stops_it_with_one_line(tmp_path, capsys, fake_vision, layout_file,
                                                                         monkeypatch):
    # its later events would go into a file no longer there: the run stops
    # (exit 2, one line); the events file keeps what was found
    def delete(path):
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(path) + suffix)
            if p.exists():
                p.unlink()
        return True

    frames, ledger, events, _ = _act_at_the_last_move(tmp_path, monkeypatch, delete)
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--events-out", str(events), "--fps", "10")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "was deleted or replaced while the referee ran" in err[0] and "Traceback" not in err[0]
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["penalty"]


def test_a_ledger_locked_by_another_program_is_waited_for_then_stops_the_run(tmp_path, capsys, fake_vision,
                                                                             layout_file, monkeypatch):
    # a break-test held the ledger locked for 15 s (an SQLite browser with
    # edits not saved): the claim became a referee item "refused by the
    # rules: ... database is locked", and the next move, judged on a board
    # the ledger did not hold, an unearned penalty
    import companion.commands.referee as cmd
    from companion.ledger import LedgerUnwritable
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12), (9, 4), (1, 12), (9, 4), (3, 12)])
    real = Ledger.append
    calls = {"n": 0, "locked": 2}

    def locked(self, game_id, type_, *a, **k):
        if type_ == "claim" and calls["locked"]:
            calls["locked"] -= 1
            calls["n"] += 1
            raise LedgerUnwritable(f"cannot write to the ledger {self.path}: database is locked", busy=True)
        return real(self, game_id, type_, *a, **k)

    monkeypatch.setattr(Ledger, "append", locked)
    monkeypatch.setattr(cmd, "LEDGER_LOCK_WAIT_S", 10.0)
    ledger, events = tmp_path / "a.sqlite", tmp_path / "a.jsonl"
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--events-out", str(events), "--fps", "10")) == 0
    assert calls["n"] == 2                      # refused twice, written the third time
    with Ledger(ledger) as led:
        assert [e.type for e in led.events()] == ["game_started", "penalty", "claim"]
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["penalty", "claim"]
    # locked for longer than the wait: the run stops with one line, the
    # events file keeping what was found
    calls["locked"] = 10 ** 6
    monkeypatch.setattr(cmd, "LEDGER_LOCK_WAIT_S", 0.0)
    ledger, events = tmp_path / "b.sqlite", tmp_path / "b.jsonl"
    capsys.readouterr()
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--events-out", str(events), "--fps", "10")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"companion referee: cannot write to the ledger {ledger}: database is "
                                               "locked for over 0 s: the referee stopped at frame ")
    assert err[0].endswith(", since a move the ledger misses would have every later one judged on the wrong "
                           "board (the events file keeps what was found)")
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["penalty"]
    with Ledger(ledger) as led:
        assert [e.type for e in led.events()] == ["game_started", "penalty"]
    # locked before the first move of a new ledger: the ledger (another
    # program's too, then) stays, and no events file is said to keep anything
    calls["locked"] = 0
    monkeypatch.setattr(Ledger, "append", lambda self, g, t_, *a, **k: (_ for _ in ()).throw(
        LedgerUnwritable(f"cannot write to the ledger {self.path}: database is locked", busy=True))
        if t_ == "penalty" else real(self, g, t_, *a, **k))
    ledger, events = tmp_path / "c.sqlite", tmp_path / "c.jsonl"
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--events-out", str(events), "--fps", "10")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("would have every later one judged on the wrong board")
    assert ledger.exists() and not events.exists()


def test_a_game_already_under_way_earns_a_note_and_start_as_found_reads_it(tmp_path, capsys, fake_vision,
                                                                           layout_file):
    # a break-test started the referee on a game 10 tiles in: the empty slots
    # were taken for misreadings, and B + D (B no longer between A and C) was
    # refused as blocked with a -100 penalty, with no word why
    frames = _recording(tmp_path / "frames", [(4, 12), (9, 4), (5, 12)])
    events = tmp_path / "events.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10", "--quiet")) == 0
    assert capsys.readouterr().err.splitlines() == [
        "companion referee: note: 4 slots read empty in the first still picture (frame 0), but the game is "
        "refereed from its whole deal: if it was already under way, run again with --start-as-found"]
    first = events.read_text()
    assert "penalty" in [json.loads(x)["type"] for x in first.splitlines()]
    ledger = tmp_path / "game.sqlite"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--ledger", str(ledger), "--fps", "10",
                      "--quiet", "--start-as-found")) == 0
    # the first run's events are kept beside (a second game given the same
    # --events-out emptied the first's file, its evidence left behind)
    assert capsys.readouterr().err == ""
    assert (tmp_path / "events.jsonl.~1~").read_text() == first
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    assert [(x["type"], x["valid"], {tuple(s) for s in x["slots"]}) for x in lines] == [("claim", True, {B, D})]
    with Ledger(ledger) as led:
        st = G.replay(led.events(led.latest_game_id()))
    assert len(st.layout) == 4 and st.scores() == {"Ada": 10_100, "Bo": 10_000}     # Love 2.5: hearts 2, +100


def test_a_folder_read_at_the_assumed_rate_earns_a_note(tmp_path, capsys, fake_vision, layout_file):
    # a newcomer refereed the demo's 10-a-second frames without --fps: read
    # as 30 a second, both penalties were lost and every claim went to Ada,
    # with no word why (session 36)
    # (taken as 10 a second since session 54: FOLDER_FPS)
    frames = _recording(tmp_path / "frames", [(4, 12), (9, 4), (5, 12)])
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "a.jsonl"), "--quiet")) == 0
    note = ("companion referee: note: the frames are taken as 10 a second (a folder has no rate of its own): give "
            "--fps if they were taken at another rate")
    assert capsys.readouterr().err.splitlines()[0] == note
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "b.jsonl"), "--quiet", "--fps", "10")) == 0
    assert note not in capsys.readouterr().err


def test_a_folder_stating_its_rate_is_read_at_it_and_says_so(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(4, 12), (9, 4), (5, 12)])
    (frames / "truth.json").write_text(json.dumps({"fps": 12.5}))
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "a.jsonl"), "--quiet")) == 0
    assert capsys.readouterr().err.splitlines()[0] == (
        "companion referee: note: the frames are taken as 12.5 a second, as truth.json in the folder says: give "
        "--fps if they were taken at another rate")


def test_set_up_advice_on_the_frame_the_game_starts_from_is_a_note(tmp_path, capsys, fake_vision, layout_file,
                                                                   monkeypatch):
    # session 23's break-test: a game refereed with another tile set's
    # --variant gave no events and no word why; `recognize` advises on it
    import types
    import vision.reconstruct
    asked = []

    def recognize(frame, variant, layout, camera=None, classifier=None, spec=None, face_reader=None):
        asked.append(int(frame[0, 0, 0]))
        return types.SimpleNamespace(advice=("most faces read unsurely (8 of 8): check that --variant names "
                                             "the tile set on the table",))
    monkeypatch.setattr(vision.reconstruct, "recognize", recognize)
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    events = tmp_path / "events.jsonl"
    code = main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10"))
    err = capsys.readouterr().err.splitlines()
    assert code == 0 and asked == [1]                     # once, on the first judged frame
    assert err[0] == ("companion referee: note: most faces read unsurely (8 of 8): check that --variant names "
                      "the tile set on the table (frame 2)")
    assert len(err) == 2 and err[1].startswith("companion referee: 22 frames in ")       # then the summary line
    assert err[1].endswith("; 2 events: 1 penalty, 1 item for the referee; scores: Ada 9,900, Bo 10,000")
    assert json.loads(events.read_text().splitlines()[0])["type"] == "penalty"     # the game is refereed all the same
    # --quiet keeps the note (advice, not progress), without the summary
    code = main(_args(frames, layout_file, "--events-out", str(tmp_path / "quiet.jsonl"), "--fps", "10", "--quiet"))
    assert code == 0 and capsys.readouterr().err.splitlines() == [err[0]]


def test_faces_of_another_tile_set_stop_the_run_before_anything_is_recorded(tmp_path, capsys, fake_vision,
                                                                            layout_file, monkeypatch):
    # a break-test refereed a Mindful recording with --variant love: one note,
    # then 4 claims and a final score, exit 0: a whole game recorded wrong
    import types
    import vision.reconstruct
    monkeypatch.setattr(vision.reconstruct, "recognize", lambda frame, *a, **k: types.SimpleNamespace(
        advice=("most faces read unsurely (8 of 8) and most look like Mindful Mahjong tiles",),
        looks_like="mindful"))
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    events, ledger = tmp_path / "events.jsonl", tmp_path / "l.sqlite"
    code = main(_args(frames, layout_file, "--events-out", str(events), "--ledger", str(ledger), "--fps", "10"))
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and err == ["companion referee: the tiles look like Mindful Mahjong tiles, not Love Mahjong "
                                 "ones (most faces read unsurely): check --variant (--variant mindful?); "
                                 "nothing was recorded"]
    assert not events.exists()
    from companion.ledger import Ledger
    assert not ledger.exists() or Ledger(ledger).events() == []


def test_a_recording_without_colour_stops_the_run_before_anything_is_recorded(tmp_path, capsys, fake_vision,
                                                                               layout_file, monkeypatch):
    # a break-test's black-and-white video was refereed to the end with wrong
    # events and one note (grey copies of bench photos: 88 % of faces right)
    import types
    import vision.reconstruct
    monkeypatch.setattr(vision.reconstruct, "recognize", lambda frame, *a, **k: types.SimpleNamespace(
        advice=(vision.reconstruct.NO_COLOUR_ADVICE + ": faces are read by their colours as well as their shapes, "
                "so take it in colour",)))
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    events = tmp_path / "events.jsonl"
    code = main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10"))
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and err == ["companion referee: the recording has no colour (black and white): faces are read "
                                 "by their colours as well as their shapes (on grey pictures about one in eight is "
                                 "misread), so record in colour; nothing was recorded"]
    assert not events.exists()


def test_a_run_that_fails_leaves_only_its_error_line_even_with_advice(tmp_path, capsys, fake_vision, layout_file,
                                                                   monkeypatch):
    import types
    import vision.reconstruct
    monkeypatch.setattr(vision.reconstruct, "recognize",
                        lambda frame, *a, **k: types.SimpleNamespace(advice=("tilt the camera",)))
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    # a frame of another size stops the run (an unreadable one is skipped
    # since session 54, with a note, and the run goes on)
    import cv2
    import numpy as np
    cv2.imwrite(str(frames / "frame_00007.png"), np.zeros((10, 12, 3), np.uint8))
    code = main(_args(frames, layout_file, "--events-out", str(tmp_path / "e.jsonl"), "--fps", "10"))
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 1 and "note" not in err[0] and "frame_00007.png is 12x10 px" in err[0]


def test_an_unreadable_frame_among_many_is_skipped_with_a_note(tmp_path, capsys, fake_vision, layout_file):
    # a break-test, session 54: one frame cut short ended the run there
    # (exit 2), the rest of the game unjudged
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    whole = (frames / "frame_00007.png").read_bytes()
    (frames / "frame_00007.png").write_bytes(whole[:len(whole) // 2])
    code = main(_args(frames, layout_file, "--events-out", str(tmp_path / "e.jsonl"), "--fps", "10"))
    err = capsys.readouterr().err
    assert code == 0
    assert ("note: 1 frame of the folder could not be read (frame 7; the first, "
            f"{frames / 'frame_00007.png'}: the PNG file is cut short (no IEND chunk)) and was skipped") in err


def test_referee_with_a_tile_profile_that_is_missing(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(1, 4)])
    code = main(_args(frames, layout_file, "--quiet", "--tiles", str(tmp_path / "nope.profile")))
    assert code == 2 and "profile" in capsys.readouterr().err


def test_summary_line_counts_the_events_by_kind():
    from companion.commands.referee import summary_line
    assert summary_line(496, 4.0, {"claim": 8, "penalty": 2, "attempt": 1}, None) == (
        "companion referee: 496 frames in 4.0 s (124.0 fps); 11 events: 8 claims, 2 penalties, 1 attempt")
    assert summary_line(1, 0.5, {"needs_referee": 1, "odd": 2}, None) == (
        "companion referee: 1 frame in 0.5 s (2.0 fps); 3 events: 1 item for the referee, 2 other events")
    assert summary_line(10, 1.0, {}, None) == "companion referee: 10 frames in 1.0 s (10.0 fps); 0 events"
    # tiles re-laid at a Mindful table: a reshuffle is named (it was "1 other event")
    assert summary_line(196, 2.0, {"claim": 3, "reshuffle": 1}, None) == (
        "companion referee: 196 frames in 2.0 s (98.0 fps); 4 events: 3 claims, 1 reshuffle")


def test_status_line_text():
    from companion.commands.referee import StatusLine
    from vision.referee import RefereeStatus
    st = RefereeStatus(frame=49, state="hand or motion in view", tiles_on_board=140,
                       last_event="claim Ada 1,0,0 + 3,0,0 (frame 40)")
    text = StatusLine(None, total=100).text(st, 62.5)
    assert text.startswith("[##########----------]  50% frame 50/100 |  62.5 fps | hand or motion in view")
    assert "140 tiles on the board" in text and "last: claim Ada" in text
    assert StatusLine(None).text(st, 30).startswith("frame 50 |")


# ----------------------------------------------------------------- demo


@pytest.fixture
def tiny_demo(monkeypatch, tmp_path, fake_vision, layout_file):
    import companion.commands.demo as demo
    frames = _recording(tmp_path / "cache" / "rec", [(1, 6), (9, 4), (3, 12)])
    monkeypatch.setattr(demo, "ensure_recording", lambda folder, log=None: (frames, {"events": []}))
    monkeypatch.setattr(demo, "DEMO_LAYOUT", str(layout_file))
    return tmp_path / "cache"


def test_a_damaged_demo_cache_is_rendered_again(tmp_path, monkeypatch):
    # one frame cut short made every later demo fail (exit 2, no hint), and
    # deleted frames went unnoticed (485 frames refereed of 496)
    import io
    import companion.commands.demo as demo
    import vision.synth.recording as recording
    calls = []

    def fake_write(frames, *a, **k):
        frames.mkdir(parents=True, exist_ok=True)
        for i in range(3):
            cv2.imwrite(str(frames / f"frame_{i:05d}.jpg"), np.zeros((8, 8, 3), np.uint8))
        calls.append(1)
        return {"frames": 3, "events": []}
    monkeypatch.setattr(recording, "write_recording", fake_write)
    log = io.StringIO()
    frames, _ = demo.ensure_recording(tmp_path, log)
    demo.ensure_recording(tmp_path, log)
    assert len(calls) == 1 and "is damaged" not in log.getvalue()       # whole: kept
    cut = frames / "frame_00001.jpg"
    cut.write_bytes(cut.read_bytes()[:-10])
    demo.ensure_recording(tmp_path, log)
    assert len(calls) == 2 and "the cached recording is damaged" in log.getvalue()
    (frames / "frame_00002.jpg").unlink()
    demo.ensure_recording(tmp_path, log)
    assert len(calls) == 3 and len(list(frames.iterdir())) == 3


def test_demo_no_serve_runs_to_the_end(tiny_demo, capsys, tmp_path):
    events = tmp_path / "demo.jsonl"
    code = main(["demo", "--no-serve", "--cache", str(tiny_demo), "--events-out", str(events)])
    out = capsys.readouterr().out
    assert code == 0
    assert "demo: refereed 22 frames" in out and "Ada 10,200" in out
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["claim"]
    # --quiet: no summary line either (as its --help says)
    code = main(["demo", "--no-serve", "--cache", str(tiny_demo), "--quiet", "--events-out", str(events)])
    assert code == 0 and capsys.readouterr().out == ""
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["claim"]
    assert (tiny_demo / "demo-ledger.sqlite").is_file()


def test_demo_refuses_events_out_among_its_own_frames(tiny_demo, capsys):
    # the recording's frames are what the demo reads: an --events-out naming
    # one of them (or a new .png among them) is refused before anything is
    # written, so the cache is not spoiled for the next run
    import companion.commands.demo as demo
    frames, _ = demo.ensure_recording(tiny_demo)
    first = sorted(frames.iterdir())[0]
    before = first.read_bytes()
    for out in (first, frames / "new.png"):
        code = main(["demo", "--no-serve", "--cache", str(tiny_demo), "--quiet", "--events-out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "lies in the demo's cache folder" in err
    assert first.read_bytes() == before and not (frames / "new.png").exists()
    # nor anywhere else in the cache (its ledger's SQLite files included), nor empty
    for out in (tiny_demo / "demo-ledger.sqlite-wal", tiny_demo / "notes.jsonl", ""):
        assert main(["demo", "--no-serve", "--cache", str(tiny_demo), "--quiet", "--events-out", str(out)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 3
    assert main(["demo", "--no-serve", "--cache", str(tiny_demo), "--quiet"]) == 0


def test_demo_serves_the_scoreboard_with_a_qr_code(tiny_demo, capsys, monkeypatch):
    import companion.commands.demo as demo
    monkeypatch.setattr(demo, "Paced", lambda source: source)

    def stop(_seconds):
        raise KeyboardInterrupt
    monkeypatch.setattr(demo.time, "sleep", stop)
    code = main(["demo", "--cache", str(tiny_demo), "--quiet", "--host", "127.0.0.1", "--port", "0"])
    out = capsys.readouterr().out
    assert code == 0
    assert "players, open: http://127.0.0.1:" in out and "referee console" in out
    assert "\u2580" in out or "\u2584" in out or "\u2588" in out          # the QR code's blocks
    assert "the scoreboard stays up" in out


def test_one_ctrl_c_during_the_recording_stops_the_demo(tiny_demo, capsys, monkeypatch):
    # the Ctrl+C lands in the referee's frame loop (frame 5 of 22): the referee
    # judges what it saw and the demo ends, without waiting for a second one
    import companion.commands.demo as demo

    class Interrupted:
        def __init__(self, source):
            self.source, self.fps, self.length = source, source.fps, source.length
            self.kind, self.name = source.kind, source.name

        def frames(self):
            for n, item in enumerate(self.source.frames()):
                if n == 5:
                    raise KeyboardInterrupt
                yield item

    monkeypatch.setattr(demo, "Paced", Interrupted)

    def never(_seconds):
        raise AssertionError("the demo waited for a second Ctrl+C")
    monkeypatch.setattr(demo.time, "sleep", never)
    code = main(["demo", "--cache", str(tiny_demo), "--host", "127.0.0.1", "--port", "0"])
    out = capsys.readouterr().out
    assert code == 0
    assert "demo: refereed 5 frames" in out
    assert "the scoreboard stays up" not in out


def test_demo_bad_port(capsys):
    assert main(["demo", "--port", "70000"]) == 2
    assert "bad --port" in capsys.readouterr().err


def test_demo_refuses_an_unwritable_events_out_or_a_busy_port_before_any_work(tmp_path, capsys, monkeypatch):
    # as referee and calibrate do: the outputs and the address are checked
    # before the recording is rendered (a minute) or refereed
    import socket

    import companion.commands.demo as demo

    def no_work(folder, log=None):
        raise AssertionError("the demo started its work")
    monkeypatch.setattr(demo, "ensure_recording", no_work)
    cache = tmp_path / "cache"
    (tmp_path / "afile").write_text("x")
    for out, why in ((tmp_path / "afile" / "ev.jsonl", f"{tmp_path / 'afile'} is a file, not a folder"),
                     (tmp_path / "afile" / "sub" / "ev.jsonl", f"{tmp_path / 'afile'} is a file, not a folder"),
                     (tmp_path / "adir", "it is a folder")):
        (tmp_path / "adir").mkdir(exist_ok=True)
        code = main(["demo", "--no-serve", "--cache", str(cache), "--quiet", "--events-out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and err == f"companion demo: cannot write --events-out {out}: {why}\n"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["demo", "--cache", str(cache), "--quiet", "--host", "127.0.0.1", "--port", str(port),
                     "--events-out", str(tmp_path / "ev.jsonl")])
        err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"companion demo: cannot serve on 127.0.0.1:{port}: ")
    assert err.count("\n") == 1
    assert not cache.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile"]


def test_demo_refuses_events_out_in_a_read_only_folder_at_once(tmp_path, unprivileged):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    cache = tmp_path / "cache"
    try:
        for out, why in ((folder / "ev.jsonl", "Permission denied"),
                         (folder / "sub" / "ev.jsonl", f"the folder {folder / 'sub'} cannot be made in {folder} "
                                                       "(not writable)")):
            proc = subprocess.run([*unprivileged, sys.executable, "-m", "companion", "demo", "--no-serve", "--quiet",
                                   "--cache", str(cache), "--events-out", str(out)], cwd=ROOT,
                                  env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                                  timeout=120)
            assert proc.returncode == 2 and proc.stdout == ""
            assert proc.stderr == f"companion demo: cannot write --events-out {out}: {why}\n"
            assert not cache.exists() and list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


def test_scripted_games_follow_the_turns():
    """The bundled game's script: claims, pinched tiles put back, a pair put
    back, a nudge and a pause; players by the engine's turn order."""
    from companion.codex import builtin
    from companion.commands.demo import script_game, true_events
    from vision.synth.recording import Claim, Nudge, Pause, PutBack
    layout = builtin("turtle")
    faces, moves = script_game("love", layout, 7001, claims=4)
    kinds = [type(m).__name__ for m in moves]
    assert kinds.count("Claim") == 4 and kinds.count("Nudge") == 1 and kinds.count("Pause") == 1
    assert sum(isinstance(m, PutBack) and len(m.slots) == 1 for m in moves) == 2
    assert sum(isinstance(m, PutBack) and len(m.slots) == 2 for m in moves) == 1
    moves, evs = true_events("love", "sprint", layout, faces, moves)
    st = G.replay(evs)
    assert st.player("Ada").matches + st.player("Bo").matches == 4
    assert st.player("Ada").penalties + st.player("Bo").penalties == 2
    assert st.player("Ada").invalid + st.player("Bo").invalid == 1
    assert not st.needs
    del Claim, Nudge, Pause


def test_scripted_word_games_spell_words_of_free_tiles():
    """``--words`` of the referee bench: Word Mahjong scripts also spell
    words of 3-5 tiles, each tile free when its word is spelled (Rule 2),
    recorded by the engine as words."""
    from companion import wordlist
    from companion.codex import builtin
    from companion.commands.demo import script_game, true_events
    from companion.errors import BadInput
    from companion.rules import Board
    from vision.synth.recording import Claim, SpellWord
    layout = builtin("turtle")
    faces, moves = script_game("word", layout, 7703, claims=4, words=3)
    spelled = [m for m in moves if isinstance(m, SpellWord)]
    assert len(spelled) == 3 and all(3 <= len(m.slots) <= 5 for m in spelled)
    board = Board(layout)
    for m in moves:
        if isinstance(m, (Claim, SpellWord)):
            idx = [layout.slot_index(s) for s in m.slots]
            assert all(board.is_free(i) for i in idx)
            if isinstance(m, SpellWord):
                assert m.word.lower() in wordlist.words() and len(m.word) == len(idx)
            for i in sorted(idx, key=lambda i: -layout.slots[i].z):
                board.remove(i)
    moves, evs = true_events("word", "zen-archives", layout, faces, moves)
    st = G.replay(evs)
    assert sorted(st.player("Ada").words + st.player("Bo").words) == sorted(m.word for m in spelled)
    with pytest.raises(BadInput, match="Word Mahjong only"):
        script_game("love", layout, 7001, claims=4, words=1)


# ----------------------------------------------------------------- outputs that would destroy inputs


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("companion referee: ") and "Traceback" not in err
    return err


def test_events_out_naming_an_input_is_refused_and_the_input_kept(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(1, 4)])
    cam = tmp_path / "cam.json"
    cam.write_text('{"camera_matrix": [[500, 0, 32], [0, 500, 18], [0, 0, 1]], "dist_coeffs": [0, 0, 0, 0, 0], '
                   '"image_size": [64, 36]}')
    before = {p: p.read_bytes() for p in (layout_file, cam, frames / "frame_00001.png")}
    for target, extra in ((layout_file, []), (cam, ["--camera", str(cam)]), (frames / "frame_00001.png", [])):
        assert main(_args(frames, layout_file, "--quiet", "--events-out", str(target), *extra)) == 2
        assert "being read" in _one_line(capsys)
    # another spelling of the layout file, and a new frame-like file among the frames
    other = str(layout_file.parent / "." / layout_file.name)
    assert main(_args(frames, layout_file, "--quiet", "--events-out", other)) == 2
    assert "would overwrite" in _one_line(capsys)
    assert main(_args(frames, layout_file, "--quiet", "--events-out", str(frames / "new.png"))) == 2
    assert "lies among the frames" in _one_line(capsys)
    assert not (frames / "new.png").exists()
    assert {p: p.read_bytes() for p in before} == before


def test_events_out_and_ledger_must_differ_and_one_is_needed(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(1, 4)])
    same = str(tmp_path / "out.x")
    assert main(_args(frames, layout_file, "--quiet", "--events-out", same, "--ledger", same)) == 2
    assert "both name" in _one_line(capsys)
    # nor SQLite's files beside the ledger (existing or not): events written
    # there would corrupt the ledger or be deleted by SQLite
    for side in ("-wal", "-shm", "-journal"):
        assert main(_args(frames, layout_file, "--quiet", "--events-out", same + side, "--ledger", same)) == 2
        assert "the ledger's own file" in _one_line(capsys)
    assert not (tmp_path / "out.x").exists()
    assert main(_args(frames, layout_file, "--quiet")) == 2
    assert "nothing would be kept" in _one_line(capsys)
    assert main(_args(frames, layout_file, "--quiet", "--events-out", "")) == 2
    assert "--events-out needs a file name, not an empty one" in _one_line(capsys)
    # an empty --ledger beside an events file: refused, not run without a ledger
    # (a break-test, session 49: exit 0, and the game's ledger not kept)
    assert main(_args(frames, layout_file, "--quiet", "--events-out", str(tmp_path / "e.jsonl"), "--ledger", "")) == 2
    assert "--ledger needs a file name, not an empty one" in _one_line(capsys)
    assert not (tmp_path / "e.jsonl").exists()
    (tmp_path / "a.txt").write_text("x")
    assert main(_args(frames, layout_file, "--quiet", "--events-out", str(tmp_path / "a.txt" / "e.jsonl"))) == 2
    assert "a.txt is a file, not a folder" in _one_line(capsys)
    assert main(_args(frames, layout_file, "--quiet", "--events-out", str(tmp_path / "e.jsonl"),
                      "--evidence", str(frames))) == 2
    assert "folder of frames being read" in _one_line(capsys)


def test_a_failed_run_leaves_no_empty_folders_made_for_its_outputs(tmp_path, capsys, monkeypatch, fake_vision,
                                                                  layout_file):
    """Folders an output's name asked for (made before the run, so that a
    path that cannot be made is told at once) are removed again, when still
    empty, by a run that fails or is stopped before writing there: a
    break-test's video without the mat left ``new/folder/`` behind, empty.
    A folder that was there stays; one that got the events stays."""
    import vision.referee
    import vision.sources
    from companion.errors import MatNotFound
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 14), (9, 4), (4, 20)])
    read, opener = vision.referee.read_board, vision.sources.open_source

    def no_mat(*a, **k):
        raise MatNotFound("only 0 of 12 mat markers found (need 2)")
    monkeypatch.setattr(vision.referee, "read_board", no_mat)
    (tmp_path / "was").mkdir()
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "new" / "deeper" / "e.jsonl"),
                      "--ledger", str(tmp_path / "was" / "led" / "l.sqlite"), "--fps", "10")) == 3
    _one_line(capsys)
    assert not (tmp_path / "new").exists() and (tmp_path / "was").is_dir() and not list((tmp_path / "was").iterdir())
    monkeypatch.setattr(vision.referee, "read_board", read)
    _stop_at(monkeypatch, 20)         # stopped before any event
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "new" / "deeper" / "e.jsonl"),
                      "--fps", "10")) == 130
    _one_line(capsys)
    assert not (tmp_path / "new").exists()
    monkeypatch.setattr(vision.sources, "open_source", opener)
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "new" / "deeper" / "e.jsonl"),
                      "--fps", "10", "--quiet")) == 0
    assert len((tmp_path / "new" / "deeper" / "e.jsonl").read_text().splitlines()) == 2


def test_a_failed_run_leaves_no_empty_folders_made_on_the_way_to_its_evidence(tmp_path, capsys, monkeypatch,
                                                                             fake_vision, layout_file):
    # --evidence naming a folder two levels down, below a new ledger's folder
    # too: a run that found no mat left the evidence folder's parent behind
    # (re-test: --evidence new/e/f left new/e/)
    import vision.referee
    from companion.errors import MatNotFound
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 14), (9, 4), (4, 20)])

    def no_mat(*a, **k):
        raise MatNotFound("only 0 of 12 mat markers found (need 2)")
    monkeypatch.setattr(vision.referee, "read_board", no_mat)
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "out" / "e.jsonl"),
                      "--evidence", str(tmp_path / "ev" / "game" / "shots"), "--fps", "10")) == 3
    _one_line(capsys)
    assert not (tmp_path / "out").exists() and not (tmp_path / "ev").exists()
    assert main(_args(frames, layout_file, "--ledger", str(tmp_path / "new" / "l.sqlite"),
                      "--evidence", str(tmp_path / "new" / "ev" / "shots"), "--fps", "10")) == 3
    _one_line(capsys)
    assert not (tmp_path / "new").exists()


def test_no_mat_in_any_frame_exits_3_and_creates_no_events_file(tmp_path, capsys, monkeypatch, fake_vision,
                                                                 layout_file):
    import vision.referee
    from companion.errors import MatNotFound

    def no_mat(*a, **k):
        raise MatNotFound("only 0 of 12 mat markers found (need 2)")
    monkeypatch.setattr(vision.referee, "read_board", no_mat)
    frames = _recording(tmp_path / "frames", [(1, 12)])
    events = tmp_path / "e.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 3
    err = _one_line(capsys)
    assert "the mat was not found in any of the 12 frames" in err
    assert not events.exists()                                   # no empty file left behind
    assert not (tmp_path / "e-evidence").exists()                # nor an empty evidence folder
    # nor a new ledger with no event in it; a ledger that was there stays
    ledger = tmp_path / "new.sqlite"
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--fps", "10")) == 3
    _one_line(capsys)
    assert not ledger.exists() and not list(tmp_path.glob("new.sqlite*")) and not (tmp_path / "new-evidence").exists()
    Ledger(ledger).close()
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--fps", "10")) == 3
    _one_line(capsys)
    assert ledger.is_file()
    # an events file from an earlier run is not emptied by a run that saw nothing
    events.write_text('{"type":"claim","frame":57}\n')
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 3
    _one_line(capsys)
    assert events.read_text() == '{"type":"claim","frame":57}\n'


def test_a_bad_frame_mid_run_is_skipped_and_the_game_goes_on(tmp_path, capsys, fake_vision, layout_file):
    # until session 54 a frame that could not be read ended the run there
    # (exit 2), the events before it kept and the rest of the game lost
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12), (1, 2)])
    full = tmp_path / "full.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(full), "--fps", "10", "--quiet")) == 0
    capsys.readouterr()
    (frames / "frame_00015.png").write_bytes(b"not a png")
    events = tmp_path / "e.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10", "--quiet")) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1 frame of the folder could not be read (frame 15; the first, " in err[0] \
        and "frame_00015.png: not an image OpenCV can decode) and was skipped" in err[0]

    def strip(path):      # (the evidence folders differ by name: e-evidence, full-evidence)
        return [{k: v for k, v in json.loads(x).items() if k != "evidence"} for x in path.read_text().splitlines()]
    # frame 15 was one of the still frames of a board: the same game, the
    # frames after it keeping their numbers
    assert strip(events) == strip(full) and len(strip(full)) >= 2


def test_a_source_never_still_is_bad_input_not_a_missing_mat(tmp_path, capsys, fake_vision, layout_file):
    one = tmp_path / "one.png"
    assert cv2.imwrite(str(one), _frame(1))
    assert main(_args(one, layout_file, "--events-out", str(tmp_path / "e.jsonl"))) == 2
    assert "never still in its 1 frame, so nothing was judged" in _one_line(capsys)


def test_a_short_source_without_the_mat_exits_3(tmp_path, capsys, fake_vision, layout_file, monkeypatch):
    # too short to be still, so nothing was judged: its last frame says
    # whether the mat is there at all (exit 3, as for a photo without it)
    import vision.referee
    from companion.errors import MatNotFound

    def no_mat(*a, **k):
        raise MatNotFound("only 0 of 12 mat markers found (need 2)")
    monkeypatch.setattr(vision.referee, "read_board", no_mat)
    one = tmp_path / "one.png"
    assert cv2.imwrite(str(one), _frame(1))
    events = tmp_path / "e.jsonl"
    events.write_text("kept\n")
    assert main(_args(one, layout_file, "--events-out", str(events))) == 3
    assert "the mat was not found in" in _one_line(capsys)
    assert events.read_text() == "kept\n"


def test_the_bundled_demo_is_refereed_as_its_truth(tmp_path, capsys):
    """The README's main job, end to end: the bundled game rendered afresh
    (about 15 s) and refereed with the real models; every event of the
    recording's truth, and nothing else (a break-test found a fresh render
    refereed wrongly where a stale cache hid it)."""
    events = tmp_path / "demo.jsonl"
    code = main(["demo", "--no-serve", "--cache", str(tmp_path / "cache"), "--events-out", str(events)])
    assert code == 0
    truth = json.loads(next((tmp_path / "cache").glob("demo-v*/truth.json")).read_text())["events"]
    got = [json.loads(x) for x in events.read_text().splitlines()]

    def key(e):
        return e["type"], e["player"], frozenset(tuple(s) for s in (e.get("slots") or [e.get("slot")]))
    assert [key(e) for e in got] == [key(e) for e in truth]
    assert "Ada 10,100" in capsys.readouterr().out


def test_a_rendered_word_table_is_refereed_as_words_and_a_pair(tmp_path, capsys):
    """Word Mahjong end to end with the real models: a recording (rendered
    afresh, about 10 s) in which TREE, then a pair of Ks, then STONE leave the
    board (2.1 Rule 2: free letter tiles spelling a word, or a pair).  Before
    session 33 the camera referee knew pairs only: TREE became an E + E claim
    and an invalid T + R claim, and STONE was refused as a hand over the
    board (five tiles changed at once)."""
    from companion.codex import builtin
    from companion.rules import Board
    from vision.synth import Claim, SceneSpec, SpellWord, deal_faces, write_recording
    layout = builtin("sprint-flat")
    rng = np.random.default_rng(1)
    faces = list(deal_faces("word", len(layout), rng))
    free = Board(layout).free_indices()
    rng.shuffle(free)
    taken: list[int] = []

    def spell(word):            # the word's letters moved onto free slots (swapped with others)
        out = []
        for ch in word:
            at = free.pop(0)
            src = next(j for j in range(len(faces)) if faces[j] == ch and j not in taken and j != at)
            faces[at], faces[src] = faces[src], faces[at]
            taken.append(at)
            out.append(layout.slots[at])
        return tuple(out)
    tree, kk, stone = spell("TREE"), spell("KK"), spell("STONE")
    moves = [SpellWord(tree, "TREE"), Claim(kk), SpellWord(stone, "STONE")]
    truth = write_recording(tmp_path / "rec", "word", layout, moves, rng, 10.0,
                            spec=SceneSpec("word", layout, faces=tuple(faces), removed=()))
    events = tmp_path / "e.jsonl"
    code = main(["referee", str(tmp_path / "rec"), "--variant", "word", "--layout", "sprint-flat",
                 "--players", "A", "--mode", "scholars-path", "--fps", "10", "--events-out", str(events)])
    assert code == 0
    got = [json.loads(x) for x in events.read_text().splitlines()]

    def key(e):
        return e["type"], e.get("word"), frozenset(tuple(s) for s in e["slots"])
    assert [key(e) for e in got] == [key(e) for e in truth["events"]]
    assert [e["word"] for e in got if e["type"] == "word"] == ["TREE", "STONE"]
    # Word 2.7: +200 a word, +200 for each vowel tile of STONE (5 letters); a pair scores nothing
    assert "3 events: 1 claim, 2 words; scores: A 800" in capsys.readouterr().err


def test_a_bad_first_frame_creates_no_events_file_and_keeps_an_old_one(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(1, 6)])
    for k in range(6):        # (one bad frame is skipped since session 54: none readable fails)
        (frames / f"frame_{k:05d}.png").write_bytes(b"not a png")
    events = tmp_path / "e.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 2
    assert "frame_00000.png" in _one_line(capsys)
    assert not events.exists() and not (tmp_path / "e-evidence").exists()
    events.write_text('{"type":"claim","frame":57}\n')
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 2
    _one_line(capsys)
    assert events.read_text() == '{"type":"claim","frame":57}\n'


def test_a_run_without_events_that_ends_normally_writes_an_empty_file(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(1, 12)])
    events = tmp_path / "e.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 0
    assert events.is_file() and events.read_text() == ""


def test_an_unwritable_events_file_is_refused_before_the_run(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(1, 6)])
    (tmp_path / "dir.jsonl").mkdir()
    assert main(_args(frames, layout_file, "--quiet", "--events-out", str(tmp_path / "dir.jsonl"))) == 2
    assert "is a folder" in _one_line(capsys)


# ----------------------------------------------------------------- a video cut short


def _video(path: Path, script, declared: int | None = None) -> Path:
    """An MJPG .avi from [(code, n), ...], the scene code in an 8 x 8 block
    (as JPEG keeps it; read by ``jpeg_codes``).  With ``declared``, the
    video is written that many frames long (the last scene held) and cut
    right after the script's frames: its container still declares
    ``declared`` frames, as a copy that stopped."""
    import vision.sources   # noqa: F401  (quiets FFmpeg before the writer starts it)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 36))
    if not writer.isOpened():
        pytest.skip("no MJPG encoder in this OpenCV build")
    bulk = (np.random.default_rng(1).random((6, 14, 3)) * 255).astype(np.uint8)   # the same in every frame
    n = sum(k for _, k in script)
    if declared is not None:
        script = list(script) + [(script[-1][0], declared - n)]
    for code, k in script:
        for j in range(k):
            img = _frame(code if code != 9 else j, code == 9)
            img[:8, :8] = 20 * img[0, 0, 0]                 # the scene code, as a block JPEG keeps
            img[30:, 50:] = bulk
            writer.write(img)
    writer.release()
    if declared is not None:
        path.write_bytes(_first_frames(path.read_bytes(), n))
    return path


def _first_frames(avi: bytes, n: int) -> bytes:
    """An AVI file's bytes up to its ``n``-th frame's end (its RIFF header,
    and so its declared frame count, kept): the ``00dc`` chunks of its
    ``movi`` list, one per frame."""
    pos = avi.index(b"movi") + 4
    for _ in range(n):
        assert avi[pos:pos + 4] == b"00dc"
        size = int.from_bytes(avi[pos + 4:pos + 8], "little")
        pos += 8 + size + (size & 1)
    return avi[:pos]


@pytest.fixture
def jpeg_codes(monkeypatch, fake_vision):
    """``fake_vision`` reading the scene code from the 8 x 8 block of a
    video frame (JPEG changes single pixels)."""
    import vision.referee
    inner = vision.referee.read_board

    def read_board(frame, *a, **k):
        frame = frame.copy()
        frame[0, 0, 0] = int(round(float(frame[:8, :8, 0].mean()) / 20))
        return inner(frame, *a, **k)
    monkeypatch.setattr(vision.referee, "read_board", read_board)


def test_a_video_cut_short_keeps_its_events_and_exits_2(tmp_path, capfd, jpeg_codes, layout_file):
    """A recording cut short (a copy that stopped) is not a game that ended:
    the events found before the cut stay written and the command exits 2
    with one line saying so, without FFmpeg's messages."""
    path = _video(tmp_path / "game.avi", [(1, 6), (9, 4), (2, 12), (9, 4), (1, 12), (9, 4), (3, 12)] + [(3, 1)] * 60)
    events = tmp_path / "e.jsonl"
    assert main(_args(path, layout_file, "--events-out", str(events))) == 0        # the whole video
    whole = [json.loads(x)["type"] for x in events.read_text().splitlines()]
    assert whole == ["penalty", "claim"]
    capfd.readouterr()
    data = path.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[:int(len(data) * 0.6)])       # past the penalty (frame 10), before the end (frame 114)
    events.unlink()
    assert main(_args(cut, layout_file, "--events-out", str(events))) == 2
    err = _one_line(capfd)
    assert "cut.avi is cut short: it ended after" in err and "of the 114 frames its container declares" in err
    assert "mjpeg" not in err and "[" not in err
    # the claim (A and C, gone in the last scene) is still waiting for its
    # confirmation at the cut: decided as at the end of a whole video (it was lost)
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["penalty", "claim"]


def test_a_claim_waiting_at_the_cut_is_judged_as_at_the_end_of_a_whole_video(tmp_path, capfd, jpeg_codes,
                                                                             layout_file):
    """A pair that left before the cut, waiting for its confirmation when
    the video stops, is judged as the end of the same frames as a whole
    video judges it (it was lost, and an old events file left as it was)."""
    script = [(1, 12), (9, 4), (3, 20)]                  # A and C leave; the picture is still from frame 16
    whole = _video(tmp_path / "whole.avi", script)
    cut = _video(tmp_path / "cut.avi", script, declared=120)
    assert cv2.VideoCapture(str(cut)).get(cv2.CAP_PROP_FRAME_COUNT) == 120
    events = tmp_path / "e.jsonl"
    assert main(_args(whole, layout_file, "--events-out", str(events), "--quiet")) == 0
    expected = [json.loads(x) for x in events.read_text().splitlines()]
    assert [(e["type"], e["slots"], e["valid"]) for e in expected] == [("claim", [list(A), list(C)], True)]
    capfd.readouterr()
    old = tmp_path / "old.jsonl"
    old.write_text('{"type":"claim","frame":57}\n')
    assert main(_args(cut, layout_file, "--events-out", str(old))) == 2
    err = _one_line(capfd)
    assert "cut.avi is cut short: it ended after 36 of the 120 frames its container declares" in err
    got = [json.loads(x) for x in old.read_text().splitlines()]
    assert [{k: v for k, v in e.items() if k != "evidence"} for e in got] == \
        [{k: v for k, v in e.items() if k != "evidence"} for e in expected]
    assert (tmp_path / "old-evidence").is_dir()


def test_names_that_are_not_utf8(tmp_path, capsys, fake_vision, layout_file):
    """An --events-out whose name holds bytes that are not UTF-8: its
    evidence is written (cv2.imwrite crashed the process on such a folder)
    and its paths are echoed in strict JSON (\\xff, not "\\udcff"); a video
    of such a name, which OpenCV cannot open (it crashed), is refused."""
    import os
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 12)])
    try:
        events = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"e\xff.jsonl")))
        events.write_text("")
        video = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"game\xff.avi")))
        video.write_bytes(b"RIFF")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10", "--quiet")) == 0
    text = events.read_bytes()
    assert text.isascii() and b"\\ud" not in text
    (claim,) = [json.loads(x) for x in text.splitlines()]
    assert claim["evidence"]["before"] == "e\\xff-evidence/0001-claim-f16/before.jpg"
    assert (tmp_path / os.fsdecode(b"e\xff-evidence") / "0001-claim-f16" / "before.jpg").stat().st_size > 0
    capsys.readouterr()
    assert main(_args(video, layout_file, "--events-out", str(tmp_path / "v.jsonl"))) == 2
    assert "its name holds bytes that are not UTF-8, which OpenCV cannot open" in _one_line(capsys)


# ----------------------------------------------------------------- Ctrl+C


class _StopAt:
    """A source whose ``frames()`` raises KeyboardInterrupt (a Ctrl+C)
    when frame ``at`` is due."""

    def __init__(self, source, at: int) -> None:
        self.source, self.at = source, at
        self.fps, self.length, self.kind, self.name = source.fps, source.length, source.kind, source.name

    def frames(self):
        for n, item in enumerate(self.source.frames()):
            if n == self.at:
                raise KeyboardInterrupt
            yield item


def _stop_at(monkeypatch, at: int, kind: str | None = None) -> None:
    import vision.sources
    opener = vision.sources.open_source

    def open_source(*a, **k):
        src = _StopAt(opener(*a, **k), at)
        src.kind = kind or src.kind
        return src
    monkeypatch.setattr(vision.sources, "open_source", open_source)


def test_ctrl_c_on_a_folder_keeps_the_events_and_exits_130(tmp_path, capsys, monkeypatch, fake_vision,
                                                           layout_file):
    """Ctrl+C before a folder of frames ends: the events found so far stay
    written, and the command says it was interrupted (exit 130, as every
    command), not a summary line of a game that ended.  The move in
    progress is left undecided: the events are the start of what the whole
    run writes (a break-test's stop in the middle of a pair put back once
    recorded an invalid claim and an item the whole run never wrote)."""
    # A + C leave (a claim once E + F leave too), then E + F, seen gone in
    # two still moments (a claim)
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 30), (9, 4), (4, 30), (9, 4), (4, 30)])
    events = tmp_path / "e.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10", "--quiet")) == 0
    whole = [json.loads(x) for x in events.read_text().splitlines()]
    assert [(e["type"], e["slots"]) for e in whole] == [("claim", [list(A), list(C)]), ("claim", [list(E), list(F)])]
    events.write_text('{"type":"claim","frame":57}\n')
    _stop_at(monkeypatch, 80)
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 130
    err = _one_line(capsys)
    got = [json.loads(x) for x in events.read_text().splitlines()]
    assert err == (f"companion referee: interrupted after 80 of the 114 frames: the {len(got)} event"
                   f"{'s' if len(got) > 1 else ''} found so far {'are' if len(got) > 1 else 'is'} written to "
                   f"{events} (the earlier events file was kept as e.jsonl.~1~)\n")
    assert (tmp_path / "e.jsonl.~1~").read_text() == '{"type":"claim","frame":57}\n'      # (the old file, aside)
    def bare(evs):                        # (evidence is numbered on from what its folder holds)
        return [{k: v for k, v in e.items() if k != "evidence"} for e in evs]
    assert bare(got) == bare(whole[:1])   # E + F, off the board, not yet confirmed: undecided
    # stopped while the first pair was off the board, not yet confirmed:
    # nothing decided, and an old events file is left as it was
    events.write_text('{"type":"claim","frame":57}\n')
    _stop_at(monkeypatch, 40)
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 130
    assert _one_line(capsys) == "companion referee: interrupted after 40 of the 114 frames, before any event was found\n"
    assert events.read_text() == '{"type":"claim","frame":57}\n'


def test_ctrl_c_ends_a_live_game_on_a_camera_normally(tmp_path, capsys, monkeypatch, fake_vision, layout_file):
    import companion.commands.referee as referee
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 30)])
    _stop_at(monkeypatch, 40, kind="camera")
    events = tmp_path / "e.jsonl"
    monkeypatch.setattr(referee.StatusLine, "done", lambda self, st, fps, summary=None: print(f"summary: {st.state}"))
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 0
    assert capsys.readouterr().out == "summary: stopped\n"
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["claim"]


def test_ctrl_c_before_any_event_leaves_no_new_ledger_with_only_its_start(tmp_path, capsys, monkeypatch,
                                                                           fake_vision, layout_file):
    """Ctrl+C after the game started (its ``game_started`` written) and
    before any event: the line says no event was found, and the new ledger
    is removed as an empty one is (a break-test's Ctrl+C 18 frames into a
    video left one holding a game of no move).  A ledger that was there
    keeps its games, and a run that found an event keeps its new ledger."""
    import vision.sources
    opener = vision.sources.open_source
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 14), (9, 4), (4, 20)])
    ledger = tmp_path / "new.sqlite"

    def stopped_at(at: int) -> str:
        monkeypatch.setattr(vision.sources, "open_source", opener)
        _stop_at(monkeypatch, at)
        assert main(_args(frames, layout_file, "--ledger", str(ledger), "--fps", "10")) == 130
        return _one_line(capsys)
    # the pair A + C is off the board, undecided
    assert stopped_at(20) == "companion referee: interrupted after 20 of the 54 frames, before any event was found\n"
    assert not list(tmp_path.glob("new.sqlite*")) and not (tmp_path / "new-evidence").exists()
    assert "the 1 event found so far is written to" in stopped_at(50)      # A + C claimed
    with Ledger(ledger) as led:
        assert [e.type for e in led.events()] == ["game_started", "claim"]
    stopped_at(20)                    # a ledger that was there keeps its games, the new one's start too
    with Ledger(ledger) as led:
        assert [e.type for e in led.events()] == ["game_started", "claim", "game_started"]


def test_ctrl_c_while_an_event_is_written_reaches_both_outputs(tmp_path, capsys, monkeypatch, fake_vision,
                                                                layout_file):
    """A real SIGINT arriving while the ledger writes the first claim (SQLite
    takes milliseconds to commit): the claim still reaches the events file,
    and the closing line counts it.  The Ctrl+C used to land between the
    ledger's write and the events file's, leaving a claim in the ledger that
    the events file and the line ("before any event was found") lacked."""
    import signal
    import companion.ledger
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not Python's default handler here")
    write = companion.ledger.Ledger.append

    def append(self, game_id, type, *a, **k):
        ev = write(self, game_id, type, *a, **k)
        if type == "claim":
            os.kill(os.getpid(), signal.SIGINT)    # (Python raises it at its next instruction)
        return ev
    monkeypatch.setattr(companion.ledger.Ledger, "append", append)
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 14), (9, 4), (4, 20)])
    events, ledger = tmp_path / "e.jsonl", tmp_path / "l.sqlite"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--ledger", str(ledger), "--fps", "10")) == 130
    assert " of the 54 frames: the 1 event found so far is written to " in _one_line(capsys)
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["claim"]
    with Ledger(ledger) as led:
        assert [e.type for e in led.events()] == ["game_started", "claim"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler       # (put back)


def test_two_referees_starting_games_on_one_ledger_get_one_id_each(tmp_path, capsys, monkeypatch, fake_vision,
                                                                   layout_file):
    """Another process starts a game on the ledger after this referee opened
    it and before its game starts (two tables' referees started together on
    one ledger): each game gets its own id.  The id was picked when the
    ledger was opened, and the second referee failed at its first still
    picture: "game 'game-1' already exists" (exit 2)."""
    import vision.sources
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 14), (9, 4), (4, 20)])
    ledger = tmp_path / "l.sqlite"
    opener = vision.sources.open_source

    class OtherTableFirst:
        def __init__(self, source):
            self.source = source
            self.fps, self.length, self.kind, self.name = source.fps, source.length, source.kind, source.name

        def frames(self):
            with Ledger(ledger) as led:           # the other table's referee: its game starts first
                led.append(None, "game_started", {"variant": "love", "players": ["Cy", "Di"]}, t=0.0)
            yield from self.source.frames()
    monkeypatch.setattr(vision.sources, "open_source", lambda *a, **k: OtherTableFirst(opener(*a, **k)))
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--fps", "10", "--quiet")) == 0
    with Ledger(ledger) as led:
        got = [(e.game_id, e.type) for e in led.events()]
    assert got[0] == ("game-1", "game_started")
    assert got[1:] == [("game-2", "game_started"), ("game-2", "claim"), ("game-2", "claim")]
    # a new ledger the other table wrote to is kept by a run stopped before any event
    ledger.unlink()
    monkeypatch.setattr(vision.sources, "open_source", lambda *a, **k: _StopAt(OtherTableFirst(opener(*a, **k)), 20))
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--fps", "10")) == 130
    assert "before any event was found" in _one_line(capsys)
    with Ledger(ledger) as led:
        assert [(e.game_id, e.type) for e in led.events()] == [("game-1", "game_started"), ("game-2", "game_started")]


class _Camera:
    """A stand-in for ``cv2.VideoCapture`` on a camera: the frames of a
    folder, then (as an unplugged USB camera) failed reads for ever;
    ``drop`` lists frame numbers whose read fails once (a dropped frame)."""

    def __init__(self, folder: Path, drop=()) -> None:
        self.frames = [cv2.imread(str(p)) for p in sorted(folder.iterdir())]
        self.drop, self.reads = set(drop), 0

    def read(self):
        self.reads += 1
        if self.reads - 1 in self.drop:
            return False, None
        return (True, self.frames.pop(0)) if self.frames else (False, None)

    def release(self):
        pass


def _camera_of(monkeypatch, cap) -> None:
    """``open_source`` gives camera 7 reading through ``cap``.  A stand-in
    gives its frames at once, not one per 1/fps s as a camera does, so its
    queue is made long enough that none is skipped as stale
    (:meth:`vision.sources.FrameSource.frames` drops the oldest waiting
    frame of a live camera when the referee falls behind)."""
    import functools
    import vision.sources

    def open_source(spec, fps=None):
        src = vision.sources.FrameSource("camera", "7", None, fps or 10.0, _cap=cap)
        src.frames = functools.partial(vision.sources.FrameSource.frames, src, prefetch=100_000)
        return src
    monkeypatch.setattr(vision.sources, "open_source", open_source)


def test_a_camera_that_stops_giving_frames_fails_in_one_line_keeping_its_events(tmp_path, capsys, monkeypatch,
                                                                                fake_vision, layout_file):
    """A camera unplugged mid-game (its reads fail from then on) is no end of
    the game: a live game ends with Ctrl+C.  The events found stay written
    (the claim waiting for its confirmation decided, as at a video's cut),
    and the command fails with one line saying so (exit 2), where it
    ended as a finished game with its summary line (exit 0).  A frame
    dropped once is read past."""
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 14), (9, 4), (4, 20)])
    events = tmp_path / "e.jsonl"
    _camera_of(monkeypatch, _Camera(frames, drop=(5, 40)))
    assert main(_args("7", layout_file, "--events-out", str(events), "--fps", "10")) == 2
    assert _one_line(capsys) == ("companion referee: camera 7 stopped giving frames after 54 frames (unplugged, "
                                 "or taken by another program?)\n")
    got = [json.loads(x) for x in events.read_text().splitlines()]
    assert [(e["type"], e["slots"]) for e in got] == [("claim", [list(A), list(C)]), ("claim", [list(E), list(F)])]


def test_ctrl_c_stops_the_demo_without_a_server_with_exit_130(tiny_demo, capsys, monkeypatch, tmp_path):
    _stop_at(monkeypatch, 20)
    events = tmp_path / "demo.jsonl"
    code = main(["demo", "--no-serve", "--cache", str(tiny_demo), "--quiet", "--events-out", str(events)])
    out, err = capsys.readouterr()
    assert code == 130 and out == ""
    # the recording's one claim is still waiting for its confirmation at
    # frame 20: left undecided, as the whole run had not decided it there
    assert err == "companion demo: interrupted after 20 of the 22 frames, before any event was found\n"
    assert not events.exists()


_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
import test_cli_referee as T
import vision.faces, vision.referee, vision.sources
class NoModel:
    def __init__(self, *a, **k):
        pass
def read_board(frame, variant, layout, *a, **k):
    scene = T.SCENES[int(frame[0, 0, 0])]
    return T._recognition(layout, () if scene == "hand" else scene, scene == "hand")
vision.faces.TileClassifier = NoModel
vision.referee.read_board = read_board
frames = vision.sources.FrameSource.frames
def slow(self, prefetch=4):
    for i, f in frames(self, prefetch):
        if i == 70:
            print("frame 70", flush=True)
        if i >= 70:
            time.sleep(0.05)
        yield i, f
vision.sources.FrameSource.frames = slow
from companion.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_sigint_stops_the_referee_with_exit_130(tmp_path, layout_file, name):
    """A real SIGINT (Ctrl+C) to the command's process, mid-run; a service
    manager's stop (SIGTERM) and a closed terminal (SIGHUP) stop it the same
    way (a break-test, session 50: they killed it with no line)."""
    import os
    import signal
    if not hasattr(signal, name):
        pytest.skip(f"no {name} on this system")
    # A + C leave (a claim once E + F leave too, about frame 40), then E + F
    # stay off the board, undecided when the signal comes
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 14), (9, 4), (4, 200)])
    events = tmp_path / "e.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(Path(__file__).parent),
                             *_args(frames, layout_file, "--events-out", str(events), "--fps", "10")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline() == "frame 70\n"
        proc.send_signal(getattr(signal, name))
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("companion referee: interrupted after ")
    assert " of the 234 frames: the 1 event found so far" in err
    assert [json.loads(x)["type"] for x in events.read_text().splitlines()] == ["claim"]


def test_a_pipe_or_device_as_events_out_is_refused_and_no_evidence_left_beside_it(tmp_path, capsys, fake_vision,
                                                                                  layout_file):
    # a named pipe: the check opened and closed it (its reader saw the end),
    # then the first event's open blocked for ever; /dev/null and /dev/full
    # took the evidence folder beside them (/dev/null-evidence)
    frames = _recording(tmp_path / "frames", [(1, 6)])
    fifo = tmp_path / "events.jsonl"
    os.mkfifo(fifo)
    assert main(_args(frames, layout_file, "--quiet", "--events-out", str(fifo))) == 2
    assert "is not a plain file (a pipe or a device)" in _one_line(capsys)
    assert not (tmp_path / "events-evidence").exists()
    for device in ("/dev/null", "/dev/full"):
        assert main(_args(frames, layout_file, "--quiet", "--events-out", device)) == 2
        assert f"cannot write --events-out {device}: it is not a plain file" in _one_line(capsys)
        assert not Path(device + "-evidence").exists()


def test_evidence_and_events_out_cannot_be_one_path(tmp_path, capsys, fake_vision, layout_file):
    frames = _recording(tmp_path / "frames", [(1, 6)])
    out = tmp_path / "e.jsonl"
    assert main(_args(frames, layout_file, "--quiet", "--events-out", str(out), "--evidence", str(out))) == 2
    assert f"--evidence and --events-out both name {out}" in _one_line(capsys)
    assert not out.exists()


def test_a_second_game_in_the_same_ledger_keeps_the_first_games_evidence(tmp_path, capsys, fake_vision,
                                                                         layout_file):
    # the evidence of each run was numbered from 0001: game 2's frames went
    # over game 1's, and game 1's events in the ledger showed game 2's pictures
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12), (9, 4), (1, 12), (9, 4), (3, 12)])
    ledger = tmp_path / "out" / "game.sqlite"
    assert main(_args(frames, layout_file, "--quiet", "--ledger", str(ledger), "--fps", "10")) == 0
    first = sorted(p.name for p in (tmp_path / "out" / "game-evidence").iterdir())
    assert first == ["0001-penalty-f10", "0002-claim-f42"]
    before = (tmp_path / "out" / "game-evidence" / "0001-penalty-f10" / "before.jpg").read_bytes()
    assert main(_args(frames, layout_file, "--quiet", "--ledger", str(ledger), "--fps", "10")) == 0
    assert sorted(p.name for p in (tmp_path / "out" / "game-evidence").iterdir()) == first + [
        "0003-penalty-f10", "0004-claim-f42"]
    assert (tmp_path / "out" / "game-evidence" / "0001-penalty-f10" / "before.jpg").read_bytes() == before
    with Ledger(ledger) as led:
        last = led.events(led.latest_game_id())
    assert last[1].data["evidence"]["before"].startswith("game-evidence/0003-penalty-f10/")
    capsys.readouterr()



def test_demo_off_a_terminal_prints_its_summary_once_on_stdout(tiny_demo, capsys):
    # without --quiet, stderr that is not a terminal got the live line's last
    # state as well (the referee's progress is drawn on a terminal only)
    code = main(["demo", "--no-serve", "--cache", str(tiny_demo)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert [line for line in out.splitlines() if line.startswith("demo: refereed")] == [
        line for line in out.splitlines() if "frames" in line]
    assert out.count("demo: refereed 22 frames") == 1


def test_a_full_disk_while_the_ledger_is_made_says_so_and_leaves_no_file(tmp_path, capsys, fake_vision,
                                                                         layout_file, monkeypatch):
    # a break-test's ledger on a full 40 KB disk: "not a companion ledger:
    # database or disk is full", and a 4 KB file left behind
    import sqlite3
    import companion.ledger
    real = companion.ledger.init_db

    class DiskFull:
        """A connection whose schema script fails as SQLite does on a full disk."""

        def executescript(self, sql):
            exc = sqlite3.OperationalError("database or disk is full")
            exc.sqlite_errorcode = sqlite3.SQLITE_FULL
            raise exc

        execute = executescript          # (the ledger's version is asked first)

    monkeypatch.setattr(companion.ledger, "init_db", lambda conn: real(DiskFull()))
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (3, 12)])
    ledger = tmp_path / "game.sqlite"
    assert main(_args(frames, layout_file, "--ledger", str(ledger), "--fps", "10")) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "companion referee: cannot write the ledger: the disk is full (database or disk is full)"]
    assert list(tmp_path.glob("game.sqlite*")) == []


def test_no_tile_on_the_layout_s_slots_stops_the_run_before_anything_is_recorded(tmp_path, capsys, fake_vision,
                                                                                   layout_file, monkeypatch):
    # a newcomer's break-test: the demo refereed with --layout sprint-flat
    # (its tiles stand on turtle's slots) recorded 35 made-up penalties
    import types
    import vision.reconstruct
    unsure = [types.SimpleNamespace(present=True, confidence=0.55)] * 4 + \
        [types.SimpleNamespace(present=False, confidence=0.9)] * 4
    monkeypatch.setattr(vision.reconstruct, "recognize", lambda *a, **k: types.SimpleNamespace(
        advice=("no tile found for sure on the slots of layout 'mini': if tiles stand on the mat, check --layout",),
        tiles=unsure, looks_like=None))
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    events, ledger = tmp_path / "events.jsonl", tmp_path / "game.sqlite"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--ledger", str(ledger), "--fps", "10")) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "companion referee: no tile stands for sure on the slots of layout 'mini' in the picture the game would "
        "start from: check --layout (and --mat); nothing was recorded"]
    assert not events.exists() and list(tmp_path.glob("game.sqlite*")) == []


def test_a_board_laid_out_another_way_stops_the_run_before_anything_is_recorded(tmp_path, capsys, fake_vision,
                                                                                 layout_file, monkeypatch):
    # a newcomer's test (session 58): the demo refereed as Cupid's Citadel
    # (106 of its 144 slots empty, faces on 22 cells it does not use)
    # recorded 6 penalties no one earned, exit 0; with --start-as-found (a
    # game under way, its claimed tiles perhaps laid aside on the mat) it runs
    import types
    import vision.reconstruct
    board = [types.SimpleNamespace(present=True, confidence=0.95)] * 5 + \
        [types.SimpleNamespace(present=False, confidence=0.9)] * 3
    monkeypatch.setattr(vision.reconstruct, "recognize", lambda *a, **k: types.SimpleNamespace(
        advice=(), tiles=board, looks_like=None, pose=object()))
    monkeypatch.setattr(vision.reconstruct, "stray_tiles", lambda *a, **k: 4)
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    events, ledger = tmp_path / "events.jsonl", tmp_path / "game.sqlite"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--ledger", str(ledger), "--fps", "10")) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "companion referee: 3 of the 8 slots of layout 'mini' read empty in the picture the game would start from, "
        "and faces stand on 4 mat cells where it has no slot: the tiles are laid out another way; check --layout "
        "(and --mat), or give --start-as-found for a game already under way; nothing was recorded"]
    assert not events.exists() and list(tmp_path.glob("game.sqlite*")) == []
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10", "--start-as-found")) == 0
    monkeypatch.setattr(vision.reconstruct, "stray_tiles", lambda *a, **k: 2)       # under STRAY_MIN: refereed
    assert main(_args(frames, layout_file, "--events-out", str(events), "--fps", "10")) == 0


def test_no_tile_read_for_sure_on_faces_too_small_says_so_not_check_the_layout(tmp_path, capsys, fake_vision,
                                                                                 layout_file, monkeypatch):
    # a break-test's 160 x 90 video (tiles about 10 px wide) was told to check --layout
    import types
    import vision.reconstruct
    unsure = [types.SimpleNamespace(present=True, confidence=0.4)] * 8
    monkeypatch.setattr(vision.reconstruct, "recognize", lambda *a, **k: types.SimpleNamespace(
        advice=("tiles only 10 px wide in the picture: bring the camera closer or raise its resolution so the mat "
                "fills the frame (faces read surest at 24 px or more)",), tiles=unsure, looks_like=None))
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    assert main(_args(frames, layout_file, "--events-out", str(tmp_path / "e.jsonl"), "--fps", "10")) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "companion referee: no tile stands for sure in the picture the game would start from: tiles only 10 px "
        "wide in the picture: bring the camera closer or raise its resolution so the mat fills the frame (faces read "
        "surest at 24 px or more); nothing was recorded"]


def test_a_board_half_a_tile_off_the_layout_stops_the_run_before_anything_is_recorded(
        tmp_path, capsys, fake_vision, layout_file, monkeypatch):
    # every slot's reading falls between two tiles: refereed, the game would
    # be scored on a board nobody laid
    import types
    import vision.reconstruct
    advice = ("the tiles stand half a tile off the slots of layout 'mini' (faces on 6 slots moved half a tile left "
              "or right, on 0 where they are): lay the board on the mat's cells as `companion layouts show mini` "
              "draws it, or check --layout")
    monkeypatch.setattr(vision.reconstruct, "recognize", lambda *a, **k: types.SimpleNamespace(
        advice=(advice,), tiles=[types.SimpleNamespace(present=True, confidence=0.4)] * 8, looks_like=None))
    frames = _recording(tmp_path / "frames", [(1, 6), (9, 4), (2, 12)])
    events, ledger = tmp_path / "e.jsonl", tmp_path / "game.sqlite"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--ledger", str(ledger), "--fps", "10")) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"companion referee: in the picture the game would start from, {advice}; nothing was recorded"]
    assert not events.exists() and list(tmp_path.glob("game.sqlite*")) == []


def test_evidence_paths_in_an_events_file_resolve_from_its_folder(tmp_path, capsys, fake_vision, layout_file):
    # --events-out out/e.jsonl --evidence shots/ev (no ledger): the paths were
    # relative to shots/, so read from out/ they named nothing; now they are
    # read from the events file's folder, absolute when the evidence lies outside it
    frames = _recording(tmp_path / "frames", [(1, 12), (9, 4), (3, 12)])
    out, shots = tmp_path / "out", tmp_path / "shots" / "ev"
    events = out / "e.jsonl"
    assert main(_args(frames, layout_file, "--events-out", str(events), "--evidence", str(shots), "--fps", "10",
                      "--quiet")) == 0
    (claim,) = [json.loads(x) for x in events.read_text().splitlines()]
    before = Path(claim["evidence"]["before"])
    assert before.is_absolute() and before == (shots / "0001-claim-f16" / "before.jpg").resolve()
    assert (events.parent / before).stat().st_size > 0
    inside = out / "ev"
    assert main(_args(frames, layout_file, "--events-out", str(out / "f.jsonl"), "--evidence", str(inside),
                      "--fps", "10", "--quiet")) == 0
    (claim,) = [json.loads(x) for x in (out / "f.jsonl").read_text().splitlines()]
    assert claim["evidence"]["before"] == "ev/0001-claim-f16/before.jpg"
    assert (out / claim["evidence"]["before"]).stat().st_size > 0



def test_a_game_stopped_midway_is_resumed_from_the_ledger(tmp_path, capsys, fake_vision, layout_file):
    # a break-test (session 59): a referee killed mid-game could only start a
    # new game (--start-as-found), both players back at 10,000
    ledger, events = tmp_path / "club.db", tmp_path / "e.jsonl"
    first = _recording(tmp_path / "first", [(1, 6), (9, 4), (2, 12), (9, 4), (1, 12)])
    assert main(_args(first, layout_file, "--ledger", str(ledger), "--events-out", str(events), "--fps", "10",
                      "--quiet")) == 0
    with Ledger(ledger) as led:
        assert [e.type for e in led.events()] == ["game_started", "penalty"]
    capsys.readouterr()
    # the rest of the game, from a picture of the board as the ledger holds it
    rest = _recording(tmp_path / "rest", [(1, 12), (9, 4), (3, 12)])
    code = main(["referee", str(rest), "--variant", "love", "--layout", str(layout_file), "--players", "ada,BO",
                 "--ledger", str(ledger), "--events-out", str(tmp_path / "e2.jsonl"), "--fps", "10", "--quiet",
                 "--resume", "GAME-1"])
    assert code == 0
    assert capsys.readouterr().err.splitlines() == [
        "companion referee: note: went on with game game-1 as the ledger holds it (event #2), from frame 0"]
    with Ledger(ledger) as led:
        evs = led.events()
        assert [(e.game_id, e.type) for e in evs] == [("game-1", "game_started"), ("game-1", "penalty"),
                                                     ("game-1", "claim")]
        assert evs[2].t > evs[1].t                 # the game's times go on
    st = G.replay(evs)
    assert st.score(st.player("Ada")) == 10_000 - 100 + 200 and st.players[0].name == "Ada"
    # tiles gone while no referee ran: an item names them, off the table
    capsys.readouterr()
    ledger2 = tmp_path / "club2.db"
    assert main(_args(first, layout_file, "--ledger", str(ledger2), "--events-out", str(events), "--fps", "10",
                      "--quiet")) == 0
    later = _recording(tmp_path / "later", [(3, 12), (9, 4), (3, 12)])
    assert main(_args(later, layout_file, "--ledger", str(ledger2), "--events-out", str(tmp_path / "e3.jsonl"),
                      "--fps", "10", "--quiet", "--resume", "game-1")) == 0
    assert capsys.readouterr().err.splitlines()[0] == (
        "companion referee: note: went on with game game-1 as the ledger holds it (event #2), from frame 0; 2 tiles "
        "it has standing read gone, a referee item")
    lines = [json.loads(x) for x in (tmp_path / "e3.jsonl").read_text().splitlines()]
    assert lines[0]["type"] == "needs_referee" and lines[0]["reason"] == (
        "2 tiles left the table while the camera referee was not running: settle the move that took them")
    assert sorted(map(tuple, lines[0]["off_table"])) == [A, C] and lines[0]["pair_move"] is True
    with Ledger(ledger2) as led:
        evs = led.events()
    st = G.replay(evs)
    assert not st.board.present[0] and not st.board.present[2]          # off the ledger's board too
    assert [n["id"] for n in G.state_json(evs)["needs_referee"]] == [3]


def test_resume_refuses_a_game_it_cannot_go_on_with(tmp_path, capsys, fake_vision, layout_file):
    ledger = tmp_path / "club.db"
    frames = _recording(tmp_path / "f", [(1, 6), (9, 4), (2, 12)])
    base = ["referee", str(frames), "--variant", "love", "--layout", str(layout_file), "--fps", "10",
            "--events-out", str(tmp_path / "e.jsonl")]

    def refused(*extra) -> str:
        capsys.readouterr()
        assert main(base + list(extra)) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        return err.removeprefix("companion referee: ").strip()

    assert refused("--players", "Ada,Bo", "--resume", "game-1") == "--resume names a game of --ledger: give --ledger FILE"
    assert refused("--players", "Ada,Bo", "--ledger", str(ledger), "--resume", "game-1") == \
        f"--resume game-1: there is no ledger {ledger}"
    assert main(base + ["--players", "Ada,Bo", "--ledger", str(ledger), "--quiet"]) == 0
    assert refused("--players", "Ada,Bo", "--ledger", str(ledger), "--resume", "game-7").startswith(
        f"--resume game-7: no such game in {ledger}")
    assert refused("--players", "Bo,Ada", "--ledger", str(ledger), "--resume", "game-1") == (
        "--resume game-1: its players are Ada,Bo, in that order: give --players Ada,Bo")
    with Ledger(ledger) as led:
        led.append("game-1", "game_ended", {"reason": "abandoned", "by": "referee"}, None, 99.0)
    assert refused("--players", "Ada,Bo", "--ledger", str(ledger), "--resume", "game-1") == (
        "--resume game-1: the game has ended (abandoned); start a new one, or void its end in the console first")
    # another game of the same players on the same layout: its faces are not the table's
    deal = tmp_path / "other.json"
    deal.write_text(json.dumps({"variant": "love", "layout": "mini", "tiles": [
        {"slot": list(s), "face": f} for s, f in zip(SLOTS, ["roses-3", "roses-3", "cupid-arrow", "cupid-arrow",
                                                             "hearts-1", "hearts-2", "hearts-1", "hearts-2"])]}))
    assert main(["game", "start", "--ledger", str(ledger), "--variant", "love", "--mode", "sprint", "--deal",
                 str(deal), "--players", "Ada,Bo"]) == 0
    assert refused("--players", "Ada,Bo", "--ledger", str(ledger), "--resume", "game-2") == (
        "the tiles on the table are not game game-2's: 7 of the 7 faces read surely differ from the ledger's: check "
        "--resume (companion game games lists the games); nothing was recorded")
