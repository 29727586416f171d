"""Track a robot motion with the sampling MPC in the trainers' MuJoCo G1 and record what it performed.

The loop plans every `replan_steps` control steps from the simulated state (the plan's rollouts may
simulate a cheaper :func:`planning_model`: coarser step, primitive floor contacts), executes the plan's
first steps in the trainers' model in a separate MjData (the "real" run of the simulator, what the
verdict judges), and measures after every control step the mean distance of all bodies to the
reference (ASAP's success measure). With `skip_replan_error_m` set, a plan whose prediction of its
first steps held keeps executing for another interval instead of replanning. When the distance to the
reference exceeds the fall distance, or the simulation blows up (NaN, MuJoCo's instability reset), the
tracked segment ends with a reason and the tracker restarts from the reference there, so one bad
stretch costs its own frames, never the clip or the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import mujoco
import numpy as np

from retarget.controller.config import ControllerConfig, TrackerConfig
from retarget.controller.mpc import SamplingPlanner
from retarget.controller.reference import ControlReference, control_reference
from robots.mujoco_model import dof_qpos_indices, dof_qvel_indices
from robots.pd_model import build_pd_spec
from robots.registry import load_robot_spec


@cache
def tracker_model(robot_name: str, physics_dt_s: float) -> mujoco.MjModel:
    """The trainers' PD-actuated G1 plus one world-position sensor per matched point (cached; read-only)."""
    return _compile(robot_name, physics_dt_s, primitive_contacts=False)


@cache
def planning_model(robot_name: str, physics_dt_s: float, primitive_contacts: bool) -> mujoco.MjModel:
    """The model the planner's rollouts simulate: the tracker model, optionally with only the primitive
    collision geoms touching the floor: the feet stand on their four sole spheres, and the link meshes'
    floor tests cost ≈ 12 % of the tracker's time (docs/controller.md, "Speed"). Same state layout as
    :func:`tracker_model`, so the executed run's state starts its rollouts."""
    return _compile(robot_name, physics_dt_s, primitive_contacts)


def _compile(robot_name: str, physics_dt_s: float, primitive_contacts: bool) -> mujoco.MjModel:
    robot = load_robot_spec(robot_name)
    spec = build_pd_spec(robot_name, physics_dt_s)
    if primitive_contacts:
        for geom in spec.geoms:
            if geom.type == mujoco.mjtGeom.mjGEOM_MESH:
                geom.contype = 0
    for point in robot.matched_points:
        spec.add_sensor(
            name=f"pos_{point.name}",
            type=mujoco.mjtSensor.mjSENS_FRAMEPOS,
            objtype=mujoco.mjtObj.mjOBJ_SITE,
            objname=f"match_{point.name}",
        )
    return spec.compile()


def site_ids(model: mujoco.MjModel, robot_name: str) -> np.ndarray:
    return np.array([model.site(f"match_{p.name}").id for p in load_robot_spec(robot_name).matched_points])


@dataclass(frozen=True)
class Fall:
    """Where a tracked segment ended."""

    step: int
    """Control step at which the limit was crossed."""
    reason: str


@dataclass(frozen=True)
class TrackingRun:
    """What the simulated G1 did, per control step k (time k·dt_s)."""

    dt_s: float
    """Control period [s]."""
    reference: ControlReference
    qpos: np.ndarray
    """(K, nq) the configuration the simulated robot reached."""
    qvel: np.ndarray
    """(K, nv) its velocity."""
    targets: np.ndarray
    """(K, D) the PD targets sent during step k → k+1 (the last row repeats)."""
    mean_body_distance_m: np.ndarray
    """(K,) mean distance of all bodies to the reference, world frame [m] (ASAP's measure)."""
    root_relative_error_m: np.ndarray
    """(K,) mean body distance after putting both roots at the origin [m] (Empjpe's measure)."""
    anchored_distance_m: np.ndarray
    """(K,) mean body distance after moving the simulated root horizontally onto the reference's [m]: heights,
    orientation and shape count, horizontal drift of the whole body does not (the quality bound's measure)."""
    segment_starts: tuple[int, ...]
    """Control steps where the tracker (re)started from the reference (0 first)."""
    falls: tuple[Fall, ...] = field(default=())
    plans: int = 0
    """Plans made."""
    plan_steps: tuple[int, ...] = ()
    """Control step of each plan."""
    rollouts: int = 0
    """Sample rollouts over the horizon, all plans together (what the tracker's time is proportional to)."""
    skipped_replans: int = 0
    """Replans skipped because the executing plan's prediction held (`TrackerConfig.skip_replan_error_m`)."""
    prediction_error_m: np.ndarray | None = None
    """(K,) mean distance of the bodies to where the executing plan predicted them [m]; NaN where no prediction
    was made (replans not skipped, the restart frames)."""

    @property
    def num_steps(self) -> int:
        return int(self.qpos.shape[0])


def _distances(model: mujoco.MjModel, data: mujoco.MjData, ref_bodies: np.ndarray) -> tuple[float, float, float]:
    """(world, root-relative, root-anchored) mean body distances [m]; body 0 is the root."""
    mujoco.mj_kinematics(model, data)
    body = data.xpos[1:]
    dist = float(np.linalg.norm(body - ref_bodies, axis=1).mean())
    rel = float(np.linalg.norm((body - body[0]) - (ref_bodies - ref_bodies[0]), axis=1).mean())
    shift = np.array([body[0, 0] - ref_bodies[0, 0], body[0, 1] - ref_bodies[0, 1], 0.0])
    anchored = float(np.linalg.norm(body - shift - ref_bodies, axis=1).mean())
    return dist, rel, anchored


def _start(model: mujoco.MjModel, data: mujoco.MjData, ref: ControlReference, k: int, cfg: TrackerConfig) -> None:
    mujoco.mj_resetData(model, data)
    data.qpos[:] = ref.qpos[k]
    data.qpos[2] += cfg.init_height_offset_m
    data.qvel[:] = ref.qvel[k]
    mujoco.mj_forward(model, data)


def track_motion(
    qpos: np.ndarray,
    fps: float,
    robot_name: str = "g1_23dof",
    config: ControllerConfig | None = None,
    joint_torque_nm: np.ndarray | None = None,
) -> TrackingRun:
    """Track (T, nq) MuJoCo configurations sampled at `fps` [Hz] from their first frame. `joint_torque_nm`
    (T, D), the torques the motion needs, are fed forward when given (and `config.tracker.feedforward`)."""
    config = config or ControllerConfig()
    cfg = config.tracker
    robot = load_robot_spec(robot_name)
    model = tracker_model(robot_name, cfg.physics_dt_s)
    dt = cfg.physics_dt_s * cfg.decimation
    dof_q, dof_v = dof_qpos_indices(model, robot), dof_qvel_indices(model, robot)
    ref = control_reference(
        model,
        qpos,
        fps,
        dt,
        site_ids(model, robot_name),
        dof_v,
        robot.kp,
        robot.kd,
        joint_torque_nm if cfg.feedforward else None,
        cfg.velocity_feedforward,
    )
    plan_model = (
        model
        if cfg.plan_step_factor == 1 and not cfg.plan_primitive_contacts
        else planning_model(robot_name, cfg.physics_dt_s * cfg.plan_step_factor, cfg.plan_primitive_contacts)
    )
    tail_model = (
        planning_model(robot_name, cfg.physics_dt_s * cfg.plan_tail_step_factor, cfg.plan_primitive_contacts)
        if cfg.plan_tail_step_factor > cfg.plan_step_factor
        else None
    )
    planner = SamplingPlanner(plan_model, ref, dof_q, dof_v, robot.kp, cfg, tail_model)
    num = ref.num_steps
    out_q, out_v = np.zeros((num, model.nq)), np.zeros((num, model.nv))
    targets = np.zeros((num, robot.num_dof))
    dist, rel, anchored = np.zeros(num), np.zeros(num), np.zeros(num)
    prediction_error = np.full(num, np.nan)
    data = mujoco.MjData(model)
    state = np.empty(mujoco.mj_stateSize(model, planner.state_spec))
    starts, falls, plan_steps, skipped = [0], [], [], 0
    skipping = cfg.skip_replan_error_m > 0 and cfg.max_skipped_replans > 0
    # Control steps a plan may execute with its replans skipped, which its prediction covers (0: none made).
    predict_steps = min((cfg.max_skipped_replans + 1) * cfg.replan_steps, planner.horizon) if skipping else 0
    delay = round(config.reset_delay_s / dt)
    _start(model, data, ref, 0, cfg)
    out_q[0], out_v[0] = data.qpos, data.qvel
    dist[0], rel[0], anchored[0] = _distances(model, data, ref.body_pos_w[0])
    k = 0
    try:
        while k < num - 1:
            mujoco.mj_getState(model, data, state, planner.state_spec)
            plan = planner.plan(state, k)
            plan_steps.append(k)
            predicted = planner.predict_bodies(state, plan[:predict_steps]) if predict_steps else None
            fell, executed, intervals = None, 0, 0
            while fell is None and k < num - 1:
                error_m = 0.0
                for _ in range(min(cfg.replan_steps, num - 1 - k)):
                    targets[k] = plan[executed]
                    data.ctrl[:] = plan[executed]
                    unstable_before = data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number
                    mujoco.mj_step(model, data, nstep=cfg.decimation)
                    k += 1
                    out_q[k], out_v[k] = data.qpos, data.qvel
                    dist[k], rel[k], anchored[k] = _distances(model, data, ref.body_pos_w[k])
                    if predicted is not None and executed < len(predicted):
                        error_m = float(np.linalg.norm(data.xpos[1:] - predicted[executed], axis=1).mean())
                        prediction_error[k] = error_m
                    executed += 1
                    if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > unstable_before:
                        fell = Fall(k, "simulation unstable (MuJoCo reset the state after a bad acceleration)")
                    elif not np.isfinite(dist[k]) or not np.all(np.isfinite(data.qpos)):
                        fell = Fall(k, "simulation diverged (non-finite state)")
                    elif dist[k] > config.fail_distance_m:
                        fell = Fall(k, f"mean body distance {dist[k]:.2f} m > {config.fail_distance_m:g} m")
                    if fell is not None:
                        break
                intervals += 1
                # Keep executing this plan while its prediction held at the interval's end (the state is where
                # the plan expected it, so a new plan would start from the same state and warm start).
                held = (
                    predicted is not None
                    and k < num - 1
                    and error_m < cfg.skip_replan_error_m
                    and (cfg.skip_replan_max_cost <= 0 or planner.last_best_cost < cfg.skip_replan_max_cost)
                    and executed + cfg.replan_steps <= len(predicted)
                )
                if not held or intervals > cfg.max_skipped_replans:
                    break
                skipped += 1
            if fell is None:
                planner.shift(executed)
                continue
            falls.append(fell)
            if not np.isfinite(dist[k]):
                dist[k] = rel[k] = anchored[k] = np.inf
            restart = min(k + delay, num - 1)
            # Frames skipped before the restart keep the failing state: they count as not performed.
            out_q[k + 1 : restart + 1], out_v[k + 1 : restart + 1] = out_q[k], out_v[k]
            for arr in (dist, rel, anchored):
                arr[k + 1 : restart + 1] = np.inf
            if restart >= num - 1:
                k = num - 1
                break
            k = restart
            _start(model, data, ref, k, cfg)
            planner.reset()
            starts.append(k)
    finally:
        planner.close()
    targets[-1] = targets[-2] if num > 1 else ref.qpos[0, dof_q]
    return TrackingRun(
        dt_s=dt,
        reference=ref,
        qpos=out_q,
        qvel=out_v,
        targets=targets,
        mean_body_distance_m=dist,
        root_relative_error_m=rel,
        anchored_distance_m=anchored,
        segment_starts=tuple(starts),
        falls=tuple(falls),
        plans=len(plan_steps),
        plan_steps=tuple(plan_steps),
        rollouts=planner.rollouts,
        skipped_replans=skipped,
        prediction_error_m=prediction_error,
    )
