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

from robots.mujoco_model import build_mujoco_spec, dof_qpos_indices, dof_qvel_indices
from robots.registry import RobotSpec, load_robot_spec
from trainers.config import DEFAULT_JOINT_POS_RAD, SimConfig

GANTRY_HEIGHT_M = 1.2
"""Height of the pelvis when hung from a gantry (fixed base) [m]; the feet hang clear."""


def build_training_spec(sim: SimConfig | None = None, fixed_base: bool = False) -> mujoco.MjSpec:
    """The G1 with one PD position actuator per joint (actuator order = joint order), as an editable spec
    (the "real" profiles of :mod:`trainers.real` edit it before compiling). ``fixed_base=True`` removes
    the free joint and the floor: the pelvis hangs from a gantry, as on a test bench."""
    sim = SimConfig() if sim is None else sim
    robot = load_robot_spec(sim.robot)
    spec = build_mujoco_spec(robot, with_floor=not fixed_base)
    spec.option.timestep = sim.physics_dt_s
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    if fixed_base:
        spec.delete(spec.joint("floating_base"))
        spec.body(robot.urdf.root_link).pos = [0.0, 0.0, GANTRY_HEIGHT_M]
    if not sim.self_collision:
        # Robot geoms may touch the floor but not each other: (contype & conaffinity) is 0 between them.
        for geom in spec.geoms:
            if geom.name != "floor":
                geom.conaffinity = 0
    for name, kp, kd, effort in zip(robot.joint_names, robot.kp, robot.kd, robot.effort_limit_nm):
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=float(kp), kv=float(kd))
        act.forcelimited = True
        act.forcerange = [-float(effort), float(effort)]
        act.ctrllimited = False
    return spec


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
