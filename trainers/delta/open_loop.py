"""Open-loop evaluation of a delta action: replay recorded targets from recorded starts in the nominal G1.

From every ``stride``-th frame of each held-out trajectory that has ≥ 1 s left, the nominal
simulator is put in the recorded state and fed the recorded PD targets (plus δ, if any) for 1 s,
open loop. Errors against the recorded states at 0.25, 0.5 and 1.0 s (policy steps 12, 25, 50 —
0.25 s falls between ticks, so it is read at 0.24 s): joint position RMS over joints [deg], and mean
body position distance over the robot's bodies [mm] (recorded bodies by forward kinematics).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trainers.delta.collection import Trajectory
from trainers.delta.replay import recorded_body_positions, replay
from trainers.real.model import build_real_model
from trainers.real.stepper import PdRobot, TargetCorrection

HORIZON_STEPS: tuple[int, ...] = (12, 25, 50)
"""Policy steps at which errors are read (0.24, 0.5, 1.0 s at 50 Hz)."""

CorrectionFactory = Callable[[PdRobot], TargetCorrection]


@dataclass(frozen=True)
class OpenLoopRow:
    """Errors of one variant at each horizon."""

    name: str
    joint_err_deg: tuple[float, ...]
    body_err_mm: tuple[float, ...]
    starts: int


def open_loop_row(name: str, trajs: list[Trajectory], make: CorrectionFactory | None, stride: int = 10) -> OpenLoopRow:
    robot = PdRobot(build_real_model("nominal"))
    correction = None if make is None else make(robot)
    horizon = max(HORIZON_STEPS)
    joint, body = [], []
    for traj in trajs:
        for start in range(0, traj.num_frames - horizon, stride):
            frames = start + np.array(HORIZON_STEPS)
            real_bodies = recorded_body_positions(robot, traj, frames)
            q, bodies = replay(robot, traj, start, horizon, correction)
            k = np.array(HORIZON_STEPS)
            joint.append(np.degrees(np.sqrt(np.mean((q[k] - traj.dof_pos[frames]) ** 2, axis=1))))
            body.append(1000.0 * np.linalg.norm(bodies[k] - real_bodies, axis=-1).mean(axis=1))
    if not joint:
        return OpenLoopRow(name, (np.nan,) * len(HORIZON_STEPS), (np.nan,) * len(HORIZON_STEPS), 0)
    return OpenLoopRow(name, tuple(np.mean(joint, axis=0)), tuple(np.mean(body, axis=0)), len(joint))


def format_table(rows: list[OpenLoopRow]) -> str:
    head = "".join(f"  joint@{s / 50:.2f}s  body@{s / 50:.2f}s" for s in HORIZON_STEPS)
    lines = [f"{'variant':<28}{head}   starts", ""]
    for r in rows:
        cells = "".join(f"  {j:>8.2f}°  {b:>7.1f}mm" for j, b in zip(r.joint_err_deg, r.body_err_mm))
        lines.append(f"{r.name:<28}{cells}   {r.starts}")
    return "\n".join(lines[:1] + lines[2:])


def analytic_gap(
    learned, kp_ratio: np.ndarray, trajs: list[Trajectory], action_scale: float = 0.25
) -> dict[str, float]:
    """How far the learned Δa is from the analytic soft-joint one on recorded states (its joints, action units)."""
    from trainers.delta.analytic import soft_joint_delta_target

    ids = learned.joint_ids
    got, want = [], []
    for traj in trajs:
        for t in range(traj.num_frames):
            args = (traj.pd_target[t], traj.dof_pos[t], traj.dof_vel[t], traj.root_quat_w[t], traj.root_ang_vel_w[t])
            got.append(learned.delta_target(*args)[ids])
            want.append(soft_joint_delta_target(traj.pd_target[t], traj.dof_pos[t], kp_ratio)[ids])
    got_a, want_a = np.array(got) / action_scale, np.array(want) / action_scale  # in action units
    return {
        "analytic_rms": float(np.sqrt((want_a**2).mean())),
        "gap_rms": float(np.sqrt(((got_a - want_a) ** 2).mean())),
        "corr": float(np.corrcoef(got_a.ravel(), want_a.ravel())[0, 1]),
    }
