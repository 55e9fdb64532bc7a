"""``companion demo``: the main job on a bundled game (../shared/CONTRACT.md, ``demo``).

The bundled game is a recording rendered once by the scene generator
(:mod:`vision.synth.recording`) from a fixed seed: Love Mahjong's Affinity
Sprint for two players on the Turtle, with claims, two blocked tiles lifted
and put back, a non-matching pair put back, a pause and a camera nudge, hands
over the board in every move.  It is cached (``~/.cache/companion`` or
``--cache``) on first run.

The demo referees it exactly as ``companion referee`` does, into a fresh
ledger with evidence, and serves the scoreboard at a printed URL with a QR
code (and the referee's PIN) while the game plays at its own pace; the
server stays up after the recording ends until Ctrl+C (one Ctrl+C during
the recording stops both; exit 0).  ``--no-serve`` runs it to the end as
fast as possible and exits; a Ctrl+C before the end stops it as it stops
``companion referee`` on a folder (the events so far kept, exit 130).

The game scripts (:func:`script_game`) and the engine's record of the true
moves (:func:`true_events`) are also what bench/bench_referee.py scores the
referee against.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

from companion.commands.paths import check_can_write
from companion.errors import BadInput, Interrupted
from companion.wording import count

DEMO_VERSION = 2
DEMO_SEED = 20261129
DEMO_VARIANT = "love"
DEMO_LAYOUT = "turtle"
DEMO_MODE = "sprint"
DEMO_PLAYERS = ("Ada", "Bo")
DEMO_FPS = 10.0
DEMO_SIZE = (1280, 720)
DEMO_CLAIMS = 8


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="referee the bundled recorded game and serve the scoreboard")
    p.add_argument("--no-serve", action="store_true", help="run to the end of the recording and exit")
    p.add_argument("--events-out", metavar="FILE.jsonl", help="write the referee's events (JSON lines) to this file")
    p.add_argument("--host", default="0.0.0.0", help="scoreboard address (default 0.0.0.0: phones on the LAN can join)")
    p.add_argument("--port", type=int, default=8000, help="scoreboard port (default 8000; 0: any free port)")
    p.add_argument("--cache", metavar="DIR", help="folder for the rendered recording and the demo ledger "
                                                  "(default: ~/.cache/companion)")
    p.add_argument("--realtime", action="store_true", help="play the recording at its own pace even with --no-serve")
    p.add_argument("--quiet", action="store_true", help="no live status line and no summary line")
    p.set_defaults(func=_demo)


# --------------------------------------------------------------------------- scripted games

def script_game(variant: str, layout, seed: int, claims: int = 6, touches: int = 2, attempts: int = 1,
                players=DEMO_PLAYERS, words: int = 0) -> tuple[list[str], list]:
    """A deal and a move script for a recorded game.

    The deal is ``companion.session.deal_faces(variant, layout, seed * 100 + a)``
    for the first ``a = 0, 1, ...`` that allows the script; the script
    (:func:`make_script`, random generator ``[seed, a]``) holds ``claims``
    valid claims, ``touches`` blocked tiles lifted and put back, ``attempts``
    free non-matching pairs lifted and put back, one camera nudge and one
    pause, and in Word Mahjong ``words`` words.  Moves carry no player yet
    (see :func:`true_events`).

    Raises:
        BadInput: no deal allows the script within 50 tries; words outside
        Word Mahjong.
    """
    import numpy as np
    from companion.session import deal_faces
    if words and variant != "word":
        raise BadInput("words are played in Word Mahjong only")
    for a in range(50):
        faces = deal_faces(variant, layout, seed * 100 + a)
        try:
            return faces, make_script(variant, layout, faces, np.random.default_rng([seed, a]), claims,
                                      touches, attempts, words)
        except BadInput:
            continue
    raise BadInput(f"seed {seed}: no deal of {variant} on {layout.name} allows {claims} claims")


def make_script(variant: str, layout, faces, rng, claims: int = 6, touches: int = 2, attempts: int = 1,
                words: int = 0) -> list:
    """A random script, in random order: ``claims`` valid claims (free
    matching pairs), ``touches`` blocked tiles lifted and put back,
    ``attempts`` free non-matching pairs lifted and put back, one camera
    nudge, and a pause somewhere; in Word Mahjong also ``words`` words of 3
    to 5 free tiles (2.1 Rule 2), among those English uses most that the
    free tiles spell.

    A touched blocked tile is one pinched between neighbours but not covered:
    a covered tile cannot leave its slot without its cover moving first, and
    a camera above the table (or a referee standing by) never sees it.

    Raises:
        BadInput: the deal runs out of free pairs, non-matching pairs,
        pinched tiles or words first; words outside Word Mahjong.
    """
    from companion.rules import Board
    from companion.tiles import tileset
    from vision.synth.recording import Claim, Nudge, Pause, PutBack, SpellWord
    if words and variant != "word":
        raise BadInput("words are played in Word Mahjong only")
    board = Board(layout)
    key = {f.id: f.match for f in tileset(variant).faces}
    kinds = ["claim"] * claims + ["attempt"] * attempts + ["touch"] * touches + ["nudge"] + ["word"] * words
    order = [kinds[i] for i in rng.permutation(len(kinds))]
    out: list = []
    for kind in order:
        free = board.free_indices()
        if kind == "nudge":
            out.append(Nudge(tuple(float(v) for v in rng.uniform(-8, 8, 3) * [1, 1, 0.5]),
                             tuple(float(v) for v in rng.uniform(-0.8, 0.8, 3))))
        elif kind == "claim":
            groups: dict[str, list[int]] = {}
            for i in free:
                groups.setdefault(key[faces[i]], []).append(i)
            pairs = [g for g in groups.values() if len(g) >= 2]
            if not pairs:
                raise BadInput("no free matching pair left")
            g = pairs[int(rng.integers(len(pairs)))]
            a, b = (int(i) for i in rng.choice(g, 2, replace=False))
            board.remove(a)
            board.remove(b)
            out.append(Claim((layout.slots[a], layout.slots[b])))
        elif kind == "word":
            from companion import wordlist
            from companion.words import assign
            index = wordlist.index()
            freq = index.frequency or {}
            found = [w for w in index.find([faces[i] for i in free], limit=10 ** 9) if 3 <= len(w) <= 5]
            found = sorted(found, key=lambda w: -freq.get(w.lower(), 0))[:40]     # words players know
            if not found:
                raise BadInput("no word among the free tiles")
            w = found[int(rng.integers(len(found)))]
            idx = assign(w, [(int(i), faces[i]) for i in rng.permutation(free)])
            for i in sorted(idx, key=lambda i: -layout.slots[i].z):
                board.remove(i)
            out.append(SpellWord(tuple(layout.slots[i] for i in idx), w))
        elif kind == "attempt":
            cands = [(a, b) for a in free for b in free if a < b and key[faces[a]] != key[faces[b]]]
            if not cands:
                raise BadInput("no free non-matching pair")
            a, b = cands[int(rng.integers(len(cands)))]
            out.append(PutBack((layout.slots[a], layout.slots[b])))
        else:
            pinched = [i for i in board.present_indices() if not board.is_free(i) and board.n_cover[i] == 0]
            if not pinched:
                raise BadInput("no pinched tile to touch")
            out.append(PutBack((layout.slots[int(rng.choice(pinched))],)))
    k = int(rng.integers(1, len(out)))
    return out[:k] + [Pause(1.0)] + out[k:]


def true_events(variant: str, mode: str, layout, faces, moves, players=DEMO_PLAYERS):
    """Give each move its player by the engine's turn order and record the
    true moves through the engine the way the camera referee records what it
    sees: a claim; a penalty for each blocked tile lifted (Love 2.7); a touch
    for one free tile put back (2.9); an invalid attempt for a pair put back
    (Law 2).

    Returns:
        ``(moves with players, the ledger events of the true game)``.

    Raises:
        BadInput: a move the engine refuses (a broken script).
    """
    from companion import game as G
    from companion.claims import check_claim
    from vision.synth.recording import Claim, PutBack, SpellWord
    events: list = []

    def append(type_, data, ref, t):
        ev = G.Event(len(events) + 1, "truth", type_, data, ref, t)
        events.append(ev)
        return ev

    append("game_started", G.start_data(variant, mode, layout, list(faces), list(players)), None, 0.0)
    state = G.replay(events)
    out = []
    for m in moves:
        if not isinstance(m, (Claim, PutBack, SpellWord)):
            out.append(m)
            continue
        who = state.whose_turn()
        if who is None:
            raise BadInput("the game ended before the script did")
        m = replace(m, player=who)
        out.append(m)
        slots = [list(s) for s in m.slots]
        idx = [layout.slot_index(s) for s in m.slots]
        if isinstance(m, Claim):
            res = G.resolve_claim(state, who, slots, [faces[i] for i in idx])
            state, _ = G.commit(state, res.events, append)
            continue
        if isinstance(m, SpellWord):
            from companion import wordlist
            res = G.resolve_word(state, who, slots, m.word, wordlist.words(), [faces[i] for i in idx])
            state, _ = G.commit(state, res.events, append)
            continue
        blocked = [i for i in idx if not state.board.is_free(i)]
        for i in blocked:
            state, _ = G.commit(state, G.resolve_touch(state, who, list(layout.slots[i])).events, append)
        if len(idx) == 1 and not blocked:
            state, _ = G.commit(state, G.resolve_touch(state, who, slots[0]).events, append)
        elif len(idx) == 2:
            v = check_claim(state.board, faces, state.tiles, m.slots[0], m.slots[1])
            data = {"player": who, "slots": slots, "faces": [faces[i] for i in idx],
                    "code": v.code or "returned", "reason": v.reason}
            state, _ = G.commit(state, [G.Pending("invalid", data)], append)
    return out, events


# --------------------------------------------------------------------------- the demo

def cache_dir(arg: str | None = None) -> Path:
    """Where the demo keeps its recording and ledger."""
    if arg:
        return Path(arg)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "companion"


def _frames_whole(frames: Path, truth: dict) -> bool:
    """Whether the cached recording's folder holds every frame its truth
    counts, each a whole JPEG or PNG (its end marker there).  A break-test
    found one frame cut short made every later demo fail, and deleted
    frames went unnoticed (485 frames refereed of 496).

    Raises:
        OSError: the folder cannot be read.
    """
    files = sorted(p for p in frames.iterdir() if p.name.startswith("frame_"))
    if len(files) != int(truth["frames"]):
        return False
    for p in files:
        with open(p, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 12))
            tail = fh.read()
        if not (tail.endswith(b"\xff\xd9") or tail.endswith(b"IEND\xaeB`\x82")):
            return False
    return True


def ensure_recording(folder: Path, log=None) -> tuple[Path, dict]:
    """The bundled recording's folder of frames (rendered on first use) and its
    truth; progress goes to ``log`` (default: the current ``sys.stderr``).

    Raises:
        BadInput: the cache folder cannot be written.
    """
    log = log or sys.stderr
    rec_dir = folder / f"demo-v{DEMO_VERSION}"
    frames = rec_dir / "frames"
    truth_path = rec_dir / "truth.json"
    if truth_path.exists() and frames.is_dir():
        try:
            truth = json.loads(truth_path.read_text())
            if _frames_whole(frames, truth):
                return frames, truth
            print("companion demo: the cached recording is damaged (a frame missing or cut short): "
                  "rendering it again", file=log, flush=True)
        except (OSError, json.JSONDecodeError, TypeError, AttributeError, KeyError, ValueError):
            pass  # a half-written cache: render again
    from companion.codex import builtin
    from vision.synth.recording import write_recording
    from vision.synth.scene import SceneSpec
    import numpy as np

    try:
        if rec_dir.exists():
            shutil.rmtree(rec_dir)
        rec_dir.mkdir(parents=True)
    except OSError as exc:
        raise BadInput(f"cannot create the demo cache {rec_dir}: {exc.strerror}") from None
    log.write(f"companion demo: rendering the bundled game once into {rec_dir} (under a minute)...\n")
    log.flush()
    layout = builtin(DEMO_LAYOUT)
    faces, moves = script_game(DEMO_VARIANT, layout, DEMO_SEED, DEMO_CLAIMS)
    moves, _ = true_events(DEMO_VARIANT, DEMO_MODE, layout, faces, moves)
    spec = SceneSpec(DEMO_VARIANT, layout, removed=(), faces=tuple(faces), tilt_deg=(10.0, 25.0), upright=1.0,
                     fill=(0.8, 0.92), image_size=DEMO_SIZE)
    try:
        truth = write_recording(frames, DEMO_VARIANT, layout, moves, np.random.default_rng([DEMO_SEED, 1]),
                                DEMO_FPS, spec=spec, quality=88)
        tmp = rec_dir / "truth.json.part"
        tmp.write_text(json.dumps(truth))
        tmp.replace(truth_path)
    except OSError as exc:
        raise BadInput(f"cannot write the demo recording in {rec_dir}: {exc.strerror or exc}") from None
    return frames, truth


def _check_events_out(events_out: str | None, folder: Path) -> None:
    """Refuse an ``--events-out`` the demo would destroy or that would spoil
    its cache: empty, or anywhere in the cache folder (the recording, its
    truth, the demo's ledger and its SQLite files, the evidence), which the
    demo rewrites and deletes as it likes; or one that cannot be written
    (:func:`companion.commands.paths.check_can_write`), told before the
    recording is rendered and refereed, not after.

    Raises:
        BadInput: as above.
    """
    if events_out is None:
        return
    if not events_out.strip():
        raise BadInput("--events-out needs a file name, e.g. --events-out demo.jsonl")
    out = Path(events_out).resolve()
    cache = folder.resolve()
    if out == cache or cache in out.parents:
        raise BadInput(f"--events-out {events_out} lies in the demo's cache folder {folder}, which the demo "
                       "rewrites; give a file name outside it")
    check_can_write("--events-out", events_out)


def _demo(args) -> int:
    """Check the options and outputs before any work (rendering the
    recording takes a minute the first time), then run the demo."""
    if not 0 <= args.port <= 65535:
        raise BadInput(f"bad --port {args.port}: expected 0 to 65535")
    if args.cache is not None and not args.cache.strip():
        raise BadInput("--cache needs a folder name")
    folder = cache_dir(args.cache)
    _check_events_out(args.events_out, folder)
    sock = None
    if not args.no_serve:     # the address first, too: a port in use is told before any work
        from companion.web.serve import bind_socket
        try:
            sock = bind_socket(args.host, args.port)
        except OSError as exc:
            raise BadInput(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    try:
        return _run_demo(args, folder, sock)
    finally:
        if sock is not None:
            sock.close()      # (the server closes it too; closing twice does nothing)


def _run_demo(args, folder: Path, sock) -> int:
    """The demo once its options are checked (and its address bound to
    ``sock``, when it serves)."""
    from companion.commands.referee import interrupted_line, run_referee
    from vision.sources import open_source

    frames, truth = ensure_recording(folder)
    ledger_path = folder / "demo-ledger.sqlite"
    evidence = folder / "demo-evidence"
    try:
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(ledger_path) + suffix)
            if p.exists():
                p.unlink()
        if evidence.exists():
            shutil.rmtree(evidence)
        evidence.mkdir(parents=True)
    except OSError as exc:
        raise BadInput(f"cannot reset the demo ledger in {folder}: {exc.strerror or exc}") from None
    # SOURCE: the frames read, so an --events-out among them is refused
    # before anything is written (referee._check_outputs)
    ref_args = argparse.Namespace(
        SOURCE=str(frames),
        variant=DEMO_VARIANT, layout=DEMO_LAYOUT, map_name=None, players=",".join(DEMO_PLAYERS), camera=None,
        mat=None, mode=DEMO_MODE, tiles=None, events_out=args.events_out, ledger=str(ledger_path),
        evidence=str(evidence), quiet=args.quiet, summary_line=False)   # (the demo prints its own)
    server = None
    if not args.no_serve:
        from companion.commands.serve import app_config
        from companion.web.serve import start_background
        try:
            server = start_background(app_config(str(ledger_path), [str(evidence)]), args.host, args.port,
                                      announce=True, sock=sock)
        except OSError as exc:
            raise BadInput(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    source = open_source(str(frames), DEMO_FPS)
    if server is not None or args.realtime:
        source = Paced(source)
    try:
        # served, a Ctrl+C is how the demo ends; with --no-serve it stops the
        # recording before its end: exit 130, as the referee on a folder
        summary = run_referee(ref_args, source, live=server is not None)
        if summary["interrupted"]:
            raise Interrupted(interrupted_line(summary, source, args.events_out, str(ledger_path)))
        st = summary["state"]
        if st is not None and not args.quiet:
            scores = ", ".join(f"{p.name} {st.score(p):,}" for p in st.players)
            print(f"demo: refereed {count(summary['frames'], 'frame')} at {summary['fps']:.1f} fps, "
                  f"{count(summary['events'], 'event')}; scores: {scores}; ledger {ledger_path}", flush=True)
        if server is not None and not summary.get("stopped"):
            # (a Ctrl+C during the recording stops the referee, which judges what
            # it saw, and then the demo: one Ctrl+C is enough)
            print(f"demo: the recording has ended; the scoreboard stays up at {server.join_url or server.url}. Ctrl+C stops it.",
                  flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            server.stop()
    return 0


class Paced:
    """A source whose frames come no faster than its own rate (a live table)."""

    def __init__(self, source) -> None:
        self.source = source
        self.fps = source.fps
        self.length = source.length
        self.kind, self.name = source.kind, source.name

    def frames(self):
        t0 = time.monotonic()
        for i, frame in self.source.frames():
            wait = t0 + i / self.fps - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            yield i, frame
