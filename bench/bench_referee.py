"""Accuracy and speed of the camera referee on recorded games never used in development.

    python bench/bench_referee.py [--seed 7001] [--games 4] [--fps 30] [--size 1280x720]
                                  [--claims 6] [--work DIR] [--format jpg|mp4] [--keep]
                                  [--json OUT.json] [--time-lapse STEP] [--words N]
                                  [--layout NAME] [--tilt LO,HI] [--renderer synth|alt]

Game ``k`` (0-based) uses seed ``seed + k`` for its deal, script and
rendering (:func:`companion.commands.demo.script_game`).  The referee was
developed and tuned on recordings with seeds below 1000 and on the failures
of checks run with seeds 7001-7004, 7101-7105, 7201-7208, 7301-7312 and
7401-7412 (each failure found there became a development case), so the
default starts at 7501, never run before the figures reported with it.  Games cycle through
:data:`GAMES`: the four tile sets on the three built-in layouts, two players
each (Word Mahjong's Zen Archives with two scholars, docs/RULES.md 4.6);
``--layout`` plays every game on another built-in layout (taller stacks,
other outlines).  The camera is tilted from overhead by 10-25 degrees;
``--tilt LO,HI`` draws the tilt in LO-HI degrees instead (``0,3``: an
overhead rig, whose focal length the mat cannot tell, so that it is
searched from the tiles' faces); such recordings need a ``--work`` of
their own (folders are named by seed and layout only).

Each game is a scripted recording (:mod:`vision.synth.recording`), 1280 x 720
at 30 frames per second by default, written as JPEG frames in a folder (or an
mp4 with ``--format mp4``): ``--claims`` valid claims, at least 2 blocked
tiles lifted and put back, at least 1 non-matching pair lifted (off the board
until the board settles) and put back, one camera nudge and one pause, in a
random order.  Every move shows a hand coming in, hovering over and lifting
each tile and leaving (tens of frames with a hand over the board per move).
Players are given by the engine's turn order (Love/Candy/Word: a valid pair
keeps the turn; Mindful Harmony Duels: the turn passes), so the true moves
replay cleanly.

The referee runs as ``companion referee FOLDER --variant V --layout L
--players A,B --events-out E.jsonl --ledger L.sqlite`` would (in-process, the
same code path, ``--quiet``), frame decoding included, and is scored:

* claims: a referee claim with ``valid: true`` is right when the truth has a
  valid claim of the same two slots by the same player, and its frame lies
  between the first frame of that move (the hand coming in) and the truth's
  settled frame plus :data:`FRAME_TOLERANCE_S`; precision, recall, and
  "invented" claims (referee claims matching no truth claim);
* penalties: same, by slot and player (the truth's frame is the first
  settled frame showing the tile gone);
* attempts (returned non-matching pairs): same, by slot pair;
* ``needs_referee`` events are counted (none expected);
* the ledger: the referee's game replayed (:func:`companion.game.replay`)
  must equal the engine's replay of the true moves: the sequence of play
  events (type, player, slots), every player's score, points, matches,
  invalid attempts and penalties, and the tiles left;
* speed: frames judged per second of wall time (decode included), against
  the recording's own rate (real time = ``--fps``).

``--words N`` adds N words of 3-5 free tiles to each Word Mahjong game
(2.1 Rule 2; :func:`companion.commands.demo.make_script`), scored as claims
are (by slots and player) and needed for the targets; its recordings are
kept in folders of their own (``...-words3``).  ``--spell-rest S`` has
those words taken one letter at a time, the hand resting S seconds beside
the board, in the picture, between letters (Rule 2's "sequentially";
folders ``...-words3-rest1``).

``--renderer alt`` draws the same scripted games with the independent
renderer (``bench/altrender.py`` through ``bench/altrecording.py``: another
camera model, lighting, tile bodies and exposure, hands drawn another way,
never used to tune the referee), as the outside checks run it on videos it
has never seen; folders ``...-alt``.

``--time-lapse STEP`` referees, instead of each recording, a time-lapse
made from it: every STEP-th of its frames that show no hand (a blocked tile
lifted and put back, a pair held off the board, are still on some of them),
at 1 frame a second, as ``--fps 1``; the referee's frames are mapped back to
the recording's to score them, with STEP frames more tolerance.

Prints one line per game and an overall line; exits 1 when any figure misses
its target (100 % precision and recall for claims and penalties, no invented
claim, ledger equal, speed >= real time).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion import game as G  # noqa: E402
from companion.commands.demo import script_game, true_events  # noqa: E402
from companion.layouts import Layout  # noqa: E402
from vision.synth.recording import SpellWord  # noqa: E402

DEFAULT_SEED = 7501
#: (variant, built-in layout, mode) per game, cycled.
GAMES = (("love", "turtle", "sprint"),
         ("candy", "sprint-2layer", "sprint"),
         ("mindful", "sprint-flat", "harmony-duels"),
         ("word", "turtle", "zen-archives"))
PLAYERS = ("Ada", "Bo")
FRAME_TOLERANCE_S = 0.7
#: the camera's tilt from overhead, degrees (``--tilt``)
TILT_DEG = (10.0, 25.0)


# --------------------------------------------------------------------------- games

def render(folder: Path, variant: str, layout: Layout, faces, moves, seed: int, fps: float,
           size: tuple[int, int], fmt: str, tilt_deg: tuple[float, float] = TILT_DEG,
           renderer: str = "synth") -> tuple[Path, dict]:
    """Render the recording (JPEG folder or mp4) and return its path and
    truth; the camera tilted from overhead by a random angle in
    ``tilt_deg`` (degrees); ``renderer`` ``"alt"``: drawn by
    ``bench/altrecording.py`` (the independent renderer)."""
    from vision.synth.recording import write_recording
    from vision.synth.scene import SceneSpec
    if renderer == "alt":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import altrecording
        import altrender
        target = folder / "frames" if fmt == "jpg" else folder / "game.mp4"
        truth = altrecording.write_alt_recording(target, altrender.Assets.load(), variant, layout, faces, moves,
                                                 seed, fps, size, tilt_deg)
        return target, truth
    rng = np.random.default_rng([seed, 1])
    spec = SceneSpec(variant, layout, removed=(), faces=tuple(faces), tilt_deg=tilt_deg, upright=1.0,
                     fill=(0.8, 0.92), image_size=size)
    target = folder / "frames" if fmt == "jpg" else folder / "game.mp4"
    truth = write_recording(target, variant, layout, moves, rng, fps, spec=spec, quality=90)
    return target, truth


# --------------------------------------------------------------------------- scoring

def _key(ev: dict) -> tuple:
    if ev["type"] == "penalty":
        return ("penalty", tuple(ev["slot"]), ev.get("player"))
    return (ev["type"], frozenset(tuple(s) for s in ev["slots"]), ev.get("player"))


def windows(truth: dict, tol_frames: float) -> list[tuple[int, float]]:
    """For each truth event, the frames a referee event may carry to match it:
    from the start of its move (the first hand frame) to its settled frame
    plus ``tol_frames``."""
    out = []
    for ev in truth["events"]:
        slots = {tuple(s) for s in (ev.get("slots") or [ev.get("slot")])}
        start = ev["frame"]
        for m in truth["moves"]:
            ms = {tuple(s) for s in m.get("slots", [])}
            if slots <= ms and m["start_frame"] <= ev["frame"] <= m["settled_frame"]:
                start = m["start_frame"]
                break
        out.append((start, ev["frame"] + tol_frames))
    return out


def match_events(got: list[dict], truth: dict, kind: str, tol_frames: float) -> dict:
    """Precision/recall of ``got`` events of one kind against the truth's: an
    event matches a true one of the same kind, slots and player whose window
    (:func:`windows`) holds its frame; ``dframe`` lists frame differences
    from the truth's settled frame."""
    want = truth["events"]
    wins = windows(truth, tol_frames)
    if kind == "claim":
        g = [e for e in got if e["type"] == "claim" and e.get("valid")]
        w = [(t, win) for t, win in zip(want, wins) if t["type"] == "claim" and t.get("valid")]
    else:
        g = [e for e in got if e["type"] == kind]
        w = [(t, win) for t, win in zip(want, wins) if t["type"] == kind]
    used = set()
    hits, dframes = 0, []
    for e in g:
        for j, (t, (lo, hi)) in enumerate(w):
            if j in used or _key(e) != _key(t):
                continue
            if lo <= e["frame"] <= hi:
                used.add(j)
                hits += 1
                dframes.append(e["frame"] - t["frame"])
                break
    return {"found": len(g), "true": len(w), "hits": hits,
            "precision": hits / len(g) if g else 1.0, "recall": hits / len(w) if w else 1.0,
            "invented": len(g) - hits, "dframe": dframes}


def play_summary(state: G.GameState) -> dict:
    """What must agree between two replays of one game."""
    plays = []
    for e in state.raw:
        if e.type in ("claim", "invalid", "penalty", "touch", "word") and state.status.get(e.id) != "voided":
            ent = state.entries.get(e.id)
            if ent is not None and ent.status == "rejected":
                continue
            slots = e.data.get("slots") or [e.data.get("slot")]
            plays.append((e.type, e.data.get("player"), tuple(sorted(tuple(s) for s in slots))))
    return {"plays": plays,
            "players": {p.name: {"score": state.score(p), "points": p.points, "matches": p.matches,
                                 "invalid": p.invalid, "penalties": p.penalties} for p in state.players},
            "tiles_left": state.board.n_present}


def compare_ledgers(ref_events, truth_events) -> list[str]:
    """Differences between the referee's ledger and the true replay (empty when equal)."""
    a = play_summary(G.replay(ref_events))
    b = play_summary(G.replay(truth_events))
    out = []
    if a["plays"] != b["plays"]:
        for k, (x, y) in enumerate(zip(a["plays"] + [None] * 99, b["plays"] + [None] * 99)):
            if x != y:
                out.append(f"play {k}: referee {x} vs truth {y}")
                break
    if a["players"] != b["players"]:
        out.append(f"players: referee {a['players']} vs truth {b['players']}")
    if a["tiles_left"] != b["tiles_left"]:
        out.append(f"tiles left: referee {a['tiles_left']} vs truth {b['tiles_left']}")
    return out


# --------------------------------------------------------------------------- running

def time_lapse(frames: Path, truth: dict, step: int, out: Path) -> list[int]:
    """Every ``step``-th frame of the recording in ``frames`` that shows no
    hand (``truth["frame_truth"]``), linked into ``out`` as a time-lapse
    (``00000.jpg`` ...); returns the recording's frame number of each."""
    keep = [f["frame"] for f in truth["frame_truth"] if not f["hand"]][::step]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for k, fr in enumerate(keep):
        (out / f"{k:05d}.jpg").symlink_to((frames / f"frame_{fr:05d}.jpg").resolve())
    return keep


def referee_folder(source: str, variant: str, layout: str, mode: str, out_dir: Path, camera=None,
                   fps: float | None = None):
    """Run the referee exactly as the CLI does (``fps``: as ``--fps``);
    returns (summary, events, ledger events)."""
    from companion.commands.referee import run_referee
    from companion.ledger import Ledger
    from vision.sources import open_source
    events_path = out_dir / "events.jsonl"
    ledger_path = out_dir / "ledger.sqlite"
    for p in (ledger_path, Path(str(ledger_path) + "-wal"), Path(str(ledger_path) + "-shm")):
        if p.exists():
            p.unlink()
    args = argparse.Namespace(variant=variant, layout=layout, map_name=None, players=",".join(PLAYERS),
                              camera=camera, mat=None, mode=mode, events_out=str(events_path),
                              ledger=str(ledger_path), evidence=str(out_dir / "evidence"), tiles=None,
                              quiet=True)
    src = open_source(source, fps)
    summary = run_referee(args, src)
    got = [json.loads(line) for line in events_path.read_text().splitlines() if line.strip()]
    with Ledger(ledger_path) as led:
        games = led.games()
        gid = games[-1]["game_id"] if games and isinstance(games[-1], dict) else games[-1]
        evs = led.events(gid)
    return summary, got, evs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--first", type=int, default=0, help="start at game K (seed + K, tile set K mod 4)")
    ap.add_argument("--fps", type=float, default=30.0)
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--claims", type=int, default=6)
    ap.add_argument("--layout", default=None, metavar="NAME",
                    help="play every game on this built-in layout instead of the tile sets' own "
                         "(turtle, sprint-2layer, sprint-flat, turtle): taller stacks, other outlines")
    ap.add_argument("--words", type=int, default=0,
                    help="words of 3-5 free tiles in each Word Mahjong game (Rule 2), besides the claims")
    ap.add_argument("--spell-rest", type=float, default=0.0, metavar="S",
                    help="words taken one letter at a time, the hand resting S seconds beside the board "
                         "between letters (Word 2.1 Rule 2: 'sequentially')")
    ap.add_argument("--work", type=Path, help="folder for recordings and outputs (default: a temporary one)")
    ap.add_argument("--format", choices=("jpg", "mp4"), default="jpg")
    ap.add_argument("--tilt", default=None, metavar="LO,HI",
                    help="the camera's tilt from overhead, degrees, drawn in LO-HI (default 10,25; 0,3 an "
                         "overhead rig, where the focal length cannot be told from the mat)")
    ap.add_argument("--renderer", choices=("synth", "alt"), default="synth",
                    help="draw the games with vision.synth (default) or with the independent renderer "
                         "(bench/altrender.py), never used to tune the referee")
    ap.add_argument("--keep", action="store_true", help="keep recordings found in --work (no re-render)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    ap.add_argument("--time-lapse", type=int, default=0, metavar="STEP",
                    help="referee every STEP-th frame without a hand, at 1 frame a second, instead of the "
                         "recording (jpg only)")
    args = ap.parse_args(argv)
    if args.time_lapse and args.format != "jpg":
        ap.error("--time-lapse needs --format jpg")
    from companion import codex
    if args.layout is not None and args.layout not in codex.BUILTIN_NAMES:
        ap.error(f"--layout: not a built-in layout: {args.layout} (one of {', '.join(codex.BUILTIN_NAMES)})")
    w, h = (int(v) for v in args.size.lower().split("x"))
    tilt = TILT_DEG
    if args.tilt is not None:
        try:
            tilt = tuple(float(v) for v in args.tilt.split(","))
        except ValueError:
            tilt = ()
        if len(tilt) != 2 or not 0 <= tilt[0] <= tilt[1] <= 60:
            ap.error(f"--tilt: expected LO,HI degrees with 0 <= LO <= HI <= 60, got {args.tilt}")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-referee-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    real_time = 1.0 if args.time_lapse else args.fps
    totals = Counter()
    all_ok = True
    for k in range(args.first, args.first + args.games):
        seed = args.seed + k
        variant, lay_name, mode = GAMES[k % len(GAMES)]
        lay_name = args.layout or lay_name
        layout = codex.builtin(lay_name)
        gdir = work / (f"game-{seed}-{variant}-{lay_name}" + (f"-words{args.words}" if args.words and variant == "word"
                                                               else "")
                       + (f"-rest{args.spell_rest:g}" if args.spell_rest > 0 and args.words and variant == "word"
                          else "")
                       + ("-alt" if args.renderer == "alt" else ""))
        gdir.mkdir(parents=True, exist_ok=True)
        words = args.words if variant == "word" else 0
        faces, moves = script_game(variant, layout, seed, args.claims, players=PLAYERS, words=words)
        if args.spell_rest > 0:
            moves = [replace(m, rest_s=args.spell_rest) if isinstance(m, SpellWord) else m for m in moves]
        moves, truth_ledger = true_events(variant, mode, layout, faces, moves, PLAYERS)
        truth_path = gdir / "truth.json"
        target = gdir / "frames" if args.format == "jpg" else gdir / "game.mp4"
        t0 = time.perf_counter()
        if args.keep and truth_path.exists() and target.exists():
            truth = json.loads(truth_path.read_text())
            rendered = "cached"
        else:
            target, truth = render(gdir, variant, layout, faces, moves, seed, args.fps, (w, h), args.format,
                                   tilt, args.renderer)
            truth_path.write_text(json.dumps(truth))
            rendered = f"rendered in {time.perf_counter() - t0:.0f} s"
        tol = FRAME_TOLERANCE_S * args.fps
        if args.time_lapse:
            keep = time_lapse(target, truth, args.time_lapse, gdir / f"time-lapse-{args.time_lapse}")
            summary, got, ref_ledger = referee_folder(str(gdir / f"time-lapse-{args.time_lapse}"), variant,
                                                      lay_name, mode, gdir / "out", fps=real_time)
            for e in got:          # frame numbers of the recording, to score against its truth
                e["frame"] = keep[min(int(e["frame"]), len(keep) - 1)]
            tol += args.time_lapse      # a state's first kept frame is up to STEP hand-free frames late
        else:
            summary, got, ref_ledger = referee_folder(str(target), variant, lay_name, mode, gdir / "out",
                                                      fps=args.fps)
        m = {kind: match_events(got, truth, kind, tol) for kind in ("claim", "penalty", "attempt", "word")}
        needs = sum(1 for e in got if e["type"] in ("needs_referee", "needs-referee"))
        diffs = compare_ledgers(ref_ledger, truth_ledger)
        fps = summary["fps"]
        ok = (all(m[x]["precision"] == 1.0 and m[x]["recall"] == 1.0 for x in ("claim", "penalty", "word"))
              and m["claim"]["invented"] == 0 and not diffs and fps >= real_time)
        all_ok &= ok
        hands = 0 if args.time_lapse else sum(1 for f in truth["frame_truth"] if f["hand"])
        row = {"seed": seed, "variant": variant, "layout": lay_name, "mode": mode, "frames": summary["frames"],
               "hand_frames": hands, "judged": summary["judged"], "fps": round(fps, 1),
               "claims": m["claim"], "penalties": m["penalty"], "attempts": m["attempt"], "words": m["word"],
               "needs_referee": needs, "ledger_equal": not diffs, "ledger_diffs": diffs, "ok": ok}
        rows.append(row)
        for kind in ("claim", "penalty", "attempt", "word"):
            for f in ("found", "true", "hits", "invented"):
                totals[f"{kind}_{f}"] += m[kind][f]
        totals["frames"] += summary["frames"]
        totals["seconds"] += summary["seconds"]
        totals["needs"] += needs
        totals["ledger_equal"] += int(not diffs)
        print(f"game {seed} {variant:<7} {lay_name:<13} {summary['frames']:5d} frames ({hands} with a hand), "
              f"{rendered}; judged {summary['judged']:3d}; {fps:6.1f} fps (real time {real_time:g}) | "
              f"claims P {m['claim']['precision']:.0%} R {m['claim']['recall']:.0%} "
              f"({m['claim']['hits']}/{m['claim']['true']}, invented {m['claim']['invented']}) | "
              f"penalties P {m['penalty']['precision']:.0%} R {m['penalty']['recall']:.0%} "
              f"({m['penalty']['hits']}/{m['penalty']['true']}) | "
              f"attempts {m['attempt']['hits']}/{m['attempt']['true']} (found {m['attempt']['found']}) | "
              + (f"words {m['word']['hits']}/{m['word']['true']} (found {m['word']['found']}) | "
                 if m['word']['true'] or m['word']['found'] else "") +
              f"needs-referee {needs} | ledger {'equal' if not diffs else 'DIFFERENT'}"
              + ("" if ok else "  <-- MISS"), flush=True)
        for d in diffs:
            print(f"    {d}")

    def pr(kind):
        f, t, hts = totals[f"{kind}_found"], totals[f"{kind}_true"], totals[f"{kind}_hits"]
        return (hts / f if f else 1.0), (hts / t if t else 1.0)
    cp, cr = pr("claim")
    pp, prr = pr("penalty")
    ap_, ar = pr("attempt")
    fps_all = totals["frames"] / max(1e-9, totals["seconds"])
    print(f"overall: {args.games} games, {totals['frames']} frames at {fps_all:.1f} fps "
          f"(real time {real_time:g}, {w}x{h}, {args.format} decode included) | "
          f"claims P {cp:.1%} R {cr:.1%} (invented {totals['claim_invented']}) | "
          f"penalties P {pp:.1%} R {prr:.1%} | attempts P {ap_:.1%} R {ar:.1%} | "
          + (f"words P {pr('word')[0]:.1%} R {pr('word')[1]:.1%} | " if totals["word_true"] or totals["word_found"]
             else "") +
          f"needs-referee {totals['needs']} | ledgers equal {totals['ledger_equal']}/{args.games} | "
          f"{'ALL TARGETS MET' if all_ok else 'TARGETS MISSED'}")
    if args.json:
        args.json.write_text(json.dumps({"games": rows, "fps": fps_all, "ok": all_ok}, indent=1, default=str))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
