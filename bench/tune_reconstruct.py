"""Score settings of the layered-board reconstruction on development photos.

    python bench/tune_reconstruct.py '{}' '{"layout_prior_weight": 0.3}' ...

Each argument is a JSON object of ``vision.reconstruct.ReconstructSettings``
fields (``{}``: the defaults).  Every photo of bench_recognize's generator in
the ranges ``--start`` (default 1000 and 1200, ``--photos`` each, default
160: never the photos 0-199 whose figures the bench reports) is rendered once
and read with each setting; the script prints, per setting, the photos
entirely right (as ``bench_recognize`` counts them), the wrong slots
(presence), the visible tiles whose face was missed, and the wrong faces
reported anywhere.  This is how the decision rules' numbers were chosen
(``ReconstructSettings`` says which figures each one gave).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def parse_settings(text: str):
    """A ``ReconstructSettings`` from a JSON object of some of its fields.

    Raises:
        ValueError: not a JSON object, an unknown field, or a value of the
            wrong type (numbers for numbers, true/false for flags, a list of
            as many numbers for a tuple).
    """
    import dataclasses

    from vision.reconstruct import ReconstructSettings
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"settings {text!r} are not JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"settings {text!r} are not a JSON object")
    defaults = ReconstructSettings()
    fields = {f.name for f in dataclasses.fields(ReconstructSettings)}
    out = {}
    for key, value in obj.items():
        if key not in fields:
            raise ValueError(f"unknown setting {key!r} (ReconstructSettings has {', '.join(sorted(fields))})")
        default = getattr(defaults, key)
        number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, tuple):
            ok = isinstance(value, list) and len(value) == len(default) and all(map(number, value))
            value = tuple(value) if ok else value
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = number(value)
        if not ok:
            raise ValueError(f"setting {key!r}: {json.dumps(value)} is not like its default {default!r}")
        out[key] = value
    return ReconstructSettings(**out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    import bench_recognize as B
    ap.add_argument("settings", nargs="+", help="JSON objects of ReconstructSettings fields")
    B.add_development_args(ap, [1000, 1200])
    ap.add_argument("--classifier", type=Path, default=None,
                    help="tiles.onnx to use (default: models/tiles.onnx; --model names the presence model here)")
    ap.add_argument("--blank-classifier", default=None,
                    help="the classifier of blanked windows for the second read of partly hidden faces "
                         "(default: models/tiles-blank.onnx), or 'none' for none")
    a = ap.parse_args(argv)
    B.check_development_args(ap, a)
    try:
        settings = [parse_settings(text) for text in a.settings]
    except ValueError as e:
        ap.error(str(e))

    from companion.errors import MatNotFound
    from companion.rules import Geometry
    from vision.faces import TileClassifier
    from vision.mat import MatSpec
    from vision.presence import PresenceModel, PresenceSettings
    from vision.reconstruct import recognize

    from companion.errors import BadInput
    from vision.faces import ClassifierSettings
    try:
        clf = TileClassifier(ClassifierSettings(model_path=a.classifier) if a.classifier else ClassifierSettings())
        pm = PresenceModel(PresenceSettings(model_path=a.presence) if a.presence else PresenceSettings())
        blanker = B.optional_model(a.blank_classifier, B.blank_classifier_at, B.default_blank_classifier)
    except BadInput as e:
        ap.error(str(e))
    spec = MatSpec.default()
    layouts = B.bench_layouts()
    tally = np.zeros((len(settings), 4), int)     # right, wrong slots, faces missed, wrong faces
    for start in a.start:
        for k in range(start, start + a.photos):
            variant, layout, scene = B.bench_photo(k, layouts)
            tr = scene.truth
            g = Geometry.of(layout)
            present = np.asarray(tr.present, bool)
            covered = np.array([any(present[j] for j in g.covered_by[i]) for i in range(len(layout))])
            visible = present & ~covered & (np.asarray(tr.visible) >= B.VISIBLE_MIN)
            for row, st in zip(tally, settings):
                try:
                    rec = recognize(scene.image, variant, layout, classifier=clf, spec=spec, presence=pm, settings=st,
                                    blank_classifier=blanker)
                except MatNotFound:
                    continue
                said = np.array([t.present for t in rec.tiles])
                faces = [t.face for t in rec.tiles]
                wrong_slots = int((said != present).sum())
                missed = sum(1 for i in np.flatnonzero(visible) if faces[i] != tr.faces[i])
                wrong_faces = sum(1 for i, f in enumerate(faces) if f is not None and f != tr.faces[i])
                row += (wrong_slots == missed == wrong_faces == 0, wrong_slots, missed, wrong_faces)
    n = len(a.start) * a.photos
    print(f"{n} photos (from {', '.join(map(str, a.start))})")
    print(f"{'settings':60s} {'right':>6s} {'wrong slots':>12s} {'faces missed':>13s} {'wrong faces':>12s}")
    for text, (right, slots, missed, wrong) in zip(a.settings, tally):
        print(f"{text:60s} {right:6d} {slots:12d} {missed:13d} {wrong:12d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
