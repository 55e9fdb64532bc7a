"""Recorded games for the referee: scripted moves rendered frame by frame from
one camera, with the truth of what happened and when it settled.

A recording shows a board (``SceneSpec.layout`` with ``SceneSpec.removed``
already off) and a list of moves:

* :class:`Claim`: a player takes two tiles off for good (valid or not);
* :class:`SpellWord`: a Word Mahjong player takes three or more tiles off
  together for good, spelling a word;
* :class:`PutBack`: a player lifts one or two tiles, takes them off the board
  to the rack (the board settles without them: Law 2's first selection goes
  to the rack), then puts them back in their slots (an invalid attempt, or a
  blocked tile lifted);
* :class:`Nudge`: the camera is knocked: the view shifts a little and stays;
* :class:`Reshuffle`: the tiles still standing are gathered and re-laid on
  the same slots in another order (Mindful Law 4's Zen Reshuffle, Word's
  Lexicon Fan), hands over the board meanwhile: no tile leaves, faces change;
* :class:`Pause`: nothing happens for a while.

Each action shows a hand entering from the player's side, hovering over each
tile, lifting it (the tile disappears from its slot and rides in the hand),
and leaving; a few settled frames (no hand) follow every move.  Every frame
has a little camera shake (a rotation about the camera centre, so the frame
is the cached board render warped by the exact homography ``K R K^-1``),
lighting flicker and fresh sensor noise.

Truth (:meth:`Recording.truth_json`, written as ``truth.json``): the deal, the
moves with the frames where their hand appears and leaves and
``settled_frame``, the first frame after the move with no hand over the board
and the board in its new state; the events the contract's referee should
write (``claim`` with the engine's verdict code, ``penalty`` for every
blocked tile lifted, at the first settled frame showing it gone; ``attempt``
for a pair put back); and per frame the
camera, whether a hand is seen, and which slots hold a tile.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

import cv2
import numpy as np

from companion.claims import check_claim
from companion.errors import BadInput
from companion.layouts import Layout, Slot
from companion.rules import Board
from companion.tiles import tileset
from vision.synth.hands import HandPose, sample_hand
from vision.synth.scene import (SceneSpec, SceneTruth, TrueCamera, _add_glare, _draw_hands, _post, _render_static,
                                _resolve, _truth)

VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov")


# --------------------------------------------------------------------------- moves

@dataclass(frozen=True)
class Claim:
    """``player`` takes the tiles at two slots off the board for good."""

    slots: tuple[Slot, Slot]
    player: str = "A"

    def to_json(self) -> dict:
        return {"type": "claim", "slots": [list(s) for s in self.slots], "player": self.player}


@dataclass(frozen=True)
class PutBack:
    """``player`` lifts the tiles at one or two slots and puts them back.

    ``hold_s`` > 0: the hand does not leave the picture with the tiles; it
    holds them still for ``hold_s`` seconds, ``hold`` = ``"above"`` 60 mm
    over the last slot lifted or ``"beside"`` just beyond the slots' outline
    on the player's side (as a word's letters rest, :class:`SpellWord`), then
    puts them back and leaves.  The truth's penalty frame is then the hold's
    first frame."""

    slots: tuple[Slot, ...]
    player: str = "A"
    hold_s: float = 0.0
    hold: str = "above"

    def to_json(self) -> dict:
        d = {"type": "put_back", "slots": [list(s) for s in self.slots], "player": self.player}
        if self.hold_s > 0:
            d.update(hold_s=self.hold_s, hold=self.hold)
        return d


@dataclass(frozen=True)
class Lean:
    """A hand of ``player`` comes in and rests still on the table beside the
    board (``gap_mm`` beyond the slots' outline on the player's side, level
    with ``slot``), in every frame until a ``Lean`` of the same player with
    ``on`` False takes it away (a hand or arm resting by the board while
    others play).  ``player`` need not be playing: it only picks the side
    and the hand's look."""

    player: str = "B"
    slot: Slot | None = None
    gap_mm: float = 15.0
    on: bool = True
    side: int | None = None     # 0 +Y, 1 -Y, 2 -X, 3 +X; None: the player's own side

    def to_json(self) -> dict:
        return {"type": "lean", "player": self.player, "slot": list(self.slot) if self.slot else None,
                "gap_mm": self.gap_mm, "on": self.on, "side": self.side}


@dataclass(frozen=True)
class Nudge:
    """The camera is knocked: it moves by ``shift_mm`` (mat frame) and turns by
    ``rotate_deg`` (Rodrigues vector, degrees, camera frame), and stays there."""

    shift_mm: tuple[float, float, float] = (6.0, -4.0, 0.0)
    rotate_deg: tuple[float, float, float] = (0.4, -0.3, 0.8)

    def to_json(self) -> dict:
        return {"type": "nudge", "shift_mm": list(self.shift_mm), "rotate_deg": list(self.rotate_deg)}


@dataclass(frozen=True)
class Reshuffle:
    """``player`` gathers the tiles still standing and re-lays them on the same
    slots in another order (Mindful Law 4: "gathered, gently shuffled, and
    re-laid onto the current layout footprint without changing layer
    heights"): the hands sweep over the board for ``seconds``, and when they
    leave, the standing tiles show new faces.  ``slots`` and ``faces`` give
    the new face of each slot named (as ``companion game reshuffle`` tells the
    table); without them every standing tile's face is shuffled among the
    standing slots by ``seed`` (a shuffle by hand).  Either way the faces
    standing are the same tiles, in another order."""

    player: str = "A"
    slots: tuple[Slot, ...] = ()
    faces: tuple[str, ...] = ()
    seed: int = 0
    seconds: float = 2.0

    def to_json(self) -> dict:
        d = {"type": "reshuffle", "player": self.player, "seed": self.seed, "seconds": self.seconds}
        if self.slots:
            d.update(slots=[list(s) for s in self.slots], faces=list(self.faces))
        return d


@dataclass(frozen=True)
class Pause:
    """Nothing happens for ``seconds``."""

    seconds: float = 1.0

    def to_json(self) -> dict:
        return {"type": "pause", "seconds": self.seconds}


@dataclass(frozen=True)
class SpellWord:
    """``player`` takes the tiles at ``slots`` (three or more, in spelling
    order) off the board together for good: the word ``word`` (Word Mahjong
    2.1 Rule 2).  ``rest_s`` > 0: the letters are taken one at a time
    ("Select three or more free letter tiles sequentially"), the hand
    resting still beside the board, in the picture, for ``rest_s`` seconds
    after each but the last."""

    slots: tuple[Slot, ...]
    word: str
    player: str = "A"
    rest_s: float = 0.0

    def to_json(self) -> dict:
        d = {"type": "word", "slots": [list(s) for s in self.slots], "word": self.word, "player": self.player}
        if self.rest_s > 0:
            d["rest_s"] = self.rest_s
        return d


Move = Claim | SpellWord | PutBack | Nudge | Pause | Lean | Reshuffle


def move_from_json(obj: dict) -> Move:
    """Parse a move written by ``to_json`` (``{"type": "claim", "slots": [...], ...}``).

    Raises:
        BadInput: unknown type or malformed fields.
    """
    try:
        kind = obj["type"]
        if kind == "claim":
            a, b = (Slot(*map(int, s)) for s in obj["slots"])
            return Claim((a, b), str(obj.get("player", "A")))
        if kind == "word":
            slots = tuple(Slot(*map(int, s)) for s in obj["slots"])
            if len(slots) < 3 or not isinstance(obj["word"], str):
                raise ValueError
            rest = float(obj.get("rest_s", 0.0))
            if not 0.0 <= rest <= 60.0:
                raise ValueError
            return SpellWord(slots, obj["word"].upper(), str(obj.get("player", "A")), rest)
        if kind == "put_back":
            slots = tuple(Slot(*map(int, s)) for s in obj["slots"])
            if not 1 <= len(slots) <= 2:
                raise ValueError
            return PutBack(slots, str(obj.get("player", "A")), float(obj.get("hold_s", 0.0)),
                           str(obj.get("hold", "above")))
        if kind == "lean":
            return Lean(str(obj.get("player", "B")), Slot(*map(int, obj["slot"])) if obj.get("slot") else None,
                        float(obj.get("gap_mm", 15.0)), bool(obj.get("on", True)),
                        None if obj.get("side") is None else int(obj["side"]))
        if kind == "nudge":
            return Nudge(tuple(map(float, obj.get("shift_mm", (6, -4, 0)))),
                         tuple(map(float, obj.get("rotate_deg", (0.4, -0.3, 0.8)))))
        if kind == "pause":
            return Pause(float(obj.get("seconds", 1.0)))
        if kind == "reshuffle":
            slots = tuple(Slot(*map(int, s)) for s in obj.get("slots") or ())
            faces = tuple(str(f) for f in obj.get("faces") or ())
            seconds = float(obj.get("seconds", 2.0))
            if len(slots) != len(faces) or not 0.0 < seconds <= 60.0:
                raise ValueError
            return Reshuffle(str(obj.get("player", "A")), slots, faces, int(obj.get("seed", 0)), seconds)
    except (KeyError, TypeError, ValueError):
        raise BadInput(f"bad move {obj!r}") from None
    raise BadInput(f"unknown move type {obj.get('type')!r} (expected claim, word, put_back, nudge, pause, "
                   "lean, reshuffle)")


def script_moves(variant: str, layout: Layout, faces: Sequence[str], rng: np.random.Generator,
                 claims: int = 6, attempts: int = 1, touches: int = 1, nudge: bool = True,
                 players: Sequence[str] = ("A", "B"), removed: Iterable[Slot] = ()) -> list[Move]:
    """A random plausible game script: ``claims`` valid claims (free matching
    pairs), ``attempts`` invalid attempts (two free tiles that do not match,
    put back), ``touches`` blocked tiles lifted and put back, and optionally
    one camera nudge, in random order; players take turns.

    Stops adding claims when no free matching pair is left.
    """
    board = Board(layout, removed)
    key = {f.id: f.match for f in tileset(variant).faces}
    kinds = ["claim"] * claims + ["attempt"] * attempts + ["touch"] * touches + (["nudge"] if nudge else [])
    order = [kinds[i] for i in rng.permutation(len(kinds))]
    out: list[Move] = []
    turn = 0
    for kind in order:
        player = players[turn % len(players)]
        free = board.free_indices()
        if kind == "nudge":
            out.append(Nudge(tuple(float(v) for v in rng.uniform(-8, 8, 3) * [1, 1, 0.5]),
                             tuple(float(v) for v in rng.uniform(-0.8, 0.8, 3))))
            continue
        if kind == "claim":
            groups: dict[str, list[int]] = {}
            for i in free:
                groups.setdefault(key[faces[i]], []).append(i)
            pairs = [g for g in groups.values() if len(g) >= 2]
            if not pairs:
                continue
            g = pairs[int(rng.integers(len(pairs)))]
            a, b = (int(i) for i in rng.choice(g, 2, replace=False))
            board.remove(a)
            board.remove(b)
            out.append(Claim((layout.slots[a], layout.slots[b]), player))
        elif kind == "attempt":
            cands = [(a, b) for a in free for b in free if a < b and key[faces[a]] != key[faces[b]]]
            if not cands:
                continue
            a, b = cands[int(rng.integers(len(cands)))]
            out.append(PutBack((layout.slots[a], layout.slots[b]), player))
        else:
            blocked = [i for i in board.present_indices() if not board.is_free(i)]
            if not blocked:
                continue
            out.append(PutBack((layout.slots[int(rng.choice(blocked))],), player))
        turn += 1
    return out


# --------------------------------------------------------------------------- plan

@dataclass
class _Frame:
    present: np.ndarray
    cam_index: int
    hands: list            # [(tip_mm, carry, side_mm, aim_mm, player)] per hand
    move: int | None
    phase: str
    deal: int = 0          # index in ``Recording.deals``: the faces on the slots


@dataclass(eq=False)
class FrameTruth:
    """Truth of one recorded frame.

    Attributes:
        frame: 0-based frame index.
        scene: the frame's :class:`SceneTruth` (camera with this frame's shake,
            present / faces / free / visible fractions as seen in this frame; a
            tile in a hand is off the board, and ``scene.removed`` lists this
            frame's empty slots in layout order).
        move: index in the move list of the move in progress, None between moves.
        phase: ``"settled"``, ``"approach"``, ``"lift"``, ``"hold"``,
            ``"put_back"``, ``"retreat"`` or ``"nudge"``.
        hand: a hand is seen in the frame.
    """

    frame: int
    scene: SceneTruth
    move: int | None
    phase: str
    hand: bool

    @property
    def settled(self) -> bool:
        """No move in progress and no hand over the board."""
        return self.move is None and not self.hand


def _ease(t: float) -> float:
    return 0.5 - 0.5 * math.cos(math.pi * min(1.0, max(0.0, t)))


class Recording:
    """A scripted game, rendered lazily: iterate for ``(frame_index, image, truth)``.

    ``image`` is ``(H, W, 3) uint8`` BGR (not JPEG-compressed: the writer
    encodes), ``truth`` a :class:`FrameTruth`.  ``len(rec)`` is the frame count;
    :meth:`truth_json` the whole recording's truth.  It is an iterator: frames
    come once, in order.
    """

    def __init__(self, variant: str, layout: Layout, moves: Sequence[Move], rng: np.random.Generator,
                 fps: float = 10.0, spec: SceneSpec | None = None, hands: bool = True,
                 settle_s: float = 1.0, shake_deg: float = 0.03, flicker: float = 0.015) -> None:
        if fps <= 0:
            raise BadInput(f"fps must be positive, got {fps}")
        base = spec or SceneSpec(variant, layout)
        # a recording starts from an explicit board (no random removals) and keeps one look
        base = replace(base, variant=variant, layout=layout, removed=tuple(base.removed or ()),
                       augment=replace(base.augment, jpeg=0.0), hands=0.0)
        self.rng = rng
        self.fps = float(fps)
        self.world, removed, cam = _resolve(base, rng)
        self.deals: list[tuple[str, ...]] = [tuple(self.world.dealt)]   # faces per slot; one more per Reshuffle
        self.variant, self.layout = variant, layout
        self.moves = [m if not isinstance(m, dict) else move_from_json(m) for m in moves]
        self.start_removed = removed
        self.shake_deg, self.flicker = float(shake_deg), float(flicker)
        self.cams = [cam]
        self.margin = 24
        self._hand_looks: dict[str, HandPose] = {}
        self.show_hands = hands
        kind, size, _ = self.world.look.blur
        if kind == "motion":   # a still board: keep the focus blur only
            self.world.look = replace(self.world.look, blur=("gauss", size / 3, 0.0))
        self._players: dict[str, int] = {}
        self._sides: dict[str, int] = {}     # a Lean's hand on a side of its own
        self.frames: list[_Frame] = []
        self.move_truth: list[dict] = []
        self.events: list[dict] = []
        self._plan(settle_s)
        self._cache: dict = {}
        self._next = 0

    # ---------------------------------------------------------------- planning

    def _n(self, seconds: float) -> int:
        return max(1, int(round(seconds * self.fps)))

    def _side_point(self, player: str, target: np.ndarray) -> np.ndarray:
        """Where ``player``'s hand comes from: a point 150 mm above the table off
        the mat on the player's side (first player +Y, then -Y, -X, +X), far
        enough that the fingertips are out of the picture."""
        k = self._players.setdefault(player, len(self._players)) % 4
        k = self._sides.get(player, k)
        if player not in self._hand_looks:
            self._hand_looks[player] = sample_hand(self.rng, (0.0, 0.0), 0.0, 1.0)
        mw, mh = self.world.mat.size_mm
        start, step = [(np.array([target[0], mh, -150.0]), (0, 1)), (np.array([target[0], 0.0, -150.0]), (0, -1)),
                       (np.array([0.0, target[1], -150.0]), (-1, 0)), (np.array([mw, target[1], -150.0]), (1, 0))][k]
        cam = self.cams[0]
        W, H = cam.image_size
        p = start
        for d in range(100, 4000, 50):
            p = start + np.array([step[0] * d, step[1] * d, 0.0])
            u, v = cam.project(p)
            if cam.depth(p) > 0 and not (-40 <= u <= W + 40 and -40 <= v <= H + 40):
                break
        return p

    def _rest_point(self, player: str, target: np.ndarray, gap: float = 50.0, height: float = 60.0) -> np.ndarray:
        """Where ``player``'s hand rests between letters taken one at a time:
        60 mm above the mat, 50 mm beyond the slots' outline on the player's
        side (as :meth:`_side_point`), moved towards the board until the
        fingertip is in the picture."""
        k = self._players.setdefault(player, len(self._players)) % 4
        k = self._sides.get(player, k)
        tops = np.concatenate([t.reshape(-1, 3) for t in self.world.top])
        lo, hi = tops[:, :2].min(axis=0), tops[:, :2].max(axis=0)
        out, step = [((target[0], hi[1] + gap), (0, -1)), ((target[0], lo[1] - gap), (0, 1)),
                     ((lo[0] - gap, target[1]), (1, 0)), ((hi[0] + gap, target[1]), (-1, 0))][k]
        cam = self.cams[0]
        W, H = cam.image_size
        p = np.array([out[0], out[1], -height])
        for _ in range(20):
            u, v = cam.project(p)
            if 30 <= u <= W - 30 and 30 <= v <= H - 30:
                break
            p = p + np.array([step[0] * 5.0, step[1] * 5.0, 0.0])
        return p

    def _slot_tip(self, i: int) -> np.ndarray:
        return self.world.top[i].mean(axis=0) + np.array([0.0, 0.0, -12.0])

    def _plan(self, settle_s: float) -> None:
        layout, world = self.layout, self.world
        ts = tileset(self.variant)
        present = np.ones(len(layout), bool)
        for s in self.start_removed:
            present[layout.slot_index(s)] = False
        board = Board(world.geometry)
        for i in np.flatnonzero(~present):
            board.remove(int(i))
        cam_index = 0
        deal = 0
        frames = self.frames

        leaning: dict[str, tuple] = {}     # player -> (tip, carry, side, aim, player) of a resting hand

        def settle(n, move=None, phase="settled"):
            for _ in range(n):
                frames.append(_Frame(present.copy(), cam_index, list(leaning.values()), move, phase, deal))

        player = None

        def travel(a, b, n, carry, move, phase, side, aim, who=None):
            for k in range(n):
                p = a + (b - a) * _ease((k + 1) / n)
                frames.append(_Frame(present.copy(), cam_index,
                                     [h for w, h in leaning.items() if w != who]
                                     + [(p, carry, side, aim, who or player)], move, phase, deal))

        def stay(p, n, carry, move, phase, side, aim):
            for _ in range(n):
                frames.append(_Frame(present.copy(), cam_index,
                                     list(leaning.values()) + [(p, carry, side, aim, player)], move, phase,
                                     deal))

        settle(self._n(settle_s))
        for mi, m in enumerate(self.moves):
            start = len(frames)
            if isinstance(m, Pause):
                settle(self._n(m.seconds))
                self.move_truth.append({**m.to_json(), "start_frame": start, "end_frame": len(frames) - 1,
                                        "settled_frame": start})
                continue
            if isinstance(m, Lean):
                if m.side is not None:
                    self._sides[m.player] = int(m.side)
                if m.on:
                    t = self._slot_tip(layout.slot_index(m.slot)) if m.slot is not None else \
                        np.concatenate([t.reshape(-1, 3) for t in world.top]).mean(axis=0)
                    side = self._side_point(m.player, t)
                    tip = self._rest_point(m.player, t, gap=m.gap_mm, height=12.0)
                    leaning.pop(m.player, None)
                    travel(side, tip, self._n(0.7), 0, mi, "lean", side, t, who=m.player)
                    leaning[m.player] = (tip, 0, side, t, m.player)
                elif m.player in leaning:
                    tip, _, side, t, _ = leaning.pop(m.player)
                    travel(tip, side, self._n(0.7), 0, mi, "lean", side, t, who=m.player)
                settle(self._n(settle_s))
                self.move_truth.append({**m.to_json(), "start_frame": start, "end_frame": len(frames) - 1,
                                        "settled_frame": start})
                continue
            if isinstance(m, Nudge):
                self.cams.append(self.cams[-1].moved(m.shift_mm, m.rotate_deg))
                cam_index = len(self.cams) - 1
                settle(self._n(settle_s))
                self.move_truth.append({**m.to_json(), "start_frame": start, "end_frame": start,
                                        "settled_frame": start})
                continue
            if isinstance(m, Reshuffle):
                new = self._reshuffled(mi, m, present)
                player = m.player
                standing = np.flatnonzero(present)
                tips = [self._slot_tip(int(i)) for i in standing]
                centre = np.mean(tips, axis=0)
                side = self._side_point(m.player, centre)
                # the hands sweep over the board from corner to corner and
                # back; the tiles are re-laid under them halfway
                lo, hi = np.min(tips, axis=0), np.max(tips, axis=0)
                corners = [np.array([lo[0], lo[1], centre[2] - 30.0]), np.array([hi[0], hi[1], centre[2] - 30.0]),
                           np.array([lo[0], hi[1], centre[2] - 30.0]), np.array([hi[0], lo[1], centre[2] - 30.0])]
                travel(side, corners[0], self._n(0.7), 0, mi, "approach", side, centre)
                leg = self._n(m.seconds / (len(corners) - 1))
                for k in range(1, len(corners)):
                    travel(corners[k - 1], corners[k], leg, 0, mi, "reshuffle", side, centre)
                    if k == 2:
                        self.deals.append(new)
                        deal = len(self.deals) - 1
                travel(corners[-1], side, self._n(0.7), 0, mi, "retreat", side, centre)
                end = len(frames) - 1
                settled = len(frames)
                settle(self._n(settle_s))
                moved = [int(i) for i in standing if new[i] != self.deals[-2][i]]
                self.move_truth.append({**m.to_json(), "slots": [list(layout.slots[i]) for i in standing],
                                        "faces": [new[i] for i in standing], "changed": len(moved),
                                        "start_frame": start, "end_frame": end, "settled_frame": settled})
                self.events.append({"type": "reshuffle", "frame": settled, "player": m.player,
                                    "slots": [list(layout.slots[i]) for i in standing],
                                    "faces": [new[i] for i in standing]})
                continue
            dealt = self.deals[deal]
            idx = [layout.slot_index(s) for s in m.slots]
            if len(set(idx)) != len(idx):
                raise BadInput(f"move {mi}: the same slot twice")
            for i, s in zip(idx, m.slots):
                if not present[i]:
                    raise BadInput(f"move {mi}: slot {s} holds no tile at that point")
            player = m.player
            faces = [dealt[i] for i in idx]
            reasons = [board.reason(i) for i in idx]
            free = [bool(r.free) for r in reasons]
            tips = [self._slot_tip(i) for i in idx]
            side = self._side_point(m.player, tips[0])
            hover = [t + np.array([0.0, 0.0, -40.0]) for t in tips]
            n_in, n_dwell, n_mid = self._n(0.7), self._n(0.2), self._n(0.5)
            show = self.show_hands
            aim = tips[0]
            carry = 0
            if show:
                travel(side, tips[0], n_in, carry, mi, "approach", side, aim)
            rest = getattr(m, "rest_s", 0.0)
            rest_at = self._rest_point(m.player, tips[0]) if rest > 0 else None
            last = None
            for k, i in enumerate(idx):
                if show:
                    if k > 0:
                        travel(last, tips[k], n_mid, carry, mi, "approach", side, aim)
                    stay(tips[k], n_dwell, carry, mi, "approach", side, aim)
                present[i] = False
                carry += 1
                last = hover[k]
                if show:
                    travel(tips[k], hover[k], self._n(0.15), carry, mi, "lift", side, aim)
                    if rest_at is not None and k < len(idx) - 1:
                        # one letter at a time: the hand rests beside the board
                        travel(hover[k], rest_at, n_mid, carry, mi, "rest", side, aim)
                        stay(rest_at, self._n(rest), carry, mi, "rest", side, aim)
                        last = rest_at
            lifted_settled = None
            if isinstance(m, PutBack) and m.hold_s > 0 and show:
                # the hand keeps the tiles in the picture, still, then puts them back
                at = hover[-1] + np.array([0.0, 0.0, -20.0]) if m.hold == "above" else \
                    self._rest_point(m.player, tips[-1])
                travel(last, at, n_mid, carry, mi, "hold", side, aim)
                lifted_settled = len(frames)
                stay(at, self._n(m.hold_s), carry, mi, "hold", side, aim)
                last = at
                for k in reversed(range(len(idx))):
                    travel(last, tips[k], n_mid, carry, mi, "put_back", side, aim)
                    present[idx[k]] = True
                    carry -= 1
                    last = tips[k]
            elif isinstance(m, PutBack):
                # Law 2: the picked tiles go to the player's rack, off the board;
                # the board settles without them, then they are put back.
                if show:
                    travel(last, side, self._n(0.7), carry, mi, "retreat", side, aim)
                lifted_settled = len(frames)
                settle(self._n(settle_s), move=mi, phase="held")
                last = side
                for k in reversed(range(len(idx))):
                    if show:
                        travel(last, tips[k], n_mid if last is not side else n_in, carry, mi, "put_back",
                               side, aim)
                    present[idx[k]] = True
                    carry -= 1
                    last = tips[k]
            if show:
                travel(last, side, self._n(0.7), carry, mi, "retreat", side, aim)
            end = len(frames) - 1
            settled = len(frames)
            settle(self._n(settle_s))
            rec = {**m.to_json(), "faces": faces, "free": free, "start_frame": start, "end_frame": end,
                   "settled_frame": settled}
            if lifted_settled is not None:
                rec["lifted_settled_frame"] = lifted_settled
            blocked = [s for s, f in zip(m.slots, free) if not f]
            if isinstance(m, Claim):
                v = check_claim(board, dealt, ts, m.slots[0], m.slots[1])
                rec.update(valid=v.valid, reason=v.code, match=ts.matches(faces[0], faces[1]))
                self.events.append({"type": "claim", "frame": settled, "player": m.player,
                                    "slots": [list(s) for s in m.slots], "faces": faces,
                                    "valid": v.valid, "reason": v.code})
                for i in idx:
                    board.remove(i)
            elif isinstance(m, SpellWord):
                self.events.append({"type": "word", "frame": settled, "player": m.player,
                                    "slots": [list(s) for s in m.slots], "faces": faces, "word": m.word,
                                    "valid": all(free)})
                for i in sorted(idx, key=lambda k: -layout.slots[k].z):
                    board.remove(i)
            seen = lifted_settled if lifted_settled is not None else settled
            for s in blocked:
                self.events.append({"type": "penalty", "frame": seen, "player": m.player,
                                    "slot": list(s), "reason": "blocked"})
            if isinstance(m, PutBack) and len(idx) == 2:
                v = check_claim(board, dealt, ts, m.slots[0], m.slots[1])
                self.events.append({"type": "attempt", "frame": settled, "player": m.player,
                                    "slots": [list(s) for s in m.slots], "faces": faces,
                                    "valid": False, "reason": v.code or "returned"})
            rec["blocked"] = [list(s) for s in blocked]
            self.move_truth.append(rec)

    def _reshuffled(self, mi: int, m: "Reshuffle", present: np.ndarray) -> tuple[str, ...]:
        """The faces per slot after the Reshuffle ``m`` (move ``mi``): the
        faces it names on its slots (the others keep theirs), or, naming
        none, the standing faces shuffled among the standing slots with
        ``m.seed``.  The standing faces must stay the same tiles.

        Raises:
            BadInput: a slot named twice, one outside the layout or holding no
            tile; faces that are not the standing tiles'.
        """
        layout = self.layout
        old = self.deals[-1]
        new = list(old)
        standing = [int(i) for i in np.flatnonzero(present)]
        if m.slots:
            try:
                idx = [layout.slot_index(s) for s in m.slots]
            except (KeyError, ValueError):
                raise BadInput(f"move {mi}: a slot outside the layout") from None
            if len(set(idx)) != len(idx) or any(not present[i] for i in idx):
                raise BadInput(f"move {mi}: a reshuffle names a slot twice or one holding no tile")
            for i, f in zip(idx, m.faces):
                new[i] = f
        else:
            order = np.random.default_rng(m.seed).permutation(len(standing))
            for i, k in zip(standing, order):
                new[i] = old[standing[int(k)]]
        if sorted(new[i] for i in standing) != sorted(old[i] for i in standing):
            raise BadInput(f"move {mi}: a reshuffle's faces are not the tiles standing")
        return tuple(new)

    # ---------------------------------------------------------------- rendering

    def __len__(self) -> int:
        return len(self.frames)

    def __iter__(self) -> "Recording":
        return self

    def __next__(self) -> tuple[int, np.ndarray, FrameTruth]:
        if self._next >= len(self.frames):
            raise StopIteration
        k = self._next
        self._next += 1
        image, truth = self._render(k)
        return k, image, truth

    def _static(self, fr: _Frame):
        key = (fr.present.tobytes(), fr.cam_index, fr.deal)
        hit = self._cache.get(key)
        self.world.dealt = self.deals[fr.deal]
        if hit is None:
            cam = self.cams[fr.cam_index].expanded(self.margin)
            img, labels = _render_static(cam, self.world, fr.present)
            _add_glare(img, labels, self.world.look)
            if len(self._cache) > 8:
                self._cache.pop(next(iter(self._cache)))
            hit = self._cache[key] = (img, labels)
        return hit

    def _hand(self, cam: TrueCamera, tip_mm, carry: int, side_mm, aim_mm, player) -> HandPose:
        tip = cam.project(tip_mm)
        d = cam.project(aim_mm) - cam.project(side_mm)
        ang = math.degrees(math.atan2(d[1], d[0]))
        scale = cam.scale_at(np.asarray(tip_mm) + np.array([0, 0, -60.0]))
        h = self._hand_looks[player]
        return HandPose(tuple(map(float, tip)), ang, scale, h.skin, h.sleeve, h.sleeve_mm, h.spread_deg,
                        0.5 if carry else h.curl, h.right, carry, (self.world.look.ivory, self.world.look.back))

    def _render(self, k: int) -> tuple[np.ndarray, FrameTruth]:
        fr = self.frames[k]
        base = self.cams[fr.cam_index]
        rng = self.rng
        Rd = cv2.Rodrigues(np.deg2rad(rng.normal(0, self.shake_deg, 3)))[0]
        cam = base.rotated(Rd)
        static_img, static_labels = self._static(fr)       # (sets the world's faces to the frame's)
        W, H = base.image_size
        Kbig = base.expanded(self.margin).K
        M = Kbig @ Rd.T @ np.linalg.inv(base.K)
        img = cv2.warpPerspective(static_img, M, (W, H), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                  borderMode=cv2.BORDER_REPLICATE)
        labels = cv2.warpPerspective(static_labels, M, (W, H), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP)
        hands = [self._hand(cam, *h) for h in fr.hands]
        mask, n_hands = _draw_hands(img, labels, hands, cam, self.world.look)
        removed = tuple(self.layout.slots[i] for i in np.flatnonzero(~fr.present))
        truth = _truth(self.world, cam, fr.present, removed, labels, mask, n_hands)
        gain = 1.0 + rng.normal(0, self.flicker)
        image = _post(img, self.world.look, rng, gain=gain, jpeg=False)
        return image, FrameTruth(k, truth, fr.move, fr.phase, n_hands > 0)

    # ---------------------------------------------------------------- truth

    def truth_json(self) -> dict:
        """The whole recording's truth (see the module docstring)."""
        cam0 = self.cams[0]
        return {
            "variant": self.variant, "layout": self.layout.to_json(), "fps": self.fps,
            "frames": len(self.frames), "image_size": list(cam0.image_size),
            "mat": self.world.mat.to_json(), "camera": cam0.to_json(),
            "cameras": [c.to_json() for c in self.cams],
            "deal": [{"slot": list(s), "face": f} for s, f in zip(self.layout.slots, self.deals[0])],
            "removed_before": [list(s) for s in self.start_removed],
            "players": list(self._players),
            "moves": self.move_truth, "events": self.events,
            "frame_truth": [{"frame": k, "move": f.move, "phase": f.phase, "camera": f.cam_index,
                             "hand": bool(f.hands),
                             "present": "".join("1" if p else "0" for p in f.present),
                             **({"deal": f.deal} if f.deal else {})}
                            for k, f in enumerate(self.frames)],
        }


def render_recording(variant: str, layout: Layout, moves: Sequence[Move | dict], rng: np.random.Generator,
                     fps: float = 10.0, *, spec: SceneSpec | None = None, hands: bool = True,
                     settle_s: float = 1.0, shake_deg: float = 0.03, flicker: float = 0.015) -> Recording:
    """Render a scripted game from one camera.

    Args:
        variant, layout: the game.
        moves: :class:`Claim`, :class:`PutBack`, :class:`Nudge`, :class:`Pause`
            (or their ``to_json`` dicts), applied in order.
        rng: the only source of randomness.
        fps: frames per second (action and settle durations are in seconds).
        spec: appearance and start options (``faces``, ``removed``, ``camera``,
            ``image_size``, ``mat``, ``augment``, ``look`` ...); random
            removals and JPEG are off in recordings.
        hands: show hands during actions.
        settle_s: settled time before the first and after every move.
        shake_deg: per-frame camera shake (sigma of each rotation axis, degrees).
        flicker: per-frame relative sigma of the lighting gain.

    Returns:
        A :class:`Recording`: an iterator of ``(frame_index, image, truth)``.

    Raises:
        BadInput: a move names a slot outside the layout, an empty slot, or the
            same slot twice; bad options (see :func:`render_scene`).
    """
    return Recording(variant, layout, moves, rng, fps, spec, hands, settle_s, shake_deg, flicker)


def write_recording(out: str | Path, variant: str, layout: Layout, moves: Sequence[Move | dict],
                    rng: np.random.Generator, fps: float = 10.0, *, image_format: str = "jpg",
                    quality: int = 90, **kwargs) -> dict:
    """Render a recording to disk and return its truth.

    ``out`` is a folder (created) that receives ``frame_00000.jpg`` ... (or
    ``.png``) and ``truth.json``, or a video path (``.mp4``, ``.avi``, ``.mkv``,
    ``.mov``, written with ``cv2.VideoWriter``) with its truth beside it as
    ``<name>.truth.json``.  Other keyword arguments go to
    :func:`render_recording`.

    Raises:
        BadInput: bad image format, or the video cannot be opened for writing.
    """
    out = Path(out)
    rec = render_recording(variant, layout, moves, rng, fps, **kwargs)
    truth = rec.truth_json()
    if out.suffix.lower() in VIDEO_SUFFIXES:
        out.parent.mkdir(parents=True, exist_ok=True)
        fourcc = cv2.VideoWriter_fourcc(*("mp4v" if out.suffix.lower() in (".mp4", ".mov") else "MJPG"))
        writer = cv2.VideoWriter(str(out), fourcc, float(fps), tuple(rec.cams[0].image_size))
        if not writer.isOpened():
            raise BadInput(f"cannot write video {out} (no encoder for {out.suffix}); write a folder of frames instead")
        try:
            for _, image, _ in rec:
                writer.write(image)
        finally:
            writer.release()
        truth_path = out.with_name(out.stem + ".truth.json")
    else:
        fmt = image_format.lower().lstrip(".")
        if fmt not in ("jpg", "png"):
            raise BadInput(f"image_format must be jpg or png, got {image_format!r}")
        out.mkdir(parents=True, exist_ok=True)
        params = [cv2.IMWRITE_JPEG_QUALITY, int(quality)] if fmt == "jpg" else [cv2.IMWRITE_PNG_COMPRESSION, 3]
        for k, image, _ in rec:
            cv2.imwrite(str(out / f"frame_{k:05d}.{fmt}"), image, params)
        truth_path = out / "truth.json"
    truth_path.write_text(json.dumps(truth, indent=1))
    return truth
