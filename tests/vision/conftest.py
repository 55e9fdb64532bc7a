"""Shared fixtures of the vision tests (the standard mat and its printed
image), and the helpers beside these tests (synthetic_views.py) made
importable under pytest's importlib import mode."""

import sys
from pathlib import Path

import numpy as np
import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(scope="session")
def spec():
    """The standard mat, ``vision.mat.MatSpec.default()``."""
    from vision.mat import MatSpec
    return MatSpec.default()


@pytest.fixture(scope="session")
def mat_png(spec) -> np.ndarray:
    """``(H, W, 3) uint8`` BGR: the printed mat at its spec's px_per_mm
    (``vision.mat.render_mat``)."""
    from vision.mat import render_mat
    return render_mat(spec)
