"""The G1 as the trainers simulate it: the retargeting model plus one PD position actuator per joint.

The PD law runs inside MuJoCo as a position actuator per joint, so it is evaluated at every
physics step (200 Hz) exactly as ASAP's explicit PD is, while a controller writes targets only
every few steps:

    τ = clip(Kp·(q* − q) − Kd·q̇, ±effort_limit)

(MuJoCo's ``implicitfast`` integrator treats the −Kd·q̇ term implicitly, which only adds
stability; the torque itself is the formula above.) Both the training environments
(:mod:`trainers.sim_model`) and the retargeting side's tracking controller
(:mod:`retarget.controller`) build their model here, so they simulate the same robot.
"""

from __future__ import annotations

import mujoco

from robots.mujoco_model import build_mujoco_spec
from robots.registry import load_robot_spec

GANTRY_HEIGHT_M = 1.2
"""Height of the pelvis when hung from a gantry (fixed base) [m]; the feet hang clear."""


def build_pd_spec(
    robot_name: str, physics_dt_s: float, self_collision: bool = False, fixed_base: bool = False
) -> mujoco.MjSpec:
    """The robot with one PD position actuator per joint (actuator order = joint order), as an editable
    spec. ``fixed_base=True`` removes the free joint and the floor: the pelvis hangs from a gantry.
    Without ``self_collision`` robot geoms touch the floor but not each other."""
    robot = load_robot_spec(robot_name)
    spec = build_mujoco_spec(robot, with_floor=not fixed_base)
    spec.option.timestep = physics_dt_s
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    if fixed_base:
        spec.delete(spec.joint("floating_base"))
        spec.body(robot.urdf.root_link).pos = [0.0, 0.0, GANTRY_HEIGHT_M]
    if not self_collision:
        # (contype & conaffinity) is 0 between two robot geoms, non-zero with the floor.
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
