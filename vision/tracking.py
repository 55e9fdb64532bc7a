"""Tracking the table over time: when has the scene settled, and what changed
between two settled states.

Two stages, both pure (numpy arrays and engine objects in, decisions out):

* :class:`MotionGate` looks at a small grey signature of every frame and says
  when the picture has been still for ``settle_frames`` frames in a row (no hand
  or motion over the board).  Only then is a frame recognised and judged, which
  is also what makes refereeing faster than real time: most frames cost one
  resize and one difference.
* :class:`BoardTracker` compares each settled observation of the board with the
  engine's board and turns the differences into events: a tile lifted (with a
  penalty when it was blocked), tiles put back (a returned attempt), a pair
  that left the board (a claim, checked by :func:`companion.claims.check_claim`),
  faces revealed under removed tiles.

Rules applied (docs/RULES.md, "Camera referee"): the free rule is judged on the
board as it stood before the turn's first lift (Love/Candy 2.1 Law 2: both
selected tiles must be Unblocked; the first pick does not free the second); a
blocked tile that leaves its slot costs a penalty even if it is put back (Love
2.7 "Blocked Tile Penalty ... attempts to touch or select a tile that is
blocked"); tiles are only ever removed from the layout, so a slot the engine
knows is empty stays empty whatever the camera says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import cv2
import numpy as np

from companion.claims import check_claim
from companion.layouts import Slot
from companion.rules import Board
from companion.tiles import TileSet


# ---------------------------------------------------------------- motion gate

@dataclass(frozen=True)
class MotionSettings:
    """Numbers of the motion gate.

    Attributes:
        size: (w, h) px of the grey signature a frame is reduced to.
        pixel_delta: grey-level change (0-255) that counts a signature pixel as moved.
        moving_fraction: fraction of moved pixels above which a frame is "moving".
        settle_frames: consecutive still frames needed to call the scene settled.
        change_fraction: fraction of moved pixels between a settled frame and the
            last judged one above which the settled frame is judged again.
    """

    size: tuple[int, int] = (96, 54)
    pixel_delta: float = 12.0
    moving_fraction: float = 0.004
    settle_frames: int = 4
    change_fraction: float = 0.0008


def frame_signature(image_bgr: np.ndarray, size: tuple[int, int] = (96, 54)) -> np.ndarray:
    """A small blurred grey copy of a frame for motion tests.

    Args:
        image_bgr: (H, W, 3) uint8 BGR frame (or (H, W) grey).
        size: (w, h) of the signature in px.

    Returns:
        (h, w) float32 grey levels 0-255.
    """
    grey = image_bgr if image_bgr.ndim == 2 else cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0).astype(np.float32)


def moved_fraction(a: np.ndarray, b: np.ndarray, pixel_delta: float) -> float:
    """Fraction of signature pixels whose grey level differs by more than ``pixel_delta``."""
    return float(np.count_nonzero(np.abs(a - b) > pixel_delta)) / a.size


class MotionGate:
    """Says, frame by frame, whether the scene is moving or settled.

    ``update(signature)`` returns one of:

    * ``"moving"``: the frame differs from the previous one (a hand, a nudge);
    * ``"settling"``: still, but not yet for ``settle_frames`` frames;
    * ``"settled"``: the first frame of a settled run that looks different from
      the last judged frame: judge this one;
    * ``"same"``: settled and nothing changed since the last judged frame.
    """

    def __init__(self, settings: MotionSettings = MotionSettings()) -> None:
        self.settings = settings
        self._prev: np.ndarray | None = None
        self._still = 0
        self._judged: np.ndarray | None = None
        self._reported = False
        self.force_next = False

    def update(self, sig: np.ndarray) -> str:
        s = self.settings
        prev, self._prev = self._prev, sig
        if prev is None or moved_fraction(sig, prev, s.pixel_delta) > s.moving_fraction:
            self._still = 0
            self._reported = False
            return "moving" if prev is not None else "settling"
        self._still += 1
        if self._still + 1 < s.settle_frames or self._reported:
            return "settling" if not self._reported else "same"
        self._reported = True
        if (self.force_next or self._judged is None
                or moved_fraction(sig, self._judged, s.pixel_delta) > s.change_fraction):
            self.force_next = False
            self._judged = sig
            return "settled"
        return "same"

    def mark_unjudged(self) -> None:
        """The last settled frame could not be judged (e.g. a hand resting in
        view): judge the next settled run even if it looks the same."""
        self._judged = None
        self._reported = False
        self._still = 0


# ---------------------------------------------------------------- board tracker

@dataclass(frozen=True)
class Observation:
    """What recognition saw in one settled frame, per layout slot.

    Attributes:
        present: (N,) bool, a tile stands in the slot.
        known: (N,) bool, the slot's state was seen with confidence (False where
            a hand or glare hides it, or recognition is unsure).
        faces: length-N face ids, None where the face is not visible.
        confidence: (N,) float in [0, 1].
    """

    present: np.ndarray
    known: np.ndarray
    faces: Sequence[str | None]
    confidence: np.ndarray


@dataclass(frozen=True)
class TrackEvent:
    """One thing the tracker inferred.

    ``type`` is one of ``"lift"``, ``"return"``, ``"penalty"``, ``"claim"``,
    ``"attempt"`` (a lifted pair that came back), ``"reveal"`` (a face seen for
    the first time), ``"needs-referee"``.  ``slots``/``faces`` list the tiles
    concerned; ``valid`` and ``reason`` come from the engine for claims and
    penalties; ``blocks`` holds the engine's BlockReason JSON of each slot.
    """

    type: str
    frame: int
    slots: tuple[Slot, ...]
    faces: tuple[str | None, ...] = ()
    valid: bool | None = None
    reason: str | None = None
    code: str | None = None
    blocks: tuple[dict, ...] = ()

    def to_json(self) -> dict:
        d = {"type": self.type, "frame": self.frame, "slots": [list(s) for s in self.slots]}
        if self.faces:
            d["faces"] = list(self.faces)
        if self.valid is not None:
            d["valid"] = self.valid
        d["reason"] = self.reason
        if self.code is not None:
            d["code"] = self.code
        if self.blocks:
            d["blocks"] = list(self.blocks)
        return d


@dataclass
class TrackerState:
    """Mutable state of :class:`BoardTracker` (kept apart for inspection)."""

    board: Board
    faces: list[str | None]
    lifted: list[int] = field(default_factory=list)         # off the board, order of lifting
    turn_board: Board | None = None                          # board before the turn's first lift
    penalised: set[int] = field(default_factory=set)         # lifted blocked slots already penalised
    turn_lifted: list[int] = field(default_factory=list)     # every tile lifted since the turn began
    lift_frame: dict[int, int] = field(default_factory=dict)  # slot -> frame its lift was first seen
    initialised: bool = False


class BoardTracker:
    """Turns settled observations into lifts, returns, claims and penalties.

    Args:
        board: the engine board of the layout (all tiles present at the start
            of a game; slots seen empty in the first observation are taken as
            already removed).
        tileset: the variant's tile set (matching relation).
        faces: initial face per slot (None where unknown).

    A pair of lifted tiles that the engine accepts is claimed at once.  A
    lifted pair that does not match, or holds a blocked tile, is an attempt;
    it is resolved when the tiles come back (``attempt``) or, if they never
    come back, as an invalid ``claim`` plus ``needs-referee``.
    """

    def __init__(self, board: Board, tileset: TileSet, faces: Sequence[str | None] | None = None) -> None:
        n = len(board.layout.slots)
        self.tileset = tileset
        self.state = TrackerState(board=board, faces=list(faces) if faces is not None else [None] * n)

    @property
    def board(self) -> Board:
        return self.state.board

    def observe(self, frame: int, obs: Observation) -> list[TrackEvent]:
        """Compare one settled observation with the engine's board.

        Returns the events it implies, in order.  Slots not ``known`` in the
        observation keep their previous state.
        """
        st = self.state
        slots = self.board.layout.slots
        events: list[TrackEvent] = []
        if not st.initialised:
            st.initialised = True
            self._learn_faces(frame, obs, events, quiet=True)
            gone = [i for i in range(len(slots)) if obs.known[i] and not obs.present[i]]
            for i in _removal_order(self.board, gone):
                self.board.remove(i)
            return events
        # Tiles the engine holds on the board (not lifted) that are now seen absent.
        new_lifts = [i for i in range(len(slots))
                     if self.board.present[i] and i not in st.lifted and obs.known[i] and not obs.present[i]]
        returns = [i for i in st.lifted if obs.known[i] and obs.present[i]]
        for i in returns:
            st.lifted.remove(i)
            events.append(TrackEvent("return", frame, (slots[i],), (st.faces[i],)))
        if returns and not st.lifted:
            events.extend(self._close_attempt(frame))
        if new_lifts and len(st.lifted) >= 2:
            # an unresolved pair is still off the board and new tiles leave: the
            # pair was taken for good without a valid claim
            events.extend(self._settle_unreturned(frame))
        if new_lifts:
            if not st.lifted:
                st.turn_board = self.board.copy()
                st.turn_lifted = []
                st.penalised = set()
            for i in new_lifts:
                st.lifted.append(i)
                st.turn_lifted.append(i)
                st.lift_frame[i] = frame
                events.extend(self._lift(frame, i))
        if len(st.lifted) >= 2:
            events.extend(self._try_claim(frame))
        self._learn_faces(frame, obs, events, quiet=False)
        return events

    def finish(self, frame: int) -> list[TrackEvent]:
        """End of the recording: tiles still off the board were taken for good."""
        return self._settle_unreturned(frame)

    # -- internals

    def _lift(self, frame: int, i: int) -> list[TrackEvent]:
        st = self.state
        tb = st.turn_board or self.board
        reason = tb.reason(i)
        slot = self.board.layout.slots[i]
        out = [TrackEvent("lift", frame, (slot,), (st.faces[i],), blocks=(reason.to_json(),))]
        if not reason.free and i not in st.penalised:
            st.penalised.add(i)
            out.append(TrackEvent("penalty", frame, (slot,), (st.faces[i],), valid=False,
                                  reason="blocked", code="blocked", blocks=(reason.to_json(),)))
        return out

    def _try_claim(self, frame: int) -> list[TrackEvent]:
        st = self.state
        if len(st.lifted) != 2:
            if len(st.lifted) > 2:
                slots = tuple(self.board.layout.slots[i] for i in st.lifted)
                return [TrackEvent("needs-referee", frame, slots,
                                   tuple(st.faces[i] for i in st.lifted),
                                   reason=f"{len(st.lifted)} tiles are off the board at once")]
            return []
        a, b = st.lifted
        tb = st.turn_board or self.board
        v = check_claim(tb, st.faces, self.tileset, self.board.layout.slots[a], self.board.layout.slots[b])
        if not v.valid:
            return []  # an attempt: wait for the tiles to come back (or never)
        self.board.remove(a)
        self.board.remove(b)
        st.lifted.clear()
        st.turn_lifted = []
        st.turn_board = None
        return [TrackEvent("claim", frame, v.slots, v.faces, valid=True, reason=None,
                           blocks=tuple(r.to_json() for r in v.blocks if r is not None))]

    def _close_attempt(self, frame: int) -> list[TrackEvent]:
        """Every lifted tile is back: a lifted pair that came back is an
        invalid attempt (Law 2); a single tile put back is only a touch."""
        st = self.state
        tb = st.turn_board or self.board
        slots = self.board.layout.slots
        out: list[TrackEvent] = []
        if len(st.turn_lifted) == 2:
            a, b = st.turn_lifted
            v = check_claim(tb, st.faces, self.tileset, slots[a], slots[b])
            out.append(TrackEvent("attempt", frame, v.slots, v.faces, valid=False,
                                  reason=v.code or "returned", code=v.code,
                                  blocks=tuple(r.to_json() for r in v.blocks if r is not None)))
        elif len(st.turn_lifted) > 2:
            out.append(TrackEvent("needs-referee", frame, tuple(slots[i] for i in st.turn_lifted),
                                  tuple(st.faces[i] for i in st.turn_lifted),
                                  reason=f"{len(st.turn_lifted)} tiles were lifted and put back"))
        st.turn_board = None
        st.turn_lifted = []
        return out

    def _settle_unreturned(self, frame: int) -> list[TrackEvent]:
        st = self.state
        if not st.lifted:
            return []
        slots = self.board.layout.slots
        tb = st.turn_board or self.board
        out: list[TrackEvent] = []
        if len(st.lifted) == 2:
            a, b = st.lifted
            v = check_claim(tb, st.faces, self.tileset, slots[a], slots[b])
            # the pair left the board when the later of the two lifts was seen
            seen = max(st.lift_frame.get(a, frame), st.lift_frame.get(b, frame))
            out.append(TrackEvent("claim", seen, v.slots, v.faces, valid=v.valid, reason=v.code,
                                  blocks=tuple(r.to_json() for r in v.blocks if r is not None)))
            if v.valid:
                self.board.remove(a)
                self.board.remove(b)
        out.append(TrackEvent("needs-referee", frame, tuple(slots[i] for i in st.lifted),
                              tuple(st.faces[i] for i in st.lifted),
                              reason="tiles left the board without a valid claim"))
        st.lifted.clear()
        st.turn_lifted = []
        st.turn_board = None
        return out

    def _learn_faces(self, frame: int, obs: Observation, events: list[TrackEvent], quiet: bool) -> None:
        st = self.state
        slots = self.board.layout.slots
        for i, f in enumerate(obs.faces):
            if f is None or not obs.known[i] or not self.board.present[i] or i in st.lifted:
                continue
            if st.faces[i] is None:
                st.faces[i] = f
                if not quiet:
                    events.append(TrackEvent("reveal", frame, (slots[i],), (f,)))


def _removal_order(board: Board, gone: list[int]) -> list[int]:
    """Order in which ``gone`` tiles can be taken off (upper layers first)."""
    return sorted(gone, key=lambda i: -board.layout.slots[i].z)
