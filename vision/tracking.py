"""Tracking the table over time: when has the scene settled, and what changed
between two settled states.

Two stages, both pure (numpy arrays and engine objects in, decisions out):

* :class:`MotionGate` looks at a small, blurred, brightness-normalised grey
  signature of every frame and says when the picture has been still for
  ``settle_frames`` frames in a row (no hand or motion over the board).  Only
  then is a frame recognised and judged, once per still run, which is also
  what makes refereeing faster than real time: most frames cost one resize
  and one difference.
* :class:`BoardTracker` compares each settled observation of the board with
  its own board (what stands on the table) and turns the differences into
  events: a tile lifted (with a penalty when it was blocked), tiles put back
  (a touch, or a returned attempt), a pair that left the board (a claim,
  checked by :func:`companion.claims.check_claim`), in Word Mahjong a word
  its free letter tiles spelled (2.1 Rule 2), faces revealed under removed
  tiles, and "needs referee" where what it saw does not fit the rules.

What the classifier reads is weighed against each slot's own history
(:meth:`BoardTracker._correct`): a tile leaves only where its slot's face
signature (a normalised crop of the slot) changed since its last agreed
reading and the classifier agrees in some way; a slot that looks as it did
keeps its tile whatever one reading says.  Classifier calibration differs
from slot to slot (a mat square by the printed markers, a face half hidden by
a taller stack, a stack seen steeply whose lower face shows at the upper
slot), so absolute thresholds alone were not enough on the development
recordings (bench/bench_referee.py).

Rules applied (docs/RULES.md 1.2 and 1.5): the free rule is
judged on the board as it stood before the turn's first lift (Love/Candy 2.1
Law 2: both selected tiles must be Unblocked; the first pick does not free the
second); a blocked tile that leaves its slot costs a penalty even if it is put
back (Love 2.7 "Blocked Tile Penalty ... attempts to touch or select a tile
that is blocked"); a free tile lifted and put back alone is a touch (2.9
"Touch Is Claimed"); a lifted pair put back is an invalid attempt (Law 2
"the first selected tile must be returned"); tiles are only ever removed from
the layout (Law 1), so a slot known to be empty stays empty whatever the
camera says; a revealed face must be one of the copies of that face still
unaccounted for (1.2 "Component Inventory").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Sequence

import math

import cv2
import numpy as np

from companion.claims import BLOCKED, NO_MATCH, UNKNOWN_FACE, check_claim
from companion.errors import CompanionError
from companion.layouts import Slot
from companion.rules import Board
from companion.tiles import TileSet
from companion.words import MIN_WORD, assign

if TYPE_CHECKING:
    from companion.words import WordIndex


# ---------------------------------------------------------------- motion gate

@dataclass(frozen=True)
class MotionSettings:
    """Numbers of the motion gate.

    Attributes:
        size: (w, h) px of the grey signature a frame is reduced to.
        blur_sigma: blur of the signature (:func:`frame_signature`).
        pixel_delta: grey-level change (0-255) that counts a signature pixel as moved.
        jitter_px: a camera shaking by up to this many signature px (0.25:
            2.5 px of a 1280 px frame) does not count as motion
            (:func:`moved_fraction`'s ``shift_px``; bench game 8605's camera
            shook by a pixel or two every few frames, its first second never
            settled, and the game began from a picture of a hand reaching for
            the first pair, which cost a claim and gave a penalty).  At 0.5
            the 5 mm nudge of bench game 7606 went unseen too, and the next
            picture was judged as one after a camera move.
        moving_fraction: fraction of moved pixels above which a frame is "moving"
            (compared with the frame before).
        drift_fraction: fraction of moved pixels against the first frame of
            the still run above which the frame is "moving" too (a slow hand).
        settle_frames: consecutive frames showing the same picture needed to
            call the scene settled (:meth:`for_fps` turns seconds into frames).
        change_fraction: when set, a settled picture is judged only if more
            than this fraction of its pixels differs from the last judged one;
            None (the default) judges every settled run once: a tile taken
            off a low-contrast mat changes too few signature pixels to tell
            it from noise.
        change_delta: grey-level change that counts for ``change_fraction``.
        local_delta: :meth:`for_fps` sets it (None, the default, turns what
            follows off): a tile lifted or put back between two frames of a
            time-lapse with no hand seen, or fingertips at the picture's
            edge, change too few signature pixels to count as motion, so the picture is
            also compared patch by patch (:func:`local_change`, on the finer
            ``local_size`` signature; 0 alike, up to 2).  With
            ``local_settling`` a settling run is
            still only when its newest frame is within this of its oldest;
            and a still picture that, after it was judged, differs by more
            than this from every frame that settled it, on ``settle_frames``
            frames in a row alike among themselves, is judged again.
            Measured on the hand-free frames of the 12 recordings of
            ``bench/bench_referee.py --seed 7501`` and ``--seed 7601 --games
            8`` (720p, the bench's camera shake, noise, flicker and JPEG):
            220 pairs of frames of one still picture, 1-20 frames apart,
            scored at most 0.14, and 0.19 with one of them brightened or
            darkened by a gamma of 0.9 or 1.1; the lowest of the moves (the
            last hand-free frame before against the first after) 0.26, most
            0.6 or more.  The log-difference this replaced scored 2.8 on
            still pictures, 6.0 under the gamma, and 1.6 on some moves: a
            break-test saw still pictures split and a penalty go to the
            wrong player.
        local_settling: whether ``local_delta`` also holds a settling run
            back (slow sources, :meth:`for_fps`).  At video rates it would
            hold back the picture a retreating hand leaves by a fraction of
            a second, enough for the next move to cut its second reading
            short (bench game 10002: an attempt went unrecorded).
        local_size: (w, h) px of the finer signature for ``local_delta``
            (a tile at 720p on a mat filling the frame is 7-8 px across).
        local_blur: its blur sigma, px (:func:`frame_signature`).
        local_sigma: sigma, px, of the Gaussian window of
            :func:`local_change`'s local statistics.
        local_window: side, px, of the patch over which its dissimilarity
            is averaged.
    """

    size: tuple[int, int] = (128, 72)
    blur_sigma: float = 2.0
    pixel_delta: float = 10.0
    jitter_px: float = 0.25
    moving_fraction: float = 0.003
    drift_fraction: float = 0.01
    settle_frames: int = 4
    change_fraction: float | None = None
    change_delta: float = 6.0
    local_delta: float | None = None
    local_settling: bool = True
    local_size: tuple[int, int] = (256, 144)
    local_blur: float = 2.0
    local_sigma: float = 2.0
    local_window: int = 3

    @classmethod
    def for_fps(cls, fps: float, settle_s: float = 0.3, **kw) -> "MotionSettings":
        """Settings for a source at ``fps`` frames per second: settled after
        ``settle_s`` seconds of stillness: at least 3 frames, or 2 when two
        frames lie ``settle_s`` or more apart (a time-lapse: two alike frames
        a second apart are a still table, and a move seen on only two frames
        can still be judged).  Every source gets ``local_delta``
        (:data:`SLOW_LOCAL_DELTA`): at a slow rate a move may fall between
        two frames with nothing seen moving, and at video rates a hand may
        show only as fingertips at the picture's edge, changing too few
        pixels to count as motion (bench game 12401, Twin Hearts: fingers
        over two corner tiles were judged a still picture, and the picture
        once they had gone, a claim's two tiles off, was never judged)."""
        rate = fps if fps and fps > 0 else 30.0
        slow = rate * settle_s <= 1.0
        kw.setdefault("local_delta", SLOW_LOCAL_DELTA)
        kw.setdefault("local_settling", slow)
        return cls(settle_frames=max(2 if slow else 3, int(round(settle_s * rate))), **kw)


def frame_signature(image_bgr: np.ndarray, size: tuple[int, int] = (128, 72),
                    blur_sigma: float = 2.0) -> np.ndarray:
    """A small, blurred, brightness-normalised grey copy of a frame for motion tests.

    The frame is turned grey, shrunk by area averaging, blurred (sigma in
    signature px, so a camera shaking by a pixel or two does not count as
    motion) and scaled to a mean grey level of 128 (so auto-exposure and
    lighting flicker do not either).

    Args:
        image_bgr: (H, W, 3) uint8 BGR frame (or (H, W) grey).
        size: (w, h) of the signature in px.
        blur_sigma: Gaussian blur sigma in signature px (0: none).

    Returns:
        (h, w) float32, mean 128.
    """
    grey = image_bgr if image_bgr.ndim == 2 else cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    if blur_sigma > 0:
        small = cv2.GaussianBlur(small, (0, 0), blur_sigma)
    return small * np.float32(128.0 / max(1.0, float(small.mean())))


def moved_fraction(a: np.ndarray, b: np.ndarray, pixel_delta: float, shift_px: float = 0.0) -> float:
    """Fraction of signature pixels whose grey level differs by more than
    ``pixel_delta``.

    With ``shift_px`` (signature px), a pixel's difference must also exceed
    what moving the picture by that much makes there: ``shift_px`` times
    the steeper of the two signatures' grey-level slopes at it (Sobel, grey
    levels per px).  A camera shaking by a pixel or two of the frame (a
    turn or a tilt as well as a slide: the tiles' sides move against the
    mat) then changes nothing, while a hand, whose inside differs from the
    table it covers, still counts."""
    d = np.abs(np.asarray(a, np.float32) - np.asarray(b, np.float32))
    if shift_px > 0:
        d -= shift_px * np.maximum(_slope(a), _slope(b))
    return float(np.count_nonzero(d > pixel_delta)) / d.size


def _slope(sig: np.ndarray) -> np.ndarray:
    """``(H, W) float32`` grey-level slope of a signature, grey levels per
    px: the Sobel gradient's magnitude over the kernel's weight, 8."""
    f = np.asarray(sig, np.float32)
    gx = cv2.Sobel(f, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(f, cv2.CV_32F, 0, 1, ksize=3)
    return np.sqrt(gx * gx + gy * gy) / 8.0


#: Votes a face told by the referee (a ledger correction) weighs: far more than
#: any count of camera readings, so none outvotes it
TOLD_VOTES = 1e6
#: ``MotionSettings.local_delta`` of slow sources (see there for how it was chosen)
SLOW_LOCAL_DELTA = 0.22
#: presence log-odds kept for each standing slot (``TrackerSettings.stand_fall``)
STAND_KEPT = 5
#: SSIM's second constant, (0.03 L)^2 with L = 255 (Wang et al. 2004), taken at
#: a twentieth: the signatures are blurred, so flat patches vary little
_CS_C2 = (0.03 * 255.0) ** 2 / 20.0


def local_change(a: np.ndarray, b: np.ndarray, window: int = 3, sigma: float = 2.0) -> float:
    """How unlike the most changed patch of signature ``a`` is the same patch
    of signature ``b``: 0 alike, up to 2.

    ``b`` is first shifted onto ``a`` (phase correlation, sub-pixel: a camera
    that moved by a pixel or two, or shakes, does not count).  The measure
    is one minus the contrast-structure term of SSIM (Z. Wang, A. C. Bovik,
    H. R. Sheikh, E. P. Simoncelli, "Image quality assessment: from error
    visibility to structural similarity", IEEE Trans. Image Processing 13(4),
    2004, eq. 10 with the means left out), ``(2 cov + C2) / (var_a + var_b +
    C2)`` over a Gaussian window of ``sigma``: a tile's outline and face that
    appear or vanish change it, while a light that dims, brightens or
    changes its contrast (a lamp, a cloud, the camera's exposure) leaves it
    near 1.  The result is the largest mean of ``1 - cs`` over a ``window``
    x ``window`` patch, away from the signature's border (what a shift
    brings in there is unknown).

    Args:
        a, b: (h, w) float32 signatures (:func:`frame_signature`) of one size.
        window: patch side, signature px (at least 1).
        sigma: Gaussian window of the local statistics, signature px.

    Returns:
        0 for identical pictures (0 as well for signatures too small to hold
        a patch away from the border), up to 2.
    """
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    window = max(1, int(window))
    edge = max(3, window, int(math.ceil(2 * sigma)))
    if a.shape != b.shape or a.ndim != 2 or min(a.shape) <= 2 * edge:
        return 0.0
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return 0.0
    (dx, dy), _ = cv2.phaseCorrelate(b.astype(np.float64), a.astype(np.float64))
    if np.isfinite(dx) and np.isfinite(dy) and abs(dx) < edge and abs(dy) < edge:
        m = np.float32([[1, 0, dx], [0, 1, dy]])
        b = cv2.warpAffine(b, m, (b.shape[1], b.shape[0]), borderMode=cv2.BORDER_REPLICATE)

    def blur(x: np.ndarray) -> np.ndarray:
        return cv2.GaussianBlur(x, (0, 0), float(sigma))

    ma, mb = blur(a), blur(b)
    var_a = blur(a * a) - ma * ma
    var_b = blur(b * b) - mb * mb
    cov = blur(a * b) - ma * mb
    cs = (2.0 * cov + _CS_C2) / (var_a + var_b + _CS_C2)
    patch = cv2.blur(1.0 - cs, (window, window))
    return float(patch[edge:-edge, edge:-edge].max())


class MotionGate:
    """Says, frame by frame, whether the scene is moving or settled.

    ``update(signature, fine=None)`` returns one of:

    * ``"moving"``: the frame differs from the previous one (a hand, a nudge);
    * ``"settling"``: still, but not yet for ``settle_frames`` frames;
    * ``"settled"``: the frame completing a settled run whose picture differs
      from the last judged picture: judge this one;
    * ``"same"``: settled, and either already reported or no different from
      the last judged picture.

    :attr:`still` counts the frames since the picture last changed (0 on a
    moving frame), so the settled run began ``still`` frames ago.  A frame is
    moving when it differs from the one before or from the first frame of
    the current still run (a hand moving slowly changes little from frame to
    frame, but soon differs from where it was).

    With ``local_delta`` a change too small to count as motion (one tile
    lifted or put back between two frames far apart, no hand seen;
    fingertips at the picture's edge) is found patch by patch on the
    ``fine`` signatures (:func:`local_change`; the plain signature when
    none is given):

    * a settling run whose newest frame differs so from its oldest starts
      again at the newest (with ``local_settling``);
    * when, after a run was reported, ``settle_frames`` frames in a row,
      alike among themselves, each differ so from every frame that settled
      the reported picture, the last of them is reported ``"settled"``
      again, with :attr:`still` counted from the first of them.  Until then
      :attr:`changing` is true: the picture is no longer the one reported,
      though nothing moved.

    :attr:`unsettled` counts the changes that stood on too few frames to be
    judged (a run started again, a change gone again or changed again before
    ``settle_frames`` frames).
    """

    def __init__(self, settings: MotionSettings = MotionSettings()) -> None:
        self.settings = settings
        self._prev: np.ndarray | None = None
        self._anchor: np.ndarray | None = None
        self.still = 0
        self._judged: np.ndarray | None = None
        self._reported = False
        self._recent: list[np.ndarray] = []     # fine signatures of the still run's last settle_frames frames
        self._refs: list[np.ndarray] = []       # those that settled the reported picture
        self._changed: list[tuple] = []         # (signature, fine) of the frames since, each unlike all _refs
        self.unsettled = 0

    @property
    def changing(self) -> bool:
        """True after a ``"same"`` frame that differs locally from every frame
        that settled the reported picture (a lasting change would be reported
        ``"settled"`` once it has stood for ``settle_frames`` frames)."""
        return bool(self._changed)

    def _unlike(self, a: np.ndarray, b: np.ndarray) -> bool:
        s = self.settings
        return local_change(a, b, s.local_window, s.local_sigma) > s.local_delta

    def update(self, sig: np.ndarray, fine: np.ndarray | None = None) -> str:
        s = self.settings
        fine = sig if fine is None else fine
        prev, self._prev = self._prev, sig
        if prev is None:
            self.still = 0
            self._anchor = sig
            self._recent = [fine]
            return "settling"
        if moved_fraction(sig, prev, s.pixel_delta, s.jitter_px) > s.moving_fraction \
                or moved_fraction(sig, self._anchor, s.pixel_delta, s.jitter_px) > s.drift_fraction:
            self.still = 0
            self._reported = False
            self._anchor = sig
            self._recent = [fine]
            self._changed = []
            return "moving"
        self.still += 1
        self._recent = (self._recent + [fine])[-max(1, s.settle_frames):]
        if self.still + 1 < s.settle_frames:
            return "settling"
        if self._reported:
            return self._local(sig, fine)
        if s.local_delta is not None and s.local_settling and len(self._recent) > 1 \
                and self._unlike(fine, self._recent[0]):
            # the run spans a change too small to count as motion (frames far
            # apart, each showing another state): still only from this frame
            self.unsettled += 1
            self.still = 0
            self._anchor = sig
            self._recent = [fine]
            return "settling"
        self._reported = True
        self._refs = list(self._recent)
        self._changed = []
        if s.change_fraction is None or self._judged is None \
                or moved_fraction(sig, self._judged, s.change_delta) > s.change_fraction:
            self._judged = sig
            return "settled"
        return "same"

    def _local(self, sig: np.ndarray, fine: np.ndarray) -> str:
        """After a reported run: ``"settled"`` when the last ``settle_frames``
        frames, alike among themselves, each differ locally from every frame
        that settled the reported picture (see the class), else ``"same"``."""
        s = self.settings
        if s.local_delta is None or not self._refs:
            return "same"
        if not all(self._unlike(fine, r) for r in self._refs):
            if self._changed:
                self.unsettled += 1     # a change that stood on too few frames to be judged
            self._changed = []
            return "same"
        if self._changed and self._unlike(fine, self._changed[0][1]):
            self.unsettled += 1         # the changed picture changed again: it starts over here
            self._changed = []
        self._changed.append((sig, fine))
        if len(self._changed) < max(1, s.settle_frames):
            return "same"
        self.still = len(self._changed) - 1
        self._anchor = self._changed[0][0]
        self._refs = [f for _, f in self._changed[-max(1, s.settle_frames):]]
        self._changed = []
        self._judged = sig
        return "settled"


# ---------------------------------------------------------------- board tracker

@dataclass(frozen=True)
class Observation:
    """What recognition saw in one settled frame, per layout slot.

    Attributes:
        present: (N,) bool, a tile stands in the slot.
        known: (N,) bool, the slot's presence was seen with confidence (False
            where a hand or glare hides it, or recognition is unsure).
        faces: length-N face ids, None where the face is not visible or unsure.
        confidence: (N,) float in [0, 1], the confidence of each face in ``faces``.
        face_probs: optional (N, K) float, the classifier's probability of each
            of the variant's faces (tile-set order) at each slot.
        p_none: optional (N,) float, the probability of "no face here".
        read: optional (N,) bool, the slot gave a reading at all (False where
            hidden); ``known`` when None.
        patches: optional (N, D) float32 unit-length signatures of each slot's
            top face (``vision.referee.slot_signatures``): a slot whose
            signature did not change since its last agreed reading has not
            changed, whatever the classifier says.
        behind: optional (N,) bool, standing tiles whose face taller tiles
            standing in front hide from the camera (a steep view): their
            window shows the tile in front, so neither their reading nor a
            change of their look says they left.
        front: optional length-N sequence: for a slot in ``behind``, the
            indices of the taller tiles that show in its window from the
            camera (:func:`vision.reconstruct.occluders_in_view`); None for
            the others (and all None when not given: taller tiles within
            two tiles count, :meth:`BoardTracker._taller_near_changed`).
            In the first observation, the same for each slot under another
            (bar that one): a face read there may be theirs
            (:meth:`BoardTracker._shown_by_taller`).
        held: optional (N,) bool, slots the caller leaves as they were (the
            camera referee's slots under a hand reaching in from beside the
            board, read hidden, in a picture it judges all the same): not
            judged, whatever their look or face probabilities say (they are
            ``known`` false too).
        stand: optional (N,) float, the presence model's log-odds that a
            tile stands in the slot at its own layer's height
            (:meth:`vision.presence.PresenceModel.slot_logits`), NaN where
            it was not asked: the camera referee asks it for raised slots
            whose look changed (a tile of a taller layer in front left, or
            the tile itself left and the one below shows).
    """

    present: np.ndarray
    known: np.ndarray
    faces: Sequence[str | None]
    confidence: np.ndarray
    face_probs: np.ndarray | None = None
    p_none: np.ndarray | None = None
    read: np.ndarray | None = None
    patches: np.ndarray | None = None
    behind: np.ndarray | None = None
    front: Sequence | None = None
    held: np.ndarray | None = None
    stand: np.ndarray | None = None

    def readings(self) -> np.ndarray:
        """(N,) int8: 1 read present, 0 read absent, -1 no reading (hidden)."""
        read = self.known if self.read is None else self.read
        return np.where(np.asarray(read, bool), np.asarray(self.present, bool).astype(np.int8), np.int8(-1))


def merge_observations(a: Observation, b: Observation) -> Observation:
    """Two readings of one still picture (two frames of the same settled run):
    a slot's presence is known only where both knew it and agreed; faces and
    scores are the later reading's (probabilities averaged; presence log-odds
    the later reading's where it asked them, else the earlier's)."""
    agree = np.asarray(a.present, bool) == np.asarray(b.present, bool)
    known = np.asarray(a.known, bool) & np.asarray(b.known, bool) & agree
    conf = np.where(np.asarray(b.present, bool), b.confidence, np.minimum(a.confidence, b.confidence))
    fp = None if a.face_probs is None or b.face_probs is None else (a.face_probs + b.face_probs) / 2
    pn = None if a.p_none is None or b.p_none is None else (a.p_none + b.p_none) / 2
    read = None if a.read is None or b.read is None else np.asarray(a.read, bool) & np.asarray(b.read, bool)
    behind = b.behind if a.behind is None else a.behind if b.behind is None \
        else np.asarray(a.behind, bool) | np.asarray(b.behind, bool)
    front = b.front if a.front is None else a.front if b.front is None \
        else tuple(y if x is None else x if y is None else tuple(sorted(set(x) | set(y)))
                   for x, y in zip(a.front, b.front))
    held = b.held if a.held is None else a.held if b.held is None \
        else np.asarray(a.held, bool) | np.asarray(b.held, bool)
    if a.stand is None or b.stand is None:
        stand = b.stand if a.stand is None else a.stand
    else:
        stand = np.where(np.isfinite(b.stand), b.stand, a.stand)
    return Observation(b.present, known, b.faces, conf, fp, pn, read, b.patches, behind, front, held, stand)


@dataclass(frozen=True)
class TrackEvent:
    """One thing the tracker inferred.

    ``type`` is one of ``"lift"``, ``"return"``, ``"touch"`` (a free tile put
    back), ``"penalty"``, ``"claim"``, ``"word"`` (Word Mahjong: free tiles
    that spell ``word`` left together, ``slots`` in spelling order),
    ``"attempt"`` (a lifted pair that came back), ``"reveal"`` (a face seen
    for the first time), ``"needs-referee"``.
    ``slots``/``faces`` list the tiles concerned; ``valid`` and ``code`` come
    from the engine for claims, attempts and penalties; ``reason`` is the
    engine's sentence (:meth:`companion.rules.BlockReason.describe`,
    :class:`companion.claims.Verdict` ``reason``) or the tracker's;
    ``blocks`` holds the engine's BlockReason JSON of each slot at the start
    of the turn.  ``gone`` (a ``"needs-referee"`` only) lists the tiles the
    tracker has taken off its board for good with no move decided: the
    ledger takes them off too (``off_table``, :meth:`companion.game.GameState.judged_board`).
    ``pair_move`` (a ``"needs-referee"`` only): the item is one player's
    pair move whose outcome the camera cannot judge (two tiles of one turn
    taken for good, their faces read too unsurely to say whether they
    match); the ledger passes the turn where either outcome would
    (:meth:`companion.game.GameState._on_needs_referee`).
    ``partners`` (a ``"needs-referee"`` of one tile only): the standing
    tiles it may have been claimed with unseen (:meth:`BoardTracker._unseen_partners`),
    for the referee to look for; ``likely`` the one of them whose look
    changed by itself as the tile left, where one alone did.
    """

    type: str
    frame: int
    slots: tuple[Slot, ...]
    faces: tuple[str | None, ...] = ()
    valid: bool | None = None
    reason: str | None = None
    code: str | None = None
    blocks: tuple[dict, ...] = ()
    gone: tuple[Slot, ...] = ()
    word: str | None = None
    pair_move: bool = False
    partners: tuple[Slot, ...] = ()
    likely: Slot | None = None

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
        if self.gone:
            d["gone"] = [list(s) for s in self.gone]
        if self.word is not None:
            d["word"] = self.word
        if self.pair_move:
            d["pair_move"] = True
        if self.partners:
            d["partners"] = [list(s) for s in self.partners]
        if self.likely is not None:
            d["likely"] = list(self.likely)
        return d


@dataclass(frozen=True)
class WordMove:
    """Free tiles taken off together that spell a word (Word Mahjong 2.1
    Rule 2: "Select three or more free letter tiles ... to spell a valid
    English word"; all selected tiles must be free).  ``idx`` are slot
    indices in spelling order, ``faces`` theirs, ``word`` upper case."""

    idx: tuple[int, ...]
    slots: tuple[Slot, ...]
    faces: tuple[str, ...]
    word: str
    inferred: int | None = None     # the slot whose face was never read and is given here


@dataclass(frozen=True)
class TrackerSettings:
    """Numbers of the tracker.

    Attributes:
        face_confidence: a face read with at least this confidence (in one
            settled frame at least) is trusted
            for judging a claim; a pair whose faces do not match but one of
            them is less sure than this goes to the referee instead of being
            scored invalid.
        plausible_vote: a kept pair whose unsure face does not match the sure
            one is claimed when a matching face has at least this share of
            the unsure tile's best face votes (:meth:`BoardTracker._infer_pair`).
        strong_ncc: a tile (with no tile right below) whose own face still
            reads likeliest stays, unless its signature correlates less than
            this with every stored appearance: a shadow or a hand's edge
            changes a slot moderately, taking the tile away changes it
            completely (removed tiles correlated at most 0.19 on the
            development recordings).
        appearances, new_appearance_ncc: each slot keeps up to this many
            agreed appearances of its present state (a taller neighbour that
            hides part of a face and comes back gives two); a reading that
            correlates less than ``new_appearance_ncc`` with every stored one
            is stored too, the oldest forgotten.  "Changed" means unlike all of
            them.
        shifted_min, shifted_share: a picture in which at least this many
            standing top tiles read standing (and this share of them) look
            changed (under ``change_ncc``) shifted as a whole (a camera bumped
            or refocused): a blocked tile read empty there whose look changed
            only in part is not taken as lifted (:meth:`BoardTracker._shifted_blocked`).
        stack_ncc: a standing tile over another whose signature correlates
            less than this with its last agreed one is gone, whatever the
            classifier reads: the tile below shows at the wrong height, and it
            may bear the same face.
        hand_ncc: a standing tile whose signature correlates less than this
            with its last agreed one counts as changed for
            :meth:`BoardTracker.changed_standing` (a hand over a tile drops it
            near 0; a shadow or a tilt of the light far less).
        own_fall, own_min, none_rise: a standing tile whose slot changed
            (see ``change_ncc``) is gone when its own face's probability fell
            below ``own_fall`` times its mean in the slot's history (a mean of
            at least ``own_min``), or "no face here" rose ``none_rise`` above
            its mean (:meth:`BoardTracker._correct`); a fall of its own face
            does not count when another face reads clearly (``clear_face``):
            the tile is there, only better seen (a neighbour that hid part of
            it has gone).
        swap_min_reads, swap_confidence, swap_sure: see
            :meth:`BoardTracker._correct`.
        change_ncc: a tile leaves or comes back only where the slot's face
            signature correlates less than this with its last agreed reading
            (observations with ``patches``; on the development recordings
            removed tiles correlated at most 0.19, standing ones at least 0.8
            in 99 % of cases).
        doubtful_absent_confidence: without face signatures, a slot that
            read "empty" in the first frame, while every tile of the deal stood
            there (a reading the tracker did not believe), must read "empty"
            with at least this confidence for a lift to count.
        word_max_tiles: with a dictionary (Word Mahjong), the longest word
            looked for; the camera referee also takes up to this many slots
            read empty at once for a move, not a hand.
        spelling_min_frequency: letters off the board that make no move yet
            wait for more while a hand is in view when, with tiles standing
            free, they may still become a word English uses at least this
            often (``pyspellchecker``'s counts; :meth:`BoardTracker._may_spell`):
            about 40 000 words, where every word of the dictionary would let
            nearly any letters wait.
        misplaced_confidence: a tile lifted and not back whose face is read
            with at least this confidence on an emptied slot of the bottom
            layer that read empty before was put down there: the referee is
            asked at once (:meth:`BoardTracker.observe`).
        behind_read, behind_gone: a tile behind taller tiles in front
            (``Observation.behind``) whose own face still read with at least
            ``behind_read`` in the last observation, and whose slot now reads
            "no face here" with at least ``behind_gone``, above every face
            (its own under a tenth of what it read), has left, while every
            taller tile near it stands unchanged; one read with its own face
            at ``behind_read`` stands (a lifted one is back), and its looks
            are learnt (:meth:`BoardTracker._behind_read`).  A stacked tile
            whose face was never read, read with ``behind_read`` as a
            taller tile in its window leaves, stands too (its look changed
            with that tile's wall, :meth:`BoardTracker._correct`).
        stand_sure: a stacked tile whose look changed as a taller tile in
            its window left or changed, read standing with presence log-odds
            (``Observation.stand``) of at least this, stands: a face never
            read there, read now with ``swap_confidence`` or more, is its
            own; one once read unsurely (under ``face_confidence``) gives
            way to another read with ``behind_read`` or more (bench games
            16200 and 16203, the Imperial Palace at 640 x 480: layer-1 tiles
            behind a layer-3 pair that left read their faces at 0.59 and
            0.98 with log-odds +7.9 and +4.3, and the stack rule took them
            off, gave their faces to the tiles below and charged penalties).
            Nor does the swap rule then take a face read surely, another
            than the one the tile holds, for the tile below seen too high
            (bench game 16802: an 8 of Characters held as "6", read at
            about 0.5 behind a taller tile, read 8 at 0.98 with log-odds
            +11.4 once that tile left, and was charged), unless the face
            held was read twice or more with ``swap_sure`` and the new one
            is read so too where the look changed (session 55, bench game
            19503: tiles are never swapped), and the face held is not that
            of a taller tile in its window that has just left or changed
            (bench game 14502).
        stand_fall: a tile behind taller tiles in front, judged by its look
            (:meth:`BoardTracker._behind_look`), has also left when the
            presence model reads it at ``-stand_sure`` log-odds or less,
            this much under the median of what it read there while the tile
            stood (the last :data:`STAND_KEPT` pictures since the camera
            last moved or the light changed):
            bench game 14201 (Twin Hearts at 640 x 480), a layer-0 tile four
            fifths hidden, its look 0.85 of its own and "no face" up by only
            0.11, read +6.6 to +7.8 standing and -6.5 to -7.8 once claimed:
            its claim went to the referee as a lone tile.  On 31 bench
            games in small pictures (640 x 480 and 960 x 540) and tall
            layouts, tiles behind stacks read standing fell so in none of
            1569 pictures (by 4.7 at most, to -3.6), gone ones in 34 of 74
            (by 8.1 or more).  A lifted tile behind taller ones whose slot
            looks as it stood is not back while the model reads
            ``-stand_sure`` or less there; where its look cannot tell (it
            looks as it stood and as when it left), it is back once the
            model reads it within half ``stand_fall`` of what it read
            standing, over ``-stand_sure``.
        yield_vote: a standing tile whose face's mean vote is under this
            gives its copy up to a tile that reads the same face with a mean
            vote of ``face_confidence`` or more, all copies being placed
            (:meth:`BoardTracker._yield_copy`).
    """

    face_confidence: float = 0.9
    plausible_vote: float = 0.5
    doubtful_absent_confidence: float = 0.9
    own_fall: float = 0.5
    clear_face: float = 0.5
    own_min: float = 0.1
    none_rise: float = 0.15
    swap_min_reads: int = 3
    swap_confidence: float = 0.5
    swap_sure: float = 0.95
    change_ncc: float = 0.75
    strong_ncc: float = 0.35
    appearances: int = 4
    shifted_min: int = 8
    shifted_share: float = 0.08
    new_appearance_ncc: float = 0.9
    hand_ncc: float = 0.5
    stack_ncc: float = 0.35
    misplaced_confidence: float = 0.9
    word_max_tiles: int = 12
    spelling_min_frequency: int = 100
    behind_read: float = 0.7
    behind_gone: float = 0.3
    stand_sure: float = 3.0
    stand_fall: float = 7.0
    yield_vote: float = 0.5


@dataclass
class TrackerState:
    """Mutable state of :class:`BoardTracker` (kept apart for inspection)."""

    board: Board
    faces: list[str | None]
    face_conf: list[float]
    votes: np.ndarray                                          # (N, K) summed face probabilities
    peak: np.ndarray                                           # (N, K) highest single reading of each face
    reads: np.ndarray                                          # (N,) settled frames that read a face there
    last_seen: np.ndarray                                      # (N,) last reading: 1 present, 0 absent, -1 none
    doubt: np.ndarray                                          # (N,) "empty" readings not believed (first frame)
    base_pn: np.ndarray                                        # (N,) summed p_none while the tile stood
    base_fp: np.ndarray                                        # (N, K) summed face probabilities while it stood
    base_n: np.ndarray                                         # (N,) readings summed
    ref: np.ndarray | None = None                              # (N, K, D) agreed face signatures per slot
    n_ref: np.ndarray | None = None                            # (N,) signatures stored (0..K)
    has_ref: np.ndarray | None = None                          # (N,) at least one is stored
    ref_state: np.ndarray | None = None                        # (N,) 1 stored while standing, 0 while lifted
    stood: np.ndarray | None = None                            # (N, K, D) a lifted tile's signatures from before it left
    n_stood: np.ndarray | None = None                          # (N,) of them stored (0 where standing)
    lifted: list[int] = field(default_factory=list)          # off the board, order of lifting
    turn_board: Board | None = None                           # board before the turn's first lift
    penalised: set[int] = field(default_factory=set)          # lifted blocked slots already penalised
    turn_lifted: list[int] = field(default_factory=list)      # every tile lifted since the turn began
    lift_frame: dict[int, int] = field(default_factory=dict)  # slot -> frame its lift was first seen
    lift_unseen: dict[int, frozenset] = field(default_factory=dict)  # slot -> slots unread in that picture
    lift_unseen_changed: dict[int, frozenset] = field(default_factory=dict)  # of those, changed by themselves
    behind_last: np.ndarray | None = None                      # (N,) behind taller tiles in the last observation
    own_last: np.ndarray | None = None                         # (N,) own face's probability there (NaN: none)
    pn_last: np.ndarray | None = None                          # (N,) "no face here" there (NaN: none)
    sig_last: np.ndarray | None = None                         # (N, D) every slot's signature there
    stand_seen: np.ndarray | None = None                       # (N, STAND_KEPT) presence log-odds read standing, NaN: none
    flagged: bool = False                                      # a needs-referee was raised for this lift set
    gone: set[int] = field(default_factory=set)               # taken away without a valid claim
    held: tuple | None = None                                  # (frame, verdict or WordMove): a valid move off, not yet claimed
    inconsistent: int = 0                                      # face readings refused (no copy left)
    misplaced: set[tuple[int, int]] = field(default_factory=set)  # (lifted slot, emptied slot) asked about
    held_mid_move: bool = False                                # the held move was seen with a hand still in view
    expected: set[int] = field(default_factory=set)           # back on the ledger's board: taken in when seen again
    last_patch: np.ndarray | None = None                       # (N, D) each slot's signature at its last reading
    lifted_mid_move: bool = False                              # the tiles off were last seen with a hand still in view
    initialised: bool = False


class BoardTracker:
    """Turns settled observations into lifts, touches, claims and penalties.

    Args:
        board: the engine board of the layout (slots known to be empty in the
            first observation are taken as already removed).
        tileset: the variant's tile set (matching relation, copies).
        faces: initial face per slot (None where unknown).
        settings: confidence thresholds.
        words: Word Mahjong's dictionary (:class:`companion.words.WordIndex`);
            given, three or more free tiles off together that spell a word
            are a word (held and claimed as a pair is, below), and tiles
            lifted while others that make no move are off join them when
            together they spell a word (the player was still spelling it).
            None: pairs only.

    A pair of lifted tiles that the engine accepts is held until the table
    shows it did not come back (../shared/CONTRACT.md: "a claim is a pair of
    tiles that left the board and did not come back"): it is claimed, with
    the frame in which it was first seen off the board, at the next settled
    observation that still shows it gone, when other tiles leave, at the end
    of the recording, or when the caller decides it has stayed away long
    enough (:meth:`claim_held`).  Put back before that, it is an ``attempt``
    (returned).  A lifted pair that does not match, or holds a blocked tile,
    is an attempt; it is resolved when the tiles come back (``attempt``) or,
    if they never come back, as an invalid ``claim`` plus ``needs-referee``.
    """

    def __init__(self, board: Board, tileset: TileSet, faces: Sequence[str | None] | None = None,
                 settings: TrackerSettings = TrackerSettings(), words: "WordIndex | None" = None) -> None:
        n = len(board.layout.slots)
        self.tileset = tileset
        self.settings = settings
        self.words = words
        self.face_ids = [f.id for f in tileset.faces]
        self._col = {f: k for k, f in enumerate(self.face_ids)}
        self._copies = np.array([f.copies for f in tileset.faces])
        at = {tuple(sl): i for i, sl in enumerate(board.layout.slots)}
        self._above = [at.get((sl.x, sl.y, sl.z + 1), -1) for sl in board.layout.slots]
        self._below = [at.get((sl.x, sl.y, sl.z - 1), -1) for sl in board.layout.slots]
        init = list(faces) if faces is not None else [None] * n
        votes = np.zeros((n, len(self.face_ids)))
        for i, f in enumerate(init):
            if f is not None:
                votes[i, self._col[f]] = 1.0
        self.state = TrackerState(board=board, faces=init, face_conf=[1.0 if f else 0.0 for f in init],
                                  votes=votes, peak=votes.copy(), reads=np.array([1 if f else 0 for f in init]),
                                  last_seen=np.full(n, -1, np.int8), doubt=np.zeros(n, np.int64),
                                  base_pn=np.zeros(n), base_fp=np.zeros((n, len(self.face_ids))),
                                  base_n=np.zeros(n, np.int64))

    @property
    def board(self) -> Board:
        return self.state.board

    @property
    def busy(self) -> bool:
        """Tiles are off the board in a turn not yet resolved."""
        return bool(self.state.lifted)

    def observe(self, frame: int, obs: Observation, mid_move: bool = False) -> list[TrackEvent]:
        """Compare one settled observation with the tracker's board.

        Returns the events it implies, in order.  Slots not ``known`` in the
        observation keep their previous state.  ``mid_move``: the picture
        still shows a hand in view beside the board (the caller's judgement),
        so a move held in it may still grow into a word (Word Mahjong,
        :meth:`_word_grows`).
        """
        st = self.state
        slots = self.board.layout.slots
        events: list[TrackEvent] = []
        if st.initialised:
            # before the correction: a tile put back on a stack makes the
            # look of the slot it covers change wholly, which the stack rule
            # would read as that tile lifted
            self._take_back_expected(obs)
        obs = self._correct(obs)
        mark = getattr(self, "_refaced", None)
        if mark is not None and mark[0] == id(obs):
            # faces that were a taller tile's, seen in the window: forgotten,
            # and learnt again from this reading below (:meth:`_correct`)
            for i in np.flatnonzero(mark[1]):
                st.votes[i], st.peak[i], st.reads[i] = 0.0, 0.0, 0
                st.faces[i], st.face_conf[i] = None, 0.0
        readings = obs.readings()
        if not st.initialised:
            st.initialised = True
            gone = [i for i in range(len(slots)) if obs.known[i] and not obs.present[i]]
            for i in _removal_order(self.board, gone):
                self.board.remove(i)
            st.doubt += (readings == 0) & self.board.present
            st.last_seen = np.where(readings >= 0, readings, st.last_seen).astype(np.int8)
            self._keep_last_patch(obs, readings)
            self._learn_faces(frame, obs, events, quiet=True)
            self._learn_base(obs)
            self._learn_refs(obs, first=True)
            self._keep_behind(obs)
            return events
        new_lifts, returns = self._changes(obs, readings)
        misplaced = self._misplaced(frame, obs, new_lifts)
        st.last_seen = np.where(readings >= 0, readings, st.last_seen).astype(np.int8)
        self._keep_last_patch(obs, readings)
        grows = self._word_grows(new_lifts) if not returns else False
        spelling = not grows and not returns and self._still_spelling(new_lifts)
        # a word seen with the hand still beside the board, and again so with
        # nothing else changed: the letters may go on (:meth:`word_open`)
        still_open = mid_move and not new_lifts and not returns and self.word_open()
        if st.held is not None and not returns and not grows and not still_open:
            events.extend(self.claim_held())     # still off the board in a later settled picture
        if not still_open:
            st.held = None                       # (a tile of it came back, or a word grows: no claim yet)
        for i in returns:
            st.lifted.remove(i)
            events.append(TrackEvent("return", frame, (slots[i],), (st.faces[i],)))
        if returns and not st.lifted:
            events.extend(self._close_turn(frame))
        if new_lifts and len(st.lifted) >= 2 and not grows and not spelling:
            # an unresolved pair is still off the board and new tiles leave: the
            # pair was taken for good without a valid claim (unless, in Word
            # Mahjong, they all spell a word together: it was being built)
            events.extend(self._settle_unreturned(frame))
        elif new_lifts and len(new_lifts) >= 2 and len(st.lifted) % 2 == 1 \
                and ((self.words is None and not self._splits_once(st.lifted + list(new_lifts)))
                     or self._lone_apart(new_lifts)):
            # a tile off the board alone since an earlier still picture (its
            # partner never seen leaving: a tile hidden behind a taller
            # stack; or a tile kept) and then a pair leaves, and the three do
            # not make claims one way: the pair is a move of its own, and the
            # lone tile goes to the referee (bench game 9204: the three were
            # asked about together, the pair's attempt was never recorded,
            # and the turn stayed with its player: two later penalties went
            # to the wrong one); in Word Mahjong, see :meth:`_lone_apart`
            events.extend(self._settle_unreturned(frame))
        if new_lifts:
            if not st.lifted:
                st.turn_board = self.board.copy()
                st.turn_lifted = []
                st.penalised = set()
                st.flagged = False
            together = st.lifted + new_lifts
            if len(together) >= 4 and len(together) % 2 == 0:
                # several pairs off between two still moments: a tile freed by
                # an earlier pair of the one valid split was no blocked touch
                plans = _claim_plans(self, together)
                full = {frozenset(frozenset(p) for p in plan) for plan in plans if 2 * len(plan) == len(together)}
                if len(full) == 1:
                    st.penalised.update(together)
            unread = frozenset(np.flatnonzero(~np.asarray(obs.known, bool)).tolist())
            changed_alone = self._changed_alone(obs, unread)
            for i in _removal_order(self.board, new_lifts):
                st.lifted.append(i)
                st.turn_lifted.append(i)
                st.lift_frame[i] = frame
                st.lift_unseen[i] = unread
                st.lift_unseen_changed[i] = changed_alone
                events.extend(self._lift(frame, i))
        if len(st.lifted) >= 2 and not still_open:
            events.extend(self._try_claims(frame, mid_move))
        if st.held is not None and st.held[0] == frame:
            st.held_mid_move = mid_move
        st.lifted_mid_move = mid_move and bool(st.lifted)
        events.extend(misplaced)
        self._learn_faces(frame, obs, events, quiet=False)
        self._learn_base(obs)
        self._learn_refs(obs)
        self._keep_behind(obs)
        return events

    def _unveiled(self, obs: Observation) -> np.ndarray:
        """(N,) bool: slots behind taller tiles in the last observation and
        no longer in ``obs`` (a tile in front has left): their look changed
        because more of the face shows, so it says nothing of a lift.  Where
        ``obs`` carries no ``behind`` mask, none is behind."""
        last = self.state.behind_last
        if last is None:
            return np.zeros(len(self.board.layout.slots), bool)
        now = np.zeros(len(last), bool) if obs.behind is None else np.asarray(obs.behind, bool)
        return last & ~now

    def _keep_behind(self, obs: Observation) -> None:
        n = len(self.board.layout.slots)
        st = self.state
        self._learn_stand(obs)
        st.behind_last = np.zeros(n, bool) if obs.behind is None else np.asarray(obs.behind, bool).copy()
        st.own_last = np.full(n, np.nan)
        st.pn_last = np.full(n, np.nan) if obs.p_none is None else np.array(obs.p_none, np.float64)
        st.sig_last = None if obs.patches is None else np.array(obs.patches, np.float32)
        if obs.face_probs is not None:
            fp = np.asarray(obs.face_probs, np.float64)
            for i, f in enumerate(st.faces):
                if f is not None:
                    st.own_last[i] = fp[i, self._col[f]]

    def _learn_stand(self, obs: Observation) -> None:
        """Keep the presence log-odds ``obs.stand`` read at slots whose tile
        stands on the board (not lifted), the last :data:`STAND_KEPT` of
        each (:meth:`_stand_before`)."""
        if obs.stand is None:
            return
        st = self.state
        n = len(self.board.layout.slots)
        if st.stand_seen is None or st.stand_seen.shape[0] != n:
            st.stand_seen = np.full((n, STAND_KEPT), np.nan)
        v = np.asarray(obs.stand, np.float64)
        up = np.isfinite(v) & np.asarray(self.board.present, bool)
        up[list(st.lifted)] = False
        # (not a fall :meth:`_behind_look` would take for the tile gone: one
        # judged otherwise is kept out, lest a tile gone unseen pull its
        # baseline down)
        before = self._stand_before()
        up &= ~((v <= -self.settings.stand_sure) & (before - v >= self.settings.stand_fall))
        for i in np.flatnonzero(up):
            st.stand_seen[i, :-1] = st.stand_seen[i, 1:]
            st.stand_seen[i, -1] = v[i]

    def _stand_before(self) -> np.ndarray:
        """(N,) the median presence log-odds kept for each standing slot
        (:meth:`_learn_stand`), NaN where none was kept."""
        st = self.state
        n = len(self.board.layout.slots)
        if st.stand_seen is None or st.stand_seen.shape[0] != n:
            return np.full(n, np.nan)
        kept = np.isfinite(st.stand_seen).sum(axis=1)
        out = np.full(n, np.nan)
        for i in np.flatnonzero(kept >= 1):
            out[i] = float(np.nanmedian(st.stand_seen[i]))
        return out

    def _behind_read(self, obs: Observation, fp: np.ndarray | None, pn: np.ndarray | None,
                     lifted: np.ndarray, moved: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tiles behind taller tiles in front (``obs.behind``: not judged by
        their window) that the classifier reads all the same.

        Returns ``(left, seen)``, two ``(N,)`` bool arrays.  ``left``: a
        standing tile whose own face read with ``behind_read`` in the last
        observation, and whose slot now reads "no face here" with
        ``behind_gone`` and above every face, its own under a tenth of what
        it read.  ``seen``: its own face read with ``behind_read`` and
        likeliest (a standing tile, or a lifted one back), so that its looks
        are learnt.  Neither while a taller tile within two tiles of it (4
        half-units either way) is lifted, read gone or changed in look (a
        tile with no stored look, under another, counts as unchanged): that
        tile leaving changes the window (bench game 9004).  Bench game
        10803 (Word, 1280 x 720): E at 19,6,1, pinched beside layer-2 tiles
        that hid over half of it from the camera, read at 0.80-0.85
        standing and "no face" (own face 0.01) lifted: its blocked lift and
        return went unseen, and so did the penalty."""
        st = self.state
        s = self.settings
        n = len(lifted)
        left, seen = np.zeros(n, bool), np.zeros(n, bool)
        if obs.behind is None or fp is None or pn is None:
            return left, seen
        for i in np.flatnonzero(np.asarray(obs.behind, bool)):
            f = st.faces[i]
            if f is None or not self.board.present[i]:
                continue
            if self._taller_near_changed(i, obs, lifted, moved):
                continue
            own = fp[i, self._col[f]]
            if own >= s.behind_read and self._own_on_top(i, fp):
                seen[i] = True
            elif not lifted[i] and st.own_last is not None and st.own_last[i] >= s.behind_read:
                left[i] = pn[i] >= s.behind_gone and own < 0.1 * st.own_last[i] and fp[i].max() < pn[i]
        return left, seen

    # ------------------------------------------------ what the ledger says

    def expect_back(self, i: int) -> None:
        """The ledger holds a tile on slot ``i`` again, where this board has
        none (a referee took back or voided the move that took it: the
        console's Undo or Void while the camera runs).  The tile is taken in
        when a settled observation reads it standing there again (the
        players put it back), silently: no lift, return or move is made of
        it.  Until then the slot stays empty here.  A tile the last settled
        observation read standing there already (put back before the
        referee took the move back) is taken in at once: the next picture
        may show it taken again, which is then a move (its signature in that
        observation becomes the slot's standing appearance: the one kept
        while it was off the board, the empty slot's, would take the slot
        emptied again for the tile still there)."""
        st = self.state
        if self.board.present[i] or i in st.lifted:
            return
        if st.last_seen[i] != 1:
            st.expected.add(int(i))
            return
        self.board.restore(i)
        st.expected.discard(i)
        if st.ref is not None and st.last_patch is not None and st.last_patch.shape[1] == st.ref.shape[2]:
            st.ref[i, 0] = st.last_patch[i]
            st.n_ref[i] = 1
            st.ref_state[i] = 1
            st.n_stood[i] = 0
            st.has_ref[i] = True

    def _keep_last_patch(self, obs: Observation, readings: np.ndarray) -> None:
        """Keep each read slot's signature (``obs.patches``, (N, D)) beside
        ``last_seen`` (:meth:`expect_back`)."""
        if obs.patches is None:
            return
        st = self.state
        p = np.asarray(obs.patches, np.float32)
        if st.last_patch is None or st.last_patch.shape != p.shape:
            st.last_patch = p.copy()
        else:
            st.last_patch[readings >= 0] = p[readings >= 0]

    def keep_hidden_looks(self, obs: Observation, hidden: np.ndarray) -> None:
        """Keep, as its standing look, the signature (``obs.patches``) of each
        standing, uncovered tile with no look stored yet whose slot reads
        hidden (``hidden``, (N,) bool) in a picture the caller judged with
        no hand over the board: a face the classifier never reads (a small
        picture's edge faces, read "hidden" now and then while nothing is
        over them) is then seen leaving when its slot changes and reads
        empty, where "a tile never seen standing is never seen leaving"
        (:meth:`_changes`) had lost it (bench game 10402, 640 x 480: a
        pair's tile whose face never read, lifted and put back, went
        unseen, and its partner went to the referee as off the table).
        Not for a tile over another: there a wholly changed look is a lift
        whatever the classifier reads (:meth:`_correct`), and a hidden
        slot's look says too little for that."""
        st = self.state
        if obs.patches is None or st.ref is None or not st.initialised:
            return
        p = np.asarray(obs.patches, np.float32)
        if p.shape[1] != st.ref.shape[2]:
            return
        lifted = np.zeros(len(p), bool)
        if st.lifted:
            lifted[st.lifted] = True
        behind = np.zeros(len(p), bool) if obs.behind is None else np.asarray(obs.behind, bool)
        for i in np.flatnonzero(np.asarray(hidden, bool) & self._standing_top() & ~lifted & ~st.has_ref & ~behind):
            d = self._below[i]
            if d >= 0 and self.board.present[d]:
                continue        # over a tile: a changed look alone would take it off (the stack rule)
            st.ref[i, 0] = p[i]
            st.n_ref[i] = 1
            st.ref_state[i] = 1
            st.has_ref[i] = True

    def take_off(self, slots: Sequence[int]) -> None:
        """The ledger took these standing tiles off its board (a move
        recorded by hand: the console's Record, a settle): they leave this
        board too, so that their leaving the table is no new move.  Tiles
        off the board already, or held in a move under way, are left as
        they are; tiles expected back (:meth:`expect_back`) are expected no
        more."""
        st = self.state
        st.expected.difference_update(int(i) for i in slots)
        idx = [int(i) for i in slots if self.board.present[i] and i not in st.lifted]
        for i in _removal_order(self.board, idx):
            self.board.remove(i)
            st.expected.discard(i)

    def told_face(self, i: int, face: str) -> None:
        """The referee's word on slot ``i``'s face (a correction on the
        ledger): it replaces the camera's votes there, for good; later
        readings no longer change it."""
        st = self.state
        k = self._col.get(face)
        if k is None:
            return
        st.votes[i] = 0.0
        st.votes[i, k] = TOLD_VOTES
        st.peak[i] = 0.0
        st.peak[i, k] = 1.0
        st.faces[i] = face
        st.face_conf[i] = 1.0

    def _take_back_expected(self, obs: Observation) -> None:
        """Take in the tiles the ledger expects back (:meth:`expect_back`)
        that this observation reads standing, lower layers first."""
        st = self.state
        if not st.expected:
            return
        slots = self.board.layout.slots
        back = [j for j in st.expected if obs.known[j] and obs.present[j]]
        p = None if obs.patches is None else np.asarray(obs.patches, np.float32)
        for j in sorted(back, key=lambda j: slots[j].z):
            if not self.board.present[j]:
                self.board.restore(j)
            st.expected.discard(j)
            st.last_seen[j] = 1
            if p is not None and st.ref is not None and p.shape[1] == st.ref.shape[2]:
                # its look now is its standing look (the looks kept while it
                # was off showed the emptied slot)
                st.ref[j, 0] = p[j]
                st.n_ref[j] = 1
                st.ref_state[j] = 1
                st.n_stood[j] = 0
                st.has_ref[j] = True

    def _misplaced(self, frame: int, obs: Observation, new_lifts: Sequence[int]) -> list[TrackEvent]:
        """Tiles put down on the wrong slot: a lifted tile (not back) whose
        face now reads, with ``misplaced_confidence``, on an emptied slot of
        the bottom layer that read empty before (tiles are only ever removed
        from the layout, Law 1: a tile there is out of place).  One
        ``needs-referee`` per tile and slot, at once, rather than only when
        the lifted tile is judged gone for good."""
        st = self.state
        slots = self.board.layout.slots
        off = [i for i in list(st.lifted) + list(new_lifts) if st.faces[i] is not None]
        out = []
        for j in range(len(slots)):
            if slots[j].z != 0 or self.board.present[j] or j in new_lifts or not obs.known[j] \
                    or not obs.present[j] or st.last_seen[j] != 0 \
                    or obs.confidence[j] < self.settings.misplaced_confidence:
                continue
            for i in off:
                if obs.faces[j] == st.faces[i] and (i, j) not in st.misplaced:
                    st.misplaced.add((i, j))
                    out.append(TrackEvent(
                        "needs-referee", frame, (slots[i], slots[j]), (st.faces[i],),
                        reason=f"the tile lifted from {slots[i]} seems to have been put down on {slots[j]}, "
                               "a slot already emptied: put it back where it was"))
                    break
        return out

    def finish(self, frame: int) -> list[TrackEvent]:
        """End of the recording: tiles still off the board were taken for good."""
        return self.claim_held() + self._settle_unreturned(frame)

    def rebase(self, obs: Observation, sure_absent: float = 0.8, sure_face: float = 0.9,
               pair_absent: float = 0.55, light: bool = False) -> list[int]:
        """The camera moved: forget every slot's stored appearances (a face
        seen from elsewhere looks different) and learn them again from
        ``obs``.

        Of the slots ``obs`` shows changed (:meth:`changes`), a tile whose face
        was read surely before (at least ``sure_face``) and that now reads
        absent with at least ``sure_absent`` confidence has left: it keeps its
        old appearances, so :meth:`observe` sees it go; a lifted tile read
        present with at least ``sure_absent`` confidence is back, and one
        whose slot still looks as when it left keeps that look (it is still
        off until its slot changes from it).  The others
        (a tile never seen clearly, an unsure reading) are returned: after a move of the camera those readings are not
        trusted, no appearance is stored for them until they read as the
        board says, and the caller asks the referee about them and judges
        ``obs`` without them.  With one tile off the board alone, the one
        suspect read gone with ``pair_absent`` completes its pair, or, none
        read so, the one suspect seen gone whose face, read with
        ``sure_face`` before, makes a valid claim with it.

        ``light``: the light changed, the camera did not move.  Slots
        ``obs`` does not read (``known`` false: under a hand resting by the
        board, left alone by the caller) are then neither suspects nor
        forgotten: they keep the appearances stored before, which a change
        of light leaves comparable (a slot's signature is centred and of
        unit length, ``vision.referee.slot_signatures``), and are judged
        when read again.  A break-test (session 49): the demo recording's
        exposure flickering by 5 % made a picture with a hand reaching for a
        claim's first tile pass as a change of light; that tile, unread
        there, kept no look, its lift was never seen, and its pair's other
        tile was paired with the next claim's.
        """
        unread = ~np.asarray(obs.known, bool) if light else np.zeros(len(self.board.layout.slots), bool)
        lifts, returns = self.changes(obs)
        if unread.any():
            lifts = frozenset(i for i in lifts if not unread[i])
            returns = frozenset(i for i in returns if not unread[i])
        st = self.state
        conf = np.asarray(obs.confidence, np.float64)
        left = [i for i in sorted(lifts) if st.face_conf[i] >= sure_face and conf[i] >= sure_absent]
        back = {i for i in returns if conf[i] >= sure_absent}    # a lifted tile surely standing again
        suspects = sorted((lifts | returns) - set(left) - back)
        # a tile lifted alone when the camera moved is half of a pair: the one
        # suspect read gone (a face seen unsurely before, or read gone with
        # less than sure_absent) completes it, and the pair is judged as any
        # (a break-test's bump during a claim split the pair, and the lone
        # tile was then paired with the next claim's)
        gone_now = [i for i in suspects if i in lifts and conf[i] >= pair_absent]
        lone = sorted(set(st.lifted) - back) + left
        if len(lone) == 1 and not gone_now:
            # or the one suspect seen gone whose face, read surely before,
            # makes a valid claim with the lone tile's (bench game 10506: the
            # camera moved during a claim of two 5 of Bamboo; the second
            # tile's slot, wholly changed, read empty at only 0.5, and the
            # lone tile went to the referee as taken off the table)
            gone_now = [i for i in suspects if i in lifts and st.face_conf[i] >= sure_face
                        and self._verdict(self._turn_board(), lone[0], i).valid]
        if len(lone) == 1 and len(gone_now) == 1:
            left.append(gone_now[0])
            suspects.remove(gone_now[0])
        if obs.patches is not None and st.ref is not None:
            old = st.ref.copy(), st.n_ref.copy(), st.ref_state.copy()
            old_stood = (st.stood.copy(), st.n_stood.copy()) if st.stood is not None else None
            keep = np.ones(len(self.board.layout.slots), bool)
            keep[suspects + left] = False
            read = np.asarray(obs.known if obs.read is None else obs.read, bool)
            st.ref = None
            st.stand_seen = None        # (presence read from another view or light)
            self._learn_refs(replace(obs, known=np.asarray(obs.known, bool) & keep, read=read & keep), first=True)
            # a lifted tile whose slot still looks as when it left (not in
            # ``returns``) keeps that look too: it is still off, and only a
            # change from it says it came back (bench game 13400: the camera
            # was nudged while a claim's pair was held; the upper tile's
            # slot, the face below read there at 0.55, had no look left to
            # compare with and was taken back, and the claim went to the
            # referee as a lone tile)
            still_off = [i for i in st.lifted if i not in back and i not in suspects and i not in left]
            unseen = [i for i in np.flatnonzero(unread) if old[1][i] > 0 and i not in left + still_off]
            for i in left + still_off + unseen:
                st.ref[i], st.n_ref[i], st.ref_state[i] = old[0][i], old[1][i], old[2][i]
                if old_stood is not None and old_stood[0].shape == st.stood.shape:
                    st.stood[i], st.n_stood[i] = old_stood[0][i], old_stood[1][i]
            st.has_ref[:] = st.n_ref > 0
        return suspects

    #: the looks :meth:`looks` copies and :meth:`restore_looks` puts back, each (N, ...)
    _LOOKS = ("ref", "n_ref", "has_ref", "ref_state", "stood", "n_stood", "last_patch", "sig_last",
              "behind_last", "own_last", "pn_last", "stand_seen")

    def _board_key(self) -> tuple:
        """(N,) int8 as a tuple: 1 a tile stands, 2 it is lifted, 0 none."""
        key = np.asarray(self.board.present, np.int8).copy()
        key[list(self.state.lifted)] = 2
        return tuple(int(v) for v in key)

    def looks(self) -> dict:
        """A copy of every slot's stored looks and of the board as it stands
        (tiles present, lifted), for :meth:`restore_looks`: the caller keeps
        it when the camera moves, before :meth:`rebase`, and marks the board
        as the moved picture left it with :meth:`note_board`."""
        st = self.state
        out = {k: (None if getattr(st, k) is None else np.array(getattr(st, k), copy=True)) for k in self._LOOKS}
        out["board"] = out["after"] = self._board_key()
        return out

    def note_board(self, kept: dict) -> None:
        """Mark in ``kept`` (:meth:`looks`) the board as it stands now: the
        picture judged after the move may have seen tiles come back or
        leave."""
        kept["after"] = self._board_key()

    def restore_looks(self, kept: dict) -> bool:
        """Put back the looks ``kept`` (:meth:`looks`) when the board stands
        as :meth:`note_board` last marked it (nothing judged to change
        since); slots whose tile came or went in the picture judged after
        the move keep the looks learnt since.  True when they were put back,
        False (nothing changed) otherwise.

        The camera came back to where it was before a move: the looks from
        then compare with its pictures again, where those learnt from the
        moved camera (:meth:`rebase`) would make every change since a
        suspect (a break-test, session 50: the demo camera shaken by 6 px for
        0.3 s; the picture of the next claim, judged as after a camera move,
        read its emptied slots at 0.79 and 0.80, under ``sure_absent``, and
        the claim went to the referee)."""
        st = self.state
        now = self._board_key()
        if kept.get("after") != now:
            return False
        same = np.array(kept["board"]) == np.array(now)
        for k in self._LOOKS:
            old, cur = kept[k], getattr(st, k)
            if old is None:
                continue
            if cur is None or np.shape(cur) != np.shape(old):
                if same.all():
                    setattr(st, k, np.array(old, copy=True))
                continue
            cur[same] = old[same]
        return True

    def relaid(self, obs: Observation) -> np.ndarray:
        """(N,) bool: standing, uncovered tiles that look changed
        (:meth:`changed_standing`) and read surely (``face_confidence``)
        another face than their own: tiles re-laid in another order, as a
        reshuffle does, where a hand over the board reads no face or an
        unsure one (nothing is changed)."""
        changed = self.changed_standing(obs)
        st = self.state
        sure = self.settings.face_confidence
        known, present = np.asarray(obs.known, bool), np.asarray(obs.present, bool)
        conf = np.asarray(obs.confidence, np.float64)
        for i in np.flatnonzero(changed):
            f = obs.faces[i]
            if not (known[i] and present[i] and f is not None and conf[i] >= sure and f != st.faces[i]):
                changed[i] = False
        return changed

    def relay(self, frame: int, obs: Observation, changed: np.ndarray) -> list[int]:
        """The tiles standing were gathered and re-laid on the same slots in
        another order (Mindful Law 4's Zen Reshuffle: "gathered, gently
        shuffled, and re-laid onto the current layout footprint without
        changing layer heights"); ``obs`` shows the board after.  Every
        standing tile was taken up, so each forgets its face, votes and looks:
        an uncovered one learns them from ``obs``, a covered one (re-laid too,
        unseen) waits to be uncovered.  Tiles that look as they did are no
        exception: two faces alike (3 and 4 of Characters) correlate above
        ``hand_ncc``, and a face kept from before would take a copy another
        slot now shows (``changed``, the tiles that look changed, is not
        used).  Later moves are judged on the new faces.  Returns the slot
        indices whose faces changed (another face, or none known).  No tile
        may be off the board (:attr:`busy`)."""
        st = self.state
        board = self.board
        top = self._standing_top()
        reset = np.asarray(board.present, bool).copy()
        old = list(st.faces)
        for i in np.flatnonzero(reset):
            st.faces[i] = None
            st.face_conf[i] = 0.0
            st.votes[i] = 0.0
            st.peak[i] = 0.0
            st.reads[i] = 0
            st.base_pn[i] = 0.0
            st.base_fp[i] = 0.0
            st.base_n[i] = 0
            st.doubt[i] = 0
            if st.n_ref is not None:
                st.n_ref[i] = 0
                st.n_stood[i] = 0
        st.has_ref = None if st.n_ref is None else st.n_ref > 0
        mask = reset & top
        learn = replace(obs, known=np.asarray(obs.known, bool) & mask,
                        read=None if obs.read is None else np.asarray(obs.read, bool) & mask)
        self._learn_faces(frame, learn, [], quiet=True)
        self._learn_base(learn)
        self._learn_refs(learn, first=True)
        return [int(i) for i in np.flatnonzero(reset) if st.faces[i] != old[i] or st.faces[i] is None]

    @property
    def held_since(self) -> int | None:
        """Frame in which a valid pair, not yet claimed, was first seen off
        the board (None when there is none)."""
        return None if self.state.held is None else self.state.held[0]

    def claim_held(self) -> list[TrackEvent]:
        """Claim the valid pair or word held off the board (nothing when
        there is none): the caller judges it has stayed away for good."""
        st = self.state
        if st.held is None:
            return []
        frame, v = st.held
        st.held = None
        idx = self.board.layout.slot_index
        taken = v.idx if isinstance(v, WordMove) else tuple(idx(sl) for sl in v.slots)
        blocks = tuple(self._turn_board().reason(i).to_json() for i in taken)
        self._remove(*taken)
        for i in taken:
            st.lifted.remove(i)
        st.turn_lifted = [i for i in st.turn_lifted if i not in taken]
        st.turn_board = self.board.copy() if st.lifted else None
        if isinstance(v, WordMove):
            reason = f"{v.word}: {len(v.idx)} free tiles spell it"
            if v.inferred is not None:
                face = v.faces[v.idx.index(v.inferred)]
                st.faces[v.inferred] = face
                st.face_conf[v.inferred] = 0.0
                where = ",".join(map(str, self.board.layout.slots[v.inferred]))
                reason += (f" (the face at {where} was not read; taken as {face}: the tiles left the board "
                           "together and were kept, and kept tiles must spell a word)")
            return [TrackEvent("word", frame, v.slots, v.faces, valid=True, word=v.word, blocks=blocks,
                               reason=reason)]
        return [self._claim_event(frame, v)]

    def word_open(self) -> bool:
        """Whether the move held off the board is a word seen with a hand
        still beside the board that may yet grow into a longer word English
        uses (:meth:`_may_spell` with the tiles standing free): the caller
        keeps it held while the hand stays there (Word 2.1 Rule 2, "Select
        three or more free letter tiles sequentially"; on a rendered game
        spelled letter by letter, L, I, K were claimed as ILK while the hand
        rested beside the board before fetching the E of LIKE)."""
        st = self.state
        if self.words is None or st.held is None or not st.held_mid_move \
                or not isinstance(st.held[1], WordMove):
            return False
        return self._may_spell(list(st.held[1].idx))

    def word_grows(self, obs: Observation) -> bool:
        """Whether the tiles ``obs`` shows leaving join those off the board
        into one word (:meth:`_word_grows`; nothing is changed): a held move
        is then not claimed yet."""
        if not self.state.lifted or self.words is None or not self.state.initialised:
            return False
        obs = self._correct(obs)
        lifts, _ = self._changes(obs, obs.readings())
        return self._word_grows(lifts)

    def _word_grows(self, new_lifts: Sequence[int]) -> bool:
        """Tiles off the board and ``new_lifts`` are one word being spelled:
        together they spell a word, and the tiles off make no move yet (T +
        R, then E + E: TREE), or they are a word held in a picture that
        still showed a hand beside the board (the move was not over: REST,
        hand still in view, then T, N, G, H: STRENGTH) and ``new_lifts``
        are not a matching pair of their own.  A pair, or a
        word held once the hands had gone, is a whole move and never grows:
        E + E, then R, are a pair and the start of another move, not ERE;
        E + E, then T + T, two pairs, not TEET; on a recorded game, HIM, then
        N + U with a wildcard, a word and an attempt."""
        st = self.state
        if not st.lifted or self.words is None or not new_lifts or self._lone_apart(new_lifts):
            return False
        new = [i for i in new_lifts if i not in st.lifted]
        if st.held is None and self._blocked_word(list(st.lifted)) is not None:
            # a word with a blocked letter is a move, if an invalid one: it
            # grows as a held word does (TREE with a pinched T, then K, is
            # not TEREK)
            if not st.lifted_mid_move or (len(new) == 2 and self._verdict(self._turn_board(), *new).valid):
                return False
        if st.held is not None:
            if not (st.held_mid_move and isinstance(st.held[1], WordMove)):
                return False
            if len(new) == 2 and self._verdict(self._turn_board(), *new).valid:
                return False            # a pair of its own: the next move
        # letters that make no move yet grow into a word free or not (a
        # blocked letter makes it invalid: a penalty and one invalid word,
        # not two unrelated moves); a valid word held grows by free tiles
        # only (on a recorded game THIS, held, and a blocked V lifted next
        # and put back made VISIT with the wildcard)
        return self._word(list(st.lifted) + new, need_free=st.held is not None) is not None

    def _lone_apart(self, new_lifts: Sequence[int]) -> bool:
        """Word Mahjong: one tile off the board alone since an earlier still
        picture that showed no hand (its move over), with a partner the
        camera may not have seen leaving (:meth:`_unseen_partner`: a tile
        that could match it went unread in that picture), and ``new_lifts``
        a valid pair of their own on the board without it.  The lone tile is
        then a move apart (a claim whose second tile stood behind a taller
        stack, or a tile kept), not the first letter of a word the pair
        spells on with it: bench game 12203 (Monogram Pyramid), M claimed
        with an M behind a stack, then O + O claimed, was recorded as the
        word MOO.  Letters spelled one at a time with the hand still in view
        (Q + U, then I, then Z: QUIZ), and T + R, then E + E (TREE), still
        grow (:meth:`_word_grows`)."""
        st = self.state
        if self.words is None or len(st.lifted) != 1 or st.lifted_mid_move or st.held is not None:
            return False
        new = [i for i in new_lifts if i not in st.lifted]
        if len(new) != 2:
            return False
        lone = st.lifted[0]
        if not self._unseen_partner(self._turn_board(), lone):
            return False
        nb = self.board.copy()
        if nb.present[lone]:
            nb.remove(lone)
        return self._verdict(nb, *new).valid

    def _still_spelling(self, new_lifts: Sequence[int]) -> bool:
        """Tiles off the board that make no move, last seen with a hand still
        in view beside the board, and ``new_lifts`` are letters of one word
        still being spelled (Word 2.1 Rule 2: "Select three or more free
        letter tiles sequentially"): together they may still become a word
        (:meth:`_may_spell`), and ``new_lifts`` make no pair or word of their
        own.  Q + U, then I (hand in view), then Z: QUIZ, where Q + U were
        judged on their own when I left.  The tiles off are then not settled
        yet."""
        st = self.state
        if self.words is None or st.held is not None or len(st.lifted) < 2 or not st.lifted_mid_move \
                or self._blocked_word(list(st.lifted)) is not None:
            return False            # (letters that spell a word with a blocked one are a move, if an invalid one)
        new = [i for i in new_lifts if i not in st.lifted]
        if not new or (len(new) == 2 and self._verdict(self._turn_board(), *new).valid) \
                or self._word(new) is not None:
            return False            # a move of its own: the letters before were a move apart
        return self._may_spell(list(st.lifted) + new)

    def _may_spell(self, idx: list[int]) -> bool:
        """Whether the tiles ``idx`` (faces known) could become a word with
        more of the tiles standing free now (:meth:`WordIndex.extends`; a
        blocked one among them too: the word is then played against the
        rule, :meth:`_blocked_word`)."""
        st = self.state
        if self.words is None or len(idx) >= self.settings.word_max_tiles or any(st.faces[i] is None for i in idx):
            return False
        b = self.board
        free = [st.faces[j] for j in range(len(b.layout.slots))
                if b.present[j] and j not in st.lifted and j not in idx and b.is_free(j) and st.faces[j] is not None]
        return self.words.extends([st.faces[i] for i in idx], free, self.settings.word_max_tiles,
                                  self.settings.spelling_min_frequency if self.words.frequency else 0)

    def _word(self, idx: list[int], need_free: bool = True,
              faces: Sequence[str | None] | None = None) -> WordMove | None:
        """The word the tiles ``idx`` spell together, their faces known and
        all of them free on the board the turn began with (with
        ``need_free`` False, free or not); None otherwise.  ``faces``: each
        slot's face to use (the tracker's by default)."""
        st = self.state
        faces = st.faces if faces is None else faces
        if self.words is None or not MIN_WORD <= len(idx) <= self.settings.word_max_tiles \
                or any(faces[i] is None for i in idx):
            return None
        tb = self._turn_board()
        if not all(tb.present[i] and (tb.is_free(i) or not need_free) for i in idx):
            return None
        found = self.words.spelled_by([faces[i] for i in idx], limit=64)
        if not found:
            return None
        # letters seen leaving in separate pictures give their order: the
        # commonest word that order allows (C, A, T, then S: CATS, not
        # CAST); letters that left together, any order (then the commonest)
        frames = sorted({st.lift_frame.get(i, -1) for i in idx})
        groups = [sorted(i for i in idx if st.lift_frame.get(i, -1) == f) for f in frames]
        if -1 in frames:
            groups = [sorted(idx)]
        for word in found:
            order = _spell_in_groups(word, groups, faces)
            if order is not None:
                break
        else:
            word, order = found[0], assign(found[0], [(i, faces[i]) for i in sorted(idx)])
        slots = self.board.layout.slots
        return WordMove(tuple(order), tuple(slots[i] for i in order), tuple(faces[i] for i in order), word)

    def _word_inferred(self, idx: list[int]) -> WordMove | None:
        """The word free tiles ``idx`` spell when the one of them whose face
        was never read surely is given the face that makes the commonest
        word (``pyspellchecker``'s counts), among faces with a copy left
        that its readings, if any, make plausible (``plausible_vote`` of its
        best vote): a word's tiles kept off the board must spell one (Word
        2.1 Rule 2), as a kept pair must match (:meth:`_infer_pair`).  None
        unless exactly one face is unknown and some word fits."""
        st = self.state
        unknown = [i for i in idx if st.faces[i] is None]
        if self.words is None or len(unknown) != 1 or not MIN_WORD <= len(idx) <= self.settings.word_max_tiles:
            return None
        u = unknown[0]
        votes = st.votes[u]
        freq = self.words.frequency or {}
        best: tuple[int, WordMove] | None = None
        for f in self.face_ids:
            if self.copies_left(f, u) <= 0 or (votes.max() > 0 and
                                               votes[self._col[f]] < self.settings.plausible_vote * votes.max()):
                continue
            faces = list(st.faces)
            faces[u] = f
            w = self._word(idx, faces=faces)
            if w is not None and (best is None or freq.get(w.word.lower(), 0) > best[0]):
                best = (freq.get(w.word.lower(), 0), w)
        return None if best is None else replace(best[1], inferred=u)

    def _blocked_word(self, idx: list[int]) -> tuple[WordMove, str] | None:
        """Tiles ``idx`` that spell a word but not all of them free when the
        turn began: the word and the engine's sentence on its first blocked
        tile (Word 2.1 Rule 2, "All Selected Tiles Are Free"; each blocked
        tile's lift is a penalty, :meth:`_lift`).  None when they spell no
        word or are all free."""
        if len(idx) < MIN_WORD or self._word(idx) is not None:
            return None
        w = self._word(idx, need_free=False)
        if w is None:
            return None
        tb = self._turn_board()
        first = next(i for i in w.idx if not tb.is_free(i))
        return w, f"{w.word}: {tb.reason(first).describe()}"

    def changes(self, obs: Observation) -> tuple[frozenset, frozenset]:
        """``(lifts, returns)``: the slot indices ``obs`` shows leaving and
        coming back (nothing is changed)."""
        if not self.state.initialised:
            return frozenset(), frozenset()
        obs = self._correct(obs)
        lifts, returns = self._changes(obs, obs.readings())
        return frozenset(lifts), frozenset(returns)

    def merge(self, a: Observation, b: Observation) -> Observation:
        """Two readings of one still picture, ``a`` first
        (:func:`merge_observations`: a slot is known only where both knew it
        and agreed), but a slot ``a`` could not see (a hand over it, a
        taller tile covering it) that ``b`` reads standing, where this
        board has a tile standing and ``b`` reads no face other than the
        one known for it, is known as ``b`` reads it: that reading changes
        nothing, so it needs no second sighting, as in any picture with no
        change.  Without this, a tile uncovered by a claim whose first
        sighting had a hand over it was first seen in the next judged
        picture, and a tile lifted in between was never seen standing, so
        never seen leaving (bench game 16902, Mindful on Scholar's
        Bookrest at 10 frames a second: a blocked tile uncovered by the
        last claim, lifted for 1 s and put back, read empty at 0.90 and
        was not charged)."""
        out = merge_observations(a, b)
        st = self.state
        if not st.initialised:
            return out
        n = len(self.board.layout.slots)
        lifted = np.zeros(n, bool)
        if st.lifted:
            lifted[st.lifted] = True
        only_b = ~np.asarray(a.known, bool) & np.asarray(b.known, bool) & np.asarray(b.present, bool) \
            & np.asarray(self.board.present, bool) & ~lifted & ~np.asarray(out.known, bool)
        for i in np.flatnonzero(only_b):
            f = st.faces[i]
            if f is not None and b.faces[i] is not None and b.faces[i] != f:
                only_b[i] = False           # another face: the tile below seen, a change
        if not only_b.any():
            return out
        return replace(out, known=np.asarray(out.known, bool) | only_b)

    def would_change(self, obs: Observation) -> bool:
        """Whether ``obs`` shows a tile leaving or coming back (nothing is changed)."""
        if not self.state.initialised:
            return False
        obs = self._correct(obs)
        lifts, returns = self._changes(obs, obs.readings())
        return bool(lifts or returns)

    def _changes(self, obs: Observation, readings: np.ndarray) -> tuple[list[int], list[int]]:
        """New lifts and returns shown by ``obs``: a tile leaves when its slot
        reads empty (known) and its face signature changed (a slot that read
        empty before while its tile stood unchanged needs
        ``doubtful_absent_confidence``); a lifted tile comes back when its
        slot reads full again and its signature changed."""
        st = self.state
        sure = self.settings.doubtful_absent_confidence
        moved = self._moved(obs)
        mark = getattr(self, "_too_high", None)
        if mark is not None and mark[0] == id(obs):
            moved = moved | mark[1]        # (:meth:`_correct`: the tile below seen too high)
        if obs.patches is not None and st.has_ref is not None:
            seen_before = st.has_ref            # a tile never seen standing is never seen leaving
            moved = moved | self._emptied_in_part(obs)
        else:
            seen_before = np.ones(len(moved), bool)
        lifts = [i for i in range(len(self.board.layout.slots))
                 if self.board.present[i] and i not in st.lifted and obs.known[i] and not obs.present[i]
                 and (obs.patches is not None or st.doubt[i] == 0 or obs.confidence[i] >= sure) and moved[i]
                 and seen_before[i]]
        if lifts and obs.patches is not None and st.ref is not None:
            held = self._shifted_blocked(obs)
            lifts = [i for i in lifts if not held[i]]
        if lifts:
            lifts = self._under_standing_cover(lifts)
        returns = [i for i in st.lifted if obs.known[i] and obs.present[i] and moved[i]]
        return lifts, returns

    def _emptied_in_part(self, obs: Observation) -> np.ndarray:
        """(N,) bool: slots read standing in the last observation and empty
        now whose look changed only in part (under ``new_appearance_ncc``,
        not under ``change_ncc``) while "no face here" rose ``none_rise``
        or more since then: the tile left, as :meth:`_behind_look` judges a
        tile behind a stack.  A pale face in a small picture leaves its slot
        looking much as the empty mat cell does (bench game 18601, Candy at
        640 x 480, tiles 22 px wide: a vanilla wind read "no face" at 0.26
        while it stood, 0.63 once lifted, its look still correlating 0.89;
        its lift went unseen and its partner was paired with the next
        attempt's tile).  Not in a picture in which ``shifted_min`` or more
        standing top tiles look changed so (a camera bumped: bench game
        10702, 18 to 40 of them, read empty as well; a move changes one or
        two)."""
        st = self.state
        n = len(self.board.layout.slots)
        if obs.p_none is None or st.pn_last is None or st.ref is None or st.last_seen is None:
            return np.zeros(n, bool)
        s = self.settings
        ncc = self._ref_ncc(obs)
        part = (ncc >= s.change_ncc) & (ncc < s.new_appearance_ncc)
        if int((part & self._standing_top() & st.has_ref).sum()) >= s.shifted_min:
            return np.zeros(n, bool)
        pn = np.asarray(obs.p_none, np.float64)
        rose = pn >= st.pn_last + s.none_rise               # (False where NaN)
        read_empty = np.asarray(obs.known, bool) & ~np.asarray(obs.present, bool)
        behind = np.zeros(n, bool) if obs.behind is None else np.asarray(obs.behind, bool)
        return (st.last_seen == 1) & read_empty & rose & ~behind & st.has_ref & part

    def _under_standing_cover(self, lifts: list[int]) -> list[int]:
        """``lifts`` less the tiles a tile on a higher layer still covers
        (on the board, not lifted, and not among ``lifts``): a covered tile
        cannot leave from under its cover, so its slot reading empty is the
        cover misread (bench game 17704, Love on the Turtle at 1280 x 720: a
        standing layer-2 tile read "no tile" at its own height and its face
        one layer down, and the layer-1 tile under it was taken for lifted
        and charged).  A cover lifted in the same change lets its tile
        go too."""
        cov = self.board.geometry.covered_by
        up = np.asarray(self.board.present, bool).copy()
        if self.state.lifted:
            up[self.state.lifted] = False
        keep = set(lifts)
        while True:
            stay = {i for i in keep if any(up[j] and j not in keep for j in cov[i])}
            if not stay:
                return [i for i in lifts if i in keep]
            keep -= stay

    def _shifted_blocked(self, obs: Observation) -> np.ndarray:
        """(N,) bool: blocked tiles standing on the tracker's board, read
        empty, whose look changed only in part (their signature still
        correlating ``hand_ncc`` to ``change_ncc`` with their own) in a
        picture whose looks changed across the board: of the standing top
        tiles read standing, at least ``shifted_min`` (and
        ``shifted_share`` of them) look changed too.  Such a picture is the
        camera's (bumped, refocused, or its pose a little off along the
        board's far edge), and these tiles stand as much as their neighbours
        do: their lift, a penalty charged at once (CONTRACT.md "a penalty
        is raised when a blocked tile leaves its slot"), waits for a picture
        that shows it, and their look now is learnt as their neighbours'
        is (:meth:`_learn_refs`).  Bench game 10702 (10 fps, 640 x 480, the
        camera bumped): 19 standing tiles changed look along the board's far
        edge, a pinched tile among them read empty at 0.64, its look at 0.66
        of its own, and a penalty was charged for a tile no one touched.  A
        free tile is not held back: its lift may be half of a claim."""
        st, b = self.state, self.board
        n = len(b.layout.slots)
        out = np.zeros(n, bool)
        if obs.patches is None or st.ref is None:
            return out
        ncc = self._ref_ncc(obs)
        lo, hi = self.settings.hand_ncc, self.settings.change_ncc
        known, present = np.asarray(obs.known, bool), np.asarray(obs.present, bool)
        up = self._standing_top() & st.has_ref
        if st.lifted:
            up[st.lifted] = False
        if obs.behind is not None:
            up &= ~np.asarray(obs.behind, bool)      # (their look follows the taller tile in front)
        standing = up & known & present
        changed = int((standing & (ncc < hi)).sum())
        if changed < self.settings.shifted_min or changed < self.settings.shifted_share * standing.sum():
            return out
        free = np.array([b.is_free(i) if b.present[i] else True for i in range(n)])
        out = up & known & ~present & ~free & (ncc >= lo) & (ncc < hi)
        return out

    def looks_changed(self, obs: Observation) -> np.ndarray:
        """(N,) bool: the slot's face signature is unlike every appearance
        stored for it (True where none is stored, or without signatures)."""
        if obs.patches is None or self.state.ref is None:
            return np.ones(len(self.board.layout.slots), bool)
        return self._moved(obs)

    def _moved(self, obs: Observation) -> np.ndarray:
        """(N,) bool: the slot's face signature changed since its last agreed
        reading (True where there is none yet); without signatures, the
        slot's reading changed since it was last read."""
        st = self.state
        if obs.patches is None or st.ref is None:
            r = obs.readings()
            return (r != st.last_seen) | (st.last_seen < 0)
        return ~st.has_ref | (self._ref_ncc(obs) < self.settings.change_ncc)

    def _ref_ncc(self, obs: Observation) -> np.ndarray:
        """(N,) the best correlation of each slot's signature with the
        appearances stored for it (-1 where none)."""
        st = self.state
        ncc = np.einsum("nkd,nd->nk", st.ref, np.asarray(obs.patches, np.float32))
        k = np.arange(st.ref.shape[1])[None, :]
        ncc = np.where(k < st.n_ref[:, None], ncc, -1.0)
        return ncc.max(axis=1)

    def changed_standing(self, obs: Observation) -> np.ndarray:
        """(N,) bool: standing, uncovered tiles that look changed in ``obs``
        (their face signature correlates less than ``hand_ncc`` with every
        agreed one, and their own face no longer reads likeliest).  A legal
        move changes two; many more means a hand or something else over the
        board."""
        n = len(self.board.layout.slots)
        if obs.patches is None or self.state.ref is None or not self.state.initialised:
            return np.zeros(n, bool)
        st = self.state
        standing = self._standing_top(lifted_cover=True) & st.has_ref & ~self._unveiled(obs)
        changed = standing & (self._ref_ncc(obs) < self.settings.hand_ncc)
        if obs.face_probs is not None:     # a tile still read as itself is only shaded
            fp = np.asarray(obs.face_probs)
            for i in np.flatnonzero(changed):
                if self._own_on_top(i, fp) and (obs.read is None or obs.read[i]):
                    changed[i] = False
        return changed

    def _standing_top(self, lifted_cover: bool = False) -> np.ndarray:
        """(N,) bool: tiles on the board, not lifted, with no tile standing on
        them.  A lifted tile is off the board and covers nothing, unless
        ``lifted_cover`` (it may come back in the very picture being judged:
        its slot is then judged, not the one below)."""
        st = self.state
        b = self.board
        up = np.asarray(b.present, bool).copy()
        if st.lifted:
            up[st.lifted] = False
        cover = np.asarray(b.present, bool) if lifted_cover else up
        cov = b.geometry.covered_by
        return np.array([up[i] and not any(cover[j] for j in cov[i]) for i in range(len(up))], bool)

    def _buried(self) -> np.ndarray:
        """(N,) bool: tiles whose whole top face lies under tiles standing on
        higher layers (on the board and not lifted): each quarter of the face
        (a half-tile square; slots step in half tiles) under one of them.  No
        view shows such a face: what its slot's window reads is a face above
        it, seen with almost no parallax (bench game 13000: a tile read as the
        season tile on top of it, then taken for lifted when its own face
        showed)."""
        b = self.board
        up = np.asarray(b.present, bool).copy()
        if self.state.lifted:
            up[self.state.lifted] = False
        quarters = getattr(self, "_quarters", None)
        if quarters is None:
            quarters = self._quarters = [frozenset((s.x + a, s.y + c) for a in (0, 1) for c in (0, 1))
                                         for s in b.layout.slots]
        out = np.zeros(len(up), bool)
        for i, cov in enumerate(b.geometry.covered_by):
            if up[i] and cov and any(up[j] for j in cov):
                out[i] = quarters[i] <= frozenset().union(*(quarters[j] for j in cov if up[j]))
        return out

    def _learn_refs(self, obs: Observation, first: bool = False) -> None:
        """Keep each slot's face signature where the reading agrees with the
        board: standing tiles read present, lifted tiles read absent (in the
        first frame, every uncovered tile that is not hidden).

        A standing top tile with no signature yet (uncovered since the deal)
        whose slot reads empty but not surely (under
        ``doubtful_absent_confidence``) is kept too, as at the deal: the
        board says it stands, as it was never seen leaving, and the
        classifier misreads a face partly hidden by a taller tile in front as
        none (a 60 frames a second bench game at 1080p: a rose read "no face"
        at 0.63, where its emptied slot read 0.88; with no signature, its
        lift was never seen and its claim went to the referee)."""
        if obs.patches is None:
            return
        st = self.state
        s_new = self.settings.new_appearance_ncc
        p = np.asarray(obs.patches, np.float32)
        n, dim = p.shape
        kk = self.settings.appearances
        if st.ref is None or st.ref.shape[2] != dim:
            st.ref = np.zeros((n, kk, dim), np.float32)
            st.n_ref = np.zeros(n, np.int64)
            st.has_ref = np.zeros(n, bool)
            st.ref_state = np.ones(n, np.int8)
            st.stood = np.zeros((n, kk, dim), np.float32)
            st.n_stood = np.zeros(n, np.int64)
        known = np.asarray(obs.known, bool)
        present = np.asarray(obs.present, bool)
        top = self._standing_top()
        lifted = np.zeros(len(p), bool)
        if st.lifted:
            lifted[st.lifted] = True
        if first:      # the deal: every uncovered tile stands there, whatever the classifier reads
            read = np.asarray(obs.known if obs.read is None else obs.read, bool)
            agree = top & read
        else:
            agree = known & ((top & present) | (lifted & ~present))
            unsure_empty = np.asarray(obs.confidence, np.float64) < self.settings.doubtful_absent_confidence
            agree |= known & top & ~present & ~lifted & ~st.has_ref & unsure_empty
            # blocked tiles held back in a picture whose looks all shifted
            # (:meth:`_shifted_blocked`): their look now is learnt with their
            # neighbours' (else, the neighbours' new looks learnt, theirs
            # alone read changed in the next picture: bench game 10702)
            agree |= self._shifted_blocked(obs)
        if not first:
            # a tile unveiled (the one in front left), read as the board says:
            # its looks are learnt afresh (those stored showed the tile in
            # front); read otherwise, they stay until it is
            st.n_ref[self._unveiled(obs) & agree & ~lifted] = 0
            # a tile still behind taller ones: its look (their wall and the
            # strip of its face in sight, :meth:`_behind_look`) is learnt
            # while they stand unchanged, and afresh once one of them changed
            if obs.behind is not None:
                moved = self._moved(obs)
                for i in np.flatnonzero(np.asarray(obs.behind, bool) & ~agree):
                    if not self.board.present[i] or self.board.n_cover[i]:
                        continue
                    if not lifted[i] and self._taller_near_changed(i, obs, lifted, moved):
                        st.n_ref[i] = 0
                    agree[i] = True
        state = np.where(lifted, 0, 1).astype(np.int8)
        best = self._ref_ncc(Observation(present, known, obs.faces, obs.confidence, patches=p))
        stood = self._stood_ncc(p)
        for i in np.flatnonzero(agree):
            if st.ref_state[i] != state[i]:         # the tile left or came back: a new state
                if state[i] == 0:                   # keep its standing looks: it may come back unread
                    st.stood[i], st.n_stood[i] = st.ref[i], st.n_ref[i]
                else:
                    st.n_stood[i] = 0
                st.n_ref[i] = 0
                st.ref_state[i] = state[i]
            elif st.n_ref[i] and best[i] >= s_new:
                continue                            # an appearance already stored
            elif state[i] == 0 and stood[i] >= self.settings.change_ncc and stood[i] > best[i]:
                continue                            # the lifted tile's own look: never an emptied slot's
            if st.n_ref[i] < kk:
                st.ref[i, st.n_ref[i]] = p[i]
                st.n_ref[i] += 1
            else:                                   # forget the oldest
                st.ref[i, :-1] = st.ref[i, 1:]
                st.ref[i, -1] = p[i]
        st.has_ref[:] = st.n_ref > 0

    def _stood_ncc(self, patches: np.ndarray) -> np.ndarray:
        """(N,) the best correlation of each lifted tile's slot signature
        (``patches``, (N, D) float32) with the tile's own appearances from
        before it left (-1 where none is kept)."""
        st = self.state
        if st.stood is None or st.stood.shape[2] != patches.shape[1]:
            return np.full(len(patches), -1.0)
        ncc = np.einsum("nkd,nd->nk", st.stood, np.asarray(patches, np.float32))
        k = np.arange(st.stood.shape[1])[None, :]
        return np.where(k < st.n_stood[:, None], ncc, -1.0).max(axis=1)

    # -- internals

    def _turn_board(self) -> Board:
        return self.state.turn_board or self.board

    def _lift(self, frame: int, i: int) -> list[TrackEvent]:
        st = self.state
        reason = self._turn_board().reason(i)
        slot = self.board.layout.slots[i]
        out = [TrackEvent("lift", frame, (slot,), (st.faces[i],), blocks=(reason.to_json(),))]
        if not reason.free and i not in st.penalised:
            st.penalised.add(i)
            out.append(TrackEvent("penalty", frame, (slot,), (st.faces[i],), valid=False,
                                  reason=reason.describe(), code=BLOCKED, blocks=(reason.to_json(),)))
        return out

    def _verdict(self, board: Board, a: int, b: int):
        slots = self.board.layout.slots
        return check_claim(board, self.state.faces, self.tileset, slots[a], slots[b])

    def _claim_event(self, frame: int, v) -> TrackEvent:
        return TrackEvent("claim", frame, v.slots, v.faces, valid=v.valid, reason=v.reason, code=v.code,
                          blocks=tuple(r.to_json() for r in v.blocks if r is not None))

    def _try_claims(self, frame: int, mid_move: bool = False) -> list[TrackEvent]:
        """Claim what the lifted tiles allow: a valid pair at once; for three or
        more tiles off together, the one way to split them into valid claims
        in some order (the tiles left over stay lifted); else wait (an
        attempt), or ask the referee when no split or several fit.  In Word
        Mahjong a word is held as a pair is, and letters that may still
        become a word wait while a hand is in view (``mid_move``,
        :meth:`_may_spell`)."""
        st = self.state
        word = self._word(list(st.lifted)) if len(st.lifted) >= MIN_WORD else None
        if word is not None:
            st.held = (frame, word)     # claimed once it has not come back, as a pair
            return []
        if self._blocked_word(list(st.lifted)) is not None:
            return []      # an invalid word, as a pair with a blocked tile: wait for the tiles to come back (or never)
        if len(st.lifted) == 2:
            a, b = st.lifted
            v = self._verdict(self._turn_board(), a, b)
            if v.valid and st.held is None:
                st.held = (frame, v)    # claimed once it has not come back (see the class)
            return []      # held, or an attempt: wait for the tiles to come back (or never)
        plans = _claim_plans(self, list(st.lifted))
        best = max((len(p) for p in plans), default=0)
        top = {frozenset(frozenset(pair) for pair in p) for p in plans if len(p) == best}
        if best == 0 and mid_move and self._may_spell(list(st.lifted)):
            return []      # letters of a word still being spelled: the next ones are to come
        if best * 2 < len(st.lifted) and len(st.lifted) >= MIN_WORD:
            # a word before pairs, as with every face known (above)
            word = self._word_inferred(list(st.lifted))
            if word is not None:
                st.held = (frame, word)     # a word with one face never read: claimed as any
                return []
        if best == 0 or len(top) != 1:
            if st.flagged:
                return []
            st.flagged = True
            slots = tuple(self.board.layout.slots[i] for i in st.lifted)
            return [TrackEvent("needs-referee", frame, slots, tuple(st.faces[i] for i in st.lifted),
                               reason=f"{len(st.lifted)} tiles left the board at once and they do not "
                                      "split into valid pairs in one way only")]
        plan = next(p for p in plans if len(p) == best)
        out = []
        for a, b in plan:
            v = self._verdict(self.board, a, b)
            self._remove(a, b)
            st.lifted.remove(a)
            st.lifted.remove(b)
            # claimed: no longer among the turn's tiles that may come back
            st.turn_lifted = [i for i in st.turn_lifted if i not in (a, b)]
            out.append(self._claim_event(frame, v))
        st.turn_board = self.board.copy() if st.lifted else None
        return out

    def _splits_once(self, idx: list[int]) -> bool:
        """Whether the tiles ``idx`` make valid claims (at least one) in
        one way only, as :meth:`_try_claims` would claim them."""
        plans = _claim_plans(self, list(idx))
        best = max((len(p) for p in plans), default=0)
        return best > 0 and len({frozenset(frozenset(pair) for pair in p) for p in plans if len(p) == best}) == 1

    def _remove(self, *idx: int) -> None:
        for i in _removal_order(self.board, list(idx)):
            self.board.remove(i)

    def _close_turn(self, frame: int) -> list[TrackEvent]:
        """Every lifted tile is back: one free tile put back is a touch; a
        lifted pair that came back is an invalid attempt (Law 2)."""
        st = self.state
        tb = self._turn_board()
        slots = self.board.layout.slots
        out: list[TrackEvent] = []
        if len(st.turn_lifted) == 1:
            (i,) = st.turn_lifted
            r = tb.reason(i)
            if r.free:
                out.append(TrackEvent("touch", frame, (slots[i],), (st.faces[i],), valid=True,
                                      reason=r.describe(), blocks=(r.to_json(),)))
        elif len(st.turn_lifted) == 2:
            a, b = st.turn_lifted
            v = self._verdict(tb, a, b)
            code = v.code or "returned"
            reason = v.reason if v.code else f"{v.reason}, but the tiles were put back"
            out.append(TrackEvent("attempt", frame, v.slots, v.faces, valid=False, reason=reason, code=code,
                                  blocks=tuple(r.to_json() for r in v.blocks if r is not None)))
        elif len(st.turn_lifted) > 2 and self.words is not None:
            # Word Mahjong: letters picked for a word and put back, no word
            # made: an attempt, as a pair put back is (2.1 Rule 2)
            idx = list(st.turn_lifted)
            code, reason = "returned", f"{len(idx)} tiles were lifted and put back: no word was made"
            blocked = self._blocked_word(idx)
            if blocked is not None:
                idx, code = list(blocked[0].idx), BLOCKED
                reason = f"{blocked[1]}, and the tiles were put back"
            out.append(TrackEvent("attempt", frame, tuple(slots[i] for i in idx), tuple(st.faces[i] for i in idx),
                                  valid=False, code=code, reason=reason,
                                  blocks=tuple(tb.reason(i).to_json() for i in idx)))
        elif len(st.turn_lifted) > 2:
            out.append(TrackEvent("needs-referee", frame, tuple(slots[i] for i in st.turn_lifted),
                                  tuple(st.faces[i] for i in st.turn_lifted),
                                  reason=f"{len(st.turn_lifted)} tiles were lifted and put back"))
        st.turn_board = None
        st.turn_lifted = []
        return out

    def _settle_unreturned(self, frame: int) -> list[TrackEvent]:
        """Tiles off the board for good without a valid claim.

        A free pair of which one face is sure while the other was never read,
        or was read unsurely with a matching face about as likely, is claimed
        with that face taken as matching, when a matching copy is still
        unaccounted for (a claimed pair must match: the players took it off
        and kept it).  A pair whose faces surely do not match is an invalid
        claim.  In every other case, and after an invalid claim,
        the referee must look (the table and the rules now disagree)."""
        st = self.state
        held = self.claim_held()
        if held or not st.lifted:
            return held
        slots = self.board.layout.slots
        tb = self._turn_board()
        out: list[TrackEvent] = []
        lifted = list(st.lifted)
        why = "tiles left the board without a valid claim"
        pair_move = False
        partners = self._unseen_partners(tb, lifted[0]) if len(lifted) == 1 else []
        changed = [j for j in partners if j in st.lift_unseen_changed.get(lifted[0], ())]
        likely = changed[0] if len(changed) == 1 else None
        if partners:
            # the slots named, so the referee knows which tile to look for
            # (bench game 13100: 24,0,0, hidden behind a layer-2 stack all
            # game, was the claim's second tile), the one whose look changed
            # by itself as the tile left first
            hint = "" if likely is None or len(partners) == 1 else \
                f"; {','.join(map(str, slots[likely]))} likeliest: its slot changed as the tile left"
            why = ("a tile left the board alone and did not come back; a tile that could match it went "
                   f"unread in that picture (behind a taller stack: {self._partners_named(partners)}{hint}): "
                   "it may have been claimed with it")
        if len(lifted) == 2:
            a, b = lifted
            v = self._verdict(tb, a, b)
            seen = max(st.lift_frame.get(a, frame), st.lift_frame.get(b, frame))
            inferred = self._infer_pair(tb, a, b) if v.code in (UNKNOWN_FACE, NO_MATCH) else None
            if inferred is not None:
                return self._claim_inferred(seen, *inferred)
            sure = all(st.face_conf[i] >= self.settings.face_confidence for i in (a, b))
            apart = st.lift_frame.get(a) != st.lift_frame.get(b)
            if v.code == NO_MATCH and sure and apart and all(self._unseen_partner(tb, i) for i in (a, b)):
                # each seen leaving alone, in its own still picture, with a
                # tile that may match it unread there: two claims whose other
                # tiles the camera could not see (stood behind taller stacks)
                # as likely as one pair kept against the rules (bench game
                # 9004: an invalid claim was recorded, the turn passed, and
                # every later move went to the wrong player)
                seen_for = "; ".join(f"{self._partners_named(self._unseen_partners(tb, i))} for "
                                     f"{','.join(map(str, slots[i]))}" for i in (a, b))
                why = (f"two tiles left the board in separate moments and do not match ({v.reason}); "
                       f"each may have been claimed with a tile the camera could not see ({seen_for})")
            elif v.code in (BLOCKED,) or (v.code == NO_MATCH and sure):
                out.append(self._claim_event(seen, v))
                why = f"a pair left the board and was not put back: {v.reason}"
            elif v.code in (NO_MATCH, UNKNOWN_FACE):
                why = f"a pair left the board; the faces are not sure enough to judge it ({v.reason})"
                # one player's move, valid or not: where every pair move
                # passes the turn the item passes it (bench game 10402: the
                # turn stayed, and every later move went to the wrong player)
                pair_move = len(st.turn_lifted) == 2 and set(st.turn_lifted) == {a, b}
        blocked = self._blocked_word(lifted) if len(lifted) >= MIN_WORD else None
        if blocked is not None:
            w, reason = blocked
            seen = max(st.lift_frame.get(i, frame) for i in w.idx)
            out.append(TrackEvent("word", seen, w.slots, w.faces, valid=False, code=BLOCKED, word=w.word,
                                  reason=reason, blocks=tuple(tb.reason(i).to_json() for i in w.idx)))
            why = f"a word left the board and was not put back: {reason}"
            # the item names the word's tiles in spelling order, as the word
            # line does (a break-test, session 48: removal order read "TCA")
            lifted = list(w.idx) + [i for i in lifted if i not in set(w.idx)]
        elif st.flagged and len(lifted) == len(st.turn_lifted):
            why = f"the {len(lifted)} tiles asked about before did not come back"
        out.append(TrackEvent("needs-referee", frame, tuple(slots[i] for i in lifted),
                              tuple(st.faces[i] for i in lifted), reason=why,
                              gone=tuple(slots[i] for i in _removal_order(self.board, lifted)),
                              pair_move=pair_move and blocked is None,
                              partners=tuple(slots[j] for j in partners) if blocked is None else (),
                              likely=slots[likely] if likely is not None and blocked is None else None))
        self._remove(*lifted)
        st.gone.update(lifted)
        st.lifted.clear()
        st.turn_lifted = []
        st.turn_board = None
        st.flagged = False
        return out

    def _changed_alone(self, obs: Observation, idx: frozenset) -> frozenset:
        """Of slots ``idx`` (unread in ``obs``), those standing whose look
        changed (their signature correlates under ``new_appearance_ncc``
        with every agreed one) while no taller tile in their window changed
        or left (:meth:`_taller_near_changed`): a tile behind a taller stack
        that may have left unseen (bench game 13100: the claim's second
        tile, 0.86 like before; the other candidates 0.89, beside the lone
        tile that left, and 0.99).  Empty without signatures."""
        st = self.state
        if not idx or obs.patches is None or st.ref is None:
            return frozenset()
        ncc = self._ref_ncc(obs)
        lifted = np.zeros(len(ncc), bool)
        if st.lifted:
            lifted[st.lifted] = True
        moved = self._moved(obs)
        return frozenset(j for j in idx if self.board.present[j] and st.has_ref[j] and j not in st.lifted
                         and ncc[j] < self.settings.new_appearance_ncc
                         and not self._taller_near_changed(j, obs, lifted, moved))

    def _unseen_partner(self, board: Board, i: int) -> bool:
        """Whether lifted tile ``i`` may have left with a partner the camera
        never saw leaving (:meth:`_unseen_partners` finds one)."""
        return bool(self._unseen_partners(board, i))

    def _unseen_partners(self, board: Board, i: int) -> list[int]:
        """The tiles lifted tile ``i`` may have left with unseen: slots that
        went unread in the picture ``i`` was first seen gone in, whose tile
        stands on ``board``, is free there and is not lifted, and whose face
        is unknown with a copy of a face matching ``i``'s left, or matches
        ``i``'s.  Slot indices: those whose look changed by itself in that
        picture (:meth:`_changed_alone`) first, then ascending; empty when
        ``i``'s face is unknown."""
        st = self.state
        face = st.faces[i]
        if face is None:
            return []
        matching = [f.id for f in self.tileset.faces if self.tileset.matches(f.id, face)]
        out = []
        changed = st.lift_unseen_changed.get(i, frozenset())
        # those whose look changed by itself in that picture first
        for j in sorted(st.lift_unseen.get(i, ()), key=lambda j: (j not in changed, j)):
            if j == i or j in st.lifted or not board.present[j] or not board.is_free(j):
                continue
            if st.faces[j] is None and any(self.copies_left(f, j) > 0 for f in matching):
                out.append(j)
            elif st.faces[j] is not None and self.tileset.matches(st.faces[j], face):
                out.append(j)
        return out

    def _partners_named(self, idx: Sequence[int], most: int = 3) -> str:
        """Slots ``idx`` as a referee reads them: "24,0,0", "24,0,0 or
        26,2,1", at most ``most`` named and "..." after."""
        slots = self.board.layout.slots
        names = [",".join(map(str, slots[j])) for j in idx[:most]]
        return " or ".join(names) + (" or ..." if len(idx) > most else "")

    def _infer_pair(self, board: Board, a: int, b: int) -> tuple[int, int, int, str] | None:
        """For a free pair taken for good whose faces do not show a match: the
        unsure tile and the face to give it, when the other face is sure and
        the unsure tile's face was never read, or a face matching the sure
        one is about as likely in its votes as its best face (at least
        ``plausible_vote`` of it); None otherwise (see
        :meth:`_settle_unreturned`).

        Returns ``(a, b, unsure slot index, face)``.
        """
        st = self.state
        s = self.settings
        if not board.is_free(a) or not board.is_free(b):
            return None
        for u, k in ((a, b), (b, a)):
            if not self._read_surely(k) or st.face_conf[u] >= s.face_confidence:
                continue
            known = st.faces[k]
            cands = [known] + [f.id for f in self.tileset.faces
                               if f.id != known and self.tileset.matches(f.id, known)]
            votes = st.votes[u]
            for f in cands:
                plausible = st.faces[u] is None or votes[self._col[f]] >= s.plausible_vote * votes.max()
                if plausible and self.copies_left(f, u) > 0:
                    return a, b, u, f
        return None

    def _read_surely(self, i: int) -> bool:
        """Slot ``i``'s face is sure: read once with ``face_confidence``, or
        ``swap_min_reads`` times or more at a mean of ``face_confidence`` less
        0.05 (bench game 11301: gummy-9 read three times at 0.87-0.89, its
        partner behind a taller stack never read; the pair went to the
        referee as unsure)."""
        st = self.state
        f = st.faces[i]
        if f is None:
            return False
        if st.face_conf[i] >= self.settings.face_confidence:
            return True
        n = st.reads[i]
        return bool(n >= self.settings.swap_min_reads
                    and st.votes[i, self._col[f]] / n >= self.settings.face_confidence - 0.05)

    def _claim_inferred(self, frame: int, a: int, b: int, u: int, face: str) -> list[TrackEvent]:
        st = self.state
        old = st.faces[u]
        st.faces[u] = face
        st.face_conf[u] = 0.0
        v = self._verdict(self._turn_board(), a, b)
        self._remove(a, b)
        st.lifted.clear()
        st.turn_lifted = []
        st.turn_board = None
        st.flagged = False
        ev = self._claim_event(frame, v)
        slot = self.board.layout.slots[u]
        seen = "was not read" if old is None else f"read unsurely as {old}"
        return [TrackEvent(ev.type, ev.frame, ev.slots, ev.faces, ev.valid,
                           f"{v.reason} (the face at {','.join(map(str, slot))} {seen}; the pair left the "
                           "board and was kept, and a claimed pair must match)", ev.code, ev.blocks)]

    def copies_left(self, face: str, exclude: int) -> int:
        """Copies of ``face`` not yet placed at a slot other than ``exclude``
        (on the board, lifted or claimed)."""
        used = sum(1 for j, f in enumerate(self.state.faces) if f == face and j != exclude)
        return int(self._copies[self._col[face]]) - used

    def _correct(self, obs: Observation) -> Observation:
        """The observation corrected by what the tracker knows.

        With face signatures (``obs.patches``), a standing, uncovered tile
        whose slot looks the same as at its last agreed reading is still
        there, whatever the classifier says; where the slot changed, the tile
        is gone when the classifier agrees in any way: it reads the slot
        empty, or its own face's probability fell below ``own_fall`` of its
        mean in the slot's history, or "no face here" rose by ``none_rise``
        (also where it calls the slot hidden: an emptied slot next to a tall
        stack reads as hidden); over another tile, a slot that changed a lot
        (``stack_ncc``) is empty whatever the classifier reads.  A lifted
        tile whose slot no longer looks as when it left but as the tile did
        while it stood (``change_ncc`` with one of the appearances kept from
        before it left, better than with the emptied slot's) is back,
        whatever the classifier reads.  A tile behind taller tiles in front
        (``obs.behind``) in the last observation and no longer (one in
        front has left) is read by the classifier alone, and its looks are
        learnt afresh: those stored showed the tile in front (bench game
        9004: such a tile, wholly changed over a tile below, was taken as
        lifted and the tile below as showing too high).

        Then, with or without signatures:

        * a well-known face (read ``swap_min_reads`` times, once at least with
          ``swap_confidence``) replaced by another face read with
          ``swap_confidence``, over a tile right below, is that lower tile's
          face seen too high: tiles are never swapped, so the upper one is
          gone (where the slot's look changed, or, read with
          ``face_confidence``, changed only somewhat: under
          ``new_appearance_ncc``; where the look changed, a face read once
          with ``swap_sure`` replaced by one read with ``face_confidence``
          will do too, bench game 11800; a lifted tile read surely with its own
          face again, looking more as it stood than as its emptied slot, is
          back likewise); so is a face read once with ``swap_sure`` replaced by
          another read with ``swap_sure`` (bench game 7606: the first move
          took a tile off a stack seen 13 degrees from overhead, its slot
          read chocolate-5 at 0.98 where chocolate-7 had read 0.99 at the
          deal, the only picture judged before; the lift went unseen and
          the game's claims went wrong from there);
        * a face read at a slot covered by a tile standing right above it,
          while that upper slot reads empty, is the upper tile's face seen
          too low (a stack seen steeply): the upper tile is there with that
          face, when its face is not known yet (the first frame) or is that
          face, and its slot looks as it did (a tile of the same face may lie
          below a removed one) or, for a lifted tile, no longer looks as it
          did when it left (it is back).  Where the upper face is not known
          yet and a taller tile in the lower slot's window reads that face
          surely (:meth:`_shown_by_taller`), the reading may be that tile's:
          the upper tile is left unread instead.
        """
        st = self.state
        present = np.array(obs.present, bool)
        known = np.array(obs.known, bool)
        conf = np.array(obs.confidence, np.float64)
        faces = list(obs.faces)
        too_high_back = np.zeros(len(present), bool)    # lifted tiles read back, whatever their look
        fp = None if obs.face_probs is None else np.array(obs.face_probs, np.float64)
        pn = None if obs.p_none is None else np.array(obs.p_none, np.float64)
        read = np.array(known if obs.read is None else obs.read, bool)
        board = self.board
        s = self.settings
        n = len(present)
        lifted = np.zeros(n, bool)
        if st.lifted:
            lifted[st.lifted] = True
        standing = self._standing_top(lifted_cover=True)
        moved = self._moved(obs) | self._emptied_in_part(obs)
        overruled = np.zeros(n, bool)       # a stacked tile's look kept, but the classifier says it left
        refaced = np.zeros(n, bool)         # its face was a taller tile's seen in its window: learnt afresh
        # tiles behind taller ones that the classifier reads all the same
        left, seen = self._behind_read(obs, fp, pn, lifted, moved)
        for i in np.flatnonzero(left):
            present[i], known[i], faces[i], read[i] = False, True, None, True
            conf[i] = float(pn[i])
        for i in np.flatnonzero(seen):
            present[i], known[i], faces[i], read[i] = True, True, st.faces[i], True
            conf[i] = max(float(conf[i]), float(fp[i, self._col[st.faces[i]]]))
        gone_look, back_look = self._behind_look(obs, lifted, moved, left | seen)
        for i in np.flatnonzero(gone_look):
            present[i], known[i], faces[i], read[i] = False, True, None, True
            conf[i] = 0.5
        for i in np.flatnonzero(back_look):
            present[i], known[i], faces[i], read[i] = True, True, st.faces[i], True
            conf[i] = max(float(conf[i]), 0.5)
        if obs.patches is not None and st.ref is not None:
            ref_ncc = self._ref_ncc(obs)
            behind = np.zeros(n, bool) if obs.behind is None else np.asarray(obs.behind, bool)
            # a tile unveiled by the one in front leaving is judged by the
            # classifier alone: its stored looks showed the tile in front
            unveiled = self._unveiled(obs)
            stand = None if obs.stand is None else np.nan_to_num(np.asarray(obs.stand, np.float64), nan=-np.inf)
            for i in np.flatnonzero(standing & st.has_ref & ~behind & ~unveiled):
                if not moved[i] and self._stack_look_overruled(i, obs, fp, pn, ref_ncc):
                    overruled[i] = True          # judged below as a changed slot
                elif not moved[i]:
                    if read[i] and (not present[i] or not known[i]):
                        present[i], known[i] = True, True
                        faces[i] = faces[i] or st.faces[i]
                        conf[i] = max(float(conf[i]), 0.5)
                    continue
                d = self._below[i]
                over = d >= 0 and board.present[d]
                if not over and read[i] and ref_ncc[i] >= s.strong_ncc and self._own_on_top(i, fp):
                    # its own face still reads likeliest: a shadow, not a removal
                    present[i], known[i], faces[i] = True, True, st.faces[i]
                    conf[i] = max(float(conf[i]), 0.5)
                    continue
                gone = read[i] and not present[i]
                own_plain = faces[i] is not None and faces[i] == st.faces[i] and conf[i] >= s.behind_read
                # (a face never read before, read plainly: ``behind_read``; bench
                # game 13207, the turtle: an A beside a layer-2 tile that
                # left, read at 0.89, was taken off by the stack rule below
                # and the claim went to the referee as three tiles)
                # (or with ``swap_confidence``, where the presence model finds
                # a tile standing at its height: ``stand_sure``)
                stood_up = over and stand is not None and bool(stand[i] >= s.stand_sure)
                first_plain = faces[i] is not None and st.faces[i] is None \
                    and conf[i] >= (s.swap_confidence if stood_up else s.behind_read) \
                    and faces[i] != st.faces[d] and self.copies_left(faces[i], i) > 0
                # its own face still the likeliest, weakly read (not the
                # face of the tile below), its look changed only in part:
                # the demo recording 10 % brighter, a layer-1 tile beside a
                # layer-2 one that left read its own face at 0.21 (0.65 in
                # the recording as made), its look 0.69 of its own, and was
                # taken off by its face's fall below; it stood on, "lifted",
                # and went to the referee at the end (a break-test, session 49)
                own_top = faces[i] is not None and faces[i] == st.faces[i] and st.faces[d] != faces[i] \
                    and ref_ncc[i] >= s.hand_ncc and self._own_on_top(i, fp)
                # the face it holds was read off a taller tile in its window
                # (a tilted camera sees part of that tile's face there), and
                # that tile has now left or changed: a face of its own read
                # plainly (``behind_read``), not the tile below's, is its face,
                # learnt afresh, when the face it holds was never read surely
                # (bench game 15603, the Alphabet Tower: a layer-2 S read "M"
                # at 0.69 off the layer-4 M in front at the deal;
                # when that M was claimed, the S read 0.96, its look 0.25 of
                # the "M" one, and the stack rule charged it a penalty: the
                # game's turns went wrong from there)
                # (a face once read surely is the tile's own: the tile and a
                # taller one beside it of the same face may be claimed as a
                # pair, and the face below then shows at the slot.)  So is
                # any face it held, never read surely, when the presence
                # model finds a tile standing at its height (``stand_sure``;
                # bench game 16203: a layer-1 U read "J" behind a layer-3 D
                # at the deal, read U at 0.98 with log-odds +4.3 once the D
                # pair left)
                front_face = False
                if over and not gone and read[i] and faces[i] is not None and st.faces[i] is not None \
                        and faces[i] != st.faces[i] and faces[i] != st.faces[d] and conf[i] >= s.behind_read \
                        and st.peak[i, self._col[st.faces[i]]] < s.face_confidence \
                        and self.copies_left(faces[i], i) > 0:
                    near = self._taller_changed_near(i, obs, lifted, moved)
                    front_face = any(st.faces[j] == st.faces[i] for j in near) or (stood_up and bool(near))
                if front_face:
                    present[i], known[i] = True, True
                    refaced[i] = True
                    continue
                if over and not gone and read[i] and (own_plain or first_plain or own_top) \
                        and (stood_up or self._taller_near_changed(i, obs, lifted, moved)):
                    # its own face read plainly (or, never read before, a
                    # face read plainly that is not the one below), and a
                    # taller tile beside it has just left or changed: that
                    # tile's wall had been in its look (bench game 11300,
                    # Dragon's Tail: a tile read at 0.90 beside a layer-3
                    # tile that left, its look 0.18 like before, was taken
                    # off by the stack rule below; 11603, Imperial Palace:
                    # an O never read, seen at 0.94 once the tile in front
                    # left, was penalised and its face given to the tile below).
                    # So where the presence model finds a tile standing at its
                    # height (``stand_sure``), whatever changed its look: after
                    # the camera moved every look changed (bench game 17100,
                    # Cupid's Citadel: two layer-3 tiles read at 0.99 and 1.0,
                    # log-odds +10.3 and +13.2, went to the referee as maybe
                    # gone, the faces below seen too high)
                    present[i], known[i] = True, True
                    continue
                if over and not gone and read[i] and stood_up and st.faces[i] is not None \
                        and (faces[i] is None or conf[i] < s.swap_confidence):
                    # read standing, no other face read surely (``swap_confidence``),
                    # and the presence model finds a tile at its height: the
                    # tile stands, whatever changed its look (bench game
                    # 17403, the Sundae Mountain at 640 x 480: a layer-2 E
                    # read "R" at 0.44, log-odds +4.5, as the layer-3 tile in
                    # front of it was claimed, was taken for a third tile of
                    # the claim, and the claim went to the referee)
                    present[i], known[i], faces[i] = True, True, st.faces[i]
                    conf[i] = max(float(conf[i]), 0.5)
                    continue
                if not gone and d >= 0 and board.present[d] and obs.patches is not None \
                        and ref_ncc[i] < s.stack_ncc:
                    gone = True     # the tile below shows too high (it may even bear the same face)
                if not gone and fp is not None and pn is not None and st.base_n[i] > 0:
                    m = st.base_n[i]
                    f = st.faces[i]
                    k = self._col[f] if f is not None else int(np.argmax(st.base_fp[i]))
                    own0 = st.base_fp[i, k] / m
                    gone = (own0 >= s.own_min and fp[i, k] < s.own_fall * own0 and fp[i].max() < s.clear_face) \
                        or pn[i] >= st.base_pn[i] / m + s.none_rise
                if gone:
                    if d >= 0 and board.present[d] and faces[i] is not None and conf[i] >= s.swap_confidence:
                        # the face read here is the lower tile's, seen too high
                        present[d], known[d], faces[d], conf[d] = True, True, faces[i], conf[i]
                        if fp is not None:
                            fp[d] = fp[i]
                        if pn is not None:
                            pn[d] = pn[i]
                    present[i], known[i], faces[i], read[i] = False, True, None, True
                    conf[i] = max(float(conf[i]), 0.5) if not obs.present[i] else 0.5
            # a lifted tile whose slot no longer looks as when it left, but
            # as the tile did while it stood: it is back, whatever the
            # classifier says (bench game 10100: a face the classifier reads
            # as "no face" at 0.55-0.61 standing, lifted and put back; its
            # return was never seen, and it went to the referee as a tile
            # off the table)
            stood = self._stood_ncc(np.asarray(obs.patches, np.float32))
            # (a slot read hidden too: a small picture's edge face the
            # classifier calls hidden while it stands, bench game 10402)
            for i in np.flatnonzero(lifted & (~present | ~read) & ~behind):
                if moved[i] and stood[i] >= s.change_ncc and stood[i] > ref_ncc[i]:
                    present[i], known[i], faces[i], read[i] = True, True, st.faces[i], True
                    conf[i] = max(float(conf[i]), 0.5)
            # and one whose slot reads its own face surely, looking more as
            # it stood than as when it left, is back though its look changed
            # little (a small picture's coarse looks: bench game 10403 at
            # 640x480, the emptied slot 0.79 like the tile standing)
            for i in np.flatnonzero(lifted & present & known & read & ~behind & ~moved):
                d = self._below[i]
                if faces[i] is not None and faces[i] == st.faces[i] and conf[i] >= s.face_confidence \
                        and stood[i] > ref_ncc[i] and (d < 0 or st.faces[d] != faces[i]):
                    too_high_back[i] = True
        ref_all = self._ref_ncc(obs) if obs.patches is not None and st.ref is not None else None
        too_high = np.zeros(n, bool)       # the tile below read here: gone, whatever its look
        stand_at = None if obs.stand is None else np.nan_to_num(np.asarray(obs.stand, np.float64), nan=-np.inf)
        for u, d in enumerate(self._below):
            f = st.faces[u]
            if d < 0 or f is None or faces[u] in (None, f) or not present[u] or not read[u] \
                    or not board.present[u] or not board.present[d] or lifted[u] or refaced[u]:
                continue            # (refaced: the face it had was a taller tile's, above)
            peak = st.peak[u, self._col[f]]
            # a face read twice or more with swap_sure, its look changed,
            # another read there with swap_sure: tiles are never swapped, so
            # the tile below is seen too high whatever the presence model
            # finds at this height (bench game 19503, the independent
            # renderer: a layer-2 N read 9 times at up to 0.99 left in a
            # word, the L below read at 0.96, the look 0.38 like before, the
            # model +4.6 standing; the word was never seen and the next
            # claim was joined to it)
            swapped_surely = bool(moved[u]) and st.reads[u] >= 2 and peak >= s.swap_sure \
                and conf[u] >= s.swap_sure
            if swapped_surely and stand_at is not None and stand_at[u] >= s.stand_sure:
                # unless the face held is that of a taller tile in its window
                # that has just left or changed: read off that tile, surely,
                # by a tilted camera, and the slot now shows its own (bench
                # game 14502, Dragon's Tail at 640 x 480: a layer-1 bamboo-4
                # held as the circles-3 beside it, read so surely, was taken
                # off with that tile's claim)
                swapped_surely = not any(st.faces[j] == f
                                         for j in self._taller_changed_near(u, obs, lifted, moved))
            if stand_at is not None and stand_at[u] >= s.stand_sure and not swapped_surely:
                # the presence model finds a tile at its height: the face read
                # is its own, not the one below seen too high; one it held,
                # never read surely, gives way to it read plainly (bench game
                # 16802: a layer-1 8 of Characters read "6" at 0.5 while a
                # layer-2 tile in front stood, read 8 at 0.98 with log-odds
                # +11.4 once it was claimed, was taken off and charged)
                if peak < s.face_confidence and conf[u] >= s.behind_read \
                        and self.copies_left(faces[u], u) > 0:
                    refaced[u] = True
                continue
            if not moved[u] and not (
                    # a slot only somewhat changed (a small picture's coarse
                    # looks: a face and the one right below it correlated
                    # 0.79 at 640x480, bench game 10403) reading surely a
                    # face that is not the tile's own, nor against the known
                    # face below: the tile below seen too high
                    ref_all is not None and ref_all[u] < s.new_appearance_ncc
                    and conf[u] >= s.face_confidence and not self._own_on_top(u, fp)
                    and st.faces[d] in (None, faces[u])
                    and (st.faces[d] is not None or self.copies_left(faces[u], d) > 0)):
                continue
            if not ((st.reads[u] >= s.swap_min_reads and peak >= s.swap_confidence
                     and conf[u] >= s.swap_confidence)
                    or (st.reads[u] >= 1 and peak >= s.swap_sure and conf[u] >= s.swap_sure)
                    # its look changed too: a face read with face_confidence
                    # will do (bench game 11800, Alphabet Tower: letters-5,
                    # read at 1.00 twice, lifted; its slot read the face
                    # below at 0.93, the look 0.35 like before, and the
                    # penalty went unseen)
                    or (moved[u] and st.reads[u] >= 1 and peak >= s.swap_sure
                        and conf[u] >= s.face_confidence)
                    # and the other way round: a face read twice with
                    # face_confidence, its slot's look changed, another face
                    # read there with swap_sure (bench game 19200, the
                    # independent renderer 1.6 degrees from overhead: a
                    # 7 of Hearts read 0.92-0.94, lifted as a blocked tile,
                    # its slot read the 6 of Hearts below at 0.98, the look
                    # 0.48 like before, and the penalty went unseen)
                    or (moved[u] and st.reads[u] >= 2 and peak >= s.face_confidence
                        and conf[u] >= s.swap_sure)):
                continue
            present[d], known[d], faces[d], conf[d] = True, True, faces[u], conf[u]
            present[u], known[u], faces[u] = False, True, None
            too_high[u] = True
            if fp is not None:
                fp[d] = fp[u]
            if pn is not None:
                pn[d] = pn[u]
        for u, d in enumerate(self._below):
            # a lifted tile's slot reading, surely, the known face of the
            # tile right below (another than its own): that tile seen too
            # high, not the lifted one back (tiles are never swapped).  Its
            # look cannot tell after a camera move (bench game 9801: the
            # camera knocked while a claim's upper tile was off, the face
            # below read there, and the tile was taken back)
            if d < 0 or not lifted[u] or not present[u] or faces[u] is None or not board.present[d] \
                    or conf[u] < s.swap_confidence:
                continue
            low = st.faces[d]
            if low is None or faces[u] != low or st.faces[u] in (None, low):
                continue
            present[u], known[u], faces[u], read[u] = False, True, None, True
        for d, u in enumerate(self._above):
            if u < 0 or faces[d] is None or not present[d] or present[u] or not read[u] \
                    or not board.present[u] or not board.present[d]:
                continue
            has_ref = st.has_ref is not None and st.has_ref[u]
            if (lifted[u] and not moved[u]) or (not lifted[u] and has_ref and moved[u]):
                continue        # still lifted (looks as when it left) / really gone (looks changed)
            if not (st.faces[u] == faces[d] or (st.faces[u] is None and not st.initialised)):
                continue
            if st.faces[u] is None and self._shown_by_taller(d, u, faces, present, conf, obs.front):
                # the face of a taller tile in front, not the upper one's:
                # the upper tile is not read (its window may be hidden too)
                known[u], faces[d] = False, None
                continue
            if lifted[u] and st.faces[d] == faces[d]:
                # the tile below, seen while the lifted one was off, bears
                # that face itself: its own face, no sign of the lifted
                # tile (bench game 13303, Word: an E lifted off an E, the
                # camera nudged before the claim settled, so no look told;
                # the E below took the lifted one back, and the claim, the
                # next attempt and the turn after it were lost)
                continue
            present[u], known[u], faces[u], conf[u] = True, True, faces[d], conf[d]
            faces[d] = None
            if fp is not None:
                fp[u] = fp[d]
            if pn is not None:
                pn[u] = pn[d]
        too = too_high | too_high_back | gone_look | back_look | (overruled & ~np.asarray(present, bool))
        if obs.held is not None:
            # slots the caller leaves as they were: as given (unknown),
            # whatever the rules above made of them (a hand resting over
            # them: the fall of their faces under the fingers took tiles
            # off, a break-test's flickering light, session 50)
            for i in np.flatnonzero(np.asarray(obs.held, bool)):
                present[i], known[i], faces[i], conf[i] = bool(obs.present[i]), False, None, float(obs.confidence[i])
                read[i] = False
            too = too & ~np.asarray(obs.held, bool)
        out = Observation(present, known, faces, conf, fp, pn, read, obs.patches, obs.behind, obs.front, obs.held,
                          obs.stand)
        self._too_high = (id(out), too)
        self._refaced = (id(out), refaced)
        return out

    def _shown_by_taller(self, d: int, u: int, faces: Sequence[str | None], present: np.ndarray,
                         conf: np.ndarray, front: Sequence | None) -> bool:
        """Whether the face read at slot ``d`` (under slot ``u``) is read
        too, with ``face_confidence``, at a standing, uncovered tile taller
        than ``d`` that shows in ``d``'s window from the camera (``front[d]``,
        :attr:`Observation.front`; False where the caller gave none): a
        steep view shows that tile there, so the reading need not be
        ``u``'s face seen too low (bench game 20302, the Turtle of Longevity
        30-45 degrees from overhead: a layer-3 8 of Circles, read at 0.94,
        showed in the window of the layer-1 tile behind it, under a layer-2
        6 of Circles that read "no face"; the 6 was taken for an 8, and its
        claim went to the referee).  Only the tiles in the window: the
        top tile of the Turtle, beside such a slot and out of its window,
        bore the same letter in bench game 17803 and its partner's face
        would have been lost.  ``faces``, ``present``, ``conf``: the
        observation's, length N."""
        shows = None if front is None else front[d]
        if not shows:
            return False
        slots = self.board.layout.slots
        board = self.board
        for j in shows:
            if j in (d, u) or faces[j] != faces[d] or not present[j] or not board.present[j] \
                    or board.n_cover[j] or float(conf[j]) < self.settings.face_confidence:
                continue
            if slots[j].z > slots[d].z:
                return True
        return False

    def _behind_look(self, obs: Observation, lifted: np.ndarray, moved: np.ndarray,
                     decided: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tiles behind taller tiles in front (``obs.behind``) judged by their
        look while every taller tile near them stands unchanged
        (:meth:`_taller_near_changed`): the window then shows the same wall
        of the tile in front and, beside it, what the camera sees of the
        face, so a look unlike every stored one (``change_ncc``), or only
        somewhat like (``new_appearance_ncc``) while "no face here" rose
        ``none_rise`` since the last observation, is the tile gone, unless
        the classifier reads its own face (``behind_read``),
        and a lifted tile's slot looking again as the tile stood is the
        tile back.  ``decided`` slots (read by :meth:`_behind_read`) are
        left out.  Returns ``(gone, back)``, two ``(N,)`` bool arrays.

        Bench games 11200, 11300, 11301 (Pagoda of Peace and Dragon's Tail,
        tall stacks seen at a tilt): tiles four fifths hidden behind a taller
        neighbour, whose faces the classifier never read, were lifted for a
        penalty or a claim unseen; the strip of the face in sight changed
        wholly (correlation 0.44 and -0.05 with the standing look), or in
        part (0.79, "no face here" 0.56 -> 0.93)."""
        st = self.state
        s = self.settings
        n = len(lifted)
        gone, back = np.zeros(n, bool), np.zeros(n, bool)
        if obs.behind is None or obs.patches is None or st.ref is None:
            return gone, back
        ref_ncc = self._ref_ncc(obs)
        stood = self._stood_ncc(np.asarray(obs.patches, np.float32))
        fp = obs.face_probs
        stand = None if obs.stand is None else np.asarray(obs.stand, np.float64)
        before = self._stand_before() if stand is not None else None
        for i in np.flatnonzero(np.asarray(obs.behind, bool) & ~decided):
            if not self.board.present[i] or self.board.n_cover[i] or not st.has_ref[i]:
                continue
            f = st.faces[i]
            own = 0.0 if f is None or fp is None else float(fp[i, self._col[f]])
            # the presence model, sure of a tile there while it stood, now
            # sure of none (``stand_sure``, ``stand_fall``; NaN compares
            # False): gone, whatever the taller tiles in front did (one
            # leaving shows more of the slot, and more of a standing tile)
            fell = not lifted[i] and stand is not None and bool(stand[i] <= -s.stand_sure) \
                and bool(before[i] - stand[i] >= s.stand_fall)
            if fell and own < s.behind_read and st.ref_state[i] == 1:
                gone[i] = True
                continue
            if self._taller_near_changed(i, obs, lifted, moved):
                continue
            if lifted[i]:
                # (not while the presence model is sure of no tile there: a
                # tile four fifths hidden leaves its slot looking as it did;
                # where the look cannot tell, lifted as it read the tile gone,
                # the model reading it near what it read standing is the tile
                # back)
                sure_gone = stand is not None and bool(stand[i] <= -s.stand_sure)
                either = stood[i] >= s.change_ncc and ref_ncc[i] >= s.change_ncc
                again = stand is not None and bool(stand[i] > -s.stand_sure) \
                    and bool(before[i] - stand[i] < s.stand_fall / 2)
                back[i] = (stood[i] >= s.change_ncc and stood[i] > ref_ncc[i] and not sure_gone) \
                    or (either and again)
                continue
            rose = obs.p_none is not None and st.pn_last is not None \
                and obs.p_none[i] >= st.pn_last[i] + s.none_rise       # (False where NaN)
            changed = ref_ncc[i] < s.change_ncc or (rose and ref_ncc[i] < s.new_appearance_ncc)
            # (not while the presence model reads a tile there as surely as
            # while it stood: ``stand_sure``, within half ``stand_fall`` of
            # that.  Bench game 17400, the Sundae Mountain at 640 x 480: a
            # layer-2 tile behind the layer-4 one, read +6.3 standing, its
            # look changed again in the picture after that tile left, read
            # +6.2, and was charged a penalty.  On 31 bench games in small
            # pictures and tall layouts, 38 pictures of standing tiles
            # behind stacks looked changed (under 0.5) with the model this
            # sure, and no gone tile read so, but for one whose look never
            # changed)
            held_up = stand is not None and bool(stand[i] >= s.stand_sure) \
                and bool(before[i] - stand[i] < s.stand_fall / 2)
            gone[i] = changed and own < s.behind_read and st.ref_state[i] == 1 and not held_up
        return gone, back

    def _taller_near_changed(self, i: int, obs: Observation, lifted: np.ndarray, moved: np.ndarray) -> bool:
        """Whether any tile :meth:`_taller_changed_near` names is there."""
        return bool(self._taller_changed_near(i, obs, lifted, moved, first=True))

    def _taller_changed_near(self, i: int, obs: Observation, lifted: np.ndarray, moved: np.ndarray,
                             first: bool = False) -> list[int]:
        """The tiles on a higher layer than slot ``i`` that show in its
        window (``obs.front``; where not given, any within two tiles of it,
        4 half-units either way), uncovered, whose look changed since the
        last observation (where none is kept: that reads gone in ``obs``,
        or moved; one lifted before and still off does not count)
        (``change_ncc``; bench game 11501: a look compared with the stored
        ones stayed "changed" for good where those were stale, and every
        tile behind it went unjudged): such a tile hides part of
        ``i``'s window from a tilted camera, so ``i``'s look changes with
        it.  (A covered tile's window shows the side of the one above it,
        and reads "no face" while it stands.)  ``first``: the first one
        found only."""
        st = self.state
        slots = self.board.layout.slots
        si = slots[i]
        gone_now = np.asarray(obs.known, bool) & ~np.asarray(obs.present, bool)
        last = st.sig_last
        if last is not None and obs.patches is not None and np.shape(obs.patches) == last.shape:
            p = np.asarray(obs.patches, np.float32)
            changed = lambda j: float(p[j] @ last[j]) < self.settings.change_ncc     # noqa: E731
            # a tile in front read gone whose look has not changed since the
            # last picture is misread, not gone: the window behind it shows
            # what it showed (bench game 15600, the Alphabet Tower at 720p: a
            # standing layer-4 tile read "no tile" at 0.77, its look 0.997
            # like the last, and the layer-3 tile behind it, lifted for a
            # claim in that picture, had its emptied look learnt as its own)
            gone_now = np.zeros(len(gone_now), bool)
        else:
            changed = lambda j: bool(lifted[j] or (moved[j] and (st.has_ref is None or st.has_ref[j])))  # noqa: E731
        # only the tiles in its window (bench game 12401, Twin Hearts: a
        # tile behind a stack, lifted for a claim, went unjudged because a
        # lower tile two tiles off, on the far side of that stack, was
        # lifted with it)
        front = None if obs.front is None else obs.front[i]
        near = range(len(slots)) if front is None else front
        out: list[int] = []
        for j in near:
            sj = slots[j]
            if front is None and not (abs(sj.x - si.x) <= 4 and abs(sj.y - si.y) <= 4):
                continue
            if sj.z > si.z and self.board.present[j]:
                if self.board.n_cover[j]:
                    continue        # under another tile: its window shows that one's side
                if changed(j) or (gone_now[j] and not lifted[j]):
                    out.append(j)
                    if first:
                        break
        return out

    def _stack_look_overruled(self, i: int, obs: Observation, fp: np.ndarray | None, pn: np.ndarray | None,
                              ref_ncc: np.ndarray) -> bool:
        """Whether standing tile ``i``, over a standing tile, whose slot looks
        only somewhat as it did (``change_ncc`` up to ``new_appearance_ncc``)
        has left all the same: its slot reads empty, its own face's
        probability fell below ``own_fall`` of its mean and "no face here"
        rose ``none_rise`` above its mean, or another face reads there with
        ``swap_confidence``, the face of the tile below (or, that one
        unknown, a face with a copy left for it).  The tile below, one layer down,
        may look much like it (bench game 11302, Dragon's Tail: 1 of
        Characters lifted off 7 of Characters correlated 0.77 with its
        standing look, read empty, own face 0.58 -> 0.04; the claim it
        began was never seen and every later move went to the wrong
        player)."""
        st = self.state
        s = self.settings
        d = self._below[i]
        if d < 0 or not self.board.present[d] or fp is None or pn is None or st.base_n[i] <= 0 \
                or ref_ncc[i] >= s.new_appearance_ncc:
            return False
        read = obs.known if obs.read is None else obs.read
        if not (obs.known[i] and read[i] and not obs.present[i]):
            return False
        m = st.base_n[i]
        f = st.faces[i]
        k = self._col[f] if f is not None else int(np.argmax(st.base_fp[i]))
        own0 = st.base_fp[i, k] / m
        if not (own0 >= s.own_min and fp[i, k] < s.own_fall * own0):
            return False
        if fp[i].max() < s.clear_face and pn[i] >= st.base_pn[i] / m + s.none_rise:
            return True
        # or another face reads clearly there, the tile below's (or one
        # with a copy left for it, its face unknown): the face below seen
        # at the upper slot (bench game 15601, the Alphabet Tower: a 7 of
        # Hard Candy lifted off a 6 correlated 0.81 with a stored look, read
        # empty at 0.79, the 6 read there at 0.84, "no face" 0.01; the lift
        # went unseen and its claim's partner went to the referee alone)
        top = int(np.argmax(fp[i]))
        below = st.faces[d]
        return bool(top != k and fp[i, top] >= s.swap_confidence
                    and (below == self.face_ids[top] or (below is None and self.copies_left(self.face_ids[top], d) > 0)))

    def _own_on_top(self, i: int, fp: np.ndarray | None) -> bool:
        """Slot ``i``'s known face is (about) the likeliest face in its row of
        ``fp``: at least half the likeliest one's probability, which is not
        negligible (0.08)."""
        f = self.state.faces[i]
        if fp is None or f is None:
            return False
        row = fp[i]
        return bool(row[self._col[f]] >= 0.5 * row.max() and row.max() >= 0.08)

    def corrected(self, obs: Observation) -> Observation:
        """``obs`` as the tracker reads it (:meth:`_correct`); nothing changes."""
        return self._correct(obs) if self.state.initialised else obs

    def _learn_base(self, obs: Observation) -> None:
        """Add the readings of standing, visible tiles to their slots' history."""
        if obs.face_probs is None or obs.p_none is None:
            return
        st = self.state
        ok = np.array([f is not None for f in obs.faces]) & np.asarray(obs.present, bool) \
            & np.asarray(obs.known, bool) & self._standing_top()
        st.base_pn[ok] += np.asarray(obs.p_none)[ok]
        st.base_fp[ok] += np.asarray(obs.face_probs)[ok]
        st.base_n[ok] += 1

    def _learn_faces(self, frame: int, obs: Observation, events: list[TrackEvent], quiet: bool) -> None:
        """Add this observation's face readings to each slot's votes; a slot's
        face is the face with the most votes that still has a copy left
        (Love 1.2 "Component Inventory": each face has its copies and no
        more).  Tiles on the board and not lifted learn; a tile whose face
        lies wholly under standing tiles (:meth:`_buried`) does not.

        Slots read more surely choose first (their best face's mean vote), so
        a face read doubtfully at one slot does not take the last copy from a
        slot that reads it surely in the same picture.  A standing tile that
        holds a face with a mean vote under ``settings.yield_vote`` gives it
        up to a tile that reads it with at least ``face_confidence``, and
        takes its own next likeliest face with a copy left."""
        st = self.state
        slots = self.board.layout.slots
        buried = self._buried()
        learnt: list[int] = []
        for i, f in enumerate(obs.faces):
            if f is None or not obs.known[i] or not obs.present[i] or not self.board.present[i] \
                    or i in st.lifted or buried[i]:
                continue
            if obs.face_probs is not None:
                row = np.asarray(obs.face_probs[i], np.float64)
                total = row.sum()
                if total <= 0:
                    continue
                st.votes[i] += row / total
                st.peak[i] = np.maximum(st.peak[i], row / total)
            else:
                k = self._col[f]
                st.votes[i, k] += float(obs.confidence[i])
                st.peak[i, k] = max(st.peak[i, k], float(obs.confidence[i]))
            st.reads[i] += 1
            learnt.append(i)
        learnt.sort(key=lambda i: -float(st.votes[i].max()) / st.reads[i])
        for i in learnt:
            old = st.faces[i]
            new = self._likeliest_face(i, keep=old)
            if new is None:
                continue
            st.faces[i] = new
            st.face_conf[i] = float(st.peak[i, self._col[new]])
            if old is None and not quiet:
                events.append(TrackEvent("reveal", frame, (slots[i],), (new,)))

    def _likeliest_face(self, i: int, keep: str | None) -> str | None:
        """The face with the most votes at slot ``i`` that has a copy left
        (``keep``, the slot's present face, always may stay); a copy held by a
        standing tile that reads it weakly (mean vote under
        ``settings.yield_vote``) is taken from it when slot ``i`` reads the
        face with a mean vote of ``face_confidence`` or more
        (:meth:`_yield_copy`).  None when no face has votes."""
        st = self.state
        n = max(float(st.reads[i]), 1.0)
        for k in np.argsort(-st.votes[i], kind="stable"):
            if st.votes[i, k] <= 0:
                return None
            cand = self.face_ids[k]
            if cand == keep or self.copies_left(cand, i) > 0:
                return cand
            if st.votes[i, k] / n >= self.settings.face_confidence and self._yield_copy(cand, i):
                return cand
            st.inconsistent += 1      # every copy of cand is accounted for elsewhere
        return None

    def _yield_copy(self, face: str, taker: int) -> bool:
        """Free a copy of ``face`` for slot ``taker``: the standing, unlifted
        tile holding it with the lowest mean vote for it, when that is under
        ``settings.yield_vote``, takes its next likeliest face with a copy
        left (None when none has).  Claimed and lifted tiles keep their faces
        (events named them).  True when a copy was freed."""
        st = self.state
        col = self._col[face]
        weak = [(float(st.votes[j, col]) / max(float(st.reads[j]), 1.0), j)
                for j, f in enumerate(st.faces)
                if f == face and j != taker and self.board.present[j] and j not in st.lifted]
        if not weak:
            return False
        share, j = min(weak)
        if share >= self.settings.yield_vote:
            return False
        st.faces[j] = None
        nxt = None
        for k in np.argsort(-st.votes[j], kind="stable"):
            if st.votes[j, k] <= 0:
                break
            if k != col and self.copies_left(self.face_ids[k], j) > 0:
                nxt = self.face_ids[k]
                break
        st.faces[j] = nxt
        st.face_conf[j] = 0.0 if nxt is None else float(st.peak[j, self._col[nxt]])
        return True


def _spell_in_groups(word: str, groups: Sequence[Sequence[int]], faces: Sequence[str | None]) -> list[int] | None:
    """Slot indices spelling ``word`` (upper case) when the tiles left in
    ``groups`` (slot indices, in the order the groups left; any order within
    one) and each group spells the next stretch of the word; None when the
    word does not fit that order (:func:`companion.words.assign` per stretch)."""
    out: list[int] = []
    pos = 0
    for g in groups:
        try:
            out += assign(word[pos:pos + len(g)], [(i, faces[i]) for i in g])
        except CompanionError:
            return None
        pos += len(g)
    return out if pos == len(word) else None


def _claim_plans(tracker: BoardTracker, lifted: list[int]) -> list[list[tuple[int, int]]]:
    """Every sequence of valid claims among ``lifted`` (each pair judged on
    the board left by the claims before it), as lists of index pairs; only
    the longest matter to the caller."""
    out: list[list[tuple[int, int]]] = []
    if len(lifted) > 6:
        return out

    def walk(board: Board, left: list[int], done: list[tuple[int, int]]) -> None:
        grown = False
        for x in range(len(left)):
            for y in range(x + 1, len(left)):
                a, b = left[x], left[y]
                if tracker._verdict(board, a, b).valid:
                    nb = board.copy()
                    for i in _removal_order(nb, [a, b]):
                        nb.remove(i)
                    walk(nb, [i for i in left if i not in (a, b)], done + [(a, b)])
                    grown = True
        if not grown and done:
            out.append(done)

    walk(tracker._turn_board(), lifted, [])
    return out


def _removal_order(board: Board, gone: list[int]) -> list[int]:
    """Order in which ``gone`` tiles can be taken off (upper layers first)."""
    return sorted(gone, key=lambda i: -board.layout.slots[i].z)
