"""The wrapper-free median and percentile give numpy's floats, bit for bit, on a real clip's foot heights."""

from __future__ import annotations

import numpy as np
import pytest

from retarget.floor_cues import tangent_basis
from retarget.quantiles import median, percentile
from retarget.readers.amass import read_amass_npz
from retarget.skeleton import smpl_joint_positions
from tests.conftest import smpl_clip


@pytest.fixture(scope="module")
def ankle_heights_m() -> np.ndarray:
    seq = read_amass_npz(smpl_clip("walk_level1_filter"))
    return smpl_joint_positions(seq.pose_rotvec, seq.trans_w, np.array([7, 8]))[..., 2]


@pytest.mark.parametrize("percent", [0.0, 2.0, 5.0, 20.0, 50.0, 95.0, 100.0])
def test_percentile_is_numpys(ankle_heights_m, percent):
    for values in (ankle_heights_m, ankle_heights_m[:, 0], ankle_heights_m[1:, 1], ankle_heights_m[:1, 0]):
        assert percentile(values, percent) == float(np.percentile(values, percent))


def test_median_is_numpys(ankle_heights_m):
    for values in (ankle_heights_m[:, 0], ankle_heights_m[1:, 1], ankle_heights_m.reshape(-1)[:7]):
        assert median(values) == float(np.median(values))
    assert median(np.array([1.0, 4.0])) == 2.5


@pytest.mark.parametrize("normal", [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.05, -0.03, 0.998), (-0.95, 0.1, 0.296)])
def test_tangent_basis_is_the_cross_products(normal):
    n = np.array(normal) / np.linalg.norm(normal)
    basis = tangent_basis(n)
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    first = np.cross(n, helper)
    first /= np.linalg.norm(first)
    assert np.array_equal(basis, np.stack([first, np.cross(n, first)], axis=1))
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-15)
    np.testing.assert_allclose(basis.T @ n, 0.0, atol=1e-15)
