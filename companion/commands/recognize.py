"""``companion recognize IMAGE --variant V --layout L [--camera FILE] --json
[--annotate OUT.png]``: the board read from one photo (../shared/CONTRACT.md,
"Commands that outside checks run").

Prints ``{"mat_found": true, "tiles": [{"slot", "present", "face",
"confidence", "free"}, ...]}``, one entry per layout slot in layout order.
An unreadable image exits 2, a photo without the mat exits 3 (one line on
stderr, no JSON).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from companion.cli import word_arg
from companion.commands.images import read_image
from companion.commands.paths import refuse_overwriting_inputs
from companion.errors import BadInput
from companion.tiles import VARIANTS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recognize", help="read the board (present tiles, faces, free flags) from one photo")
    p.add_argument("image", metavar="IMAGE", help="photo of the mat (any format OpenCV reads)")
    p.add_argument("--variant", required=True, type=word_arg, choices=VARIANTS, help="tile set on the table")
    p.add_argument("--layout", required=True, help="built-in name or a .layout/.map/.json path")
    p.add_argument("--map-name", help="map to read from a GNOME .map file holding several")
    p.add_argument("--camera", metavar="FILE", help="camera JSON (companion calibrate); guessed when absent")
    p.add_argument("--mat", metavar="MAT.json", help="mat spec (companion print-mat); the standard A2 mat when absent")
    p.add_argument("--tiles", metavar="PROFILE",
                   help="enrolled tile profile (companion enroll) for a physical set; faces are read with it")
    p.add_argument("--annotate", metavar="OUT.png", help="also write the photo with the referee overlay")
    p.add_argument("--json", action="store_true", help="print the contract's JSON (the only output format)")
    p.set_defaults(func=_recognize)


def _recognize(args) -> int:
    from companion.cli import print_json
    from companion.layout_files import load_layout

    if args.annotate is not None:
        try:
            layout_file = args.layout if Path(args.layout).is_file() else None
            check_picture_path(args.annotate, [args.image, args.camera, args.mat, args.tiles, layout_file])
        except OSError as exc:          # a folder on the way that cannot be searched, a name too long
            raise BadInput(f"cannot write {args.annotate}: {exc.strerror or exc}") from None
    layout = load_layout(args.layout, args.map_name)
    from companion.layouts import check_on_mat
    check_on_mat(layout)
    image = read_image(args.image)
    from companion.commands.vision_setup import load_camera, load_mat
    camera = load_camera(args.camera) if args.camera else None
    spec = load_mat(args.mat) if args.mat else load_mat(None)
    from vision.faces import ProfileFaceReader, TileClassifier
    classifier = TileClassifier()
    reader = ProfileFaceReader(args.tiles, args.variant) if args.tiles else None
    if reader is not None and reader.unnamed_note():
        print(f"companion recognize: note: {reader.unnamed_note()}", file=sys.stderr)
    from vision.reconstruct import recognize
    from companion.errors import MatNotFound
    try:
        rec = recognize(image, args.variant, layout, camera=camera, classifier=classifier, spec=spec,
                        face_reader=reader)
    except MatNotFound as exc:
        from vision.reconstruct import missing_mat_hint
        hint = missing_mat_hint(image, spec, camera)
        if not hint:
            raise
        raise MatNotFound(f"{exc}{hint}") from None
    if args.annotate:
        from vision.overlay import draw_overlay
        write_picture(args.annotate, draw_overlay(image, rec))
    print_json(rec.to_json())
    return 0


def write_picture(path: str, picture) -> None:
    """Write a ``(H, W, 3) uint8`` BGR picture (an overlay) to ``path``, in
    the format its extension names: encoded by OpenCV, written by Python, so
    a failure is one line (check the path first: :func:`check_picture_path`).

    Raises:
        BadInput: OpenCV cannot encode that format, or the file cannot be written.
    """
    import cv2

    suffix = Path(path).suffix
    try:
        ok, encoded = cv2.imencode(suffix, picture)
    except cv2.error:
        ok = False
    if not ok:
        raise BadInput(f"cannot write {path}: OpenCV cannot encode a {suffix} image")
    from companion.files import write_whole
    write_whole(path, encoded.tobytes(), create=True)      # a missing folder is made, as for every output


def check_picture_path(annotate: str, inputs, option: str = "--annotate") -> None:
    """Refuse, before any work, an output path (``--annotate``, ``find-mat
    --draw``) an overlay could not be written to, or one that would overwrite
    a file being read (the photo, the evidence a referee may need, or the
    camera, mat, layout or profile file).  The image is encoded by OpenCV and
    written by Python (:func:`write_picture`), so a failure at the end is one
    line too.

    Args:
        annotate: the option's value.
        inputs: paths of the files being read (None entries are skipped).
        option: the option's name, for the messages.

    Raises:
        BadInput: no file name, a folder, a pipe or device, a missing or
            unwritable folder, an extension OpenCV cannot write a colour
            image to, or one of ``inputs``.
    """
    import os

    if not annotate.strip():
        raise BadInput(f"{option} needs a file name, e.g. {option} board.png")
    path = Path(annotate)
    if path.is_dir():
        raise BadInput(f"cannot write {annotate}: it is a folder; give a file name such as board.png")
    if path.exists() and not path.is_file():
        raise BadInput(f"cannot write {annotate}: it is not a plain file (a pipe or a device); give a file name "
                       "such as board.png")
    folder = path.parent
    if not folder.is_dir():
        from companion.commands.paths import check_can_write
        check_can_write(option, annotate)      # the folder is made when the picture is written
    if not _encodes(path.suffix):
        raise BadInput(f"cannot write {annotate}: not an image extension OpenCV writes a colour picture to, "
                       "such as .png or .jpg")
    refuse_overwriting_inputs(option, annotate, inputs)
    if folder.is_dir() and not (os.access(path, os.W_OK) if path.exists() else os.access(folder, os.W_OK)):
        why = ("the file cannot be written (read-only)" if path.exists()
               else f"the folder {folder} cannot be written (read-only, or another user's)")
        raise BadInput(f"cannot write {option} {annotate}: {why}; give a file in a folder you can write")


def _encodes(suffix: str) -> bool:
    """Whether OpenCV encodes a small BGR picture as ``suffix`` (``.png``):
    a trial ``cv2.imencode`` with OpenCV's log silenced (some formats, such
    as ``.pgm``, take grey pictures only and log an error).  Only the
    extension reaches OpenCV: ``cv2.haveImageWriter`` crashed on a file name
    holding bytes that are not UTF-8."""
    import cv2
    import numpy as np

    if not suffix or not suffix.isascii() or not suffix[1:].isalnum():
        return False
    from cv2.utils import logging as cvlog

    level = cvlog.getLogLevel()
    cvlog.setLogLevel(cvlog.LOG_LEVEL_SILENT)
    try:
        ok, _ = cv2.imencode(suffix, np.zeros((4, 4, 3), np.uint8))
    except cv2.error:
        ok = False
    finally:
        cvlog.setLogLevel(level)
    return bool(ok)
