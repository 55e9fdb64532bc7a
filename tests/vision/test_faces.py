"""vision/faces.py: the bundled ONNX classifier, restricted to one variant."""

import numpy as np
import pytest

from companion.errors import BadInput
from companion.tiles import VARIANTS, tileset
from vision.crops import extract_patches
from vision.faces import ClassifierSettings, TileClassifier, profile_label_to_face


@pytest.fixture(scope="module")
def clf():
    return TileClassifier()


def test_model_covers_every_variant_and_input_shape(clf):
    assert set(clf.variants) == set(VARIANTS)
    assert clf.crop.shape == (3, 48, 36)
    assert len(clf.classes) == sum(len(tileset(v).faces) for v in VARIANTS) + 2
    assert clf.classes[-2:] == ("none", "occluded")


@pytest.mark.parametrize("variant", VARIANTS)
def test_scores_are_the_variants_classes_only(clf, variant):
    rng = np.random.default_rng(0)
    patches = rng.normal(0, 1, (5, *clf.crop.shape)).astype(np.float32)
    sc = clf.scores(patches, variant)
    ids = [f.id for f in tileset(variant).faces]
    assert list(sc.labels) == ids + ["none", "occluded"]
    assert sc.probs.shape == (5, len(ids) + 2)
    assert np.allclose(sc.probs.sum(axis=1), 1, atol=1e-5)
    labels, p = sc.best()
    assert all(l in sc.labels for l in labels) and np.all((p > 0) & (p <= 1))
    assert sc.face_probs.shape == (5, len(ids)) and sc.p_none.shape == (5,) and sc.p_occluded.shape == (5,)


def test_empty_batch_and_bad_variant(clf):
    assert clf.scores(np.zeros((0, *clf.crop.shape), np.float32), "love").probs.shape == (0, 44)
    with pytest.raises(BadInput):
        clf.scores(np.zeros((1, *clf.crop.shape), np.float32), "chess")


def test_missing_model_is_bad_input(tmp_path):
    with pytest.raises(BadInput):
        TileClassifier(ClassifierSettings(model_path=tmp_path / "nope.onnx"))


def test_a_description_that_does_not_fit_its_model_is_bad_input(tmp_path):
    import json
    import shutil

    from vision.faces import MODELS_DIR

    shutil.copy(MODELS_DIR / "tiles.onnx", tmp_path / "m.onnx")
    meta = json.loads((MODELS_DIR / "tiles.json").read_text())

    def load(description):
        (tmp_path / "m.json").write_text(json.dumps(description))
        with pytest.raises(BadInput) as e:
            TileClassifier(ClassifierSettings(model_path=tmp_path / "m.onnx"))
        return str(e.value)

    assert "no 'classes'" in load({})
    assert "no 'input'" in load({"classes": meta["classes"]})
    # the patch size the model reads, or its number of classes, said otherwise
    said = load(dict(meta, input=dict(meta["input"], height=40)))
    assert "3x48x36 patches into 155 classes" in said and "3x40x36" in said
    assert "into 154" in load(dict(meta, classes=meta["classes"][:-1]))


def test_reads_faces_of_a_clean_synthetic_scene(clf):
    from companion.layouts import Layout, Slot
    from vision.pose import project_slot_faces
    from vision.synth import Augment, SceneSpec, render_scene

    layout = Layout("row", tuple(Slot(8 + 2 * i, 6 + 2 * (i // 8), 0) for i in range(8))
                    + tuple(Slot(8 + 2 * i, 10, 0) for i in range(8)), "test")
    faces = tuple(f.id for f in tileset("mindful").faces[:16])
    scene = render_scene(SceneSpec("mindful", layout, removed=(), faces=faces, tilt_deg=(15, 15),
                                   augment=Augment.none()), np.random.default_rng(3))
    quads = project_slot_faces(layout.slots, scene.truth.mat, scene.truth.pose())
    sc = clf.scores(extract_patches(scene.image, quads, clf.crop), "mindful")
    labels, p = sc.best()
    assert sum(a == b for a, b in zip(labels, faces)) >= 15


def test_profile_labels_map_to_face_ids():
    assert profile_label_to_face("hearts-1", "love") == "hearts-1"
    assert profile_label_to_face("love/hearts-1", "love") == "hearts-1"
    assert profile_label_to_face("dots-3", "mindful") == "circles-3"
    assert profile_label_to_face("honors-east", "mindful") == "wind-east"
    assert profile_label_to_face("bonus-bamboo", "mindful") == "flower-bamboo"
    assert profile_label_to_face("a", "word") == "A"
    assert profile_label_to_face("my-own-name", "love") is None


def test_unsure_patches_are_read_both_ways_round(clf):
    # tiles lie either way round, so a face turned 180 degrees is the same
    # class: below the threshold a patch's scores are the mean of the two
    # reads, hence the same for the patch and its turned copy
    rng = np.random.default_rng(5)
    patches = rng.normal(0, 1, (6, *clf.crop.shape)).astype(np.float32)
    turned = np.ascontiguousarray(patches[:, :, ::-1, ::-1])
    plain = TileClassifier(ClassifierSettings(turn_average_below=0.0))
    both = TileClassifier(ClassifierSettings(turn_average_below=1.01))
    a, b = plain.scores(patches, "word").probs, plain.scores(turned, "word").probs
    assert np.abs(a - b).max() > 1e-3            # the model itself is not symmetric
    np.testing.assert_allclose(both.scores(patches, "word").probs, (a + b) / 2, atol=1e-5)
    np.testing.assert_allclose(both.scores(turned, "word").probs, both.scores(patches, "word").probs, atol=1e-5)
    # only patches under the threshold are averaged
    cut = float(np.median(a.max(axis=1)))
    some = TileClassifier(ClassifierSettings(turn_average_below=cut)).scores(patches, "word").probs
    low = a.max(axis=1) < cut
    assert 0 < low.sum() < len(low)
    np.testing.assert_allclose(some[~low], a[~low], atol=1e-6)
    np.testing.assert_allclose(some[low], ((a + b) / 2)[low], atol=1e-5)


@pytest.mark.parametrize("name", ["tiles", "tiles-blank"])
def test_bundled_int8_classifier_reads_as_its_float_model(name):
    # recognize runs the 8-bit models (vision.training.quantize); the float
    # ones they were made from are bundled beside them
    from companion import codex
    from companion.layouts import shifted_to_origin
    from vision.faces import MODELS_DIR
    from vision.pose import project_slot_faces
    from vision.synth import SceneSpec, render_scene

    fp32 = MODELS_DIR / f"{name}-fp32.onnx"
    if not fp32.exists() or not (MODELS_DIR / f"{name}.onnx").exists():
        pytest.skip(f"models/{name}.onnx and {name}-fp32.onnx are not bundled in this checkout")
    clf = TileClassifier(ClassifierSettings(model_path=MODELS_DIR / f"{name}.onnx"))
    # only the classifier of blanked windows says so (recognize reads
    # partly hidden faces again with it)
    assert clf.reads_blanked is (name == "tiles-blank")
    layout = shifted_to_origin(codex.builtin("turtle"))
    scene = render_scene(SceneSpec("candy", layout, tilt_deg=(25, 25), n_removed=30), np.random.default_rng(4))
    patches = extract_patches(scene.image, project_slot_faces(layout.slots, scene.truth.mat, scene.truth.pose()),
                              clf.crop)
    float_clf = TileClassifier(ClassifierSettings(model_path=fp32))
    a, b = clf.scores(patches, "candy"), float_clf.scores(patches, "candy")
    assert np.abs(clf.logits(patches) - float_clf.logits(patches)).max() > 1e-3    # not a copy
    assert np.abs(a.probs - b.probs).mean() < 0.01
    sure = b.probs.max(axis=1) > 0.9
    assert sure.sum() > 50 and (a.probs.argmax(axis=1)[sure] == b.probs.argmax(axis=1)[sure]).all()
