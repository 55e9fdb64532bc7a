"""vision/presence.py: which slots the presence model judges, its two windows,
its input, and the bundled model on a rendered scene."""

import numpy as np
import pytest

from companion.layouts import Layout, Slot
from vision.mat import MatSpec
from vision.pose import Camera, MatPose, project_slot_faces
from vision.presence import (PRESENCE_CROP, PresenceModel, PresenceSettings, candidates, presence_input,
                             presence_raw, window_quads)
from synthetic_views import camera_matrix, look_at_pose


def test_candidates_are_raised_slots_and_their_near_neighbours():
    slots = [(0, 0, 0), (2, 0, 0), (4, 0, 0), (2, 0, 1),     # a row with a tile on the middle one
             (6, 0, 0),                                      # 4 half-units from the raised tile: near
             (8, 0, 0),                                      # 6 half-units away: far
             (20, 10, 0), (2, 6, 0)]                         # far in x, 6 half-units away in y
    assert candidates(slots).tolist() == [True, True, True, True, True, False, False, False]
    assert candidates([]).shape == (0,)
    # a flat layout has no candidates at all: its presence stays the classifier's
    assert not candidates([(2 * i, 0, 0) for i in range(10)]).any()


@pytest.fixture(scope="module")
def pose():
    spec = MatSpec.default()
    K = camera_matrix((1280, 720), 1000.0)
    rv, tv = look_at_pose((297, 210, 0), 800.0, 25.0, yaw_deg=5.0)
    return spec, MatPose(rv, tv, Camera(K, np.zeros(5), (1280, 720)), 0.0, 12)


def test_two_windows_at_the_slot_height_and_one_layer_lower(pose):
    spec, p = pose
    slots = [(4, 2, 0), (10, 6, 2)]
    q = window_quads(slots, spec, p)
    assert q.shape == (2, 2, 4, 2) and q.dtype == np.float32
    np.testing.assert_allclose(q[0], project_slot_faces(slots, spec, p), atol=1e-4)
    np.testing.assert_allclose(q[1], project_slot_faces([(4, 2, -1), (10, 6, 1)], spec, p), atol=1e-4)
    # a layer-0 slot's lower window is its footprint on the mat (height 0): the
    # camera looks down, so the lower face looks smaller than the top face
    area = lambda quad: 0.5 * abs(np.cross(quad[2] - quad[0], quad[3] - quad[1]))
    assert area(q[1, 0]) < area(q[0, 0])


def test_input_is_two_normalised_windows_as_six_channels(pose):
    spec, p = pose
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    raw = presence_raw(img, window_quads([(4, 2, 0), (10, 6, 2), (30, 12, 1)], spec, p))
    assert raw.shape == (3, 2, PRESENCE_CROP.height, PRESENCE_CROP.width, 3) and raw.dtype == np.uint8
    x = presence_input(raw)
    assert x.shape == (3, 6, 64, 48) and x.dtype == np.float32
    # each window has zero mean per channel
    np.testing.assert_allclose(x.mean(axis=(2, 3)), 0.0, atol=1e-4)


def test_missing_model_is_a_clear_error(tmp_path):
    from companion.errors import BadInput
    with pytest.raises(BadInput, match="cannot read model description"):
        PresenceModel(PresenceSettings(model_path=tmp_path / "presence.onnx"))


def _uncovered_candidates(layout, truth):
    """The candidate slots no present tile covers (the slots the presence
    model is asked about), and every slot's true presence."""
    from companion.rules import Geometry
    g = Geometry.of(layout)
    present = np.asarray(truth.present, bool)
    covered = np.array([any(present[j] for j in g.covered_by[i]) for i in range(len(layout))])
    return np.flatnonzero(candidates(layout.slots) & ~covered), present


def test_bundled_model_tells_an_exposed_tile_from_the_one_above():
    # sprint-2layer with six upper tiles taken (three pairs of free tiles), a
    # 20-degree view: the model judges every candidate slot left uncovered
    from companion import codex
    from companion.layouts import shifted_to_origin
    from vision.synth import SceneSpec, render_scene

    if not PresenceSettings().model_path.exists():
        pytest.skip("models/presence.onnx is not bundled in this checkout")
    layout = shifted_to_origin(codex.builtin("sprint-2layer"))
    upper = [s for s in layout.slots if s.z == 1]
    removed = tuple(upper[:2] + upper[-2:] + upper[len(upper) // 2: len(upper) // 2 + 2])
    scene = render_scene(SceneSpec("mindful", layout, tilt_deg=(20.0, 20.0), removed=removed),
                         np.random.default_rng(11))
    tr = scene.truth
    idx, present = _uncovered_candidates(layout, tr)
    q = PresenceModel().slot_logits(scene.image, [layout.slots[i] for i in idx], tr.mat, tr.pose())
    assert ((q > 0) == present[idx]).mean() >= 0.95
    assert all(q[list(idx).index(layout.slots.index(s))] < 0 for s in removed)


def test_unsure_windows_are_averaged_over_their_looks(pose):
    # the model was trained on windows turned and mirrored at random (both
    # heights together); within symmetric_below of even the window is read
    # again turned 180 degrees (and, with symmetric_looks 3, mirrored both
    # ways) and the looks averaged, so those symmetries leave the log-odds alone
    if not PresenceSettings().model_path.exists():
        pytest.skip("models/presence.onnx is not bundled in this checkout")
    spec, p = pose
    rng = np.random.default_rng(8)
    img = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    raw = presence_raw(img, window_quads([(4, 2, 0), (10, 6, 2), (30, 12, 1), (20, 8, 1)], spec, p))
    plain = PresenceModel(PresenceSettings(symmetric_below=0.0))
    every = PresenceModel(PresenceSettings(symmetric_below=1e9, symmetric_looks=3))
    turned = PresenceModel(PresenceSettings(symmetric_below=1e9))          # the default: one look more
    looks = [raw, raw[:, :, ::-1, ::-1], raw[:, :, :, ::-1], raw[:, :, ::-1, :]]
    q = [plain.logits(presence_input(np.ascontiguousarray(r))) for r in looks]
    assert max(np.abs(q[0] - q[k]).max() for k in (1, 2, 3)) > 1e-3
    np.testing.assert_allclose(plain.window_logits(raw), q[0], atol=1e-5)
    np.testing.assert_allclose(every.window_logits(raw), np.mean(q, axis=0), atol=1e-4)
    np.testing.assert_allclose(turned.window_logits(raw), (q[0] + q[1]) / 2, atol=1e-4)
    for r in looks[1:]:
        np.testing.assert_allclose(every.window_logits(np.ascontiguousarray(r)), every.window_logits(raw), atol=1e-4)
    np.testing.assert_allclose(turned.window_logits(np.ascontiguousarray(looks[1])), turned.window_logits(raw),
                               atol=1e-4)
    # only windows within the margin are looked at again
    cut = float(np.median(np.abs(q[0])))
    some = PresenceModel(PresenceSettings(symmetric_below=cut, symmetric_looks=3)).window_logits(raw)
    low = np.abs(q[0]) < cut
    assert 0 < low.sum() < len(low)
    np.testing.assert_allclose(some[~low], q[0][~low], atol=1e-6)
    np.testing.assert_allclose(some[low], np.mean(q, axis=0)[low], atol=1e-4)


def test_looks_out_of_range_are_refused():
    with pytest.raises(ValueError, match="symmetric_looks"):
        PresenceSettings(symmetric_looks=4)


def _rendered_windows():
    """Window pairs of every uncovered candidate slot of a rendered turtle with some
    stacks taken, 15 degrees of tilt: ``(N, 2, h, w, 3) uint8`` and truth."""
    from companion import codex
    from companion.layouts import shifted_to_origin
    from vision.synth import SceneSpec, render_scene
    layout = shifted_to_origin(codex.builtin("turtle"))
    scene = render_scene(SceneSpec("love", layout, tilt_deg=(15.0, 15.0), n_removed=40),
                         np.random.default_rng(5))
    tr = scene.truth
    idx, present = _uncovered_candidates(layout, tr)
    raw = presence_raw(scene.image, window_quads([layout.slots[i] for i in idx], tr.mat, tr.pose()))
    return raw, present[idx]


def test_bundled_int8_model_reads_as_its_float_model():
    # recognize runs the 8-bit model (vision.training.quantize);
    # the float one it was made from is bundled beside it
    fp32 = PresenceSettings().model_path.with_name("presence-fp32.onnx")
    if not fp32.exists() or not PresenceSettings().model_path.exists():
        pytest.skip("models/presence.onnx and presence-fp32.onnx are not bundled in this checkout")
    raw, _ = _rendered_windows()
    x = presence_input(raw)
    q8 = PresenceModel().logits(x)
    q32 = PresenceModel(PresenceSettings(model_path=fp32)).logits(x)
    assert len(x) > 60
    assert np.abs(q8 - q32).mean() < 0.25
    sure = np.abs(q32) > 1.0
    assert (np.sign(q8[sure]) == np.sign(q32[sure])).all()
    assert np.abs(q8 - q32).max() > 1e-3         # it is another model, not a copy


def test_quantize_keeps_the_first_and_last_layers_float(tmp_path):
    pytest.importorskip("onnx", reason="onnx not installed (the train extra)")
    import onnx
    from vision.training.quantize import quantize
    fp32 = PresenceSettings().model_path.with_name("presence-fp32.onnx")
    if not fp32.exists():
        pytest.skip("models/presence-fp32.onnx is not bundled in this checkout")
    raw, truth = _rendered_windows()
    x = presence_input(raw)
    info = quantize(fp32, tmp_path / "q.onnx", x)
    assert info["calibration_inputs"] == len(x) and info["kept_float"] == ["/0/Conv", "/15/Gemm"]
    assert info["output_change_mean"] < 0.25 and info["sign_turned_share"] < 0.02
    nodes = onnx.load(str(tmp_path / "q.onnx")).graph.node
    kinds = [n.op_type for n in nodes]
    assert kinds.count("QuantizeLinear") >= 3 and kinds.count("Conv") == 4 and kinds.count("Gemm") == 1
    made = {o: n for n in nodes for o in n.output}
    conv0 = next(n for n in nodes if n.op_type == "Conv")
    gemm = next(n for n in nodes if n.op_type == "Gemm")
    # the first convolution reads the float input and float weights; the
    # last layer's weights are not dequantized int8
    assert conv0.input[0] not in made and all(made.get(i) is None or made[i].op_type != "DequantizeLinear"
                                               for i in conv0.input[1:])
    assert all(made.get(i) is None or made[i].op_type != "DequantizeLinear" for i in gemm.input[1:])
    # and the model still reads the scene: most candidate slots right
    import onnxruntime as ort
    s = ort.InferenceSession(str(tmp_path / "q.onnx"), providers=["CPUExecutionProvider"])
    q = s.run(None, {s.get_inputs()[0].name: x})[0].reshape(-1)
    assert ((q > 0) == truth).mean() >= 0.95


@pytest.mark.parametrize("name", ["presence.onnx", "tiles.onnx"])
def test_bundled_int8_models_declare_only_the_operator_sets_they_use(name):
    # onnxruntime 1.17 (pyproject's oldest) refuses a model that declares
    # ai.onnx.ml opset 5, as onnxruntime's quantizer stamps by default
    onnx = pytest.importorskip("onnx", reason="onnx not installed (the train extra)")
    path = PresenceSettings().model_path.with_name(name)
    if not path.exists():
        pytest.skip(f"models/{name} is not bundled in this checkout")
    model = onnx.load(str(path))
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 17)}
    assert {n.op_type for n in model.graph.node} >= {"QuantizeLinear", "DequantizeLinear", "Conv", "Gemm"}
