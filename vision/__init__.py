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
"""

import os as _os

_os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
