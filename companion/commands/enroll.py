"""``companion enroll``, ``classify`` and ``print-enrollment-sheet``: bring your own tiles.

    companion enroll --crops DIR --labels LABELS.csv --out PROFILE [--json]
    companion enroll --sheet PHOTO [PHOTO] --variant V --out PROFILE [--camera FILE]
    companion classify --profile PROFILE IMAGE... [--json]
    companion print-enrollment-sheet --variant V [--json]

See ../shared/CONTRACT.md.  LABELS.csv has the columns ``image,label`` (a
header row naming them; further columns are ignored); image paths are relative
to DIR unless absolute, labels are any non-empty strings.  The profile is one
.npz file (format in :mod:`vision.enroll`).  Bad input (missing or unreadable
CSV, a row naming a missing or unreadable image, no labelled images, a
missing, foreign or corrupt profile) exits 2 with one line on stderr.
``classify`` echoes each IMAGE's name as given; bytes of a name that are
not UTF-8 are shown as ``\\xNN`` (:func:`companion.jsontext.name_text`),
so the JSON is strict.
"""

from __future__ import annotations

import csv
import io
import os
import sys
import time
from pathlib import Path

from companion.cli import word_arg
from companion.commands.images import expand_patterns, file_too_large, read_image
from companion.commands.paths import check_can_write, make_parent_folder, refuse_overwriting_inputs
from companion.errors import BadInput
from companion.jsontext import name_text
from companion.wording import count
from companion.files import check_input_file


def register(sub) -> None:
    """Add the ``enroll`` and ``classify`` parsers."""
    p = sub.add_parser("enroll", help="learn a physical tile set from labelled photos of single tiles")
    p.add_argument("--crops", type=Path, help="folder of tile photos")
    p.add_argument("--labels", type=Path, help="CSV with columns image,label")
    p.add_argument("--sheet", type=Path, nargs="+", metavar="PHOTO",
                   help="instead of --crops/--labels: 1-2 photos of the enrolment sheet "
                        "(see print-enrollment-sheet) laid on the mat")
    p.add_argument("--variant", type=word_arg, help="the sheet's variant (with --sheet); with --crops, every "
                                                     "label must then name one of its faces")
    p.add_argument("--camera", type=Path, default=None, help="camera JSON (with --sheet)")
    p.add_argument("--out", required=True, help="profile file to write (.npz)")
    p.add_argument("--model", type=Path, default=None, help="embedding .onnx (default: bundled)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_enroll)

    p = sub.add_parser("classify", help="recognise photos of single tiles with an enrolled profile")
    p.add_argument("--profile", required=True, type=Path, help="profile from `companion enroll`")
    # (kept as typed, not as a Path: the JSON echoes each name as given,
    # "./a.png" included, and an empty name is refused by name)
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--model", type=Path, default=None, help="embedding .onnx (default: bundled)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_classify)

    p = sub.add_parser("print-enrollment-sheet",
                       help="where to lay one tile of each face on the mat for `enroll --sheet`")
    p.add_argument("--variant", required=True, type=word_arg, help="love, candy, mindful or word")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_sheet)


#: the smallest photo of one tile read (px on its shorter side): under this a
#: picture cannot hold a tile face worth telling apart (the embedding model
#: resizes whatever it gets, so a 1 x 1 dot would still get a label)
MIN_TILE_PX = 16


#: a photo of one tile is kept at most this large (px on its longer side):
#: the embedding reads it at 96 x 72 px and the face templates at 32 x 24,
#: so more detail is never used, while a phone's full 12 MP photo kept whole
#: took 1.6 s to enrol (its border trimmed at full size) and 53 MB of memory
#: a photo until the end (a break-test: 40 such photos, 54 s and 2.1 GB).
MAX_TILE_PX = 640


def read_tile_photo(path: Path):
    """One photo of a single tile, ``(H, W, 3) uint8`` BGR, shrunk by area
    averaging to :data:`MAX_TILE_PX` on its longer side when larger
    (:func:`shrunk_tile`).

    Raises:
        BadInput: unreadable (:func:`companion.commands.images.read_image`),
            or smaller than :data:`MIN_TILE_PX` on a side.
    """
    if not os.path.lexists(path):
        hint = case_hint(Path(path))
        if hint:
            raise BadInput(f"cannot read image {path}: no such file{hint}")
    img = read_image(path)
    h, w = img.shape[:2]
    if min(h, w) < MIN_TILE_PX:
        raise BadInput(f"{path} is {w}x{h} px: too small to hold a tile face (a photo of one tile needs at least "
                       f"{MIN_TILE_PX} px on each side)")
    return shrunk_tile(img)


def shrunk_tile(img, longest: int = MAX_TILE_PX):
    """``img`` resized (``cv2.INTER_AREA``, aspect kept) so its longer side
    is ``longest`` px, or ``img`` itself when it is no larger.

    Args:
        img: ``(H, W, 3) uint8``.
        longest: the most px on the longer side.

    Returns:
        ``(h, w, 3) uint8``, each side at least 1 px.
    """
    import cv2

    h, w = img.shape[:2]
    if max(h, w) <= longest:
        return img
    scale = longest / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return cv2.resize(img, size, interpolation=cv2.INTER_AREA)


#: a photo to enrol whose grey levels spread less than this (standard
#: deviation) is one flat colour: it shows no face to learn.
FLAT_BELOW = 1.0


def refuse_flat(path: Path, image) -> None:
    """Refuse a photo of one flat colour, or of noise
    (:func:`vision.enroll.neighbour_correlation`), as a tile to enrol: it
    holds no face (its face template would be blank, or match nothing).

    Raises:
        BadInput: one line naming the file.
    """
    import cv2

    from vision.enroll import NOISE_BELOW, neighbour_correlation

    if float(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).std()) < FLAT_BELOW:
        raise BadInput(f"{path} is one flat colour: it shows no tile face to learn (crop the photo to the face)")
    if neighbour_correlation(image) < NOISE_BELOW:
        raise BadInput(f"{path} is noise: it shows no tile face to learn")


def read_labels_csv(path: Path) -> list[tuple[str, str]]:
    """Rows (image, label) of a labels CSV.

    Raises:
        BadInput: missing or unreadable file, no ``image``/``label`` header,
            an empty image or label cell, a label with a control character
            (:func:`vision.enroll.label_control_character`: spaces of any
            kind and zero-width joiners are a label's own),
            an image name with a NUL byte, a row with more cells than the
            header (an unquoted comma), or no rows.

    Labels come back in Unicode's composed form (NFC), without spaces or
    invisible format characters at their ends
    (:func:`vision.enroll.label_trimmed`), so one label written composed and
    decomposed, or copied with a zero-width space after it, is one label; a
    label of nothing visible is an empty label.
    """
    from vision.enroll import label_control_character, label_trimmed

    check_input_file(path, "labels CSV")
    if path.is_dir():
        raise BadInput(f"labels CSV {path} is a folder: give the CSV file (columns image,label)")
    if not path.is_file():
        raise BadInput(f"labels CSV not found: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        if path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise BadInput(f"cannot read labels CSV {path}: it is UTF-16 text (as Excel saves \"Unicode Text\"); "
                           "save it as \"CSV UTF-8\"") from None
        raise BadInput(f"cannot read labels CSV {path}: not UTF-8 text (byte {exc.start}); "
                       "save it as UTF-8") from None
    except OSError as exc:
        raise BadInput(f"cannot read labels CSV {path}: {exc.strerror or 'unreadable'}") from None
    head = text[:200]
    if head and head.count("\x00") >= len(head) // 3:
        # UTF-16 without its byte order mark decodes as UTF-8 with a NUL
        # after every ASCII letter ("i\x00m\x00a\x00g\x00e\x00"); a NUL
        # or two in a name are named on their own line below
        raise BadInput(f"cannot read labels CSV {path}: it holds NUL bytes, as UTF-16 text does (Excel's "
                       "\"Unicode Text\"); save it as \"CSV UTF-8\"")
    reader = csv.reader(io.StringIO(text, newline=""))
    # blank lines before the header are skipped, as blank rows among the
    # images are, and so is Excel's "sep=," line naming the separator
    header = next((rec for rec in reader if any(c.strip() for c in rec)
                   and not _excel_separator_line(rec)), None)
    if header is None:
        raise BadInput(f"labels CSV is empty: {path}")
    cols = [h.strip().lower() for h in header]
    if "image" not in cols or "label" not in cols:
        json_kind = _json_kind(text)
        if json_kind:
            raise BadInput(f"labels CSV {path} is {json_kind}, not a CSV: give a CSV file with a header row "
                           "image,label and a line per photo (e.g. hearts-1.jpg,hearts-1)")
        raise BadInput(f"labels CSV {path} needs a header row with columns image,label; "
                       f"got {','.join(header)}{_separator_hint(header)}")
    for name in ("image", "label"):
        if cols.count(name) > 1:
            # (the first was read and the other dropped: a break-test, session 58)
            raise BadInput(f"labels CSV {path}: its header names the column {name} {cols.count(name)} times "
                           f"({','.join(header)}): keep one")
    ii, li = cols.index("image"), cols.index("label")
    rows = []
    for rec in reader:
        n = reader.line_num              # (the file's line, blank lines and quoted line breaks counted)
        if not rec or all(not c.strip() for c in rec):
            continue
        if [c.strip().lstrip("\ufeff").strip().lower() for c in rec] == cols or _excel_separator_line(
                [c.lstrip("\ufeff") for c in rec]):
            # two CSVs joined, each with its header (and Excel's byte order
            # mark and "sep=," line): the second header was read as a photo
            # named "image" (a break-test, session 58)
            continue
        if len(rec) <= max(ii, li):
            raise BadInput(f"{path} line {n}: expected columns image,label")
        if len(rec) > len(header) and any(c.strip() for c in rec[len(header):]):
            raise BadInput(f"{path} line {n}: {len(rec)} cells, the header has {len(header)}: a label holding "
                           'a comma must be quoted ("red, dragon")')
        # ("image, label": no leading space kept).  A label is kept in
        # Unicode's composed form (NFC): "é" typed on one line and copied
        # decomposed (a Mac's file names) on the next is one label, not two;
        # nor does an invisible character at its ends (a zero-width space
        # copied from a web page) make it another (label_trimmed)
        image, label = rec[ii].strip(), label_trimmed(rec[li])
        if not image or not label:
            raise BadInput(f"{path} line {n}: empty image or label")
        bad = label_control_character(label)
        if bad is not None:
            raise BadInput(f"{path} line {n}: label {label[:40]!r} holds a control character (U+{ord(bad):04X})")
        if "\x00" in image:              # (no file name holds one: the system refuses it)
            raise BadInput(f"{path} line {n}: image name {image[:40]!r} holds a NUL byte")
        rows.append((image, label))
    if not rows:
        raise BadInput(f"labels CSV {path} lists no images")
    return rows


def _excel_separator_line(rec: list[str]) -> bool:
    """Whether a CSV record is Excel's first line naming the separator
    (``sep=,`` reads as ``["sep=", ""]``; ``sep=;`` as ``["sep=;"]``)."""
    first = rec[0].strip().lower() if rec else ""
    return len(rec) <= 2 and first.startswith("sep=") and len(first) <= 5 and not any(c.strip() for c in rec[1:])


def _json_kind(text: str) -> str:
    """What a labels "CSV" that is a JSON document is, in words (``"a tile
    set's description (companion print-tiles' tiles.json)"``, or ``"a JSON
    file"``), else "": print-tiles' tiles.json names each face's image and
    id, and was taken for the labels, drawing "got {"."""
    import json

    from companion import jsontext
    from companion.commands.vision_setup import _KIND_NAMES, _file_kind

    if not text.lstrip().startswith(("{", "[")):
        return ""
    try:
        obj = jsontext.loads(text)
    except (json.JSONDecodeError, ValueError, RecursionError):
        return ""
    kind = _file_kind(obj)
    return _KIND_NAMES[kind] if kind else "a JSON file"


def _separator_hint(header: list[str]) -> str:
    """For a labels CSV header that is not ``image,label``: a hint when its
    one cell holds the two names separated by a semicolon or a tab (Excel
    saves "CSV" with semicolons where a comma is the decimal mark, and
    "Unicode Text" with tabs), else ""."""
    if len(header) != 1:
        return ""
    for sep, name in ((";", "semicolons"), ("\t", "tabs")):
        cells = [c.strip().lower() for c in header[0].split(sep)]
        if "image" in cells and "label" in cells:
            return f" (its cells are separated by {name}: save it with commas)"
    return ""


def image_path(crops: Path, name: str) -> Path:
    """The photo a labels CSV's row names: ``crops / name`` (or ``name``
    where absolute), else the same name as a file system that keeps other
    forms would hold it: Unicode's composed or decomposed form (``é`` in a
    CSV, its file unzipped from a Mac decomposed) or Windows' ``\\`` between
    folders (a CSV written on Windows).  A break-test (session 58) found both
    refused as "no such file".  A name that differs by case is not taken
    (two files may differ so); :func:`case_hint` names it."""
    import unicodedata
    path = Path(name) if Path(name).is_absolute() else crops / name
    if os.path.lexists(path):
        return path
    tries = [name.replace("\\", "/")] if "\\" in name and os.sep == "/" else []
    for base in [name] + tries:
        for form in ("NFC", "NFD"):
            other = unicodedata.normalize(form, base)
            cand = Path(other) if Path(other).is_absolute() else crops / other
            if other != name and os.path.lexists(cand):
                return cand
    return path


def case_hint(path: Path) -> str:
    """``"; there is NAME: ..."`` where the folder of the missing ``path``
    holds a file of that name in other case (``Upper.JPG`` for
    ``upper.jpg``), else ``""``."""
    try:
        want = path.name.casefold()
        with os.scandir(path.parent) as entries:
            for entry in entries:
                if entry.name.casefold() == want:
                    return f"; there is {entry.name}: names are told apart by case here"
    except OSError:
        pass
    return ""


def refuse_paths_elsewhere(crops: Path, csv_path: Path, names: list[str], paths: list[Path]) -> None:
    """Refuse a labels CSV whose image names are missing under ``--crops``
    but found beside the CSV or under the current folder: the names were
    written relative to another folder, and the line says which and how to
    point at it, rather than only "no such file".

    Args:
        crops: the ``--crops`` folder.
        csv_path: the labels CSV.
        names: each row's image name as written.
        paths: each row's image under ``crops`` (absolute names as they are).

    Raises:
        BadInput: the first such image, naming the folder it was found in.
    """
    for name, path in zip(names, paths):
        if Path(name).is_absolute() or os.path.lexists(path):
            continue
        for folder, what in ((csv_path.parent, "the labels CSV's folder"), (Path("."), "the current folder")):
            if (folder / name).is_file() and not _same_folder(folder, crops):
                raise BadInput(f"cannot read image {path}: no such file; {name} is in {what} ({folder}): image "
                               f"names in the CSV are relative to --crops, so give --crops {folder}")
        return                              # (read_image names a file missing everywhere)


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_two_labels(csv_path: Path, paths: list[Path], labels: list[str]) -> None:
    """Refuse a labels CSV that gives one image two different labels: the
    same file named twice (another spelling, a link) or two files with the
    same bytes (a copy).  A photo shows one tile, so one of the labels is a
    mistake, and enrolling both would teach the profile that one look is two
    faces.  The same image listed again with the same label is accepted.

    Args:
        csv_path: the CSV, for the message.
        paths: each row's image file.
        labels: each row's label.

    Raises:
        BadInput: one line naming the image(s) and both labels.
    """
    import hashlib

    seen: dict[object, tuple[Path, str]] = {}
    for path, label in zip(paths, labels):
        try:
            if not path.is_file() or file_too_large(path):
                continue              # a pipe would hang, /dev/zero or a video of gigabytes fill the memory
            key: object = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:               # missing or unreadable: read_image refuses it by name
            continue
        if key in seen and seen[key][1] != label:
            first, other = seen[key]
            same = (f"image {path}" if os.path.abspath(first) == os.path.abspath(path)
                    else f"images {first} and {path} (the same picture)")
            raise BadInput(f"{csv_path} labels the {same} both {other!r} and {label!r}; a photo shows one tile: "
                           "give it one label")
        seen.setdefault(key, (path, label))


def _embedder(model: Path | None):
    from vision.embedding import Embedder

    try:
        return Embedder(model)
    except FileNotFoundError:
        raise BadInput(f"embedding model not found: {model or 'the bundled one'}") from None
    except ValueError as exc:      # an ONNX model of another network
        raise BadInput(f"cannot load embedding model {model}: {exc}") from None
    except Exception:  # onnxruntime raises its own types for a bad file
        raise BadInput(f"cannot load embedding model {model}: not an ONNX model this companion can run") from None


def cmd_enroll(args) -> int:
    """Handler of ``companion enroll``."""
    from companion.cli import print_json
    from vision.enroll import enroll

    t0 = time.perf_counter()
    if not args.out.strip():           # (Path("") would name the current folder)
        raise BadInput("--out needs a file name, e.g. --out my-tiles.npz")
    # a profile that could not be written is refused before the work (a file
    # on the way, a folder of that name, a device), not after it; checked as
    # typed, before Path drops a trailing "/" (--out profiles/ wrote a file
    # named profiles)
    check_can_write("--out", args.out, plain_file=True, example="tiles.npz")
    args.out = Path(args.out)
    if args.sheet:
        if args.crops or args.labels:
            raise BadInput("give either --sheet PHOTO... --variant V or --crops DIR --labels CSV")
        refuse_overwriting_inputs("--out", str(args.out),
                                  [str(p) for p in args.sheet] + [getattr(args, "camera", None)])
        refuse_writing_over_other_files(args.out)
        images, labels = _sheet_images(args)
    else:
        if not args.crops or not args.labels:
            raise BadInput("enroll needs --crops DIR and --labels CSV (or --sheet PHOTO... --variant V)")
        if args.camera is not None:
            # (it was taken and ignored, a missing file too: a break-test, session 58)
            raise BadInput("--camera goes with --sheet (the mat's photo); photos of single tiles in --crops "
                           "need none")
        crops: Path = args.crops
        if crops.exists() and not crops.is_dir():
            raise BadInput(f"--crops {crops} is a file: give the folder that holds the crops")
        if not crops.is_dir():
            raise BadInput(f"crops folder not found: {crops}")
        rows = read_labels_csv(args.labels)
        paths = [image_path(crops, img) for img, _ in rows]
        refuse_paths_elsewhere(crops, args.labels, [img for img, _ in rows], paths)
        refuse_overwriting_inputs("--out", str(args.out), [str(args.labels), *map(str, paths)])
        refuse_writing_over_other_files(args.out)
        refuse_two_labels(args.labels, paths, [lab for _, lab in rows])
        if args.variant:
            refuse_labels_off_variant(args.labels, [lab for _, lab in rows], args.variant)
        images = [read_tile_photo(p) for p in paths]
        for p, img in zip(paths, images):
            refuse_flat(p, img)
        labels = [lab for _, lab in rows]
    profile = enroll(images, labels, _embedder(args.model))
    make_parent_folder("--out", str(args.out))
    try:
        profile.save(args.out)
    except OSError as exc:
        raise BadInput(f"cannot write profile {args.out}: {exc.strerror or exc}") from None
    secs = time.perf_counter() - t0
    if args.out.suffix.lower() in (".json", ".csv", ".txt", ".png", ".jpg", ".jpeg"):
        # a break-test (session 54): --out prof/base.json wrote a NumPy
        # archive under a name that promises text, without a word
        print(f"companion enroll: note: {name_text(args.out)} holds a NumPy .npz archive (not "
              f"{args.out.suffix.lstrip('.').upper()}), whatever its name; classify --profile reads it",
              file=sys.stderr)
    if args.json:
        print_json({"profile": name_text(args.out), "images": len(images), "labels": profile.labels,
                    "seconds": round(secs, 3)})
    else:
        print(f"enrolled {count(len(profile.labels), 'label')} from {count(len(images), 'image')} into "
              f"{args.out} in {secs:.1f}s")
    return 0


def refuse_labels_off_variant(csv_path: Path, labels: list[str], variant: str) -> None:
    """With ``--variant`` and ``--crops``, refuse labels that name no face
    of that tile set (:func:`vision.faces.profile_label_to_face`: a face id
    in any case, ``variant/face-id``, Mindful's standard names): a typo such
    as ``heart-1`` for ``hearts-1`` was enrolled, and every hearts tile then
    read as another face with no word (a break-test, session 58).

    Raises:
        BadInput: one line naming the first such labels and the set's face ids.
    """
    from companion.tiles import tileset
    from vision.faces import profile_label_to_face

    faces = [f.id for f in tileset(variant).faces]
    off = list(dict.fromkeys(lab for lab in labels if profile_label_to_face(lab, variant) is None))
    if off:
        shown = ", ".join(repr(x) for x in off[:4]) + (", ..." if len(off) > 4 else "")
        raise BadInput(f"{name_text(csv_path)}: {count(len(off), 'label')} ({shown}) "
                       f"{'names' if len(off) == 1 else 'name'} no {variant} face "
                       f"(its faces: {', '.join(faces[:3])} ... {faces[-1]}; `companion print-tiles --variant "
                       f"{variant}` lists them in tiles.json): correct them, or leave out --variant to enrol "
                       "labels of your own")


#: what a file's first bytes say it is, for :func:`refuse_writing_over_other_files`
_FILE_KINDS = ((b"SQLite format 3\x00", "an SQLite database (a game ledger?)"), (b"\xff\xd8\xff", "a JPEG picture"),
               (b"\x89PNG\r\n\x1a\n", "a PNG picture"), (b"%PDF", "a PDF"), (b"PK\x03\x04", "a zip archive"))


def refuse_writing_over_other_files(out: Path) -> None:
    """Refuse ``--out`` where it names a file that holds something other
    than a tile profile: enrolling again writes over an older profile, and
    over an empty file, but never over anything else (a break-test, session
    58: ``--out club.db`` replaced a game's ledger, and ``--out photo.jpg``
    a photo, with exit 0).  Read without loading it: a profile whose
    arrays are damaged is still a profile, and is written over.

    Raises:
        BadInput: one line naming the file and what it holds.
    """
    import json
    import zipfile
    import zlib

    import numpy as np

    from vision.enroll import PROFILE_FORMAT
    try:
        if not out.is_file() or out.stat().st_size == 0:
            return
        with open(out, "rb") as fh:
            head = fh.read(40)
    except OSError:
        return              # (the write that follows names what is wrong)
    try:
        # (a handle of our own: np.load leaves a file it opened itself open
        # when it is no zip)
        with open(out, "rb") as fh, np.load(fh, allow_pickle=False) as z:
            if json.loads(str(z["meta"])).get("format") == PROFILE_FORMAT:
                return
    except (OSError, ValueError, EOFError, KeyError, AttributeError, TypeError, RecursionError,
            zipfile.BadZipFile, zlib.error):
        pass
    if head.startswith(b"PK\x03\x04") and head[30:38] == b"meta.npy":
        return              # (a profile cut short or damaged: its first array is its meta, as save writes it)
    what = next((kind for magic, kind in _FILE_KINDS if head.startswith(magic)), "a file that is not a tile profile")
    raise BadInput(f"--out {name_text(out)} already holds {what}: enroll writes over an older tile profile only; "
                   "give another name, or move that file away first")


def cmd_classify(args) -> int:
    """Handler of ``companion classify``."""
    from companion.cli import print_json
    from vision.enroll import NOISE_BELOW, Profile, classify, neighbour_correlation

    profile = Profile.load(args.profile)
    args.images = expand_patterns(args.images)       # (a shell that passed a pattern on as typed)
    images = [read_tile_photo(p) for p in args.images]
    results = classify(images, profile, _embedder(args.model))
    # (a file name whose bytes are not UTF-8 is shown with them as \xNN: name_text)
    out = [{"image": name_text(p), "label": lab, "confidence": round(conf, 4)}
           for p, (lab, conf) in zip(args.images, results)]
    import cv2
    for r, img in zip(out, images):
        if float(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).std()) < FLAT_BELOW:
            # one flat colour shows no face: whatever label is nearest, it is
            # no reading (a black, white or grey picture read 0.97 before)
            r["confidence"] = 0.0
            r["note"] = "one flat colour: no tile face in the picture"
        elif neighbour_correlation(img) < NOISE_BELOW:
            # random noise read 0.72 sure before (a break-test)
            r["confidence"] = 0.0
            r["note"] = "noise: no tile face in the picture"
    if args.json:
        print_json(out)
    else:
        for r in out:
            print(f"{r['image']}\t{r['label']}\t{r['confidence']:.2f}")
    return 0


def _faces(variant: str | None, needed_by: str) -> list[str]:
    from companion.tiles import tileset

    if not variant:
        raise BadInput(f"--variant is required {needed_by}")
    return [f.id for f in tileset(variant).faces]


def _sheet_images(args) -> tuple[list, list[str]]:
    """Tile crops and labels from 1-2 photos of the enrolment sheet."""
    from companion.commands.vision_setup import load_camera
    from vision.enroll import sheet_crops
    from companion.errors import MatNotFound
    from vision.mat import MatSpec

    faces = _faces(args.variant, "with --sheet")
    if len(args.sheet) > 2:
        raise BadInput("--sheet takes one or two photos")
    camera = load_camera(args.camera) if args.camera else None
    if len(args.sheet) == 2:
        try:
            # (a file of gigabytes is not read here: read_image below refuses it from its size)
            same = (not any(file_too_large(p) for p in args.sheet)
                    and Path(args.sheet[0]).read_bytes() == Path(args.sheet[1]).read_bytes())
        except OSError:
            same = False          # (read_image below names the unreadable one)
        if same:
            raise BadInput(f"--sheet {args.sheet[0]} and {args.sheet[1]} are the same photo; give two photos "
                           "of the sheet, or one")
    import numpy as np

    from vision.enroll import SHEET_ALIGN_MARGIN, SHEET_PAIR_MATCH_BELOW, aligned_sheet_crops
    windows = []
    spec = MatSpec.default()
    for path in args.sheet:
        img = read_image(path)
        # each line names the photo: of two, the one to take again
        try:
            windows.append(sheet_crops(img, spec, len(faces), camera, margin=SHEET_ALIGN_MARGIN))
        except MatNotFound as exc:
            # as recognize and find-mat: a mirrored picture (a phone's
            # front camera) is said to look mirrored, a small one small,
            # the calibration board the board (a break-test, session 56)
            from vision.reconstruct import missing_mat_hint
            raise MatNotFound(f"{path}: {exc}{missing_mat_hint(img, spec, camera)}") from None
        except BadInput as exc:
            raise BadInput(f"{path}: {exc}") from None
    if len(windows) == 1:
        h, w = windows[0][0].shape[:2]
        y0, x0 = (h - 160) // 2, (w - 120) // 2
        return [np.ascontiguousarray(c[y0:y0 + 160, x0:x0 + 120]) for c in windows[0]], list(faces)
    first, second, match = aligned_sheet_crops(windows[0], windows[1])
    if match < SHEET_PAIR_MATCH_BELOW:
        # (two photos of different sets, or of the sheet laid out twice
        # otherwise, were averaged face by face: a break-test, session 58)
        raise BadInput(f"--sheet {args.sheet[0]} and {args.sheet[1]} do not show the same tiles in their cells "
                       f"(they match at {match:.2f}, photos of one sheet at 0.8 or more): give two photos of one "
                       "sheet laid out as print-enrollment-sheet shows, or one")
    return first + second, faces + faces


def cmd_sheet(args) -> int:
    """Handler of ``companion print-enrollment-sheet``."""
    from companion.cli import print_json
    from vision.enroll import sheet_slots

    faces = _faces(args.variant, "(the sheet lays out that tile set's faces)")
    slots = sheet_slots(len(faces))
    if args.json:
        print_json({"variant": args.variant, "faces": [
            {"face": f, "slot": list(s), "cell": [s[0] // 2 + 1, s[1] // 2 + 1]}
            for f, s in zip(faces, slots)]})
        return 0
    print(f"Enrolment sheet, {args.variant}: lay one tile of each face face up on the mat's grid, "
          f"top of the face towards the mat's top edge, the long edge away from its printed caption and "
          f"50 mm scale bar (with that edge away from you the cells' labels read upright; a face upside down "
          f"is fine too).")
    print("Cells are counted from 1 at the grid's top-left cell (column, row); the mat prints "
          "each cell's half-unit slot x,y.")
    row = None
    for f, (x, y, _) in zip(faces, slots):
        if y != row:
            row = y
            print(f"row {y // 2 + 1}:")
        print(f"  column {x // 2 + 1:2d} (slot {x},{y}): {f}")
    print(f"Then photograph the mat (one or two photos) and run: companion enroll --sheet PHOTO "
          f"[PHOTO] --variant {args.variant} --out PROFILE.npz")
    return 0
