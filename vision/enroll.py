"""Bring your own tiles: learn a physical tile set from a few labelled photos
(enrolment) and recognise its faces (classification).

Method: every photo is embedded by :class:`vision.embedding.Embedder` as it is
and turned 180 degrees.  A label's prototype is the mean of its enrolled
embeddings after turning each one to agree with the others (prototypical
networks: Snell et al., "Prototypical Networks for Few-shot Learning",
NeurIPS 2017).  A query scores each label by the best cosine similarity over
both turns of the query and of the prototype, so upside-down tiles are
recognised whichever way the reference photos were taken.

Confidence: a softmax over the label scores with temperature ``temperature``
(how sure the winner is against the runner-up), times a logistic gate on the
winner's own score (``gate_center``, ``gate_width``) so that a face that is not
in the profile at all, which is far from every prototype, gets a low
confidence instead of a confident wrong label.  The defaults maximise the
AUROC of "right" against "wrong or not enrolled" for the synthetic-only
embedding on the dev half of ../shared/corpus/real-tiles (photos that network
never saw); bench/bench_enroll.py prints their effect on the held-out half.

Profile file (one small .npz, portable between machines; np.load with
allow_pickle=False):

    meta        0-d unicode: JSON {"format": "companion-tile-profile",
                "version": 1, "model": "embed_tiles.onnx", "model_sha256": ...,
                "embedding_dim": 128, "input_hw": [96, 72], "labels": [...],
                "counts": [...], "temperature": T, "gate_center": c,
                "gate_width": w}
    labels      (C,) unicode, label strings in first-seen order
    prototypes  (C, 2, D) float32 unit rows: [upright, turned] per label
    samples     (N, 2, D) float16 the enrolled embeddings [as given, turned]
    sample_label (N,) int32 index into labels
    templates   (C, 32, 24, 3) float16, optional (profiles enrolled since
                session 23): each label's face in colour (BGR), the mean of
                its photos turned to agree, each channel standardised
                (:func:`face_templates`)
    templates_cut (C, 32, 24, 3) float16, optional: the same from the photos
                with a border of another colour cut off (:func:`trim_border`)

Reading a board (``recognize --tiles``, the referee) compares each slot's face
with the templates rather than the embeddings (:func:`template_scores`):
normalised cross-correlation (OpenCV's ``TM_CCOEFF_NORMED``, the classic
template matching of Lewis, "Fast Normalized Cross-Correlation", 1995) over
a window a little larger than the face, so a tile lying up to 3 mm off its
slot is still met face to face.  On one set's own faces that is far surer
than the embedding, which was trained to tell faces apart across many sets
(``models/MODEL_CARD.md``, "Reading a whole board with a profile").  Single
photos (``companion classify``) keep the embedding: they may come from
another set, framed any way.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from companion import jsontext
from companion.errors import BadInput

PROFILE_FORMAT = "companion-tile-profile"
PROFILE_VERSION = 1

# Confidence calibration defaults (see module docstring); a profile stores its own copy.
TEMPERATURE = 0.08
GATE_CENTER = 0.65
GATE_WIDTH = 0.08

#: size (rows, columns) of a label's face template, px: about the size of the
#: faces in a 1280 x 720 photo of the whole mat (20-48 px wide).  On the
#: bench's photos (session 23, colour) 32 x 24 read as many faces right as
#: 48 x 36 (98.6 % of those fully in sight) at under half the work; 24 x 18
#: read 98.1 %.
TEMPLATE_HW = (32, 24)
#: the window a board slot is compared in: the face plus this share of its
#: size on every side (0.12 x 30 mm = 3.6 mm: tiles lie up to 3 mm off their
#: slots, ../shared/CONTRACT.md "Physical standard" and the scene generator).
TEMPLATE_MARGIN = 0.12
#: how much of each side of an enrolled photo its face may fill: a photo
#: cropped by hand keeps a border round the tile (``vision.faces.
#: ProfileFaceReader.label_scores`` compares a face whose share it does not
#: know yet at each of these, and keeps the share once a slot reads that
#: face, best of all, at SHARE_KEPT_ABOVE).
TEMPLATE_SCALES = (1.0, 0.93, 0.86, 0.8, 0.74, 0.68, 0.62)
SHARE_KEPT_ABOVE = 0.8
#: confidence of a template comparison: a softmax of the correlations with
#: this temperature, times a logistic gate on the best correlation (centre,
#: width).  On bench/bench_profile_recognize.py's photos (session 23) the
#: faces read right correlate at 0.905 (median; 0.69 at the 5th percentile)
#: and beat the runner-up by 0.12 (median), the faces read wrong by 0.016;
#: a face left out of the profile finds its best match at 0.76 (median).
#: With these values 44 of the 56 faces reported wrong there are reported
#: under 0.7 (marked for a look), and 153 of the 1501 right ones; with 0.03,
#: 0.7 and 0.05, 49 and 267 (11 needless looks a photo); with 0.02, 0.6 and
#: 0.04, 41 and 104.
TEMPLATE_TEMPERATURE = 0.02
TEMPLATE_GATE_CENTER = 0.65
TEMPLATE_GATE_WIDTH = 0.05


#: Unicode categories a label may not hold: control characters (Cc: NUL,
#: tab, a line feed ...), the line and paragraph separators (Zl, Zp) and
#: lone surrogates (Cs); one would break a line of ``classify``'s text
#: output.  Every other character is a label's own: spaces of any kind
#: (a no-break space copied from a web page, CJK's ideographic space) and
#: format characters (the zero-width joiners of emoji and of Persian or
#: Hindi words, right-to-left marks).
LABEL_REFUSED_CATEGORIES = ("Cc", "Zl", "Zp", "Cs")


#: invisible characters taken off a label's ends, as spaces are: a
#: zero-width space, the zero-width (non-)joiners, the word joiner and the
#: invisible operators, a byte order mark, a soft hyphen.  Inside a label
#: they stay (an emoji family's joiners, a Persian word's non-joiner), and
#: so do the marks of writing direction anywhere (a right-to-left mark
#: before a Hebrew label).
LABEL_EDGE_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"


def label_trimmed(label: str) -> str:
    """``label`` as a profile keeps it: in Unicode's composed form (NFC),
    without spaces of any kind or invisible characters
    (:data:`LABEL_EDGE_INVISIBLE`) at its ends, so that "a" typed and "a"
    copied from a web page with a zero-width space after it are one label;
    "" when nothing visible is left (only spaces and format characters:
    a re-test's label of one zero-width space was enrolled, and printed as
    nothing)."""
    import unicodedata

    label = unicodedata.normalize("NFC", label)
    while True:
        cut = label.strip().strip(LABEL_EDGE_INVISIBLE)
        if cut == label:
            break
        label = cut
    if all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in label):
        return ""
    return label


def label_control_character(label: str) -> str | None:
    """The first character of ``label`` in :data:`LABEL_REFUSED_CATEGORIES`,
    or None (a label fit to enrol and to print on one line)."""
    import unicodedata

    return next((ch for ch in label if unicodedata.category(ch) in LABEL_REFUSED_CATEGORIES), None)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def prototypes_from_embeddings(e0: np.ndarray, e1: np.ndarray, labels: list[str]
                               ) -> tuple[list[str], np.ndarray]:
    """Orientation-aligned mean prototypes.

    Args:
        e0: (N, D) float32 unit embeddings of the photos as given.
        e1: (N, D) the same photos turned 180 degrees.
        labels: N label strings.
    Returns:
        (names, prototypes): label names in first-seen order and a
        (C, 2, D) float32 array of unit rows, [:, 0] in the orientation of the
        label's first photo and [:, 1] turned.
    """
    names: list[str] = []
    for lab in labels:
        if lab not in names:
            names.append(lab)
    lab_arr = np.array(labels, dtype=object)
    protos = np.zeros((len(names), 2, e0.shape[1]), np.float32)
    for c, name in enumerate(names):
        idx = np.flatnonzero(lab_arr == name)
        a, b = [e0[idx[0]]], [e1[idx[0]]]
        for i in idx[1:]:
            ref = np.mean(a, 0)
            if e0[i] @ ref >= e1[i] @ ref:
                a.append(e0[i])
                b.append(e1[i])
            else:
                a.append(e1[i])
                b.append(e0[i])
        protos[c, 0] = _unit(np.mean(a, 0))
        protos[c, 1] = _unit(np.mean(b, 0))
    return names, protos


def label_scores(q0: np.ndarray, q1: np.ndarray, prototypes: np.ndarray) -> np.ndarray:
    """Cosine similarity of each query to each label, best over the turns.

    Args:
        q0, q1: (M, D) unit query embeddings, as given and turned.
        prototypes: (C, 2, D) from :func:`prototypes_from_embeddings`.
    Returns:
        (M, C) float32 in [-1, 1].
    """
    p = prototypes.reshape(-1, prototypes.shape[-1])  # (2C, D)
    s = np.maximum(q0 @ p.T, q1 @ p.T).reshape(len(q0), -1, 2)
    return s.max(-1).astype(np.float32)


def confidences(scores: np.ndarray, temperature: float = TEMPERATURE,
                gate_center: float = GATE_CENTER, gate_width: float = GATE_WIDTH
                ) -> tuple[np.ndarray, np.ndarray]:
    """Best label index and its confidence in [0, 1] for each row of scores.

    confidence = softmax(scores / temperature)[best] * sigmoid((best_score -
    gate_center) / gate_width).  With one label only the softmax factor is 1
    and the gate alone decides.
    """
    best = scores.argmax(1)
    p, gate = softmax_and_gate(scores, temperature, gate_center, gate_width)
    return best, (p[np.arange(len(scores)), best] * gate).astype(np.float32)


def softmax_and_gate(scores: np.ndarray, temperature: float, gate_center: float, gate_width: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(P, gate)`` of :func:`confidences`: ``P (M, C) float32`` the softmax
    of ``scores / temperature`` (rows summing to 1), ``gate (M,) float32``
    the logistic of ``(best score - gate_center) / gate_width``, in [0, 1].

    Computed in float64 with each row's best score taken off before the
    division, so any finite calibration a profile holds (a temperature of
    1e-300 made every confidence NaN, a gate width that small warned of a
    division by zero on stderr) gives numbers: a softmax or a gate that
    saturates is 0 or 1, quietly.

    Args:
        scores: ``(M, C)`` similarities.
        temperature, gate_width: finite, above 0.
        gate_center: finite.
    """
    s = np.asarray(scores, np.float64)
    if s.size == 0:
        return np.zeros(s.shape, np.float32), np.zeros(len(s), np.float32)
    top = s.max(1, keepdims=True)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        p = np.exp((s - top) / temperature)                    # the best is exp(0) = 1
        p /= p.sum(1, keepdims=True)
        gate = 1.0 / (1.0 + np.exp(-(top[:, 0] - gate_center) / gate_width))
    return p.astype(np.float32), gate.astype(np.float32)


def classify_embeddings(q0: np.ndarray, q1: np.ndarray, names: list[str], prototypes: np.ndarray,
                        **calib) -> tuple[list[str], np.ndarray]:
    """Labels and confidences for embedded queries (see :func:`confidences`)."""
    best, conf = confidences(label_scores(q0, q1, prototypes), **calib)
    return [names[i] for i in best], conf


@dataclass
class Profile:
    """An enrolled tile set.

    Attributes:
        labels: label strings (C,).
        prototypes: (C, 2, D) float32 unit rows.
        samples: (N, 2, D) float16 enrolled embeddings [as given, turned].
        sample_label: (N,) int32 index into labels.
        meta: JSON-able dict (model name and sha256, calibration ...).
        templates: (C, 32, 24, 3) float32 standardised BGR faces, one per
            label (:func:`face_templates`), or None (a profile enrolled
            before session 23: boards are then read with the embeddings).
        templates_cut: the same from the photos with their border of
            another colour cut off each side (:func:`trim_border`), or None;
            a board's slot tries both (``vision.faces.ProfileFaceReader``).
    """

    labels: list[str]
    prototypes: np.ndarray
    samples: np.ndarray
    sample_label: np.ndarray
    meta: dict = field(default_factory=dict)
    templates: np.ndarray | None = None
    templates_cut: np.ndarray | None = None

    def save(self, path: Path | str) -> None:
        """Write the profile as one .npz file (exactly ``path``, no suffix
        added), through a temporary file renamed into place: a write that
        fails half way (a full disk) leaves an old profile as it was.

        Raises:
            BadInput: the file cannot be written.
        """
        from companion.files import write_whole

        buf = io.BytesIO()
        extra = {k: v.astype(np.float16) for k, v in (("templates", self.templates),
                                                       ("templates_cut", self.templates_cut)) if v is not None}
        np.savez_compressed(
            buf, meta=np.array(json.dumps(self.meta, ensure_ascii=False)),
            labels=np.array(self.labels, dtype=str), prototypes=self.prototypes.astype(np.float32),
            samples=self.samples.astype(np.float16), sample_label=self.sample_label.astype(np.int32),
            **extra)
        write_whole(path, buf.getvalue())

    @classmethod
    def load(cls, path: Path | str) -> "Profile":
        """Read a profile written by :meth:`save`.

        Raises:
            BadInput: missing, unreadable or not a profile; or a corrupt
                one (:func:`_check_labels`, :func:`_checked_arrays`,
                :func:`_check_meta`): an empty label or one with a control
                character, NaN or
                infinite prototypes or samples, a sample label that is no
                index into the labels, a count below 0, a calibration number
                that is not finite, arrays whose shapes disagree.
        """
        from companion.files import check_input_file
        path = Path(path)
        check_input_file(path, "tile profile")
        if path.is_dir():
            raise BadInput(f"tile profile {path} is a folder: give the .npz file companion enroll wrote")
        if not path.is_file():
            raise BadInput(f"profile not found: {path}")
        try:
            fh = open(path, "rb")   # (np.load leaves a file it opened itself open when it is no zip)
        except OSError as exc:
            raise BadInput(f"cannot read tile profile {path}: {exc.strerror or 'unreadable'}") from None
        with fh:
            try:
                z = np.load(fh, allow_pickle=False)
            except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error):
                fh.seek(0)
                if fh.read(16) == b"SQLite format 3\x00":
                    # (a game's ledger given as the profile; a newcomer's test, session 58)
                    raise BadInput(f"not a tile profile: {path} is an SQLite database (a game ledger?); give the "
                                   ".npz file companion enroll wrote") from None
                raise BadInput(f"not a tile profile: {path} (not an .npz file numpy can open, "
                               "or a damaged one)") from None
            if not isinstance(z, np.lib.npyio.NpzFile):           # a bare .npy array, whatever its name
                raise BadInput(f"not a tile profile: {path} (one array, not the .npz file companion "
                               "enroll writes)")
            try:
                _check_headers(path, z)
            except BadInput:
                z.close()
                raise
            try:
                with z:
                    # (jsontext: nesting too deep for Python's parser, or an
                    # integer too long, is "not JSON" too, not a traceback)
                    meta = jsontext.loads(str(z["meta"]))
                    label_array = z["labels"]
                    arrays = {k: z[k] for k in ("prototypes", "samples", "sample_label")}
                    templates = z["templates"] if "templates" in z.files else None
                    templates_cut = z["templates_cut"] if "templates_cut" in z.files else None
            except json.JSONDecodeError:
                raise BadInput(f"not a tile profile: {path} (its meta is not JSON)") from None
            except KeyError:
                missing = [k for k in ("meta", "labels", "prototypes", "samples", "sample_label")
                           if k not in z.files]
                raise BadInput(f"not a tile profile: {path} (it has no {', '.join(missing) or 'such'} "
                               f"{'array' if len(missing) == 1 else 'arrays'})") from None
            except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error):
                # (a truncated or damaged file: numpy reads profiles through zipfile)
                raise BadInput(f"not a tile profile: {path} (its arrays are damaged or cut short)") from None
        if not isinstance(meta, dict) or meta.get("format") != PROFILE_FORMAT:
            raise BadInput(f"not a tile profile: {path}")
        version = meta.get("version", 0)
        if isinstance(version, bool) or not isinstance(version, int):
            raise BadInput(f"corrupt tile profile: {path} (its version is {_shown(version)}, not a whole number)")
        if version > PROFILE_VERSION:
            raise BadInput(f"profile {path} has version {version}, this companion "
                           f"reads up to {PROFILE_VERSION}")
        if label_array.ndim != 1 or label_array.dtype.kind not in "US":
            raise BadInput(f"corrupt tile profile: {path} (its labels are not a list of strings)")
        # (labels saved as bytes, dtype S, by a tool other than enroll: their
        # text, not "b'east'")
        labels = [s.decode("utf-8", "replace") if isinstance(s, bytes) else str(s) for s in label_array]
        _check_labels(path, labels)
        protos, samples, sample_label = _checked_arrays(path, labels, arrays)
        _check_meta(path, meta, len(labels), protos.shape[-1])
        if templates is not None:
            templates = _checked_templates(path, len(labels), templates)
        if templates_cut is not None:
            templates_cut = _checked_templates(path, len(labels), templates_cut, "templates_cut")
            if templates is None or templates_cut.shape != templates.shape:
                raise BadInput(f"corrupt tile profile: {path} (its templates_cut have the shape "
                               f"{templates_cut.shape}, its templates "
                               f"{'none' if templates is None else templates.shape})")
        return cls(labels, protos, samples, sample_label, meta, templates, templates_cut)


def _check_labels(path: Path, labels: list[str]) -> None:
    """Refuse a profile label ``enroll`` would not have taken: an empty one
    (nothing but spaces and invisible format characters: :func:`label_trimmed`)
    or one holding a control character (:func:`label_control_character`),
    which would print as nothing or break ``classify``'s line into two.

    Raises:
        BadInput: one line naming the file and the label.
    """
    for label in labels:
        if not label_trimmed(label) or label_control_character(label) is not None:
            raise BadInput(f"corrupt tile profile: {path} (its label {label[:40]!r} is empty or holds a "
                           "control character)")


def _shown(value) -> str:
    """A meta value as its JSON file wrote it, for messages."""
    from companion.jsontext import show
    return show(value, 40)


def _checked_arrays(path: Path, labels: list[str], arrays: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A profile's ``prototypes``, ``samples`` and ``sample_label`` as
    float32, float16 and int32, checked against each other and its labels.

    Raises:
        BadInput: no labels; an array of the wrong kind or shape; a NaN or
            infinite number in the prototypes or samples (every confidence
            would be NaN); a sample label that is no index into the labels.
    """
    def bad(why: str) -> BadInput:
        return BadInput(f"corrupt tile profile: {path} ({why})")

    if not labels:
        raise bad("it has no labels")
    protos, samples, sample_label = arrays["prototypes"], arrays["samples"], arrays["sample_label"]
    for name, a, kinds in (("prototypes", protos, "fiu"), ("samples", samples, "fiu"),
                           ("sample_label", sample_label, "iu")):
        if a.dtype.kind not in kinds:
            raise bad(f"its {name} are {a.dtype}, not {'whole ' if kinds == 'iu' else ''}numbers")
    if protos.ndim != 3 or protos.shape[0] != len(labels) or protos.shape[1] != 2 or protos.shape[2] == 0:
        raise bad(f"its prototypes have the shape {protos.shape}, expected ({len(labels)}, 2, D) for "
                  f"{len(labels)} labels")
    dim = protos.shape[2]
    if samples.ndim != 3 or samples.shape[1:] != (2, dim):
        raise bad(f"its samples have the shape {samples.shape}, expected (N, 2, {dim})")
    if sample_label.shape != (samples.shape[0],):
        raise bad(f"its sample_label has the shape {sample_label.shape}, expected ({samples.shape[0]},), "
                  "one per sample")
    if len(sample_label) and (sample_label.min() < 0 or sample_label.max() >= len(labels)):
        wrong = sample_label[(sample_label < 0) | (sample_label >= len(labels))][0]
        raise bad(f"its sample_label holds {wrong}, not an index into its {len(labels)} labels")
    with np.errstate(over="ignore", invalid="ignore"):    # (too large for the type: infinite, refused below)
        protos, samples = protos.astype(np.float32), samples.astype(np.float16)
    for name, a in (("prototypes", protos), ("samples", samples)):
        if not np.isfinite(a).all():
            raise bad(f"its {name} hold NaN or infinite values")
    norms = np.linalg.norm(protos.astype(np.float64), axis=2)
    off = np.abs(norms - 1.0) > 0.01
    if off.any():
        # (prototypes are unit vectors: scaled by 1e30 in a hand-edited
        # file, every picture read at confidence 1.0; a break-test, session 58)
        c = int(np.argwhere(off)[0][0])
        raise bad(f"its prototype of {labels[c][:40]!r} has length {float(norms[off][0]):.4g}, not 1 (prototypes "
                  "are unit vectors)")
    return protos, samples, sample_label.astype(np.int32)


#: the most values one array of a profile may hold once unpacked (a profile
#: of 42 faces and 1000 photos holds about 0.5 M); a small file can unpack
#: to gigabytes (zeros compress well), so this is checked on each array's
#: header, before it is read.
MAX_ARRAY_VALUES = 2**25
#: face templates are 8-64 px on a side (this version writes 32 x 24): a
#: larger one would make every board read slow for no gain.
TEMPLATE_PX_RANGE = (8, 64)


def _check_headers(path: Path, z) -> None:
    """Refuse, from the headers of an ``.npz``'s arrays and before unpacking
    any, an array of Python objects or one holding more than
    :data:`MAX_ARRAY_VALUES` values.

    Raises:
        BadInput: one line naming the file and the array.
    """
    fmt = np.lib.format
    for name in z.files:
        try:
            with z.zip.open(name + ".npy") as fh:
                version = fmt.read_magic(fh)
                read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                shape, _, dtype = read(fh)
        except (KeyError, OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error):
            continue                     # (numpy's own reading then names what is wrong)
        if dtype.hasobject:
            raise BadInput(f"corrupt tile profile: {path} (its {name} hold Python objects, not numbers)")
        values = int(np.prod(shape, dtype=object))
        if values > MAX_ARRAY_VALUES:
            raise BadInput(f"corrupt tile profile: {path} (its {name} hold {values} values unpacked, more than "
                           f"a profile needs: at most {MAX_ARRAY_VALUES})")


def _checked_templates(path: Path, n_labels: int, templates: np.ndarray, name: str = "templates") -> np.ndarray:
    """A profile's ``templates`` as float32, one finite (h, w, 3) face per
    label, standardised again (:func:`standardised`: a comparison does not
    depend on a template's scale, and huge numbers would overflow it).

    Raises:
        BadInput: numbers of the wrong kind, another shape (h or w outside
            :data:`TEMPLATE_PX_RANGE`), NaN or infinity.
    """
    lo, hi = TEMPLATE_PX_RANGE
    if templates.dtype.kind not in "fiu":
        raise BadInput(f"corrupt tile profile: {path} (its {name} are {templates.dtype}, not numbers)")
    if (templates.ndim != 4 or templates.shape[0] != n_labels or templates.shape[3] != 3
            or not all(lo <= v <= hi for v in templates.shape[1:3])):
        raise BadInput(f"corrupt tile profile: {path} (its {name} have the shape {templates.shape}, "
                       f"expected ({n_labels}, h, w, 3) with h and w {lo}-{hi})")
    with np.errstate(over="ignore", invalid="ignore"):
        out = templates.astype(np.float64)
    if not np.isfinite(out).all():
        raise BadInput(f"corrupt tile profile: {path} (its {name} hold NaN or infinite values)")
    peak = np.abs(out).max(axis=(1, 2, 3), keepdims=True)
    out = out / np.where(peak > 0, peak, 1.0)
    return np.stack([standardised(t) for t in out]) if len(out) else out.astype(np.float32)


#: a photo's outermost ring of pixels is taken as a border round the tile
#: (a table) when its median colour differs from the middle of the photo's
#: by more than this (grey levels, largest channel): rows and columns of
#: that colour are then cut off each side (:func:`trim_border`).
BORDER_COLOUR_APART = 40
#: a row or column is border when this share of its pixels lie within
#: BORDER_COLOUR_NEAR grey levels of the border colour (largest channel).
BORDER_ROW_SHARE = 0.9
BORDER_COLOUR_NEAR = 24


def trim_border(img: np.ndarray) -> np.ndarray:
    """A tile photo without the border of another colour round it (a table
    under a tile photographed from above), cut off each side separately, so
    an uneven or off-centre border goes as well as an even one.

    The border's colour is the median of the photo's outermost ring; it is
    cut where it differs from the median of the photo's middle half by more
    than :data:`BORDER_COLOUR_APART`, at most 40 % of each side.  A photo
    cut at the face whose margin differs in colour from its middle (a big
    black letter) loses some of its margin too, so the profile keeps both
    templates and a board's slots choose (:attr:`Profile.templates_cut`).

    Args:
        img: ``(H, W, 3)`` uint8 BGR.

    Returns:
        A view of ``img``.
    """
    h, w = img.shape[:2]
    if min(h, w) < 8:
        return img
    ring = np.concatenate([img[0], img[-1], img[:, 0], img[:, -1]]).astype(np.int16)
    colour = np.median(ring, axis=0)
    middle = img[h // 4: h - h // 4, w // 4: w - w // 4].reshape(-1, 3)
    if np.abs(np.median(middle, axis=0) - colour).max() <= BORDER_COLOUR_APART:
        return img
    near = np.abs(img.astype(np.int16) - colour).max(axis=2) <= BORDER_COLOUR_NEAR
    rows, cols = near.mean(axis=1) >= BORDER_ROW_SHARE, near.mean(axis=0) >= BORDER_ROW_SHARE

    def run(flags, limit: int) -> int:
        k = 0
        while k < limit and flags[k]:
            k += 1
        return k

    top, bottom = run(rows, int(0.4 * h)), run(rows[::-1], int(0.4 * h))
    left, right = run(cols, int(0.4 * w)), run(cols[::-1], int(0.4 * w))
    return img[top:h - bottom, left:w - right]


def _portrait(image: np.ndarray, hw: tuple[int, int], cut: bool = False) -> np.ndarray:
    """``(h, w, 3) float32`` BGR of a tile photo (with ``cut``, its border
    of another colour cut off first, :func:`trim_border`), landscape turned
    to portrait as :func:`vision.embedding.normalise_tile` turns it, resized
    to ``hw`` with area averaging."""
    import cv2

    from vision.embedding import as_bgr

    img = as_bgr(image)
    if cut:
        img = trim_border(img)
    if img.shape[1] > img.shape[0]:
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
    return cv2.resize(img, (hw[1], hw[0]), interpolation=cv2.INTER_AREA).astype(np.float32)


def standardised(a: np.ndarray) -> np.ndarray:
    """``(h, w, 3) float32``: each channel of an image less its mean, over
    its standard deviation (a flat channel stays all zero), so exposure and
    each channel's contrast do not matter."""
    a = np.asarray(a, np.float32)
    a = a - a.mean(axis=(0, 1))
    sd = a.std(axis=(0, 1))
    return (a / np.where(sd > 1e-3, sd, np.inf)).astype(np.float32)


def face_templates(images: list[np.ndarray], labels: list[str], names: list[str],
                   hw: tuple[int, int] = TEMPLATE_HW, cut: bool = False) -> np.ndarray:
    """One colour template per label from its enrolled photos.

    Each photo is made portrait and resized to ``hw`` (:func:`_portrait`)
    and standardised (:func:`standardised`); the photos of a label are
    turned 180 degrees where that correlates better with the label's first
    photo (tiles are placed either way round), averaged and standardised
    again.  Colour counts: on the bench's photos, grey templates read 97.9 %
    of the fully visible faces right and 90.6 % of those 60-90 % in sight,
    colour ones 98.6 % and 92.7 % (session 23).

    Args:
        images: (H, W, 3) uint8 BGR photos of single tiles, the face filling each.
        labels: one label per photo.
        names: the profile's labels (every label in ``labels`` among them).
        hw: template size (rows, columns), px.
        cut: cut each photo's border of another colour off first
            (:func:`trim_border`; :attr:`Profile.templates_cut`).

    Returns:
        ``(len(names), h, w, 3) float32``.
    """
    out = np.zeros((len(names), *hw, 3), np.float32)
    grouped: dict[str, list[np.ndarray]] = {}
    for image, label in zip(images, labels):
        grouped.setdefault(label, []).append(standardised(_portrait(image, hw, cut)))
    for c, name in enumerate(names):
        faces = grouped.get(name, [])
        if not faces:
            continue
        ref, turned = faces[0], [faces[0]]
        for f in faces[1:]:
            flip = f[::-1, ::-1]
            turned.append(f if float((f * ref).sum()) >= float((flip * ref).sum()) else flip)
        out[c] = standardised(np.mean(turned, axis=0))
    return out


def _box_sums(x: np.ndarray, h: int, w: int) -> np.ndarray:
    """``(N, H-h+1, W-w+1, 3) float64``: the sum of every ``h x w`` box of
    each ``(N, H, W, 3)`` image, per channel (an integral image)."""
    c = np.zeros((x.shape[0], x.shape[1] + 1, x.shape[2] + 1, x.shape[3]), np.float64)
    c[:, 1:, 1:] = x.cumsum(axis=1, dtype=np.float64).cumsum(axis=2)
    return c[:, h:, w:] - c[:, :-h, w:] - c[:, h:, :-w] + c[:, :-h, :-w]


def _both_turns(windows: np.ndarray, templates: np.ndarray):
    """``(h, w, H, W, T)``: the templates' and windows' sizes and the
    ``(2C, h, w, 3) float32`` templates as given then turned 180 degrees.

    Raises:
        ValueError: windows smaller than the templates.
    """
    h, w = templates.shape[1:3]
    H, W = windows.shape[1:3]
    if H < h or W < w:
        raise ValueError(f"windows of {H} x {W} px are smaller than the {h} x {w} px templates")
    return h, w, H, W, np.concatenate([templates, templates[:, ::-1, ::-1]]).astype(np.float32)


#: a position of a template in a partly hidden window counts only where at
#: least this share of the template's pixels is in sight (:func:`masked_template_scores`).
MASKED_MIN_SEEN = 0.4


def masked_template_scores(windows: np.ndarray, hidden: np.ndarray, templates: np.ndarray,
                           min_seen: float = MASKED_MIN_SEEN) -> np.ndarray:
    """:func:`template_scores` over the part of each window in sight only.

    A taller tile in front hides part of a face; the correlation is then
    taken over the template's pixels that fall on the window's visible
    pixels, each channel less its mean over those pixels (a masked
    ``TM_CCOEFF_NORMED``: the mask belongs to the window, so it differs at
    every position and OpenCV's template mask does not serve).

    Args:
        windows: ``(N, H, W, 3)`` BGR windows, as :func:`template_scores`.
        hidden: ``(N, H, W)`` bool, True where the window's pixel is hidden
            (``vision.reconstruct.window_hidden_masks`` for the window's crop).
        templates: ``(C, h, w, 3)`` float32 from :func:`face_templates`.
        min_seen: positions where less than this share of the template lies
            in sight are not counted.

    Returns:
        ``(N, C) float32`` in [-1, 1]; -1 where no position shows enough,
        0 for a flat window part or template.

    Raises:
        ValueError: a window smaller than the templates, or masks of another shape.
    """
    from numpy.lib.stride_tricks import sliding_window_view

    windows = np.asarray(windows, np.float32)
    hidden = np.asarray(hidden, bool)
    if hidden.shape != windows.shape[:3]:
        raise ValueError(f"hidden masks of shape {hidden.shape} for windows of shape {windows.shape}")
    n, c = len(windows), len(templates)
    out = np.full((n, c), -1.0, np.float32)
    if n == 0 or c == 0:
        return out
    h, w, H, W, T = _both_turns(windows, templates)
    T = T.reshape(2 * c, h * w, 3)
    T2 = (T * T).sum(axis=2)                                          # (2C, hw)
    for i in range(n):
        x = sliding_window_view(windows[i], (h, w, 3), axis=(0, 1, 2)).reshape(-1, h * w, 3)
        m = sliding_window_view((~hidden[i]).astype(np.float32), (h, w)).reshape(-1, h * w)
        seen = m.sum(axis=1)                                          # (P,) pixels in sight
        ok = seen >= min_seen * h * w
        if not ok.any():
            continue
        x, m, seen = x[ok], m[ok], seen[ok]
        mx = x * m[:, :, None]
        s_i = mx.sum(axis=1)                                          # (P, 3)
        s_ii = (mx * x).sum(axis=(1, 2))                              # (P,)
        s_ti = mx.reshape(len(x), -1) @ T.reshape(2 * c, -1).T        # (P, 2C)
        s_t = np.stack([m @ T[:, :, k].T for k in range(3)], axis=2)  # (P, 2C, 3)
        s_tt = m @ T2.T                                               # (P, 2C)
        num = s_ti - (s_t * s_i[:, None, :]).sum(axis=2) / seen[:, None]
        var_t = s_tt - (s_t * s_t).sum(axis=2) / seen[:, None]
        var_i = s_ii - (s_i * s_i).sum(axis=1) / seen
        den = np.sqrt(np.maximum(var_t, 0.0) * np.maximum(var_i, 0.0)[:, None])
        r = np.where(den > 1e-6 * h * w, num / np.where(den > 0, den, 1.0), 0.0)
        out[i] = r.reshape(len(x), 2, c).max(axis=(0, 1))
    return np.clip(out, -1.0, 1.0)


def template_scores(windows: np.ndarray, templates: np.ndarray, chunk: int = 32) -> np.ndarray:
    """How well each window shows each template: the best normalised
    cross-correlation over every position of the template in the window
    and both turns of it (0 and 180 degrees).

    The correlation is OpenCV's ``TM_CCOEFF_NORMED`` (each channel less its
    mean, summed over the channels, over both norms), computed for all
    positions and templates at once as one matrix product per ``chunk``
    windows: the templates' channels have zero mean, so the windows' means
    drop out of the numerator.

    Args:
        windows: ``(N, H, W, 3)`` BGR windows (uint8 or float), each at least
            as large as a template (the face plus :data:`TEMPLATE_MARGIN` on
            every side).
        templates: ``(C, h, w, 3)`` float32 from :func:`face_templates`.
        chunk: windows per matrix product (memory: ``chunk`` x positions x
            ``h w 3`` floats).

    Returns:
        ``(N, C) float32`` in [-1, 1]; 0 for a flat window or template.

    Raises:
        ValueError: a window smaller than the templates.
    """
    from numpy.lib.stride_tricks import sliding_window_view

    windows = np.asarray(windows, np.float32)
    n, c = len(windows), len(templates)
    out = np.zeros((n, c), np.float32)
    if n == 0 or c == 0:
        return out
    h, w, H, W, T = _both_turns(windows, templates)
    T = T - T.mean(axis=(1, 2), keepdims=True)
    T = T.reshape(2 * c, -1)
    norm = np.linalg.norm(T, axis=1)
    T = T / np.where(norm > 1e-6, norm, np.inf)[:, None]
    positions = (H - h + 1) * (W - w + 1)
    for a in range(0, n, chunk):
        x = windows[a:a + chunk]
        k = len(x)
        P = sliding_window_view(x, (h, w, 3), axis=(1, 2, 3)).reshape(k * positions, h * w * 3)
        # each position's sums per channel and of squares, from integral images
        s1 = _box_sums(x, h, w)                                       # (k, py, px, 3)
        s2 = _box_sums(x * x, h, w).sum(axis=3)                       # (k, py, px)
        ss = (s2 - (s1 * s1).sum(axis=3) / (h * w)).reshape(-1)
        pn = np.sqrt(np.maximum(ss, 0.0))
        R = (P @ T.T) / np.where(pn > 1e-3 * np.sqrt(h * w * 3), pn, np.inf)[:, None]
        out[a:a + k] = R.reshape(k, positions, 2, c).max(axis=(1, 2))
    return np.clip(out, -1.0, 1.0)


def trimmed_templates(templates: np.ndarray, share: float) -> np.ndarray:
    """Templates cut to their central ``share`` of each side and resized
    back to their size (linear), then standardised again: the face alone,
    for photos enrolled with a border round it.

    Args:
        templates: ``(C, h, w, 3)`` float32 from :func:`face_templates`.
        share: 0 < share <= 1 (1 returns ``templates`` unchanged).

    Returns:
        ``(C, h, w, 3) float32``.
    """
    import cv2

    if share >= 1.0:
        return templates
    h, w = templates.shape[1:3]
    ch, cw = max(2, int(round(h * share))), max(2, int(round(w * share)))
    y, x = (h - ch) // 2, (w - cw) // 2
    out = [standardised(cv2.resize(np.ascontiguousarray(t[y:y + ch, x:x + cw]), (w, h),
                                   interpolation=cv2.INTER_LINEAR)) if t.any() else t for t in templates]
    return np.stack(out).astype(np.float32) if out else templates


def template_probabilities(scores: np.ndarray, temperature: float = TEMPLATE_TEMPERATURE,
                           gate_center: float = TEMPLATE_GATE_CENTER,
                           gate_width: float = TEMPLATE_GATE_WIDTH) -> tuple[np.ndarray, np.ndarray]:
    """``(P, gate)`` from :func:`template_scores`, as :func:`label_probabilities`
    gives them: ``P (N, C) float32`` a softmax of ``scores / temperature``,
    ``gate (N,) float32`` a logistic of the best score (``gate_center``,
    ``gate_width``)."""
    if len(scores) == 0:
        return np.zeros_like(scores, np.float32), np.zeros(0, np.float32)
    z = scores / temperature
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    gate = 1.0 / (1.0 + np.exp(-(scores.max(1) - gate_center) / gate_width))
    return p.astype(np.float32), gate.astype(np.float32)


def _check_meta(path: Path, meta: dict, n_labels: int, dim: int) -> None:
    """Check the numbers of a profile's meta that classification reads or
    that describe its arrays: ``temperature`` and ``gate_width`` finite and
    above 0, ``gate_center`` finite, ``counts`` one whole number 0 or more
    per label, ``embedding_dim`` the prototypes' width.

    Raises:
        BadInput: one line naming the file and the value.
    """
    import math

    def bad(why: str) -> BadInput:
        return BadInput(f"corrupt tile profile: {path} ({why})")

    def number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    for key, positive in (("temperature", True), ("gate_center", False), ("gate_width", True)):
        if key in meta and not (number(meta[key]) and (meta[key] > 0 or not positive)):
            raise bad(f"its {key} is {_shown(meta[key])}, expected a finite number"
                      + (" above 0" if positive else ""))
    if "counts" in meta:
        counts = meta["counts"]
        if (not isinstance(counts, list) or len(counts) != n_labels
                or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts)):
            raise bad(f"its counts are {_shown(counts)}, expected {n_labels} whole numbers 0 or more, "
                      "one per label")
    if "embedding_dim" in meta and meta["embedding_dim"] != dim:
        raise bad(f"its embedding_dim is {_shown(meta['embedding_dim'])}, but its prototypes have {dim} "
                  "values each")


def enroll(images: list[np.ndarray], labels: list[str], embedder) -> Profile:
    """Build a profile from labelled photos of single tiles.

    Args:
        images: (H, W, 3) uint8 BGR photos, one tile each, face filling the crop.
        labels: one label string per photo (any non-empty strings).
        embedder: a :class:`vision.embedding.Embedder`.
    Returns:
        the :class:`Profile`.
    Raises:
        BadInput: no photos, or lengths differ.
    """
    if not images:
        raise BadInput("no labelled images to enrol")
    if len(images) != len(labels):
        raise BadInput(f"{len(images)} images but {len(labels)} labels")
    e0, e1 = embedder.embed(images)
    names, protos = prototypes_from_embeddings(e0, e1, list(labels))
    index = {n: i for i, n in enumerate(names)}
    info = embedder.info
    meta = {
        "format": PROFILE_FORMAT, "version": PROFILE_VERSION, "model": info.name,
        "model_sha256": info.sha256, "embedding_dim": info.dim, "input_hw": list(info.input_hw),
        "labels": names, "counts": [int(labels.count(n)) for n in names],
        "temperature": TEMPERATURE, "gate_center": GATE_CENTER, "gate_width": GATE_WIDTH,
    }
    return Profile(names, protos, np.stack([e0, e1], 1).astype(np.float16),
                   np.array([index[lab] for lab in labels], np.int32), meta,
                   face_templates(images, list(labels), names), face_templates(images, list(labels), names, cut=True))


def check_model(profile: Profile, embedder) -> None:
    """Raise BadInput when the profile was made with another embedding model."""
    want = profile.meta.get("model_sha256")
    if want != embedder.info.sha256:
        raise BadInput(f"profile was enrolled with embedding model {profile.meta.get('model')} "
                       f"(sha256 {str(want)[:12]}), this companion has {embedder.info.name} "
                       f"(sha256 {embedder.info.sha256[:12]}); enrol the tiles again")
    if profile.prototypes.shape[-1] != embedder.info.dim:
        raise BadInput(f"profile's prototypes have {profile.prototypes.shape[-1]} values each, the embedding "
                       f"model {embedder.info.name} gives {embedder.info.dim}; enrol the tiles again")


def label_probabilities(images: list[np.ndarray], profile: Profile, embedder) -> tuple[np.ndarray, np.ndarray]:
    """Every label's probability for each tile photo, and how sure the
    profile is that the tile is one it knows at all.

    Args:
        images: ``M`` (H, W, 3) uint8 BGR photos of single tiles.
        profile: from :func:`enroll` or :meth:`Profile.load`.
        embedder: the same embedding model the profile was made with.

    Returns:
        ``(P, gate)``: ``P (M, C) float32``, rows summing to 1 (the softmax of
        :func:`confidences`, over ``profile.labels``), and ``gate (M,)
        float32`` in [0, 1] (its open-set gate; ``P[best] * gate`` is the
        confidence :func:`classify` gives).

    Raises:
        BadInput: the profile was made with another model.
    """
    check_model(profile, embedder)
    if not images:
        return np.zeros((0, len(profile.labels)), np.float32), np.zeros(0, np.float32)
    q0, q1 = embedder.embed(images)
    scores = label_scores(q0, q1, profile.prototypes)
    temperature = float(profile.meta.get("temperature", TEMPERATURE))
    centre = float(profile.meta.get("gate_center", GATE_CENTER))
    width = float(profile.meta.get("gate_width", GATE_WIDTH))
    return softmax_and_gate(scores, temperature, centre, width)


#: a photo whose neighbouring pixels correlate less than this
#: (:func:`neighbour_correlation`) is noise, not a picture of anything: the
#: 318 photos of ``../shared/corpus/real-tiles`` lie at 0.76-0.99 (1st
#: percentile 0.78), uniform random noise at 0.01-0.19 (session 35).
NOISE_BELOW = 0.4


def neighbour_correlation(image: np.ndarray, size: tuple[int, int] = (72, 96)) -> float:
    """How much a photo looks like a picture of something: the smaller of
    the correlations between horizontally and between vertically
    neighbouring grey levels, the photo resized to ``size`` (w, h) px by
    area averaging.  Photographs of objects are smooth at that scale
    (natural images' neighbouring pixels correlate strongly; Simoncelli &
    Olshausen, "Natural image statistics and neural representation", 2001);
    independent noise is not.

    Args:
        image: (H, W, 3) uint8 BGR or (H, W) uint8 grey.
    Returns:
        a correlation in [-1, 1]; 1.0 for a flat picture (no variation to
        correlate: :data:`companion.commands.enroll.FLAT_BELOW` decides those).
    """
    import cv2

    g = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    g = cv2.resize(g.astype(np.float32), size, interpolation=cv2.INTER_AREA)
    out = 1.0
    for a, b in ((g[:, :-1], g[:, 1:]), (g[:-1, :], g[1:, :])):
        a = a.ravel() - a.mean()
        b = b.ravel() - b.mean()
        den = float(np.sqrt((a * a).sum() * (b * b).sum()))
        if den > 1e-6:
            out = min(out, float((a * b).sum()) / den)
    return out


def classify(images: list[np.ndarray], profile: Profile, embedder) -> list[tuple[str, float]]:
    """Recognise tile photos with a profile.

    Args:
        images: (H, W, 3) uint8 BGR photos of single tiles (any of the four
            90-degree turns: landscape crops are turned to portrait first).
        profile: from :func:`enroll` or :meth:`Profile.load`.
        embedder: the same embedding model the profile was made with.
    Returns:
        one (label, confidence) per image; confidence in [0, 1].
    Raises:
        BadInput: the profile was made with another model.
    """
    check_model(profile, embedder)
    if not images:
        return []
    q0, q1 = embedder.embed(images)
    calib = {k: float(profile.meta.get(k, d)) for k, d in
             (("temperature", TEMPERATURE), ("gate_center", GATE_CENTER),
              ("gate_width", GATE_WIDTH))}
    names, conf = classify_embeddings(q0, q1, profile.labels, profile.prototypes, **calib)
    return [(n, float(c)) for n, c in zip(names, conf)]



# ---------------------------------------------------------------------------
# Enrolment sheet: one tile of each face laid on the mat's grid, photographed.

SHEET_PER_ROW = 14  # faces per row of the sheet


def sheet_slots(n_faces: int, grid_tiles: tuple[int, int] = (18, 8)) -> list[tuple[int, int, int]]:
    """Slots (half-unit x, y, z = 0) where the sheet puts faces 0..n-1.

    Rows of up to :data:`SHEET_PER_ROW` tiles, centred, on every other row of
    grid cells starting with the second (cell rows 1, 3, 5, 7), so that each
    row has an empty row above it and hands have room.

    Raises:
        BadInput: more faces than the grid holds this way.
    """
    cols, rows = grid_tiles
    per_row = min(SHEET_PER_ROW, cols)
    max_rows = rows // 2
    if n_faces > per_row * max_rows:
        raise BadInput(f"{n_faces} faces do not fit an enrolment sheet of {per_row} x {max_rows}")
    n_rows = -(-n_faces // per_row)
    first_row = 1 if n_rows < max_rows else 0
    out = []
    for i in range(n_faces):
        r, c = divmod(i, per_row)
        in_row = min(per_row, n_faces - r * per_row)
        x0 = (cols - in_row) // 2
        out.append((2 * (x0 + c), 2 * (first_row + 2 * r), 0))
    return out


#: the least median width (px, the face's shorter side) of the faces in an
#: enrolment-sheet photo (:func:`sheet_crops`); profiles from generated sheet
#: photos read a board's faces 87-97 % right at 26-46 px, 16-55 % at 14-15 px
#: (a break-test, session 58)
MIN_SHEET_FACE_PX = 20.0


def sheet_crops(image_bgr: np.ndarray, spec, n_faces: int, camera=None,
                size_hw: tuple[int, int] = (160, 120), refuse_empty: bool = True,
                margin: float = 0.0) -> list[np.ndarray]:
    """Cut the tiles of an enrolment-sheet photo out with the mat's pose.

    Args:
        image_bgr: (H, W, 3) uint8 BGR photo of the mat with the sheet laid out.
        spec: the mat (vision.mat.MatSpec).
        n_faces: faces on the sheet (the variant's face count).
        camera: vision.pose.Camera or None (guessed from the mat).
        size_hw: crop size (height, width) in px; rows run down the face's
            40 mm side, top of the face towards the mat's top edge.
        refuse_empty: refuse a photo where a cell shows the bare mat
            (:func:`bare_cells`): that face would be enrolled from a
            picture of paper.
        margin: room round each face, a fraction of its size on every side
            (windows for :func:`aligned_sheet_crops`).
    Returns:
        n_faces ``(h', w', 3)`` uint8 BGR crops in sheet order, ``h' =
        round(h (1 + 2 margin))`` and likewise ``w'``.
    Raises:
        MatNotFound: the mat is not in the photo (vision.pose.estimate_pose).
        BadInput: a cell's face lies partly or wholly outside the picture,
            the faces are under :data:`MIN_SHEET_FACE_PX` wide, or a cell
            shows the bare mat (``refuse_empty``).
    """
    from vision.crops import CropSettings, extract_raw
    from vision.pose import estimate_pose, project_slot_faces

    pose = estimate_pose(image_bgr, spec, camera)
    slots = sheet_slots(n_faces, spec.grid_tiles)
    quads = project_slot_faces(slots, spec, pose)
    # a face partly outside the picture would be enrolled from a crop whose
    # missing part is the picture's edge smeared across it (a photo cut
    # through the sheet's last row enrolled 13 such faces, rc 0); before the
    # empty cells, which such a cell would be taken for
    h, w = image_bgr.shape[:2]
    inside = ((quads[..., 0] >= 0) & (quads[..., 0] <= w - 1)
              & (quads[..., 1] >= 0) & (quads[..., 1] <= h - 1)).all(axis=1)
    outside = np.flatnonzero(~inside)
    if len(outside):
        cells = ", ".join(f"({slots[i][0] // 2 + 1}, {slots[i][1] // 2 + 1})" for i in outside[:4])
        more = f" and {len(outside) - 4} more" if len(outside) > 4 else ""
        raise BadInput(f"{len(outside)} of the sheet's {n_faces} cells lie partly or wholly outside the picture, "
                       f"e.g. column, row {cells}{more}: keep the whole sheet in view")
    # faces this small enrol templates of a few pixels blown up: a sheet
    # photo with faces 15 px wide made a profile that read 16 % of a board's
    # faces right, one with 26 px 87 % (a break-test, session 58)
    sides = np.stack([np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1),
                      np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1)], axis=1).min(axis=1)
    small = float(np.median(sides))
    if small < MIN_SHEET_FACE_PX:
        raise BadInput(f"the tiles' faces are only {small:.0f} px wide in the picture (at least "
                       f"{MIN_SHEET_FACE_PX:g} px needed, 30 or more reads best): bring the camera closer to the "
                       "sheet, or take a larger picture")
    if refuse_empty:
        empty = np.flatnonzero(bare_cells(image_bgr, slots, quads, spec, pose))
        if len(empty):
            cells = ", ".join(f"({slots[i][0] // 2 + 1}, {slots[i][1] // 2 + 1})" for i in empty[:4])
            more = f" and {len(empty) - 4} more" if len(empty) > 4 else ""
            raise BadInput(f"{len(empty)} of the sheet's {n_faces} cells show the bare mat, e.g. column, row "
                           f"{cells}{more}: lay one tile of each face where print-enrollment-sheet shows")
    h, w = (int(round(size_hw[0] * (1 + 2 * margin))), int(round(size_hw[1] * (1 + 2 * margin))))
    raw = extract_raw(image_bgr, quads, CropSettings(height=h, width=w, margin=margin))
    return [np.ascontiguousarray(r) for r in raw]


#: room round each face (a fraction of its size on every side) in which a
#: second sheet photo's tile is found (:func:`aligned_sheet_crops`): tiles
#: laid by hand lie a few millimetres off their cells (the generator: up to
#: 3 mm and 4 degrees), 0.15 of a face is 4.5-6 mm
SHEET_ALIGN_MARGIN = 0.15
#: two sheet photos whose cells match each other under this (median
#: normalised correlation, :func:`aligned_sheet_crops`) do not show the same
#: tiles in the same cells.  Generated photos (session 58): one set's two
#: photos 0.78-0.88; the second photo's tiles shuffled 0.28-0.29, or all one
#: cell on (a sheet laid from the wrong cell) 0.48; Love against Mindful
#: 0.49.  Candy against Love (alike in body and border) 0.73 is not caught.
SHEET_PAIR_MATCH_BELOW = 0.6


def aligned_sheet_crops(first: list[np.ndarray], second: list[np.ndarray],
                        size_hw: tuple[int, int] = (160, 120)) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """The crops of two photos of one enrolment sheet, each tile of the
    second photo cut where it matches the first's.

    Tiles laid by hand lie a few millimetres off their cells, so a cell's
    crop holds its tile shifted, and differently in each photo; averaged as
    they were, the two photos' face templates blurred, and a profile from two
    photos read a board's faces worse than from either alone (a break-test,
    session 58: love 87-89 % -> 85.5 %, candy 86-93 % -> 82 %).  Now each
    tile of the second photo is found in its window (both turns: a tile may
    lie either way round) by OpenCV's normalised cross-correlation
    (``cv2.matchTemplate``, ``TM_CCOEFF_NORMED``) with the first photo's
    crop, and cut there: on 7 pairs of generated sheet photos two photos
    then read 1-4 points better than the first alone (0.91-0.98).

    Args:
        first, second: windows of :func:`sheet_crops` with ``margin``
            :data:`SHEET_ALIGN_MARGIN`, in sheet order, one per cell.
        size_hw: the crops' size (the faces' size in the windows).

    Returns:
        ``(first crops, second crops, median match)``: ``(h, w, 3)`` uint8
        crops, the first photo's centred in its windows; the median over
        the cells of the best match, in [-1, 1].
    """
    import cv2

    h, w = size_hw
    out1, out2, scores = [], [], []
    for a, b in zip(first, second):
        y0, x0 = (a.shape[0] - h) // 2, (a.shape[1] - w) // 2
        centre = np.ascontiguousarray(a[y0:y0 + h, x0:x0 + w])
        best = None
        for turn in (b, b[::-1, ::-1]):
            turn = np.ascontiguousarray(turn)
            _, score, _, (x, y) = cv2.minMaxLoc(cv2.matchTemplate(turn, centre, cv2.TM_CCOEFF_NORMED))
            if best is None or score > best[0]:
                best = (score, np.ascontiguousarray(turn[y:y + h, x:x + w]))
        out1.append(centre)
        out2.append(best[1])
        scores.append(best[0])
    return out1, out2, float(np.median(scores)) if scores else 1.0


#: a sheet cell whose photo correlates above this with the printed mat seen
#: at the same place shows no tile.  On rendered sheets (love, mindful and
#: word, three views each, tilt 0-30 degrees): cells holding a tile 0.30 at
#: most, empty cells 0.50 at least (median 0.92).  On generated photos with
#: the scene generator's blur, noise and light, tilt 0-40 degrees, it alone
#: found only 105 of 240 empty cells (a break-test): see
#: :data:`PRESENCE_EMPTY_BELOW`.
BARE_MAT_ABOVE = 0.45
#: a sheet cell is also taken as empty where the presence model
#: (:mod:`vision.presence`) gives it log-odds under this and it correlates
#: above :data:`BARE_MAT_SOME_ABOVE` with the printed mat.  On 80 generated
#: sheet photos (tilt 0-40 degrees, three cells left empty each, 40 with the
#: four sets' own art, 40 with real photos of Mindful tiles as the faces;
#: seeds 400-439 of the break-test): 192 of 240 empty cells found, against
#: 105 by :data:`BARE_MAT_ABOVE` alone, and none of the 2970 cells holding a
#: tile refused (those read under -4 correlate with the mat at 0.10 at most;
#: every cell holding a tile at 0.35 at most).
PRESENCE_EMPTY_BELOW = -4.0
BARE_MAT_SOME_ABOVE = 0.2


def bare_cells(image_bgr: np.ndarray, slots, quads: np.ndarray, spec, pose) -> np.ndarray:
    """Which sheet cells show no tile.

    A cell is empty when its face quad correlates with the printed mat
    above :data:`BARE_MAT_ABOVE` (:func:`bare_mat_scores`), or above
    :data:`BARE_MAT_SOME_ABOVE` while the presence model reads it under
    :data:`PRESENCE_EMPTY_BELOW` log-odds: in a blurred or strongly tilted
    photo an empty cell's face quad (20 mm above the mat) shows the walls of
    the tiles beside it and little of the mat's fine print, but the presence
    model, comparing that quad with the mat below it, still sees no tile.
    Without the bundled presence model the correlation decides alone.

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        slots: ``N`` sheet slots ``(x, y, 0)``.
        quads: ``(N, 4, 2)`` their face quads in image px.
        spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.

    Returns:
        ``(N,) bool``, True for an empty cell.
    """
    from vision.presence import default_presence_model

    bare = bare_mat_scores(image_bgr, quads, spec, pose)
    empty = bare > BARE_MAT_ABOVE
    model = default_presence_model()
    if model is not None and len(slots):
        logits = model.slot_logits(image_bgr, slots, spec, pose)
        empty |= (logits < PRESENCE_EMPTY_BELOW) & (bare > BARE_MAT_SOME_ABOVE)
    return empty


def bare_mat_scores(image_bgr: np.ndarray, quads: np.ndarray, spec, pose, art: np.ndarray | None = None) -> np.ndarray:
    """How much each quad of the photo looks like the printed mat there.

    The mat's own art (:func:`vision.mat.render_mat`) is warped into the
    photo through the pose's homography of the mat's plane
    (``cv2.warpPerspective``, over the quads' bounding box only), and both
    pictures are cut at the same quads; the score is their normalised
    cross-correlation in grey.  An empty cell shows the mat's cross, ticks
    and label where the art has them; a tile hides them.

    Args:
        image_bgr: ``(H, W, 3)`` uint8 BGR photo.
        quads: ``(N, 4, 2)`` float image px (TL, TR, BR, BL).
        spec: ``vision.mat.MatSpec``; pose: ``vision.pose.MatPose``.
        art: :func:`vision.mat.render_mat` of ``spec``, when the caller
            keeps one (rendered here otherwise: about 70 ms).

    Returns:
        ``(N,) float64`` correlations in [-1, 1].
    """
    import cv2

    from vision.crops import CropSettings, extract_raw
    from vision.mat import render_mat
    from vision.pose import project_points

    quads = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if len(quads) == 0:
        return np.zeros(0, np.float64)
    mat = render_mat(spec) if art is None else art
    w, h = spec.size_mm
    src = np.float32([[0, 0], [mat.shape[1], 0], [mat.shape[1], mat.shape[0]], [0, mat.shape[0]]]) - 0.5
    dst = project_points(np.array([[0, 0, 0], [w, 0, 0], [w, h, 0], [0, h, 0]], float), pose).astype(np.float32)
    # the quads' bounding box (2 px more each side), clipped to the photo
    x0 = int(max(0, np.floor(quads[..., 0].min()) - 2))
    y0 = int(max(0, np.floor(quads[..., 1].min()) - 2))
    x1 = int(min(image_bgr.shape[1], np.ceil(quads[..., 0].max()) + 3))
    y1 = int(min(image_bgr.shape[0], np.ceil(quads[..., 1].max()) + 3))
    if x1 <= x0 or y1 <= y0:
        return np.zeros(len(quads), np.float64)
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    homography = shift @ cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    seen = cv2.warpPerspective(mat, homography, (x1 - x0, y1 - y0), flags=cv2.INTER_AREA)
    crop = CropSettings(height=80, width=60, margin=0.0)
    inside = quads - (x0, y0)
    a = extract_raw(np.ascontiguousarray(image_bgr[y0:y1, x0:x1]), inside, crop) \
        .astype(np.float32).mean(axis=-1).reshape(len(quads), -1)
    b = extract_raw(seen, inside, crop).astype(np.float32).mean(axis=-1).reshape(len(quads), -1)
    a -= a.mean(axis=1, keepdims=True)
    b -= b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    return np.where(den > 1e-6, (a * b).sum(axis=1) / np.maximum(den, 1e-6), 0.0)
