"""``companion referee SOURCE``: referee a game from a camera, a video or a
folder of frames (../shared/CONTRACT.md, ``referee``).

Thin shell: open the source, the model, the ledger and the evidence folder,
feed frames to :class:`vision.referee.Referee`, write one JSON line per event,
show a live status line on stderr (frames per second, settled or hand in
view, tiles on the board, last event, and a progress bar for a file).
Ctrl+C ends a live game (a camera): what was seen is judged and the command
exits normally.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from companion import jsontext
from companion.errors import BadInput
from companion.tiles import VARIANTS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("referee", help="referee a game from a camera, a video or a folder of frames")
    p.add_argument("SOURCE", help="a folder of frames (name order), a video file or a camera index")
    add_referee_args(p)
    p.set_defaults(func=_referee)


def add_referee_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", required=True, choices=VARIANTS, help="tile set on the table")
    p.add_argument("--layout", required=True, help="built-in name or a .layout/.map/.json path")
    p.add_argument("--map-name", help="map to read from a GNOME .map file holding several")
    p.add_argument("--players", required=True, help="names in seat order, comma-separated (first starts)")
    p.add_argument("--camera", metavar="FILE", help="camera JSON from 'companion calibrate'")
    p.add_argument("--mat", metavar="MAT.json", help="mat spec (companion print-mat); the standard mat when absent")
    p.add_argument("--mode", help="game mode (default: love/candy sprint, mindful harmony-duels "
                                  "(zen-solitaire for one player), word zen-archives)")
    p.add_argument("--tiles", metavar="PROFILE",
                   help="enrolled tile profile (companion enroll): faces are read with it")
    p.add_argument("--events-out", metavar="FILE.jsonl", help="write one JSON object per event to this file")
    p.add_argument("--ledger", metavar="FILE", help="append the game to this ledger (SQLite)")
    p.add_argument("--evidence", metavar="DIR",
                   help="folder for evidence frames (default: beside --ledger, else beside --events-out)")
    p.add_argument("--fps", type=float, help="frames per second of the source (a folder: 30 unless given)")
    p.add_argument("--quiet", action="store_true", help="no live status line")


def _referee(args) -> int:
    from vision.sources import open_source
    check_args(args)
    source = open_source(args.SOURCE, getattr(args, "fps", None))
    run_referee(args, source)
    return 0


def parse_players(text: str) -> list[str]:
    """Names from ``--players`` (comma-separated, 1 to 4, distinct).

    Raises:
        BadInput: empty names, repeated names, more than 4.
    """
    names = [n.strip() for n in str(text).split(",")]
    if not names or any(not n for n in names):
        raise BadInput(f"bad --players {text!r}: expected names separated by commas, e.g. --players Ada,Bo")
    if len(set(names)) != len(names):
        raise BadInput(f"bad --players {text!r}: a name appears twice")
    if len(names) > 4:
        raise BadInput(f"bad --players {text!r}: at most 4 players")
    return names


def load_layout(name: str, map_name: str | None = None):
    """A layout by built-in name or file path (``companion.layout_files`` when
    present, else the built-in codex only).

    Raises:
        BadInput: unknown name, unreadable file, or a layout off the mat
            (:func:`companion.layouts.check_on_mat`).
    """
    try:
        from companion.layout_files import load_layout as _load
    except ImportError:  # the layout-file module is not in this tree: built-ins only
        from companion import codex

        def _load(n, m=None):
            return codex.builtin(n)
    from companion.layouts import check_on_mat
    layout = _load(name, map_name)
    check_on_mat(layout)
    return layout


def check_args(args) -> None:
    """Check the options that need no file before the source is opened.

    Raises:
        BadInput: bad players, mode or variant combination.
    """
    from companion.variants import find_variant
    from vision.referee import DEFAULT_MODES, SOLO_MODES
    players = parse_players(args.players)
    mode = args.mode or (SOLO_MODES.get(args.variant, DEFAULT_MODES[args.variant]) if len(players) == 1
                         else DEFAULT_MODES[args.variant])
    m = find_variant(args.variant).mode(mode)
    if not m.min_players <= len(players) <= m.max_players:
        span = str(m.min_players) if m.min_players == m.max_players else f"{m.min_players} to {m.max_players}"
        raise BadInput(f"{m.title} ({args.variant}) is for {span} player(s), got {len(players)}")


def run_referee(args, source, on_event=None, on_start=None) -> dict:
    """Referee ``source`` with the options in ``args``; returns a summary dict
    (``frames``, ``seconds``, ``fps``, ``judged``, ``events``, ``state``,
    ``game_id``, and ``stopped``: True when a Ctrl+C ended it before the
    source did).

    Args:
        args: the parsed options (see :func:`add_referee_args`).
        source: an opened :class:`vision.sources.FrameSource` (or anything
            with ``frames()``, ``length``, ``fps``).
        on_event: called with each output event dict.
        on_start: called with the game id once the ledger game is known.

    Raises:
        BadInput: unreadable camera file, mat file, profile, layout, output path.
    """
    from vision.faces import ProfileFaceReader, TileClassifier
    from vision.mat import MatSpec
    from vision.pose import Camera
    from vision.referee import EvidenceWriter, Referee, read_board

    layout = load_layout(args.layout, getattr(args, "map_name", None))
    players = parse_players(args.players)
    camera = Camera.from_json(_read_json(args.camera, "camera file")) if getattr(args, "camera", None) else None
    spec = MatSpec.from_json(_read_json(args.mat, "mat file")) if getattr(args, "mat", None) else MatSpec.default()
    classifier = TileClassifier()
    reader = ProfileFaceReader(args.tiles, args.variant) if getattr(args, "tiles", None) else None

    out_file = None
    if args.events_out:
        try:
            Path(args.events_out).parent.mkdir(parents=True, exist_ok=True)
            out_file = open(args.events_out, "w", encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"cannot write {args.events_out}: {exc.strerror}") from None
    ledger = None
    append = None
    game_id = None
    evidence_dir = getattr(args, "evidence", None)
    base = None
    try:
        if args.ledger:
            from companion.ledger import Ledger
            ledger = Ledger(args.ledger)
            game_id = ledger.new_game_id()
            base = Path(args.ledger).resolve().parent

            def to_ledger(type_, data, ref, t):
                return ledger.append(game_id, type_, data, ref, t)
            append = to_ledger
            evidence_dir = evidence_dir or str(Path(args.ledger).with_suffix("")) + "-evidence"
        elif args.events_out and evidence_dir is None:
            evidence_dir = str(Path(args.events_out).with_suffix("")) + "-evidence"
        if evidence_dir and base is None:
            base = Path(evidence_dir).resolve().parent
        evidence = EvidenceWriter(Path(evidence_dir), base) if evidence_dir else None

        def recognize_fn(frame):
            return read_board(frame, args.variant, layout, camera, classifier, spec, face_reader=reader)

        def emit(obj):
            if out_file is not None:
                out_file.write(json.dumps(obj, separators=(",", ":")) + "\n")
                out_file.flush()
            if on_event is not None:
                on_event(obj)

        ref = Referee(args.variant, layout, players, recognize_fn, mode=args.mode, append=append, emit=emit,
                      evidence=evidence, fps=source.fps)
        if on_start is not None and game_id is not None:
            on_start(game_id)
        status = StatusLine(sys.stderr, enabled=not getattr(args, "quiet", False), total=source.length)
        t0 = time.perf_counter()
        frames = 0
        elapsed = 0.0
        try:
            try:
                for index, frame in source.frames():
                    ref.feed(index, frame)
                    frames += 1
                    status.show(ref.status, frames / max(1e-9, time.perf_counter() - t0))
            except KeyboardInterrupt:     # Ctrl+C ends a live game: judge what was seen
                ref.status.state = "stopped"
            ref.finish()
        finally:
            elapsed = time.perf_counter() - t0
            status.done(ref.status, frames / max(1e-9, elapsed))
    finally:
        if out_file is not None:
            out_file.close()
        if ledger is not None:
            ledger.close()
    return {"frames": frames, "seconds": elapsed, "fps": frames / max(1e-9, elapsed),
            "judged": ref.status.judged, "events": ref.status.events, "state": ref.state, "game_id": game_id,
            "stopped": ref.status.state == "stopped"}


def _read_json(path: str, what: str):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{what} {path} is not JSON (line {exc.lineno}: {exc.msg})") from None


class StatusLine:
    """One live line on a terminal: frame, progress bar (when the length is
    known), frames per second, settled or hand in view, tiles on the board,
    last event.

    On a terminal the line is redrawn in place at most 10 times a second; when
    the stream is not a terminal, a plain line is printed every 5 seconds.
    """

    def __init__(self, stream, enabled: bool = True, total: int | None = None) -> None:
        self.stream = stream
        self.enabled = enabled
        self.total = total
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self._last = 0.0

    def text(self, st, fps: float) -> str:
        """The line for status ``st`` (a :class:`vision.referee.RefereeStatus`)."""
        if self.total:
            done = min(1.0, (st.frame + 1) / self.total)
            n = int(done * 20)
            head = f"[{'#' * n}{'-' * (20 - n)}] {done:4.0%} frame {st.frame + 1}/{self.total}"
        else:
            head = f"frame {st.frame + 1}"
        tiles = "?" if st.tiles_on_board is None else st.tiles_on_board
        last = f" | last: {st.last_event}" if st.last_event else ""
        return f"{head} | {fps:5.1f} fps | {st.state} | {tiles} tiles on the board{last}"

    def show(self, st, fps: float) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < (0.1 if self.tty else 5.0):
            return
        self._last = now
        line = self.text(st, fps)
        if self.tty:
            self.stream.write("\r\x1b[2K" + line[:200])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self, st, fps: float) -> None:
        if not self.enabled:
            return
        self.stream.write(("\r\x1b[2K" if self.tty else "") + self.text(st, fps) + "\n")
        self.stream.flush()
