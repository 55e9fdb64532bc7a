"""The camera referee: frames in, judged events out.

Chains the stages (STYLE: one module that only chains them; the model is
opened once by the caller): :mod:`vision.tracking` gates frames by motion and
diffs settled states; ``recognize_fn`` (normally
:func:`vision.reconstruct.recognize`) reads the board of each settled frame;
the game engine (:mod:`companion.game`) decides turns, validity and points;
the ledger records the events; evidence frames are written for every claim,
attempt, touch and penalty.

Per frame the cost is one small grey resize and difference; a frame is
recognised only when the picture has been still for ``settle_s`` seconds
(once per still run), which keeps a 30 fps 720p recording faster than real
time on two cores.

Vision is corrected by what the engine knows (docs/RULES.md 1.5):

* tiles are only ever removed: the tracker only looks for tiles leaving the
  slots it knows are full, and for lifted tiles coming back;
* a settled frame in which a slot seen before is now hidden (a hand resting
  over the board) is not judged; after ``patience_s`` of stillness it is
  judged with the hidden slots and their neighbours left as they were;
* a revealed face must be one of the copies of that face still unaccounted
  for; a face reading is the vote of every settled frame that showed it;
* a pair that leaves is scored as the engine decides from the faces read; a
  pair that does not match while a face is unsure, or any sequence that does
  not fit the rules, becomes a ``needs_referee`` ledger event instead of a
  scored guess.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import cv2
import numpy as np

from companion import game as G
from companion.errors import BadInput, CameraMisfit, CompanionError, MatNotFound, WrongTileSet
from companion.files import not_a_folder
from companion.ledger import LedgerLost, StaleGame
from companion.wording import count
from companion.layouts import Layout
from companion.rules import Board
from companion.tiles import tileset
from vision.tracking import (BoardTracker, MotionGate, MotionSettings, Observation, TrackerSettings, TrackEvent,
                             frame_signature)

#: Default mode per variant when none is asked for: pairs score at once.
DEFAULT_MODES = {"love": "sprint", "candy": "sprint", "mindful": "harmony-duels", "word": "zen-archives"}
#: Default mode for one player where the default above needs two.
SOLO_MODES = {"mindful": "zen-solitaire"}
#: Ledger type of a referee item (companion.game.EVENT_TYPES).
NEEDS_REFEREE = "needs_referee"
#: Ledger type of faces read on tiles the ledger knew no face for.
FACES_SEEN = "faces_seen"

#: the indices of the frames fed that a referee keeps, to find where a still
#: run began (:meth:`Referee._run_start`): 36 minutes at 30 frames a second
FED_KEPT = 1 << 16
#: times a move is judged, or a write made, on the game read anew when the
#: console wrote on it between the reading and the writing (the last refusal
#: stands: a needs_referee item, or no faces_seen)
STALE_TRIES = 5
#: a layer-0 slot read empty under a change reaching in from beside the board
#: (:meth:`Referee._mat_bare`) shows the bare mat, not fingertips, when its
#: face quad correlates with the mat's art above ``BARE_MAT_ABOVE``
#: (:func:`vision.enroll.bare_mat_scores`), or above ``BARE_MAT_SOME_ABOVE``
#: while the presence model gives it log-odds under ``BARE_PRESENCE_BELOW``.
#: Measured on 20 bench recordings (seeds 9200-9207, 8200-8207, 9000-9003,
#: 720p, tilt 10-25 degrees), over the slots read empty in still pictures
#: refused for such a change: 39 whose tile was gone (correlation median
#: 0.24, up to 0.67; log-odds -33.8 to -1.4, median about -12) and 8 whose
#: tile stood under a hand (correlation 0.18 at most; log-odds -10.0 and
#: -8.5 only where the correlation was -0.06, the others -5.6 or more): 24
#: of the 39 pass, none of the 8.
BARE_MAT_ABOVE = 0.45
BARE_MAT_SOME_ABOVE = 0.15
BARE_PRESENCE_BELOW = -8.0


@dataclass(frozen=True)
class RefereeSettings:
    """Numbers of the referee (tuned on synthetic recordings, seeds < 1000,
    bench/bench_referee.py).

    Attributes:
        settle_s: seconds of stillness before a frame is judged.
        motion: the motion gate's settings (None: ``MotionSettings.for_fps``
            of the source's rate and ``settle_s``).
        absent_confidence: an "empty" reading counts as the tile being gone
            when its confidence is at least this (a present reading always
            counts: a missed lift only delays, a false one would score).
        start_as_found: the game is already under way when the source starts:
            slots read empty (with ``start_absent_confidence``) in the first
            judged frame are taken as removed before it, and the game is
            recorded on the tiles found.  Otherwise (the default) the source
            starts with the whole layout dealt, and an empty reading in the
            first frame only makes that slot doubtful.
        start_absent_confidence: see ``start_as_found`` (the demo's table
            from frame 330 on, 10 tiles gone: its empty slots read 0.61-0.87;
            a false empty reading on a whole deal reached 0.87, so an odd
            count found empty is given to the referee, :meth:`Referee._start`).
        start_note_empty: without ``start_as_found``, at least this many
            slots read empty (``absent_confidence``) in the first judged frame,
            and empty by ``recognize``'s reading of it too where the referee
            has one (``advise``), earn a note suggesting ``--start-as-found``
            (the classifier alone read 3 slots of a whole deal empty at 0.68-0.85
            in bench game 8100, where ``recognize`` reads every tile present).
        start_face_confidence: faces recorded in ``game_started`` (the rest
            are None until a claim names them).
        tracker: the tracker's face thresholds.
        max_hidden: a settled frame with more than this many slots hidden that
            were seen in the last judged frame is taken as a hand resting over
            the board and not judged.
        hidden_move_max: slots read hidden that the move in progress explains
            (tiles gone or back by their looks) are not counted as a hand
            over the board up to this many, a pair's two, even where a Word
            move may take ``word_max_tiles`` (a word's emptied slots read
            empty or as the faces below; an arm across a row reads hidden).
        retry_s: while a hand rests, try again this often.
        patience_s: after this long still, judge anyway, leaving hidden slots
            and their neighbours (``guard_half_units``) as they were.
        guard_half_units: neighbourhood of a hidden slot left alone, in
            half-tile units along x and y.
        max_changed: a settled frame in which more than this many standing
            tiles look changed (their face signatures moved, see
            :meth:`vision.tracking.BoardTracker.changed_standing`) is taken as
            a hand over the board too (a legal move changes two).
            In Word Mahjong a move (a word) may empty up to
            ``tracker.word_max_tiles`` slots at once: up to that many slots
            read empty are not taken as a hand (2 in the other games, a pair).
        confirm_s: a settled frame that shows a tile leaving or coming back is
            read again this much later in the same still run, or else in the
            next still run; only what both readings agree on counts (0: no
            second reading).  When the picture begins to move at most
            ``blip_s`` before that, the second reading is taken on the last
            still frame (:meth:`Referee._second_reading_cut_short`).
        claim_hold_s: a valid pair off the board is claimed at the next
            settled picture that still shows it gone (a pair put back before
            is an attempt: ../shared/CONTRACT.md, a claim "did not come
            back"), or, while nothing moves, after this many seconds, so the
            scoreboard does not wait for the next move (docs/RULES.md 1.5).
        camera_moved_px: the camera moved between two judged pictures when
            the slots' projected corners moved by more than this, px (median
            over the slots of each one's largest corner shift,
            :func:`camera_shift`): the tracker learns the slots' looks again
            and what looks changed goes to the referee, unscored.  Between
            judged pictures of a still camera the shift stays under 1.5 px.
        light_step: the light changed between two judged pictures when the
            slots' grey levels (:func:`slot_brightness`) changed by more than
            this share (either way) in the median, and three quarters of the
            slots changed the same way by half as much (a hand resting over
            part of the board darkens or lightens only the slots under it:
            a break-test's second player, reaching in from the far side, set
            the rule off with the median alone).  A still picture
            that would be refused as a hand in view (slots newly hidden, or
            more than ``max_changed`` standing tiles looking changed) is then
            judged as after a camera move: the looks are learnt again and
            the slots read hidden are left as they were.  A break-test's
            exposure step of +35 % (half the pixels clipped) otherwise left
            every later picture refused.
        hand_beside_share: at a Word Mahjong table, a judged picture in which
            more than this share of the table and mat beside the board
            differs from the last one without a hand there shows a hand in
            view: a move held in it may still grow into a word
            (:meth:`vision.tracking.BoardTracker.observe` ``mid_move``).
        hand_beside_stuck_s: the same thing beside the board in every judged
            picture for this long is part of the table (a cup put down), not
            a hand in the middle of a move: a player spelling letter by
            letter rests the hand in one place between letters, so a few
            judged pictures alike do not say it.
        blip_s: a change seen in a settled picture, then cut off before its
            second reading by motion lasting at most this long in all (a
            camera shaken on a frame or two, a flicker), keeps the frame of
            its first sighting when the second reading finds the same
            change.  After longer motion it takes the frame of the still run
            that read it again (a hand was still at work: see
            :meth:`Referee._judge_frame`).  At least 2 frames (one frame
            shaken is two frames of motion: into it and back); at 30 frames
            a second, 3 frames;
            on the bench's recordings (0.03 degrees of camera shake a frame)
            such a shake broke a still run about once in 8 games, and one
            penalty was dated 0.77 s late, after the shake.
        hand_reach_share: a slot seen in the last judged picture counts as
            newly hidden (a hand in view: the picture is not judged yet) when
            this share of its face lies in a change that reaches in from
            beside the board (:func:`hand_reach`: a hand held still over the
            tiles, whose fingers the classifier may read as "no face"); 0
            turns the test off.
        hand_chroma_delta: the hand tests (:func:`hand_reach`,
            :func:`beside_board_change`) count a px as changed where its
            grey level changed by more than 15, or its colour (CIELAB a*, b*,
            :func:`hand_signature`) by more than this many units; 0 reads grey
            alone, as before session 55.  A hand is nearly the grey of a
            wooden or pink table, never nearly its colour: bench game 19703
            (the independent renderer), an arm over a pink table changed
            the grey signature by a median 5.7 levels and its colour by
            24, fingers held still over two tiles were taken for a pair
            lifted, and a penalty was charged for a tile never touched.
            Pictures 3 frames or more apart without a hand differ by at
            most 4.5 units (10 bench games of both renderers, 20 pairs
            each: ``bench/bench_hand_colour.py``).
        bare_mat: such a slot on layer 0 read empty is not under the hand
            where the bare mat shows there (:meth:`Referee._mat_bare`): the
            tile was lifted and is held beside the board, and the hand
            holding it touches the slot's change (fresh bench game 9200: a
            blocked edge tile held beside the board for 1.7 s, every still
            picture refused, its penalty lost).  Fingertips over a tile read
            "no face" hide the mat's print, and the presence model sees a
            tile under them.
        relaid_share: a still picture with no slot newly hidden, no tile
            gone or back and none off the board, in which more than
            ``max_changed`` standing tiles look changed, is tiles re-laid (a
            reshuffle, :meth:`Referee._relaid`), not a hand, when more than
            ``max_changed`` of them, and at least this share, read another
            face surely (:meth:`vision.tracking.BoardTracker.relaid`).
        stuck_s: still pictures refused as a hand in view for this long since
            the last judged one, over several still moments, are judged as
            after ``patience_s`` (a hand does not rest over the board for a
            minute through several moves; something else hides those slots).
        stand_max, stand_behind_max: the presence model is asked of at
            most ``stand_max`` raised slots a picture whose look changed, and
            of the tiles behind taller ones when they are at most
            ``stand_behind_max`` (:meth:`Referee._stand_odds`); 0 asks none.
    """

    settle_s: float = 0.3
    motion: MotionSettings | None = None
    absent_confidence: float = 0.55
    start_as_found: bool = False
    start_absent_confidence: float = 0.6
    start_note_empty: int = 3
    start_face_confidence: float = 0.9
    tracker: TrackerSettings = field(default_factory=TrackerSettings)
    max_hidden: int = 0
    hidden_move_max: int = 2
    max_changed: int = 4
    retry_s: float = 0.5
    patience_s: float = 3.0
    guard_half_units: int = 4
    confirm_s: float = 0.7
    claim_hold_s: float = 10.0
    camera_moved_px: float = 5.0
    light_step: float = 0.08
    hand_beside_share: float = 0.005
    hand_beside_stuck_s: float = 20.0
    stuck_s: float = 10.0
    relaid_share: float = 0.8
    blip_s: float = 0.1
    hand_reach_share: float = 0.25
    hand_chroma_delta: float = 10.0
    bare_mat: bool = True
    behind_stack_above: float = 0.5
    stand_max: int = 8
    stand_behind_max: int = 48


@dataclass
class RefereeStatus:
    """Live figures for the status line."""

    frame: int = -1
    state: str = "starting"
    tiles_on_board: int | None = None
    last_event: str = ""
    judged: int = 0
    events: int = 0
    mat_seen: bool = False       # some frame showed the mat
    mat_missed: int = 0          # frames read without finding the mat
    notes: list = field(default_factory=list)   # advice on the set-up, from the first judged frame


@dataclass(frozen=True)
class Reading:
    """A board read from one frame, with the classifier's scores behind it.

    Attributes:
        recognition: the :class:`vision.reconstruct.Recognition`.
        face_probs: ``(N, K)`` float, probability of each of the variant's
            faces (tile-set order) at each slot's top face.
        p_none: ``(N,)`` float, probability of "no face at this slot".
        patches: ``(N, D)`` float32 signature of each slot's top face: the
            inner part of its normalised patch (margins left out, so a
            neighbour leaving does not change it), centred and scaled to unit
            length, so that the dot product of two readings is their normalised
            cross-correlation (:func:`slot_signatures`).
        hidden: ``(N,)`` bool, the classifier calls the face hidden (a hand,
            a taller stack) or it lies outside the picture.
    """

    recognition: object
    face_probs: np.ndarray
    p_none: np.ndarray
    patches: np.ndarray | None = None
    hidden: np.ndarray | None = None
    spec: object = None

    @property
    def tiles(self):
        return self.recognition.tiles

    @property
    def quads(self):
        return self.recognition.quads


def read_board(image_bgr: np.ndarray, variant: str, layout: Layout, camera=None, classifier=None, spec=None,
               face_reader=None, markers=None) -> Reading:
    """:func:`vision.reconstruct.recognize` keeping the classifier's scores
    and the slots' face signatures (the referee weighs them against each
    slot's history).

    Same stages, arguments and errors as ``recognize`` (pose, the focal
    search when the pose had to assume a focal length, projected slot faces,
    patches, classifier, :func:`vision.reconstruct.reconstruct`).
    ``markers``: a :class:`vision.pose.MarkerMemory` of the video's last
    frames, whose markers count where this frame misses them while the
    camera stands still (:class:`PoseMemory`).

    Raises:
        MatNotFound: no mat in the picture.
        BadInput: not an image, or a model that does not cover the variant.
    """
    from vision import reconstruct as R

    settings = R.ReconstructSettings()
    r = R.read_slots(image_bgr, variant, layout, camera, classifier, spec, settings, face_reader, markers)
    pose, quads, patches, sc, fp, in_view = r.pose, r.quads, r.patches, r.scores, r.face_probs, r.in_view
    states = R.reconstruct(layout, variant, fp, sc.p_none, sc.p_occluded, in_view, settings)
    hidden = ~in_view | (np.asarray(sc.p_occluded) > settings.occluded_above)
    from vision.mat import MatSpec
    return Reading(R.Recognition(variant, layout, tuple(states), quads, pose), np.asarray(fp, np.float64),
                   np.asarray(sc.p_none, np.float64), slot_signatures(patches), hidden, spec or MatSpec.default())


class PoseMemory:
    """A ``recognize_fn`` for :class:`Referee`: :func:`read_board` on each
    frame with one :class:`vision.pose.MarkerMemory` across them (a marker
    a frame misses counts where the last frames read it, while the camera
    stands still; one focal length held for the video).  ``args`` and
    ``kwargs`` are :func:`read_board`'s after the frame; ``whole_deal``:
    the first frame shows the whole deal (the referee's default), which
    the focal length of a nearly overhead view is searched with."""

    def __init__(self, *args, whole_deal: bool = False, **kwargs):
        from vision.pose import MarkerMemory
        self.args, self.kwargs = args, kwargs
        self.markers = MarkerMemory()
        self.markers.whole_deal = bool(whole_deal)

    def __call__(self, frame: np.ndarray) -> Reading:
        return read_board(frame, *self.args, markers=self.markers, **self.kwargs)


def slot_signatures(patches: np.ndarray, inner: float = 0.2) -> np.ndarray:
    """Unit-length signatures of slot patches for telling a changed slot from
    an unchanged one.

    Args:
        patches: ``(N, 3, h, w)`` float32 from :func:`vision.crops.extract_patches`.
        inner: fraction of the height and width cut off each side (the crop's
            margin shows the neighbours).

    Returns:
        ``(N, D)`` float32, each row centred and of unit length (zeros for a
        flat patch): the dot product of two rows is their normalised
        cross-correlation (1 the same picture, about 0 unrelated ones).
    """
    p = np.asarray(patches, np.float32)
    n, _, h, w = p.shape
    mh, mw = int(h * inner), int(w * inner)
    x = p[:, :, mh:h - mh, mw:w - mw].reshape(n, -1)
    x = x - x.mean(axis=1, keepdims=True)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norm, 1e-6)).astype(np.float32)


def observation_from(recognition, settings: RefereeSettings, start: bool = False) -> tuple[Observation, np.ndarray]:
    """Per-slot observation from a :class:`Reading` (or a plain
    :class:`vision.reconstruct.Recognition`).

    ``reconstruct`` reads a photo as a snapshot of a legal game: an empty
    slot pinched between two standing tiles "cannot" have been emptied, so
    it reports it present.  A referee sees exactly that when a blocked tile
    is lifted, so where the classifier's own scores say "no face here" the
    slot reads empty again (a Reading's scores are needed for that).

    Returns the observation and an ``(N,)`` bool array of hidden slots.
    """
    tiles = recognition.tiles
    seen = [t.seen for t in tiles]
    conf = np.array([t.confidence for t in tiles], np.float64)
    present = np.array([t.present for t in tiles], bool)
    faces = [t.face if t.seen == "face" else None for t in tiles]
    fp = getattr(recognition, "face_probs", None)
    pn = getattr(recognition, "p_none", None)
    raw_hidden = getattr(recognition, "hidden", None)
    if raw_hidden is not None:
        hidden = np.asarray(raw_hidden, bool).copy()
    else:
        hidden = np.array([s == "occluded" for s in seen], bool)
    if fp is not None and pn is not None:
        pf = fp.sum(axis=1)
        for i, s in enumerate(seen):
            if s in ("face", "occluded") and not hidden[i] and pf[i] <= pn[i]:
                seen[i] = "empty"          # made present by the snapshot rules, not by the picture
                present[i] = False
                faces[i] = None
                conf[i] = float(pn[i] / max(pf[i] + pn[i], 1e-9))
    if start and not settings.start_as_found:
        need = 2.0          # nothing is known to be gone at the deal
    else:
        need = settings.start_absent_confidence if start else settings.absent_confidence
    known = ~hidden & np.array([s in ("face", "covered") or (s == "empty" and c >= need)
                                for s, c in zip(seen, conf)], bool)
    sig = getattr(recognition, "patches", None)
    return Observation(present, known, faces, conf, fp, pn, ~hidden, sig), hidden


class _Rejudge(Exception):
    """A move's write was refused as stale (the console wrote on the game in
    between) and nothing of it was written: judge it again on the game read
    anew (:meth:`Referee._judge`)."""


@dataclass
class _Seen:
    """A judged frame kept for evidence."""

    index: int
    image: np.ndarray
    recognition: object


#: a slot's reading in the picture a resumed game goes on from
#: (:meth:`Referee._resume`) counts when ``recognize`` reads it this surely
#: (its ``unsure`` mark lies under it)
RESUME_SURE = 0.7


@dataclass
class Referee:
    """Referees one game from a stream of frames.

    Args:
        variant, layout, players, mode: the game (mode defaults per variant).
        recognize_fn: ``recognize_fn(frame) -> Reading`` (:func:`read_board`)
            or a plain ``Recognition`` (may raise :class:`MatNotFound`).
        append: ``append(type, data, ref, t) -> ledger Event``, or None to keep
            the ledger in memory only (:attr:`events`).
        emit: called with each output event dict (the contract's JSONL lines).
        evidence: an :class:`EvidenceWriter` or None.
        fps: frames per second of the source (event time ``t`` = frame / fps).
        frame_number: ``frame_number(index) -> int``, the number an output
            line gives the frame fed as ``index`` (identity by default): a
            video timed by its timestamps is fed at its average rate, and
            its lines name each frame's number in the file
            (:meth:`vision.sources.FrameSource.file_frame`); ``t`` stays the
            time.
        settings: thresholds.
        advise: ``advise(frame) -> sentences`` or None: called once, before the
            game is recorded (a :class:`~companion.errors.WrongTileSet` it raises
            stops the run; other errors are ignored), on the
            first judged frame (the one the game starts from), for advice on
            the set-up (a wrong ``--variant`` or ``--layout``, a camera
            nearly overhead; :func:`vision.reconstruct.photo_advice` through
            a full ``recognize``); the sentences go to ``status.notes``,
            each with its frame.  An error inside it is no advice.
        history: ``history(after_id=0) -> [ledger Event]``, the game's
            events as the ledger holds them now, those with ids above
            ``after_id`` (``[]`` before the game starts), or None.
            Given, the referee reads its game back before each still picture
            it judges and before each event it writes, so what others wrote
            on the game meanwhile (the console settling an item, taking back
            or voiding a move, correcting a face, recording a move by hand,
            ending the game) counts at once: moves are judged on the game as
            the ledger holds it, the tracker expects back tiles a move taken
            back returned to the board (:meth:`BoardTracker.expect_back`),
            lets go of tiles a move recorded by hand took off
            (:meth:`BoardTracker.take_off`) and takes the referee's faces
            (:meth:`BoardTracker.told_face`); and ``append`` is then called
            with ``after`` (the newest event's id the move was judged on,
            :meth:`companion.ledger.Ledger.append`), so a move is never
            written on a game that changed in between.  None: the referee's
            own events are the game (a ledger only it writes).
        resume: the ledger events of a game to go on refereeing (a run
            stopped or crashed, its game kept in the ledger), or None to
            start a new game: no ``game_started`` is written; the game's
            board, scores and turn are the ledger's; the first judged
            picture is set against the ledger's board (:meth:`_resume`).

    Raises (on construction):
        BadInput: unknown variant or mode, or a mode that does not take this
        many players.
    """

    variant: str
    layout: Layout
    players: Sequence[str]
    recognize_fn: Callable
    mode: str | None = None
    append: Callable | None = None
    emit: Callable[[dict], None] = lambda d: None
    evidence: "EvidenceWriter | None" = None
    fps: float = 30.0
    settings: RefereeSettings = field(default_factory=RefereeSettings)
    advise: Callable | None = None
    history: Callable | None = None
    frame_number: Callable[[int], int] | None = None
    resume: Sequence | None = None

    def __post_init__(self) -> None:
        self.tiles = tileset(self.variant)
        if self.mode is None:
            self.mode = SOLO_MODES.get(self.variant, DEFAULT_MODES[self.variant]) if len(self.players) == 1 \
                else DEFAULT_MODES[self.variant]
        # check variant, mode and players before the first frame
        G.new_setup(self.variant, self.mode, self.layout, [None] * len(self.layout), list(self.players))
        self._words = self._word_index()     # loaded now: the first judged picture does not wait
        self._move_max = 2 if self._words is None else self.settings.tracker.word_max_tiles
        self._table_sig: np.ndarray | None = None     # the table beside the board with no hand (Word only)
        self._clear: tuple | None = None     # (signature, quads) of the last judged picture with nothing beside the board
        self._before_move: tuple | None = None   # (quads, BoardTracker.looks()) before the camera last moved
        self._sig_of: tuple | None = None    # (frame, its signature) of the frame being judged
        self._mat_art: tuple | None = None   # (MatSpec, its rendered art, presence model) for :meth:`_mat_bare`
        self._beside: tuple[np.ndarray, int] | None = None   # picture read with a hand beside, frame since alike
        s = self.settings
        self.motion = s.motion or MotionSettings.for_fps(self.fps, s.settle_s)
        self.gate = MotionGate(self.motion)
        self.tracker: BoardTracker | None = None
        self.state: G.GameState | None = None
        self.status = RefereeStatus()
        self.events: list[G.Event] = []
        self._next_id = 1
        self._last: _Seen | None = None          # last judged frame
        self._turn_before: _Seen | None = None   # judged frame before the turn's first lift
        self._baseline: np.ndarray | None = None  # slots seen (face or empty) in the last judged frame
        self._baseline_sig: np.ndarray | None = None  # (N, D) every slot's signature in that frame
        self._waiting = False                     # a settled frame was refused (hand in view)
        self._next_try = 0
        rate = self.fps if self.fps and self.fps > 0 else 30.0
        # frames far apart (a time-lapse, MotionSettings.for_fps): a change
        # may fall between two frames with no hand seen
        self._slow = rate * s.settle_s <= 1.0
        self._retry = max(1, int(round(s.retry_s * rate)))
        self._patience = max(1, int(round(s.patience_s * rate)))
        self._stuck = max(1, int(round(s.stuck_s * rate)))
        self._refused_since: int | None = None    # first still picture refused since the last judged one
        self._near = self._neighbours(s.guard_half_units)
        self._z = np.array([sl.z for sl in self.layout.slots], np.int64)
        self._confirm = max(1, int(round(s.confirm_s * rate))) if s.confirm_s > 0 else 0
        self._hold = max(1, int(round(s.claim_hold_s * rate)))
        # (observation, recognition, due frame, run start, changes, (index, frame) before the first reading)
        self._pending: tuple | None = None
        self._first_seen: tuple | None = None     # (run start, changes, observation, reading) dropped by motion
        self._first_seen_rejudged = False        # a still picture was read since it was dropped
        self._moving_since_first = 0              # frames of motion since (the gate's "moving")
        self._blip = max(2, int(round(s.blip_s * rate)))
        # a second reading cut short by motion is taken on the last still
        # frame up to this many frames before it was due: 0.5 s or more after
        # the first reading (at least ``blip_s`` before it; :meth:`_second_reading_cut_short`)
        self._early = max(self._blip, self._confirm - int(round(0.5 * rate)))
        self._last_frame: tuple | None = None     # (index, frame) of the last frame fed
        self._recent_frames: list[tuple] = []     # the last 3 (index, frame) fed
        self._fed: deque[int] = deque(maxlen=FED_KEPT)   # the indices of the frames fed, newest last
        self._relaid_first: tuple | None = None   # (run start, index, {slot: face}) of tiles first seen re-laid
        self._newest = 0                          # id of the newest ledger event the game was read with
        self._t_offset = 0.0                      # seconds added to this source's times (a game resumed)
        self._stale_raises = False                # a stale write raises _Rejudge (a tracker event is judged)
        self._disowned: set[tuple[int, str]] = set()   # (slot, face) readings the referee voided on the ledger
        self._ended_elsewhere: int | None = None  # frame at which another ended the game on the ledger
        # moves the rules refused whose tiles were taken off the table all
        # the same: (frame, player, slots, faces, why, evidence, unseen attempt?), until the
        # tiles come back or the next move is judged (:meth:`_kept_refused`)
        self._refused_off: list[tuple] = []
        # tracker slot -> the ledger's referee item holding its tile off the
        # table, expected back (:meth:`_expect_off_table`)
        self._off_expected: dict[int, int] = {}
        self._mover: tuple | None = None          # (slots, player) of the claim or word judged last

    # ------------------------------------------------------------------ frames

    def feed(self, index: int, frame: np.ndarray) -> list[dict]:
        """Take one ``(H, W, 3)`` uint8 BGR frame; returns the output events it
        caused (possibly none)."""
        self.status.frame = index
        self._last_frame = (index, frame)
        self._recent_frames = (self._recent_frames + [(index, frame)])[-3:]
        self._fed.append(index)
        m = self.motion
        fine = frame_signature(frame, m.local_size, m.local_blur) if m.local_delta is not None else None
        g = self.gate.update(frame_signature(frame, m.size, m.blur_sigma), fine)
        if g == "moving":
            out = self._changed_before_second_reading() if self._pending is not None \
                and self._pending[5] is not None else self._second_reading_cut_short()
            self.status.state = "hand or motion in view"
            self._waiting = False
            if self._pending is not None:     # remember the change and when it was first seen
                self._first_seen = (self._pending[3], self._pending[4], self._pending[0], self._pending[1])
                self._first_seen_rejudged = False
                self._moving_since_first = 0
            self._pending = None
            self._moving_since_first += 1
            return out
        if g == "settling":
            return []
        if g == "settled":
            if self._pending is not None:
                # a picture that changed patch by patch, nothing seen moving,
                # while a change waited for its second reading (at video
                # rates, :meth:`MotionGate._local`): the waiting change is
                # kept as one seen before a motion, never read on this one
                return self._changed_before_second_reading() + self._judge_frame(index, frame, relaxed=False)
            return self._judge_frame(index, frame, relaxed=False)
        # "same": settled and already reported
        if self._pending is not None and self.gate.changing and self._slow:
            # (at video rates such a change is fingertips at the picture's
            # edge, or a hand holding a lifted tile beside the board, not a
            # new picture: the second reading is taken when due, bench game
            # 7703, whose blocked lift was otherwise lost)
            return self._changed_before_second_reading()
        if (self.tracker is not None and self.tracker.held_since is not None
                and index - self.tracker.held_since >= self._hold):
            return self._claim_held(self._last)    # away long enough: the scoreboard need not wait
        if self._pending is not None:
            return self._judge_frame(index, frame, relaxed=False) if index >= self._pending[2] else []
        if self._waiting:
            if index - self._run_start(index) >= self._patience:
                self._waiting = False
                return self._judge_frame(index, frame, relaxed=True)
            if index >= self._next_try:
                return self._judge_frame(index, frame, relaxed=False)
            return []
        self.status.state = "settled"
        return []

    def _run_start(self, index: int) -> int:
        """The index of the first frame of the still run that frame ``index``
        (one fed) ends: the frame fed ``MotionGate.still`` frames before it.

        A live camera's indices count the camera's frames, some of which the
        referee may have skipped (:attr:`vision.sources.FrameSource.dropped`),
        so the run's start is looked up among the frames fed, not counted
        back from ``index`` (which dated a re-test's events 4-9 frames late,
        on frames never fed, with every other frame skipped).  Where indices
        follow one another (a folder, a video) the two agree."""
        still = self.gate.still
        fed = self._fed
        for back, i in enumerate(reversed(fed)):
            if i == index:
                at = len(fed) - 1 - back - still
                return fed[at] if at >= 0 else index - still
            if back > 8:
                break
        return index - still

    def _frame_before(self, index: int, run_start: int) -> tuple | None:
        """A kept ``(index, frame)`` of the same still run (from ``run_start``)
        at least the second reading's delay (``confirm_s``) before frame
        ``index``, the latest such, else None.  Only a slow source (a
        time-lapse, under about 2 frames a second) keeps one: at video
        rates a picture that changes within ``confirm_s`` of its first reading
        was not still long enough to count."""
        for i, f in reversed(self._recent_frames):
            if run_start <= i <= index - max(1, self._confirm):
                return i, f
        return None

    def _second_reading_cut_short(self) -> list[dict]:
        """The picture began to move (this frame) shortly before a change's
        second reading was due, 0.5 s or more after the first reading (at
        least ``blip_s`` before it was due): the reading is taken on the last
        still frame, the one fed before this (at 30 frames a second, 0.5 s or
        more after the first reading instead of 0.7 s; at 10 frames a
        second, as ``blip_s``: half of ``confirm_s`` there charged a bench
        game a penalty no one earned).  Bench game 15903 (session 50): a
        blocked tile kept off for 1.0 s was read gone 0.1 s after the hand
        left, and a shadow of the hand coming back moved the picture 0.13 s
        before the second reading: the penalty was lost, as the tile was
        back in the next still picture.  Bench game 9203:
        a blocked tile lifted and kept off the board for 1.0 s with no hand
        in view, read gone once (the picture settles 0.3 s after the hand
        leaves), the second reading due on the very frame the hand came back
        into the picture: the lift and its penalty were lost.  Otherwise
        nothing."""
        if self._pending is None or len(self._recent_frames) < 2:
            return []
        index, frame = self._recent_frames[-2]
        if self._pending[2] - index > self._early or index < self._pending[3]:
            return []
        return self._judge_frame(index, frame, relaxed=False)

    def _changed_before_second_reading(self) -> list[dict]:
        """The picture changed before a change's second reading was due: in a
        slow source (a time-lapse) with nothing moving (one tile lifted or
        put back between frames far apart) or moving (a hand, a camera that
        drifts); at video rates, patch by patch into a new still picture
        with nothing seen moving (fingertips at the picture's edge).  The
        second reading is then taken on a frame of the same still picture
        before the first reading, at least ``confirm_s`` earlier
        (:meth:`_frame_before`: a slow source's only), and never on the new
        picture (read as the
        second reading of the old one, a blocked tile lifted there merged
        with the old change and the tiles' return was missed).  Without such
        a frame, or when it is refused, the change waits for the next still
        picture, as one seen before a motion does."""
        before = self._pending[5]
        self._pending = self._pending[:5] + (None,)
        out = self._judge_frame(*before, relaxed=False) if before is not None else []
        if self._pending is not None:
            self._first_seen = (self._pending[3], self._pending[4], self._pending[0], self._pending[1])
            self._first_seen_rejudged = False
            self._moving_since_first = 0
            self._pending = None
        return out

    def finish(self, stopped: bool = False) -> list[dict]:
        """End of the source (``stopped``: a live camera stopped by the
        user, Ctrl+C, where a hand over the board at that moment says
        nothing of the game's end): a change waiting for its second reading is read
        again on the last frame (when that comes at least half of
        ``confirm_s`` after the first; sooner, the first reading alone
        decides, :meth:`_first_reading_alone`, and so it does for a change
        cut off by motion when no picture was still again before the end);
        tiles still off the board are resolved.  (A
        still run cut short by the end, under ``settle_s``, is not judged: one
        reading of a picture a hand may have just left made up penalties in a
        break-test.)"""
        if self._slow and self.motion.local_delta is not None and self.gate.unsettled >= 2:
            k = self.motion.settle_frames
            self.status.notes.append(
                f"{count(self.gate.unsettled, 'change')} of the picture, with nothing seen moving, stood on fewer "
                f"than {k} frames in a row and were not judged (frames far apart, as in a time-lapse: a tile "
                f"lifted and put back between two frames is missed); take frames more often, so that every move "
                f"stands still on {k} frames or more")
        if self.tracker is None:
            return []
        if self._refused_since is not None and self.status.state == "hand in view" and not stopped:
            since = self._last.index if self._last is not None else self._refused_since
            self.status.notes.append(
                f"from frame {self._refused_since} to the end every still picture looked as if a hand lay over "
                f"the board (slots hidden or changed), so nothing after frame {since} was judged: keep hands "
                "off the board at the end, and check the light on the mat")
        out: list[dict] = []
        if self._pending is not None and self._last_frame is not None:
            first = self._pending[2] - self._confirm
            obs, rec = self._pending[0], self._pending[1]
            lifts = np.zeros(len(self.layout), bool)
            lifts[list(self._pending[4][0])] = True
            if self._last_frame[0] - first >= max(1, self._confirm // 2):
                out.extend(self._judge_frame(*self._last_frame, relaxed=False))
            else:
                # the source ends too soon after the first reading for a second
                # one: the first reading alone decides, its tiles coming back
                # and at most one move's lifts (a break-test's recordings, cut
                # a few frames after a hand left, made up several penalties
                # when the last frame was taken as the second reading)
                out.extend(self._first_reading_alone(obs, rec, lifts, self._pending[3]))
            self._pending = None
        elif self._first_seen is not None and not self._first_seen_rejudged and self._last_frame is not None:
            # a change seen in a still picture, then cut off by motion, and the
            # source ended before any picture was still again: that first
            # reading alone decides, as above (bench Word game 7733: the camera
            # was knocked 0.6 s after a pair left, the recording ended 0.4 s
            # later, and the pair stayed on the ledger's board)
            run_start, changes, obs, rec = self._first_seen
            lifts = np.zeros(len(self.layout), bool)
            lifts[list(changes[0])] = True
            out.extend(self._first_reading_alone(obs, rec, lifts, run_start))
            self._first_seen = None
        self._sync()
        last = self._last
        for ev in self.tracker.finish(self.status.frame):
            out.extend(self._judge(ev, last))
        out.extend(self._kept_refused(self.status.frame))     # never put back
        if not self.tracker.busy:
            self._record_faces(self.status.frame)
        return out

    def _first_reading_alone(self, obs: Observation, rec, lifts: np.ndarray, run_start: int) -> list[dict]:
        """At the end of the source, a change read once (``obs``, the
        reading ``rec``; ``lifts`` ``(N,)`` bool, the tiles it saw leave) and
        never read again decides alone: its tiles coming back, and its lifts
        only when they are at most one move's (two tiles)."""
        out: list[dict] = []
        board = np.asarray(self.tracker.board.present, bool) & ~np.isin(
            np.arange(len(self.layout)), self.tracker.state.lifted)
        keep = lifts if lifts.sum() <= 2 else np.zeros_like(lifts)
        obs = replace(obs, known=np.asarray(obs.known, bool) & ~(board & ~keep))
        current = _Seen(self._last_frame[0], self._last_frame[1], rec)
        for ev in self.tracker.observe(run_start, obs):
            out.extend(self._judge(ev, current))
        self._last = current
        return out

    def _judge_frame(self, index: int, frame: np.ndarray, relaxed: bool) -> list[dict]:
        self._sync()
        run_start = self._run_start(index)
        self._first_seen_rejudged = True
        try:
            try:
                rec = self.recognize_fn(frame)
            except CameraMisfit:
                if not self.status.mat_seen:
                    raise              # the file is wrong for this recording
                raise MatNotFound("the camera file does not fit this frame") from None
        except MatNotFound:
            self.status.state = "mat not found"
            self.status.mat_missed += 1
            self._pending = None
            self._waiting = True
            self._next_try = index + self._retry
            return []
        self.status.mat_seen = True
        obs, hidden = observation_from(rec, self.settings, start=self.tracker is None)
        if self.tracker is not None and self.settings.behind_stack_above < 1.0:
            obs = self._unseen_behind_stacks(obs, rec, frame)
        if self.tracker is not None:
            obs = self._stand_odds(obs, rec, frame)
        seen_now = ~hidden & np.array([t.seen in ("face", "empty", "occluded") for t in rec.tiles], bool)
        light = False           # the light changed, and the picture would be refused for it
        if self._baseline is not None:
            newly = hidden & self._baseline
            # standing tiles whose face is read, as the tracker reads them
            standing_read = np.asarray(obs.known, bool) & np.asarray(obs.present, bool)
            if self.tracker is not None:
                # a slot that looks as it did is not under a hand, whatever the
                # classifier says of it this time
                newly &= self.tracker.looks_changed(obs)
                # nor one that looks as in the last judged picture: a face
                # the classifier reads as hidden now and then (a small
                # picture's edge faces, bench game 10402 at 640 x 480: four
                # such slots refused every picture of a penalty and an
                # attempt) was not under a hand there, and is not now
                newly &= ~self._looks_as_judged(obs)
                # nor an empty slot that shows the bare mat (the look of a
                # blank patch is mostly noise: bench game 11906, two
                # emptied edge slots read hidden once their neighbour was
                # claimed too, and every picture of two claims was refused)
                st = self.tracker.state
                vacant = ~np.asarray(self.tracker.board.present, bool)
                vacant[st.lifted] = True
                if (newly & vacant).any():
                    newly &= ~self._mat_bare(frame, rec, newly & vacant)
                # a slot emptied by the move may read as hidden: the tracker
                # explains it (a move empties two slots at most, a word
                # ``word_max_tiles``)
                c = self.tracker.corrected(obs)
                gone_now = np.asarray(c.known, bool) & ~np.asarray(c.present, bool)
                standing_read = np.asarray(c.known, bool) & np.asarray(c.present, bool)
                # (or by a tile coming back, seen back by its look though
                # the classifier calls its slot hidden: bench game 10402)
                back_now = np.zeros(len(hidden), bool)
                back_now[self.tracker.state.lifted] = True
                back_now &= standing_read
                explained = newly & (gone_now | back_now)
                # (at most a pair's two, even where a word may take five: a
                # word's tiles leave the mat or the tiles below in sight,
                # read empty or as faces, and an arm resting across a row
                # reads its tiles hidden.  Bench games 19503 and 19703, the
                # independent renderer: a light palm over four and five
                # tiles, which the grey pictures of ``hand_reach`` hardly
                # told from the ivory tiles, was taken for a word lifted,
                # and penalties were charged for tiles never touched)
                if int(explained.sum()) <= min(self._move_max, self.settings.hidden_move_max):
                    newly &= ~explained
                # an empty slot over a tile gone or back now (its window,
                # at its own height, shows the stack below it change): the
                # move explains it too (bench game 17100, Cupid's Citadel:
                # a pair held off the board for 1 s, one of them from under
                # a slot claimed before, which read hidden; every picture of
                # the pair away was refused as a hand over the board, and the
                # attempt was never seen)
                if (newly & vacant).any():
                    newly &= ~(vacant & self._over_changed(gone_now | back_now))
            crowd = self.tracker.changed_standing(obs) if self.tracker is not None else np.zeros(len(hidden), bool)
            if obs.behind is not None:
                # a tile behind a taller one looks changed when that one leaves
                crowd &= ~np.asarray(obs.behind, bool)
            if self._words is not None and self.tracker is not None:
                # Word Mahjong: the tiles of a word all read gone, not as a
                # hand over them (which reads them changed but standing)
                gone_crowd = crowd & gone_now
                if int(gone_crowd.sum()) <= self._move_max:
                    crowd &= ~gone_crowd
            # slots under something reaching in from beside the board (a
            # hand held still, its fingers read as "no face"): hidden too,
            # unless a standing tile is read there (fingertips of a hand
            # resting by the board, on the edge of its outer tiles: a face
            # read is no false "gone", and refusing every picture while the
            # hand stays would hold a claim back ``stuck_s`` and lose a
            # blocked tile lifted and put back meanwhile).  As the tracker
            # reads it: a face read weakly under fingertips, its own face's
            # probability fallen, is a tile gone for the tracker (a false
            # penalty where the fingers rest on a blocked tile)
            over = self._hand_over(frame, rec) & self._baseline & ~standing_read
            if over.any():
                # read empty, and the mat seen bare there: a tile lifted and
                # held beside the board, not fingertips over it
                empty = np.asarray(obs.known, bool) & ~np.asarray(obs.present, bool)
                if self.tracker is not None:
                    empty &= gone_now
                over &= ~self._mat_bare(frame, rec, over & empty)
            newly |= over
            if self.tracker is not None and int(crowd.sum()) > self.settings.max_changed \
                    and int(newly.sum()) <= self.settings.max_hidden \
                    and (not self.tracker.busy or self.tracker.held_since is not None):
                # many standing tiles show other faces, read surely, none
                # hidden, gone or back: the tiles were re-laid (a reshuffle).
                # A tile on a stack read with another face counts as gone
                # for the tracker (the tile below seen too high): read
                # standing with a sure face, it is one of the re-laid
                relaid = self.tracker.relaid(obs)
                lifts, returns = self.tracker.changes(obs)
                if int(relaid.sum()) > self.settings.max_changed \
                        and relaid.sum() >= self.settings.relaid_share * crowd.sum() \
                        and not returns and all(relaid[i] for i in lifts):
                    return self._relaid(index, run_start, frame, obs, rec, crowd, relaid, seen_now)
            if int(newly.sum()) > self.settings.max_hidden or int(crowd.sum()) > self.settings.max_changed:
                light = self._light_changed(frame, rec)
                stuck = self._refused_since is not None and index - self._refused_since >= self._stuck
                relaxed = relaxed or light or stuck
                if light:
                    crowd = np.zeros(len(hidden), bool)   # the looks changed with the light: learnt again below
                if not relaxed:
                    if self._refused_since is None:
                        self._refused_since = index
                    self.status.state = "hand in view"
                    if self._pending is not None:     # try the second reading again later
                        self._pending = self._pending[:2] + (index + self._retry,) + self._pending[3:]
                    self._waiting = True
                    self._next_try = index + self._retry
                    return []
                # still for long: judge, leaving the hidden or changed slots and
                # their neighbours as they were
                trouble = newly | (crowd if int(crowd.sum()) > self.settings.max_changed else False)
                guard = self._near[trouble].any(axis=0) | hidden
                # slots something reaching in from beside the board lies
                # over, read hidden: not judged at all (Observation.held; a
                # break-test, session 50: the demo's exposure flickering by
                # 5 % let a picture of a hand resting over four tiles pass as
                # a change of light, and the fall of their faces under the
                # fingers took them off, one of them blocked, for a false
                # penalty; refusing such pictures instead lost a real penalty
                # lifted as the light stepped)
                held = over & hidden
                obs = replace(obs, known=obs.known & ~guard, held=held if held.any() else None)
                seen_now &= ~guard
                seen_now |= self._baseline & guard & ~hidden   # neighbours keep their baseline
        self._waiting = False
        self.status.state = "settled"
        self.status.judged += 1
        confirmed = self._pending is not None
        if confirmed:
            obs = self.tracker.merge(self._pending[0], obs)
            run_start = self._pending[3]
            self._pending = None
        later = None            # a newer change still to be read twice
        if not confirmed and self._confirm and self.tracker is not None and self.tracker.would_change(obs):
            changes = self.tracker.changes(obs)
            first = self._first_seen
            if first is not None and first[1][0] <= changes[0] and first[1][1] <= changes[1]:
                # the change seen before some motion is seen again: two readings
                # agree on it; anything newer waits for its own second reading.
                # When something newer came, the first change was over before it:
                # its frame is that of the first sighting.  When nothing did, the
                # motion in between was the same move ending (a hand still at
                # work, whose fingers may have hidden a tile that has only now
                # left): its frame is this still run's first, unless that
                # motion was too short for a hand (``blip_s``: a shaken camera)
                if first[1] != changes:
                    later = (obs, run_start)
                    obs = first[2]
                    run_start = first[0]
                else:
                    obs = self.tracker.merge(first[2], obs)
                    if 0 < self._moving_since_first <= self._blip:
                        run_start = first[0]
            else:
                self._pending = (obs, rec, index + self._confirm, run_start, changes,
                                 self._frame_before(index, run_start))
                return []
        self._first_seen = None
        self._relaid_first = None
        self._baseline = seen_now
        self._baseline_sig = None if obs.patches is None else np.array(obs.patches, np.float32)
        self._refused_since = None
        current = _Seen(index, frame, rec)
        out: list[dict] = []
        relearn_clear = relaxed
        if self.tracker is None:
            advice: tuple[str, ...] = ()
            snapshot = None
            if self.advise is not None:
                # asked before the game is recorded: advice may refuse the
                # set-up (WrongTileSet: the faces are another set's)
                try:
                    got = self.advise(frame)
                    if hasattr(got, "advice"):          # the whole reading (recognize's), advice in it
                        snapshot, got = got, got.advice
                    advice = tuple(got)
                except WrongTileSet:
                    raise
                except LedgerLost:       # (the ledger can take no more: the run stops)
                    raise
                except CompanionError:
                    advice = ()
            self._start(run_start, self._first_fronts(obs, rec), snapshot)
            if self._words is not None:
                self._table_sig = self._signature(frame)
            self.status.notes.extend(f"{a} (frame {self._file_frame(index)})" for a in advice)
        else:
            moved = self._last is not None and \
                camera_shift(self._last.recognition.quads, rec.quads) > self.settings.camera_moved_px
            back = self._before_move
            if moved and back is not None and camera_shift(back[0], rec.quads) <= self.settings.camera_moved_px:
                # the camera came back to where it stood before the last move,
                # and nothing was judged to change since: the looks from then
                # are put back and the picture judged as any
                # (BoardTracker.restore_looks)
                moved = not self.tracker.restore_looks(back[1])
                relearn_clear = True
                self._before_move = None
            if moved or light:
                # (a change of light makes the looks kept before it stale)
                self._before_move = None if light else \
                    (np.array(self._last.recognition.quads, np.float64), self.tracker.looks())
            lit = not moved and light
            moved = moved or lit
            relearn_clear = relearn_clear or moved
            held_back = moved and self.tracker.held_since is not None and any(
                obs.known[i] and obs.present[i] for i in self.tracker.state.lifted)
            mid_move = self._words is not None and self._hand_beside_board(frame, rec, relearn=moved)
            if self.tracker.held_since is not None and not held_back and (
                    moved or not self.tracker.changes(obs)[1]) and not self.tracker.word_grows(obs) \
                    and not (mid_move and not moved and self.tracker.word_open()):
                # a valid pair still off the board in a later settled picture:
                # claimed now (with the frame it was first seen gone), and its
                # turn's evidence closed before anything newer is judged.  After
                # a camera move the looks cannot tell a return: a tile of the
                # pair read present keeps it held (the referee is asked below)
                out.extend(self._claim_held(current))
            if moved:
                # the camera moved since the last judged picture: what looks
                # changed now is not trusted (a stack seen from elsewhere hides
                # other faces), except tiles read surely before and surely gone
                # now; for the rest the referee is asked, nothing is scored
                suspects = self.tracker.rebase(obs, light=lit)
                if suspects:
                    mask = np.zeros(len(self.layout), bool)
                    mask[suspects] = True
                    obs = replace(obs, known=np.asarray(obs.known, bool) & ~mask)
                    slots = [self.layout.slots[i] for i in suspects]
                    faces = [self.tracker.state.faces[i] for i in suspects]
                    what = "the light changed" if lit else "the camera moved"
                    flag = self._needs(run_start, slots, faces,
                                       f"{what} and {count(len(slots), 'slot')} now read differently: "
                                       "check whether tiles left or came back", {"frame": run_start})
                    out.append(self._output(flag, run_start))
            was_busy = self.tracker.busy
            if not moved and not relaxed:
                # no hand over the board: slots read hidden now are so by
                # themselves (newly hidden ones refuse the picture)
                self.tracker.keep_hidden_looks(obs, hidden)
            events = self.tracker.observe(run_start, obs, mid_move=mid_move)
            if self._before_move is not None and moved:
                self.tracker.note_board(self._before_move[1])
            if not was_busy and any(e.type == "lift" for e in events):
                self._turn_before = self._last
            for ev in events:
                out.extend(self._judge(ev, current))
            self._write_tiles_back(run_start)
            self._expect_off_table()
            if not self.tracker.busy:
                self._turn_before = None
                self._record_faces(run_start)
        self._last = current
        self._learn_clear(frame, rec, relearn_clear)
        self.status.tiles_on_board = int(self.tracker.board.n_present) - len(self.tracker.state.lifted)
        if later is not None and self.tracker.would_change(later[0]):
            self._pending = (later[0], rec, index + self._confirm, later[1], self.tracker.changes(later[0]),
                             self._frame_before(index, later[1]))
        return out

    def _relaid(self, index: int, run_start: int, frame: np.ndarray, obs: Observation, rec, changed: np.ndarray,
                relaid: np.ndarray, seen_now: np.ndarray) -> list[dict]:
        """A still picture in which many standing tiles read other faces
        surely, with none gone (:meth:`BoardTracker.relaid`): the tiles were
        gathered and re-laid on their slots in another order (Mindful Law 4,
        the Zen Reshuffle: "gathered, gently shuffled, and re-laid onto the
        current layout footprint without changing layer heights"; Word's
        Lexicon Fan).  It counts when a second reading at least
        ``confirm_s`` later (in this still moment or a later one) reads the
        same faces; until then the picture waits, as one with a hand in view.
        Then the tracker learns the new faces and looks
        (:meth:`BoardTracker.relay`), so later moves are judged on them, and
        the ledger gets a ``reshuffle`` of the faces read, by the player in
        turn (:meth:`_judge_relay`), dated at the first reading."""
        out: list[dict] = []
        if self.tracker.held_since is not None:
            # a valid pair off the board before, still gone in this picture:
            # claimed now (as in any later still picture), before the re-laying
            out.extend(self._claim_held(_Seen(index, frame, rec)))
        faces = {int(i): obs.faces[i] for i in np.flatnonzero(relaid)}
        first = self._relaid_first
        if first is None or not _same_faces(first[2], faces):
            self._relaid_first = first = (run_start, index, faces)
        if index - first[1] < max(1, self._confirm):
            self.status.state = "tiles re-laid: reading them again"
            self._pending = None
            self._waiting = True
            self._next_try = index + max(self._retry, self._confirm)
            return out
        self._relaid_first = None
        self._pending = None
        self._first_seen = None
        self._waiting = False
        self._refused_since = None
        self._baseline = seen_now
        self._baseline_sig = None if obs.patches is None else np.array(obs.patches, np.float32)
        self.status.state = "settled"
        self.status.judged += 1
        current = _Seen(index, frame, rec)
        moved = self.tracker.relay(first[0], obs, changed | relaid)
        out.extend(self._judge_relay(first[0], moved, current))
        self._last = current
        self._learn_clear(frame, rec, True)
        self._record_faces(first[0])
        self.status.tiles_on_board = int(self.tracker.board.n_present)
        return out

    def _judge_relay(self, frame: int, moved: list[int], current: "_Seen") -> list[dict]:
        """The ledger's side of tiles re-laid (:meth:`_relaid`): a
        ``reshuffle`` event by the player in turn whose faces are the
        ledger's with the tiles ``moved`` (slot indices) given the faces the
        camera read (none where it could not read one surely, as for covered
        tiles: a later ``faces_seen`` names them).  When the rules refuse a
        reshuffle now (Mindful Law 4: only "If the board reaches a state with
        zero legal free matches available", a Zen Focus token and the
        session's reshuffles left; no reshuffle in Love or Candy Mahjong),
        one ``needs_referee`` item names the slots instead; the camera judges
        later moves on the faces it read either way."""
        ts = self.tracker.state
        slots = [self.layout.slots[i] for i in moved]
        faces = [ts.faces[i] for i in moved]
        if self._ended_elsewhere is not None:
            return []
        if self._relaid_as_told(moved):
            self.status.notes.append(f"the tiles were re-laid as the reshuffle on the ledger has them (frame "
                                     f"{self._file_frame(frame)})")
            return []
        player = self._player()
        ev = TrackEvent("reshuffle", frame, tuple(slots), tuple(faces),
                        reason=f"{count(len(slots), 'standing tile')} show other faces, none gone: re-laid")
        evidence = self.evidence.save(ev, self._last, current) if self.evidence else None
        extra: dict = {"frame": frame}
        if evidence:
            extra["evidence"] = evidence
        st = self.state
        where = {s: j for j, s in enumerate(st.layout.slots)}
        new = list(st.faces)
        for i in moved:
            j = where.get(self.layout.slots[i])
            if j is not None and st.board.present[j]:
                new[j] = ts.faces[i]
        data = {"player": player, "faces": new, "source": "camera", "slots": [list(s) for s in slots], **extra}
        try:
            self._write([G.Pending("reshuffle", data)], frame)
            out = {"type": "reshuffle", "frame": frame, "player": player, "slots": [list(s) for s in slots],
                   "faces": faces, "reason": None}
        except LedgerLost:       # (the ledger can take no more: the run stops)
            raise
        except CompanionError as exc:
            out = self._needs(frame, slots, faces,
                              f"{count(len(slots), 'standing tile')} show other faces with no tile gone (re-laid, "
                              f"as a reshuffle does), but the rules refuse a reshuffle now: {exc}", extra, player)
            # the ledger's board is the table's all the same (no move: the
            # turn, points and tokens stay), so free pairs and the end are
            # judged on the faces there; the referee settles the item
            seen = [(list(self.layout.slots[i]), ts.faces[i]) for i in moved if ts.faces[i] is not None]
            if seen:
                try:
                    self._write([G.Pending(FACES_SEEN, {"slots": [s for s, _ in seen], "faces": [f for _, f in seen],
                                                         "source": "camera", "frame": frame})], frame)
                except LedgerLost:       # (the ledger can take no more: the run stops)
                    raise
                except CompanionError:
                    pass
        if evidence:
            out["evidence"] = evidence
        return [self._output(out, frame)]

    def _first_fronts(self, obs: Observation, rec) -> Observation:
        """The first judged picture's ``obs`` with ``front``
        (:class:`vision.tracking.Observation`) for each slot under another:
        the taller tiles, not read empty, that show in its window from the
        camera (:func:`vision.reconstruct.occluders_in_view`), bar the tile
        right above it.  The tracker takes a face read one layer low, under
        a slot read empty, for the upper tile's, unless one of these reads
        it too (bench game 20302).  ``obs`` as given where the reading has
        no pose or already carries ``front``."""
        from vision.reconstruct import occluders_in_view
        pose = getattr(getattr(rec, "recognition", rec), "pose", None)
        spec = getattr(rec, "spec", None)
        if pose is None or spec is None or obs.front is not None:
            return obs
        slots = self.layout.slots
        at = {(s.x, s.y, s.z): i for i, s in enumerate(slots)}
        lower = [i for i, s in enumerate(slots) if (s.x, s.y, s.z + 1) in at]
        up = ~(np.asarray(obs.known, bool) & ~np.asarray(obs.present, bool))
        occ = [j for j in range(len(slots)) if up[j]]
        if not lower or not occ:
            return obs
        shows = occluders_in_view([slots[d] for d in lower], [slots[j] for j in occ], pose.camera_centre_mm, spec)
        front: list = [None] * len(slots)
        for d, ks in zip(lower, shows):
            s = slots[d]
            above = at[(s.x, s.y, s.z + 1)]
            front[d] = tuple(occ[k] for k in ks if occ[k] != above and slots[occ[k]].z > s.z)
        return replace(obs, front=tuple(front))

    def _unseen_behind_stacks(self, obs: Observation, rec, frame: np.ndarray | None = None) -> Observation:
        """``obs`` with the empty readings of standing tiles whose face the
        taller tiles standing in front hide from the camera by more than
        ``behind_stack_above`` made unknown: their window shows the tile in
        front's side (read as "no face"), and it looks changed when that
        tile leaves (a steep view past a taller stack: the tile behind would
        be lifted with it).  Hidden shares from the tracker's board and this
        picture's pose (:func:`vision.reconstruct.hidden_fraction`)."""
        from vision.reconstruct import hidden_fraction, occluders_in_view
        pose = getattr(getattr(rec, "recognition", rec), "pose", None)
        spec = getattr(rec, "spec", None)
        if pose is None or spec is None:
            return obs
        board = self.tracker.board
        slots = self.layout.slots
        # a tile whose every cover is lifted shows its face in this picture
        # (bench game 13204, the turtle 10 degrees from overhead: a layer-0
        # tile two thirds behind a layer-2 stack, uncovered by a claim not
        # yet settled, read "no face" at 0.51; its window changed when that
        # stack's top tile left, and it was penalised as lifted)
        lifted = set(self.tracker.state.lifted)
        cover = board.geometry.covered_by
        ask = [i for i in range(len(slots)) if board.present[i]
               and all(j in lifted or not board.present[j] for j in cover[i])]
        if not ask:
            return obs
        standing = [slots[j] for j in range(len(slots)) if board.present[j]]
        hid = hidden_fraction([slots[i] for i in ask], standing, pose.camera_centre_mm, spec,
                              samples=5)
        behind = [i for i, h in zip(ask, hid) if h > self.settings.behind_stack_above]
        if not behind:
            return obs
        known = np.asarray(obs.known, bool).copy()
        known[behind] = False
        read = np.asarray(obs.known if obs.read is None else obs.read, bool).copy()
        read[behind] = False
        mask = np.zeros(len(slots), bool)
        mask[behind] = True
        camera = pose.camera_centre_mm

        def with_front(o: Observation) -> Observation:
            # the taller tiles that show in each masked slot's window
            if o.behind is None:
                return o
            rows = np.flatnonzero(o.behind)
            occ = [j for j in range(len(slots)) if board.present[j]]
            shows = occluders_in_view([slots[i] for i in rows], [slots[j] for j in occ], camera, spec)
            front: list = [None] * len(slots)
            for i, ks in zip(rows, shows):
                front[i] = tuple(occ[k] for k in ks)
            return replace(o, front=tuple(front))

        masked = replace(obs, known=known, read=read, behind=mask)
        # tiles in front that are off the board in this picture, as the
        # tracker reads it (lifted now, or earlier and not back), hide
        # nothing: a tile they hid alone is read as any other (bench game
        # 12402, Twin Hearts: a layer-0 tile behind a layer-2 one was
        # claimed with it; its slot read "no face" at 0.77 once both were
        # gone, but it stayed masked while the upper tile was off, and the
        # claim's other half was never seen leaving)
        c = self.tracker.corrected(masked)
        off = np.asarray(board.present, bool) & np.asarray(c.known, bool) & ~np.asarray(c.present, bool)
        if not off.any():
            return with_front(masked)
        rest = [slots[j] for j in range(len(slots)) if board.present[j] and not off[j]]
        hid2 = hidden_fraction([slots[i] for i in behind], rest, camera, spec, samples=5)
        # read empty, only surely (the tracker's ``behind_read``) and with
        # the presence model finding no tile there (``frame``,
        # :meth:`_presence_logits`: log-odds under 0): the tile in front just
        # left, so the slot's look cannot tell, and a window still partly
        # hidden reads "no face" while its tile stands (bench game 11302,
        # Dragon's Tail: 0.61 beside a layer-2 tile; game 7763, Word: 0.77,
        # a tile whose face the classifier never read, log-odds +4.1;
        # penalties for tiles no one touched.  The tile gone in game 12402:
        # 0.77, log-odds -12.3)
        present = np.asarray(obs.present, bool)
        empty = np.asarray(obs.known, bool) & ~present \
            & (np.asarray(obs.confidence, np.float64) >= self.tracker.settings.behind_read)
        ask = [i for i, h in zip(behind, hid2) if h <= self.settings.behind_stack_above and empty[i]]
        sure = present.copy()
        if ask and frame is not None:
            logits = self._presence_logits(frame, rec, ask)
            if logits is not None:
                sure[[i for i, g in zip(ask, logits) if g < 0.0]] = True
        plain = [i for i, h in zip(behind, hid2) if h <= self.settings.behind_stack_above and sure[i]]
        if not plain:
            return with_front(masked)
        known[plain] = np.asarray(obs.known, bool)[plain]
        read[plain] = np.asarray(obs.known if obs.read is None else obs.read, bool)[plain]
        mask[plain] = False
        return with_front(replace(obs, known=known, read=read, behind=mask if mask.any() else None))

    def _looks_as_judged(self, obs: Observation) -> np.ndarray:
        """(N,) bool: slots whose signature (``obs.patches``) correlates at
        least ``change_ncc`` (the tracker's) with theirs in the last judged
        picture, whatever either reading was: nothing came over them since
        (a hand over a slot drops the correlation near 0).  All False
        without signatures."""
        n = len(self.layout)
        if obs.patches is None or self._baseline_sig is None or self.tracker is None \
                or self._baseline_sig.shape != np.shape(obs.patches):
            return np.zeros(n, bool)
        ncc = np.einsum("nd,nd->n", np.asarray(obs.patches, np.float32), self._baseline_sig)
        return ncc >= self.tracker.settings.change_ncc

    def _relaid_as_told(self, moved: list[int]) -> bool:
        """Whether tiles re-laid show the faces the ledger already holds for
        their slots, where both know one (at least one): a reshuffle
        recorded on the console (or ``companion game reshuffle``) and then
        laid out at the table as it told, which is no second reshuffle."""
        st, ts = self.state, self.tracker.state
        where = {s: j for j, s in enumerate(st.layout.slots)}
        both = [(ts.faces[i], st.faces[where[self.layout.slots[i]]]) for i in moved
                if self.layout.slots[i] in where and ts.faces[i] is not None
                and st.faces[where[self.layout.slots[i]]] is not None]
        return bool(both) and all(a == b for a, b in both)

    def _hand_beside_board(self, frame: np.ndarray, rec, relearn: bool = False) -> bool:
        """Whether a hand (or anything new) shows in the picture beside the
        board: more than ``hand_beside_share`` of the table and mat around
        the slots (the slots' box grown by a tile) differs from the last
        judged picture that showed none there (:func:`beside_board_change`).
        Word Mahjong only: a word's move is long, and a still moment with
        the player's hand resting off the board, letters in it, is judged in
        the middle of it.  Learns the picture when it shows no hand; when
        the camera moved or the light changed (``relearn``: the table looks
        different, no hand needed); and when every judged picture for
        ``hand_beside_stuck_s`` has shown the same thing beside the board (a
        cup put down: no sign of a move going on).  Before session 34, a
        camera knocked once made every later picture "a hand beside the
        board"."""
        sig = self._signature(frame)
        base = self._table_sig
        if base is None or base.shape != sig.shape or relearn:
            if self._beside is not None and self.tracker is not None and self.tracker.busy:
                # knocked (or the light changed) while a hand rested beside
                # the board mid-move: the new view holds that hand, so it is
                # not the table; the move stays open, and the table is learnt
                # once the move is over (a break-test's knock during HOUSE
                # learnt the resting hand as table and split the word)
                self._table_sig = None
                return True
            self._table_sig = sig
            self._beside = None
            return False
        limit = self.settings.hand_beside_share
        w, h = frame.shape[1], frame.shape[0]
        cd = self.settings.hand_chroma_delta
        if beside_board_change(base, sig, rec.quads, w, h, chroma_delta=cd) <= limit:
            self._table_sig = sig
            self._beside = None
            return False
        prev = self._beside
        alike = prev is not None and prev[0].shape == sig.shape and \
            beside_board_change(prev[0], sig, rec.quads, w, h, chroma_delta=cd) <= limit
        since = prev[1] if alike else self.status.frame
        if (self.status.frame - since) / self.fps >= self.settings.hand_beside_stuck_s:
            self._table_sig = sig
            self._beside = None
            return False
        self._beside = (sig, since)
        return True

    def _signature(self, frame: np.ndarray) -> np.ndarray:
        """The (90, 160, 3) float32 signature the hand tests compare
        (:func:`hand_signature`), made once a frame."""
        if self._sig_of is None or self._sig_of[0] is not frame:
            self._sig_of = (frame, hand_signature(frame, self.settings.hand_chroma_delta > 0))
        return self._sig_of[1]

    def _hand_over(self, frame: np.ndarray, rec) -> np.ndarray:
        """``(N,)`` bool: slots that something reaching in from beside the
        board lies over (:func:`hand_reach`), against the last judged picture
        with nothing beside the board (:meth:`_learn_clear`; a judged picture
        may hold a hand hovering beside the tiles, whose going would read as
        an arm), moved as the slots moved since (:func:`follow_shake`: a
        camera shaken by a pixel or two changes the picture's edges wherever
        they lie).  None when ``hand_reach_share`` is 0, before such a
        picture, or when the camera moved since (``camera_moved_px``: the
        camera-move rules decide).  Only slots that such a change reaches
        since the last judged picture as well: a hand resting by the board
        since then, its fingertips on the outer tiles, joins the slot a tile
        was lifted from next to it into one change reaching in from beside
        the board (a blocked tile lifted there was never judged gone, and
        its penalty was lost)."""
        n = len(self.layout)
        clear = self._clear
        sig = self._signature(frame)
        if not self.settings.hand_reach_share or clear is None or clear[0].shape != sig.shape \
                or camera_shift(clear[1], rec.quads) > self.settings.camera_moved_px:
            return np.zeros(n, bool)
        before = follow_shake(clear[0], clear[1], rec.quads, frame.shape[1], frame.shape[0])
        out = hand_reach(before, sig, rec.quads, frame.shape[1], frame.shape[0],
                         share=self.settings.hand_reach_share, chroma_delta=self.settings.hand_chroma_delta)
        last = self._last
        if out.any() and last is not None and last.image is not None and last.image.shape == frame.shape \
                and camera_shift(last.recognition.quads, rec.quads) <= self.settings.camera_moved_px:
            prev = hand_signature(last.image, self.settings.hand_chroma_delta > 0)
            prev = follow_shake(prev, np.asarray(last.recognition.quads, np.float64), rec.quads,
                                frame.shape[1], frame.shape[0])
            out &= hand_reach(prev, sig, rec.quads, frame.shape[1], frame.shape[0],
                              share=self.settings.hand_reach_share, chroma_delta=self.settings.hand_chroma_delta)
        return out

    def _presence_logits(self, frame: np.ndarray, rec, idx: list[int]) -> np.ndarray | None:
        """``(len(idx),)`` the presence model's log-odds that a tile stands
        in slots ``idx`` (:meth:`vision.presence.PresenceModel.slot_logits`);
        None without the picture's pose and mat, or without the model."""
        pose = getattr(getattr(rec, "recognition", rec), "pose", None)
        spec = getattr(rec, "spec", None)
        if pose is None or spec is None or not idx:
            return None
        self._load_mat_art(spec)
        model = self._mat_art[2]
        if model is None:
            return None
        return np.asarray(model.slot_logits(frame, [self.layout.slots[i] for i in idx], spec, pose), np.float64)

    def _stand_odds(self, obs: Observation, rec, frame: np.ndarray) -> Observation:
        """``obs`` with ``stand`` (:class:`vision.tracking.Observation`): the
        presence model's log-odds (:meth:`_presence_logits`) for the raised
        slots, standing on the tracker's board and read standing, whose look
        changed (:meth:`vision.tracking.BoardTracker.looks_changed`) or that
        read another face than the tracker holds, surely, at
        most ``stand_max`` of them (a hand over the board changes many: the
        picture is refused anyway).  The tracker's stack rule takes such a
        tile for gone, the one below seen too high; a tile in front that
        left changes its look too, and the presence model tells the two
        apart by the face's height (bench games 16200 and 16203).  Also the
        tiles behind taller ones (``obs.behind``, lifted ones too, at most
        ``stand_behind_max``), every picture: their look barely changes when
        they leave, and the tracker compares what the model reads with what
        it read while they stood (``TrackerSettings.stand_fall``, bench
        games 14201 and 14300).  ``stand_max`` 0 asks none."""
        if obs.patches is None or self.tracker.state.ref is None or not self.settings.stand_max:
            return obs
        tr = self.tracker
        up = np.asarray(tr.state.has_ref, bool) & np.asarray(tr.board.present, bool) \
            & (np.asarray(tr.board.n_cover) == 0)
        up[tr.state.lifted] = False
        behind = np.zeros(len(up), bool) if obs.behind is None else np.asarray(obs.behind, bool)
        # (or that read another face than the tracker's surely: the stack
        # rule takes such a tile for gone too, the face below seen too high;
        # bench game 16802, a layer-1 8 of Characters read "6" at 0.5 while
        # a layer-2 tile in front stood, read 8 at 0.98 once it was claimed)
        other = np.array([f is not None and f != g and float(c) >= tr.settings.swap_confidence
                          for f, g, c in zip(obs.faces, tr.state.faces, obs.confidence)], bool)
        ask = (tr.looks_changed(obs) | other) & up & np.asarray(obs.present, bool) & np.asarray(obs.known, bool) \
            & (self._z > 0) & ~behind
        # after the camera moved every look changed, and the picture is
        # judged all the same (:meth:`BoardTracker.rebase`): every raised
        # tile read standing is asked, up to ``stand_behind_max`` (bench game
        # 17100, Cupid's Citadel: the camera moved before the first move, and
        # two layer-3 tiles read surely, one with the face it held, went to
        # the referee as maybe gone, the faces below seen too high)
        moved = self._last is not None and \
            camera_shift(self._last.recognition.quads, rec.quads) > self.settings.camera_moved_px
        if int(ask.sum()) > (self.settings.stand_behind_max if moved else self.settings.stand_max):
            ask[:] = False
        # and every tile behind taller ones, in each picture, lifted ones
        # too: the tracker keeps what they read standing, and a lifted one
        # read gone is not back by its look (``TrackerSettings.stand_fall``)
        back = np.asarray(tr.state.has_ref, bool) & np.asarray(tr.board.present, bool) \
            & (np.asarray(tr.board.n_cover) == 0) & behind
        if int(back.sum()) <= self.settings.stand_behind_max:
            ask |= back
        idx = [int(i) for i in np.flatnonzero(ask)]
        if not idx:
            return obs
        logits = self._presence_logits(frame, rec, idx)
        if logits is None:
            return obs
        stand = np.full(len(self.layout), np.nan)
        stand[idx] = logits
        return replace(obs, stand=stand)

    def _load_mat_art(self, spec) -> None:
        if self._mat_art is None or self._mat_art[0] != spec:
            from vision.mat import render_mat
            from vision.presence import default_presence_model
            self._mat_art = (spec, render_mat(spec), default_presence_model())

    def _over_changed(self, changed: np.ndarray) -> np.ndarray:
        """``(N,)`` bool: slots on a higher layer overlapping a slot of
        ``changed`` (``(N,)`` bool; the layout's geometry, whatever stands)."""
        out = np.zeros(len(self.layout), bool)
        cover = self.tracker.board.geometry.covered_by
        for j in np.flatnonzero(changed):
            out[list(cover[j])] = True
        return out

    def _mat_bare(self, frame: np.ndarray, rec, ask: np.ndarray) -> np.ndarray:
        """``(N,)`` bool: of the slots in ``ask`` (``(N,)`` bool), those on
        layer 0 that show the bare mat: their face quad correlates with the
        mat's art seen there (:func:`vision.enroll.bare_mat_scores`) above
        :data:`BARE_MAT_ABOVE`, or above :data:`BARE_MAT_SOME_ABOVE` while
        the presence model (:mod:`vision.presence`) gives them log-odds
        under :data:`BARE_PRESENCE_BELOW`.  No tile stands there, and
        nothing lies over it.  None when more than a move's tiles
        (``_move_max``) would, when ``settings.bare_mat`` is off, or without
        the picture's pose and mat."""
        out = np.zeros(len(self.layout), bool)
        pose = getattr(getattr(rec, "recognition", rec), "pose", None)
        spec = getattr(rec, "spec", None)
        idx = [int(i) for i in np.flatnonzero(ask) if self.layout.slots[i].z == 0]
        if pose is None or spec is None or not idx or not self.settings.bare_mat:
            return out
        from vision.enroll import bare_mat_scores
        self._load_mat_art(spec)
        bare = bare_mat_scores(frame, np.asarray(rec.quads, np.float64)[idx], spec, pose, art=self._mat_art[1])
        hit = bare > BARE_MAT_ABOVE
        model = self._mat_art[2]
        if model is not None and (bare > BARE_MAT_SOME_ABOVE).any():
            logits = model.slot_logits(frame, [self.layout.slots[i] for i in idx], spec, pose)
            hit |= (bare > BARE_MAT_SOME_ABOVE) & (logits < BARE_PRESENCE_BELOW)
        hit_idx = [i for i, h in zip(idx, hit) if h]
        if len(hit_idx) <= self._move_max:
            out[hit_idx] = True
        return out

    def _learn_clear(self, frame: np.ndarray, rec, relearn: bool) -> None:
        """Keep a judged picture as the one :meth:`_hand_over` compares with
        when nothing beside the board changed since the last one kept
        (:func:`beside_board_change` at most ``hand_beside_share``), when the
        camera moved, and when ``relearn`` (the camera moved,
        the light changed, or the picture was judged after a long wait: what
        lies beside the board then stays, and must not hold every later
        picture back).  Not a picture in which something reaching in
        lies over the slots (:func:`hand_reach`), though nothing beside
        the board changed: bench game 15901 (30 fps, the mat's lower edge
        within a tile of the picture's), a hand held still over the bottom
        row for 0.27 s, its arm crossing the picture's edge, was judged
        (no tile hidden) and kept; every later picture then read its going
        as an arm over a slot, and two claims waited 6 s, until the camera
        moved."""
        sig = self._signature(frame)
        clear = self._clear
        w, h = frame.shape[1], frame.shape[0]
        if clear is None or relearn or clear[0].shape != sig.shape \
                or camera_shift(clear[1], rec.quads) > self.settings.camera_moved_px:
            self._clear = (sig, np.array(rec.quads, np.float64))
            return
        before = follow_shake(clear[0], clear[1], rec.quads, w, h)
        cd = self.settings.hand_chroma_delta
        if beside_board_change(before, sig, rec.quads, w, h, chroma_delta=cd) > self.settings.hand_beside_share:
            return
        if self.settings.hand_reach_share and \
                hand_reach(before, sig, rec.quads, w, h, share=self.settings.hand_reach_share, chroma_delta=cd).any():
            return
        self._clear = (sig, np.array(rec.quads, np.float64))

    def _light_changed(self, frame: np.ndarray, rec) -> bool:
        """Whether the light over the mat changed by more than
        ``settings.light_step`` since the last judged picture (False before
        the first one, or when ``light_step`` is 0)."""
        if self._last is None or not self.settings.light_step:
            return False
        return light_changed(slot_brightness(self._last.image, self._last.recognition.quads),
                             slot_brightness(frame, rec.quads), self.settings.light_step)

    def _claim_held(self, current: "_Seen | None") -> list[dict]:
        """Claim the valid pair the tracker holds off the board
        (:meth:`vision.tracking.BoardTracker.claim_held`)."""
        out: list[dict] = []
        for ev in self.tracker.claim_held():
            out.extend(self._judge(ev, current))
        self._expect_off_table()
        if not self.tracker.busy:
            self._turn_before = None
        self.status.tiles_on_board = int(self.tracker.board.n_present) - len(self.tracker.state.lifted)
        return out

    def _neighbours(self, d: int) -> np.ndarray:
        """(N, N) bool: slot j lies within ``d`` half-units of slot i in x and y."""
        xy = np.array([(s.x, s.y) for s in self.layout.slots], np.int64).reshape(-1, 2)
        diff = np.abs(xy[:, None, :] - xy[None, :, :])
        return (diff <= d).all(axis=2)

    # ------------------------------------------------------------------ game

    def _word_index(self):
        """Word Mahjong's dictionary index (:func:`companion.wordlist.index`),
        None for the other games (pairs only)."""
        if self.variant != "word":
            return None
        from companion import wordlist
        return wordlist.index()

    def _start(self, index: int, obs: Observation, snapshot=None) -> None:
        """Record the game from the first judged picture (``obs``).  With
        ``start_as_found``, an odd number of slots read empty is checked
        against ``snapshot``, the same picture read as ``recognize`` reads a
        photo (the presence model, and the rule that tiles leave in pairs):
        when that finds an even number empty, its reading is taken (a
        break-test's game 4 tiles in was read 3 empty, so every tile was
        kept and a valid claim beside a gone tile became a penalty)."""
        st = self.settings
        self.tracker = BoardTracker(Board(self.layout), self.tiles, settings=st.tracker, words=self._words)
        self.tracker.observe(index, obs)
        if self.resume is not None:
            self._resume(index, snapshot)
            return
        gone = [i for i in range(len(self.layout)) if not self.tracker.board.present[i]]
        if st.start_as_found and snapshot is not None and len(gone) % 2:
            alt = [i for i, t in enumerate(getattr(snapshot, "tiles", ())) if not t.present]
            if alt and len(alt) % 2 == 0 and len(alt) < len(self.layout) \
                    and len(getattr(snapshot, "tiles", ())) == len(self.layout):
                board = self.tracker.board
                for i in gone:
                    board.restore(i)
                for i in sorted(alt, key=lambda i: -self.layout.slots[i].z):     # upper layers first
                    board.remove(i)
                gone = sorted(alt)
        layout = self.layout
        if gone and len(gone) % 2 == 0 and len(gone) < len(layout):
            keep = [s for i, s in enumerate(layout.slots) if i not in set(gone)]
            layout = Layout(f"{layout.name} (as found)", tuple(keep), layout.source)
        elif gone:
            for i in gone:   # an odd number found empty: trust the layout, ask the referee
                self.tracker.board.restore(i)
        if not st.start_as_found:
            empty = ~np.asarray(obs.present, bool) & (np.asarray(obs.confidence, np.float64) >= st.absent_confidence)
            snap = getattr(snapshot, "tiles", None)
            if snap is not None and len(snap) == len(empty):
                # recognize's reading (the presence model; tiles only leave)
                # must find them gone too: on a whole deal it finds none
                empty &= np.array([not t.present for t in snap], bool)
            sure_empty = int(empty.sum())
            if sure_empty >= st.start_note_empty:
                self.status.notes.append(
                    f"{sure_empty} slots read empty in the first still picture (frame {self._file_frame(index)}), "
                    "but the game is "
                    "refereed from its whole deal: if it was already under way, run again with --start-as-found")
        faces_by_slot = {}
        for i, s in enumerate(self.layout.slots):
            f = self.tracker.state.faces[i]
            if f is not None and self.tracker.state.face_conf[i] >= st.start_face_confidence:
                faces_by_slot[s] = f
        faces = [faces_by_slot.get(s) for s in layout.slots]
        data = G.start_data(self.variant, self.mode, layout, faces, list(self.players), None,
                            {"source": "camera", "frame": index})
        self._write([G.Pending("game_started", data)], index)
        if gone and len(gone) % 2:
            self._needs(index, [self.layout.slots[i] for i in gone], [],
                        f"{count(len(gone), 'slot')} looked empty at the start (an odd number): check the layout", None)

    def _resume(self, index: int, snapshot=None) -> None:
        """Go on with the ledger's game (:attr:`resume`) from the first
        judged picture, set against the ledger's board.

        Which tiles stand is read as ``recognize`` reads the picture
        (``snapshot``: the presence model, which the tracker's single
        reading lacks; a break-test kept upper tiles taken meanwhile as
        standing, and read a tile they uncovered as gone), and the
        tracker's board is made the ledger's but for what the picture shows
        surely otherwise:

        * tiles the ledger has standing that read surely gone left the
          table while no camera referee ran: a referee item names them, off
          the table (docs/RULES.md 1.5), a pair of them one player's pair
          move (``pair_move``: where every pair move passes the turn, the
          ledger passes it);
        * tiles of an open item's ``off_table`` that read surely standing
          were put back meanwhile: a ``tiles_back`` event takes them in;
        * the faces read surely must be the game's: where most of them (6
          or more compared) differ, the table is another game's, and the
          run stops before anything is written
          (:class:`~companion.errors.WrongTileSet`).

        A crashed run's game could only be started again, its scores lost
        (a break-test, session 59)."""
        events = list(self.resume)
        self.state = G.replay(events)
        self.events = events
        self._newest = max((int(e.id) for e in events), default=0)
        # the game's times go on from its last event's (a Word game's clock
        # only runs forward), this source's time 0 falling there
        self._t_offset = float(self.state.t_last or 0.0)
        led, tr, st = self.state, self.tracker, self.settings
        where = {s: j for j, s in enumerate(led.layout.slots)}
        board = tr.board
        snap = getattr(snapshot, "tiles", None)
        snap = snap if snap is not None and len(snap) == len(self.layout) else None

        def reads(i: int) -> bool | None:
            """Whether slot ``i`` surely holds a tile in the picture, None when unsure."""
            if snap is not None:
                t = snap[i]
                return bool(t.present) if t.confidence >= RESUME_SURE else None
            return bool(board.present[i])

        def standing(i: int) -> bool:
            j = where.get(self.layout.slots[i])
            return j is not None and bool(led.board.present[j])

        compared = differ = 0
        for i, s in enumerate(self.layout.slots):
            j = where.get(s)
            f = tr.state.faces[i]
            if j is None or not standing(i) or f is None or tr.state.face_conf[i] < st.start_face_confidence:
                continue
            known = led.faces[j]
            if known is None:
                continue
            compared += 1
            differ += known != f
        if compared >= 6 and differ > compared / 2:
            from companion.errors import WrongTileSet
            raise WrongTileSet(f"the tiles on the table are not game {led.game_id}'s: {differ} of the {compared} "
                               "faces read surely differ from the ledger's: check --resume (companion game games "
                               "lists the games); nothing was recorded")
        open_items = {}
        for item, (idx, _) in led.off_table.items():
            if item not in led.off_table_closed:
                for j in idx:
                    open_items[led.layout.slots[j]] = item
        gone = [i for i in range(len(self.layout)) if standing(i) and reads(i) is False]
        back: dict[int, list[int]] = {}
        for i, s in enumerate(self.layout.slots):
            if not standing(i) and reads(i) is True and s in open_items and not led.board.present[where[s]]:
                back.setdefault(open_items[s], []).append(i)
        keep = {i for idx in back.values() for i in idx}
        want = [standing(i) and i not in gone or i in keep for i in range(len(self.layout))]
        for i in sorted(range(len(self.layout)), key=lambda i: self.layout.slots[i].z):       # lower layers first
            if want[i] and not board.present[i]:
                board.restore(i)
        for i in sorted(range(len(self.layout)), key=lambda i: -self.layout.slots[i].z):      # upper layers first
            if not want[i] and board.present[i]:
                board.remove(i)
        said = [f"{count(len(gone), 'tile')} it has standing read gone, a referee item"] if gone else []
        said += [f"{count(len(keep), 'tile')} of open items put back, taken in"] if keep else []
        self.status.notes.append(f"went on with game {led.game_id} as the ledger holds it (event #{self._newest}), "
                                 f"from frame {self._file_frame(index)}" + ("; " + "; ".join(said) if said else ""))
        for item, idx in back.items():
            slots = [list(self.layout.slots[i]) for i in sorted(idx, key=lambda k: self.layout.slots[k].z)]
            self._write([G.Pending("tiles_back", {"slots": slots, "item": item, "frame": index})], index)
        if gone:
            slots = [self.layout.slots[i] for i in sorted(gone, key=lambda i: self.layout.slots[i].z)]
            extra = {"off_table": [list(sl) for sl in slots]}
            if len(gone) == 2:
                extra["pair_move"] = True
            out = self._needs(index, slots, [],
                              f"{count(len(gone), 'tile')} left the table while the camera referee was not "
                              f"running: settle the move that took {'them' if len(gone) > 1 else 'it'}", extra)
            out.update({k: v for k, v in extra.items()})
            self._output(out, index)

    def _record_faces(self, index: int) -> None:
        """Write a ``faces_seen`` ledger event for the standing, uncovered
        tiles whose face the tracker now reads surely (its vote's peak probability at
        least ``start_face_confidence``) and the ledger knows no face for:
        tiles uncovered by claims, or read unsurely at the start.  Only
        between moves (no tile off the board), and nothing once the game
        has ended.  A covered tile's face cannot be seen from above: what the
        tracker holds for one came from a frame that misjudged the tile on
        top.  The events file gets no line for it (it is no move)."""
        if self.state is None or self.state.ended or self.tracker is None:
            return
        st, ts = self.state, self.tracker.state
        where = {s: j for j, s in enumerate(st.layout.slots)}
        slots, faces = [], []
        for i, s in enumerate(self.layout.slots):
            j = where.get(s)
            f = ts.faces[i]
            if j is None or f is None or st.faces[j] is not None or not st.board.present[j] \
                    or st.board.n_cover[j] or (i, f) in self._disowned \
                    or not self.tracker.board.present[i] or i in ts.lifted \
                    or ts.face_conf[i] < self.settings.start_face_confidence:
                continue
            slots.append(list(s))
            faces.append(f)
        if slots:
            try:
                self._write([G.Pending(FACES_SEEN, {"slots": slots, "faces": faces, "source": "camera",
                                                     "frame": index})], index)
            except LedgerLost:       # (the ledger can take no more: the run stops)
                raise
            except CompanionError:
                pass       # refused by the rules: the ledger stays as it was

    def _write(self, pendings, index: int) -> list:
        t = index / self.fps + self._t_offset if self.fps else None
        if self.state is None:
            ev = self._append(pendings[0].type, pendings[0].data, pendings[0].ref, t)
            self.state = G.replay([ev])
            return [ev]
        self._sync()
        tries = STALE_TRIES
        while True:
            mine = len(self.events)
            try:
                self.state, written = G.commit(self.state, pendings, self._append, t)
                return written
            except StaleGame:
                # written on by another (the console) between the reading and
                # the writing: read the game again and, when nothing of this
                # commit was written yet, judge the move again on it (a
                # tracker event: :meth:`_judge`) or write the same events on
                # it, up to STALE_TRIES times in all
                tries -= 1
                if len(self.events) != mine or not tries:
                    raise
                self._sync()
                if self._stale_raises:
                    raise _Rejudge() from None

    def _append(self, type_, data, ref, t):
        if self.append is not None:
            if self.history is not None and type_ != "game_started":
                ev = self.append(type_, data, ref, t, after=self._newest)
            else:
                ev = self.append(type_, data, ref, t)
        else:
            ev = G.Event(self._next_id, "camera", type_, data, ref, t)
            self._next_id += 1
        self._newest = max(self._newest, int(ev.id))
        self.events.append(ev)
        return ev

    def _sync(self) -> None:
        """Read the game back from the ledger (``history``) and, when others
        wrote on it since, take the game as the ledger holds it: its state
        (:func:`companion.game.replay`) and, for the tracker, the tiles the
        ledger put back on or took off its board and the faces it was told
        (:meth:`_follow_ledger`).  A ledger that cannot be read keeps the
        referee's own copy (its next write names the trouble); one deleted or
        replaced (:class:`companion.ledger.LedgerLost`) stops the run, its
        later events having nowhere to go.  A game another ended (the
        console's End) gets no more of the camera's events while it stays
        ended (a note says so)."""
        if self.history is None or self.state is None:
            return
        try:
            if not self.history(self._newest):      # (one indexed query when nothing is new)
                return
            events = list(self.history(0))
        except LedgerLost:
            raise
        except CompanionError:
            return
        if not events:
            return
        known = {e.id for e in self.state.raw}
        new = [e for e in events if e.id not in known]
        self._newest = max(self._newest, max(int(e.id) for e in events))
        if not new:
            return
        before = self.state
        self.state = G.replay(events, words=before.words)
        self._follow_ledger(before, self.state, new)
        if self.state.ended and not before.ended:
            self._ended_elsewhere = self.status.frame
            self.status.notes.append(
                f"the game was ended on the ledger (the console or another program) at frame {self.status.frame}: "
                "what the camera saw after that is not recorded")
        elif not self.state.ended:
            self._ended_elsewhere = None

    def _follow_ledger(self, before: G.GameState, after: G.GameState, new: Sequence) -> None:
        """The tracker's side of events others wrote (``new``, taking the
        game from ``before`` to ``after``): slots the ledger's board holds
        again are expected back on the table, tiles it took off leave the
        tracker's board (or are expected back no more), and faces it learnt
        (a correction, a settle's faces) replace the camera's readings; a
        face it no longer knows (the camera's ``faces_seen`` voided) is not
        written again as read.  After a reshuffle told by the console the
        faces are not taken: the table still shows the old ones until the
        tiles are re-laid, which the camera reads (:meth:`_judge_relay`)."""
        tr = self.tracker
        if tr is None:
            return
        where = {s: j for j, s in enumerate(after.layout.slots)}
        reshuffled = any(e.type == "reshuffle" for e in new)
        gone: list[int] = []
        for i, s in enumerate(self.layout.slots):
            j = where.get(s)
            if j is None or j >= len(before.board.present):
                continue
            was, now = before.board.present[j], after.board.present[j]
            if now and not was and not tr.board.present[i]:
                tr.expect_back(i)
            elif was and not now and (tr.board.present[i] or i in tr.state.expected):
                gone.append(i)
            f = after.faces[j]
            if not reshuffled and f is not None and f != before.faces[j] and f != tr.state.faces[i]:
                tr.told_face(i, f)
            elif not reshuffled and f is None and before.faces[j] is not None:
                # a face the camera wrote voided: not written again from the
                # same readings (the referee corrects it, or a move names it)
                self._disowned.add((i, before.faces[j]))
        if gone:
            tr.take_off(gone)

    def _player(self) -> str:
        who = self.state.whose_turn() if self.state is not None else None
        return who or self.players[0]

    def _judge(self, ev: TrackEvent, current: _Seen | None) -> list[dict]:
        """Turn one tracker event into ledger events and output lines.  When
        the console wrote on the game between the reading and the writing
        (:class:`_Rejudge`), the game is read again and the event judged
        once more on it (the player in turn may have changed), up to
        ``STALE_TRIES`` times."""
        if ev.type in ("lift", "return", "reveal") or self._ended_elsewhere is not None:
            return []
        kept = self._kept_refused(ev.frame)
        before = self._turn_before or self._last
        if before is current:
            before = None
        evidence = self.evidence.save(ev, before, current) if self.evidence else None
        extra: dict = {"frame": ev.frame}
        if evidence:
            extra["evidence"] = evidence
        for tries_left in range(STALE_TRIES, 0, -1):
            try:
                out = self._judge_on_ledger(ev, extra, again=tries_left == 1)
                break
            except _Rejudge:
                continue
        if evidence:
            out["evidence"] = evidence
        return kept + [self._output(out, ev.frame)]

    def _refused_but_kept(self, ev: TrackEvent, player: str, why: str | None, extra: dict,
                          unseen_attempt: bool = False) -> None:
        """A pair or word the camera saw taken off the table for good that
        the rules refused (a touch left out, a tile blocked or a face
        unmatched on the ledger's board): the rules send the tiles back, so
        the tracker expects them back (:meth:`BoardTracker.expect_back`:
        taken in silently when the players put them back, as the scoreboard
        tells them); those still off the table when the next move is judged
        go to the referee (:meth:`_kept_refused`).  ``unseen_attempt``: the
        refusal was for leaving out the one tile touched before, which may
        have been an attempt whose second tile the camera could not see
        (the item says so)."""
        tr, st = self.tracker, self.state
        if tr is None or st is None:
            return
        where = {s: j for j, s in enumerate(st.layout.slots)}
        mine = {s: i for i, s in enumerate(self.layout.slots)}
        slots, faces = [], []
        for s, f in zip(ev.slots, list(ev.faces) + [None] * len(ev.slots)):
            j, i = where.get(s), mine.get(s)
            if j is None or i is None or not st.board.present[j] or tr.board.present[i]:
                continue
            tr.expect_back(i)
            slots.append(s)
            faces.append(f)
        if slots:
            self._refused_off.append((ev.frame, player, slots, faces, why, extra.get("evidence"), unseen_attempt))

    def _kept_refused(self, frame: int) -> list[dict]:
        """Output lines of the referee items for refused moves' tiles
        (:meth:`_refused_but_kept`) still off the table at ``frame``: the
        table and the rules disagree, and the ledger follows the table
        (``off_table``: the tiles leave its board, so that the free rule
        reads the table as it is, docs/RULES.md 1.5 "Tiles off the table").
        Bench game 12202 (Harmony Duels): a claim refused by the two-touch
        commitment (the touch was an attempt whose second tile stood behind
        a taller stack) stayed on the ledger's board while the players kept
        the pair, and every later claim near it was refused as blocked."""
        if not self._refused_off or self.tracker is None or self.state is None:
            return []
        tr, st = self.tracker, self.state
        where = {s: j for j, s in enumerate(st.layout.slots)}
        mine = {s: i for i, s in enumerate(self.layout.slots)}
        out: list[dict] = []
        pending, self._refused_off = self._refused_off, []
        for f0, player, slots, faces, why, evidence, unseen_attempt in pending:
            if frame <= f0:         # (another event of the same picture: the players have not seen it yet)
                self._refused_off.append((f0, player, slots, faces, why, evidence, unseen_attempt))
                continue
            off = []
            for k, s in enumerate(slots):
                if tr.board.present[mine[s]] or mine[s] not in tr.state.expected:
                    # put back: taken in (BoardTracker.expect_back), and maybe
                    # taken again by the move now judged (a break-test: the
                    # pair put back, then claimed by the next player, went to
                    # the referee as never put back, and the claim was lost)
                    continue
                if where.get(s) is not None and st.board.present[where[s]]:
                    off.append(k)
                else:
                    tr.state.expected.discard(mine[s])    # off the ledger's board since (the console)
            if not off:
                continue
            named = [list(slots[k]) for k in off]
            reason = (f"the rules refused the move of frame {f0} ({why or 'refused'}), but "
                      f"{'its tiles' if len(named) > 1 else 'its tile'} "
                      f"{', '.join(','.join(map(str, s)) for s in named)} stayed off the table")
            if unseen_attempt:
                # bench games 12202 and 11400: the touch was an attempt whose
                # second tile stood behind a taller stack, and the pair the
                # next player's valid claim
                reason += ("; the touch before it may have been an attempt with a tile the camera could not "
                           "see, and this move the next player's")
            extra: dict = {"frame": frame, "off_table": named}
            if evidence:
                extra["evidence"] = evidence
            item = self._needs(frame, named, [faces[k] for k in off], reason, extra, player)
            item["off_table"] = named
            if evidence:
                item["evidence"] = evidence
            out.append(self._output(item, frame))
            tr.take_off([mine[slots[k]] for k in off])
        return out

    def _expect_off_table(self) -> None:
        """Expect back on the table the tiles of the ledger's open referee
        items with ``off_table`` tiles (:meth:`BoardTracker.expect_back`):
        players who put them back later (a refused move's tiles sent back
        after the item was written) are then taken in silently, where
        before the tile under one put back on a stack changed its look
        wholly and was taken for lifted, a penalty for a tile no one
        touched (a break-test, session 48), and a retake of the tiles was
        no move at all.  Tiles an item no longer holds (settled, closed)
        are expected no more."""
        tr, st = self.tracker, self.state
        if tr is None or st is None:
            return
        mine = {s: i for i, s in enumerate(self.layout.slots)}
        held: dict[int, int] = {}
        for item, (idx, _) in st.off_table.items():
            if item in st.off_table_closed:
                continue
            for j in idx:
                i = mine.get(st.layout.slots[j])
                if i is not None and not st.board.present[j]:
                    held[i] = item
        for i in [i for i in self._off_expected if i not in held]:
            del self._off_expected[i]
            tr.state.expected.discard(i)
        for i, item in held.items():
            if i in self._off_expected or tr.board.present[i] or i in tr.state.lifted:
                continue
            tr.expect_back(i)
            if i in tr.state.expected:
                self._off_expected[i] = item

    def _write_tiles_back(self, frame: int) -> None:
        """Write a ``tiles_back`` ledger event for the tiles of open referee
        items (:meth:`_expect_off_table`) that the tracker took in as put
        back on their slots: the ledger's board holds them again from here
        on (docs/RULES.md 1.5, "A move the rules refuse whose tiles stay
        off the table")."""
        tr, st = self.tracker, self.state
        if tr is None or st is None or not self._off_expected:
            return
        by_item: dict[int, list[int]] = {}
        for i, item in list(self._off_expected.items()):
            if tr.board.present[i] and i not in tr.state.lifted and i not in tr.state.expected:
                by_item.setdefault(item, []).append(i)
                del self._off_expected[i]
        for item, idx in by_item.items():
            slots = [list(self.layout.slots[i]) for i in sorted(idx, key=lambda k: self.layout.slots[k].z)]
            try:
                self._write([G.Pending("tiles_back", {"slots": slots, "item": item, "frame": frame})], frame)
            except LedgerLost:       # (the ledger can take no more: the run stops)
                raise
            except CompanionError:
                pass

    def _judge_on_ledger(self, ev: TrackEvent, extra: dict, again: bool) -> dict:
        """The output line of one tracker event, its ledger events written
        (:meth:`_judge`); ``again``: a stale write is judged as refused.
        A referee item naming the tiles of the move judged just before it
        (a pair or word refused and kept off the table) names that move's
        player, not the one whose turn the refusal passed to (a break-test,
        session 48: a kept unmatched pair's item named the next player)."""
        player = self._player()
        mover, self._mover = self._mover, None
        if ev.type == "needs-referee" and mover is not None and mover[0] == frozenset(ev.slots):
            player = mover[1]
        elif ev.type in ("claim", "word"):
            self._mover = (frozenset(ev.slots), player)
        slots = [list(s) for s in ev.slots]
        faces = list(ev.faces)
        out: dict
        self._stale_raises = not again
        try:
            if ev.type == "penalty":
                out = {"type": "penalty", "frame": ev.frame, "player": player, "slot": slots[0],
                       "reason": "blocked", "explanation": ev.reason}
                self._resolve(G.resolve_touch(self.state, player, slots[0], extra), ev.frame)
            elif ev.type == "touch":
                out = {"type": "touch", "frame": ev.frame, "player": player, "slot": slots[0],
                       "face": faces[0] if faces else None, "reason": None}
                written = self._resolve(G.resolve_touch(self.state, player, slots[0], extra), ev.frame)
                if any(w.type == "invalid" for w in written):
                    out["reason"] = "two-touch commitment: the touched tiles do not match"
            elif ev.type == "claim" and ev.valid:
                out = {"type": "claim", "frame": ev.frame, "player": player, "slots": slots, "faces": faces,
                       "valid": True, "reason": None}
                one_touch = len(self.state.touched) == 1
                res = G.resolve_claim(self.state, player, slots, faces, extra)
                written = self._resolve(res, ev.frame)
                kinds = {w.type for w in written}
                if "claim" not in kinds:
                    inv = [w for w in written if w.type in ("invalid", "penalty")]
                    out["valid"] = False
                    out["reason"] = (inv[0].data.get("code") if inv else None) or "refused"
                    out["explanation"] = res.message or res.error
                    self._refused_but_kept(ev, player, out["explanation"], extra,
                                           unseen_attempt=one_touch and out["reason"] == "touch-is-claimed")
            elif ev.type == "word" and not ev.valid:
                # letters that spell a word taken for good with a blocked one
                # among them: the penalty was raised at the lift; then a
                # referee must look (as a blocked pair, below)
                out = {"type": "word", "frame": ev.frame, "player": player, "slots": slots, "faces": faces,
                       "word": ev.word, "valid": False, "reason": ev.code, "explanation": ev.reason}
            elif ev.type == "word":
                out = {"type": "word", "frame": ev.frame, "player": player, "slots": slots, "faces": faces,
                       "word": ev.word, "valid": True, "reason": None}
                from companion import wordlist
                res = G.resolve_word(self.state, player, slots, ev.word, wordlist.words(), faces, extra)
                written = self._resolve(res, ev.frame)
                if not any(w.type == "word" for w in written):
                    # a blocked letter on the ledger's board: its penalty written
                    out["valid"] = False
                    out["reason"] = "refused"
                    out["explanation"] = res.message or res.error
                    self._refused_but_kept(ev, player, out["explanation"], extra)
            elif ev.type == "claim":
                # a pair taken for good that the rules refuse: scored as the engine
                # reads it (an invalid attempt), then a referee must look
                out = {"type": "claim", "frame": ev.frame, "player": player, "slots": slots, "faces": faces,
                       "valid": False, "reason": ev.code, "explanation": ev.reason}
                if ev.code != "blocked":
                    data = {"player": player, "slots": slots, "faces": faces, "code": ev.code,
                            "reason": ev.reason, **extra}
                    self._write([G.Pending("invalid", data)], ev.frame)
            elif ev.type == "attempt":
                out = {"type": "attempt", "frame": ev.frame, "player": player, "slots": slots, "faces": faces,
                       "valid": False, "reason": ev.code, "explanation": ev.reason}
                data = {"player": player, "slots": slots, "faces": faces, "code": ev.code or "returned",
                        "reason": ev.reason, **extra}
                self._write([G.Pending("invalid", data)], ev.frame)
            else:  # needs-referee
                if ev.gone:     # off the table for good: off the ledger's board too
                    extra["off_table"] = [list(sl) for sl in ev.gone]
                if ev.pair_move:    # one player's pair move: the ledger may pass the turn
                    extra["pair_move"] = True
                if ev.partners:     # standing tiles it may have left with unseen: the console offers them
                    extra["may_pair_with"] = [list(sl) for sl in ev.partners]
                if ev.likely is not None:
                    extra["likely_pair_with"] = list(ev.likely)
                out = self._needs(ev.frame, ev.slots, faces, ev.reason, extra, player)
                if ev.gone:
                    out["off_table"] = extra["off_table"]
                if ev.pair_move:
                    out["pair_move"] = True
                if ev.partners:
                    out["may_pair_with"] = extra["may_pair_with"]
                if ev.likely is not None:
                    out["likely_pair_with"] = extra["likely_pair_with"]
        except _Rejudge:
            raise
        except LedgerLost:       # (the ledger can take no more: the run stops)
            raise
        except CompanionError as exc:
            # the rules refuse what the camera saw: a referee must look at it
            self._stale_raises = False
            out = self._needs(ev.frame, ev.slots, faces, f"{ev.type} refused by the rules: {exc}", extra, player)
        finally:
            self._stale_raises = False
        return out

    def _file_frame(self, index: int) -> int:
        """The number a line or note gives the frame fed as ``index``
        (:attr:`frame_number`)."""
        return int(self.frame_number(index)) if self.frame_number is not None else index

    def _output(self, out: dict, frame: int) -> dict:
        """Stamp an output line with its time, show it on the status line and emit it."""
        out["t"] = round(frame / self.fps + self._t_offset, 3) if self.fps else None
        if isinstance(out.get("frame"), int):
            out["frame"] = self._file_frame(out["frame"])
        self.status.last_event = _status_text(out)
        self.status.events += 1
        self.emit(out)
        return out

    def _needs(self, frame: int, slots, faces, reason: str | None, extra: dict | None,
               player: str | None = None) -> dict:
        player = player or self._player()
        slots = [list(s) for s in slots]
        out = {"type": NEEDS_REFEREE, "frame": frame, "player": player, "slots": slots, "faces": list(faces),
               "reason": reason}
        data = {"player": player, "slots": slots, "faces": list(faces), "reason": reason, **(extra or {})}
        try:
            self._write([G.Pending(NEEDS_REFEREE, data)], frame)
        except LedgerLost:       # (the ledger can take no more: the run stops)
            raise
        except CompanionError:
            pass
        return out

    def _resolve(self, outcome: G.Outcome, index: int) -> list:
        return self._write(outcome.events, index) if outcome.events else []


def _same_faces(a: dict, b: dict, share: float = 0.9) -> bool:
    """Two readings of tiles re-laid (``{slot index: face}``) agree: at least
    ``share`` of the slots of each are in both, and at least ``share`` of
    those read the same face."""
    both = set(a) & set(b)
    if not both or len(both) < share * max(len(a), len(b)):
        return False
    return sum(a[i] == b[i] for i in both) >= share * len(both)


def slot_brightness(image: np.ndarray, quads: np.ndarray, step: int = 4) -> np.ndarray:
    """Mean grey level (0-255) of each slot's outline's bounding box in a
    picture, sampled every ``step`` px.

    Args:
        image: (H, W, 3) uint8 BGR or (H, W) uint8 grey.
        quads: (N, 4, 2) float px, the slots' projected faces.

    Returns:
        (N,) float64; NaN for a box wholly outside the picture.
    """
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    g = grey[::step, ::step].astype(np.float64)
    h, w = g.shape
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2) / step
    lo = np.floor(q.min(axis=1)).astype(np.int64)
    hi = np.ceil(q.max(axis=1)).astype(np.int64) + 1
    out = np.full(len(q), np.nan)
    for k in range(len(q)):
        x0, y0 = max(0, lo[k, 0]), max(0, lo[k, 1])
        x1, y1 = min(w, hi[k, 0]), min(h, hi[k, 1])
        if x1 > x0 and y1 > y0:
            out[k] = g[y0:y1, x0:x1].mean()
    return out


def hand_signature(frame: np.ndarray, colour: bool = True) -> np.ndarray:
    """The signature the hand tests compare: :func:`vision.tracking.frame_signature`
    at 160 x 90 px, blur sigma 1.5 px (grey, mean 128), and with ``colour``
    the picture's CIELAB a* and b* at the same size and blur (OpenCV's
    ``COLOR_BGR2LAB`` on float BGR in 0-1: a*, b* in their own units, about
    -100 to 100; the light's brightness hardly moves them).  1.7 ms a
    1280 x 720 picture on the 2-core machine, against 0.5 ms for the grey
    alone; made once a judged picture (session 55).

    Args:
        frame: (H, W, 3) uint8 BGR (or (H, W) grey: grey alone).

    Returns:
        (90, 160, 3) float32 (grey, a*, b*), or (90, 160) float32 without
        ``colour``.
    """
    grey = frame_signature(frame, (160, 90), 1.5)
    if not colour or frame.ndim != 3:
        return grey
    small = cv2.resize(frame, (160, 90), interpolation=cv2.INTER_AREA).astype(np.float32) * np.float32(1 / 255)
    ab = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2LAB)[..., 1:], (0, 0), 1.5)
    return np.dstack([grey, ab])


def signature_change(before: np.ndarray, after: np.ndarray, delta: float = 15.0,
                     chroma_delta: float = 10.0) -> np.ndarray:
    """(h, w) bool: the px of two :func:`hand_signature` s whose grey level
    differs by more than ``delta``, or whose colour (a*, b*; Euclidean)
    differs by more than ``chroma_delta`` (0: grey alone).  Signatures of
    grey alone ((h, w)) compare their grey levels."""
    b = np.asarray(before, np.float32)
    a = np.asarray(after, np.float32)
    if a.ndim == 2 or b.ndim == 2:
        ga = a if a.ndim == 2 else a[..., 0]
        gb = b if b.ndim == 2 else b[..., 0]
        return np.abs(ga - gb) > delta
    changed = np.abs(a[..., 0] - b[..., 0]) > delta
    if chroma_delta > 0:
        d = a[..., 1:] - b[..., 1:]
        changed |= np.einsum("ijk,ijk->ij", d, d) > chroma_delta * chroma_delta
    return changed


def beside_board_change(before: np.ndarray, after: np.ndarray, quads: np.ndarray, width: int, height: int,
                        delta: float = 15.0, chroma_delta: float = 10.0) -> float:
    """Share of the picture beside the board that changed between two
    signatures (:func:`hand_signature`, (h, w, 3) float32; or
    :func:`vision.tracking.frame_signature`, (h, w) float32, mean 128): the
    px outside the slots' outline (their convex hull) grown by one tile's
    size all round whose grey level differs by more than ``delta`` or whose
    colour by more than ``chroma_delta`` (:func:`signature_change`; colour
    since session 55).  (Until session 34 the slots' upright box grown by
    a tile: in a turned view that box takes in much of the mat beside the
    board, and a hand resting there read as no hand.)  ``delta`` 15 grey
    levels (30 before session 34): on the 6 letter-by-letter recordings
    of ``bench_referee.py --spell-rest 1``, frames sampled every 5th, it
    sees 95 % of the hands resting in view (30: 47 %; a hand on a wooden
    table is nearly the table's grey) and none of 528 still pictures
    without a hand, at ``hand_beside_share`` 0.005.

    Args:
        before, after: signatures of the same size.
        quads: (N, 4, 2) float px, the slots' projected faces in the
            ``width`` x ``height`` px picture.

    Returns:
        0-1 (0 when nothing lies beside the board).
    """
    h, w = after.shape[:2]
    q = np.asarray(quads, np.float64).reshape(-1, 2)
    if len(q) == 0:
        return 0.0
    tile = float(np.median(np.linalg.norm(np.asarray(quads)[:, 2] - np.asarray(quads)[:, 0], axis=1)))
    sx, sy = w / float(width), h / float(height)
    hull = cv2.convexHull(np.round(q * (sx, sy) * 4).astype(np.int32))     # 2 bits of sub-px (shift=2)
    board = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(board, hull, 1, lineType=cv2.LINE_8, shift=2)
    r = max(1, int(round(tile * max(sx, sy))))
    board = cv2.dilate(board, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))
    outside = board == 0
    if not outside.any():
        return 0.0
    return float(np.mean(signature_change(before, after, delta, chroma_delta)[outside]))


def follow_shake(before: np.ndarray, quads_before: np.ndarray, quads_after: np.ndarray, width: int,
                 height: int) -> np.ndarray:
    """A signature (:func:`vision.tracking.frame_signature`, (h, w)
    float32, or :func:`hand_signature`, (h, w, 3)) of an earlier picture,
    moved as the slots moved in the picture
    since: warped by the homography that takes the slots' projected corners
    then (``quads_before``, (N, 4, 2) px in the ``width`` x ``height`` px
    picture) to now (``quads_after``), least squares over all corners
    (``cv2.findHomography``, method 0), borders repeated.  On the bench's
    recordings the slots move by about 2 px between judged pictures of a
    camera that only shakes; unmoved, a px-by-px comparison would see every
    strong edge change.  The signature itself where the slots moved by under
    0.25 px, or where no homography fits."""
    a = np.asarray(quads_before, np.float64).reshape(-1, 2)
    b = np.asarray(quads_after, np.float64).reshape(-1, 2)
    if a.shape != b.shape or len(a) < 4 or float(np.max(np.abs(a - b))) < 0.25:
        return before
    h, w = before.shape[:2]
    scale = np.array([w / float(width), h / float(height)])
    H, _ = cv2.findHomography(a * scale, b * scale, 0)
    if H is None or not np.all(np.isfinite(H)):
        return before
    return cv2.warpPerspective(before, H, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def hand_reach(before: np.ndarray, after: np.ndarray, quads: np.ndarray, width: int, height: int,
               delta: float = 15.0, share: float = 0.25, max_outside: float = 0.5,
               chroma_delta: float = 10.0) -> np.ndarray:
    """Slots that something reaching in from beside the board lies over: a
    hand held still over the tiles, its fingers read as "no face" rather
    than as hidden.

    The px that changed between two signatures (:func:`hand_signature`,
    (h, w, 3) float32, or :func:`vision.tracking.frame_signature`, (h, w))
    by more than ``delta`` grey levels or ``chroma_delta`` units of colour
    (:func:`signature_change`) are split into 8-connected regions
    (``cv2.connectedComponents``); a region that reaches beyond the slots'
    outline grown by one tile (where :func:`beside_board_change` looks)
    came from beside the board, as an arm does; so does one that crosses
    the picture's edge over half a tile's width or more, three quarters of
    a tile or more outside the slots' outline (an arm reaching in from
    beyond the picture where the board lies within a tile of its edge:
    bench game 13803, 960 x 540, fingertips held still over three tiles
    of the bottom row were taken for three tiles lifted, a penalty raised
    and a claim made of them, and every later move went to the wrong
    player).  A tile lifted away changes
    only its own slot and its shadow, a region inside the board.  Where more
    than ``max_outside`` of the picture beside the board changed, the camera
    moved or the light changed (their own rules decide), and no slot is
    returned.  Bench game 8103 (Word, 30 frames a second): a hand held still
    for 0.3 s over the top row read three blocked tiles "no face" at
    0.64-0.85, and three penalties were raised for tiles never touched.

    Args:
        before, after: signatures of the same size (the last judged picture,
            this one).
        quads: (N, 4, 2) float px, the slots' projected faces in the
            ``width`` x ``height`` px picture.
        share: a slot counts when at least this share of its face's px lie
            in such a region.

    Returns:
        (N,) bool.
    """
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    out = np.zeros(len(q), bool)
    if len(q) == 0 or before.shape != after.shape:
        return out
    h, w = after.shape[:2]
    sx, sy = w / float(width), h / float(height)
    tile = float(np.median(np.linalg.norm(q[:, 2] - q[:, 0], axis=1)))
    hull = cv2.convexHull(np.round(q.reshape(-1, 2) * (sx, sy) * 4).astype(np.int32))
    board = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(board, hull, 1, lineType=cv2.LINE_8, shift=2)
    r = max(1, int(round(tile * max(sx, sy))))
    # the picture's edge three quarters of a tile or more beside the slots:
    # an arm reaching in from beyond the picture, where the board lies
    # within a tile of its edge, crosses it over half a tile's width or
    # more (a tile lifted from a slot near the edge changes its own face,
    # side and shadow, within half a tile of the slots' outline)
    # (exact distances: the 3 x 3 mask's approximation put a picture edge 7
    # px of the signature above the slots at 6.68, under the 6.75 needed,
    # and fingers held still over the top row were read as two tiles
    # lifted: bench game 17003, Word on the Alphabet Tower at 960 x 540)
    edge = np.zeros((h, w), bool)
    edge[0, :] = edge[-1, :] = edge[:, 0] = edge[:, -1] = True
    edge &= cv2.distanceTransform((board == 0).astype(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_PRECISE) >= 0.75 * r
    board = cv2.dilate(board, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))
    outside = board == 0
    changed = signature_change(before, after, delta, chroma_delta)
    if not outside.any() or not changed.any() or float(np.mean(changed[outside])) > max_outside:
        return out
    n, labels = cv2.connectedComponents(changed.astype(np.uint8), connectivity=8)
    reaching = np.zeros(n, bool)
    reaching[np.unique(labels[changed & outside])] = True
    crossing = np.bincount(labels[changed & edge & ~outside], minlength=n)
    reaching |= crossing >= 0.5 * r
    reaching[0] = False
    if not reaching[1:].any():
        return out
    reach = reaching[labels]
    for k in range(len(q)):
        face = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(face, np.round(q[k] * (sx, sy) * 4).astype(np.int32), 1, lineType=cv2.LINE_8, shift=2)
        area = int(face.sum())
        if area and float(reach[face > 0].sum()) >= share * area:
            out[k] = True
    return out


def light_changed(before: np.ndarray, after: np.ndarray, step: float, share: float = 0.75) -> bool:
    """Whether the light over the board changed between two pictures: the
    slots' grey levels (:func:`slot_brightness`, (N,) each) changed by more
    than ``step`` (a share, either way) in the median, and at least
    ``share`` of the slots seen in both changed the same way by more than
    half of that.  False when no slot is seen in both."""
    a, b = np.asarray(before, np.float64), np.asarray(after, np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    if not ok.any():
        return False
    r = np.log((b[ok] + 1.0) / (a[ok] + 1.0))
    med = float(np.median(r))
    limit = math.log1p(step)
    if abs(med) <= limit:
        return False
    same = np.sign(r) == np.sign(med)
    return float(np.mean(same & (np.abs(r) > limit / 2))) >= share


def camera_shift(quads_a: np.ndarray, quads_b: np.ndarray) -> float:
    """How far the camera's view moved between two readings of the board:
    the median over the slots of the largest shift of a projected face
    corner, px.

    Args:
        quads_a, quads_b: ``(N, 4, 2)`` float image px of the same slots'
            faces (``Recognition.quads``).

    Returns:
        px (0 for no slots, inf when the shapes differ).
    """
    a = np.asarray(quads_a, np.float64)
    b = np.asarray(quads_b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    return float(np.median(np.linalg.norm(a - b, axis=2).max(axis=1)))


def _status_text(out: dict) -> str:
    slots = out.get("slots") or [out.get("slot")]
    where = " + ".join(",".join(map(str, s)) for s in slots if s)
    what = out["type"]
    if what == "claim":
        what = "claim" if out.get("valid") else "invalid claim"
    elif what == "word" and out.get("word"):
        what = f"word {out['word']}" if out.get("valid") else f"invalid word {out['word']}"
    return f"{what} {out.get('player') or ''} {where} (frame {out['frame']})".replace("  ", " ").strip()


# --------------------------------------------------------------------------- evidence

EVENT_COLOUR = (255, 0, 255)     # BGR magenta: the tiles the event is about
BLOCKER_COLOUR = (0, 140, 255)   # BGR orange: the tiles that cover or pinch them


def _last_evidence_number(folder: Path) -> int:
    """The highest ``<nnnn>`` of the ``<nnnn>-<type>-f<frame>`` folders in
    ``folder`` (0 when none, or when it cannot be listed)."""
    import re
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        return 0
    found = [int(m.group(1)) for m in (re.match(r"([0-9]{4,})-", n) for n in names) if m]
    return max(found, default=0)


class EvidenceWriter:
    """Saves, for every judged event, the settled frame before and after, an
    overlay and the engine's reason, under ``folder/<nnnn>-<type>-f<frame>/``
    (``nnnn`` going on from the highest already in the folder, so an earlier
    game's evidence is never overwritten).

    The overlay is the frame before the change (the board the rule was
    judged on) with :func:`vision.overlay.draw_overlay`'s marks, the event's
    tiles outlined in magenta and labelled, the tiles covering or pinching
    them in orange with "covers" / "left" / "right", and the engine's sentence
    in a caption.  ``slots.json`` holds every slot's top-face quad in overlay
    pixels (what the web page makes tappable).

    Paths in the returned dict are relative to ``base`` (the ledger's folder,
    which the scoreboard resolves them against) when the files lie inside it,
    else absolute.

    A file that cannot be written later (the folder deleted while the game
    runs is made again first; a full disk) goes to ``on_error`` once, as
    one line, and the game goes on, that event without the pictures that
    failed (later events try again); without ``on_error`` it raises
    :class:`BadInput`.

    Raises (on construction):
        BadInput: the folder cannot be created, or nothing can be written in
        it.
    """

    def __init__(self, folder: Path, base: Path | None = None, on_error=None,
                 frame_number: Callable[[int], int] | None = None) -> None:
        self.frame_number = frame_number     # (as :class:`Referee`'s: the frame's number in the file)
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise BadInput(f"evidence folder {folder} {not_a_folder(folder)}")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create evidence folder {folder}: {exc.strerror}") from None
        try:
            # written to before the game starts: a folder nothing can be
            # written in failed at the first claim (a traceback, session 54)
            tempfile.TemporaryDirectory(dir=self.folder, prefix=".probe-").cleanup()
        except OSError as exc:
            raise BadInput(f"cannot write in evidence folder {folder}: {exc.strerror or exc}") from None
        self.on_error = on_error
        self.failed = False
        self.base = Path(base).resolve() if base is not None else None
        # numbered on from the events already saved here: a second game
        # kept in the same ledger (or beside the same events file) adds its
        # evidence beside the first game's instead of over it
        self.count = _last_evidence_number(self.folder)

    def _name(self, p: Path) -> str:
        real = p.resolve()
        if self.base is not None:
            try:
                return str(real.relative_to(self.base))
            except ValueError:
                pass
        return str(real)

    def _new_folder(self, ev: TrackEvent) -> Path:
        """Make the event's folder under the next number free in the folder,
        looked for afresh each time: another run writing evidence there at
        the same time (two referees given the same events file or ledger)
        numbers on past this one's folders instead of writing over them (a
        break-test, session 50: two runs of one recording shared 11 folders
        for 22 events, the second run's pictures over the first's).

        Raises:
            OSError: the folder cannot be made."""
        for _ in range(1000):
            self.count = max(self.count, _last_evidence_number(self.folder)) + 1
            d = self.folder / f"{self.count:04d}-{ev.type}-f{ev.frame}"
            try:
                d.mkdir()
                return d
            except FileExistsError:
                continue
        raise OSError(f"no free evidence number after {self.count}")

    def save(self, ev: TrackEvent, before: _Seen | None, after: _Seen | None) -> dict:
        """Write the files of one event; returns ``{"before", "after",
        "overlay", "slots", "event", "reason"}`` (paths as strings; a key is
        missing when its frame is not known).

        Raises:
            BadInput: a file cannot be written and there is no ``on_error``.
        """
        d = self.folder
        out: dict = {}
        number = self.frame_number or (lambda i: i)
        ev = replace(ev, frame=int(number(ev.frame)))
        try:
            try:
                d = self._new_folder(ev)
            except FileNotFoundError:
                # the evidence folder was deleted while the game ran (another
                # run's clean-up, a user): made again
                self.folder.mkdir(parents=True, exist_ok=True)
                d = self._new_folder(ev)
            if before is not None:
                _write_image(d / "before.jpg", before.image)
                out["before"] = self._name(d / "before.jpg")
            if after is not None:
                _write_image(d / "after.jpg", after.image)
                out["after"] = self._name(d / "after.jpg")
            shown = before if before is not None else after
            if shown is not None and getattr(shown.recognition, "quads", None) is not None:
                _write_image(d / "overlay.jpg", evidence_overlay(shown.image, shown.recognition, ev))
                out["overlay"] = self._name(d / "overlay.jpg")
                rec = shown.recognition
                (d / "slots.json").write_text(json.dumps(
                    {"slots": [list(t.slot) for t in rec.tiles],
                     "quads": np.round(np.asarray(rec.quads, np.float64), 1).tolist(),
                     "frame": int(number(shown.index))}))
                out["slots"] = self._name(d / "slots.json")
            (d / "event.json").write_text(json.dumps(ev.to_json(), indent=1))
            out["event"] = self._name(d / "event.json")
        except OSError as exc:
            message = f"cannot write evidence in {d}: {exc.strerror or exc}"
            if self.on_error is None:
                raise BadInput(message) from None
            if not self.failed:
                self.on_error(message)
            self.failed = True
        out["reason"] = ev.reason
        return out


def _write_image(path: Path, image: np.ndarray) -> None:
    """Write an evidence picture: encoded by OpenCV, written by Python
    (``cv2.imwrite`` crashed the process on a folder name holding bytes
    that are not UTF-8, as an ``--events-out`` name may).

    Raises:
        OSError: it cannot be encoded or written.
    """
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] if path.suffix == ".jpg" else [cv2.IMWRITE_PNG_COMPRESSION, 3]
    ok, encoded = cv2.imencode(path.suffix, image, params)
    if not ok:
        raise OSError(f"cannot encode {path}")
    path.write_bytes(encoded.tobytes())


def evidence_overlay(image: np.ndarray, recognition, ev: TrackEvent) -> np.ndarray:
    """The evidence picture of one event (see :class:`EvidenceWriter`).

    Args:
        image: ``(H, W, 3)`` uint8 BGR frame the recognition was read from.
        recognition: its :class:`vision.reconstruct.Recognition` (with quads).
        ev: the event.

    Returns:
        uint8 BGR annotated copy, as :func:`vision.overlay.draw_overlay`
        draws it (a frame under 720 px high enlarged, a band below it when
        the legend would hide tiles); the event's caption runs along the
        photo's bottom edge.
    """
    from vision.overlay import draw_overlay, overlay_scale, to_overlay
    recognition = getattr(recognition, "recognition", recognition)   # a Reading
    out = draw_overlay(image, recognition)
    quads = to_overlay(np.asarray(recognition.quads, np.float64), image.shape)
    index = {tuple(t.slot): i for i, t in enumerate(recognition.tiles)}
    size = float(np.median(np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1))) if len(quads) else 40.0
    thick = max(2, int(round(size / 12)))
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(0.35, size / 90)
    label = {"penalty": "BLOCKED", "claim": "CLAIM" if ev.valid else "INVALID", "attempt": "PUT BACK",
             "word": f"WORD {ev.word}" if ev.word else "WORD",
             "touch": "TOUCHED", "needs-referee": "?"}.get(ev.type, ev.type.upper())

    def text(s: str, org, colour) -> None:
        org = (int(org[0]), int(org[1]))
        cv2.putText(out, s, org, font, scale, (255, 255, 255), 3, cv2.LINE_AA)
        cv2.putText(out, s, org, font, scale, colour, 1, cv2.LINE_AA)

    for b in ev.blocks:
        if b.get("free") is not False:
            continue              # a free tile's one neighbour blocks nothing: outlining it read as blocked
        for key, word in (("covered_by", "covers"), ("left", "left"), ("right", "right")):
            for s in b.get(key, []):
                j = index.get(tuple(s))
                if j is None:
                    continue
                q = quads[j]
                cv2.polylines(out, [np.round(q).astype(np.int32)], True, BLOCKER_COLOUR, thick, cv2.LINE_AA)
                text(word, q[3] + (2, -4), BLOCKER_COLOUR)
    for s in ev.slots:
        j = index.get(tuple(s))
        if j is None:
            continue
        q = quads[j]
        cv2.polylines(out, [np.round(q).astype(np.int32)], True, EVENT_COLOUR, thick + 1, cv2.LINE_AA)
        text(label, q[0] + (0, -6), EVENT_COLOUR)
    caption = f"frame {ev.frame}: {ev.type}" + (f" - {ev.reason}" if ev.reason else "")
    w = out.shape[1]
    h = image.shape[0] * overlay_scale(*image.shape[:2])        # the photo's bottom edge (a band may follow)
    (tw, th), _ = cv2.getTextSize(caption, font, scale, 1)
    lines = _wrap(caption, max(20, int(len(caption) * (w - 20) / max(tw, 1))))
    box = int(th * 1.8) * len(lines) + 10
    out[h - box:h] = (0.25 * out[h - box:h] + 0.75 * 255).astype(np.uint8)
    for k, line in enumerate(lines):
        cv2.putText(out, line, (10, h - box + 8 + th + k * int(th * 1.8)), font, scale, (20, 20, 20), 1, cv2.LINE_AA)
    return out


def _wrap(text: str, width: int) -> list[str]:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return lines or [""]
