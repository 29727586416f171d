"""The nominal PD-controlled G1 as an editable spec, on the floor or hung from a gantry, and "real" copies of it.

:func:`build_pd_spec` returns the training simulator's :class:`mujoco.MjSpec`
(:func:`trainers.sim_model.build_training_spec`) so a profile can edit it before compiling.

Actuator delay uses MuJoCo's own control history (``actuator.delay``), so a "real" model with a
delay runs unchanged in any stepping code — the tracking environment's batch included. The delay
is set to (n − ½)·dt rather than n·dt: with n·dt the history lookup sits exactly on a sample
time and floating-point drift of ``data.time`` makes it flip between n and n + 1 steps (measured:
half of 20 000 steps); half a step short, it reads the sample of exactly n steps ago every time.
"""

from __future__ import annotations

import mujoco
import numpy as np

from robots.registry import load_robot_spec
from trainers.config import SimConfig
from trainers.real.profiles import RealProfile, get_profile
from trainers.sim_model import GANTRY_HEIGHT_M, build_training_spec  # noqa: F401  (re-exported)

TORSO_LINK = "torso_link"


def build_pd_spec(sim: SimConfig | None = None, fixed_base: bool = False) -> mujoco.MjSpec:
    """The nominal G1 with PD position actuators, editable (see :func:`trainers.sim_model.build_training_spec`)."""
    return build_training_spec(sim, fixed_base)


def profile_pd_gains(profile: RealProfile, sim: SimConfig | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Kp, Kd) per joint of the robot spec in ``profile``'s robot: the nominal gains times its multipliers."""
    robot = load_robot_spec((SimConfig() if sim is None else sim).robot)
    kp = [float(k * profile.kp_multiplier(n)) for n, k in zip(robot.joint_names, robot.kp)]
    kd = [float(k * profile.kd_multiplier(n)) for n, k in zip(robot.joint_names, robot.kd)]
    return np.array(kp), np.array(kd)


def apply_profile(spec: mujoco.MjSpec, profile: RealProfile, sim: SimConfig | None = None) -> mujoco.MjSpec:
    """Edit a spec from :func:`build_pd_spec` in place into the "real" robot ``profile`` describes."""
    sim = SimConfig() if sim is None else sim
    robot = load_robot_spec(sim.robot)
    kp_all, kd_all = profile_pd_gains(profile, sim)
    for name, kp_real, kd_real, effort in zip(robot.joint_names, kp_all, kd_all, robot.effort_limit_nm):
        act = spec.actuator(name)
        # Position actuator: force = gain·ctrl + bias1·q + bias2·q̇ with gain = Kp, bias = (0, −Kp, −Kd).
        act.gainprm = [float(kp_real)] + [0.0] * 9
        act.biasprm = [0.0, -float(kp_real), -float(kd_real)] + [0.0] * 7
        act.forcerange = [-float(effort) * profile.effort_limit_scale, float(effort) * profile.effort_limit_scale]
        if profile.delay_physics_steps > 0:
            act.delay = (profile.delay_physics_steps - 0.5) * sim.physics_dt_s
            act.nsample = profile.delay_physics_steps + 1
        joint = spec.joint(name)
        joint.frictionloss = joint.frictionloss + profile.frictionloss_nm
        joint.damping = joint.damping + profile.damping_nms
    if profile.torso_mass_offset_kg:
        torso = spec.body(TORSO_LINK)
        torso.mass = torso.mass + profile.torso_mass_offset_kg
    return spec


def build_real_model(
    profile: RealProfile | str = "nominal", sim: SimConfig | None = None, fixed_base: bool = False
) -> mujoco.MjModel:
    """A freshly compiled "real" G1 (``"nominal"``: the training simulator, fixed base optional)."""
    sim = SimConfig() if sim is None else sim
    profile = get_profile(profile)
    spec = apply_profile(build_pd_spec(sim, fixed_base), profile, sim)
    if profile.engine != "mujoco":
        from trainers.real.pybullet_engine import mark_spec

        mark_spec(spec, profile.engine, sim.robot, profile.delay_physics_steps)
    return spec.compile()


def fill_target_history(model: mujoco.MjModel, data: mujoco.MjData, targets: np.ndarray) -> None:
    """Make delayed actuators behave as if ``targets`` (one per actuator) had been held forever.

    Without this, a reset leaves zeros in the history and a delayed robot would be pulled toward
    q = 0 for its first ``delay`` steps.
    """
    for i in range(model.nu):
        nsample = int(model.actuator_history[i, 0])
        if nsample > 0:
            mujoco.mj_initCtrlHistory(model, data, i, None, np.full((nsample, 1), float(targets[i])))


def fill_batch_target_history(
    model: mujoco.MjModel,
    history: np.ndarray,
    ids: np.ndarray,
    targets: np.ndarray,
    scratch: mujoco.MjData | None = None,
) -> None:
    """:func:`fill_target_history` for simulations ``ids`` of a batch: ``history`` is the batch's bound
    ``history`` array, ``targets`` (len(ids), nu). ``scratch`` is a reusable MjData of ``model``."""
    if model.nhistory == 0:
        return
    scratch = mujoco.MjData(model) if scratch is None else scratch
    for i, target in zip(ids, targets):
        scratch.history[:] = history[i]
        fill_target_history(model, scratch, target)
        history[i] = scratch.history
