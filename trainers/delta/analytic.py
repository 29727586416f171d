"""The delta action that is known in closed form: a joint whose real stiffness is a fraction of the nominal one.

The real PD applies τ = r·Kp·(q* − q) − Kd·q̇ (r = 0.65 on ASAP's soft ankles). The nominal
simulator, given the target q* + δ, applies Kp·(q* + δ − q) − Kd·q̇. They are equal iff

    δ = (r − 1)·(q* − q)            (= −0.35·(q* − q) for r = 0.65)

in PD-target units [rad]. The policy does not output targets but actions: ASAP maps
q* = s·a + q_default with s = 0.25 (``SimConfig.action_scale``), so the same correction in action
units is Δa = δ / s = (r − 1)·(q* − q) / s (= −1.4·(q* − q) per radian of tracking error).

The identity is exact only if δ is recomputed from the current q at every physics step; a
policy-rate Δa is computed once and held for the ``decimation`` physics steps while q moves,
which leaves a small error (measured in ``tests/test_delta_analytic.py``, reported in the README).
"""

from __future__ import annotations

import numpy as np

from robots.registry import RobotSpec
from trainers.real.profiles import RealProfile
from trainers.real.stepper import TargetCorrection


def stiffness_ratios(profile: RealProfile, robot: RobotSpec) -> np.ndarray:
    """(D,) real Kp / nominal Kp per joint."""
    return np.array([profile.kp_multiplier(n) for n in robot.joint_names])


def soft_joint_delta_target(target: np.ndarray, q: np.ndarray, kp_ratio: np.ndarray) -> np.ndarray:
    """δ [rad] added to the nominal PD target so it applies the torque of a PD with Kp·kp_ratio."""
    return (np.asarray(kp_ratio) - 1.0) * (np.asarray(target) - np.asarray(q))


def target_to_action(delta_target: np.ndarray, action_scale: float) -> np.ndarray:
    """A PD-target offset [rad] in policy action units (q* = action_scale·a + offset)."""
    return np.asarray(delta_target) / action_scale


def action_to_target(delta_action: np.ndarray, action_scale: float) -> np.ndarray:
    """A policy-action offset in PD-target units [rad]."""
    return np.asarray(delta_action) * action_scale


def analytic_delta_action(
    profile: RealProfile, robot: RobotSpec, target: np.ndarray, q: np.ndarray, action_scale: float = 0.25
) -> np.ndarray:
    """Δa (policy action units) that makes the nominal simulator reproduce ``profile``'s PD stiffness."""
    return target_to_action(soft_joint_delta_target(target, q, stiffness_ratios(profile, robot)), action_scale)


def analytic_correction(profile: RealProfile, robot: RobotSpec) -> TargetCorrection:
    """The analytic δ as a :data:`TargetCorrection` for :class:`trainers.real.stepper.PdRobot`."""
    ratio = stiffness_ratios(profile, robot)
    return lambda target, q, qd: soft_joint_delta_target(target, q, ratio)
