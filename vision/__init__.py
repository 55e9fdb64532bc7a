"""Camera side of the companion: one module per stage, pure functions over numpy arrays.

``mat`` (the printed mat, mm <-> mat-image px, slot geometry), ``markers``
(ArUco detection), ``pose`` (camera model, mat pose, projection of slots at
their layer height) and ``calibration`` (ChArUco camera calibration).  Images
are ``uint8`` BGR ``(H, W, 3)``; lengths on the mat are millimetres, image
coordinates are pixels with pixel centres at integer coordinates (OpenCV).
"""
