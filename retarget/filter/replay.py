"""Layer 3: can a controller follow it? Replay the motion on the simulated G1 in MuJoCo.

The G1 starts in the motion's first frame with the motion's velocity and is driven by
joint torques only: ASAP's PD gains on the reference joint angles and speeds plus
inverse-dynamics feed-forward torques (contact forces included, recomputed on the
simulated state with a pull of the base toward its reference: see
:mod:`retarget.filter.replay_control` for why), clipped to the URDF effort limits.
The floating base is not actuated, so the robot keeps up only
if the motion is physically consistent. Physics runs at `physics_hz` with the reference
interpolated linearly; robot-robot contacts are off (self-collision is a layer-1 check),
robot-floor contacts on. It fails when the mean distance of all bodies to the reference
exceeds `fail_distance_m` (ASAP's success rule).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache

import mujoco
import numpy as np
import pinocchio as pin

from retarget.filter.config import ReplayConfig
from retarget.filter.dynamics import manifold_derivatives, pin_model
from retarget.filter.replay_control import BalanceFeedForward
from robots.mujoco_model import build_mujoco_model, dof_qpos_indices, dof_qvel_indices
from robots.pinocchio_model import mujoco_qpos_to_pinocchio
from robots.registry import RobotSpec, load_robot_spec


@cache
def _replay_model(robot_name: str, physics_hz: float) -> mujoco.MjModel:
    model = copy.deepcopy(build_mujoco_model(load_robot_spec(robot_name)))
    model.opt.timestep = 1.0 / physics_hz
    floor = model.geom("floor").id
    robot_geoms = np.arange(model.ngeom) != floor
    # Robot geoms touch the floor (contype & floor's conaffinity) but not each other.
    model.geom_conaffinity[robot_geoms] = 0
    return model


@dataclass(frozen=True)
class ReplayOutcome:
    """The replay of one frame range."""

    start: int
    stop: int
    """Frame range replayed (stop exclusive)."""
    failed: bool
    fail_frame: int
    """First frame whose mean body distance exceeded the limit (-1 when it did not fail)."""
    drift_frame: int
    """First frame whose mean body distance exceeded the drift level (-1 when never)."""
    mean_body_distance_m: np.ndarray
    """(stop - start,) distance per frame (NaN after a failure: the replay stops there)."""
    torque_saturation: float
    """Fraction of steps × joints whose commanded torque hit the effort limit."""
    steps: int

    @property
    def max_distance_m(self) -> float:
        d = self.mean_body_distance_m
        return float(np.nanmax(d)) if np.isfinite(d).any() else 0.0

    def to_dict(self, fps: float) -> dict:
        return {
            "range": [self.start, self.stop],
            "failed": self.failed,
            "fail_frame": self.fail_frame,
            "fail_time_s": round(self.fail_frame / fps, 3) if self.failed else None,
            "drift_frame": self.drift_frame,
            "max_mean_body_distance_m": round(self.max_distance_m, 4),
            "torque_saturation": round(self.torque_saturation, 4),
        }


def replay_range(
    qpos: np.ndarray,
    body_pos_w: np.ndarray,
    ref_contact: np.ndarray,
    fps: float,
    robot: RobotSpec,
    start: int,
    stop: int,
    cfg: ReplayConfig = ReplayConfig(),
    friction_coefficient: float = 0.8,
) -> ReplayOutcome:
    """Replay frames [start, stop) of (T, nq) `qpos`; `body_pos_w` (T, B, 3) are the reference bodies,
    `ref_contact` (T, 2) the feet the reference has on the floor (layer 2's contacts)."""
    model = _replay_model(robot.name, cfg.physics_hz)
    data = mujoco.MjData(model)
    qadr, vadr = dof_qpos_indices(model, robot), dof_qvel_indices(model, robot)
    ref = qpos[start:stop]
    num = len(ref)
    pmodel = pin_model(robot.name)[0]
    q_pin = mujoco_qpos_to_pinocchio(ref)
    v_pin, a_pin = manifold_derivatives(pmodel, q_pin, fps)
    dof_ref, dof_vel = ref[:, qadr], v_pin[:, 6:]
    feedforward = BalanceFeedForward(model, robot, friction_coefficient, cfg.base_kp_1_s2, cfg.base_kd_1_s)
    kp, kd, effort = robot.kp, robot.kd, robot.effort_limit_nm
    data.qpos[:] = ref[0]
    if num > 1:
        mujoco.mj_differentiatePos(model, data.qvel, 1.0 / fps, ref[0], ref[1])
    mujoco.mj_forward(model, data)
    dist = np.full(num, np.nan)
    dist[0] = 0.0
    steps_per_frame = cfg.physics_hz / fps
    step, saturated, fail, drift = 0, 0, -1, -1
    tau_ff = np.zeros(len(qadr))
    bodies = body_pos_w[start:stop]
    for k in range(1, num):
        while step < k * steps_per_frame - 1e-9:
            pos = step / steps_per_frame  # reference frame position of this step
            i = min(int(pos), num - 2)
            w = pos - i
            q_t = (1 - w) * dof_ref[i] + w * dof_ref[i + 1]
            qd_t = (1 - w) * dof_vel[i] + w * dof_vel[i + 1]
            tau = kp * (q_t - data.qpos[qadr]) + kd * (qd_t - data.qvel[vadr])
            if cfg.feedforward:
                if step % cfg.feedforward_decimation == 0:
                    q_ref = pin.interpolate(pmodel, q_pin[i], q_pin[i + 1], w)
                    v_ref = (1 - w) * v_pin[i] + w * v_pin[i + 1]
                    a_ref = (1 - w) * a_pin[i] + w * a_pin[i + 1]
                    tau_ff = feedforward(data, q_ref, v_ref, a_ref, ref_contact[start + round(pos)])
                tau = tau + tau_ff
            clipped = np.clip(tau, -effort, effort)
            saturated += int(np.count_nonzero(clipped != tau))
            data.qfrc_applied[vadr] = clipped
            mujoco.mj_step(model, data)
            step += 1
        dist[k] = float(np.linalg.norm(data.xpos[1:] - bodies[k], axis=1).mean())
        if not np.isfinite(dist[k]) or dist[k] > cfg.fail_distance_m:
            fail = k
            dist[k] = np.inf if not np.isfinite(dist[k]) else dist[k]
            break
        if drift < 0 and dist[k] > cfg.drift_distance_m:
            drift = k
    return ReplayOutcome(
        start=start,
        stop=stop,
        failed=fail >= 0,
        fail_frame=start + fail if fail >= 0 else -1,
        drift_frame=start + drift if drift >= 0 else -1,
        mean_body_distance_m=dist,
        torque_saturation=saturated / max(step * len(qadr), 1),
        steps=step,
    )
