"""``companion game ...``: play a game by hand on a ledger (a referee can run a
whole game from the terminal).

Thin shell: read the ledger, replay the game (:func:`companion.game.replay`),
ask the engine what a command means (``resolve_*``), append the events it
returns, print the result.  Every event is checked against a copy of the
state before it is written; the engine's automatic follow-ups (end-of-game
record, Zen Archives' reshuffle) are appended after it.

Time: ``--t SECONDS`` gives an event's time; without it the shell reads the
wall clock (``time.time()``), the only clock read in the game path.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import shlex
import sys
import time
from pathlib import Path

from companion import jsontext
from companion import game as G
from companion.cli import seed_value, word_arg
from companion.errors import BadInput, IllegalMove, Interrupted
from companion.session import check_typed_faces
from companion.layouts import Layout, Slot
from companion.tiles import VARIANTS
from companion.variants import find_variant
from companion.wording import count


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("game", help="play a game by hand on a ledger")
    gsub = p.add_subparsers(dest="game_command", metavar="ACTION")
    gsub.required = True

    def cmd(name: str, func, help: str, player: bool | str = False, game: bool = True,
            t: bool = True, json: bool = True) -> argparse.ArgumentParser:
        q = gsub.add_parser(name, help=help)
        q.add_argument("--ledger", required=True, help="the ledger file (SQLite)")
        if game:
            q.add_argument("--game", help="game id (default: the latest game)")
        if player:
            q.add_argument("--player", required=player is True, help="the player acting")
        if t:
            q.add_argument("--t", type=time_arg, help="event time in seconds (default: the wall clock)")
        if json:
            q.add_argument("--json", action="store_true", help="print the game state as JSON")
        q.set_defaults(func=func)
        return q

    q = cmd("start", _start, "start a game", game=False)
    q.add_argument("--game", help="game id (default: game-N)")
    q.add_argument("--variant", required=True, type=word_arg, choices=VARIANTS)
    q.add_argument("--mode", required=True, type=word_arg, help="; ".join(
        f"{v}: {', '.join(m.id for m in find_variant(v).modes)}" for v in VARIANTS))
    q.add_argument("--players", required=True, help="names in seat order, comma-separated")
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument("--layout", help="built-in name or a .layout/.map/.json path")
    src.add_argument("--deal", help="a deal JSON file (as printed by 'companion deal --json')")
    q.add_argument("--map-name", help="map to read from a GNOME .map file holding several")
    q.add_argument("--seed", type=seed_value, help="deal seed (with --layout; left out, one is picked and said on stderr): the tiles of `companion deal --seed N --solvable` (with --random, of `deal --seed N`); with --deal, only the seed the game's Zen Reshuffles draw from")
    q.add_argument("--random", action="store_true", help="a plain random deal, not a solvable one")
    q.add_argument("--difficulty", help="Mindful: easy, normal, hard or expert (Zen Reshuffles 3/2/1/0)")
    q.add_argument("--turn-limit", type=int, help="Solo Quest turn limit")
    q.add_argument("--level", type=int, help="Scholar's Path level")
    q.add_argument("--target-seconds", type=int, help="Word quill target time")
    q.add_argument("--countdown-seconds", type=int, help="Word Sprint starting clock")
    q.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other mode option (VALUE read as JSON when it parses)")

    q = cmd("claim", _claim, "claim a pair by slots", player=True)
    q.add_argument("slots", nargs=2, metavar="x,y,z")
    q.add_argument("--faces", help="faces seen, comma-separated (when the game does not know them)")
    q.add_argument("--over-record", action="store_true",
                   help="lay --faces over faces the ledger records (the table shows otherwise); without it a "
                        "typed face unlike the record is refused")

    q = cmd("touch", _touch, "a tile was touched (Love/Candy, Mindful duels: it must be in the next pair; "
            "blocked: penalty)", player=True)
    q.add_argument("slot", metavar="x,y,z")

    q = cmd("word", _word, "Word Mahjong: submit a word, tiles in spelling order", player=True)
    q.add_argument("--word", required=True)
    q.add_argument("slots", nargs="+", metavar="x,y,z")
    q.add_argument("--faces", help="faces seen, comma-separated (when the game does not know them)")
    q.add_argument("--over-record", action="store_true",
                   help="lay --faces over faces the ledger records (the table shows otherwise)")

    cmd("pass", _pass, "end the turn", player=True)

    q = cmd("meld", _meld, "lay a pong or chow from the rack (Hand Builder)", player=True)
    q.add_argument("--kind", required=True, type=word_arg, choices=("pong", "chow"))
    q.add_argument("--faces", required=True, help="three face ids, comma-separated")

    q = cmd("steal", _steal, "\"Passion Pong!\" / \"Sugar Pong!\": steal the tile just claimed", player=True)
    q.add_argument("--from", dest="victim", help="the player who claimed it (checked)")

    cmd("declare", _declare, "declare a 14-tile hand (Hand Builder)", player=True)
    cmd("hint", _hint, "a hint (Mindful: a Zen Focus token; Word: a Wisdom Lantern)", player=True)
    q = cmd("reshuffle", _reshuffle, "a solvable reshuffle (Mindful Zen Reshuffle; Word Lexicon Fan)",
            player=True)
    q.add_argument("--seed", type=seed_value, help="reshuffle seed (default: from the game's seed)")
    cmd("undo", _undo, "take back the last move (Word: the Ink Eraser)", player="optional")

    q = cmd("correct", _correct, "referee correction of an event (the original stays)")
    q.add_argument("event_id", type=int)
    q.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a data field to replace (VALUE read as JSON when it parses)")
    q.add_argument("--player", help="new player")
    q.add_argument("--type", dest="etype", help="new event type (claim, invalid, penalty, touch, pass)")
    q.add_argument("--slots", nargs="+", metavar="x,y,z", help="new slots")
    q.add_argument("--faces", help="new faces, comma-separated")
    q.add_argument("--word", help="new word")
    q.add_argument("--reason", default="", help="why: one line of plain text, at most 300 characters (kept in the ledger)")

    q = cmd("void", _void, "referee: make an event not count (the original stays)")
    q.add_argument("event_id", type=int)
    q.add_argument("--reason", default="", help="why: one line of plain text, at most 300 characters (kept in the ledger)")

    q = cmd("end", _end, "referee: end the game now (--reason abandoned, no-moves or time-up)")
    # (required, as the console's End asks for its reason: without one the
    # game ended as abandoned, with no end scoring and no winner, where the
    # board may have had no moves left; a docs audit, session 59)
    q.add_argument("--reason", required=True, type=word_arg, choices=("abandoned", "no-moves", "time-up"),
                   help="abandoned: no end scoring, no winner; no-moves: the board has no move left (refused "
                        "while one remains); time-up: a Word Sprint's clock ran out")
    cmd("tick", _tick, "Word Sprint: end the game if the countdown has run out by --t")
    cmd("show", _show, "the game's state", t=False)
    cmd("ledger", _ledger_cmd, "every event of the game", t=False)
    # (no --json: the export's form is --format; a break-test's --json was
    # taken and ignored)
    q = cmd("export", _export, "export a game's ledger", t=False, json=False)
    q.add_argument("--format", required=True, type=word_arg, choices=("csv", "json"))
    q.add_argument("--out", help="file to write (default: stdout)")
    q = cmd("campaign", _campaign, "Scholar's Path progress of a player", player=True, game=False, t=False)
    cmd("games", _games, "list the games in a ledger", game=False, t=False)


# --------------------------------------------------------------------------- plumbing


class _Session:
    """One command on one game: the command line's shell round
    :class:`companion.session.GameSession` (the ledger named by ``--ledger``,
    the clock or ``--t``, the word list only for commands that need it), which
    also collects what the command wrote to print it."""

    def __init__(self, args, need_words: bool = False) -> None:
        from companion.session import GameSession, NoGame
        self.args = args
        self.ledger = _existing_ledger(args.ledger)
        t = args.t if getattr(args, "t", None) is not None else time.time()
        try:
            self.game = GameSession(self.ledger, getattr(args, "game", None), t,
                                    _load_words if need_words else None)
        except NoGame as e:
            self.ledger.close()
            raise BadInput(f"{args.ledger}: {e}") from None
        except BaseException:
            self.ledger.close()
            raise
        self.written: list = []
        self.warnings: list[str] = []
        try:
            self._check_clock(args)
        except BaseException:
            self.ledger.close()
            raise

    def _check_clock(self, args) -> None:
        """A Word Mahjong game's clock counts (its timer, Word Sprint's
        countdown, the quills' focus time): a game started with a small
        ``--t`` (seconds from any start) read against the wall clock, or the
        other way round, would end at once or time years.

        Raises:
            BadInput: the command's clock is not the game's.
        """
        if not hasattr(args, "t"):
            return
        from companion.session import abandon_time, clock_refusal
        if getattr(args, "func", None) is _end and getattr(args, "reason", None) == "abandoned":
            self.game.t = abandon_time(self.game.state, self.game.t)
        why = clock_refusal(self.game.state, self.game.t, args.t is not None)
        if why:
            raise BadInput(why)

    def close(self) -> None:
        self.ledger.close()

    def tick(self) -> None:
        """End a Word Sprint whose countdown ran out before this command."""
        self.commit(G.tick(self.game.state, self.game.t))

    def commit(self, pendings) -> None:
        self.written += self.game.commit(pendings)

    def finish(self, outcome: G.Outcome | None = None) -> int:
        """Print what was written and the scores; raise the outcome's error."""
        evs = self.ledger.events(self.game.game_id)
        st = G.replay(evs, words=self.game.words)
        if self.args.json:
            from companion.cli import print_json
            print_json(G.state_json(evs, words=self.game.words))
        else:
            for ev in self.written:
                ent = st.entries.get(ev.id)
                print(f"#{ev.id} {ev.type}: {ent.text if ent else G.brief(ev, st.tiles)}")
            # a ledger of several games: the move went to the newest unless
            # --game said otherwise, so the line names the game it went to
            named = not getattr(self.args, "game", None) and self.ledger.game_count() > 1
            print((f"{self.game.game_id}: " if named else "") + _summary(st))
        for w in self.warnings:
            sys.stderr.write(f"companion game: warning: {w}\n")
        self.close()
        if outcome is not None and outcome.error:
            ids = ", ".join(f"#{e.id}" for e in self.written)
            raise IllegalMove(outcome.error + (f" (recorded as event {ids})" if ids else ""))
        return 0


def _existing_ledger(path):
    """The ledger at ``path``, which must exist: every command but ``start``
    works on a game already there, and a mistyped path must not leave a new,
    empty ledger behind, nor a failed command turn an empty file into one.

    Raises:
        BadInput: no file at ``path``, an empty file, or not a ledger (the
            file is left as it was).
    """
    from companion.ledger import Ledger
    if not Path(path).exists():
        raise BadInput(f"no ledger at {path}: 'companion game start --ledger {path} ...' makes one")
    return Ledger(path, create=False)


def _load_words():
    from companion import wordlist
    return wordlist.words(), wordlist.index()


def _summary(st: G.GameState) -> str:
    if st.rules.scored(st.mode):
        line = "scores: " + " | ".join(f"{p.name} {st.score(p):,}" for p in st.players)
    else:
        # Word 2.6.3 Zen Archives: "zero timers or score counters" (a
        # break-test's players were shown "scores: Ada 0 | Bo 0" after every move)
        line = f"no scores in {st.mode.title}"
    if st.ended:
        win = st.winners()
        line += f"; game over ({st.end_reason})" + (f", winner: {', '.join(win)}" if win else "")
        if st.result.get("stars"):
            line += f", {count(st.result['stars'], 'star')}"
        if "quills" in st.result:
            line += f", {count(st.result['quills'], 'quill')}"
    else:
        line += f"; turn: {st.whose_turn()}; tiles left {st.board.n_present}; free pairs {st.free_matches()}"
    return line


def _run(args, fn, need_words: bool = False, tick: bool = True, target: int | str | None = None) -> int:
    """Run one command; ``target``: the event a correction or void acts on,
    or ``"undo"`` for the one an undo takes back, whose knock-on effects (other events that stop counting, count
    again or score differently: :func:`companion.game.knock_on`) are printed
    as ``companion game: warning: ...`` lines on stderr."""
    s = _Session(args, need_words)
    before = s.game.state
    if target == "undo":
        target = G.undo_target(before)
    from companion.stopping import deferred_sigint
    try:
        with contextlib.ExitStack() as held:
            return _run_in(s, fn, tick, target, before, lambda: held.enter_context(deferred_sigint()))
    except KeyboardInterrupt:
        s.close()
        if s.written:
            # a Ctrl+C while the move was written and printed waited for the
            # end: one just after the write said only "interrupted", and a
            # re-run of undo took back a second move (a break-test, session 57)
            raise Interrupted(f"interrupted after event {', '.join(f'#{e.id}' for e in s.written)} was recorded: "
                              "it stands (companion game show --ledger ... shows the game)") from None
        raise


def _run_in(s, fn, tick: bool, target, before, hold) -> int:
    """:func:`_run`'s work on the session ``s``; ``hold()`` holds a Ctrl+C
    from the move's writing on until the command's end."""
    try:
        if tick:
            s.tick()
        outcome = fn(s)
        if outcome is not None:
            hold()
            s.commit(outcome.events)
    except BadInput as exc:
        if s.written:
            # refused after the countdown's end was written (a move past a
            # Word Sprint's time): the end and the final scores are shown,
            # and the line names the event, as a penalty's refusal does
            return s.finish(G.Outcome((), error=str(exc)))
        s.close()
        raise
    except BaseException:
        s.close()
        raise
    if target is not None:
        after = s.game.state
        item = after.needs.get(target)
        if any(e.type == "correction" for e in s.written) and item is not None and item.get("rejected"):
            why = str(item.get("reason") or "").split(": ", 1)[-1]
            s.warnings.append(f"event #{target} no longer fits the board ({why}): it does not count "
                              "until it is corrected again or voided")
        if any(e.type == "correction" and "faces" in (e.data.get("changes") or {}) for e in s.written):
            s.warnings += G.face_conflicts(after, target)
        skip = {e.id for e in s.written} | {e.ref for e in s.written if e.ref is not None} | {target}
        s.warnings += G.knock_on(before, after, skip)
    return s.finish(outcome)


def _value(text: str):
    try:
        return jsontext.loads(text)
    except json.JSONDecodeError:
        return text


def _kv(items) -> dict:
    out = {}
    for item in items:
        if "=" not in item:
            raise BadInput(f"bad KEY=VALUE {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = _value(v)
    return out


def _faces(text: str | None, tiles=None) -> list[str] | None:
    """``--faces`` as a list of face ids (None when not given); with the
    game's ``tiles`` (:class:`companion.tiles.TileSet`), a face typed in
    another case or by its name is taken for its id, as the console takes
    it (:meth:`companion.tiles.TileSet.typed_id`; a break-test, session 57:
    ``SEASON-AUTUMN`` was "unknown face", where the README says the
    console's any-case faces are as ``game --faces``).

    Raises:
        BadInput: an empty item (``--faces ,`` was taken as no faces given).
    """
    if text is None:
        return None
    faces = [f.strip() for f in text.split(",")]
    if not all(faces):
        raise BadInput(f"bad --faces {text!r}: give face ids separated by commas, e.g. --faces hearts-1,hearts-1")
    return faces if tiles is None else [tiles.typed_id(f) for f in faces]


# --------------------------------------------------------------------------- start


def _note_sprint_layout(variant: str, mode: str, layout) -> None:
    """A note on stderr when a Love/Candy Sprint starts on a layout of more
    than two layers: the book's set-up is "a flat or 2-layer 144-tile
    layout" (2.6.2), but a table may choose another one, and the scoring does
    not depend on it (docs/RULES.md 2.6); and when a Solo Quest starts on a
    flat one (2.6.3: "clear complex 3D romantic layouts")."""
    rules = find_variant(variant)
    m = rules.mode(mode)
    layers = max(s.z for s in layout.slots) + 1
    if rules.name in ("love", "candy") and m.kind == "sprint" and layers > 2:
        sys.stderr.write(f"companion game: note: {m.title}'s set-up in the {rules.title} book is a flat or 2-layer "
                         f"layout (2.6.2); {layout.name!r} has {layers} layers (played all the same)\n")
    elif rules.name in ("love", "candy") and m.kind == "solo" and layers == 1:
        sys.stderr.write(f"companion game: note: {m.title} in the {rules.title} book clears \"complex 3D\" "
                         f"layouts (2.6.3); {layout.name!r} is flat (played all the same)\n")


def _note_deal_layout(path: str, layout) -> None:
    """A note on stderr when a deal names a built-in layout (``"layout":
    "turtle"``) but its tiles stand on other slots: the deal's own slots are
    played, and its name is only a name (a break-test, session 49: a
    two-tile deal called "turtle" started "on turtle (2 tiles)" unsaid)."""
    from companion.codex import BUILTIN_NAMES, builtin
    if layout.name not in BUILTIN_NAMES:
        return
    named = builtin(layout.name)
    if set(named.slots) != set(layout.slots):
        sys.stderr.write(f"companion game: note: deal {path} names layout {layout.name!r}, but its "
                         f"{len(layout)} tiles stand on other slots than the built-in {layout.name!r} "
                         f"({len(named)} slots): the deal's own slots are played\n")


#: the latest event time accepted, seconds (the year 5138 on the wall clock)
MAX_EVENT_T = 1e11


def time_arg(text: str) -> float:
    """``--t``: an event time in seconds, a finite number from 0 to
    :data:`MAX_EVENT_T` (a clock of seconds, the wall clock's or any other).

    Raises:
        argparse.ArgumentTypeError: not a number, not finite, negative or later.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a time in seconds, not {text!r}") from None
    if not 0.0 <= value <= MAX_EVENT_T:
        raise argparse.ArgumentTypeError(f"expected a time from 0 to {MAX_EVENT_T:.0e} seconds, not {text}")
    return value


def _read_deal(path: str) -> tuple[str | None, Layout, list[str | None]]:
    from companion.deals import slot_from_json
    from companion.files import read_json_file
    p = Path(path)
    layout_instead = (f"{path} is a layout, not a deal: give it with --layout {path} --seed N (the seed picks "
                      "the deal), or make a deal from it with companion deal")
    if p.suffix.lower() in (".layout", ".map"):
        raise BadInput(layout_instead)
    obj = read_json_file(p, "deal file")
    tiles = obj.get("tiles") if isinstance(obj, dict) else None
    if isinstance(obj, dict) and tiles is None and isinstance(obj.get("slots"), list):
        raise BadInput(layout_instead)
    if not isinstance(tiles, list) or not all(isinstance(t, dict) for t in tiles):
        raise BadInput(f"{path}: a deal needs tiles: [{{slot: [x, y, z], face: id}}, ...]")
    # slots as strict as `solve` reads them, so a game never starts on a board
    # no claim could name
    slots = [slot_from_json(t.get("slot"), f"{path}: tiles[{k}].slot") for k, t in enumerate(tiles)]
    faces = [t.get("face") for t in tiles]
    return obj.get("variant"), Layout(str(obj.get("layout") or p.stem), tuple(slots), path), faces


def _start(args) -> int:
    from companion.ledger import Ledger
    if args.deal:
        from companion.commands.engine import refuse_unplayable
        from companion.deals import check_faces
        if args.random:
            raise BadInput("--random picks a new deal, so it cannot go with --deal (which gives the deal); "
                           "give one of them")
        variant, layout, faces = _read_deal(args.deal)
        refuse_unplayable(layout, f"{args.deal}: ")
        if variant is not None and str(variant).lower() != args.variant:
            raise BadInput(f"deal {args.deal} is for {variant}, not {args.variant}")
        # as strictly as `solve` reads a deal: no face more often than the set holds it
        try:
            check_faces(args.variant, faces, len(layout), args.deal, allow_none=True)
        except BadInput as exc:
            raise BadInput(f"{args.deal}: {exc}") from None
        _note_deal_layout(args.deal, layout)
        seed = args.seed      # (the game's seed all the same: Zen Reshuffles draw from it)
    else:
        if args.seed is None:
            # a club wants a new deal, not a number to think of: one is picked
            # and said, so the deal can be shown (a newcomer's test, session
            # 59, was refused "--seed is required"); the engine itself stays
            # seeded
            import secrets
            args.seed = secrets.randbelow(1_000_000)
            sys.stderr.write(f"companion game: note: no --seed given: dealt with seed {args.seed} (`companion "
                             f"deal --variant {args.variant} --layout {shlex.quote(str(args.layout))} --seed "
                             f"{args.seed}{'' if args.random else ' --solvable'}` shows which face is where)\n")
        from companion.layout_files import load_layout
        from companion import deals
        layout = load_layout(args.layout, args.map_name)
        t0 = time.perf_counter()
        deal = (deals.random_deal if args.random else deals.solvable_deal)(args.variant, layout, args.seed)
        from companion.commands.engine import slow_core_note
        slow_core_note("game start", time.perf_counter() - t0)
        faces, seed = list(deal.faces), args.seed
    opts = _kv(args.option)
    for key in ("difficulty", "turn_limit", "level", "target_seconds", "countdown_seconds"):
        if getattr(args, key) is not None:
            if key in opts and opts[key] != getattr(args, key):
                raise BadInput(f"--{key.replace('_', '-')} {getattr(args, key)} and --option {key}="
                               f"{json.dumps(opts[key])} disagree: give one of them")
            opts[key] = getattr(args, key)
    players = [n.strip() for n in args.players.split(",")]
    data = G.start_data(args.variant, args.mode, layout, faces, players, seed, opts)
    t = args.t if args.t is not None else time.time()
    gid = None if args.game is None else G.check_game_id(args.game)      # before the ledger is opened
    from companion.commands.paths import make_parent_folder, missing_folders, remove_if_empty, remove_new_ledger
    made_folders = missing_folders(args.ledger)
    make_parent_folder("--ledger", args.ledger)      # a new ledger's folder is made, as for every output
    new_ledger = not os.path.lexists(args.ledger)
    try:
        with Ledger(args.ledger) as led:
            level = data.get("options", {}).get("level") if args.mode == "scholars-path" else None
            past = ([led.events(g["game_id"]) for g in led.games()]
                    if level is not None and len(players) == 1 else None)
            # the id picked (or a given one checked) as the event is written: two
            # starts at once never share a game
            ev = led.append(gid, "game_started", data, None, t)
            evs = led.events(ev.game_id)
    except BadInput:
        if new_ledger:
            # SQLite made the file, then could not write it (a full disk): a
            # start that fails leaves no empty or half-made ledger behind
            # (nor the folders made for it), as `referee --ledger` and `serve`
            remove_new_ledger(Path(args.ledger))
            for folder in made_folders:
                remove_if_empty(folder)
        raise
    _note_sprint_layout(args.variant, args.mode, layout)        # once started: a refusal stays one line
    if past is not None:
        nxt = G.campaign_progress(past, players[0])["next_level"]
        if level > nxt:
            # Word 2.8 "unlocking the next layout on the map": a level past
            # the next is played all the same (the ledger may not hold every
            # game the scholar played), with a note
            sys.stderr.write(f"companion game: note: level {level} is not unlocked yet in this ledger: "
                             f"{players[0]}'s next level is {nxt} (played all the same)\n")
    # a deal with no move at all ends as it starts, with its record (Love/Candy
    # 2.8 "No Valid Moves Stalemate"; Mindful 2.8 "Grid Stagnation"; Word 2.8
    # "No Playable Moves", whose check needs the dictionary: docs/RULES.md
    # 1.3, 4.5), as after any move (Zen Archives: its automatic reshuffle)
    follow = []
    with Ledger(args.ledger) as led:
        from companion.session import GameSession
        sess = GameSession(led, ev.game_id, t, _load_words if args.variant == "word" else None)
        start_ev = next(e for e in sess.state.raw if e.id == ev.id)
        pend = G.followups(sess.state, start_ev, sess.index)
        if pend:
            follow = sess.commit(pend)
        evs = led.events(ev.game_id)
        words = sess.words
    st = G.replay(evs, words=words)
    if args.json:
        from companion.cli import print_json
        print_json(G.state_json(evs, words=words))
    else:
        print(f"#{ev.id} game_started: {ev.game_id}: {G._start_text(st)}")
        for e in follow:
            entry = st.entries.get(e.id)
            print(f"#{e.id} {e.type}: {entry.text if entry is not None else ''}")
        print(_summary(st))
    return 0


# --------------------------------------------------------------------------- play


def _claim(args) -> int:
    def go(s):
        faces = _faces(args.faces, s.game.state.tiles)
        check_typed_faces(s.game.state, args.slots, faces, args.over_record)
        return G.resolve_claim(s.game.state, args.player, args.slots, faces)
    return _run(args, go, need_words=True)


def _touch(args) -> int:
    return _run(args, lambda s: G.resolve_touch(s.game.state, args.player, args.slot), need_words=True)


def _word(args) -> int:
    def go(s):
        if s.game.words is None:
            raise BadInput("words are played in Word Mahjong only")
        faces = _faces(args.faces, s.game.state.tiles)
        check_typed_faces(s.game.state, args.slots, faces, args.over_record)
        return G.resolve_word(s.game.state, args.player, args.slots, args.word, s.game.words, faces)
    return _run(args, go, need_words=True)


def _pass(args) -> int:
    return _run(args, lambda s: G.resolve_simple(s.game.state, "pass", args.player), need_words=True)


def _meld(args) -> int:
    return _run(args, lambda s: G.resolve_simple(s.game.state, "meld", args.player, kind=args.kind,
                                                 faces=_faces(args.faces, s.game.state.tiles) or []))


def _steal(args) -> int:
    extra = {"from": args.victim} if args.victim else {}
    return _run(args, lambda s: G.resolve_simple(s.game.state, "steal", args.player, **extra))


def _declare(args) -> int:
    return _run(args, lambda s: G.resolve_simple(s.game.state, "declare", args.player))


def _hint(args) -> int:
    from companion.commands.engine import slow_core_note
    t0 = time.perf_counter()
    code = _run(args, lambda s: G.resolve_hint(s.game.state, args.player, s.game.index), need_words=True)
    slow_core_note("game hint", time.perf_counter() - t0)
    return code


def _reshuffle(args) -> int:
    return _run(args, lambda s: G.resolve_reshuffle(s.game.state, args.player, args.seed, index=s.game.index),
                need_words=True)


def _undo(args) -> int:
    return _run(args, lambda s: G.resolve_undo(s.game.state, args.player), need_words=True, tick=False,
                target="undo")


def _correct(args) -> int:
    changes = _kv(args.set)
    if args.player:
        changes["player"] = args.player
    if args.etype:
        changes["type"] = args.etype
    if args.slots:
        changes["slots"] = [list(Slot.parse(x)) for x in args.slots]
    if args.faces:
        changes["faces"] = _faces(args.faces)
    if args.word is not None:           # (--word "": refused as no word, not as nothing to change)
        changes["word"] = args.word

    def go(s):
        if args.faces:
            changes["faces"] = _faces(args.faces, s.game.state.tiles)
        return G.resolve_correction(s.game.state, args.event_id, changes, False, args.reason, s.game.events)
    return _run(args, go, need_words=True, tick=False, target=args.event_id)


def _void(args) -> int:
    return _run(args, lambda s: G.resolve_correction(s.game.state, args.event_id, None, True, args.reason,
                                                     s.game.events), need_words=True, tick=False,
                target=args.event_id)


def _end(args) -> int:
    return _run(args, lambda s: G.resolve_end(s.game.state, args.reason, s.game.index), need_words=True, tick=False)


def _tick(args) -> int:
    return _run(args, lambda s: None, need_words=True)


# --------------------------------------------------------------------------- views


def _show(args) -> int:
    s = _Session(args, need_words=True)
    try:
        obj = G.state_json(s.game.events, words=s.game.words)
    finally:
        s.close()
    if args.json:
        from companion.cli import print_json
        print_json(obj)
        return 0
    print(f"{obj['game_id']}: {obj['variant_title']}, {obj['mode_title']}, layout {obj['layout']}")
    for p in obj["players"]:
        extra = f", rack {' '.join(p['rack'])}" if p["rack"] else ""
        if p["melds"]:
            extra += ", melds " + "; ".join(f"{m['kind']} {' '.join(m['faces'])}" for m in p["melds"])
        if p["words"]:
            extra += f", words {' '.join(p['words'])}"
        extra += _tools_text(obj, p)
        scored = obj["mode"] != "zen-archives"         # Word 2.6.3: "zero timers or score counters"
        print(f"  {p['name']}" + (f": {p['score']:,}{extra}" if scored else (f":{extra[1:]}" if extra else "")))
    print(f"tiles left {obj['tiles_left']}/{obj['tiles_total']}, free pairs {obj['free_matches_left']}, "
          + (f"game over ({obj['end_reason']}), winner: {obj['winner'] or ', '.join(obj['winners']) or 'none'}"
             if obj["ended"] else f"turn: {obj['turn']}") + _clock_text(obj))
    for item in obj["needs_referee"]:
        print(f"  needs the referee: #{item['id']} {item['reason']}")
    return 0


def _tools_text(obj: dict, p: dict) -> str:
    """What a player still holds of the mode's tools, for ``show``: Mindful's
    Zen Focus tokens (2.2 "2 Zen Focus Tokens (Hints/Reshuffles)", each
    +500 unspent at the end, 2.7), and Word Mahjong's boosters used of the
    game's limits (2.5 Wisdom Lantern, Lexicon Fan, Ink Eraser; the quills
    count them, 2.7).  A break-test's Mindful and Word players could not
    see them without ``--json``."""
    if obj["variant"] == "mindful":
        return f", Zen Focus tokens {p['tokens']}"
    if obj["variant"] == "word" and obj["mode"] != "zen-archives":
        limits = obj["options"].get("limits") or {}
        used = [(p["hints"], limits.get("hints"), "hints"), (p["reshuffles"], limits.get("reshuffles"), "Lexicon Fans"),
                (p["undos"], limits.get("undos"), "Ink Erasers")]
        return ", " + ", ".join(f"{name} {n}" + (f" of {top}" if top is not None else "") for n, top, name in used)
    return ""


def _clock_text(obj: dict) -> str:
    """The mode's measure of the game, for ``show``: a Solo Quest's turns of
    its limit and, at the end, its stars (Love/Candy 2.6.3 "within a set turn
    limit", "3-star ... ratings"); Mindful's Zen Reshuffles left (Law 4);
    Word Mahjong's countdown left or time taken and, at the end, its quills
    (2.6.2, 2.7).  Before, ``show`` said none of these, though they decide
    how the game ends and how it is rated."""
    parts = []
    opts, res = obj["options"], obj["result"] or {}
    if obj["mode"] == "solo-quest":
        used, limit = obj["turns_used"], opts.get("turn_limit")
        left = f" ({max(0, int(limit) - int(used))} left)" if isinstance(limit, int) and not obj.get("ended") else ""
        parts.append(f"turns {used} of {limit}{left}")      # (as the console says it)
        if "stars" in res:
            parts.append(count(res["stars"], "star"))
    if obj["variant"] == "mindful":
        # both limits (docs/RULES.md 3.2): the session's, by difficulty, and
        # the Zen Focus tokens the players still hold
        left = max(0, int(opts.get("reshuffles", 0)) - int(obj["reshuffles"]))
        held = sum(int(p["tokens"] or 0) for p in obj["players"])
        # a stagnation with reshuffles left: none could help (docs/RULES.md
        # 3.2; "game over ... Zen Reshuffles left 2" said nothing of why)
        why = ("; none could help: no arrangement of the tiles left leaves a match free"
               if obj["ended"] and obj.get("end_reason") == "stalemate" and min(left, held) > 0 else "")
        parts.append(f"Zen Reshuffles left {min(left, held)} ({opts.get('difficulty', 'normal')}: "
                     f"{left} of the session's {opts.get('reshuffles', 0)}, {held} Zen Focus "
                     f"token{'' if held == 1 else 's'} held{why})")
    timer = obj.get("timer")
    if timer:
        if timer["kind"] == "countdown" and not obj["ended"]:
            parts.append(_countdown_words(timer))
        else:
            parts.append(f"time {timer['elapsed']:g} s of a {timer['target_seconds']:g} s target")
    if "quills" in res:
        parts.append(count(res["quills"], "quill"))
    return "".join(f", {x}" for x in parts)


def _countdown_words(timer: dict) -> str:
    """A running Word Sprint countdown for ``game show``: on the wall clock,
    the whole seconds left now and the local time it ends at (a break-test,
    session 50: "countdown 603.368 s left (at t=1.79644e+09)", counted to
    the last event, two minutes after the phones said 0); on a recording's
    or ``--t`` clock, the seconds left at the last event and the ``t`` it
    ends at."""
    dl = timer.get("deadline_t")
    if dl is not None and dl >= WALL_CLOCK_FROM:
        left = dl - time.time()
        at = time.strftime("%H:%M:%S", time.localtime(dl))
        return f"countdown {math.ceil(left)} s left (it ends at {at})" if left > 0 \
            else f"countdown over at {at}: time is up (end the game, reason time-up)"
    rem = timer.get("remaining")
    return f"countdown {math.ceil(rem) if rem is not None else '?'} s left at the last event (it ends at t={dl:g})"


#: event times at or after this many seconds are Unix times (2001-09-09 and
#: later): the wall clock the game shell reads; smaller ones count from the
#: start of a recording (the referee's frames) or are a --t the user gave
WALL_CLOCK_FROM = G.WALL_CLOCK_FROM


def event_time(t: float) -> str:
    """An event's time ``t`` (the ledger's ``t``: the caller's clock in
    seconds) for people: a wall-clock time as local ISO 8601 to the second
    with its UTC offset (``2026-12-01T09:15:02+01:00``), a time from the
    start of a recording, or one given with ``--t``, as seconds with two
    decimals (``4.20s``)."""
    if t >= WALL_CLOCK_FROM:
        from datetime import datetime
        try:
            return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):     # beyond the platform's calendar
            pass
    return f"{t:.2f}s"


def _ledger_cmd(args) -> int:
    s = _Session(args)
    try:
        data = s.ledger.export_json(s.game.game_id)
    finally:
        s.close()
    if args.json:
        from companion.cli import print_json
        print_json(data["events"])
        return 0
    for e in data["events"]:
        ref = f" ->#{e['ref']}" if e["ref"] is not None else ""
        t = "" if e["t"] is None else f" t={event_time(e['t'])}"
        flag = "" if e["status"] == "ok" else f" [{e['status']}]"
        text = _one_line(e["text"])
        if text.startswith(f"{e['status']}: "):
            text = text[len(e["status"]) + 2:]      # ("[rejected]: rejected: ..." said it twice)
        print(f"#{e['id']} {e['type']}{ref}{t}{flag}: {text}")
    return 0


def _one_line(text: str) -> str:
    """An event's text as one line that shows as itself: control, format
    and line-separator characters (a reason an older ledger kept, before
    :func:`companion.game.check_reason`: a newline forged a ledger line)
    written as ``\\n`` or ``\\uXXXX``, bytes that are not UTF-8 as
    ``\\xNN`` (:func:`companion.jsontext.name_text`)."""
    import unicodedata
    from companion.jsontext import name_text
    text = name_text(str(text))
    if all(unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") or c in "\u200c\u200d" for c in text):
        return text
    return "".join(c if unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") or c in "\u200c\u200d"
                   else repr(c)[1:-1] if c in "\n\r\t" else f"\\u{ord(c):04x}" for c in text)


def _sqlite_file(path: str) -> bool:
    """Whether ``path`` is a file that starts as an SQLite database does
    (the 16-byte header ``SQLite format 3\\0``, https://sqlite.org/fileformat.html
    section 1.3), or SQLite's ``-wal`` or ``-journal`` file beside one."""
    if not os.path.isfile(path):        # (a pipe is never opened: it would wait for a writer)
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    if head == b"SQLite format 3\x00":
        return True
    return path.endswith(("-wal", "-journal", "-shm")) and os.path.isfile(path[: path.rindex("-")])


def _export(args) -> int:
    if args.out == "-":
        args.out = None         # (the usual name for standard output: a file named "-" was written)
    if args.out is not None:
        from companion.commands.paths import refuse_ledger_files
        if not args.out.strip():
            raise BadInput("--out needs a file name, e.g. --out game.csv (or leave --out out for stdout)")
        if Path(args.out).is_dir():
            raise BadInput(f"cannot write {args.out}: it is a folder; give a file name such as game.csv")
        refuse_ledger_files("--out", args.out, args.ledger)
        if _sqlite_file(args.out):
            # (another ledger, or any database: one mistyped name replaced a
            # whole recorded ledger with the export's text; a break-test,
            # session 57)
            raise BadInput(f"--out {args.out} is an SQLite database (another ledger?): an export never writes over "
                           "one; give another file name")
        from companion.commands.paths import check_can_write
        check_can_write("--out", args.out, plain_file=True)      # a missing folder is made when written
    else:
        from companion.cli import check_stdout_open
        check_stdout_open("the export")
    from companion.jsontext import _strict, name_text
    s = _Session(args)
    try:
        # (text a strict reader accepts: a ledger written before session 55
        # may hold a reason with bytes that are not UTF-8, kept as lone
        # surrogates, which made every CSV export fail; they show as \xNN)
        if args.format == "csv":
            buf = io.StringIO(newline="")
            s.ledger.export_csv(s.game.game_id, buf)
            text = name_text(buf.getvalue())
        else:
            text = json.dumps(_strict(s.ledger.export_json(s.game.game_id)), indent=1) + "\n"
        if args.out:
            # through a temporary file renamed into place: a full disk leaves an
            # existing file as it was, and a pipe or a device is refused (a pipe
            # without a reader would block for ever)
            from companion.files import write_whole
            write_whole(args.out, text.encode("utf-8"), create=True)
        else:
            sys.stdout.write(text)
    finally:
        s.close()
    return 0


def _campaign(args) -> int:
    with _existing_ledger(args.ledger) as led:
        games = [led.events(g["game_id"]) for g in led.games()]
    prog = G.campaign_progress(games, args.player)
    if args.json:
        from companion.cli import print_json
        print_json(prog)
    else:
        print(f"{prog['player']}: next level {prog['next_level']}, {count(prog['quills'], 'quill')}")
        for lv in prog["levels"]:
            print(f"  level {lv['level']} ({lv['layout']}): {count(lv['quills'], 'quill')}, best score {lv['score']:,}")
    if not prog["games"]:
        # Scholar's Path is Word Mahjong's campaign (2.6.1); a name typed
        # wrong, or a ledger of other games, said "next level 1" like a new
        # scholar's (a break-test asked it of a Love Mahjong ledger)
        who = (f"its scholars: {', '.join(prog['scholars'])}" if prog["scholars"]
               else "it holds no Scholar's Path game (Word Mahjong's campaign) at all")
        sys.stderr.write(f"companion game: note: {args.player} has played no Scholar's Path game in "
                         f"{args.ledger}; {who}\n")
    return 0


def _games(args) -> int:
    with _existing_ledger(args.ledger) as led:
        rows = led.games()
    if args.json:
        from companion.cli import print_json
        print_json({"games": rows})
    else:
        for g in rows:
            players = g["players"]
            if not (isinstance(g["variant"], str) and isinstance(g["mode"], str)
                    and isinstance(players, list)):
                # a start written by another program, without what a game needs
                print(f"{g['game_id']}: its game_started event cannot be read, "
                      f"{count(g['events'], 'event')}")
                continue
            print(f"{g['game_id']}: {g['variant']} {g['mode']} on {g['layout']}, "
                  f"players {', '.join(map(str, players))}, {count(g['events'], 'event')}")
    return 0
