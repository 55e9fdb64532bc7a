"""Is there a tile in this slot?  A second, small ONNX model for the presence
of tiles in stacks, where the face classifier alone cannot tell.

The face classifier (:mod:`vision.faces`) reads a window just larger than the
slot's face.  On a stacked slot that is not enough: when the upper tile has
been taken, the tile below shows its face only 20 mm lower, and with the
camera nearly overhead and far away that face lands almost exactly in the
upper slot's window (parallax ``20 mm * r / D``, a few px).  What tells the two
apart lies around the face: the walls of the neighbours round a hole, their
shadows falling into it, the stack's own sides and its shadow on the lower
layer.  So this model sees a wide window (the face plus half a face on every
side) at the slot's own height AND the same window one layer lower, stacked as
six channels, and answers one logit: "a tile stands in this slot".

:func:`vision.reconstruct.reconstruct` asks it, layer by layer from the top,
about the **candidate** slots (:func:`candidates`: slots on a raised layer,
and slots near a taller slot of the layout, which a tilted view may hide in
part) that no tile found present covers, and about any slot whose window the
face classifier reads as "occluded" (in a steep view a neighbour's side can
fill an empty slot's window).  Elsewhere the face classifier decides alone.

Training: ``python -m vision.training.train_presence`` (synthetic scenes, see
:mod:`vision.training.presence_data`); the model card
(``models/MODEL_CARD.md``, "Presence model") gives the data and accuracy.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion.errors import BadInput
from vision.crops import CropSettings, extract_raw, normalise

from vision import MODELS_DIR  # the checkout's models/, or the copy installed with the package

#: geometry of each of the two windows: the face plus half a face of context
#: on every side, 64 x 48 px (rows down the 40 mm side).
PRESENCE_CROP = CropSettings(height=64, width=48, margin=0.5, std_floor=12.0)
#: a taller slot this close (half-units, both axes) can hide part of a slot.
NEAR_HALF_UNITS = 4


def candidates(slots) -> np.ndarray:
    """``(N,) bool``: the slots the presence model judges.

    A slot is a candidate when it lies on a raised layer (``z >= 1``: a tile
    taken from it exposes the tile below, 20 mm lower) or when a slot of a
    higher layer lies within :data:`NEAR_HALF_UNITS` half-units in x and y (a
    taller stack beside it can hide part of its face in a tilted view).

    Args:
        slots: ``N`` slots ``(x, y, z)``.

    Returns:
        A new array (the work is cached per layout: a referee asks once per
        frame for the same slots).
    """
    return _candidates(tuple(tuple(int(v) for v in t) for t in slots)).copy()


@functools.lru_cache(maxsize=32)
def _candidates(slots: tuple) -> np.ndarray:
    s = np.asarray(slots, np.int64).reshape(-1, 3)
    if len(s) == 0:
        return np.zeros(0, bool)
    raised = s[:, 2] >= 1
    d = np.abs(s[:, None, :2] - s[None, :, :2]).max(axis=2)
    near_taller = ((d <= NEAR_HALF_UNITS) & (s[None, :, 2] > s[:, None, 2])).any(axis=1)
    return raised | near_taller


def window_quads(slots, spec, pose) -> np.ndarray:
    """The two windows of each slot: its face at its own height and one layer lower.

    Args:
        slots: ``N`` slots ``(x, y, z)``.
        spec: ``vision.mat.MatSpec``.
        pose: ``vision.pose.MatPose``.

    Returns:
        ``(2, N, 4, 2) float32`` image px: ``[0]`` at the slot's height
        ``20 (z + 1)`` mm, ``[1]`` at ``20 z`` mm (the mat itself for ``z = 0``).
    """
    from vision.pose import project_slot_faces

    s = np.asarray([tuple(t) for t in slots], np.float64).reshape(-1, 3)
    low = s.copy()
    low[:, 2] -= 1
    q = project_slot_faces(np.concatenate([s, low]), spec, pose).astype(np.float32)
    return q.reshape(2, len(s), 4, 2)


def presence_raw(image_bgr: np.ndarray, quads2: np.ndarray) -> np.ndarray:
    """Cut both windows of every slot (no normalisation).

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        quads2: ``(2, N, 4, 2)`` from :func:`window_quads`.

    Returns:
        ``(N, 2, h, w, 3)`` uint8 BGR (``h, w`` of :data:`PRESENCE_CROP`).
    """
    q = np.asarray(quads2, np.float32)
    n = q.shape[1]
    raw = extract_raw(image_bgr, q.reshape(-1, 4, 2), PRESENCE_CROP)
    return raw.reshape(2, n, *raw.shape[1:]).transpose(1, 0, 2, 3, 4)


def presence_input(raw: np.ndarray) -> np.ndarray:
    """Model input from :func:`presence_raw` output: each window normalised as
    the face classifier's patches (:func:`vision.crops.normalise`), the two
    stacked as channels.

    Returns:
        ``(N, 6, h, w)`` float32 (BGR of the own-height window, then BGR of the
        lower one).
    """
    n = raw.shape[0]
    h, w = raw.shape[2:4]
    x = normalise(raw.reshape(n * 2, h, w, 3), PRESENCE_CROP)
    return x.reshape(n, 6, h, w)


@dataclass(frozen=True)
class PresenceSettings:
    """Where the presence model lives and how onnxruntime runs it.

    Attributes:
        model_path: the ``.onnx`` file (its JSON beside it, same stem).
        threads: onnxruntime intra-op threads.
        symmetric_below: a slot whose log-odds lie within this of even is
            looked at again with both windows turned 180 degrees (the tile
            placed the other way round), and with ``symmetric_looks`` 3 also
            mirrored left-right and top-bottom, and the log-odds of the looks
            are averaged (test-time augmentation by the symmetries the model
            was trained with, ``train_presence._augment``).  0 looks again
            at none.
        symmetric_looks: 1 (turned; the default since session 19), 2 (and
            mirrored left-right) or 3 (and mirrored top-bottom); 0 as
            ``symmetric_below`` 0.  Session 11 chose four looks within 2 of
            even on the validation windows
            (:mod:`vision.training.presence_data`, seed 1 with shadows,
            21 349 windows; seed 5 without, 10 242): 98.31 -> 98.51 % and
            97.15 -> 97.38 %; averaging every window gave the same.  Session
            19 measured whole photos (``bench/tune_reconstruct.py``'s counts:
            right / wrong slots / faces missed / wrong faces): development
            photos 1000-1179 and 1400-1579, four looks within 2: 234 / 223 /
            218 / 185, about 3.7 ms a photo more than one look within 2
            (234 / 226 / 218 / 187); none: 232 / 245 / 226 / 194; one look
            within 3 (chosen): 234 / 221 / 214 / 185, 3.1 ms a photo less
            than four within 2; on photos 1200-1349 and 1600-1749, 188 / 222
            / 194 / 171 (four within 2) against 188 / 224 / 195 / 173 (one
            within 3; within 4: 187 / 226 / 197 / 176; two looks within 2:
            188 / 217 / 192 / 169, 0.8 ms dearer); on the independent renderer's
            photos 0-159 (``bench/bench_altrender.py``) 125 against 128
            entirely right.

    Raises:
        ValueError: ``symmetric_looks`` outside 0-3.
    """

    model_path: Path = MODELS_DIR / "presence.onnx"
    threads: int = 2
    symmetric_below: float = 3.0
    symmetric_looks: int = 1

    def __post_init__(self) -> None:
        if self.symmetric_looks not in (0, 1, 2, 3):
            raise ValueError(f"symmetric_looks must be 0-3, not {self.symmetric_looks!r}")


@dataclass
class PresenceModel:
    """The presence model behind one onnxruntime session.

    Raises (on construction):
        BadInput: the model or its JSON description is missing or unreadable.
    """

    settings: PresenceSettings = field(default_factory=PresenceSettings)

    def __post_init__(self) -> None:
        import onnxruntime as ort

        path = Path(self.settings.model_path)
        try:
            self.meta = json.loads(path.with_suffix(".json").read_text())
        except OSError as exc:
            raise BadInput(f"cannot read model description {path.with_suffix('.json')}: "
                           f"{exc.strerror or 'unreadable'}") from None
        except ValueError:
            raise BadInput(f"cannot read model description {path.with_suffix('.json')}: not JSON text") from None
        crop = CropSettings.from_json(self.meta["input"])
        if crop != PRESENCE_CROP:
            raise BadInput(f"{path}: window geometry {crop} is not this version's {PRESENCE_CROP}")
        self.bias = float(self.meta.get("logit_bias", 0.0))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.settings.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise BadInput(f"cannot load model {path}: {' '.join(str(exc).split())}") from None
        self._input = self.session.get_inputs()[0].name

    def logits(self, x: np.ndarray) -> np.ndarray:
        """``(N,) float32`` log-odds "a tile stands here" for ``(N, 6, h, w)``
        inputs from :func:`presence_input` (the JSON's ``logit_bias`` added)."""
        x = np.ascontiguousarray(x, np.float32)
        if len(x) == 0:
            return np.zeros(0, np.float32)
        return self.session.run(None, {self._input: x})[0].reshape(-1) + np.float32(self.bias)

    def slot_logits(self, image_bgr: np.ndarray, slots, spec, pose) -> np.ndarray:
        """Log-odds of presence for ``slots`` seen in ``image_bgr`` under ``pose``.

        Returns:
            ``(N,) float32``.
        """
        return self.window_logits(presence_raw(image_bgr, window_quads(slots, spec, pose)))

    def window_logits(self, raw: np.ndarray) -> np.ndarray:
        """Log-odds of presence for windows cut by :func:`presence_raw`
        (``(N, 2, h, w, 3) uint8``), those within
        ``settings.symmetric_below`` of even averaged over their looks (as
        cut, turned 180 degrees, then with ``settings.symmetric_looks`` 2 or
        3 mirrored left-right, mirrored top-bottom).

        Returns:
            ``(N,) float32``.
        """
        raw = np.asarray(raw)
        q = self.logits(presence_input(raw))
        unsure = np.flatnonzero(np.abs(q) < self.settings.symmetric_below)
        if len(unsure) and self.settings.symmetric_looks:
            r = raw[unsure]
            # turned, mirrored left-right, mirrored top-bottom (= turned and
            # mirrored): (3k, 2, h, w, 3), both heights' windows alike
            looks = [r[:, :, ::-1, ::-1], r[:, :, :, ::-1], r[:, :, ::-1, :]][:self.settings.symmetric_looks]
            more = self.logits(presence_input(np.ascontiguousarray(np.concatenate(looks)))).reshape(len(looks), -1)
            q[unsure] = (q[unsure] + more.sum(axis=0)) / (1.0 + len(looks))
        return q


def default_presence_model() -> PresenceModel | None:
    """The bundled model, or None when ``models/presence.onnx`` is absent
    (recognition then falls back to the face classifier alone)."""
    if not PresenceSettings().model_path.exists():
        return None
    return PresenceModel()
