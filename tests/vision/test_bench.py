"""The recognition bench's photo generator and its options (bench/bench_recognize.py)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from bench.bench_recognize import _image_size, bench_layouts, bench_photo


def test_image_size_parses_w_by_h():
    assert _image_size("1920x1080") == (1920, 1080)
    assert _image_size("3840X2160") == (3840, 2160)


@pytest.mark.parametrize("text", ["1920", "1920x", "axb", "1920x1080x3", "32x32", "9000x100"])
def test_image_size_refuses_bad_sizes(text):
    with pytest.raises(argparse.ArgumentTypeError):
        _image_size(text)


def test_other_size_renders_the_same_scene():
    """``--size`` changes the pixels only: same layout, tiles, pose and camera
    (the focal length in px scales with the width)."""
    layouts = bench_layouts()
    v1, l1, a = bench_photo(3, layouts)
    v2, l2, b = bench_photo(3, layouts, size=(640, 360))
    assert (v1, l1.name) == (v2, l2.name)
    assert a.image.shape == (720, 1280, 3) and b.image.shape == (360, 640, 3)
    assert list(a.truth.present) == list(b.truth.present)
    assert a.truth.faces == b.truth.faces
    assert a.truth.pose().tilt_deg == pytest.approx(b.truth.pose().tilt_deg)
    assert b.truth.camera.K[0, 0] == pytest.approx(a.truth.camera.K[0, 0] / 2)
    assert np.allclose(np.asarray(b.truth.jitter), np.asarray(a.truth.jitter))
