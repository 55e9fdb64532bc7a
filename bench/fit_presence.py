"""Fit how ``reconstruct`` weighs the presence model against the face classifier.

    python bench/fit_presence.py [--start 1000 [1200 ...]] [--photos 160]

On development photos (bench_recognize's scene generator, photo indices
``start .. start + photos``, by default 1000-1159: never the photos 0-199
whose figures the bench reports), every candidate slot
(``vision.presence.candidates``) that no present tile covers gives one row:
the presence model's log-odds ``q``, the face classifier's log-odds face :
none at the slot (``lo``) and the best of the slots it covers (``lo_below``),
both clipped to +-8, and the truth.  A logistic regression
``a q + b lo - c lo_below + d`` is fitted on the even photos and scored on the
odd ones; then the same with the photo's prior term ``e logit(share)``, where
``share`` is the Laplace-smoothed share of the photo's other candidate slots
judged present with more than ``ReconstructSettings.presence_prior_sure``
log-odds by the first four terms (how far the game has gone, read from the
stacks the photo shows clearly; ``vision.reconstruct._confident_share``);
then with the layout's prior too, ``f logit(odds)``, the slot's chance to be
full still after as many removals as the photo shows
(``vision.reconstruct.removal_odds``, clipped to 0.02-0.98; here the true
number of tiles taken stands for the first pass's count, which is close to
it).  The script prints the accuracy of the model alone, of the classifier
alone and of the fits, per layer, and the weights for ``ReconstructSettings``
(``presence_weights``, ``presence_prior_weight``, ``layout_prior_weight``;
refitted on all photos).  ``bench/tune_reconstruct.py`` then scores whole
photos with chosen weights.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from companion.errors import MatNotFound  # noqa: E402
from companion.rules import Geometry  # noqa: E402


def rows(start: int, photos: int, model: Path | None):
    import bench_recognize as B
    from vision.faces import TileClassifier
    from vision.presence import PresenceModel, PresenceSettings, candidates
    from vision.reconstruct import read_slots, removal_odds

    pm = PresenceModel(PresenceSettings(model_path=model) if model else PresenceSettings())
    clf = TileClassifier()
    layouts = B.bench_layouts()
    out = []
    for k in range(start, start + photos):
        variant, layout, scene = B.bench_photo(k, layouts)
        tr = scene.truth
        try:
            r = read_slots(scene.image, variant, layout, None, clf, tr.mat)   # pose (+ focal search) as recognize
        except MatNotFound:
            continue
        g = Geometry.of(layout)
        present = np.asarray(tr.present, bool)
        covered = np.array([any(present[j] for j in g.covered_by[i]) for i in range(len(layout))])
        idx = np.flatnonzero(candidates(layout.slots) & ~covered)
        if not len(idx):
            continue
        q = pm.slot_logits(scene.image, [layout.slots[i] for i in idx], tr.mat, r.pose)
        sc = r.scores
        lo = np.clip(np.log(sc.face_probs.sum(axis=1) + 1e-6) - np.log(sc.p_none + 1e-6), -8, 8)
        odds = removal_odds(tuple(tuple(t) for t in layout.slots))
        odds = np.clip(odds[min(len(odds) - 1, int(round((~present).sum() / 2)))], 0.02, 0.98)
        for j, i in enumerate(idx):
            below = max((lo[b] for b in g.covers[i]), default=-8.0)
            out.append((k, layout.slots[i].z, q[j], lo[i], below, float(present[i]),
                        float(np.log(odds[i] / (1 - odds[i])))))
    return np.array(out, np.float64).reshape(-1, 7)


def prior_feature(k: np.ndarray, used: np.ndarray, sure: float | None = None) -> np.ndarray:
    """Per row, ``logit(share)`` of the other rows of its photo (``k``) whose
    log-odds ``used`` exceed ``sure`` in size and are positive (Laplace
    smoothing; leave-one-out, as the slot's own answer is what is asked)."""
    from vision.reconstruct import ReconstructSettings
    sure = ReconstructSettings().presence_prior_sure if sure is None else sure
    out = np.zeros(len(k))
    for photo in np.unique(k):
        m = np.flatnonzero(k == photo)
        conf = np.abs(used[m]) > sure
        pos = conf & (used[m] > 0)
        share = (pos.sum() - pos + 1.0) / (conf.sum() - conf + 2.0)
        out[m] = np.log(share / (1 - share))
    return out


def fit(X: np.ndarray, y: np.ndarray, steps: int = 4000, lr: float = 0.5) -> np.ndarray:
    """Logistic regression by gradient descent (features already scaled ~1)."""
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(X @ w, -50, 50)))
        w -= lr * X.T @ (p - y) / len(y)
    return w


def main(argv=None) -> int:
    import bench_recognize as B
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    B.add_development_args(ap, [1000])
    a = ap.parse_args(argv)
    B.check_development_args(ap, a)
    d = np.concatenate([rows(start, a.photos, a.presence) for start in a.start])
    k, z, q, lo, below, y, layout_logit = d.T
    X = np.column_stack([q, lo, -below, np.ones_like(q)])
    even = k % 2 == 0
    odd = ~even
    acc = lambda s, m: float(((s[m] > 0) == (y[m] > 0.5)).mean()) if m.any() else float("nan")
    w = fit(X[even], y[even])
    Xp = np.column_stack([X, prior_feature(k, X @ w)])
    wp = fit(Xp[even], y[even])
    Xp[:, 4] = prior_feature(k, X @ wp[:4])       # as reconstruct computes it: the first four terms
    wp = fit(Xp[even], y[even])
    print(f"{len(y)} candidate slots on {len(np.unique(k))} photos ({y.mean():.3f} present)")
    Xl = np.column_stack([Xp, layout_logit])
    wl = fit(Xl[even], y[even])
    Xl[:, 4] = prior_feature(k, X @ wl[:4])
    wl = fit(Xl[even], y[even])
    print(f"odd photos: model alone {acc(q, odd):.4f}, classifier alone {acc(lo, odd):.4f}, "
          f"fit on even photos {acc(X @ w, odd):.4f}, with the photo's prior {acc(Xp @ wp, odd):.4f}, "
          f"with the layout's prior too {acc(Xl @ wl, odd):.4f}")
    for layer in np.unique(z):
        m = odd & (z == layer)
        print(f"  layer {int(layer)}: {int(m.sum())} slots, model {acc(q, m):.4f}, fit {acc(X @ w, m):.4f}, "
              f"with prior {acc(Xp @ wp, m):.4f}, both priors {acc(Xl @ wl, m):.4f}")
    w_all = fit(X, y)
    print("without the prior: presence_weights (a, b, c, d) = (" + ", ".join(f"{v:.3f}" for v in w_all) + ")")
    Xp = np.column_stack([X, prior_feature(k, X @ w_all)])
    wp_all = fit(Xp, y)
    Xp[:, 4] = prior_feature(k, X @ wp_all[:4])
    wp_all = fit(Xp, y)
    print("with the prior: presence_weights (a, b, c, d) = (" + ", ".join(f"{v:.3f}" for v in wp_all[:4])
          + f"), presence_prior_weight = {wp_all[4]:.3f}")
    Xl = np.column_stack([Xp, layout_logit])
    wl_all = fit(Xl, y)
    Xl[:, 4] = prior_feature(k, X @ wl_all[:4])
    wl_all = fit(Xl, y)
    print("with both priors: presence_weights (a, b, c, d) = (" + ", ".join(f"{v:.3f}" for v in wl_all[:4])
          + f"), presence_prior_weight = {wl_all[4]:.3f}, layout_prior_weight = {wl_all[5]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
