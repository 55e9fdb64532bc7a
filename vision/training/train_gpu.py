"""Train tile classifiers of several widths at once on a GPU, on as many
scenes as a time budget allows (an experiment: is the classifier's size or
its data the lever?).

    python -m vision.training.train_gpu --seed 0 --widths 1 2 --out OUT/ \\
        --render-seconds 200 --max-scenes 11200 --epochs 8

Steps (needs torch, and a CUDA device for the budgets to make sense):

1. render training scenes ``0, 1, 2, ...`` of seed ``--seed`` (the same
   scenes as :mod:`vision.training.train_classifier`: scene ``k`` from
   ``np.random.default_rng((seed, k))``) in ``--workers`` processes, in order,
   until ``--max-scenes`` or ``--render-seconds`` is reached; the scenes used
   are always a prefix ``0 .. K-1`` (K is reported), so a run can be redone;
2. keep every patch on the GPU as uint8 and augment there
   (:func:`augment_t`: the occluder bands of
   :func:`vision.training.train_classifier._occlude`, the random 180-degree
   turn, per-channel gain and noise of ``_augment``, then
   :func:`vision.crops.normalise`'s per-patch normalisation), so the data
   costs nothing per step;
3. train one :func:`vision.training.train_classifier.build_model` per
   ``--widths`` entry on the very same batches (same recipe: AdamW, one-cycle
   to ``--lr``, label smoothing 0.05, class weights 1/sqrt(frequency));
4. check each on the 60 validation scenes of seed stream ``1000000 + seed``
   and export it with :func:`vision.training.train_classifier.export` as
   ``tiles-wW-fp32.onnx`` (and its ``state_dict`` as ``tiles-wW.pt``).

The shipped model is trained on the CPU by ``train_classifier``; this module
exists to measure what a larger network or more scenes would give
(``models/HISTORY.md``, session 45).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from vision.crops import CropSettings
from vision.training.dataset import all_classes
from vision.training.train_classifier import (OCCLUDE_BAND, OCCLUDE_GAIN, OCCLUDE_SHARE, _worker,
                                              build_model, export, generate)


def render_prefix(seed: int, max_scenes: int, seconds: float, crop: CropSettings, workers: int,
                  tmp: Path, chunk: int = 16, log=print):
    """Training scenes ``0 .. K-1`` rendered and cut, K the largest multiple of
    ``chunk`` done within ``seconds`` (at most ``max_scenes``).

    Returns:
        ``(raw (M, h, w, 3) uint8, labels list[str], K)``.
    """
    from multiprocessing import get_context
    tmp.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, list(range(s, min(s + chunk, max_scenes))), crop.to_json(), str(tmp / f"c{s}.npz"))
            for s in range(0, max_scenes, chunk)]
    t0 = time.time()
    raws, labels, n = [], [], 0
    pool = get_context("spawn").Pool(workers)
    try:
        for out_path, _infos in pool.imap(_worker, jobs):
            d = np.load(out_path, allow_pickle=True)
            raws.append(d["raw"])
            labels += list(d["labels"])
            Path(out_path).unlink()
            n += chunk
            if n % (chunk * 25) == 0:
                log(f"  {n} scenes, {len(labels)} patches, {time.time() - t0:.0f} s")
            if time.time() - t0 > seconds:
                break
    finally:
        pool.terminate()
    n = min(n, max_scenes)
    log(f"rendered {n} scenes, {len(labels)} patches in {time.time() - t0:.0f} s")
    return np.concatenate(raws), labels, n


def augment_t(x, faces, gen, occlude: float = OCCLUDE_SHARE, std_floor: float = 12.0,
              turn: float = 0.5, gain: tuple[float, float] = (0.85, 1.15), noise_sd: float = 5.0):
    """:func:`vision.training.train_classifier._augment` (without blanking)
    and :func:`vision.crops.normalise`, on the GPU.

    Args:
        x: ``(B, h, w, 3)`` uint8 tensor of raw patches.
        faces: ``(B,)`` bool tensor, the patches labelled with a face.
        gen: a ``torch.Generator`` on ``x``'s device.
        occlude: the chance of an occluder band for each face patch.
        std_floor: :class:`vision.crops.CropSettings`'s ``std_floor``.
        turn, gain, noise_sd: the chance of a 180-degree turn, the range
            of the per-channel gain, the largest noise standard deviation
            (grey levels), as ``_augment`` draws them.

    Returns:
        ``(B, 3, h, w)`` float32, normalised per patch.
    """
    import torch
    dev = x.device
    b, h, w, _ = x.shape

    def u(lo, hi, *shape):
        return lo + (hi - lo) * torch.rand(*shape, generator=gen, device=dev)

    xf = x.float()
    # occluder bands: the opposite band of another patch of the batch, darkened or not
    sel = faces & (torch.rand(b, generator=gen, device=dev) < occlude)
    j = torch.randint(0, b - 1, (b,), generator=gen, device=dev)
    j = j + (j >= torch.arange(b, device=dev)).long()
    side = torch.randint(0, 4, (b,), generator=gen, device=dev)
    size = torch.where(side < 2, h, w).float()
    n = torch.round(u(*OCCLUDE_BAND, b) * size).long()
    r = torch.arange(h, device=dev)[None, :, None]
    c = torch.arange(w, device=dev)[None, None, :]
    s = side[:, None, None]
    nn_ = n[:, None, None]
    band = (((s == 0) & (r < nn_)) | ((s == 1) & (r >= h - nn_)) | ((s == 2) & (c < nn_))
            | ((s == 3) & (c >= w - nn_)))
    band = band & sel[:, None, None]
    src_r = torch.where(s == 0, r + h - nn_, torch.where(s == 1, r - (h - nn_), r)).clamp(0, h - 1)
    src_c = torch.where(s == 2, c + w - nn_, torch.where(s == 3, c - (w - nn_), c)).clamp(0, w - 1)
    src_r = src_r.expand(b, h, w)
    src_c = src_c.expand(b, h, w)
    other = xf[j[:, None, None].expand(b, h, w), src_r, src_c]          # (B, h, w, 3)
    other = (other * u(*OCCLUDE_GAIN, b)[:, None, None, None]).clamp(0, 255).floor()
    xf = torch.where(band[..., None], other, xf)
    # random 180-degree turn
    turned = torch.rand(b, generator=gen, device=dev) < turn
    xf = torch.where(turned[:, None, None, None], xf.flip(1, 2), xf)
    # per-channel gain and noise, back to whole grey levels
    g = u(*gain, b, 1, 1, 3)
    noise = torch.randn(xf.shape, generator=gen, device=dev) * u(0, noise_sd, b, 1, 1, 1)
    xf = (xf * g + noise).clamp(0, 255).floor()
    # normalise (vision.crops.normalise)
    xf = xf.permute(0, 3, 1, 2)
    xf = xf - xf.mean(dim=(2, 3), keepdim=True)
    sd = xf.pow(2).mean(dim=(1, 2, 3), keepdim=True).sqrt().clamp_min(std_floor)
    return (xf / sd).contiguous()


def _affordable_epochs(args, X, Y, is_face, gen, n_classes, crop, loss_fn, steps_per_epoch, log) -> int:
    """``args.epochs``, or fewer where 20 timed steps of every width say they
    would not fit in ``args.train_seconds``."""
    import torch
    probe = [build_model(n_classes, crop, width=wd).to(X.device).to(memory_format=torch.channels_last)
             for wd in args.widths]
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-4, fused=X.device.type == "cuda") for m in probe]
    dt = 0.0
    for it in range(25):
        if it == 5:
            if X.device.type == "cuda":
                torch.cuda.synchronize()
            t = time.time()
        idx = torch.randint(0, len(Y), (args.batch,), device=X.device)
        xb = augment_t(X[idx], is_face[idx], gen, std_floor=crop.std_floor).contiguous(memory_format=torch.channels_last)
        for m, o in zip(probe, opts):
            o.zero_grad(set_to_none=True)
            loss_fn(m(xb), Y[idx]).backward()
            o.step()
    if X.device.type == "cuda":
        torch.cuda.synchronize()
    dt = (time.time() - t) / 20
    epochs = max(1, min(args.epochs, int(args.train_seconds / (dt * steps_per_epoch))))
    log(f"{dt * 1000:.1f} ms a step ({len(probe)} widths), {steps_per_epoch} steps an epoch: {epochs} epochs "
        f"(asked {args.epochs}, budget {args.train_seconds:.0f} s)")
    return epochs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--widths", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--max-scenes", type=int, default=11200)
    ap.add_argument("--render-seconds", type=float, default=200)
    ap.add_argument("--valid-scenes", type=int, default=60)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--train-seconds", type=float, default=180,
                    help="fewer epochs where the asked ones would not fit (timed on 20 steps)")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--workers", type=int, default=15)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tmp", type=Path, default=Path("/tmp/companion-gpu"))
    args = ap.parse_args(argv)
    import torch
    import torch.nn as nn
    t0 = time.time()
    log_lines = []

    def log(s):
        print(s, flush=True)
        log_lines.append(s)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "train_gpu.log").write_text("\n".join(log_lines) + "\n")

    dev = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    crop = CropSettings()
    classes = all_classes()
    index = {c: i for i, c in enumerate(classes)}
    vseed = 1_000_000 + args.seed
    vraw, vlabels, _vs, _vh = generate(vseed, args.valid_scenes, crop, args.tmp, args.workers, "valid")
    log(f"validation: {len(vlabels)} patches ({time.time() - t0:.0f} s)")
    raw, labels, k = render_prefix(args.seed, args.max_scenes, args.render_seconds, crop, args.workers,
                                   args.tmp, log=log)
    y_np = np.array([index[s] for s in labels], np.int64)
    n_classes = len(classes)
    counts = np.bincount(y_np, minlength=n_classes).astype(np.float64)
    wts = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1)), 0.0)
    wts = wts / (wts[counts > 0] * counts[counts > 0]).sum() * counts.sum()
    X = torch.from_numpy(raw).to(dev)
    Y = torch.from_numpy(y_np).to(dev)
    is_face = Y < n_classes - 2
    del raw
    torch.manual_seed(args.seed)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    steps_per_epoch = len(Y) // args.batch
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor(wts, dtype=torch.float32, device=dev), label_smoothing=0.05)
    epochs = _affordable_epochs(args, X, Y, is_face, gen, n_classes, crop, loss_fn, steps_per_epoch, log)
    models, opts, scheds = [], [], []
    for wd in args.widths:
        m = build_model(n_classes, crop, width=wd).to(dev).to(memory_format=torch.channels_last)
        m.logit_adjust = np.log(np.maximum(wts, 1e-12))
        o = torch.optim.AdamW(m.parameters(), lr=args.lr, weight_decay=1e-4, fused=dev.type == "cuda")
        sc = torch.optim.lr_scheduler.OneCycleLR(o, max_lr=args.lr, total_steps=max(1, epochs * steps_per_epoch),
                                                 pct_start=0.15)
        models.append(m)
        opts.append(o)
        scheds.append(sc)
        log(f"width {wd}: {sum(p.numel() for p in m.parameters())} parameters")
    t1 = time.time()
    for ep in range(epochs):
        for m in models:
            m.train()
        order = torch.randperm(len(Y), generator=gen, device=dev)
        tot = [0.0] * len(models)
        for bi in range(steps_per_epoch):
            idx = order[bi * args.batch:(bi + 1) * args.batch]
            xb = augment_t(X[idx], is_face[idx], gen, std_floor=crop.std_floor)
            xb = xb.contiguous(memory_format=torch.channels_last)
            yb = Y[idx]
            for i, (m, o, sc) in enumerate(zip(models, opts, scheds)):
                o.zero_grad(set_to_none=True)
                loss = loss_fn(m(xb), yb)
                loss.backward()
                o.step()
                sc.step()
                if bi % 200 == 0:
                    tot[i] = float(loss.detach())
        log(f"epoch {ep + 1}/{epochs}: last losses {[round(t, 4) for t in tot]} "
            f"{time.time() - t1:.0f} s")
    # validation (unrestricted argmax, as train_classifier prints it)
    vy = np.array([index[s] for s in vlabels], np.int64)
    vface = vy < n_classes - 2
    VX = torch.from_numpy(vraw).to(dev)
    summary = {"scenes": k, "patches": int(len(Y)), "epochs": epochs, "batch": args.batch, "lr": args.lr,
               "seed": args.seed, "models": {}}
    for wd, m in zip(args.widths, models):
        m.eval()
        preds = []
        with torch.no_grad():
            for i in range(0, len(VX), 4096):
                xv = VX[i:i + 4096].float().permute(0, 3, 1, 2)
                xv = xv - xv.mean(dim=(2, 3), keepdim=True)
                xv = xv / xv.pow(2).mean(dim=(1, 2, 3), keepdim=True).sqrt().clamp_min(crop.std_floor)
                preds.append(m(xv.contiguous(memory_format=torch.channels_last)).argmax(1).cpu().numpy())
        pred = np.concatenate(preds)
        acc = float((pred == vy).mean())
        accf = float((pred[vface] == vy[vface]).mean())
        log(f"width {wd}: validation accuracy {acc:.4f}, faces {accf:.4f}")
        name = f"tiles-w{wd:g}"
        cpu = m.to("cpu").to(memory_format=torch.contiguous_format)
        torch.save(cpu.state_dict(), args.out / f"{name}.pt")
        summary["models"][name] = {"width": wd, "accuracy": round(acc, 5), "face_accuracy": round(accf, 5),
                                   "parameters": int(sum(p.numel() for p in cpu.parameters()))}
        try:
            export(cpu, args.out, crop, classes, {"training": dict(summary, width=wd, models=None)}, name)
        except Exception as e:  # noqa: BLE001 - the state_dict is saved; export again elsewhere
            log(f"export of {name} failed: {type(e).__name__}: {e}")
    summary["minutes"] = round((time.time() - t0) / 60, 1)
    (args.out / "train_gpu.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(f"done in {summary['minutes']} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
