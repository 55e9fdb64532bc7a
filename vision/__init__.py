"""Camera side of the companion: one module per stage, pure functions over numpy arrays.

``mat`` (the printed mat, mm <-> mat-image px, slot geometry), ``markers``
(ArUco detection), ``pose`` (camera model, mat pose, projection of slots at
their layer height) and ``calibration`` (ChArUco camera calibration).  Images
are ``uint8`` BGR ``(H, W, 3)``; lengths on the mat are millimetres, image
coordinates are pixels with pixel centres at integer coordinates (OpenCV).

onnxruntime's usage telemetry (on by default in its Linux builds since 1.29)
is turned off here, before any model is opened, unless ``ORT_DISABLE_TELEMETRY``
is already set: the companion watches people's tables and sends nothing
anywhere.  (With a home folder it cannot write, the telemetry also printed a
warning on every run.)

:data:`MODELS_DIR` is where the ONNX models are read from: the checkout's
top-level ``models/`` (an editable install, the tests), or else the copy a
wheel or ``pip install .`` carries inside the package (``vision/_models``,
mapped there by setup.py).
"""

import os as _os

_os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from pathlib import Path as _Path

_CHECKOUT_MODELS = _Path(__file__).resolve().parents[1] / "models"
MODELS_DIR = (_CHECKOUT_MODELS if (_CHECKOUT_MODELS / "tiles.onnx").exists()
              else _Path(__file__).resolve().parent / "_models")
