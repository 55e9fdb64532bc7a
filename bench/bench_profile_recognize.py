"""Bench: reading a board with an enrolled profile (``recognize --tiles``).

    python bench/bench_profile_recognize.py [--variants love candy mindful word]
                                            [--enroll-photos 8] [--photos 6]
                                            [--enroll-border SHARE] [--embeddings]

Per tile set, a profile is enrolled (``vision.enroll.enroll``) from the faces
of ``--enroll-photos`` generated photos (``bench_recognize.bench_photo``,
photos 6000 + 4 j + variant: seeds neither the bench's nor training's), each
fully visible face cut at its true corners, turned upright; this is what a
group photographing its own set would enrol, minus the set being another one.
Then ``--photos`` other photos (7000 + 4 j + variant) are read with the
bundled classifier alone and with the profile (``vision.faces.ProfileFaceReader``):
visible tiles (present, uncovered, at least 60 % of the face seen) with the
right face, with no face, slots with the right presence, the readings marked
for a check by eye per photo (``vision.reconstruct.unsure_slots``) and the
time of ``recognize`` per photo (the first photo of each set includes the
profile finding its faces' shares).  The profile
reads the faces with its templates (session 23); ``--embeddings`` drops them,
so it reads with the embeddings as profiles enrolled before session 23 do;
``--enroll-border 0.075`` enrols loose crops (15 % more than the face each
way), which the profile's calibration of how much of its photos the faces
fill (``ProfileFaceReader.templates``) has to find.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
for p in (str(REPO), str(REPO / "bench")):
    if p not in sys.path:
        sys.path.insert(0, p)

from companion.tiles import VARIANTS  # noqa: E402


def enrolment_crops(variant: str, photos: int, layouts, border: float = 0.0) -> tuple[list[np.ndarray], list[str]]:
    """``(crops, labels)``: the fully visible faces of ``photos`` generated
    photos of ``variant``, 90 x 120 px, upright; with ``border`` that share
    of the face's size more on every side (a photo cropped loosely by hand:
    the crop then shows the neighbours' edges or the table round the face)."""
    import cv2

    from bench_recognize import bench_photo

    v0 = VARIANTS.index(variant)
    dst = np.float32([[0, 0], [90, 0], [90, 120], [0, 120]])
    crops, labels = [], []
    for j in range(photos):
        _, layout, scene = bench_photo(6000 + 4 * j + v0, layouts)
        tr = scene.truth
        for i in range(len(layout)):
            if not tr.present[i] or tr.visible[i] < 0.95:
                continue
            q = np.asarray(tr.face_corners_px[i], np.float32)
            q = q.mean(axis=0) + (q - q.mean(axis=0)) * (1 + 2 * border)
            H = cv2.getPerspectiveTransform(q.astype(np.float32), dst)
            crop = cv2.warpPerspective(scene.image, H, (90, 120))
            crops.append(crop[::-1, ::-1] if tr.rotated[i] else crop)
            labels.append(tr.faces[i])
    return crops, labels


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--enroll-photos", type=int, default=8, help="photos to enrol from (per tile set)")
    ap.add_argument("--photos", type=int, default=6, help="photos to read (per tile set)")
    ap.add_argument("--enroll-border", type=float, default=0.0, metavar="SHARE",
                    help="enrol crops with this share of the face's size more on every side (loose crops)")
    ap.add_argument("--embeddings", action="store_true",
                    help="read with the profile's embeddings, not its templates (profiles before session 23)")
    a = ap.parse_args(argv)
    if a.enroll_photos < 1 or a.photos < 1:
        ap.error("--enroll-photos and --photos must be at least 1")

    import tempfile

    from bench_recognize import VISIBLE_MIN, bench_layouts, bench_photo
    from companion.rules import Geometry
    from vision import enroll
    from vision.embedding import Embedder
    from vision.faces import ProfileFaceReader, TileClassifier
    from vision.reconstruct import recognize, unsure_slots

    layouts = bench_layouts()
    clf = TileClassifier()
    embedder = Embedder()
    print(f"{'set':8s} {'enrolled':>14s} {'visible':>8s} {'classifier right / none':>24s} "
          f"{'profile right / none':>22s} {'presence: classifier / profile':>31s} "
          f"{'unsure a photo':>16s} {'ms a photo':>12s}")
    with tempfile.TemporaryDirectory() as tmp:
        for variant in a.variants:
            crops, labels = enrolment_crops(variant, a.enroll_photos, layouts, a.enroll_border)
            path = Path(tmp) / f"{variant}.profile"
            profile = enroll.enroll(crops, labels, embedder)
            if a.embeddings:
                profile.templates = None
            profile.save(path)
            reader = ProfileFaceReader(path, variant)
            tally = np.zeros(7, int)     # visible, clf right, clf none, profile right, profile none, presences
            slots = 0
            unsure = np.zeros(2, int)    # slots to check by eye: classifier, profile
            ms = np.zeros(2)             # time of recognize: classifier, profile
            v0 = VARIANTS.index(variant)
            for j in range(a.photos):
                _, layout, scene = bench_photo(7000 + 4 * j + v0, layouts)
                tr = scene.truth
                g = Geometry.of(layout)
                present = np.asarray(tr.present, bool)
                covered = np.array([any(present[k] for k in g.covered_by[i]) for i in range(len(layout))])
                visible = np.flatnonzero(present & ~covered & (np.asarray(tr.visible) >= VISIBLE_MIN))
                tally[0] += len(visible)
                for col, fr in ((1, None), (3, reader)):
                    t0 = time.perf_counter()
                    rec = recognize(scene.image, variant, layout, classifier=clf, face_reader=fr)
                    ms[col // 3] += 1000 * (time.perf_counter() - t0)
                    unsure[col // 3] += len(unsure_slots(rec.tiles))
                    faces = [t.face for t in rec.tiles]
                    tally[col] += sum(faces[i] == tr.faces[i] for i in visible)
                    tally[col + 1] += sum(faces[i] is None for i in visible)
                    tally[5 if fr is None else 6] += sum(t.present == p for t, p in zip(rec.tiles, present))
                slots += len(layout)
            n = max(tally[0], 1)
            print(f"{variant:8s} {len(crops):5d} ({len(set(labels)):2d} faces) {tally[0]:8d} "
                  f"{100 * tally[1] / n:15.1f} / {100 * tally[2] / n:4.1f} %"
                  f"{100 * tally[3] / n:13.1f} / {100 * tally[4] / n:4.1f} % "
                  f"{100 * tally[5] / max(slots, 1):21.2f} / {100 * tally[6] / max(slots, 1):.2f} % "
                  f"{unsure[0] / a.photos:8.1f} / {unsure[1] / a.photos:4.1f} {ms[0] / a.photos:6.0f} / "
                  f"{ms[1] / a.photos:4.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
