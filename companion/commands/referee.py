"""``companion referee SOURCE``: referee a game from a camera, a video or a
folder of frames (../shared/CONTRACT.md, ``referee``).

Thin shell: open the source, the model, the ledger and the evidence folder,
feed frames to :class:`vision.referee.Referee`, write one JSON line per event,
show a live status line on stderr (frames per second, settled or hand in
view, tiles on the board, last event, and a progress bar for a file).
Ctrl+C ends a live game (a camera): what was seen is judged and the command
exits normally.  On a folder of frames or a video, Ctrl+C and a video cut
short both end the run early, and the command fails with one line: exit 130
("interrupted", as every command says on Ctrl+C) or 2 (cut short); a camera
that stops giving frames fails as a video cut short does.  A video
cut short is judged as at the end of the source (a claim waiting for its
confirmation is decided); Ctrl+C leaves the move in progress undecided, so
the events written are the first ones the whole run writes.
"""

from __future__ import annotations

import argparse
import errno
import os
import sqlite3
import sys
import time
from pathlib import Path

from companion.cli import word_arg
from companion.commands.paths import (check_writable, make_parent_folder, missing_folders, refuse_ledger_files,
                                      refuse_overwriting_inputs, remove_if_empty, remove_new_ledger)
from companion.errors import BadInput, Interrupted, WrongTileSet
from companion.ledger import LedgerLost, LedgerUnwritable, file_key
from companion.stopping import deferred_sigint, stop_signals
from companion.wording import count
from companion.tiles import VARIANTS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("referee", help="referee a game from a camera, a video or a folder of frames")
    p.add_argument("SOURCE", help="a folder of frames (name order), a video file or a camera index")
    add_referee_args(p)
    p.set_defaults(func=_referee)


def add_referee_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", required=True, type=word_arg, choices=VARIANTS, help="tile set on the table")
    p.add_argument("--layout", required=True, help="built-in name or a .layout/.map/.json path")
    p.add_argument("--map-name", help="map to read from a GNOME .map file holding several")
    p.add_argument("--players", required=True, help="names in seat order, comma-separated (first starts)")
    p.add_argument("--camera", metavar="FILE", help="camera JSON from 'companion calibrate'")
    p.add_argument("--mat", metavar="MAT.json", help="mat spec (companion print-mat); the standard mat when absent")
    p.add_argument("--mode", type=word_arg, help="game mode (default: love/candy sprint, mindful harmony-duels "
                                  "(zen-solitaire for one player), word zen-archives)")
    p.add_argument("--tiles", metavar="PROFILE",
                   help="enrolled tile profile (companion enroll): faces are read with it")
    p.add_argument("--events-out", metavar="FILE.jsonl", help="write one JSON object per event to this file")
    p.add_argument("--ledger", metavar="FILE", help="append the game to this ledger (SQLite)")
    p.add_argument("--evidence", metavar="DIR",
                   help="folder for evidence frames (default: beside --ledger, else beside --events-out)")
    p.add_argument("--fps", type=float, help="frames per second of the source (a folder: 10 unless given; for a "
                                             "video, replaces the rate its file declares)")
    p.add_argument("--quiet", action="store_true",
                   help="no live status line and no summary line (notes on the set-up are still printed)")
    p.add_argument("--start-as-found", action="store_true",
                   help="the game is already under way: slots read empty in the first still picture were "
                        "emptied before it (default: the source starts from the whole deal)")
    p.add_argument("--resume", metavar="GAME",
                   help="go on refereeing game GAME of --ledger (a run stopped or crashed): its board, scores "
                        "and turn are the ledger's; tiles gone from the table meanwhile become a referee item")


def _referee(args) -> int:
    from companion.errors import MatNotFound
    from vision.sources import open_source
    check_args(args)
    source = open_source(args.SOURCE, getattr(args, "fps", None))
    with stop_signals():
        done = run_referee(args, source, require_output=True)
    if done["interrupted"]:
        raise Interrupted(interrupted_line(done, source, args.events_out, getattr(args, "ledger", None)))
    if done["frames"] == 0:
        raise BadInput(f"no frame could be read from {args.SOURCE}")
    if not done["mat_seen"] and done["mat_missed"]:
        raise MatNotFound((f"the mat was not found in any of the {count(done['frames'], 'frame')} of {args.SOURCE}"
                           if done["frames"] != 1 else f"the mat was not found in the one frame of {args.SOURCE}")
                          + done.get("mirrored", ""))
    if not done["mat_seen"]:
        if done["mat_in_last"] is False:
            raise MatNotFound(f"the mat was not found in {args.SOURCE} (not in its last frame, and the picture "
                              f"was never still in its {count(done['frames'], 'frame')})" + done.get("mirrored", ""))
        from vision.tracking import MotionSettings
        need = MotionSettings.for_fps(source.fps).settle_frames
        raise BadInput(f"{args.SOURCE}: the picture was never still in its {count(done['frames'], 'frame')}, so nothing "
                       f"was judged (the same picture on {need} frames in a row is needed at {source.fps:g} frames a "
                       "second; for one photo use companion recognize)")
    return 0


def interrupted_line(done: dict, source, events_out: str | None, ledger: str | None) -> str:
    """The one line of a run that Ctrl+C stopped before its source ended:
    where it stopped and where the events found so far are kept.

    Args:
        done: :func:`run_referee`'s summary.
        source: the source it read (``length`` when known).
        events_out, ledger: the outputs given (None when not).
    """
    at = (f"{done['frames']} of the {count(source.length, 'frame')}" if source.length
          else count(done["frames"], "frame"))
    kept = [name for name in (events_out, ledger) if name]
    aside = f" (the earlier events file was kept as {done['kept_as']})" if done.get("kept_as") else ""
    if not done["events"] or not kept:
        return f"interrupted after {at}, before any event was found"
    return (f"interrupted after {at}: the {count(done['events'], 'event')} found so far "
            f"{'is' if done['events'] == 1 else 'are'} written to {' and '.join(kept)}{aside}")


def rate_note(source) -> str:
    """The note of a run whose frame rate was assumed, not known
    (``source.fps_assumed``): a folder of frames has no rate of its own,
    and a video may declare none the referee can count with
    (:func:`vision.sources.declared_rate`: 0, or over 1000 frames a
    second).

    Args:
        source: the opened source (``kind``, ``fps`` and, for a video,
            ``fps_declared``, frames per second).
    """
    if getattr(source, "kind", None) == "video":
        from vision.sources import declared_rate
        declared = getattr(source, "fps_declared", 0.0) or 0.0
        if declared_rate(declared) is not None and not getattr(source, "length", None):
            return (f"the frames are taken as {source.fps:g} a second, the rate the video gives, which may be a guess "
                    "(it states no frame count, as a raw stream does): give --fps with the rate they were taken at")
        said = f"declares {declared:g} frames a second" if declared else "declares no frame rate"
        return (f"the frames are taken as {source.fps:g} a second (the video {said}): give --fps with the rate "
                "they were taken at")
    return (f"the frames are taken as {source.fps:g} a second (a folder has no rate of its own): give --fps if they "
            "were taken at another rate")


def damaged_note(damaged: list[int], why: str = "") -> str:
    """The note of a video some of whose frames could not be decoded and
    were read past (:func:`vision.sources._next_video_frame`), or of a
    folder some of whose frame files could not be read (``why``: the
    first one's name and reason).

    Args:
        damaged: their frame numbers (0-based, as the events' ``frame``).
        why: a folder's first unreadable file and why, "" for a video.
    """
    first, last = damaged[0], damaged[-1]
    where = f"frame {first}" if len(damaged) == 1 else f"frames {first}-{last}"
    if why:
        return (f"{count(len(damaged), 'frame')} of the folder could not be read ({where}; the first, {why}) and "
                f"{'was' if len(damaged) == 1 else 'were'} skipped; the frames after "
                f"{'it' if len(damaged) == 1 else 'them'} were judged as usual")
    return (f"{count(len(damaged), 'frame')} of the video could not be decoded (damaged: {where}) and "
            f"{'was' if len(damaged) == 1 else 'were'} skipped; the frames after {'it' if len(damaged) == 1 else 'them'} "
            "were judged as usual")


def parse_players(text: str) -> list[str]:
    """Names from ``--players`` (comma-separated, 1 to 4, distinct).

    Raises:
        BadInput: empty names, a semicolon or another comma
            (:data:`companion.game.NAME_SEPARATORS`: ``"Ada;Bo"`` meant two players),
            repeated names, more than 4.
    """
    import unicodedata
    # composed (NFC), as the ledger keeps a new game's names (companion.game.name_key)
    names = [unicodedata.normalize("NFC", n.strip()) for n in str(text).split(",")]
    from companion.game import NAME_SEPARATORS
    if not names or any(not n for n in names) or any(c in n for n in names for c in NAME_SEPARATORS):
        raise BadInput(f"bad --players {text!r}: expected names separated by commas, e.g. --players Ada,Bo")
    if len(set(names)) != len(names):
        raise BadInput(f"bad --players {text!r}: a name appears twice")
    if len(names) > 4:
        raise BadInput(f"bad --players {text!r}: at most 4 players")
    return names


#: a game refereed from its deal whose first picture reads this share of the
#: layout's slots surely empty, with faces on mat cells the layout does not
#: use (:func:`vision.reconstruct.stray_tiles`), is another layout's board:
#: the demo read as Cupid's Citadel: 106 of 144 slots surely empty and faces
#: on 22 such cells; as KMahjongg's ``default.layout`` (the same Turtle one
#: tile to the left): 23 and 5 (session 58; both had been refereed into
#: penalties no one earned); the demo read with its own layout starts with
#: none empty
WRONG_LAYOUT_EMPTY_SHARE = 0.15
#: seconds the referee waits, past SQLite's own busy timeout, for a ledger
#: another program holds locked before it stops the run
#: (:class:`companion.ledger.LedgerLost`)
LEDGER_LOCK_WAIT_S = 60.0


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
        raise BadInput(f"{m.title} ({args.variant}) is for {span} {'player' if span == '1' else 'players'}, "
                       f"got {len(players)}")



def keep_earlier_events(path: str | os.PathLike) -> Path | None:
    """Keep a non-empty events file at ``path`` as ``NAME.~N~`` (the first
    free N; GNU ``cp --backup=numbered``'s names) before a new game's events
    are written there (the summary line says so): a second game given the same
    ``--events-out`` emptied the first's file, while the evidence folder kept
    its pictures (a break-test, session 35).  Returns the backup's path, or
    None when there was nothing to keep.

    Raises:
        BadInput: the file cannot be renamed.
    """
    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size == 0 or not os.access(p.parent, os.W_OK):
            return None         # (a folder that cannot take a new name: written over, as before)
        k = 1
        while os.path.lexists(f"{p}.~{k}~"):
            k += 1
        kept = Path(f"{p}.~{k}~")
        os.rename(p, kept)
    except OSError as exc:
        raise BadInput(f"cannot keep the earlier events file {p}: {exc.strerror or exc}") from None
    return kept

def run_referee(args, source, on_event=None, on_start=None, require_output: bool = False,
                live: bool | None = None) -> dict:
    """Referee ``source`` with the options in ``args``; returns a summary dict
    (``frames``, ``seconds``, ``fps``, ``judged``, ``events``, ``state``,
    ``game_id``, ``stopped``: True when a Ctrl+C ended it before the
    source did, ``interrupted``: stopped so, and the source not ``live``,
    ``mat_seen``: whether any frame showed the mat, and ``mat_missed``:
    frames read without finding it).

    A video cut short ends the game as its end would: a change waiting for
    its second reading is judged on the last frame
    (:meth:`vision.referee.Referee.finish`) and the events found are
    written; Ctrl+C on a recording leaves the move in progress undecided
    (the events are the first ones the whole run writes), and on a ``live``
    source ends the game as its end would.  Only a ``live`` run ends normally so
    (summary line, the events file written even without events); a run
    ``interrupted`` or cut short fails (no summary line; no events file
    made, and an old one untouched, when it found no event; likewise no
    new ``--ledger`` file is left behind without an event).

    Args:
        args: the parsed options (see :func:`add_referee_args`).
        source: an opened :class:`vision.sources.FrameSource` (or anything
            with ``frames()``, ``length``, ``fps``, ``kind``).
        on_event: called with each output event dict.
        on_start: called with the game id once the ledger game is known
            (when its start is written: the id is picked then).
        require_output: refuse to run without ``--events-out`` or
            ``--ledger`` (the command line: nothing would be kept).
        live: whether Ctrl+C is the normal end of this source (a game at
            the table); default: the source is a camera.

    Raises:
        BadInput: unreadable camera file, mat file, profile, layout, output
            path, or an output that would overwrite an input
            (:func:`_check_outputs`), or an event JSON cannot hold.
        VideoCutShort: the video ended clearly before its declared frame
            count (:func:`vision.sources.cut_short`), after the events
            found before the cut were written.
        BadInput: a frame of the source cannot be read (or has another
            size than the first), likewise after the frames before it
            were judged as a video ending there would be (a claim waiting
            for its confirmation is decided on the last frame read).
    """
    from companion.errors import CompanionError, MatNotFound
    from companion.jsontext import dumps
    from vision.faces import ProfileFaceReader, TileClassifier
    from companion.commands.vision_setup import load_camera, load_mat
    from vision.referee import EvidenceWriter, PoseMemory, Referee, RefereeSettings

    if live is None:
        live = getattr(source, "kind", None) == "camera"

    layout = load_layout(args.layout, getattr(args, "map_name", None))
    from companion.tiles import tileset
    held = sum(f.copies for f in tileset(args.variant).faces)
    if len(layout) > held:
        # as `deal` and `game start`: a game cannot be dealt on it (a
        # break-test's 222-slot layout was refereed into penalties and items)
        raise BadInput(f"layout {layout.name!r} has {len(layout)} slots; a set holds {held} tiles")
    players = parse_players(args.players)
    camera = load_camera(args.camera) if getattr(args, "camera", None) else None
    spec = load_mat(args.mat) if getattr(args, "mat", None) else load_mat(None)
    classifier = TileClassifier()
    reader = ProfileFaceReader(args.tiles, args.variant) if getattr(args, "tiles", None) else None
    if reader is not None and reader.unnamed_note():
        print(f"companion referee: note: {reader.unnamed_note()}", file=sys.stderr)

    if require_output and not (args.events_out or "").strip() and not (getattr(args, "ledger", None) or "").strip():
        raise BadInput("nothing would be kept: give --events-out FILE.jsonl (one JSON line per event) "
                       "and/or --ledger FILE")
    _check_outputs(args)
    ledger = None
    append = None
    history = None
    game_id = None
    ledger_stuck = False              # a write the ledger refused stopped the run (LedgerLost)
    resumed: list | None = None       # --resume: the game's events
    resumed_mode = None
    evidence_dir = getattr(args, "evidence", None)
    base = None
    opened: list = []         # the events file, once this run writes to it
    kept_as: list[str] = []   # the name an earlier events file there was kept under
    made_evidence: Path | None = None
    made_ledger: Path | None = None   # a ledger this run creates: removed again if the run fails before any event
    kept = False              # the run ended normally: the events file is written even without events
    made_folders: list[Path] = []     # folders made for the outputs: removed again, when empty, if the run fails
    try:
        if getattr(args, "resume", None) is not None and not args.ledger:
            raise BadInput("--resume names a game of --ledger: give --ledger FILE")
        if args.ledger:       # first: a file that is no ledger is refused before the events file is emptied
            from companion.ledger import Ledger
            made_folders += missing_folders(args.ledger)
            make_parent_folder("--ledger", args.ledger)
            if not os.path.lexists(args.ledger):
                if getattr(args, "resume", None) is not None:
                    raise BadInput(f"--resume {args.resume}: there is no ledger {args.ledger}")
                made_ledger = Path(args.ledger)
            ledger = Ledger(args.ledger)
            ledger_key = file_key(args.ledger)
            if getattr(args, "resume", None) is not None:
                resumed = _game_to_resume(ledger, args, layout, players)
                game_id = resumed[0].game_id
                resumed_mode = resumed[0].data.get("mode")
                players = list(resumed[0].data.get("players") or players)     # (as the game spells them)
        if args.events_out:
            made_folders += missing_folders(args.events_out)
            make_parent_folder("--events-out", args.events_out)
            check_writable("--events-out", args.events_out, plain_file=True)
            earlier = Path(args.events_out)
            if earlier.is_file() and earlier.stat().st_size > 0 and not os.access(earlier.parent, os.W_OK):
                # (its earlier game's events would be written over: the file
                # is kept aside by a new name, which this folder cannot take;
                # a break-test, session 57, lost a game's events so, exit 0)
                raise BadInput(f"--events-out {args.events_out} holds an earlier game's events, which are kept aside "
                               f"as {earlier.name}.~1~ before a new game is written, but its folder cannot be "
                               "written: move that file, or give another --events-out")

        def events_file():
            """The events file, written from its start when the first event of
            this run is written; an earlier file of events there is kept
            beside it first (:func:`keep_earlier_events`)."""
            if not opened:
                backup = keep_earlier_events(args.events_out)
                if backup is not None:
                    kept_as.append(backup.name)
                # unbuffered: a write that fails is undone to the last whole line (``emit``)
                opened.append(open(args.events_out, "wb", buffering=0))
            return opened[0]
        if ledger is not None:
            base = Path(args.ledger).resolve().parent

            def to_ledger(type_, data, ref_id, t, after=None):
                """Write one event to this run's game; its start picks the
                game's id in the same transaction (:meth:`companion.ledger.Ledger.append`
                with no id), so two referees starting games on one ledger
                at once get one each (the id picked before the run made the
                second fail: "game 'game-1' already exists").  ``after``:
                the newest event's id the move was judged on (StaleGame
                when the console wrote since; the referee reads the game
                again)."""
                nonlocal game_id, ledger_stuck
                deadline = None
                while True:
                    try:
                        if type_ == "game_started" and game_id is None:
                            ev = ledger.append(None, type_, data, ref_id, t)
                            game_id = ev.game_id
                            if on_start is not None:
                                on_start(game_id)
                            return ev
                        return ledger.append(game_id, type_, data, ref_id, t, after=after)
                    except LedgerUnwritable as exc:
                        # locked by another program (an SQLite browser with
                        # edits not saved): wait for it; one that stays
                        # locked, or cannot be written at all, stops the
                        # run, since a move the ledger missed makes every
                        # later one judged on the wrong board (a break-test,
                        # session 59: the claim became a referee item "refused
                        # by the rules", the next move an unearned penalty)
                        now = time.monotonic()
                        deadline = deadline if deadline is not None else now + LEDGER_LOCK_WAIT_S
                        if exc.busy and now < deadline:
                            time.sleep(1.0)
                            continue
                        ledger_stuck = True
                        at = f"frame {ref.status.frame}" if type_ != "game_started" else "the start"
                        kept = " (the events file keeps what was found)" if opened else ""
                        raise LedgerLost(f"{exc}{' for over ' + str(int(LEDGER_LOCK_WAIT_S)) + ' s' if exc.busy else ''}"
                                         f": the referee stopped at {at}, since a move the ledger misses would "
                                         f"have every later one judged on the wrong board{kept}") from None

            def game_history(after_id=0):
                """The game's events as the ledger holds them, those after
                ``after_id`` (the console may have written on it while the
                camera runs)."""
                if game_id is None:
                    return []
                if file_key(args.ledger) != ledger_key:
                    raise LedgerLost(f"the ledger {args.ledger} was deleted or replaced while the referee ran: its "
                                     f"later moves had nowhere to go, so it stopped at frame {ref.status.frame} (the "
                                     "events file keeps what was found)" if args.events_out else
                                     f"the ledger {args.ledger} was deleted or replaced while the referee ran: its "
                                     f"later moves had nowhere to go, so it stopped at frame {ref.status.frame}")
                try:
                    return ledger.events(game_id, after_id)
                except sqlite3.Error as exc:      # (the referee keeps its own copy of the game)
                    raise BadInput(f"cannot read the ledger {args.ledger}: {exc}") from None
            append = to_ledger
            history = game_history
            evidence_dir = evidence_dir or str(Path(args.ledger).with_suffix("")) + "-evidence"
        elif args.events_out and evidence_dir is None:
            evidence_dir = str(Path(args.events_out).with_suffix("")) + "-evidence"
        if evidence_dir and base is None:
            # the paths an events file names are read from the events file's
            # folder (they were relative to the evidence folder's parent, so
            # --evidence elsewhere gave paths that resolved nowhere)
            base = Path(args.events_out).resolve().parent if args.events_out else Path(evidence_dir).resolve().parent
        if evidence_dir and not Path(evidence_dir).exists():
            made_evidence = Path(evidence_dir)      # removed again if the run fails before any evidence
            # and the folders on its way (--evidence new/game/evidence left new/game/ behind)
            made_folders += missing_folders(str(made_evidence))
        # (a picture that cannot be written later is a note, once: the
        # game goes on; ``ref`` is made below, before any evidence is saved)
        evidence = EvidenceWriter(Path(evidence_dir), base,
                                  on_error=lambda m: ref.status.notes.append(
                                      f"{m}: the game goes on; an event whose pictures cannot be written has none"),
                                  frame_number=getattr(source, "file_frame", None)) if evidence_dir else None

        # (the mat's markers and the focal length held across the frames: PoseMemory)
        recognize_fn = PoseMemory(args.variant, layout, camera, classifier, spec, face_reader=reader,
                                  whole_deal=not getattr(args, "start_as_found", False))

        kinds: dict[str, int] = {}     # events by type, for the summary line

        def emit(obj):
            kinds[obj.get("type", "event")] = kinds.get(obj.get("type", "event"), 0) + 1
            if args.events_out:
                try:
                    line = dumps(obj)          # strict JSON (file names that are not UTF-8 as \xNN)
                except ValueError as exc:
                    raise BadInput(f"cannot write a {obj.get('type', 'referee')} event to {args.events_out}: "
                                   f"{exc}") from None
                f = events_file()
                at = f.tell()
                try:
                    rest = memoryview((line + "\n").encode("utf-8"))
                    while rest:
                        n = f.write(rest)
                        if not n:
                            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                        rest = rest[n:]
                except OSError as exc:
                    # the file ends on a whole line (a break-test, session 57:
                    # a full disk left half an event's JSON, and the line
                    # named no file)
                    try:
                        os.ftruncate(f.fileno(), at)
                        f.seek(at)
                    except OSError:
                        pass
                    raise BadInput(f"cannot write to --events-out {args.events_out}: {exc.strerror or exc} (the "
                                   "events written before stay whole)") from None
            if on_event is not None:
                on_event(obj)

        # (a game resumed is one under way: its picture is not its deal)
        settings = RefereeSettings(start_as_found=bool(getattr(args, "start_as_found", False)) or bool(resumed))
        mode = resumed_mode if resumed else args.mode

        def advise(frame):
            """``recognize``'s reading of the frame the game starts from, with its
            set-up advice (``advice``); a board whose faces look like another
            tile set's stops the run before the game is recorded (a whole game
            refereed with the wrong faces is worse than none), and so does a
            picture without colour (unless ``--tiles`` gives a profile)."""
            from companion.variants import find_variant
            from vision.reconstruct import NO_COLOUR_ADVICE, UNSURE_BELOW, recognize
            rec = recognize(frame, args.variant, layout, camera, classifier, spec, face_reader=reader)
            if reader is None and any(str(a).startswith(NO_COLOUR_ADVICE) for a in getattr(rec, "advice", ())):
                # the bundled classifier reads faces by colour as well as shape:
                # a black-and-white recording misreads about one face in eight
                raise WrongTileSet(
                    "the recording has no colour (black and white): faces are read by their colours as well as "
                    "their shapes (on grey pictures about one in eight is misread), so record in colour; "
                    "nothing was recorded")
            tiles = getattr(rec, "tiles", None)
            offset = next((str(a) for a in getattr(rec, "advice", ())
                           if str(a).startswith("the tiles stand half a tile off")), None)
            if offset is not None:
                # every slot's reading falls between two tiles: a game
                # refereed so would be scored on a board nobody laid
                raise WrongTileSet(f"in the picture the game would start from, {offset}; nothing was recorded")
            if tiles and not any(t.present and t.confidence >= UNSURE_BELOW for t in tiles):
                # a game starts from its deal: a picture with no tile surely on
                # the layout's slots is another layout's (or another mat's),
                # unless its faces are too small to read (a 160 x 90 video)
                small = next((str(a) for a in getattr(rec, "advice", ()) if str(a).startswith("tiles only")), None)
                if small is not None:
                    raise WrongTileSet(f"no tile stands for sure in the picture the game would start from: {small}; "
                                       "nothing was recorded")
                raise WrongTileSet(
                    f"no tile stands for sure on the slots of layout {layout.name!r} in the picture the game "
                    "would start from: check --layout (and --mat); nothing was recorded")
            if tiles and not settings.start_as_found:
                # a game refereed from its deal has a tile on every slot: many
                # slots read surely empty, and faces on mat cells the layout
                # does not use, are another layout's board (a newcomer's test,
                # session 58: the demo refereed as Cupid's Citadel charged 6
                # penalties no one earned, with exit 0)
                from vision.reconstruct import STRAY_MIN, stray_tiles
                empty = sum(1 for t in tiles if not t.present and t.confidence >= UNSURE_BELOW)
                if empty >= WRONG_LAYOUT_EMPTY_SHARE * len(tiles) and getattr(rec, "pose", None) is not None:
                    stray = stray_tiles(frame, args.variant, layout, spec, rec.pose, classifier)
                    if stray >= STRAY_MIN:
                        raise WrongTileSet(
                            f"{empty} of the {len(tiles)} slots of layout {layout.name!r} read empty in the picture "
                            f"the game would start from, and faces stand on {stray} mat cells where it has no slot: "
                            "the tiles are laid out another way; check --layout (and --mat), or give "
                            "--start-as-found for a game already under way; nothing was recorded")
            if getattr(rec, "looks_like", None) is not None:
                raise WrongTileSet(
                    f"the tiles look like {find_variant(rec.looks_like).title} tiles, not "
                    f"{find_variant(args.variant).title} ones (most faces read unsurely): check --variant "
                    f"(--variant {rec.looks_like}?); nothing was recorded")
            return rec           # its advice, and its reading of the board (--start-as-found)

        ref = Referee(args.variant, layout, players, recognize_fn, mode=mode, append=append, emit=emit,
                      evidence=evidence, fps=source.fps, advise=advise, settings=settings, history=history,
                      frame_number=getattr(source, "file_frame", None), resume=resumed)
        if getattr(source, "fps_assumed", False):
            # the referee's timings (hands away, a move's confirmation) count
            # frames: a folder taken at 10 a second read as 30 lost both
            # penalties of the demo and gave every claim to one player
            ref.status.notes.append(rate_note(source))
        elif getattr(source, "fps_from", ""):
            # a folder stating its own rate (a recording's truth.json): said,
            # as the rate decides the referee's timings
            ref.status.notes.append(f"the frames are taken as {source.fps:g} a second, as {source.fps_from} in the "
                                    "folder says: give --fps if they were taken at another rate")
        status = StatusLine(sys.stderr, enabled=not getattr(args, "quiet", False), total=source.length)
        t0 = time.perf_counter()
        frames = 0
        elapsed = 0.0
        last_frame = None
        mat_in_last = None
        stopped = False
        cut: BadInput | None = None   # a video cut short, or a frame that cannot be read
        try:
            try:
                stream = source.frames()
                try:
                    while True:
                        try:
                            index, frame = next(stream)
                        except StopIteration:
                            break
                        except BadInput as exc:
                            # a video cut short (VideoCutShort) or a frame that cannot be
                            # read: the frames before are judged as a whole video's
                            cut = exc
                            break
                        last_frame = frame
                        with deferred_sigint():     # a frame's events reach both outputs, or neither
                            ref.feed(index, frame)
                        frames += 1
                        status.notes(ref.status.notes)
                        status.show(ref.status, frames / max(1e-9, time.perf_counter() - t0))
                finally:
                    stream.close()            # (stops the frame decoder's thread)
            except KeyboardInterrupt:     # Ctrl+C: a live game ends so; a recording stops there
                stopped = True
            if not stopped or live:
                # the end of the game: a claim waiting for its confirmation is
                # decided, tiles still off the board are judged.  A recording
                # stopped by Ctrl+C leaves the move in progress undecided, so
                # its events are those the whole run writes up to there (a
                # break-test's stop in the middle of a pair put back recorded
                # an invalid claim and an item the whole run never wrote)
                with deferred_sigint():
                    ref.finish(stopped=stopped)
            if stopped:
                ref.status.state = "stopped"
        except BaseException:
            status.abandon()          # the error's own line follows on a line of its own
            raise
        elapsed = time.perf_counter() - t0
        interrupted = stopped and not live
        if (not ref.status.mat_seen and not ref.status.mat_missed and last_frame is not None
                and cut is None and not interrupted):
            # never still, so never judged: does the picture show the mat at all? (exit 3 or 2)
            try:
                recognize_fn(last_frame)
                mat_in_last = True
            except MatNotFound:
                mat_in_last = False
            except CompanionError:
                pass
        if getattr(source, "dropped", 0):
            got = frames + source.dropped
            ref.status.notes.append(f"the referee fell behind the camera and skipped {source.dropped} of its {got} "
                                    "frames (it judges the newest): a lower resolution or frame rate keeps up")
        if getattr(source, "damaged", None):
            ref.status.notes.append(damaged_note(source.damaged, getattr(source, "damaged_why", "")))
        if getattr(source, "rates", None):
            slow, fast = source.rates
            ref.status.notes.append(
                f"the video's frames come at a varying rate (about {slow:.3g} to {fast:.3g} a second, as phones "
                f"record): they are timed by their timestamps at its average of {source.fps:.4g} a second"
                + (f", {source.skipped} frames that came faster than that left out" if source.skipped else "")
                + "; each event names its frame's number in the file")
        if ref.status.mat_seen and cut is None and not interrupted:
            # (else the command fails with its own line: exit 3, 2 or 130)
            status.notes(ref.status.notes, end=True)
            if args.events_out:
                # a game without events: the file holds none (opened before
                # the summary line, which names an earlier file kept aside)
                events_file()
            status.done(ref.status, frames / max(1e-9, elapsed),
                        summary_line(frames, elapsed, kinds, ref.state, kept_as[0] if kept_as else None)
                        if getattr(args, "summary_line", True)
                        else "")
            kept = True
        else:
            status.abandon()
    finally:
        for f in opened:
            f.close()
        if not kept and made_evidence is not None:
            remove_if_empty(made_evidence)   # a failed run leaves no empty evidence folder behind
        if ledger is not None:
            # (a ledger another program holds locked is its too: never removed
            # under it, and its evidence stays with it; a break-test, session
            # 59, had a new ledger deleted while a lock held it)
            empty = not kept and made_ledger is not None and not ledger_stuck \
                and not _moves_recorded(ledger, game_id)
            ledger.close()
            if empty:
                remove_new_ledger(made_ledger)   # a failed run leaves no empty ledger behind
        elif made_ledger is not None and not kept:
            remove_new_ledger(made_ledger)       # SQLite made the file, then could not set it up
        if not kept:
            for folder in sorted(made_folders, key=lambda f: len(f.parts), reverse=True):
                remove_if_empty(folder)          # (deepest first) nor the empty folders made for them
    if cut is not None:
        raise cut
    return {"frames": frames, "seconds": elapsed, "fps": frames / max(1e-9, elapsed),
            "judged": ref.status.judged, "events": ref.status.events, "state": ref.state, "game_id": game_id,
            "stopped": stopped, "interrupted": interrupted, "mat_seen": ref.status.mat_seen,
            "mat_missed": ref.status.mat_missed, "mat_in_last": mat_in_last,
            "mirrored": _mirror_hint(last_frame, spec, camera) if not ref.status.mat_seen else "",
            "kept_as": kept_as[0] if kept_as else None}


def _mirror_hint(frame, spec, camera) -> str:
    """``vision.reconstruct.missing_mat_hint`` for the last frame read (or
    ""), so that a recording whose mat is never found says when it looks
    mirrored (a phone's front camera or a video call; a break-test's
    mirrored recording got only "the mat was not found"), small, very dark
    or mostly white, or shows the calibration board."""
    if frame is None:
        return ""
    from vision.reconstruct import missing_mat_hint
    try:
        return missing_mat_hint(frame, spec, camera)
    except Exception:       # a hint, never a failure of its own
        return ""


def _game_to_resume(ledger, args, layout, players) -> list:
    """The events of the game ``--resume`` names, checked against the run's
    options: the game is in the ledger, not ended, of ``--variant``, for
    ``--players`` (names as ``--player`` finds them), on slots of
    ``--layout`` (a game started as found holds some of them).

    Raises:
        BadInput: any of these does not hold (one line naming it).
    """
    from companion import game as G
    gid = ledger.find_game_id(args.resume)
    if gid is None:
        raise BadInput(f"--resume {args.resume}: no such game in {args.ledger} (companion game games --ledger "
                       f"{args.ledger} lists them)")
    events = ledger.events(gid)
    st = G.replay(events)
    if st.ended:
        raise BadInput(f"--resume {gid}: the game has ended ({st.end_reason}); start a new one, or void its end "
                       "in the console first")
    if st.setup.variant != args.variant:
        raise BadInput(f"--resume {gid}: the game is {st.setup.variant}, not {args.variant}: give --variant "
                       f"{st.setup.variant}")
    theirs = [G.name_key(n) for n in st.setup.players]
    if [G.name_key(n) for n in players] != theirs:
        raise BadInput(f"--resume {gid}: its players are {','.join(st.setup.players)}, in that order: give --players "
                       f"{','.join(st.setup.players)}")
    if not set(st.layout.slots) <= set(layout.slots):
        name = st.layout.name.removesuffix(" (as found)")
        raise BadInput(f"--resume {gid}: its slots are not those of --layout {args.layout}: give the layout it was "
                       f"started on ({name})")
    if args.mode is not None and args.mode != st.setup.mode:
        raise BadInput(f"--resume {gid}: the game's mode is {st.setup.mode}, not {args.mode}")
    return events


def _moves_recorded(ledger, game_id: str | None) -> bool:
    """Whether ``ledger`` holds anything but the start of this run's game
    ``game_id`` (None: not started): a run that fails or is stopped (Ctrl+C)
    after its game started, before any event was found, leaves a new ledger
    holding only its ``game_started``, which it removes as it removes an
    empty one (the line then says "before any event was found": a
    break-test's Ctrl+C 18 frames into a video left such a ledger behind).
    Another process's game in it keeps it."""
    return any(e.type != "game_started" or e.game_id != game_id for e in ledger.events())


def _check_outputs(args) -> None:
    """Refuse, before anything is opened for writing, outputs that would
    overwrite what is being read: ``--events-out`` and ``--ledger`` naming the
    video, a frame of the frame folder, the camera, mat, layout or profile
    file, or each other; ``--evidence`` naming the frame folder, or the same
    path as ``--events-out`` or ``--ledger``.

    Raises:
        BadInput: as above.
    """
    source = getattr(args, "SOURCE", None)
    source_path = Path(source) if source is not None and not (str(source).isascii() and str(source).isdigit()) \
        else None
    folder = str(source_path) if source_path is not None and source_path.is_dir() else None
    from vision.sources import IMAGE_SUFFIXES
    inputs = [str(source_path) if source_path is not None and source_path.is_file() else None,
              getattr(args, "camera", None), getattr(args, "mat", None), getattr(args, "tiles", None),
              args.layout if Path(args.layout).is_file() else None]
    if folder is not None:    # every frame, so a hard or symbolic link to one elsewhere is caught too
        inputs += [str(p) for p in Path(folder).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
    events_out, ledger = args.events_out or None, getattr(args, "ledger", None) or None
    if events_out and ledger and Path(events_out).resolve() == Path(ledger).resolve():
        raise BadInput(f"--events-out and --ledger both name {events_out}; give two files")
    for option, out, others in (("--events-out", events_out, inputs + [ledger]), ("--ledger", ledger, inputs)):
        if out:
            refuse_overwriting_inputs(option, out, others, folder, IMAGE_SUFFIXES)
    refuse_ledger_files("--events-out", events_out, ledger)
    evidence = getattr(args, "evidence", None)
    if evidence and folder is not None and Path(evidence).exists() and os.path.samefile(evidence, folder):
        raise BadInput(f"--evidence {evidence} is the folder of frames being read; give another folder")
    for option, out in (("--events-out", events_out), ("--ledger", ledger)):
        if evidence and out and Path(evidence).resolve() == Path(out).resolve():
            raise BadInput(f"--evidence and {option} both name {out}; give the evidence a folder of its own")


#: how the summary line names each kind of event, in this order
_KINDS = (("claim", "claim", "claims"), ("word", "word", "words"), ("penalty", "penalty", "penalties"),
          ("attempt", "attempt", "attempts"), ("reshuffle", "reshuffle", "reshuffles"),
          ("needs_referee", "item for the referee", "items for the referee"))


def summary_line(frames: int, seconds: float, kinds: dict, state, kept_as: str | None = None) -> str:
    """The one line a normal end prints: ``companion referee: 496 frames in
    4.2 s (118.1 fps); 11 events: 8 claims, 2 penalties, 1 attempt; scores:
    Ada 10,100, Bo 12,100``.

    Args:
        frames: frames read.  seconds: the time they took.
        kinds: events written, by type (``claim``, ``penalty``, ``attempt``,
            ``needs_referee``, others).
        state: the game's :class:`companion.game.GameState`, or None when no
            frame was judged (no game started).
        kept_as: the name an earlier events file was kept under
            (:func:`keep_earlier_events`), said at the end of the line.
    """
    n = sum(kinds.values())
    parts = [count(kinds[k], one, many) for k, one, many in _KINDS if kinds.get(k)]
    others = n - sum(kinds.get(k, 0) for k, _, _ in _KINDS)
    if others:
        parts.append(count(others, "other event"))
    line = (f"companion referee: {count(frames, 'frame')} in {seconds:.1f} s ({frames / max(1e-9, seconds):.1f} fps); "
            f"{count(n, 'event')}" + (f": {', '.join(parts)}" if parts else ""))
    if state is not None:
        line += "; scores: " + ", ".join(f"{p.name} {state.score(p):,}" for p in state.players)
    if kept_as:
        line += f"; the earlier events file was kept as {kept_as}"
    return line


class StatusLine:
    """One live line on a terminal: frame, progress bar (when the length is
    known), frames per second, settled or hand in view, tiles on the board,
    last event.

    On a terminal the line is redrawn in place at most 10 times a second.
    When the stream is not a terminal (a log, a test harness), nothing is
    printed while the run goes on, and one summary line when it ends
    normally: a run that fails leaves only the error's one line on stderr
    (../shared/CONTRACT.md, exit codes).
    """

    def __init__(self, stream, enabled: bool = True, total: int | None = None) -> None:
        self.stream = stream
        self.enabled = enabled
        self.total = total
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self._last = 0.0
        self._drawn = False
        self._noted = 0

    def notes(self, notes, end: bool = False) -> None:
        """Write the notes not written yet, one line each
        (``companion referee: note: ...``): on a terminal as they come (above
        the live line), elsewhere only at a normal end (``end``), so a run
        that fails still leaves only its error's line.  Written with
        ``--quiet`` too: they are advice on the set-up, not progress."""
        if self._noted >= len(notes) or not (self.tty or end):
            return
        try:
            for text in notes[self._noted:]:
                self.stream.write(("\r\x1b[2K" if self.tty and self._drawn else "")
                                  + f"companion referee: note: {text}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass
        self._noted = len(notes)
        self._drawn = False

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
        if not (self.enabled and self.tty):
            return
        now = time.monotonic()
        if now - self._last < 0.1:
            return
        self._last = now
        self.stream.write("\r\x1b[2K" + self.text(st, fps)[:200])
        self.stream.flush()
        self._drawn = True

    def abandon(self) -> None:
        """The run failed: end the live line, so the error starts a line of its own."""
        if self.enabled and self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()

    def done(self, st, fps: float, summary: str | None = None) -> None:
        """At a normal end: on a terminal the live line's last state, then
        ``summary`` (:func:`summary_line`); elsewhere ``summary`` alone (or
        the live line's text when it is None; nothing when it is ``""``, as
        for ``companion demo``, which prints its own summary on stdout).
        Where stderr cannot take it (a full disk, ``2>/dev/full``) the run's
        outputs stand and it is lost."""
        if not self.enabled:
            return
        try:
            if self.tty:
                self.stream.write("\r\x1b[2K" + self.text(st, fps) + "\n")
            if summary or (summary is None and not self.tty):
                self.stream.write((summary or self.text(st, fps)) + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass
