"""Accuracy and speed of ``recognize`` on synthetic photos never used in training.

    python bench/bench_recognize.py [--photos 200] [--hands 0.0] [--camera]
                                    [--blank-classifier PATH|none]
                                    [--layouts SPEC [SPEC ...]]
                                    [--failures DIR] [--json OUT.json]

Photo ``k`` is rendered by :func:`vision.synth.render_scene` from
``np.random.default_rng(BENCH_SEED_BASE + k)`` (integer seeds; training uses
tuple seeds ``(seed, k)``, see vision/training/dataset.py): variant ``k % 4``,
layouts in turn from :data:`LAYOUTS` (built-ins that exist), 0-60 % of the
tiles removed as free pairs (faces dealt from one real 144-tile set, see
:func:`deal`), camera tilt 0-40 degrees, random lighting, table,
blur, noise and JPEG, 1280 x 720 px.  By default the camera is NOT given to
``recognize`` (as the CLI without ``--camera``); ``--camera`` passes the true
intrinsics.  ``--layouts`` puts other layouts in place of :data:`LAYOUTS`
(built-in names or layout files, ``PATH#MAPNAME`` for one map of a GNOME
``.map`` or one board of a mah ``boards.json``; :func:`layouts_from_specs`),
e.g. ones neither training nor the bench has seen.

Figures, per variant and overall (then per layout, per 10 degrees of tilt,
per width of the faces in the photo (:data:`FACE_PX_BANDS`), for the photos
``recognize`` gave advice on and those it did not, and the stacks' errors by
parallax, :func:`stack_errors_by_parallax`):

* face accuracy on visible tiles: tiles present, uncovered and with at least
  :data:`VISIBLE_MIN` of the face seen; right when the face returned is the
  true one (a null face counts as wrong);
* presence accuracy over all slots;
* photos entirely right: every slot's presence right, every visible tile's
  face right, and no wrong face anywhere (null is allowed on tiles that are
  not visible);
* photos right or marked: entirely right, or every wrong reading (presence,
  face of a visible tile, wrong face) is among the slots the overlay asks a
  referee to check (:func:`vision.reconstruct.slots_to_check`: unsure
  readings, unseen faces and the stacks under them), so a referee who checks
  the marked slots by eye finds every mistake; with the unsure readings per
  photo (:func:`vision.reconstruct.unsure_slots`) and the share of wrong
  readings among the slots to check;
* photos with a slot no view from that camera shows (:func:`unseeable_slots`:
  right behind a taller stack in a steep view), and photos whose only
  mistakes are the presence of such slots: the part of "entirely right"
  out of any single photo's reach (these photos still count as wrong);
* median and 90th percentile time of ``recognize`` per frame (pose, crops,
  CNN, reconstruction; the models loaded and each layout's removal odds
  built once), and of the pose stage alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.errors import BadInput, MatNotFound  # noqa: E402
from companion.layouts import check_layout, shifted_to_origin  # noqa: E402
from companion.rules import Geometry  # noqa: E402
from companion.tiles import VARIANTS  # noqa: E402

BENCH_SEED_BASE = 9_000_000
VISIBLE_MIN = 0.6
LAYOUTS = ("turtle", "sprint-flat", "sprint-2layer", "pagoda-of-peace", "twin-hearts", "sugar-pyramid",
           "dragons-tail", "alphabet-tower")  # training saw only the first three (and random layouts)


def bench_layouts(specs=None):
    """The bench's layouts, each shifted to the mat's origin
    (:func:`shifted_to_origin`): the built-ins of :data:`LAYOUTS` that exist,
    or, given ``specs`` (``--layouts``), the buildable ones they name
    (:func:`layouts_from_specs`)."""
    if specs is not None:
        return layouts_from_specs(specs)
    from companion import codex
    out = []
    for name in LAYOUTS:
        try:
            out.append(shifted_to_origin(codex.builtin(name)))
        except Exception:
            continue
    return out


def split_layout_spec(spec: str) -> tuple[str, str | None]:
    """``"PATH#MAPNAME"`` -> ``(PATH, MAPNAME)``, split at the last ``#``;
    ``(spec, None)`` for a spec without one, or one that is a file as a whole."""
    if "#" not in spec or Path(spec).is_file():
        return spec, None
    path, map_name = spec.rsplit("#", 1)
    return path, map_name


def layouts_from_specs(specs, log=None) -> list:
    """The layouts ``specs`` name, each shifted to the mat's origin: a
    built-in name or a layout file as
    :func:`companion.layout_files.load_layout` reads it, ``PATH#MAPNAME``
    for one map of a GNOME ``.map`` or one board of a mah ``boards.json``
    (:func:`split_layout_spec`).  One that :func:`check_layout` finds not
    buildable on the mat (a footprint over 36 x 16 half-units, more than one
    set's 144 tiles, tiles not resting on the layer below, ...) is skipped
    with one line on ``log`` (default: stderr).

    Raises:
        BadInput: a spec that names no layout (one line, from ``load_layout``).
    """
    from companion.layout_files import load_layout
    log = sys.stderr if log is None else log
    out = []
    for spec in specs:
        layout = load_layout(*split_layout_spec(spec))
        report = check_layout(layout)
        if not report.buildable:
            print(f"skipped layout {layout.name!r} ({spec}): cannot be built on the mat: "
                  f"{'; '.join(report.problems)}", file=log, flush=True)
            continue
        out.append(shifted_to_origin(layout))
    return out


def deal(variant: str, n: int, rng: np.random.Generator) -> tuple[str, ...]:
    """``n`` faces drawn from the variant's real 144-tile set (whole sets
    repeated only when ``n > 144``), so no face appears more often than its
    copies, as on a real table."""
    from companion.tiles import tileset
    tiles = tileset(variant).tiles()
    pool = tiles * -(-n // len(tiles))
    return tuple(pool[i] for i in rng.permutation(len(pool))[:n])


def bench_photo(k: int, layouts, hands: float = 0.0, size: tuple[int, int] | None = None):
    """Photo ``k`` of the bench's generator: ``(variant, layout, scene)``.

    The variant goes round the four tile sets and the layout round
    ``layouts`` (four photos each); the scene is rendered from
    ``np.random.default_rng(BENCH_SEED_BASE + k)``, tilt 0-40 degrees, a real
    tile set dealt (:func:`deal`), hands over the board with chance ``hands``;
    ``size`` ``(W, H)`` px renders the same scene at another resolution
    (default: the generator's 1280 x 720).
    """
    from vision.synth import SceneSpec, render_scene
    rng = np.random.default_rng(BENCH_SEED_BASE + k)
    variant = VARIANTS[k % len(VARIANTS)]
    layout = layouts[(k // len(VARIANTS)) % len(layouts)]
    extra = {"image_size": tuple(size)} if size else {}
    scene = render_scene(SceneSpec(variant, layout, tilt_deg=(0.0, 40.0), hands=hands,
                                   faces=deal(variant, len(layout), rng), **extra), rng)
    return variant, layout, scene


def optional_model(value: str | None, load, default):
    """A model named on the command line: ``"none"`` -> False (do without),
    a path -> ``load(Path(value))``, None -> ``default()`` (the bundled
    one), or False where that is absent."""
    if value == "none":
        return False
    if value:
        return load(Path(value))
    return default() or False


def blank_classifier_at(path: Path):
    """The classifier of blanked windows at ``path`` (``--blank-classifier``)."""
    from vision.faces import ClassifierSettings, TileClassifier
    return TileClassifier(ClassifierSettings(model_path=path))


def default_blank_classifier():
    """The bundled classifier of blanked windows, or None (``vision.faces``)."""
    from vision.faces import default_blank_classifier as bundled
    return bundled()


def add_development_args(ap, start: list[int]) -> None:
    """``--start`` (first photo of each range), ``--photos`` (per range) and
    ``--presence`` (a presence.onnx) for the scripts that tune on
    development photos; check them with :func:`check_development_args`."""
    from pathlib import Path as _Path
    ap.add_argument("--start", type=int, nargs="+", default=start,
                    help="first photo of each range (200 or more)")
    ap.add_argument("--photos", type=int, default=160, help="photos per range")
    ap.add_argument("--presence", "--model", dest="presence", type=_Path, default=None,
                    help="presence.onnx (default: models/)")


def check_development_args(ap, a) -> None:
    """Refuse (``ap.error``, exit 2) no photos, a range reaching into the
    photos 0-199 this bench reports, and a presence model that is not there."""
    if a.photos < 1:
        ap.error("--photos must be at least 1")
    if min(a.start) < 200:
        ap.error("--start must be 200 or more: photos 0-199 are the bench's held-out photos")
    if a.presence is not None and not a.presence.is_file():
        ap.error(f"no presence model at {a.presence}")


def _pct(a, q):
    return float(np.percentile(a, q)) if len(a) else float("nan")


def save_photo(folder: Path, k: int, variant: str, layout, scene) -> None:
    """Write bench photo ``k`` where a newcomer can try the commands on it:
    ``photo-K.png``, ``photo-K.json`` (``variant``, ``layout``, ``truth``:
    every slot's true tile and face, also the faces no camera could see,
    where ``recognize --json`` answers null) and
    ``photo-K-camera.json`` (the true intrinsics, the contract's camera
    JSON).  A layout the bench moved on the mat (:func:`shifted_to_origin`:
    its slots are not the built-in's), or one read from a file, is written
    as ``photo-K-layout.json``
    (the contract's layout JSON), and ``layout`` names that file: the truth
    then has the slots ``recognize --layout`` gives (a break-test, session
    59, read the bench's Pagoda of Peace, built a row higher than the
    built-in, with the built-in's name)."""
    import json

    import cv2

    from companion import codex
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / f"photo-{k}.png"), scene.image)
    truth = scene.truth
    name = layout.name
    try:
        moved = tuple(codex.builtin(layout.name).slots) != tuple(layout.slots)
    except BadInput:            # (a layout file given with --layouts: its name is no --layout, and
        moved = True            # the bench may have moved its slots; a break-test, session 59)
    if moved:
        path = folder / f"photo-{k}-layout.json"
        path.write_text(json.dumps({"name": layout.name, "slots": [list(s) for s in layout.slots]}) + "\n")
        name = str(path)
    (folder / f"photo-{k}.json").write_text(json.dumps(
        {"variant": variant, "layout": name, "truth": truth.recognize_json()}) + "\n")
    cam = truth.camera
    (folder / f"photo-{k}-camera.json").write_text(json.dumps(
        {"camera_matrix": cam.K.tolist(), "dist_coeffs": cam.dist.tolist(),
         "image_size": list(cam.image_size)}) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--photos", type=int, default=200)
    ap.add_argument("--start", type=int, default=0, help="first photo index")
    ap.add_argument("--hands", type=float, default=0.0, help="probability of hands over the board")
    ap.add_argument("--camera", action="store_true", help="give recognize the true intrinsics")
    ap.add_argument("--size", type=_image_size, default=None, metavar="WxH",
                    help="render the photos at this size (default 1280x720; the speed target is for 1280x720)")
    ap.add_argument("--model", type=Path, default=None, help="tiles.onnx to use (default: models/tiles.onnx)")
    ap.add_argument("--presence", default=None,
                    help="presence.onnx to use (default: models/presence.onnx), or 'none' for the classifier alone")
    ap.add_argument("--blank-classifier", default=None,
                    help="the classifier of blanked windows for the second read of partly hidden faces "
                         "(default: models/tiles-blank.onnx), or 'none' to read them once")
    ap.add_argument("--layouts", nargs="+", default=None, metavar="SPEC",
                    help="bench these layouts instead of the built-in eight: built-in names or layout files "
                         "(PATH#MAPNAME for one map of a .map or one board of a boards.json); those that "
                         "cannot be built on the mat are skipped")
    ap.add_argument("--failures", type=Path, default=None, help="write failing photos' crops and overlays here")
    ap.add_argument("--json", type=Path, default=None, help="write per-photo results")
    ap.add_argument("--save", type=Path, default=None, metavar="DIR",
                    help="also write each photo (photo-K.png), its truth (photo-K.json: variant, layout and "
                         "every slot's true tile and face, also faces no camera could see, where recognize "
                         "--json answers null) and its camera (photo-K-camera.json, for "
                         "--camera): photos to try the commands on")
    ap.add_argument("--settings", default="{}", help="JSON object of ReconstructSettings fields to change")
    args = ap.parse_args(argv)
    from tune_reconstruct import parse_settings
    try:
        settings = parse_settings(args.settings)
    except ValueError as e:
        ap.error(str(e))

    import cv2
    from vision.crops import extract_raw
    from vision.faces import ClassifierSettings, TileClassifier
    from vision.mat import MatSpec
    from vision.pose import Camera, estimate_pose, project_slot_faces
    from vision.reconstruct import ReconstructSettings, recognize, removal_odds, slots_to_check, unsure_slots
    from vision.artcheck import preload as preload_art
    from vision.synth import SceneSpec, render_scene

    cv2.setNumThreads(2)
    from companion.errors import BadInput
    from vision.presence import PresenceModel, PresenceSettings, default_presence_model
    try:
        clf = TileClassifier(ClassifierSettings(model_path=args.model) if args.model else ClassifierSettings())
        presence = optional_model(args.presence, lambda p: PresenceModel(PresenceSettings(model_path=p)),
                                  default_presence_model)
        blanker = optional_model(args.blank_classifier, blank_classifier_at, default_blank_classifier)
    except BadInput as e:
        ap.error(str(e))
    spec = MatSpec.default()
    try:
        layouts = bench_layouts(args.layouts)
    except BadInput as e:
        ap.error(str(e))
    if not layouts:
        ap.error("none of the --layouts can be built on the mat")
    print(f"layouts: {', '.join(l.name for l in layouts)}; photos {args.photos}; hands {args.hands}; "
          f"camera {'given' if args.camera else 'estimated'}; presence model {'yes' if presence else 'no'}; "
          f"blanked second read {'yes' if blanker else 'no'}; "
          f"size {'x'.join(map(str, args.size)) if args.size else '1280x720'}",
          flush=True)
    rows = []
    # warm-up (first-run allocations in OpenCV / onnxruntime)
    warm = render_scene(SceneSpec("love", layouts[0], tilt_deg=(20, 20)), np.random.default_rng(1))
    try:
        recognize(warm.image, "love", layouts[0], classifier=clf, spec=spec, presence=presence, settings=settings,
                  blank_classifier=blanker)
    except MatNotFound:
        pass
    # each layout's table of removal odds is built once, like loading a model
    # (about 0.1 s per layout; vision.reconstruct.removal_odds, cached)
    for layout in layouts:
        removal_odds(tuple(tuple(s) for s in layout.slots), ReconstructSettings().layout_prior_games)
    # and so is the print art the unsure faces are compared with (about 0.5 s
    # per tile set; vision.artcheck, cached)
    for variant in VARIANTS:
        preload_art(variant)
    for k in range(args.start, args.start + args.photos):
        variant, layout, scene = bench_photo(k, layouts, args.hands, args.size)
        tr = scene.truth
        if args.save is not None:
            save_photo(args.save, k, variant, layout, scene)
        cam = Camera(tr.camera.K, np.zeros(5), tr.camera.image_size) if args.camera else None
        t0 = time.perf_counter()
        try:
            rec = recognize(scene.image, variant, layout, camera=cam, classifier=clf, spec=spec, presence=presence,
                            settings=settings, blank_classifier=blanker)
        except MatNotFound:
            rec = None
        dt = time.perf_counter() - t0
        t1 = time.perf_counter()
        try:
            estimate_pose(scene.image, spec, cam)
        except MatNotFound:
            pass
        dt_pose = time.perf_counter() - t1
        g = Geometry.of(layout)
        present = np.asarray(tr.present, bool)
        covered = np.array([any(present[j] for j in g.covered_by[i]) for i in range(len(layout))])
        visible = present & ~covered & (np.asarray(tr.visible) >= VISIBLE_MIN)
        row = {"k": k, "variant": variant, "layout": layout.name, "ms": dt * 1000, "pose_ms": dt_pose * 1000,
               "tilt": float(tr.pose().tilt_deg), "mat_found": rec is not None, "slots": len(layout),
               "visible": int(visible.sum())}
        if rec is None:
            row.update(present_ok=0, face_ok=0, wrong_faces=0, right=False, errors=["mat not found"])
            rows.append(row)
            continue
        pp = np.array([t.present for t in rec.tiles])
        faces = [t.face for t in rec.tiles]
        face_ok = sum(1 for i in np.flatnonzero(visible) if faces[i] == tr.faces[i])
        wrong = [i for i, f in enumerate(faces) if f is not None and f != tr.faces[i]]
        errors = []
        for i in np.flatnonzero(pp != present):
            errors.append(f"slot {tuple(layout.slots[i])} present {bool(pp[i])} (truth {bool(present[i])}, "
                          f"seen {rec.tiles[i].seen}, conf {rec.tiles[i].confidence:.2f})")
        for i in np.flatnonzero(visible):
            if faces[i] != tr.faces[i]:
                errors.append(f"slot {tuple(layout.slots[i])} face {faces[i]} (truth {tr.faces[i]}, "
                              f"vis {tr.visible[i]:.2f}, seen {rec.tiles[i].seen}, conf {rec.tiles[i].confidence:.2f})")
        for i in wrong:
            if not visible[i]:
                errors.append(f"slot {tuple(layout.slots[i])} face {faces[i]} on a hidden tile "
                              f"(truth {tr.faces[i]}, vis {tr.visible[i]:.2f})")
        fq = project_slot_faces(layout.slots, spec, rec.pose)
        marked = set(slots_to_check(rec.tiles, g))
        bad = {int(i) for i in np.flatnonzero(pp != present)} | set(wrong) | {
            int(i) for i in np.flatnonzero(visible) if faces[i] != tr.faces[i]}
        row.update(face_px=float(np.median(np.linalg.norm(fq[:, 1] - fq[:, 0], axis=1))),
                   advised=bool(rec.advice), unsure=len(unsure_slots(rec.tiles)), wrong_readings=len(bad),
                   wrong_marked=len(bad & marked), all_marked=bad <= marked)
        unseeable = unseeable_slots(layout, spec, tr.pose().camera_centre_mm, present, g)
        misjudged = {int(i) for i in np.flatnonzero(pp != present)}
        row.update(present_ok=int((pp == present).sum()), face_ok=face_ok, wrong_faces=len(wrong),
                   right=not errors, errors=errors, stacks=stack_errors_by_parallax(layout, rec, spec, present, g),
                   unseeable=len(unseeable),
                   right_but_unseeable=bool(errors) and misjudged <= unseeable and not wrong and all(
                       faces[i] == tr.faces[i] for i in np.flatnonzero(visible)))
        rows.append(row)
        if args.failures and errors:
            from vision.overlay import draw_overlay
            args.failures.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(args.failures / f"photo{k}.jpg"), draw_overlay(scene.image, rec))
            idx = [i for i in range(len(layout)) if pp[i] != present[i]
                   or (visible[i] and faces[i] != tr.faces[i]) or i in wrong]
            if idx:
                crops = extract_raw(scene.image, rec.quads[idx], clf.crop)
                cv2.imwrite(str(args.failures / f"photo{k}-crops.png"),
                            cv2.resize(np.hstack(list(crops)), None, fx=3, fy=3, interpolation=cv2.INTER_NEAREST))
            (args.failures / f"photo{k}.txt").write_text("\n".join(errors) + "\n")
        if (len(rows)) % 20 == 0:
            print(f"  {len(rows)} photos, {sum(r['right'] for r in rows)} entirely right", flush=True)

    def summary(sel):
        vis = sum(r["visible"] for r in sel)
        slots = sum(r["slots"] for r in sel)
        ms = np.array([r["ms"] for r in sel])
        pms = np.array([r["pose_ms"] for r in sel])
        return {"photos": len(sel),
                "face_accuracy_visible": sum(r["face_ok"] for r in sel) / max(vis, 1),
                "visible_tiles": vis,
                "presence_accuracy": sum(r["present_ok"] for r in sel) / max(slots, 1),
                "slots": slots,
                "photos_entirely_right": sum(r["right"] for r in sel) / max(len(sel), 1),
                "photos_right_or_marked": sum(r["right"] or r.get("all_marked", False) for r in sel)
                / max(len(sel), 1),
                "photos_wrong_only_where_unseeable": sum(r.get("right_but_unseeable", False) for r in sel)
                / max(len(sel), 1),
                "photos_with_unseeable_slots": sum(r.get("unseeable", 0) > 0 for r in sel) / max(len(sel), 1),
                "unsure_per_photo": sum(r.get("unsure", 0) for r in sel) / max(len(sel), 1),
                "wrong_readings_marked": sum(r.get("wrong_marked", 0) for r in sel)
                / max(sum(r.get("wrong_readings", 0) for r in sel), 1),
                "mat_not_found": sum(not r["mat_found"] for r in sel),
                "ms_median": _pct(ms, 50), "ms_p90": _pct(ms, 90),
                "pose_ms_median": _pct(pms, 50), "pose_ms_p90": _pct(pms, 90)}

    table = {v: summary([r for r in rows if r["variant"] == v]) for v in VARIANTS}
    table["overall"] = summary(rows)
    print()
    print(f"{'':10s} {'photos':>6s} {'face acc (visible)':>20s} {'presence acc':>16s} {'photos right':>13s} "
          f"{'ms median':>9s} {'ms p90':>7s} {'pose ms':>8s}")
    for name, s in table.items():
        print(f"{name:10s} {s['photos']:6d} {s['face_accuracy_visible']:11.4f} ({s['visible_tiles']:6d}) "
              f"{s['presence_accuracy']:8.4f} ({s['slots']:5d}) {s['photos_entirely_right']:13.3f} "
              f"{s['ms_median']:9.1f} {s['ms_p90']:7.1f} {s['pose_ms_median']:8.1f}")
    by_layout = {}
    for r in rows:
        by_layout.setdefault(r["layout"], []).append(r)
    print()
    for name, sel in by_layout.items():
        s = summary(sel)
        print(f"layout {name:16s} photos {s['photos']:4d} face {s['face_accuracy_visible']:.4f} "
              f"presence {s['presence_accuracy']:.4f} right {s['photos_entirely_right']:.3f}")
    print()
    by_tilt = {}
    for r in rows:
        by_tilt.setdefault(min(int(r["tilt"] // 10), 3), []).append(r)
    for band in sorted(by_tilt):
        s = summary(by_tilt[band])
        print(f"tilt {band * 10:2d}-{band * 10 + 10:2d} deg       photos {s['photos']:4d} face {s['face_accuracy_visible']:.4f} "
              f"presence {s['presence_accuracy']:.4f} right {s['photos_entirely_right']:.3f}")
    print()
    by_width = {}
    for r in rows:
        if "face_px" in r:
            by_width.setdefault(sum(r["face_px"] >= w for w in FACE_PX_BANDS), []).append(r)
    for band in sorted(by_width):
        s = summary(by_width[band])
        lo = FACE_PX_BANDS[band - 1] if band else 0
        name = f"{lo}-{FACE_PX_BANDS[band]} px" if band < len(FACE_PX_BANDS) else f"{lo}+ px"
        print(f"faces {name:9s}        photos {s['photos']:4d} face {s['face_accuracy_visible']:.4f} "
              f"presence {s['presence_accuracy']:.4f} right {s['photos_entirely_right']:.3f}")
    for advised, name in ((False, "no advice given"), (True, "advice given")):
        sel = [r for r in rows if r.get("advised") is advised]
        if sel:
            s = summary(sel)
            print(f"{name:22s} photos {s['photos']:4d} face {s['face_accuracy_visible']:.4f} "
                  f"presence {s['presence_accuracy']:.4f} right {s['photos_entirely_right']:.3f}")
    print()
    s = table["overall"]
    print(f"unsure readings marked on the overlay: {s['unsure_per_photo']:.1f} a photo; the slots to check "
          f"(those, unseen faces and the stacks under them) hold {100 * s['wrong_readings_marked']:.0f} % of the "
          f"wrong readings; photos entirely right or with every wrong reading marked: "
          f"{s['photos_right_or_marked']:.3f}")
    print(f"photos with a slot no view from this camera shows (face region over "
          f"{UNSEEABLE_HIDDEN:.0%} hidden by taller stacks in front): {s['photos_with_unseeable_slots']:.3f}; "
          f"photos whose only mistakes are the presence of such slots: {s['photos_wrong_only_where_unseeable']:.3f}")
    print()
    stacks = np.zeros((len(PARALLAX_BANDS_PX), 2), int)
    for r in rows:
        stacks += np.asarray(r.get("stacks", stacks * 0), int)   # (no mat found: no row of stacks)
    print("raised slots whose support stands (is the top tile there?), by parallax between the slot's face "
          "and the face one layer down:")
    for (lo, hi), (n, bad) in zip(PARALLAX_BANDS_PX, stacks):
        band = f"{lo:g}-{hi:g} px" if hi != float("inf") else f"{lo:g}+ px"
        print(f"parallax {band:8s}  slots {int(n):6d}  wrong {int(bad):5d} ({100 * bad / max(n, 1):.2f} %)")
    if args.json:
        args.json.write_text(json.dumps({"summary": table, "photos": rows}, indent=1))
    return 0


#: bands of the median slot face's width in the photo (px along the 30 mm
#: edge, estimated pose); ``vision.reconstruct.LOW_FACE_PX`` is the first
FACE_PX_BANDS = (24, 32, 40)
#: bands of :func:`stack_errors_by_parallax`, px
PARALLAX_BANDS_PX = ((0.0, 3.0), (3.0, 6.0), (6.0, float("inf")))


def _image_size(text: str) -> tuple[int, int]:
    """``"WxH"`` -> ``(W, H)`` px, each 64-8192 (argparse type)."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r} is not WxH (e.g. 4032x3024)") from None
    if not (64 <= w <= 8192 and 64 <= h <= 8192):
        raise argparse.ArgumentTypeError(f"size {text!r}: width and height must be 64-8192 px")
    return w, h


#: a slot whose face region is hidden by more than this share from the
#: camera, by the tiles truly standing on higher layers, is one no reading of
#: the photo can judge (:func:`unseeable_slots`)
UNSEEABLE_HIDDEN = 0.9


def unseeable_slots(layout, spec, camera_mm, present, g) -> set[int]:
    """Slots not covered by a standing tile whose face region (where the top
    face is, or would be) the truly standing tiles of higher layers hide by
    more than :data:`UNSEEABLE_HIDDEN` as seen from the true camera centre
    ``camera_mm`` (``(3,)`` mat mm; :func:`vision.reconstruct.hidden_fraction`):
    in a steep view, the slots right behind a taller stack.  Whether a tile
    stands there no photo from this camera can show; ``recognize`` reports
    such a slot present with an unseen face (``hidden_present_above``)."""
    from vision.reconstruct import hidden_fraction
    slots = layout.slots
    out = set()
    for i, s in enumerate(slots):
        if any(present[j] for j in g.covered_by[i]):
            continue
        above = [slots[j] for j in range(len(slots)) if present[j] and slots[j].z > s.z]
        if above and float(hidden_fraction([s], above, camera_mm, spec, 7)[0]) > UNSEEABLE_HIDDEN:
            out.add(i)
    return out


def stack_errors_by_parallax(layout, rec, spec, present, g) -> list[list[int]]:
    """``[[slots, wrong], ...]`` per band of :data:`PARALLAX_BANDS_PX` over the
    raised slots whose supporting tiles all stand (the question there is the
    stack's height): the parallax is the largest corner shift (px) between
    the slot's face projected at its own height and one layer lower, with
    the estimated pose.  Under about 3 px (camera nearly overhead, slot near
    the image centre) the two heights look alike."""
    from vision.presence import window_quads
    q = window_quads(layout.slots, spec, rec.pose)
    disp = np.abs(q[0] - q[1]).max(axis=(1, 2))
    out = [[0, 0] for _ in PARALLAX_BANDS_PX]
    for i, s in enumerate(layout.slots):
        if s[2] < 1 or not g.covers[i] or not all(present[j] for j in g.covers[i]):
            continue
        for b, (lo, hi) in enumerate(PARALLAX_BANDS_PX):
            if lo <= disp[i] < hi:
                out[b][0] += 1
                out[b][1] += int(rec.tiles[i].present != present[i])
    return out


if __name__ == "__main__":
    sys.exit(main())
