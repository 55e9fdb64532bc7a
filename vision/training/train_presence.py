"""Train the presence model (:mod:`vision.presence`) and export it to ONNX:

    python -m vision.training.presence_data --seed 0 --scenes 3600
    python -m vision.training.presence_data --seed 1 --scenes 300
    python -m vision.training.presence_data --seed 2 --scenes 2400 --tilt 0 15
    python -m vision.training.train_presence --seed 0 --extra-seeds 2 --out models/
    python -m vision.training.quantize --models presence --out models/

The training writes the float model, ``presence-fp32.onnx`` and its
``presence-fp32.json``; ``recognize`` runs its 8-bit form ``presence.onnx``,
made by :mod:`vision.training.quantize`.  Needs the ``train`` extra
(torch); inference never imports this module.  Reads the window pairs cut
by :mod:`vision.training.presence_data` (``--cache``, default
``/tmp/presence-cache``): seed ``--seed`` (and ``--extra-seeds``) for
training, seed ``--seed + 1`` for validation.  The network: four 3x3
conv-BN-ReLU stages (24, 48, 64, 96 channels, the first three with stride
2), a 2x2 max pool, dropout and one linear output (log-odds "a tile stands
here"); binary cross-entropy, AdamW with a one-cycle schedule, random 180-degree turns and
mirror images of both windows together (a turned or mirrored table is as
real as the first), per-channel gain and noise.

``--init`` fine-tunes: from a state_dict saved by ``--save-weights``, or from
an exported float model such as the shipped ``presence-fp32.onnx``
(:func:`init_from_onnx`; the model card gives the command of the shipped
model).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from vision.presence import PRESENCE_CROP, presence_input


def load(cache: Path, *seeds: int):
    files = [f for seed in seeds for f in sorted(cache.glob(f"presence-{seed}-*.npz"))]
    missing = [seed for seed in seeds if not any(cache.glob(f"presence-{seed}-*.npz"))]
    if missing:
        raise SystemExit(f"no window pairs for seed {missing[0]} in {cache}: run vision.training.presence_data first")
    ds = [np.load(f) for f in files]
    return (np.concatenate([d["raw"] for d in ds]), np.concatenate([d["labels"] for d in ds]).astype(np.float32),
            np.concatenate([d["z"] for d in ds]), np.concatenate([d["tilt"] for d in ds]), len(files))


def build_model():
    import torch.nn as nn

    def cbr(i, o, s=1):
        return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    h, w = PRESENCE_CROP.height, PRESENCE_CROP.width
    for _ in range(4):
        h, w = (h + 1) // 2, (w + 1) // 2
    return nn.Sequential(*cbr(6, 24, 2), *cbr(24, 48, 2), *cbr(48, 64, 2), *cbr(64, 96),
                         nn.MaxPool2d(2, ceil_mode=True), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(96 * h * w, 1))


def init_from_onnx(model, path: Path, calib: np.ndarray) -> None:
    """Start ``model`` (:func:`build_model`) from an exported float model (``presence-fp32.onnx``).

    The export folds each batch norm into its convolution (weight ``W'``,
    bias ``b'``).  Each convolution gets ``W'``; its batch norm is set so that
    in eval mode it adds ``b'`` exactly, and in training mode, where it
    normalises by the batch's statistics, it starts close to that: running
    mean ``mu`` and variance ``var`` of the convolution's output over the
    calibration windows, scale ``sqrt(var + eps)``, shift ``mu + b'``.  Then
    fine-tuning starts from the shipped model (which kept no torch weights).

    Args:
        model: the network of :func:`build_model`, changed in place.
        path: the ``.onnx`` file (needs the ``onnx`` package, ``train`` extra).
        calib: ``(N, 2, h, w, 3) uint8`` window pairs (a few thousand).

    Raises:
        ValueError: the file cannot be read as ONNX, is an 8-bit model, or
            is not a model of this architecture.
    """
    import onnx
    import torch
    import torch.nn as nn
    from onnx import numpy_helper

    try:
        g = onnx.load(str(path)).graph
    except Exception as exc:    # OSError, or the protobuf parser's own error for a file that is not ONNX
        raise ValueError(f"{path}: cannot read as ONNX: {' '.join(str(exc).split()) or type(exc).__name__}") from None
    init = {t.name: np.array(numpy_helper.to_array(t)) for t in g.initializer}   # writable copies
    convs = [n for n in g.node if n.op_type == "Conv"]
    gemm = [n for n in g.node if n.op_type == "Gemm"]
    mods = [m for m in model if isinstance(m, nn.Conv2d)]
    bns = [m for m in model if isinstance(m, nn.BatchNorm2d)]
    lin = [m for m in model if isinstance(m, nn.Linear)]
    if any(n.op_type in ("QuantizeLinear", "DequantizeLinear") for n in g.node):
        raise ValueError(f"{path}: an 8-bit model (vision.training.quantize); start from its float model, "
                         f"presence-fp32.onnx")
    if len(convs) != len(mods) or len(gemm) != 1 or len(lin) != 1:
        raise ValueError(f"{path}: not a presence model of this architecture")
    biases = []
    with torch.no_grad():
        for node, conv, bn in zip(convs, mods, bns):
            w, b = init[node.input[1]], init[node.input[2]]
            if w.shape != tuple(conv.weight.shape):
                raise ValueError(f"{path}: convolution of shape {w.shape}, this version has {tuple(conv.weight.shape)}")
            conv.weight.copy_(torch.from_numpy(w))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(b))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
            biases.append(torch.from_numpy(b))
        lin[0].weight.copy_(torch.from_numpy(init[gemm[0].input[1]]))
        lin[0].bias.copy_(torch.from_numpy(init[gemm[0].input[2]]))
        outs = []
        hooks = [c.register_forward_hook(lambda m, i, o: outs.append(o)) for c in mods]
        model.eval()
        model(torch.from_numpy(presence_input(calib)))
        for h in hooks:
            h.remove()
        for u, bn, b in zip(outs, bns, biases):
            mu = u.mean(dim=(0, 2, 3))
            var = u.var(dim=(0, 2, 3), unbiased=False)
            bn.weight.copy_(torch.sqrt(var + bn.eps))
            bn.bias.copy_(mu + b)
            bn.running_mean.copy_(mu)
            bn.running_var.copy_(var)


def _augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``(B, 2, h, w, 3) uint8``: turn / mirror both windows together, gain, noise."""
    x = x.copy()
    turn = rng.random(len(x)) < 0.5
    x[turn] = x[turn][:, :, ::-1, ::-1]
    flip = rng.random(len(x)) < 0.5
    x[flip] = x[flip][:, :, :, ::-1]
    gain = rng.uniform(0.85, 1.15, (len(x), 1, 1, 1, 3)).astype(np.float32)
    noise = rng.normal(0, 1, x.shape).astype(np.float32) * rng.uniform(0, 4, (len(x), 1, 1, 1, 1)).astype(np.float32)
    return np.clip(x.astype(np.float32) * gain + noise, 0, 255).astype(np.uint8)


def predict(model, raw: np.ndarray, batch: int = 1024) -> np.ndarray:
    import torch
    out = []
    with torch.no_grad():
        for i in range(0, len(raw), batch):
            out.append(model(torch.from_numpy(presence_input(raw[i:i + batch]))).numpy().reshape(-1))
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def main(argv=None) -> int:
    from vision.training.presence_data import _Parser
    ap = _Parser(prog="python -m vision.training.train_presence", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("models"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/presence-cache"))
    ap.add_argument("--extra-seeds", type=int, nargs="*", default=[],
                    help="more training sets (e.g. 2: the nearly overhead views)")
    ap.add_argument("--epochs", type=int, default=9)
    ap.add_argument("--save-weights", type=Path, default=None, help="also save the torch state_dict here")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--init", type=Path, default=None,
                    help="start from this state_dict (--save-weights of an earlier run) or exported "
                         "float model, presence-fp32.onnx (needs the onnx package), to fine-tune")
    a = ap.parse_args(argv)
    import torch
    import torch.nn as nn
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    t0 = time.time()
    if a.seed + 1 in a.extra_seeds:
        ap.error(f"seed {a.seed + 1} is the validation set")
    if a.init is not None and not a.init.is_file():
        ap.error(f"--init {a.init}: no such file")
    raw, y, z, tilt, nfiles = load(a.cache, a.seed, *a.extra_seeds)
    vraw, vy, vz, vtilt, _ = load(a.cache, a.seed + 1)
    print(f"train {len(y)} window pairs ({y.mean():.3f} present), valid {len(vy)}", flush=True)
    model = build_model()
    if a.init is not None and a.init.suffix == ".onnx":
        try:
            init_from_onnx(model, a.init, raw[np.sort(rng.choice(len(raw), min(len(raw), 4096), replace=False))])
        except ValueError as exc:
            ap.error(f"--init {exc}")
    elif a.init is not None:
        model.load_state_dict(torch.load(a.init))
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    nb = len(raw) // a.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=max(1, a.epochs * nb), pct_start=0.15)
    loss_fn = nn.BCEWithLogitsLoss()

    def valid():
        model.eval()
        lv = predict(model, vraw)
        model.train()
        acc = float(((lv > 0) == (vy > 0.5)).mean())
        return lv, acc

    if a.init is not None:
        print(f"started from {a.init}: valid accuracy {valid()[1]:.4f}", flush=True)
    for ep in range(a.epochs):
        model.train()
        order = rng.permutation(len(raw))
        tot = 0.0
        for b in range(nb):
            idx = np.sort(order[b * a.batch:(b + 1) * a.batch])
            xb = torch.from_numpy(presence_input(_augment(raw[idx], rng)))
            yb = torch.from_numpy(y[idx])
            opt.zero_grad()
            loss = loss_fn(model(xb).reshape(-1), yb)
            loss.backward()
            opt.step()
            sched.step()
            tot += float(loss.detach())
        lv, acc = valid()
        print(f"epoch {ep + 1}/{a.epochs}: loss {tot / max(nb, 1):.4f}, valid accuracy {acc:.4f}, "
              f"{time.time() - t0:.0f} s", flush=True)
    model.eval()
    lv, acc = valid()
    by_z = {int(k): round(float(((lv[vz == k] > 0) == (vy[vz == k] > 0.5)).mean()), 4) for k in np.unique(vz)}
    by_tilt = {f"{int(k) * 10}-{int(k) * 10 + 10}": round(float(((lv[(vtilt // 10) == k] > 0)
                                                                == (vy[(vtilt // 10) == k] > 0.5)).mean()), 4)
               for k in np.unique(vtilt // 10)}
    print(f"valid accuracy {acc:.4f}; by layer {by_z}; by tilt {by_tilt}", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    x = torch.zeros(2, 6, PRESENCE_CROP.height, PRESENCE_CROP.width)
    torch.onnx.export(model, x, str(a.out / "presence-fp32.onnx"), input_names=["windows"], output_names=["logit"],
                      dynamic_axes={"windows": {0: "n"}, "logit": {0: "n"}}, opset_version=17, dynamo=False)
    n_params = sum(p.numel() for p in model.parameters())
    meta = {"model": "presence-fp32.onnx", "input": PRESENCE_CROP.to_json(), "input_shape": ["n", 6, PRESENCE_CROP.height,
                                                                                        PRESENCE_CROP.width],
            "channels": "BGR of the window at the slot's height, then BGR one layer (20 mm) lower",
            "output": "log-odds that a tile stands in the slot", "logit_bias": 0.0,
            "training": {"seed": a.seed, "extra_seeds": list(a.extra_seeds),
                         "command": "python -m vision.training.presence_data --seed 0 --scenes 3600; "
                                    "python -m vision.training.presence_data --seed 1 --scenes 300; "
                                    "python -m vision.training.presence_data --seed 2 --scenes 2400 --tilt 0 15; "
                                    f"python -m vision.training.train_presence --seed {a.seed}"
                                    + "".join(f" --extra-seeds {e}" for e in a.extra_seeds[:1])
                                    + "".join(f" {e}" for e in a.extra_seeds[1:])
                                    + f" --epochs {a.epochs} --lr {a.lr:g}"
                                    + (f" --init {a.init}" if a.init is not None else ""),
                         "window_pairs": int(len(y)), "present_share": round(float(y.mean()), 4),
                         "epochs": a.epochs, "parameters": n_params, "minutes": round((time.time() - t0) / 60, 1)},
            "validation": {"window_pairs": int(len(vy)), "accuracy": round(acc, 5), "by_layer": by_z,
                           "by_tilt_deg": by_tilt}}
    (a.out / "presence-fp32.json").write_text(json.dumps(meta, indent=1) + "\n")
    if a.save_weights:
        torch.save(model.state_dict(), a.save_weights)
    print(f"wrote {a.out / 'presence-fp32.onnx'} ({n_params} parameters, {(time.time() - t0) / 60:.1f} min); "
          f"its 8-bit form for recognize: python -m vision.training.quantize --models presence "
          f"--presence-fp32 {a.out / 'presence-fp32.onnx'} --out {a.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
