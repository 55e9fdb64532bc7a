"""Quantize the presence model to 8-bit integers for onnxruntime:

    python -m vision.training.quantize_presence --fp32 models/presence-fp32.onnx --out models/

Writes ``presence.onnx`` (the model ``recognize`` runs) and ``presence.json``
(the float model's description plus a ``quantization`` block) into
``--out``.  Static quantization in onnxruntime's QDQ format
(``onnxruntime.quantization.quantize_static``; "Quantize ONNX models" in the
onnxruntime documentation): weights as signed 8-bit integers per output
channel, activations as unsigned 8-bit integers with ranges calibrated by
min/max on the windows ``recognize`` cuts from ``--scenes`` rendered scenes
(the presence data's scene mix, :func:`vision.training.presence_data.presence_scene_spec`,
tilt 0-40 degrees, scene ``k`` from ``np.random.default_rng((7000000 +
seed, k))``: never a training, validation or bench photo).  The first
convolution (it reads the normalised windows, whose range is wide) and the
last, linear layer (it sums 4 000 products into the log-odds itself) stay
in float: quantized too, they moved the log-odds by 0.14-0.15 on average
and turned 0.7-0.9 % of them to the other side of even, against 0.11 and
0.3 % (model card, "Session 20").

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


def calibration_windows(fp32: Path, scenes: int, seed: int = 0) -> np.ndarray:
    """The presence model's inputs as ``recognize`` makes them on rendered scenes.

    Returns:
        ``(N, 6, h, w) float32``: every batch the float model at ``fp32`` was
        asked, first looks and turned second looks alike.
    """
    from vision.faces import TileClassifier
    from vision.mat import MatSpec
    from vision.presence import PresenceModel, PresenceSettings
    from vision.reconstruct import recognize
    from vision.synth import render_scene
    from vision.training.presence_data import presence_scene_spec
    from companion.errors import MatNotFound

    seen: list[np.ndarray] = []

    class Capturing(PresenceModel):
        def logits(self, x):
            seen.append(np.array(x, np.float32))
            return super().logits(x)

    pm = Capturing(PresenceSettings(model_path=fp32))
    clf = TileClassifier()
    spec = MatSpec.default()
    for k in range(scenes):
        rng = np.random.default_rng((QUANT_STREAM + seed, k))
        scene_spec = presence_scene_spec(k, rng, tilt_deg=(0.0, 40.0))
        scene = render_scene(scene_spec, rng)
        try:
            recognize(scene.image, scene_spec.variant, scene_spec.layout, classifier=clf, spec=spec, presence=pm)
        except MatNotFound:
            continue
    if not seen:
        raise SystemExit("no presence windows were cut: render more scenes")
    return np.concatenate(seen)


def quantize(fp32: Path, out_onnx: Path, windows: np.ndarray, batch: int = 64) -> dict:
    """Write the QDQ int8 model of ``fp32`` to ``out_onnx``, calibrated on
    ``windows`` (``(N, 6, h, w) float32``).

    Returns:
        what was done, for the JSON: the nodes kept in float, the
        calibration's size, and the change of the log-odds on ``windows``
        (mean and 99th percentile of the absolute change, share of signs
        turned).
    """
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    graph = onnx.load(str(fp32)).graph
    name = graph.input[0].name
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    linear = [n.name for n in graph.node if n.op_type in ("Gemm", "MatMul")]
    keep_float = convs[:1] + linear[-1:]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.i = 0

        def get_next(self):
            if self.i >= len(windows):
                return None
            b = windows[self.i:self.i + batch]
            self.i += batch
            return {name: b}

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(fp32), str(pre))
        quantize_static(str(pre), str(out_onnx), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax, nodes_to_exclude=keep_float)

    def run(path):
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        s = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        return np.concatenate([s.run(None, {name: windows[i:i + 256]})[0].reshape(-1)
                               for i in range(0, len(windows), 256)])
    y0, y1 = run(fp32), run(out_onnx)
    d = np.abs(y1 - y0)
    return {"format": "QDQ, weights int8 per channel, activations uint8 (min/max calibration)",
            "kept_float": keep_float, "calibration_windows": int(len(windows)),
            "logodds_change_mean": round(float(d.mean()), 4),
            "logodds_change_p99": round(float(np.quantile(d, 0.99)), 4),
            "sign_turned_share": round(float(np.mean(np.sign(y1) != np.sign(y0))), 5)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fp32", type=Path, default=Path("models/presence-fp32.onnx"),
                    help="the float presence model (its JSON beside it)")
    ap.add_argument("--out", type=Path, default=Path("models"), help="folder for presence.onnx and presence.json")
    ap.add_argument("--scenes", type=int, default=40, help="rendered scenes whose windows calibrate")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if not a.fp32.is_file() or not a.fp32.with_suffix(".json").is_file():
        ap.error(f"no float model and JSON at {a.fp32} and {a.fp32.with_suffix('.json')}")
    if a.scenes < 1:
        ap.error("--scenes must be at least 1")
    if a.out.resolve() / "presence.onnx" == a.fp32.resolve():
        ap.error("--out would overwrite the float model: name it otherwise (presence-fp32.onnx)")
    windows = calibration_windows(a.fp32, a.scenes, a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    info = quantize(a.fp32, a.out / "presence.onnx", windows)
    meta = json.loads(a.fp32.with_suffix(".json").read_text())
    meta["model"] = "presence.onnx"
    meta["quantization"] = {"from": a.fp32.name, "scenes": a.scenes, "seed": a.seed,
                            "command": f"python -m vision.training.quantize_presence --fp32 {a.fp32} "
                                       f"--scenes {a.scenes} --seed {a.seed}", **info}
    (a.out / "presence.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {a.out / 'presence.onnx'}: {info['calibration_windows']} calibration windows, log-odds moved "
          f"{info['logodds_change_mean']:.3f} on average, {100 * info['sign_turned_share']:.2f} % turned sign",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
