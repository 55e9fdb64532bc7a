"""vision/training/train_presence.py: fine-tuning starts from an exported
presence.onnx (whose batch norms the export folded into the convolutions).
Needs the ``train`` extra (torch, onnx); skipped without it."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch not installed (the train extra): fine-tuning not tested")
pytest.importorskip("onnx", reason="onnx not installed (the train extra): fine-tuning not tested")

from vision.presence import PRESENCE_CROP, presence_input  # noqa: E402
from vision.training.train_presence import build_model, init_from_onnx  # noqa: E402


def _windows(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 2, PRESENCE_CROP.height, PRESENCE_CROP.width, 3), dtype=np.uint8)


def _trained_looking_model():
    """A model whose batch norms hold statistics and affine terms far from
    their defaults (as after training), in eval mode."""
    torch.manual_seed(3)
    m = build_model()
    with torch.no_grad():
        for mod in m:
            if isinstance(mod, torch.nn.BatchNorm2d):
                c = mod.num_features
                mod.running_mean.copy_(torch.randn(c) * 0.5)
                mod.running_var.copy_(torch.rand(c) * 2 + 0.2)
                mod.weight.copy_(torch.rand(c) + 0.5)
                mod.bias.copy_(torch.randn(c) * 0.3)
    return m.eval()


def test_a_model_started_from_its_onnx_export_gives_the_same_log_odds(tmp_path):
    src = _trained_looking_model()
    path = tmp_path / "presence.onnx"
    torch.onnx.export(src, torch.zeros(2, 6, PRESENCE_CROP.height, PRESENCE_CROP.width), str(path),
                      input_names=["windows"], output_names=["logit"],
                      dynamic_axes={"windows": {0: "n"}, "logit": {0: "n"}}, opset_version=17, dynamo=False)
    import onnx
    assert not any(n.op_type == "BatchNormalization" for n in onnx.load(str(path)).graph.node)  # folded
    x = _windows(64, 1)
    with torch.no_grad():
        want = src(torch.from_numpy(presence_input(x))).numpy().reshape(-1)
    fresh = build_model()
    init_from_onnx(fresh, path, _windows(256, 2))
    fresh.eval()
    with torch.no_grad():
        got = fresh(torch.from_numpy(presence_input(x))).numpy().reshape(-1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # in training mode (batch statistics) the calibration windows themselves
    # come out as in eval mode: the batch norms were set from their statistics
    calib = _windows(256, 2)
    fresh.train()
    for mod in fresh:
        if isinstance(mod, torch.nn.Dropout):
            mod.p = 0.0
    with torch.no_grad():
        tr = fresh(torch.from_numpy(presence_input(calib))).numpy().reshape(-1)
        fresh.eval()
        ev = fresh(torch.from_numpy(presence_input(calib))).numpy().reshape(-1)
    np.testing.assert_allclose(tr, ev, rtol=1e-3, atol=1e-3)


def test_a_file_of_another_architecture_is_refused(tmp_path):
    other = torch.nn.Sequential(torch.nn.Conv2d(6, 8, 3), torch.nn.Flatten(), torch.nn.Linear(8 * 62 * 46, 1)).eval()
    path = tmp_path / "other.onnx"
    torch.onnx.export(other, torch.zeros(1, 6, PRESENCE_CROP.height, PRESENCE_CROP.width), str(path), opset_version=17,
                      dynamo=False)
    with pytest.raises(ValueError, match="not a presence model of this architecture"):
        init_from_onnx(build_model(), path, _windows(8, 0))


def test_a_file_that_is_not_onnx_is_refused_in_one_line(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("these are not weights\n")
    with pytest.raises(ValueError, match="cannot read as ONNX") as err:
        init_from_onnx(build_model(), path, _windows(8, 0))
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="cannot read as ONNX"):
        init_from_onnx(build_model(), tmp_path / "missing.onnx", _windows(8, 0))


def test_the_8bit_model_is_refused_as_a_start():
    from vision.presence import PresenceSettings
    int8 = PresenceSettings().model_path
    if not int8.exists():
        pytest.skip("models/presence.onnx is not bundled in this checkout")
    with pytest.raises(ValueError, match="an 8-bit model .*presence-fp32.onnx"):
        init_from_onnx(build_model(), int8, _windows(8, 0))
