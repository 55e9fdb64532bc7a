"""Tile-face classification with the bundled ONNX model (onnxruntime only).

The model (``models/tiles.onnx``, described by ``models/tiles.json`` and
``models/MODEL_CARD.md``) maps a normalised patch from
:func:`vision.crops.extract_patches` to logits over every face of the four
tile sets, namespaced ``"variant/face-id"``, plus ``"none"`` (no face at that
slot and height: empty mat, a tile side, a face seen at the wrong height)
and ``"occluded"`` (a hand, or a taller stack in a tilted view, hides most of
the face: the slot cannot be read).  At inference the softmax is restricted to
one variant's faces plus ``"none"`` and ``"occluded"``, so the answer is
always one of that variant's faces, none, or occluded.
Faces turned 180 degrees belong to the same class (the training data holds
both orientations).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion.errors import BadInput
from companion.tiles import VARIANTS, tileset
from vision.crops import CropSettings

from vision import MODELS_DIR  # the checkout's models/, or the copy installed with the package
NONE = "none"
OCCLUDED = "occluded"


@dataclass(frozen=True)
class ClassifierSettings:
    """Where the model lives and how onnxruntime runs it.

    Attributes:
        model_path: the ``.onnx`` file.
        meta_path: its JSON description (classes, crop settings); defaults to
            the model path with ``.json``.
        threads: onnxruntime intra-op threads (the machine has 2 cores).
        batch: patches per ``session.run`` call (0 = all at once).
        spinning: let idle onnxruntime threads spin-wait; off by default, since
            on a busy 2-core machine spinning threads slow everything down
            (measured: 40 ms instead of 80 ms median for 144 patches).
        turn_average_below: a patch whose best restricted probability is
            under this is read a second time turned by 180 degrees, and the
            two restricted softmaxes are averaged (test-time augmentation by
            the one symmetry the classes have: tiles lie either way round).
            On the 60 validation scenes of seed stream 1000000 (2450 face
            patches) face accuracy went from 96.12 to 96.61 %; the turned
            look alone scores 96.12 %.  Thresholds of 0.7-1.0 gave the same
            96.61 % and 0.5 gave 96.53 %; 0.8 turns 12.7 % of the face
            patches (about 0.5 ms for a 144-slot layout).  0 turns none.
    """

    model_path: Path = MODELS_DIR / "tiles.onnx"
    meta_path: Path | None = None
    threads: int = 2
    batch: int = 0
    spinning: bool = False
    turn_average_below: float = 0.8

    @property
    def meta(self) -> Path:
        return Path(self.meta_path) if self.meta_path else Path(self.model_path).with_suffix(".json")


@dataclass(frozen=True)
class FaceScores:
    """Restricted softmax of N patches for one variant.

    Attributes:
        labels: ``K + 2`` labels: the variant's face ids in tile-set order, then
            ``"none"`` and ``"occluded"``.
        probs: ``(N, K + 2)`` float32, rows sum to 1.
    """

    labels: tuple[str, ...]
    probs: np.ndarray

    @property
    def p_none(self) -> np.ndarray:
        """``(N,)`` probability of "no face here"."""
        return self.probs[:, -2]

    @property
    def p_occluded(self) -> np.ndarray:
        """``(N,)`` probability that the face is hidden (hand, taller stack)."""
        return self.probs[:, -1]

    @property
    def face_probs(self) -> np.ndarray:
        """``(N, K)`` probabilities of each face (tile-set order)."""
        return self.probs[:, :-2]

    def best(self) -> tuple[list[str], np.ndarray]:
        """Most likely label of each patch and its probability."""
        k = self.probs.argmax(axis=1)
        return [self.labels[i] for i in k], self.probs[np.arange(len(k)), k]


@dataclass
class TileClassifier:
    """Opens the ONNX session once; :meth:`scores` classifies patches.

    Raises (on construction):
        BadInput: the model or its JSON is missing or unreadable.
    """

    settings: ClassifierSettings = field(default_factory=ClassifierSettings)

    def __post_init__(self) -> None:
        import onnxruntime as ort

        s = self.settings
        try:
            meta = json.loads(Path(s.meta).read_text())
        except OSError as exc:
            raise BadInput(f"cannot read model description {s.meta}: {exc.strerror or 'unreadable'}") from None
        except ValueError:
            raise BadInput(f"cannot read model description {s.meta}: not JSON text") from None
        self.meta = meta
        try:
            self.classes: tuple[str, ...] = tuple(str(c) for c in meta["classes"])
            self.crop = CropSettings.from_json(meta["input"])
            if not isinstance(meta.get("training", {}), dict):
                raise TypeError("training is not an object")
        except (KeyError, TypeError, ValueError) as exc:
            what = f"no {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
            raise BadInput(f"cannot read model description {s.meta}: {what}") from None
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = s.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if s.spinning else "0")
        try:
            self.session = ort.InferenceSession(str(s.model_path), sess_options=opts,
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise BadInput(f"cannot load model {s.model_path}: {' '.join(str(exc).split())}") from None
        inp = self.session.get_inputs()[0]
        self._input = inp.name
        dims = tuple(inp.shape[1:])
        outs = self.session.get_outputs()[0].shape
        if dims != self.crop.shape or len(outs) != 2 or outs[1] != len(self.classes):
            raise BadInput(f"model {s.model_path} does not match its description {s.meta}: it reads "
                           f"{'x'.join(map(str, dims))} patches into {outs[-1]} classes, the description says "
                           f"{'x'.join(map(str, self.crop.shape))} into {len(self.classes)}")
        index = {c: i for i, c in enumerate(self.classes)}
        self._columns: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        for v in VARIANTS:
            ids = [f.id for f in tileset(v).faces]
            missing = [f for f in ids if f"{v}/{f}" not in index]
            if missing:
                continue
            cols = np.array([index[f"{v}/{f}"] for f in ids] + [index[NONE], index[OCCLUDED]], np.int64)
            self._columns[v] = (tuple(ids) + (NONE, OCCLUDED), cols)

    @property
    def reads_blanked(self) -> bool:
        """Whether the model was trained on patches whose hidden part is
        blanked (``"blank"`` in its JSON's ``training``; session 21 on), so
        that ``vision.reconstruct.recognize`` may read a partly hidden face
        again that way (:func:`vision.crops.blank_hidden`)."""
        return bool(self.meta.get("training", {}).get("blank", 0))

    @property
    def variants(self) -> tuple[str, ...]:
        """Variants whose every face is a class of the model."""
        return tuple(self._columns)

    def variant_votes(self, patches: np.ndarray) -> dict[str, int]:
        """Which tile set each patch's face looks most like: the softmax over
        all the model's classes, unrestricted, and for every patch whose
        best class is a face (``variant/face-id``) one vote for its variant.

        Args:
            patches: ``(N, 3, h, w)`` float32 from :func:`vision.crops.extract_patches`.

        Returns:
            ``{variant: votes}`` for the variants that got any (patches whose
            best class is "none" or "occluded" vote for none).
        """
        if len(patches) == 0:
            return {}
        best = self.logits(patches).argmax(axis=1)
        votes: dict[str, int] = {}
        for k in best.tolist():
            name = self.classes[k]
            if "/" in name:
                v = name.split("/", 1)[0]
                votes[v] = votes.get(v, 0) + 1
        return votes

    def logits(self, patches: np.ndarray) -> np.ndarray:
        """Raw model output.

        Args:
            patches: ``(N, 3, h, w)`` float32 from :func:`vision.crops.extract_patches`
                with this model's :attr:`crop` settings.

        Returns:
            ``(N, len(classes))`` float32 logits.
        """
        x = np.ascontiguousarray(patches, dtype=np.float32)
        if len(x) == 0:
            return np.zeros((0, len(self.classes)), np.float32)
        b = self.settings.batch or len(x)
        outs = [self.session.run(None, {self._input: x[i:i + b]})[0] for i in range(0, len(x), b)]
        return np.concatenate(outs, axis=0)

    def scores(self, patches: np.ndarray, variant: str) -> FaceScores:
        """Softmax over ``variant``'s faces plus "none" and "occluded" only;
        a patch whose best class holds under
        ``settings.turn_average_below`` is read again turned 180 degrees and
        the two softmaxes averaged.

        Args:
            patches: ``(N, 3, h, w)`` float32 from :func:`vision.crops.extract_patches`.

        Returns:
            :class:`FaceScores` with ``(N, K + 2)`` float32 probabilities.

        Raises:
            BadInput: unknown variant, or one the model does not cover.
        """
        tileset(variant)  # raises BadInput for an unknown name
        if variant not in self._columns:
            raise BadInput(f"the model {self.settings.model_path} has no classes for variant {variant!r}")
        labels, cols = self._columns[variant]
        p = _softmax(self.logits(patches)[:, cols])
        unsure = np.flatnonzero(p.max(axis=1) < self.settings.turn_average_below)
        if len(unsure):
            # the same patch turned 180 degrees (per-patch normalisation is
            # unchanged by the turn): the average of the two reads
            turned = np.ascontiguousarray(np.asarray(patches, np.float32)[unsure, :, ::-1, ::-1])
            p[unsure] = 0.5 * (p[unsure] + _softmax(self.logits(turned)[:, cols]))
        return FaceScores(labels, p.astype(np.float32))


#: the classifier trained on windows whose hidden part is blanked
#: (``python -m vision.training.train_classifier --blank 1``,
#: 8-bit by ``vision.training.quantize``): ``recognize`` reads partly hidden
#: faces with it a second time (models/HISTORY.md, "Session 21")
BLANK_MODEL = MODELS_DIR / "tiles-blank.onnx"


@functools.lru_cache(maxsize=1)
def default_blank_classifier() -> "TileClassifier | None":
    """The bundled classifier for blanked windows (:data:`BLANK_MODEL`),
    opened once per process, or None when it is absent (partly hidden faces
    are then read once, as before session 21)."""
    if not BLANK_MODEL.exists():
        return None
    return TileClassifier(ClassifierSettings(model_path=BLANK_MODEL))


def _softmax(z: np.ndarray) -> np.ndarray:
    """Row softmax of ``(N, K)`` logits, float64."""
    z = np.asarray(z, np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# Names used by common physical Mindful (standard mahjong) sets and the
# real-tile corpus (../shared/corpus/real-tiles/SOURCE.txt) -> Mindful face ids.
_ALIASES = {"dots": "circles", "honors": "", "bonus": ""}
_HONOUR_SUIT = {"east": "wind", "south": "wind", "west": "wind", "north": "wind",
                "red": "dragon", "green": "dragon", "white": "dragon",
                "spring": "season", "summer": "season", "autumn": "season", "winter": "season",
                "plum": "flower", "orchid": "flower", "chrysanthemum": "flower", "bamboo": "flower"}


def profile_label_to_face(label: str, variant: str) -> str | None:
    """The variant's face id an enrolled label stands for, or None.

    Accepted: the face id itself (any case), ``"variant/face-id"``, and for
    Mindful the standard-set names ``dots-N``, ``honors-east`` ...,
    ``bonus-plum`` ... (the real-tile corpus' naming).
    """
    ids = {f.id.lower(): f.id for f in tileset(variant).faces}
    key = label.strip().lower()
    if key.startswith(variant + "/"):
        key = key[len(variant) + 1:]
    if key in ids:
        return ids[key]
    if variant == "mindful" and "-" in key:
        suit, rest = key.split("-", 1)
        if suit in _ALIASES:
            suit = _ALIASES[suit] or _HONOUR_SUIT.get(rest, "")
            cand = f"{suit}-{rest}"
            return ids.get(cand)
    return None


class ProfileFaceReader:
    """Reads face identities with an enrolled tile profile (``companion
    enroll``, :mod:`vision.enroll`) instead of the bundled classes; presence
    still comes from the bundled model's "none" / "occluded" outputs.

    Each candidate slot's face is compared with the profile's face
    templates (:func:`vision.enroll.template_scores`) in a window cut with
    :data:`vision.enroll.TEMPLATE_MARGIN` round the face by
    :func:`vision.crops.extract_raw`, so a tile lying off its slot is met
    where it lies; a profile without templates (enrolled before session 23)
    classifies the face cropped without margin with the embeddings
    (:func:`vision.enroll.label_probabilities`).  Labels map to face ids by
    :func:`profile_label_to_face` (unmapped labels give no face).
    Bench (``bench/bench_profile_recognize.py``, visible tiles read right):
    templates 94.1-99.4 % per tile set (with the second read of partly
    hidden faces, :meth:`masked_face_probs`), the embeddings 73.6-86.3 %
    (``models/MODEL_CARD.md``, "Reading a whole board with a profile").

    Raises (on construction):
        BadInput: unreadable profile, one made with another embedding model,
            or one none of whose labels names a face of ``variant`` (a
            profile of another tile set: every face would come back null).
    """

    def __init__(self, profile_path, variant: str) -> None:
        from vision import enroll
        from vision.embedding import INPUT_HW, Embedder

        self.variant = variant
        self.profile = enroll.Profile.load(profile_path)
        self.embedder = Embedder()
        enroll.check_model(self.profile, self.embedder)
        self.crop = CropSettings(height=INPUT_HW[0], width=INPUT_HW[1], margin=0.0, prefilter_above=99.0)
        #: how much of each side of its enrolled photos each label's face
        #: fills (:meth:`label_scores`); NaN until a photo has shown it
        self.label_share = np.full(len(self.profile.labels), np.nan)
        self.face_ids = [f.id for f in tileset(variant).faces]
        named = sum(1 for label in self.profile.labels if profile_label_to_face(label, variant))
        if not named:
            shown = ", ".join(self.profile.labels[:3]) + (", ..." if len(self.profile.labels) > 3 else "")
            raise BadInput(f"profile {profile_path}: none of its {len(self.profile.labels)} labels ({shown}) "
                           f"names a {variant} face; was it enrolled for another tile set?")
        if 2 * named < len(self.profile.labels):
            # (a Love profile read as Mindful: its four seasons are Mindful faces too)
            raise BadInput(f"profile {profile_path}: only {named} of its {len(self.profile.labels)} labels name "
                           f"{variant} faces; was it enrolled for another tile set?")
        #: the profile's labels that name no face of ``variant`` (their tiles
        #: are never read: :meth:`unnamed_note`)
        self.unnamed = [label for label in self.profile.labels if not profile_label_to_face(label, variant)]
        self.path = profile_path

    def unnamed_note(self) -> str | None:
        """A note naming the profile's labels that name no face of the
        variant, or None: a typo in a label (``heart-1``) left every such
        tile read as another face, unsure, with no word (a break-test,
        session 58)."""
        if not self.unnamed:
            return None
        from companion.jsontext import name_text
        from companion.wording import count
        shown = ", ".join(repr(x) for x in self.unnamed[:4]) + (", ..." if len(self.unnamed) > 4 else "")
        return (f"{count(len(self.unnamed), 'label')} of the profile {name_text(self.path)} ({shown}) "
                f"{'names' if len(self.unnamed) == 1 else 'name'} no {self.variant} face: tiles enrolled under "
                f"{'it' if len(self.unnamed) == 1 else 'them'} are never read (enrol them again under the face ids "
                f"of tiles.json)")

    def face_probs(self, image_bgr: np.ndarray, quads: np.ndarray) -> np.ndarray:
        """``(N, K)`` face probabilities (tile-set order) for the ``(N, 4, 2)``
        quads, rows summing to 1: each profile label's probability
        (:func:`vision.enroll.template_probabilities`, or
        :func:`vision.enroll.label_probabilities` for a profile without
        templates) on its face, times the
        profile's gate (how sure it is the tile is one it knows); the rest
        (an unknown tile, or labels that name no face of the set) spread
        evenly over all faces, so the face reported for a tile the profile
        does not know carries a low confidence.  ``read_slots`` scales the
        rows by the classifier's face mass: whether a tile stands there stays
        the classifier's answer.  (Until session 7 each row held only the
        best label's confidence, the softmax share times the gate: 0.1-0.3
        for a 42-face set, so most tiles read as "face unseen", and some as
        empty.)"""
        from vision import enroll
        from vision.crops import extract_raw

        if len(quads) == 0:
            return np.zeros((0, len(self.face_ids)), np.float32)
        if self.profile.templates is not None:
            raw = extract_raw(image_bgr, quads, self.window)
            P, gate = enroll.template_probabilities(self.label_scores(raw))
        else:
            raw = extract_raw(image_bgr, quads, self.crop)
            P, gate = enroll.label_probabilities(list(raw), self.profile, self.embedder)
        return self._on_faces(P, gate)

    @property
    def window(self) -> CropSettings:
        """The window slots are cut in: the face plus
        :data:`vision.enroll.TEMPLATE_MARGIN` of its size on every side,
        resampled so the face is as large as in the templates."""
        from vision import enroll

        th, tw = self.profile.templates.shape[1:3]
        m = enroll.TEMPLATE_MARGIN
        return CropSettings(height=int(round(th * (1 + 2 * m))), width=int(round(tw * (1 + 2 * m))),
                            margin=m, prefilter_above=99.0)

    def label_scores(self, raw: np.ndarray, hidden: np.ndarray | None = None) -> np.ndarray:
        """``(N, C) float32`` correlation of each window with each label's
        template, each label at the share of its photos its face fills.

        Photos cropped by hand keep a border round the tile, each its own,
        so a face fills less of its template than of a slot's window.  A
        label whose share is known (:attr:`label_share`) is compared with its
        template trimmed to that share (:func:`vision.enroll.trimmed_templates`);
        a label whose share is not known yet is compared at every share of
        :data:`vision.enroll.TEMPLATE_SCALES` and with its template of
        photos whose border of another colour was cut off each side
        (:attr:`CUT`, :func:`vision.enroll.trim_border`: an uneven border of
        a table), the best counting, and its
        share is kept once a window reads it, best of all labels, at
        :data:`vision.enroll.SHARE_KEPT_ABOVE` or more.  A referee's reader
        so learns each face's share as the face first shows clearly.  (A
        window that a known face already matches at that level tries the
        unknown ones at the share most known faces have only: after the first photos
        a read costs about what one share does.)

        Args:
            raw: ``(N, H, W, 3)`` windows cut with :attr:`window`.
            hidden: optional ``(N, H, W)`` bool masks of the part hidden
                (:func:`vision.enroll.masked_template_scores` then).
        """
        from vision import enroll

        def score_rows(rows, templates):
            if hidden is None:
                return enroll.template_scores(raw[rows], templates)
            return enroll.masked_template_scores(raw[rows], hidden[rows], templates)

        def score(templates):
            return score_rows(np.arange(len(raw)), templates)

        n, c = len(raw), len(self.profile.labels)
        out = np.full((n, c), -1.0, np.float32)
        share_at = np.ones((n, c))
        if n == 0:
            return out
        known = ~np.isnan(self.label_share)
        unknown = np.flatnonzero(~known)
        usual = 1.0
        if known.any():                       # the share most known faces have
            values, counts = np.unique(self.label_share[known], return_counts=True)
            usual = float(values[counts.argmax()])
        # every label at its share (an unknown one at the usual share), in one comparison
        first = np.where(known, self.label_share, usual)
        out[:] = score(np.stack([self._trimmed(float(first[k]))[k] for k in range(c)]))
        share_at[:] = first
        if len(unknown) and hidden is None:
            # windows that no known face matches well try the unknown faces at
            # every other share (not a partly hidden face's: what is left of it
            # is too little to tell shares apart)
            explained = (out[:, known].max(axis=1) >= enroll.SHARE_KEPT_ABOVE) if known.any() else np.zeros(n, bool)
            rows = np.flatnonzero(~explained)
            others = [sh for sh in self._shares if sh != usual]
            if len(rows) and others:
                got = score_rows(rows, np.concatenate([self._trimmed(sh)[unknown] for sh in others]))
                got = got.reshape(len(rows), len(others), len(unknown))
                k = got.argmax(axis=1)
                best = np.take_along_axis(got, k[:, None, :], axis=1)[:, 0]
                cur = out[np.ix_(rows, unknown)]
                better = best > cur
                out[np.ix_(rows, unknown)] = np.where(better, best, cur)
                share_at[np.ix_(rows, unknown)] = np.where(better, np.asarray(others)[k], share_at[np.ix_(rows, unknown)])
        if n and hidden is None:
            best = out.argmax(axis=1)
            for k in np.flatnonzero(out[np.arange(n), best] >= enroll.SHARE_KEPT_ABOVE):
                if np.isnan(self.label_share[best[k]]):
                    self.label_share[best[k]] = share_at[k, best[k]]
        return out

    #: the share that stands for the templates of the photos with their
    #: border of another colour cut off (``Profile.templates_cut``)
    CUT = 0.0

    @property
    def _shares(self) -> tuple[float, ...]:
        """The shares a face whose share is not known yet is tried at:
        :data:`vision.enroll.TEMPLATE_SCALES`, then :attr:`CUT` when the
        profile has cut templates."""
        from vision import enroll

        return enroll.TEMPLATE_SCALES + ((self.CUT,) if self.profile.templates_cut is not None else ())

    def _trimmed(self, share: float) -> np.ndarray:
        from vision import enroll

        cache = self.__dict__.setdefault("_trim_cache", {})
        if share not in cache:
            cache[share] = (self.profile.templates_cut if share == self.CUT
                            else enroll.trimmed_templates(self.profile.templates, share))
        return cache[share]

    @property
    def reads_hidden(self) -> bool:
        """Whether :meth:`masked_face_probs` can read partly hidden faces (a
        profile with templates)."""
        return self.profile.templates is not None

    def masked_face_probs(self, image_bgr: np.ndarray, quads: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        """:meth:`face_probs` of partly hidden faces, compared with the
        templates on the part of their window in sight only
        (:func:`vision.enroll.masked_template_scores`).

        Args:
            image_bgr: ``(H, W, 3)`` uint8 BGR photo.
            quads: ``(N, 4, 2)`` face quads, px.
            hidden: ``(N, h, w)`` bool masks on the grid of :attr:`window`
                (``vision.reconstruct.window_hidden_masks`` with that crop).

        Returns:
            ``(N, K) float32``, rows summing to 1, as :meth:`face_probs`.

        Raises:
            ValueError: a profile without templates, or masks of another shape.
        """
        from vision import enroll
        from vision.crops import extract_raw

        if not self.reads_hidden:
            raise ValueError("a profile without templates reads no partly hidden faces")
        if len(quads) == 0:
            return np.zeros((0, len(self.face_ids)), np.float32)
        raw = extract_raw(image_bgr, quads, self.window)
        if hidden.shape != raw.shape[:3]:
            raise ValueError(f"hidden masks of shape {hidden.shape} for windows of shape {raw.shape[:3]}")
        scores = self.label_scores(raw, hidden)
        return self._on_faces(*enroll.template_probabilities(scores))

    def _on_faces(self, P: np.ndarray, gate: np.ndarray) -> np.ndarray:
        """Label probabilities times the gate, on the set's faces; the rest
        spread evenly (see :meth:`face_probs`)."""
        out = np.zeros((len(P), len(self.face_ids)), np.float32)
        col = {f: k for k, f in enumerate(self.face_ids)}
        for c, label in enumerate(self.profile.labels):
            face = profile_label_to_face(label, self.variant)
            if face is not None:
                out[:, col[face]] += P[:, c] * gate
        out += np.maximum(0.0, 1.0 - out.sum(axis=1, keepdims=True)) / out.shape[1]
        return out
