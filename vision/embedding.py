"""Tile-face embedding: a small CNN, run with onnxruntime, that maps a photo of
one tile to a unit vector; photos of the same face (in the same or another art
style) land close together, other faces far apart.

The network (models/embed_tiles.onnx, described by models/embed_tiles.json) was
trained on synthetic renders of the 42 standard faces in random art styles plus
the "dev" half of ../shared/corpus/real-tiles (vision/training/train_embedding.py);
see models/MODEL_CARD.md, "Enrollment (bring your own tiles)".  Enrolment and classification on top of
it live in :mod:`vision.enroll`.

:func:`normalise_tile` is the one crop-and-normalise function shared by
training and inference.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision import MODELS_DIR  # the checkout's models/, or the copy installed with the package
DEFAULT_MODEL = MODELS_DIR / "embed_tiles.onnx"

INPUT_HW = (96, 72)  # network input (height, width) in px; tiles are 3:4 portrait


def as_bgr(image: np.ndarray) -> np.ndarray:
    """Return an (H, W, 3) uint8 BGR view of a grey, BGR or BGRA uint8 image.

    Raises:
        ValueError: not a 2-D or 3-D uint8 array with 1, 3 or 4 channels, or empty.
    """
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.size == 0:
        raise ValueError("expected a non-empty uint8 image array")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.ndim == 3 and image.shape[2] == 1:
        return cv2.cvtColor(image[:, :, 0], cv2.COLOR_GRAY2BGR)
    raise ValueError(f"unsupported image shape {image.shape}")


def normalise_tile(image: np.ndarray, turn: bool = False) -> np.ndarray:
    """Crop-and-normalise one tile photo for the network.

    A landscape crop (width > height) is turned 90 degrees clockwise to
    portrait first (the 180-degree ambiguity that leaves is handled by
    ``turn`` and by :mod:`vision.enroll`).  The image is resized to
    :data:`INPUT_HW` with area averaging, then standardised per image (zero
    mean, unit standard deviation over all pixels and channels), so exposure
    and contrast do not matter but colour ratios survive.

    Args:
        image: (H, W, 3) uint8 BGR (grey or BGRA accepted), the tile's face
            filling most of the crop.
        turn: rotate by 180 degrees.
    Returns:
        (3, 96, 72) float32, channels in B, G, R order.
    Raises:
        ValueError: see :func:`as_bgr`.
    """
    img = as_bgr(image)
    h, w = img.shape[:2]
    if w > h:
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
    if turn:
        img = cv2.rotate(img, cv2.ROTATE_180)
    img = cv2.resize(img, (INPUT_HW[1], INPUT_HW[0]), interpolation=cv2.INTER_AREA)
    x = img.astype(np.float32) / 255.0
    x = (x - x.mean()) / (x.std() + 1e-3)
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class EmbedderInfo:
    """What a profile records about the embedding model."""

    name: str
    sha256: str
    dim: int
    input_hw: tuple[int, int]


class Embedder:
    """Opens the ONNX embedding network once and embeds tile photos.

    Args:
        model_path: the .onnx file (default models/embed_tiles.onnx); its JSON
            sidecar (same stem, .json) names the embedding size.
    Raises:
        FileNotFoundError: the model file is missing.
        ValueError: the model does not take ``(n, 3, 96, 72)`` inputs
            (:data:`INPUT_HW`): another network.
    """

    def __init__(self, model_path: Path | str | None = None, batch: int = 64):
        import onnxruntime as ort  # inference only; imported lazily to keep CLI start-up fast

        self.path = Path(model_path) if model_path else DEFAULT_MODEL
        if not self.path.is_file():
            raise FileNotFoundError(f"embedding model not found: {self.path}")
        meta_path = self.path.with_suffix(".json")
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        self._sess = ort.InferenceSession(str(self.path), sess_options=opts,
                                          providers=["CPUExecutionProvider"])
        inp = self._sess.get_inputs()[0]
        want = (3, *INPUT_HW)
        got = tuple(inp.shape[1:]) if len(inp.shape) == 4 else tuple(inp.shape)
        if got != want:          # (another network: the tile classifier, say, takes 3 x 48 x 36)
            raise ValueError(f"the model {self.path.name} takes inputs {list(inp.shape)}, not [n, 3, "
                             f"{INPUT_HW[0]}, {INPUT_HW[1]}]: it is not a tile embedding network")
        self._input = inp.name
        self.batch = batch
        dim = int(meta.get("embedding_dim", self._sess.get_outputs()[0].shape[-1]))
        self.info = EmbedderInfo(name=self.path.name, sha256=file_sha256(self.path), dim=dim,
                                 input_hw=INPUT_HW)

    def embed_arrays(self, x: np.ndarray) -> np.ndarray:
        """Embed already normalised inputs.

        Args:
            x: (N, 3, 96, 72) float32 from :func:`normalise_tile`.
        Returns:
            (N, D) float32, rows of unit length.
        """
        outs = []
        for i in range(0, len(x), self.batch):
            outs.append(self._sess.run(None, {self._input: x[i:i + self.batch]})[0])
        e = np.concatenate(outs, 0).astype(np.float32) if outs else np.zeros((0, self.info.dim),
                                                                             np.float32)
        return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)

    def embed(self, images: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Embed tile photos as they are and turned 180 degrees.

        Args:
            images: list of (H, W, 3) uint8 BGR tile photos.
        Returns:
            (upright, turned): two (N, D) float32 arrays of unit rows.
        """
        if not images:
            z = np.zeros((0, self.info.dim), np.float32)
            return z, z
        x0 = np.stack([normalise_tile(im) for im in images])
        x1 = x0[:, :, ::-1, ::-1].copy()  # 180 degrees of the normalised input
        e = self.embed_arrays(np.concatenate([x0, x1], 0))
        return e[: len(images)], e[len(images):]
