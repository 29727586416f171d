"""Layer 2: can the G1's feet and motors produce this motion? (pinocchio inverse dynamics)

Per frame: velocities and accelerations by central finite differences on the configuration
manifold (``pin.difference``, so the floating base is differentiated on SE(3), not as raw
quaternion numbers); RNEA gives the generalized forces the motion needs; the six floating-
base components (no motor acts there) must come from the feet in contact, solved by
:func:`solve_contact_forces`. Reported per frame: the residual ("hand of god") wrench in
N and N·m, the joint torques once the contact forces are accounted for (against the URDF
effort limits), and, while no foot touches, the centre-of-mass acceleration's departure
from free fall.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pinocchio as pin

from retarget.filter.config import DynamicConfig
from retarget.filter.contact_wrench import solve_contact_forces
from retarget.filter.frames import persistent, seconds_to_frames
from retarget.filter.motion_checks import GRAVITY_M_S2, horizontal_speed
from retarget.filter.verdict import CheckResult
from robots.pinocchio_model import build_pinocchio_model, mujoco_qpos_to_pinocchio
from robots.registry import RobotSpec, load_robot_spec

LAYER = "dynamic"


@cache
def pin_model(robot_name: str) -> tuple[pin.Model, tuple[int, int], float]:
    """pinocchio model with rotor inertia (armature), foot frame ids, total mass [kg]."""
    robot = load_robot_spec(robot_name)
    model = build_pinocchio_model(robot).copy()
    model.armature[6:] = robot.armature_kgm2
    feet = tuple(model.getFrameId(link) for link in robot.foot_links)
    return model, feet, float(pin.computeTotalMass(model))


def manifold_derivatives(model: pin.Model, q: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """(T, nv) velocities and accelerations by central differences in each frame's tangent space."""
    num = len(q)
    dt = 1.0 / fps
    fwd = np.zeros((num, model.nv))
    bwd = np.zeros((num, model.nv))
    for t in range(num - 1):
        fwd[t] = pin.difference(model, q[t], q[t + 1])
        bwd[t + 1] = pin.difference(model, q[t + 1], q[t])
    v = (fwd - bwd) / (2.0 * dt)
    a = (fwd + bwd) / dt**2
    if num >= 2:
        v[0], v[-1] = fwd[0] / dt, -bwd[-1] / dt
    if num >= 3:
        a[0], a[-1] = a[1], a[-2]
    else:
        a[:] = 0.0
    return v, a


@dataclass(frozen=True)
class DynamicsResult:
    checks: tuple[CheckResult, ...]
    joint_torque_nm: np.ndarray
    """(T, D) joint torques the motion needs, contact forces included [N·m]."""
    in_contact: np.ndarray
    """(T, 2) which feet may push on the floor."""
    residual_force_n: np.ndarray
    """(T,) [N] norm of the force no contact can supply."""
    residual_moment_nm: np.ndarray
    """(T,) [N·m] norm of the moment about the centre of mass no contact can supply."""
    com_accel_error_m_s2: np.ndarray
    """(T,) [m/s²] |a_com − g| (0 where a foot is in contact)."""
    mass_kg: float
    velocity: np.ndarray
    """(T, nv) pinocchio velocities (base: local frame) by central differences."""
    acceleration: np.ndarray
    """(T, nv) pinocchio accelerations by central differences."""


def feet_in_contact(sole_w: np.ndarray, fps: float, cfg: DynamicConfig) -> np.ndarray:
    """(T, 2) a foot may push when its lowest sole point is near the floor and its slowest is slow."""
    low = sole_w[..., 2].min(axis=2) < cfg.contact_height_m
    slow = horizontal_speed(sole_w, fps).min(axis=2) < cfg.contact_speed_m_s
    return low & slow


def analyse_dynamics(
    qpos: np.ndarray, sole_w: np.ndarray, fps: float, robot: RobotSpec, cfg: DynamicConfig = DynamicConfig()
) -> DynamicsResult:
    """Layer 2 on (T, nq) MuJoCo configurations with their (T, 2, P, 3) sole points."""
    model, foot_frames, mass = pin_model(robot.name)
    data = model.createData()
    q_all = mujoco_qpos_to_pinocchio(qpos)
    v_all, a_all = manifold_derivatives(model, q_all, fps)
    contact = feet_in_contact(sole_w, fps, cfg)
    num, num_dof = len(qpos), robot.num_dof
    torque = np.zeros((num, num_dof))
    res_f, res_m, com_err = np.zeros(num), np.zeros(num), np.zeros(num)
    for t in range(num):
        q, v, a = q_all[t], v_all[t], a_all[t]
        tau = pin.rnea(model, data, q, v, a).copy()
        force_w, moment_w, com = base_wrench_w(model, data, q, tau)
        feet = [f for f in range(2) if contact[t, f]]
        if not feet:
            # The base wrench is m·(a_com − g): zero in free fall.
            com_err[t] = np.linalg.norm(force_w) / mass
        sol = solve_contact_forces(
            np.concatenate([sole_w[t, f] for f in feet]) if feet else np.zeros((0, 3)),
            com,
            force_w,
            moment_w,
            cfg.friction_coefficient,
        )
        res_f[t], res_m[t] = np.linalg.norm(sol.residual_force_n), np.linalg.norm(sol.residual_moment_nm)
        torque[t] = tau[6:] - contact_generalized_forces(model, data, q, foot_frames, feet, sole_w[t], sol.forces_w)[6:]
    checks = _checks(torque, contact, res_f, res_m, com_err, mass, fps, robot, cfg)
    return DynamicsResult(checks, torque, contact, res_f, res_m, com_err, mass, v_all, a_all)


def base_wrench_w(model: pin.Model, data: pin.Data, q: np.ndarray, tau: np.ndarray) -> tuple:
    """The RNEA base components as a world-frame force [N] and moment about the CoM [N·m], and the CoM."""
    com = pin.centerOfMass(model, data, q, False)
    base = data.oMi[1]
    force_w = base.rotation @ tau[0:3]
    moment_w = base.rotation @ tau[3:6] + np.cross(base.translation - com, force_w)
    return force_w, moment_w, com


def contact_generalized_forces(model, data, q, foot_frames, feet, sole_w, forces_w) -> np.ndarray:
    """(nv,) generalized forces Σ Jᵀ f of point forces `forces_w` at the sole points of `feet`."""
    generalized = np.zeros(model.nv)
    if not feet:
        return generalized
    for f, forces in zip(feet, np.split(forces_w, len(feet))):
        jac = pin.computeFrameJacobian(model, data, q, foot_frames[f], pin.LOCAL_WORLD_ALIGNED)
        origin = data.oMf[foot_frames[f]].translation
        moment = np.cross(sole_w[f] - origin, forces).sum(axis=0)
        generalized += jac[:3].T @ forces.sum(axis=0) + jac[3:].T @ moment
    return generalized


def _checks(torque, contact, res_f, res_m, com_err, mass, fps, robot, cfg) -> tuple[CheckResult, ...]:
    min_frames = seconds_to_frames(cfg.min_violation_s, fps)
    touching = contact.any(axis=1)
    weight = mass * GRAVITY_M_S2

    def first(bad):
        return int(np.flatnonzero(bad)[0]) if bad.any() else -1

    # Airborne frames: the centre of mass must fall freely.
    ballistic_bad = persistent(~touching & (com_err > cfg.ballistic_accel_m_s2), min_frames)
    air_err = np.where(touching, 0.0, com_err)
    ballistic = CheckResult(
        "robot.ballistic_com",
        LAYER,
        ballistic_bad,
        float(air_err.max(initial=0.0)),
        cfg.ballistic_accel_m_s2,
        "m/s²",
        f"with no foot on the floor the centre of mass accelerates {air_err.max(initial=0.0):.1f} m/s² away from "
        f"free fall in {ballistic_bad.sum()} frames, first at {first(ballistic_bad)}"
        if ballistic_bad.any()
        else "",
        {"airborne_frames": int((~touching).sum())},
    )
    # Frames with contact: what the feet cannot supply.
    limit_f = cfg.residual_force_fraction * weight
    over = touching & ((res_f > limit_f) | (res_m > cfg.residual_torque_nm))
    wrench_bad = persistent(over, min_frames)
    in_f, in_m = np.where(touching, res_f, 0.0), np.where(touching, res_m, 0.0)
    t = int(np.argmax(in_f / limit_f + in_m / cfg.residual_torque_nm)) if len(res_f) else 0
    wrench = CheckResult(
        "robot.contact_wrench",
        LAYER,
        wrench_bad,
        float(in_f.max(initial=0.0) / weight),
        cfg.residual_force_fraction,
        "× m·g",
        f"the feet in contact cannot supply {in_f[t]:.0f} N and {in_m[t]:.0f} N·m at frame {t} (weight "
        f"{weight:.0f} N): a hand of god holds the robot in {wrench_bad.sum()} frames, first at {first(wrench_bad)}"
        if wrench_bad.any()
        else "",
        {
            "max_residual_force_n": float(in_f.max(initial=0.0)),
            "max_residual_moment_nm": float(in_m.max(initial=0.0)),
            "median_residual_force_n": float(np.median(res_f[touching])) if touching.any() else 0.0,
            "weight_n": weight,
        },
    )
    ratio = np.abs(torque) / (robot.effort_limit_nm * cfg.effort_factor)
    torque_bad = persistent((ratio > 1.0).any(axis=1), min_frames)
    tt, jj = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.size else (0, 0)
    effort = CheckResult(
        "robot.joint_torque",
        LAYER,
        torque_bad,
        float(ratio.max(initial=0.0)),
        cfg.effort_factor,
        "× limit",
        f"{robot.joint_names[jj]} needs {abs(torque[tt, jj]):.0f} N·m, {ratio[tt, jj]:.2f}× its "
        f"{robot.effort_limit_nm[jj]:g} N·m limit (frame {tt}); {torque_bad.sum()} frames over a limit"
        if torque_bad.any()
        else "",
        {"joint": robot.joint_names[jj]},
    )
    return ballistic, wrench, effort
