"""Quantize the presence model and the tile classifier to 8-bit integers:

    python -m vision.training.quantize --out models/

Reads the float models ``models/presence-fp32.onnx``,
``models/tiles-fp32.onnx`` and ``models/tiles-blank-fp32.onnx`` (what
:mod:`vision.training.train_presence` and
:mod:`vision.training.train_classifier` export, their JSON beside them) and
writes ``presence.onnx``, ``tiles.onnx`` and ``tiles-blank.onnx``, the models
``recognize`` and the referee run, with their JSON (the float model's
description plus a ``quantization`` block) into ``--out``.  ``--models``
picks some of them.  ``tiles-blank`` (the second read of partly hidden
faces, their hidden part blanked) is calibrated on the plain patches and on
the blanked ones ``recognize`` gives it.

Static quantization in onnxruntime's QDQ format
(``onnxruntime.quantization.quantize_static``; "Quantize ONNX models" in the
onnxruntime documentation): weights as signed 8-bit integers per output
channel, activations as unsigned 8-bit integers whose ranges are calibrated
by min/max on the inputs ``recognize`` gives each model on ``--scenes``
rendered scenes (the presence data's scene mix,
:func:`vision.training.presence_data.presence_scene_spec`, tilt 0-40 degrees,
scene ``k`` from ``np.random.default_rng((7000000 + seed, k))``: never a
training, validation or bench photo).  The first convolution (it reads the
normalised windows, whose range is wide) and the last, linear layer (it sums
thousands of products into the output) stay in float: with them quantized
too, the presence log-odds moved by 0.14-0.15 on average and turned 0.7-0.9 %
of them to the other side of even, against 0.11 and 0.3 % (models/HISTORY.md,
"Session 20").

Needs the ``train`` extra (the ``onnx`` package, which onnxruntime's
quantization tools import); inference needs onnxruntime alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

QUANT_STREAM = 7_000_000
MODELS = ("presence", "tiles", "tiles-blank")


def calibration_inputs(presence_fp32: Path, tiles_fp32: Path, scenes: int, seed: int = 0,
                       tiles_blank_fp32: Path | None = None) -> dict:
    """The models' inputs as ``recognize`` makes them, with the float models,
    on ``scenes`` rendered scenes.

    Returns:
        ``{"presence": (N, 6, 64, 48) float32, "tiles": (M, 3, 48, 36)
        float32, "tiles-blank": (L, 3, 48, 36) float32}``: every batch each
        model was given, second looks (turned windows and patches) included;
        the blanked windows' model (read only where ``tiles_blank_fp32`` is
        given; else no rows) calibrated on the plain patches and its own.

    Raises:
        SystemExit: no scene showed the mat, so nothing was cut.
    """
    from companion.errors import MatNotFound
    from vision.faces import ClassifierSettings, TileClassifier
    from vision.mat import MatSpec
    from vision.presence import PresenceModel, PresenceSettings
    from vision.reconstruct import recognize
    from vision.synth import render_scene
    from vision.training.presence_data import presence_scene_spec

    seen: dict[str, list[np.ndarray]] = {"presence": [], "tiles": [], "tiles-blank": []}

    class Presence(PresenceModel):
        def logits(self, x):
            seen["presence"].append(np.array(x, np.float32))
            return super().logits(x)

    class Tiles(TileClassifier):
        def logits(self, patches):
            seen["tiles"].append(np.array(patches, np.float32))
            return super().logits(patches)

    class Blanked(TileClassifier):
        def logits(self, patches):
            seen["tiles-blank"].append(np.array(patches, np.float32))
            return super().logits(patches)

    pm = Presence(PresenceSettings(model_path=presence_fp32))
    clf = Tiles(ClassifierSettings(model_path=tiles_fp32))
    blank = Blanked(ClassifierSettings(model_path=tiles_blank_fp32)) if tiles_blank_fp32 else False
    spec = MatSpec.default()
    for k in range(scenes):
        rng = np.random.default_rng((QUANT_STREAM + seed, k))
        scene_spec = presence_scene_spec(k, rng, tilt_deg=(0.0, 40.0))
        scene = render_scene(scene_spec, rng)
        try:
            recognize(scene.image, scene_spec.variant, scene_spec.layout, classifier=clf, spec=spec, presence=pm,
                      blank_classifier=blank)
        except MatNotFound:
            continue
    if not seen["presence"] or not seen["tiles"]:
        raise SystemExit("no windows were cut: render more scenes")
    seen["tiles-blank"] = seen["tiles"] + seen["tiles-blank"] if blank else []
    return {name: np.concatenate(arrays) if arrays else np.zeros((0,), np.float32) for name, arrays in seen.items()}


def quantize(fp32: Path, out_onnx: Path, inputs: np.ndarray, batch: int = 64) -> dict:
    """Write the QDQ 8-bit model of ``fp32`` to ``out_onnx``, calibrated on
    ``inputs`` (the model's float32 input batch, first axis the samples).

    Returns:
        what was done, for the JSON: the nodes kept in float, the
        calibration's size, and how the outputs moved on ``inputs``: mean
        and 99th percentile of the absolute change, the share of log-odds
        that turned sign (one output) or of best classes that changed (more).
    """
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    inputs = np.ascontiguousarray(inputs, np.float32)
    graph = onnx.load(str(fp32)).graph
    name = graph.input[0].name
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    linear = [n.name for n in graph.node if n.op_type in ("Gemm", "MatMul")]
    keep_float = convs[:1] + linear[-1:]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.i = 0

        def get_next(self):
            if self.i >= len(inputs):
                return None
            b = inputs[self.i:self.i + batch]
            self.i += batch
            return {name: b}

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(fp32), str(pre))
        quantize_static(str(pre), str(out_onnx), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax, nodes_to_exclude=keep_float)
    # the quantizer declares every operator domain onnxruntime knows; keep the
    # ones the graph uses, so an older onnxruntime loads the model too
    model = onnx.load(str(out_onnx))
    used = {n.domain for n in model.graph.node} | {""}
    kept = [o for o in model.opset_import if o.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(kept)
    onnx.save(model, str(out_onnx))

    def run(path):
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        s = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        out = [s.run(None, {name: inputs[i:i + 256]})[0] for i in range(0, len(inputs), 256)]
        return np.concatenate(out).reshape(len(inputs), -1)
    y0, y1 = run(fp32), run(out_onnx)
    d = np.abs(y1 - y0)
    if y0.shape[1] == 1:
        changed = {"sign_turned_share": round(float(np.mean(np.sign(y1) != np.sign(y0))), 5)}
    else:
        changed = {"best_class_changed_share": round(float(np.mean(y1.argmax(1) != y0.argmax(1))), 5)}
    return {"format": "QDQ, weights int8 per channel, activations uint8 (min/max calibration)",
            "kept_float": keep_float, "calibration_inputs": int(len(inputs)),
            "output_change_mean": round(float(d.mean()), 4),
            "output_change_p99": round(float(np.quantile(d, 0.99)), 4), **changed}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presence-fp32", type=Path, default=Path("models/presence-fp32.onnx"),
                    help="the float presence model (its JSON beside it)")
    ap.add_argument("--tiles-fp32", type=Path, default=Path("models/tiles-fp32.onnx"),
                    help="the float tile classifier (its JSON beside it)")
    ap.add_argument("--tiles-blank-fp32", type=Path, default=Path("models/tiles-blank-fp32.onnx"),
                    help="the float classifier of blanked windows (its JSON beside it)")
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS), help="which to quantize")
    ap.add_argument("--out", type=Path, default=Path("models"), help="folder for the 8-bit models and their JSON")
    ap.add_argument("--scenes", type=int, default=40, help="rendered scenes whose inputs calibrate")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    sources = {"presence": a.presence_fp32, "tiles": a.tiles_fp32, "tiles-blank": a.tiles_blank_fp32}
    needed = {"presence", "tiles"} | set(a.models)     # the first two make every model's inputs
    for path in (sources[m] for m in MODELS if m in needed):
        if path.suffix != ".onnx" or not path.is_file() or not path.with_suffix(".json").is_file():
            ap.error(f"no float model and JSON at {path} and {path.with_suffix('.json')}")
    for m in ("tiles", "tiles-blank"):
        if m in needed:
            try:
                blank = bool(json.loads(sources[m].with_suffix(".json").read_text()).get("training", {}).get("blank"))
            except (OSError, ValueError, AttributeError):
                ap.error(f"cannot read the model description {sources[m].with_suffix('.json')}")
            if blank != (m == "tiles-blank"):
                ap.error(f"{sources[m]} was {'' if blank else 'not '}trained on blanked windows: it cannot be "
                         f"{m}.onnx (train_classifier --blank {0 if m == 'tiles' else 1} makes that one)")
    if a.scenes < 1:
        ap.error("--scenes must be at least 1")
    for m in a.models:
        if (a.out / f"{m}.onnx").resolve() == sources[m].resolve():
            ap.error(f"--out would overwrite the float model {sources[m]}: name it otherwise ({m}-fp32.onnx)")
    from companion.errors import BadInput
    try:
        inputs = calibration_inputs(a.presence_fp32, a.tiles_fp32, a.scenes, a.seed,
                                    a.tiles_blank_fp32 if "tiles-blank" in a.models else None)
    except BadInput as e:
        ap.error(str(e))
    a.out.mkdir(parents=True, exist_ok=True)
    for m in a.models:
        info = quantize(sources[m], a.out / f"{m}.onnx", inputs[m])
        meta = json.loads(sources[m].with_suffix(".json").read_text())
        meta["model"] = f"{m}.onnx"
        meta["quantization"] = {"from": sources[m].name, "scenes": a.scenes, "seed": a.seed,
                                "command": f"python -m vision.training.quantize --models {m} --scenes {a.scenes} "
                                           f"--seed {a.seed}", **info}
        (a.out / f"{m}.json").write_text(json.dumps(meta, indent=1) + "\n")
        moved = ", ".join(f"{k} {v}" for k, v in info.items() if k.endswith("_share") or k == "output_change_mean")
        print(f"wrote {a.out / f'{m}.onnx'}: {info['calibration_inputs']} calibration inputs; {moved}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
