"""Setting up the camera side: ``print-mat``, ``print-board``, ``calibrate``, ``find-mat``.

``print-mat`` and ``calibrate`` are the contract's (../shared/CONTRACT.md,
"Files"); ``print-board`` writes the ChArUco calibration target and
``find-mat`` checks that a photo shows the mat (exit 3 when it does not).

The file readers here (:func:`load_camera`, :func:`load_mat`) are shared by
the other camera commands; photos are read by
:func:`companion.commands.images.read_image`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path

from companion import jsontext
from companion.cli import print_json
from companion.commands.images import expand_patterns, file_too_large, read_image
from companion.commands.paths import check_can_write, refuse_overwriting_inputs
from companion.errors import BadInput
from companion.files import OutputFiles, check_input_file


def _read_json(path: str | os.PathLike, what: str):
    p = Path(path)
    check_input_file(p, what)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise BadInput(f"cannot read {what} {p}: {why}") from None
    try:
        return jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{what} {p} is not valid JSON (line {exc.lineno}: {exc.msg})") from None


#: what :func:`_file_kind` names, for messages
_KIND_NAMES = {"camera": "a camera file (companion calibrate's camera.json)",
               "mat": "a mat file (companion print-mat's mat.json)",
               "board": "the calibration board's description (companion print-board's charuco_board.json)",
               "tiles": "a tile set's description (companion print-tiles' tiles.json)",
               "deal": "a deal (companion deal --json)",
               "layout": "a layout"}


def _file_kind(obj) -> str | None:
    """Which of the companion's JSON files ``obj`` (decoded) is, by the keys
    that only that kind has: ``"camera"`` (``camera_matrix``), ``"mat"``
    (``grid_tiles`` or ``markers`` beside ``size_mm``), ``"board"`` (``type``
    ``"charuco"``), ``"tiles"`` (``face_mm``), ``"deal"`` (``variant`` and
    ``tiles``), ``"layout"`` (``slots``), or None (none of these: the reader's
    own checks name what is missing)."""
    if not isinstance(obj, dict):
        return None
    if "camera_matrix" in obj:
        return "camera"
    if "size_mm" in obj and ("grid_tiles" in obj or "markers" in obj):
        return "mat"
    if obj.get("type") == "charuco":
        return "board"
    if "face_mm" in obj:
        return "tiles"
    if "variant" in obj and "tiles" in obj:
        return "deal"
    if "slots" in obj:
        return "layout"
    return None


def load_camera(path: str | os.PathLike | None):
    """The contract's camera JSON from ``path`` as a :class:`vision.pose.Camera`,
    or None when ``path`` is None (intrinsics will be guessed).

    Raises:
        BadInput: unreadable file, bad JSON or malformed camera (message names the file).
    """
    if path is None:
        return None
    from vision.pose import Camera

    import dataclasses

    obj = _read_json(path, "camera file")
    kind = _file_kind(obj)
    if kind not in (None, "camera"):
        raise BadInput(f"camera file {path} is {_KIND_NAMES[kind]}, not a camera file: give the camera.json "
                       f"that companion calibrate writes, or leave out --camera")
    try:
        camera = Camera.from_json(obj)
    except BadInput as exc:
        raise BadInput(f"camera file {path}: {str(exc).removeprefix('camera JSON: ')}") from None
    return dataclasses.replace(camera, file=os.fspath(path))


def load_mat(path: str | os.PathLike | None):
    """The mat spec from a ``mat.json`` (or a folder holding one), or the
    default A2 mat when ``path`` is None.

    Raises:
        BadInput: unreadable file, bad JSON or malformed mat spec (the
            message names the file given).
    """
    from vision.mat import MatSpec

    if path is None:
        return MatSpec.default()
    p = Path(path)
    if p.is_dir():
        p = p / "mat.json"
    obj = _read_json(p, "mat file")
    kind = _file_kind(obj)
    if kind not in (None, "mat"):
        use = "give it with --camera; " if kind == "camera" else ""
        raise BadInput(f"mat file {p} is {_KIND_NAMES[kind]}, not a mat file: {use}give the mat.json that "
                       f"companion print-mat writes with --mat, or leave out --mat for the standard mat")
    try:
        return MatSpec.from_json(obj)
    except BadInput as exc:
        raise BadInput(f"mat file {p}: {str(exc).removeprefix('mat.json: ')}") from None


# --------------------------------------------------------------------------- handlers

def _out_dir(path: str) -> Path:
    """The ``--out`` folder (created, where missing, by :class:`companion.files.OutputFiles`).

    Raises:
        BadInput: empty (``--out ""`` would quietly mean the current
            folder), or it exists and is not a folder.
    """
    if not str(path).strip():
        raise BadInput("--out needs a folder name, e.g. --out mat/")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise BadInput(f"--out {out} is not a folder")
    return out


def _png(image, px_per_mm: float, params=()) -> bytes:
    """``image`` encoded as PNG by OpenCV (the file is written by Python:
    one line on failure, and no OpenCV log on stderr), its resolution
    ``px_per_mm`` recorded (pHYs), so that it prints at its true size from
    an image viewer too."""
    import cv2

    from vision.art import png_with_px_per_mm

    ok, buf = cv2.imencode(".png", image, list(params))
    if not ok:  # pragma: no cover - cv2 failure
        raise BadInput("PNG encoding failed")
    return png_with_px_per_mm(buf.tobytes(), px_per_mm)


def _print_mat(args: argparse.Namespace) -> int:
    from vision.mat import MatSpec, render_mat, render_mat_pdf

    p = args.px_per_mm
    if not 4 <= p <= 12:
        raise BadInput(f"--px-per-mm must be between 4 and 12, got {p:.12g}")
    spec = MatSpec.default(px_per_mm=p)
    out = _out_dir(args.out)
    names = [spec.image, "mat.json", "mat.pdf", "mat-a4.pdf", "mat-letter.pdf"]
    with OutputFiles(out, names, what="the --out folder") as files:     # checked before the work, written together
        img = render_mat(spec)
        files.write(spec.image, _png(img, spec.px_per_mm))
        files.write("mat.json", (json.dumps(spec.to_json(), indent=1) + "\n").encode("utf-8"))
        files.write("mat.pdf", render_mat_pdf(spec, img, paper="full"))
        a4 = render_mat_pdf(spec, img, paper="a4")
        files.write("mat-a4.pdf", a4)
        letter = render_mat_pdf(spec, img, paper="letter")
        files.write("mat-letter.pdf", letter)
    from vision.mat import PAPERS_MM, marker_edge_mm, page_tiling
    over = {k: page_tiling(spec.size_mm, PAPERS_MM[k]).overlap_mm for k in PAPERS_MM}
    w, h = spec.size_mm
    edge = marker_edge_mm(spec)
    name = jsontext.name_text          # (bytes of a name that are not UTF-8 as \xNN, in text as in JSON)
    info = {"mat_png": name(out / spec.image), "mat_json": name(out / "mat.json"), "mat_pdf": name(out / "mat.pdf"),
            "mat_a4_pdf": name(out / "mat-a4.pdf"), "mat_letter_pdf": name(out / "mat-letter.pdf"),
            "size_mm": [w, h], "px_per_mm": p, "image_px": list(spec.image_size_px),
            "a4_pages": a4.count(b"/Type /Page "), "letter_pages": letter.count(b"/Type /Page "),
            "marker_edge_mm": round(edge, 3)}
    if args.json:
        print_json(info)
    else:
        sys.stdout.write(
            f"wrote {info['mat_png']} ({spec.image_size_px[0]} x {spec.image_size_px[1]} px at {p:g} px/mm) "
            f"and {info['mat_json']}\n"
            f"physical size {w:g} x {h:g} mm (A2 landscape): print {info['mat_pdf']} at 100% on A2 without "
            f"borders (markers lie {edge:g} mm from its edge: a printer that leaves a margin clips them; "
            f"never fit-to-page, which shrinks the grid),\n"
            f"or {info['mat_a4_pdf']} ({info['a4_pages']} A4 pages overlapping {over['a4'][0]:.0f} mm across and "
            f"{over['a4'][1]:.0f} mm down) or {info['mat_letter_pdf']} ({info['letter_pages']} US Letter pages, "
            f"{over['letter'][0]:.0f} and {over['letter'][1]:.0f} mm) at 100% "
            f"and tape them together, lining up the grid\n"
            f"check the 50 mm scale bar and that the grid measures "
            f"{spec.grid_size_mm[0]:g} x {spec.grid_size_mm[1]:g} mm\n")
    return 0


def _print_board(args: argparse.Namespace) -> int:
    import cv2
    from vision.calibration import PRINT_PX_PER_MM, board_json, render_charuco
    from vision.mat import image_pdf

    out = _out_dir(args.out)
    meta = board_json(PRINT_PX_PER_MM)
    names = [meta["image"], "charuco_board.json", "charuco_board.pdf"]
    with OutputFiles(out, names, what="the --out folder") as files:     # checked before the work, written together
        img = render_charuco(PRINT_PX_PER_MM)
        gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        files.write(meta["image"], _png(gray, PRINT_PX_PER_MM, [cv2.IMWRITE_PNG_BILEVEL, 0]))
        files.write("charuco_board.json", (json.dumps(meta, indent=1) + "\n").encode("utf-8"))
        files.write("charuco_board.pdf", image_pdf(gray, tuple(meta["page_mm"])))
    name = jsontext.name_text          # (bytes of a name that are not UTF-8 as \xNN)
    sys.stdout.write(f"wrote {name(out / meta['image'])}, {name(out / 'charuco_board.pdf')} and "
                     f"{name(out / 'charuco_board.json')}: "
                     f"print on A4 landscape at 100% (squares must measure {meta['square_mm']:g} mm)\n")
    return 0


def _distinct_views(paths) -> tuple[list[str], list[str]]:
    """``paths`` less any file whose bytes repeat an earlier one's (the same
    file named twice, a link or a copy: one view counted twice would weigh
    twice in the fit and inflate the count of views), and the ones left out
    (``"b.png (= a.png)"``).  Unreadable files are kept, for
    :func:`companion.commands.images.read_image` to refuse by name."""
    import hashlib

    seen: dict[str, str] = {}
    out, dropped = [], []
    for p in map(str, paths):
        try:
            if not Path(p).is_file() or file_too_large(p):
                # a pipe would hang, /dev/zero fill the memory; a video of
                # gigabytes too (read_image refuses it from its size)
                raise OSError("not a regular file, or too large")
            digest = hashlib.sha1(Path(p).read_bytes()).hexdigest()
        except OSError:
            out.append(p)
            continue
        if digest in seen:
            dropped.append(f"{p} (= {seen[digest]})")
            continue
        seen[digest] = p
        out.append(p)
    return out, dropped


#: an RMS reprojection error (px) above which ``calibrate`` warns: OpenCV's
#: calibration tutorials call a result "good" well under a pixel, and sharp
#: views of a flat print reach 0.1-0.5 px; several pixels mean the views do
#: not share one camera (a zoom or focus change) or the corners were found
#: badly (blur, a board not lying flat)
RMS_WARN_PX = 1.0


def _note(line: str) -> None:
    """Write a note or warning line on stderr, each byte of a file name in it
    that is not UTF-8 as ``\\xNN`` (:func:`companion.jsontext.name_text`), as
    the error lines and the JSON show it (it came out as ``\\udcNN``)."""
    sys.stderr.write(jsontext.name_text(line))


def _calibrate(args: argparse.Namespace) -> int:
    from vision.calibration import MIN_CORNERS, calibrate

    if not str(args.out).strip():
        raise BadInput("--out needs a file name, e.g. --out camera.json")
    args.images = expand_patterns(args.images)       # (a shell that passed a pattern on as typed)
    refuse_overwriting_inputs("--out", str(args.out), [str(p) for p in args.images])
    # before the work (calibration takes a while); a missing folder is made
    # when the file is written, as for every output
    check_can_write("--out", str(args.out), plain_file=True, example="camera.json")
    paths, repeated = _distinct_views(args.images)
    # read one at a time as the corners are looked for (vision.calibration.calibrate)
    images = [functools.partial(read_image, p) for p in paths]
    dropped: list[str] = []
    poor: list[tuple[str, float, float]] = []
    try:
        cam, rms, n = calibrate(images, names=paths, left_out=dropped, poor_fits=poor)
    except BadInput as exc:
        if not repeated:
            raise
        raise BadInput(f"{exc} ({len(repeated)} view{'s' if len(repeated) > 1 else ''} given twice counted once: "
                       f"{', '.join(repeated)})") from None
    out = Path(args.out)
    with OutputFiles(out.parent, [out.name], create=True) as files:    # (a full disk leaves the old file whole)
        files.write(out.name, (json.dumps(cam.to_json(), indent=1) + "\n").encode("utf-8"))
    K, d = cam.K, cam.dist
    if rms > RMS_WARN_PX:
        _note(f"companion calibrate: warning: the RMS reprojection error {rms:.2f} px is high (a good "
                         f"calibration stays under {RMS_WARN_PX:g} px): blurred views, a board not lying flat, or "
                         "a zoom or focus changed between the photos; the file was written, but take the views "
                         "again for a better one\n")
    if poor:         # one view of another zoom among good ones moved the focal length, under the RMS warning
        shown = ", ".join(f"{name} ({e:.2f} px)" for name, e, _ in poor[:5]) + (
            f" and {len(poor) - 5} more" if len(poor) > 5 else "")
        _note(f"companion calibrate: warning: {len(poor)} view{'s' if len(poor) > 1 else ''} "
                         f"fit{'' if len(poor) > 1 else 's'} the others poorly (their median {poor[0][2]:.2f} px): "
                         f"{shown}; a zoom or focus changed, or the board moved or bent? the file was written; "
                         f"calibrate again without {'them' if len(poor) > 1 else 'it'}\n")
    if repeated:     # (after success: a refusal stays one line)
        _note(f"companion calibrate: {len(repeated)} view{'s' if len(repeated) > 1 else ''} given twice "
                         f"left out: {', '.join(repeated)}\n")
    if dropped:      # named (a break-test saw only "over 10 of 11 views")
        shown = ", ".join(dropped[:5]) + (f" and {len(dropped) - 5} more" if len(dropped) > 5 else "")
        _note(f"companion calibrate: {len(dropped)} view{'s' if len(dropped) > 1 else ''} left out "
                         f"(no board with {MIN_CORNERS}+ corners off one line): {shown}\n")
    if args.json:
        print_json({"rms_px": rms, "views_used": n, "views": len(images), "views_left_out": dropped,
                    "views_fitting_poorly": [name for name, _, _ in poor],
                    "out": str(out), **cam.to_json()})
    else:
        sys.stdout.write(
            f"RMS reprojection error {rms:.3f} px over {n} of {len(images)} views\n"
            f"fx {K[0, 0]:.2f}  fy {K[1, 1]:.2f}  cx {K[0, 2]:.2f}  cy {K[1, 2]:.2f}  "
            f"(px, {cam.image_size[0]}x{cam.image_size[1]})\n"
            f"dist k1 {d[0]:.5f}  k2 {d[1]:.5f}  p1 {d[2]:.5f}  p2 {d[3]:.5f}  k3 {d[4]:.5f}\n"
            f"wrote {jsontext.name_text(out)}\n")
    return 0


def _find_mat(args: argparse.Namespace) -> int:
    from companion.errors import MatNotFound
    from vision.pose import draw_overlay, estimate_pose

    if args.draw is not None:
        from companion.commands.recognize import check_picture_path
        try:
            check_picture_path(args.draw, [args.image, args.camera, args.mat], "--draw")
        except OSError as exc:          # a folder on the way that cannot be searched, a name too long
            raise BadInput(f"cannot write {args.draw}: {exc.strerror or exc}") from None
    spec = load_mat(args.mat)
    camera = load_camera(args.camera)
    img = read_image(args.image)
    try:
        pose = estimate_pose(img, spec, camera)
    except MatNotFound as exc:
        from vision.reconstruct import missing_mat_hint
        hint = missing_mat_hint(img, spec, camera)
        if not hint:
            raise
        raise MatNotFound(f"{exc}{hint}") from None
    if args.draw is not None:
        from companion.commands.recognize import write_picture
        write_picture(args.draw, draw_overlay(img, spec, pose))
    info = {"mat_found": True, **pose.to_json()}
    if args.json:
        print_json(info)
    else:
        K = pose.camera.K
        c = pose.camera_centre_mm
        sys.stdout.write(
            f"mat found: {pose.n_markers} of {len(spec.markers)} markers, reprojection {pose.reprojection_px:.3f} px\n"
            f"camera at ({c[0]:.0f}, {c[1]:.0f}) mm, {-c[2]:.0f} mm above the mat, tilt {pose.tilt_deg:.1f} deg; "
            f"focal {K[0, 0]:.1f} px ({pose.camera.source})\n")
    return 0


def register(sub) -> None:
    """Add ``print-mat``, ``print-board``, ``calibrate`` and ``find-mat``."""
    p = sub.add_parser("print-mat", help="write the printable mat (mat.png, mat.json, mat.pdf, mat-a4.pdf, mat-letter.pdf)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write into (created if needed)")
    p.add_argument("--px-per-mm", type=float, default=5.0, metavar="P", help="mat.png resolution, 4-12 (default 5)")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.set_defaults(func=_print_mat)

    p = sub.add_parser("print-board", help="write the ChArUco calibration board (PNG, PDF, JSON)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write into (created if needed)")
    p.set_defaults(func=_print_board)

    p = sub.add_parser("calibrate", help="calibrate the camera from photos of the ChArUco board")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--out", required=True, metavar="camera.json", help="camera JSON to write")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_calibrate)

    p = sub.add_parser("find-mat", help="locate the mat in a photo (exit 3 when it is not there)")
    p.add_argument("image", metavar="IMAGE")
    p.add_argument("--camera", metavar="FILE", help="camera JSON from `companion calibrate`")
    p.add_argument("--mat", metavar="FILE", help="mat.json (default: the standard A2 mat)")
    p.add_argument("--draw", metavar="OUT.png", help="write the photo with the found grid drawn on it")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_find_mat)
