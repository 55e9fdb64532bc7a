"""Train the tile classifier and export it to ONNX, in one seeded command:

    python -m vision.training.train_classifier --seed 0 --out models/

Needs the ``train`` extra (``pip install torch==2.13.0``); inference never
imports this module.  Steps:

1. render ``--scenes`` synthetic scenes (:mod:`vision.synth`) and cut labelled
   patches with the shared crop function (:mod:`vision.training.dataset`),
   in ``--workers`` processes; the arrays are cached under ``--cache``
   (default ``/tmp/companion-tiles-cache``), never in the repository;
2. train :class:`TileNet` (about 0.2 M parameters) with AdamW and a one-cycle
   schedule, label smoothing, random 180-degree turns, per-channel gain and
   noise augmentation, and synthetic occluder bands over part of half the
   faces (``--occlude``);
3. check it on ``--valid-scenes`` scenes of another seed stream, export
   ``tiles-fp32.onnx`` (opset 17, dynamic batch) and ``tiles-fp32.json``
   (classes, input size, normalisation, seed, data description, validation
   figures).

``recognize`` and the referee run its 8-bit form ``tiles.onnx``:
``python -m vision.training.quantize --models tiles --out models/``
(:mod:`vision.training.quantize`).

With ``--blank 1`` the same network is trained on windows whose part hidden
by taller tiles in front is blanked as well (:func:`_blank`, the masks cut
beside the patches by :mod:`vision.training.dataset`) and exported as
``tiles-blank-fp32.onnx``: ``recognize`` reads partly hidden faces a second
time with its 8-bit form ``tiles-blank.onnx``
(``python -m vision.training.quantize --models tiles-blank --out models/``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from vision.crops import CropSettings, normalise
from vision.training.dataset import LabelSettings, all_classes, make_scene_samples

DATA_VERSION = 7            # 7: each patch's hidden mask cached beside it
# Share of the class-weight logit adjustment undone at export (see export()):
# 1 gives the posteriors of the training mix, which holds about twice as many
# "none" windows per face as a photo does at inference.  Chosen among 0, 0.15,
# 0.3, 0.5, 0.75 on bench photos 0-39 and 200-239 (bench seeds, never used in
# training); 0-0.3 were within noise of each other, 0.5 and above worse.
LOGIT_ADJUST_STRENGTH = 0.15
#: share of face patches given a synthetic occluder band in training
#: (:func:`_occlude`), the band's width as a share of the patch, and its gain.
OCCLUDE_SHARE = 0.5
OCCLUDE_BAND = (0.15, 0.45)
OCCLUDE_GAIN = (0.55, 1.1)
#: share of the patches whose face taller tiles in front partly hide (a
#: hidden mask from the tiles truly standing, vision.training.dataset) that
#: are read with the hidden part blanked (vision.crops.blank_hidden), as
#: ``recognize`` reads such faces a second time; and the share of the other
#: face patches given a blanked band of :data:`OCCLUDE_BAND` along one side
#: instead of an occluder (:func:`_blank`)
BLANK_SHARE = 0.5
BLANK_BAND_SHARE = 0.2


def build_model(n_classes: int, crop: CropSettings, width: float = 1.0):
    """The CNN: four 3x3 conv-BN-ReLU stages (three with stride 2), a 2x2 max
    pool, dropout and one linear layer.  Input ``(N, 3, 48, 36)``.  ``width``
    scales the stages' channels (16, 32, 64, 96 at 1; the shipped model)."""
    import torch.nn as nn

    def cbr(i, o, s=1):
        return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    h, w = crop.height, crop.width
    for _ in range(3):
        h, w = (h + 1) // 2, (w + 1) // 2
    h, w = (h + 1) // 2, (w + 1) // 2
    c1, c2, c3, c4 = (int(round(c * width)) for c in (16, 32, 64, 96))
    return nn.Sequential(*cbr(3, c1, 2), *cbr(c1, c2, 2), *cbr(c2, c3, 2), *cbr(c3, c4),
                         nn.MaxPool2d(2, ceil_mode=True), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(c4 * h * w, n_classes))


def _worker(args):
    seed, ks, crop_json, out_path = args
    import cv2
    cv2.setNumThreads(1)
    crop = CropSettings.from_json(crop_json)
    raws, labels, infos, hidden = [], [], [], []
    for k in ks:
        raw, lab, info, hid = make_scene_samples(seed, k, crop, LabelSettings(), masks=True)
        raws.append(raw)
        labels += lab
        infos.append(info)
        hidden.append(hid)
    np.savez(out_path + ".tmp.npz",
             raw=np.concatenate(raws) if raws else np.zeros((0, crop.height, crop.width, 3), np.uint8),
             hidden=_pack(np.concatenate(hidden) if hidden else np.zeros((0, crop.height, crop.width), bool)),
             labels=np.array(labels, dtype=object), infos=json.dumps(infos), allow_pickle=True)
    os.replace(out_path + ".tmp.npz", out_path)
    return out_path, infos


def generate(seed: int, n_scenes: int, crop: CropSettings, cache: Path, workers: int, tag: str,
             start: int = 0):
    """Cut (or load from the cache) the labelled patches of scenes ``start ..
    start + n_scenes - 1``.

    Returns:
        ``(raw (M, h, w, 3) uint8, labels list[str], summary dict, hidden
        (M, h, w) bool)``: ``hidden`` the patches' hidden masks
        (:func:`vision.training.dataset.scene_samples`).
    """
    cache.mkdir(parents=True, exist_ok=True)
    first = f"-from{start}" if start else ""
    path = cache / f"{tag}-seed{seed}{first}-n{n_scenes}-{crop.height}x{crop.width}-v{DATA_VERSION}.npz"
    if path.exists():
        d = np.load(path, allow_pickle=True)
        return d["raw"], list(d["labels"]), json.loads(str(d["summary"])), _unpack(d["hidden"], d["raw"].shape)
    from multiprocessing import get_context
    n_chunks = max(1, workers * 4, n_scenes // 25)
    chunks = [list(range(start + i, start + n_scenes, n_chunks)) for i in range(n_chunks)]
    stem = f"part-{tag}-seed{seed}{first}-n{n_scenes}-{crop.height}x{crop.width}-v{DATA_VERSION}"
    jobs = [(seed, ks, crop.to_json(), str(cache / f"{stem}-{i}.npz")) for i, ks in enumerate(chunks)]
    t0 = time.time()
    raws, labels, infos, hidden = [], [], [], []
    todo = [j for j in jobs if not Path(j[3]).exists()]
    done = [j for j in jobs if Path(j[3]).exists()]
    results = [(j[3], json.loads(str(np.load(j[3], allow_pickle=True)["infos"]))) for j in done]
    if todo:
        with get_context("spawn").Pool(workers) as pool:
            for out_path, inf in pool.imap_unordered(_worker, todo):
                results.append((out_path, inf))
                print(f"  {tag}: {sum(len(r[1]) for r in results)}/{n_scenes} scenes, "
                      f"{time.time() - t0:.0f} s", flush=True)
    for out_path, inf in sorted(results):
        d = np.load(out_path, allow_pickle=True)
        raws.append(d["raw"])
        hidden.append(_unpack(d["hidden"], d["raw"].shape))
        labels += list(d["labels"])
        infos += inf
    raw = np.concatenate(raws)
    hid = np.concatenate(hidden)
    summary = {"scenes": n_scenes, "patches": len(labels),
               "faces": sum(i["face"] for i in infos), "none": sum(i["none"] for i in infos),
               "occluded": sum(i["occluded"] for i in infos), "skipped": sum(i["skipped"] for i in infos),
               "pose_estimated": sum(i["pose"] == "estimated" for i in infos)}
    summary["partly_hidden"] = int(hid.any(axis=(1, 2)).sum())
    np.savez(path, raw=raw, hidden=_pack(hid), labels=np.array(labels, dtype=object), summary=json.dumps(summary))
    for j in jobs:
        Path(j[3]).unlink(missing_ok=True)
    return raw, labels, summary, hid


def _pack(hidden: np.ndarray) -> np.ndarray:
    """``(M, h, w) bool`` masks as bits (``np.packbits`` per patch)."""
    return np.packbits(hidden.reshape(len(hidden), int(np.prod(hidden.shape[1:]))), axis=1)


def _unpack(bits: np.ndarray, raw_shape: tuple) -> np.ndarray:
    """:func:`_pack`'s masks back, ``(M, h, w) bool`` for patches of ``raw_shape``."""
    m, h, w = raw_shape[:3]
    return np.unpackbits(bits, axis=1, count=h * w).reshape(m, h, w).astype(bool)


def generate_blocks(seed: int, n_scenes: int, block: int, crop: CropSettings, cache: Path, workers: int):
    """The training patches of scenes ``0 .. n_scenes - 1``, cut and cached in
    blocks of ``block`` scenes (:func:`generate` with ``start`` 0, ``block``,
    ...), so a run on more scenes reuses the blocks of a shorter one.

    Returns:
        As :func:`generate`; the summary's counts summed over the blocks.
    """
    raws, labels, summary, hidden = [], [], {}, []
    for start in range(0, n_scenes, max(1, block)):
        r, lab, s, hid = generate(seed, min(block, n_scenes - start), crop, cache, workers, "train", start)
        raws.append(r)
        hidden.append(hid)
        labels += lab
        for k, v in s.items():
            summary[k] = summary.get(k, 0) + v
    if len(raws) == 1:
        return raws[0], labels, summary, hidden[0]
    return np.concatenate(raws), labels, summary, np.concatenate(hidden)


def _occlude(x: np.ndarray, rng: np.random.Generator, faces: np.ndarray, share: float = OCCLUDE_SHARE) -> np.ndarray:
    """A synthetic occluder over part of some faces, in place.

    On a share ``share`` of the patches marked in ``faces``, a band along one
    random side (:data:`OCCLUDE_BAND` of the patch's height or width) is
    replaced by the band on the opposite side of another patch of the batch
    (as it stands, perhaps with an occluder of its own), scaled by a gain in
    :data:`OCCLUDE_GAIN`: a taller neighbour's wall and
    face edge over part of the face, as in a tilted view of a stacked layout.
    The label stays the face (at most about 45 % of it is hidden), so the
    network learns to read a face from the part in sight (the rules in
    :mod:`vision.reconstruct` withhold faces hidden by more).

    Args:
        x: ``(B, h, w, 3)`` uint8 raw patches, changed in place.
        rng: the training run's generator.
        faces: ``(B,)`` bool, the patches labelled with a face.
        share: the chance of an occluder for each of them.

    Returns:
        ``x``.
    """
    if share <= 0 or len(x) < 2:
        return x
    h, w = x.shape[1:3]
    for i in np.flatnonzero(faces & (rng.random(len(x)) < share)):
        j = int(rng.integers(len(x) - 1))
        j += j >= i                                      # another patch of the batch
        side = int(rng.integers(4))
        n = int(round(rng.uniform(*OCCLUDE_BAND) * (h if side < 2 else w)))
        band = np.clip(x[j].astype(np.float32) * rng.uniform(*OCCLUDE_GAIN), 0, 255).astype(np.uint8)
        if side == 0:
            x[i, :n] = band[h - n:]                      # top of i <- bottom of j
        elif side == 1:
            x[i, h - n:] = band[:n]
        elif side == 2:
            x[i, :, :n] = band[:, w - n:]
        else:
            x[i, :, w - n:] = band[:, :n]
    return x


def _blank(x: np.ndarray, rng: np.random.Generator, hidden: np.ndarray, faces: np.ndarray,
           share: float = BLANK_SHARE, band_share: float = BLANK_BAND_SHARE) -> np.ndarray:
    """Blank the hidden part of some patches, in place
    (:func:`vision.crops.blank_hidden`, as ``recognize`` reads a partly
    hidden face again).

    A share ``share`` of the patches with a hidden mask are blanked by it;
    a share ``band_share`` of the other face patches get a blanked band along
    one random side (:data:`OCCLUDE_BAND` of the patch's height or width), so
    the network reads a face from any part of it left in sight.  The labels
    stay as they are.

    Args:
        x: ``(B, h, w, 3)`` uint8 raw patches, changed in place.
        rng: the training run's generator.
        hidden: ``(B, h, w)`` bool hidden masks.
        faces: ``(B,)`` bool, the patches labelled with a face.

    Returns:
        ``(B,)`` bool, the patches blanked.
    """
    from vision.crops import blank_hidden
    h, w = x.shape[1:3]
    real = hidden.any(axis=(1, 2))
    masks = np.array(hidden, bool, copy=True)
    done = real & (rng.random(len(x)) < share)
    band = faces & ~real & (rng.random(len(x)) < band_share)
    for i in np.flatnonzero(band):
        side = int(rng.integers(4))
        n = int(round(rng.uniform(*OCCLUDE_BAND) * (h if side < 2 else w)))
        (masks[i, :n] if side == 0 else masks[i, h - n:] if side == 1
         else masks[i, :, :n] if side == 2 else masks[i, :, w - n:])[...] = True
    done |= band
    if done.any():
        x[done] = blank_hidden(x[done], masks[done])
    return done


def _augment(x: np.ndarray, rng: np.random.Generator, faces: np.ndarray | None = None,
             occlude: float = OCCLUDE_SHARE, hidden: np.ndarray | None = None) -> np.ndarray:
    """Raw uint8 patches ``(B, h, w, 3)``: the hidden part of some patches
    blanked (:func:`_blank`; ``hidden``: ``(B, h, w) bool`` masks, None:
    none), a synthetic occluder over part of some other faces
    (:func:`_occlude`; ``faces``: ``(B,) bool``, the patches labelled with a
    face, None: no occluders), random 180-degree turn, per-channel gain,
    additive noise.  Returns a new array."""
    x = x.copy()
    if faces is not None:
        if hidden is not None:
            faces = faces & ~_blank(x, rng, hidden, faces)
        _occlude(x, rng, faces, occlude)
    turn = rng.random(len(x)) < 0.5
    x[turn] = x[turn, ::-1, ::-1]
    gain = rng.uniform(0.85, 1.15, (len(x), 1, 1, 3)).astype(np.float32)
    noise = rng.normal(0, 1, x.shape).astype(np.float32) * rng.uniform(0, 5, (len(x), 1, 1, 1)).astype(np.float32)
    return np.clip(x.astype(np.float32) * gain + noise, 0, 255).astype(np.uint8)


def train(raw: np.ndarray, y: np.ndarray, n_classes: int, crop: CropSettings, seed: int, epochs: int,
          batch: int = 256, lr: float = 3e-3, log=print, on_epoch=None, occlude: float = OCCLUDE_SHARE,
          hidden: np.ndarray | None = None):
    import torch
    import torch.nn as nn

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build_model(n_classes, crop)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * (len(raw) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(1, steps), pct_start=0.15)
    # class weights: faces are rarer than "none"; weight by inverse sqrt frequency
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    is_face = y < n_classes - 2                    # the last two classes: "none", "occluded"
    wts = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1)), 0.0)
    wts = wts / (wts[counts > 0] * counts[counts > 0]).sum() * counts.sum()
    model.logit_adjust = np.log(np.maximum(wts, 1e-12))   # undone at export (see export())
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor(wts, dtype=torch.float32), label_smoothing=0.05)
    t0 = time.time()
    step = 0
    for ep in range(epochs):
        model.train()
        order = rng.permutation(len(raw))
        tot, correct, seen = 0.0, 0, 0
        for b in range(len(raw) // batch):
            idx = np.sort(order[b * batch:(b + 1) * batch])
            xb = torch.from_numpy(normalise(_augment(raw[idx], rng, is_face[idx], occlude,
                                                     None if hidden is None else hidden[idx]), crop))
            yb = torch.from_numpy(y[idx])
            opt.zero_grad()
            out = model(xb)
            loss = loss_fn(out, yb)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            tot += float(loss.detach()) * len(idx)
            correct += int((out.argmax(1) == yb).sum())
            seen += len(idx)
            if b % 100 == 0:
                log(f"  epoch {ep + 1}/{epochs} batch {b}/{len(raw) // batch} loss {tot / seen:.4f} "
                    f"acc {correct / seen:.4f} {time.time() - t0:.0f} s")
        log(f"epoch {ep + 1}: loss {tot / max(seen, 1):.4f} train acc {correct / max(seen, 1):.4f} "
            f"{time.time() - t0:.0f} s")
        if on_epoch is not None:
            model.eval()
            on_epoch(model, ep + 1)
    model.eval()
    return model


def predict(model, raw: np.ndarray, crop: CropSettings, batch: int = 1024) -> np.ndarray:
    import torch
    outs = []
    with torch.no_grad():
        for i in range(0, len(raw), batch):
            outs.append(model(torch.from_numpy(normalise(raw[i:i + batch], crop))).numpy())
    return np.concatenate(outs) if outs else np.zeros((0, 0), np.float32)


def export(model, out_dir: Path, crop: CropSettings, classes, meta_extra: dict, name: str = "tiles") -> None:
    import copy

    import torch
    out_dir.mkdir(parents=True, exist_ok=True)
    # The loss weighted class c by w_c, which scales the learnt odds by w_c;
    # subtracting log w_c from the last layer's bias gives back posteriors for
    # the data's own class frequencies ("logit adjustment", Menon et al.,
    # "Long-tail learning via logit adjustment", ICLR 2021), so that "none"
    # is not under-rated against the sum of the faces at inference;
    # LOGIT_ADJUST_STRENGTH of it is undone.
    adjust = getattr(model, "logit_adjust", None)
    if adjust is not None:
        model = copy.deepcopy(model)
        with torch.no_grad():
            model[-1].bias -= LOGIT_ADJUST_STRENGTH * torch.tensor(adjust, dtype=model[-1].bias.dtype)
        meta_extra = dict(meta_extra, logit_adjust_strength=LOGIT_ADJUST_STRENGTH)
    x = torch.zeros(2, *crop.shape)
    onnx_path = out_dir / f"{name}-fp32.onnx"
    torch.onnx.export(model, x, str(onnx_path), input_names=["patches"], output_names=["logits"],
                      dynamic_axes={"patches": {0: "n"}, "logits": {0: "n"}}, opset_version=17,
                      dynamo=False)
    meta = {"model": f"{name}-fp32.onnx", "classes": list(classes), "input": crop.to_json(),
            "input_shape": ["n", *crop.shape], "output": "logits over classes (softmax restricted at inference)"}
    meta.update(meta_extra)
    (out_dir / f"{name}-fp32.json").write_text(json.dumps(meta, indent=1) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("models"))
    ap.add_argument("--scenes", type=int, default=5600)
    ap.add_argument("--valid-scenes", type=int, default=60)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--occlude", type=float, default=OCCLUDE_SHARE,
                    help="share of face patches given a synthetic occluder band in training (0: none)")
    ap.add_argument("--blank", type=int, choices=(0, 1), default=0,
                    help="1: train on windows with their hidden part blanked too, for the second read "
                         "recognize gives partly hidden faces (models/tiles-blank.onnx); 0: the plain "
                         "classifier (models/tiles.onnx)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/companion-tiles-cache"))
    ap.add_argument("--block", type=int, default=2800,
                    help="scenes per cached block (a longer run reuses the blocks of a shorter one)")
    args = ap.parse_args(argv)
    if not 0.0 <= args.occlude <= 1.0:
        ap.error(f"--occlude must lie between 0 and 1, not {args.occlude}")
    args.name = "tiles-blank" if args.blank else "tiles"      # the exported model: NAME-fp32.onnx
    import torch
    torch.set_num_threads(args.threads)
    crop = CropSettings()
    classes = all_classes()
    index = {c: i for i, c in enumerate(classes)}
    t0 = time.time()
    print(f"generating {args.scenes} training scenes (seed {args.seed})", flush=True)
    raw, labels, summary, hidden = generate_blocks(args.seed, args.scenes, args.block, crop, args.cache,
                                                   args.workers)
    vseed = 1_000_000 + args.seed
    print(f"generating {args.valid_scenes} validation scenes (seed {vseed})", flush=True)
    vraw, vlabels, vsummary, vhidden = generate(vseed, args.valid_scenes, crop, args.cache, args.workers, "valid")
    y = np.array([index[l] for l in labels], np.int64)
    vy = np.array([index[l] for l in vlabels], np.int64)
    print(f"data: {summary} ({time.time() - t0:.0f} s)", flush=True)
    def checkpoint(model, ep):   # a usable model after every epoch (exported to OUT/epoch-N/)
        export(model, args.out / f"epoch-{ep}", crop, classes,
               {"training": {"seed": args.seed, "epoch": ep, "blank": args.blank}}, args.name)

    model = train(raw, y, len(classes), crop, args.seed, args.epochs, log=lambda s: print(s, flush=True),
                  on_epoch=checkpoint, occlude=args.occlude, hidden=hidden if args.blank else None)
    logits = predict(model, vraw, crop)
    pred = logits.argmax(1)
    n_face = len(classes) - 2
    is_face = vy < n_face
    # restricted to the scene's variant (as at inference) for faces
    var_of = np.array([c.split("/")[0] if "/" in c else "" for c in classes])
    acc_all = float((pred == vy).mean())
    acc_face = float((pred[is_face] == vy[is_face]).mean()) if is_face.any() else float("nan")
    print(f"validation: {len(vy)} patches, accuracy {acc_all:.4f}, faces {acc_face:.4f}", flush=True)
    from vision.crops import blank_hidden
    partly = is_face & vhidden.any(axis=(1, 2))
    bpred = predict(model, blank_hidden(vraw[partly], vhidden[partly]), crop).argmax(1)
    acc_partly = float((pred[partly] == vy[partly]).mean()) if partly.any() else float("nan")
    acc_blanked = float((bpred == vy[partly]).mean()) if partly.any() else float("nan")
    print(f"partly hidden faces: {int(partly.sum())}, accuracy {acc_partly:.4f}, "
          f"hidden part blanked {acc_blanked:.4f}", flush=True)
    n_params = sum(p.numel() for p in model.parameters())
    export(model, args.out, crop, classes, {
        "training": {"seed": args.seed, "command": f"python -m vision.training.train_classifier --seed {args.seed} "
                                                    f"--scenes {args.scenes} --epochs {args.epochs} "
                                                    f"--occlude {args.occlude} --blank {args.blank} "
                                                    f"--out {args.out}/",
                     "scenes": args.scenes, "epochs": args.epochs, "occlude": args.occlude,
                     "blank": args.blank, "data": summary,
                     "data_description": "patches cut with vision.crops from synthetic scenes "
                                         "(vision.synth.render_scene: 4 tile sets, 13 built-in and random layouts, "
                                         "0-60% removed as free pairs, tilt 0-45 deg, hands in 35%, lighting, "
                                         "blur, noise, JPEG), pose from vision.pose.estimate_pose; labels from "
                                         "the scene's per-pixel label image (vision/training/dataset.py)",
                     "scene_seeds": f"np.random.default_rng(({args.seed}, k)), k < {args.scenes}",
                     "parameters": n_params, "minutes": round((time.time() - t0) / 60, 1)},
        "validation": {"scene_seeds": f"np.random.default_rng(({vseed}, k)), k < {args.valid_scenes}",
                       "patches": len(vy), "accuracy": round(acc_all, 5), "face_accuracy": round(acc_face, 5),
                       "partly_hidden_faces": int(partly.sum()), "partly_hidden_accuracy": round(acc_partly, 5),
                       "partly_hidden_blanked_accuracy": round(acc_blanked, 5)},
    }, args.name)
    del var_of
    print(f"wrote {args.out / (args.name + '-fp32.onnx')} and {args.name}-fp32.json ({n_params} parameters, "
          f"{(time.time() - t0) / 60:.1f} min); its 8-bit form for recognize: "
          f"python -m vision.training.quantize --models {args.name} "
          f"--{args.name}-fp32 {args.out / (args.name + '-fp32.onnx')} "
          f"--out {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
