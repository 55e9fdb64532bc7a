"""Train the tile-face embedding on synthetic tiles and export it to ONNX.

    pip install torch==2.13.0 pillow        # training only (+ CJK fonts, see synth_tiles)
    # the shipped model (about 30 min on 2 cores):
    python -m vision.training.train_embedding --out models/embed_tiles.onnx \
        --steps 300 --real-train ../shared/corpus/real-tiles
    # the synthetic-only ablation of the model card:
    python -m vision.training.train_embedding --out /tmp/embed_synth.onnx \
        --steps 500 --real-dev ../shared/corpus/real-tiles

Data: synthetic renders from :mod:`vision.training.synth_tiles` (random art
styles of the 42 standard faces, photographic augmentation, random 180-degree
turns); with ``--real-train DIR`` also the fixed "dev" half of a labelled
real-photo folder (bench.bench_enroll.dev_test_split, seed 2024), whose "test"
half is never touched, and the model's JSON records that (``real_train``) so
that bench/bench_enroll.py reports the test half as the fair figure.  With
``--real-dev DIR`` the script prints k=1 nearest-prototype accuracy on the dev
half while it trains (monitoring only).

Each batch holds every face of ``--styles-per-batch`` styles (plus
``--real-per-face`` real dev photos per face), so a face has positives in other
styles and hard negatives in its own style.  Loss:
supervised contrastive loss (Khosla et al., "Supervised Contrastive Learning",
NeurIPS 2020) on the unit embeddings plus a cosine-margin softmax over the 42
training faces (Wang et al., "CosFace", CVPR 2018).

Time on 2 CPU cores: 2.5-5 s per step of 168-252 images; rendering 600 styles
takes about 6 min (``--cache FILE.npy`` keeps them for the next run).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

from vision.embedding import INPUT_HW, normalise_tile
from vision.training import synth_tiles

EMBED_DIM = 128


def _render_style(args):
    seed, held_out = args
    rng = np.random.default_rng(seed)
    style = synth_tiles.random_style(rng, held_out_fonts=held_out)
    return np.stack([normalise_tile(synth_tiles.render_photo(f, style, rng, out_hw=(192, 144))).astype(np.float16)
                     for f in synth_tiles.FACES])


def render_dataset(n_styles: int, seed: int, workers: int = 2, held_out: bool = False) -> np.ndarray:
    """Render n_styles full sets.

    Returns:
        (n_styles, 42, 3, 96, 72) float16 normalised inputs (face order FACES).
    """
    seeds = [(int(s), held_out) for s in np.random.default_rng(seed).integers(0, 1 << 31, n_styles)]
    if workers > 1:
        with mp.get_context("fork").Pool(workers) as pool:
            out = pool.map(_render_style, seeds, chunksize=4)
    else:
        out = [_render_style(s) for s in seeds]
    return np.stack(out)


def build_model():
    """The embedding CNN: (N, 3, 96, 72) -> (N, 128) (not normalised)."""
    import torch.nn as nn

    def cbr(i, o, s=1):
        return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    return nn.Sequential(
        *cbr(3, 24, 2), *cbr(24, 48), nn.MaxPool2d(2),
        *cbr(48, 64), *cbr(64, 96), nn.MaxPool2d(2),
        *cbr(96, 128), *cbr(128, 160), nn.MaxPool2d(2),
        *cbr(160, 256), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(256, EMBED_DIM),
    )


def _augment(x, torch, gen):
    """Cheap batch augmentation on normalised inputs: small affine, 180 turns,
    grey or channel-swapped colour, contrast."""
    import torch.nn.functional as F

    n = x.shape[0]
    ang = (torch.rand(n, generator=gen) - 0.5) * (8 * math.pi / 180)
    sc = 1 + (torch.rand(n, generator=gen) - 0.5) * 0.12
    tx = (torch.rand(n, generator=gen) - 0.5) * 0.08
    ty = (torch.rand(n, generator=gen) - 0.5) * 0.08
    cos, sin = torch.cos(ang) / sc, torch.sin(ang) / sc
    theta = torch.stack([torch.stack([cos, -sin, tx], 1), torch.stack([sin, cos, ty], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
    turn = torch.rand(n, generator=gen) < 0.5
    x[turn] = torch.flip(x[turn], dims=(2, 3))
    grey = torch.rand(n, generator=gen) < 0.2
    x[grey] = x[grey].mean(1, keepdim=True).expand(-1, 3, -1, -1)
    swap = torch.rand(n, generator=gen) < 0.1
    if swap.any():
        perm = torch.randperm(3, generator=gen)
        x[swap] = x[swap][:, perm]
    x = (x - x.mean((1, 2, 3), keepdim=True)) / (x.std((1, 2, 3), keepdim=True) + 1e-3)
    return x


def supcon_loss(z, y, tau, torch):
    """Supervised contrastive loss over unit rows z with labels y."""
    sim = z @ z.t() / tau
    n = z.shape[0]
    eye = torch.eye(n, dtype=torch.bool)
    sim = sim.masked_fill(eye, -1e9)
    logp = sim - torch.logsumexp(sim, 1, keepdim=True)
    pos = (y[:, None] == y[None, :]) & ~eye
    return -(logp * pos).sum(1).div(pos.sum(1).clamp(min=1)).mean()


def export_onnx(model, out: Path, torch) -> None:
    """Export (N, 3, 96, 72) -> (N, 128) unit embeddings, opset 17, dynamic N."""
    import torch.nn as nn

    class _Norm(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            e = self.m(x)
            return e / e.norm(dim=1, keepdim=True).clamp(min=1e-12)

    net = _Norm(model).eval()
    dummy = torch.zeros(1, 3, *INPUT_HW)
    torch.onnx.export(net, dummy, str(out), input_names=["image"], output_names=["embedding"],
                      dynamic_axes={"image": {0: "n"}, "embedding": {0: "n"}}, opset_version=17,
                      dynamo=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("models/embed_tiles.onnx"))
    ap.add_argument("--styles", type=int, default=600, help="synthetic sets to render")
    ap.add_argument("--styles-per-batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=None, help="npy cache of rendered styles")
    ap.add_argument("--real-dev", type=Path, default=None,
                    help="labelled real photos (folder with labels.csv and images/) for monitoring")
    ap.add_argument("--real-train", type=Path, default=None,
                    help="also train on the dev half of this labelled real-photo folder "
                         "(bench.bench_enroll.dev_test_split); the test half is never used")
    ap.add_argument("--real-per-face", type=int, default=2,
                    help="real photos per face added to each batch (with --real-train)")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)

    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    if args.cache and args.cache.is_file():
        data = np.load(args.cache, mmap_mode="r")
    else:
        data = render_dataset(args.styles, args.seed, workers=args.threads)
        if args.cache:
            np.save(args.cache, data)
    print(f"data {data.shape} in {time.time() - t0:.0f}s", flush=True)
    n_styles, n_faces = data.shape[:2]

    dev = None
    real_x, real_y = None, None
    if args.real_dev or args.real_train:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from bench.bench_enroll import dev_test_split, load_corpus
    if args.real_dev:
        images, labels = load_corpus(args.real_dev)
        dev_idx, _ = dev_test_split(labels)
        dev = ([images[i] for i in dev_idx], [labels[i] for i in dev_idx])
    if args.real_train:
        images, labels = load_corpus(args.real_train)
        dev_idx, _ = dev_test_split(labels)
        face_index = {f: i for i, f in enumerate(synth_tiles.FACES)}
        real_x = np.stack([normalise_tile(images[i]) for i in dev_idx])
        real_y = np.array([face_index[labels[i]] for i in dev_idx])
        print(f"real training photos: {len(real_y)} (dev half of {args.real_train})", flush=True)

    model = build_model().to(memory_format=torch.channels_last)
    weight = torch.nn.Parameter(torch.randn(n_faces, EMBED_DIM) * 0.01)
    opt = torch.optim.AdamW(list(model.parameters()) + [weight], lr=args.lr, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps,
                                                pct_start=0.1)
    gen = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng(args.seed + 1)
    y = torch.arange(n_faces).repeat(args.styles_per_batch)
    for step in range(1, args.steps + 1):
        model.train()
        pick = np.sort(rng.choice(n_styles, args.styles_per_batch, replace=False))
        xb = torch.from_numpy(np.asarray(data[pick], dtype=np.float32).reshape(-1, 3, *INPUT_HW))
        yb = y
        if real_x is not None:
            ri = np.concatenate([rng.choice(np.flatnonzero(real_y == c), args.real_per_face)
                                 for c in range(n_faces)])
            xb = torch.cat([xb, torch.from_numpy(real_x[ri])])
            yb = torch.cat([y, torch.from_numpy(real_y[ri])])
        xb = _augment(xb, torch, gen).contiguous(memory_format=torch.channels_last)
        z = F.normalize(model(xb), dim=1)
        cos = z @ F.normalize(weight, dim=1).t()
        margin = F.one_hot(yb, n_faces) * 0.25
        loss = supcon_loss(z, yb, 0.1, torch) + F.cross_entropy(16 * (cos - margin), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 20 == 0:
            print(f"step {step} loss {loss.item():.3f} {time.time() - t0:.0f}s", flush=True)
        if dev is not None and (step % args.eval_every == 0 or step == args.steps):
            print(f"  dev k=1 acc {_dev_eval(model, dev, torch):.3f}", flush=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out.with_suffix(".pt"))
    export_onnx(model.to(memory_format=torch.contiguous_format), args.out, torch)
    meta = {
        "name": args.out.stem, "input": "image", "input_hw": list(INPUT_HW), "channels": "BGR",
        "normalisation": "vision.embedding.normalise_tile (per-image zero mean, unit std)",
        "output": "embedding", "embedding_dim": EMBED_DIM,
        "trained_on": f"synthetic renders: {n_styles} random art styles x {n_faces} standard "
                      "faces (vision/training/synth_tiles.py)" + (
                          f"; plus {len(real_y)} real photos: the dev half (dev_test_split, seed "
                          f"2024) of {args.real_train.name}, test half never used"
                          if real_y is not None else "; no real photographs"),
        "train_faces": list(synth_tiles.FACES),
        "steps": args.steps, "batch": int(len(y)), "seed": args.seed,
        "real_train": ({"corpus": args.real_train.name, "split": "dev", "split_seed": 2024,
                        "function": "bench.bench_enroll.dev_test_split"}
                       if real_y is not None else None),
        "loss": "supervised contrastive (tau 0.1) + cosine-margin softmax (s 16, m 0.25)",
    }
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {args.out} in {time.time() - t0:.0f}s")
    return 0


def _dev_eval(model, dev, torch) -> float:
    """Mean k=1 accuracy over 5 seeded splits of the dev photos (0/180 TTA)."""
    from vision.enroll import classify_embeddings, prototypes_from_embeddings

    images, labels = dev
    model.eval()
    with torch.no_grad():
        x0 = np.stack([normalise_tile(im) for im in images])
        x1 = x0[:, :, ::-1, ::-1].copy()
        e = torch.nn.functional.normalize(model(torch.from_numpy(np.concatenate([x0, x1]))), dim=1)
    e = e.numpy()
    e0, e1 = e[: len(images)], e[len(images):]
    accs = []
    labels = np.array(labels)
    for seed in range(5):
        r = np.random.default_rng(seed)
        enr = []
        for lab in sorted(set(labels)):
            idx = np.flatnonzero(labels == lab)
            enr.append(int(r.choice(idx)))
        qry = np.setdiff1d(np.arange(len(labels)), enr)
        names, protos = prototypes_from_embeddings(e0[enr], e1[enr], list(labels[enr]))
        pred, _ = classify_embeddings(e0[qry], e1[qry], names, protos)
        accs.append(np.mean(np.array(pred) == labels[qry]))
    return float(np.mean(accs))


if __name__ == "__main__":
    sys.exit(main())
