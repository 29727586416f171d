"""The training MuJoCo model: the retargeting G1 (same URDF, rotor inertia as armature) plus PD actuators.

The PD law runs inside MuJoCo as a position actuator per joint, so it is evaluated at every
physics step (200 Hz) exactly as ASAP's explicit PD is, while the policy writes targets only
every ``decimation`` steps — that is what lets a batch of simulations step ``decimation``
substeps in one C call and keep per-environment control:

    τ = clip(Kp·(q* − q) − Kd·q̇, ±effort_limit)

(MuJoCo's ``implicitfast`` integrator treats the −Kd·q̇ term implicitly, which only adds
stability; the torque itself is the formula above.)
"""

from __future__ import annotations

import mujoco
import numpy as np

from robots.mujoco_model import dof_qpos_indices, dof_qvel_indices
from robots.pd_model import GANTRY_HEIGHT_M, build_pd_spec  # noqa: F401  (GANTRY_HEIGHT_M re-exported)
from robots.registry import RobotSpec
from trainers.config import DEFAULT_JOINT_POS_RAD, SimConfig


def build_training_spec(sim: SimConfig | None = None, fixed_base: bool = False) -> mujoco.MjSpec:
    """The G1 with one PD position actuator per joint (actuator order = joint order), as an editable spec
    (the "real" profiles of :mod:`trainers.real` edit it before compiling). ``fixed_base=True`` removes
    the free joint and the floor: the pelvis hangs from a gantry, as on a test bench."""
    sim = SimConfig() if sim is None else sim
    return build_pd_spec(sim.robot, sim.physics_dt_s, sim.self_collision, fixed_base)


def build_training_model(sim: SimConfig | None = None) -> mujoco.MjModel:
    """Compile the G1 with one PD position actuator per joint (actuator order = joint order)."""
    return build_training_spec(sim).compile()


def default_joint_pos(robot: RobotSpec) -> np.ndarray:
    """(D,) ASAP's default pose [rad] in the spec's joint order."""
    return np.array([DEFAULT_JOINT_POS_RAD.get(n, 0.0) for n in robot.joint_names])


def pd_torque(
    kp: np.ndarray, kd: np.ndarray, target: np.ndarray, q: np.ndarray, qd: np.ndarray, effort_limit: np.ndarray
) -> np.ndarray:
    """The PD law the actuators implement, for checks: clip(Kp(q*−q) − Kd q̇, ±limit)."""
    return np.clip(kp * (target - q) - kd * qd, -effort_limit, effort_limit)


def joint_addresses(model: mujoco.MjModel, robot: RobotSpec) -> tuple[np.ndarray, np.ndarray]:
    """(qpos addresses, qvel addresses) of the actuated joints, in the spec's order."""
    return dof_qpos_indices(model, robot), dof_qvel_indices(model, robot)
