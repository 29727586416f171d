"""The numpy rotation conversions of :mod:`retarget.rotations` against scipy's (the reference they replace),
including the small-angle and half-turn cases where the formulas switch branches."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from retarget import rotations as rot

_RNG = np.random.default_rng(21)
ROTVECS = np.concatenate(
    [
        _RNG.normal(size=(500, 3)),
        1e-7 * _RNG.normal(size=(20, 3)),  # below the series threshold
        np.pi * np.eye(3),
        (np.pi - 1e-7) * np.eye(3),
        np.zeros((1, 3)),
    ]
)
QUATS = _RNG.normal(size=(500, 4))
QUATS /= np.linalg.norm(QUATS, axis=1, keepdims=True)


def test_rotvec_and_quaternion_conversions_match_scipy():
    ref = Rotation.from_rotvec(ROTVECS)
    np.testing.assert_allclose(rot.rotvec_to_quat(ROTVECS), ref.as_quat(scalar_first=True), atol=1e-14)
    np.testing.assert_allclose(rot.rotvec_to_matrix(ROTVECS), ref.as_matrix(), atol=1e-14)
    q_ref = Rotation.from_quat(QUATS, scalar_first=True)
    np.testing.assert_allclose(rot.quat_to_rotvec(QUATS), q_ref.as_rotvec(), atol=1e-14)
    np.testing.assert_allclose(rot.quat_to_rotvec(-QUATS), q_ref.as_rotvec(), atol=1e-14)  # q and -q agree
    np.testing.assert_allclose(rot.quat_to_matrix(QUATS), q_ref.as_matrix(), atol=1e-14)


def test_matrix_conversions_match_scipy_and_round_trip():
    mats = Rotation.from_rotvec(ROTVECS).as_matrix()
    np.testing.assert_allclose(
        rot.matrix_to_quat(mats), Rotation.from_matrix(mats).as_quat(scalar_first=True), atol=1e-14
    )
    back = rot.matrix_to_rotvec(mats)
    angle = np.linalg.norm(ROTVECS, axis=1)
    inside = angle < np.pi - 1e-6  # at exactly π, r and −r are the same rotation
    np.testing.assert_allclose(back[inside], ROTVECS[inside], atol=1e-12)
    np.testing.assert_allclose(rot.rotvec_to_matrix(back), mats, atol=1e-12)


def test_conversions_keep_leading_axes():
    assert rot.rotvec_to_matrix(np.zeros((2, 5, 3))).shape == (2, 5, 3, 3)
    assert rot.matrix_to_quat(np.eye(3)).shape == (4,)
    np.testing.assert_array_equal(rot.quat_to_rotvec(np.array([1.0, 0.0, 0.0, 0.0])), np.zeros(3))
