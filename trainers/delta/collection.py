"""The collection file: rollouts on a "real" robot in ASAP's motion-library layout, plus what Δa needs.

A joblib ``.pkl`` dict, one entry per recorded trajectory (key: ``<motion id>__<episode>``), each
holding ASAP's six motion-library keys — so ASAP's loader and ours read it as a motion library —
and the extra keys of stage 2. Frame t is the state the policy observed; ``action[t]`` is what it
sent from there (it acts until frame t + 1; the last frame's action is recorded, its effect is not).

==================  ==============  ==========================================================
key                 shape / type    meaning
==================  ==============  ==========================================================
root_trans_offset   (T, 3) f32      pelvis position in the world [m]                (ASAP)
pose_aa             (T, 1+D+3, 3)   root axis-angle, joint axis × angle             (ASAP)
dof                 (T, D) f32      joint positions [rad]                           (ASAP)
root_rot            (T, 4) f64      pelvis orientation, quaternion **xyzw**         (ASAP)
smpl_joints         (T, 24, 3) f32  zeros (no human here)                           (ASAP)
fps                 int / float     frame rate = policy rate [Hz] (50)              (ASAP)
action              (T, D) f32      policy action sent at frame t (policy units, clipped)
pd_target           (T, D) f32      PD target it produced, q* = action_scale·a + offset [rad]
dof_vel             (T, D) f32      joint velocities [rad/s]
root_lin_vel        (T, 3) f32      pelvis linear velocity, world frame [m/s]
root_ang_vel        (T, 3) f32      pelvis angular velocity, world frame [rad/s]
phase               (T,) f32        motion phase φ ∈ [0, 1] of the reference at frame t
motion_id           str             the motion-library clip that was tracked
action_scale        float           ``SimConfig.action_scale`` (Δa in actions = Δq* / this)
source              str             ``"real:<profile>"`` or the lab's description of the robot
sim_config          str (optional)  the rollout's ``SimConfig`` as JSON; absent in robot logs
==================  ==============  ==========================================================

Written with :func:`retarget.asap_pkl.atomic_write` and joblib; read back through
:func:`retarget.asap_pkl.read_motion_library` (the restricted unpickler) plus the checks below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import joblib
import numpy as np

from retarget.asap_pkl import (
    RobotMotion,
    array_problems,
    atomic_write,
    motion_to_asap_dict,
    number_problems,
    read_motion_library,
    structural_problems,
)
from retarget.errors import MotionFileError
from retarget.rotations import quat_xyzw_to_wxyz
from robots.registry import RobotSpec, load_robot_spec

EXTRA_ARRAY_KEYS: dict[str, str] = {
    "action": "TD",
    "pd_target": "TD",
    "dof_vel": "TD",
    "root_lin_vel": "T3",
    "root_ang_vel": "T3",
    "phase": "T",
}
EXTRA_SCALAR_KEYS: tuple[str, ...] = ("motion_id", "action_scale", "source")


@dataclass(frozen=True)
class Trajectory:
    """One recorded trajectory in this package's conventions (wxyz, SI, world frame)."""

    motion_id: str
    fps: float
    root_pos_w: np.ndarray
    """(T, 3) [m]."""
    root_quat_w: np.ndarray
    """(T, 4) wxyz."""
    root_lin_vel_w: np.ndarray
    """(T, 3) [m/s]."""
    root_ang_vel_w: np.ndarray
    """(T, 3) [rad/s]."""
    dof_pos: np.ndarray
    """(T, D) [rad]."""
    dof_vel: np.ndarray
    """(T, D) [rad/s]."""
    action: np.ndarray
    """(T, D) policy units."""
    pd_target: np.ndarray
    """(T, D) [rad]."""
    phase: np.ndarray
    """(T,)."""
    action_scale: float = 0.25
    source: str = ""
    sim_config_json: str = ""
    """The ``SimConfig`` the rollout was simulated with, as JSON (empty for a robot log): what a replay of it
    (system identification) must step with."""

    @property
    def num_frames(self) -> int:
        return int(self.dof_pos.shape[0])


def trajectory_to_clip(traj: Trajectory, robot: RobotSpec) -> dict[str, Any]:
    motion = RobotMotion(
        traj.motion_id, traj.fps, traj.root_pos_w, traj.root_quat_w, traj.dof_pos, np.zeros((traj.num_frames, 24, 3))
    )
    clip = motion_to_asap_dict(motion, robot)
    clip.update(
        action=traj.action.astype(np.float32),
        pd_target=traj.pd_target.astype(np.float32),
        dof_vel=traj.dof_vel.astype(np.float32),
        root_lin_vel=traj.root_lin_vel_w.astype(np.float32),
        root_ang_vel=traj.root_ang_vel_w.astype(np.float32),
        phase=traj.phase.astype(np.float32),
        motion_id=str(traj.motion_id),
        action_scale=float(traj.action_scale),
        source=str(traj.source),
    )
    if traj.sim_config_json:
        clip["sim_config"] = traj.sim_config_json
    return clip


def collection_clip_problems(clip: Any) -> list[str]:
    """What makes `clip` not a collection entry: ASAP's motion-library checks, then the stage-2 keys
    (empty list when fine). The one validation of the format, for writing and for reading."""
    problems = structural_problems(clip)
    if problems:
        return problems
    missing = [k for k in (*EXTRA_ARRAY_KEYS, *EXTRA_SCALAR_KEYS) if k not in clip]
    if missing:
        return [f"a motion clip, not a collection entry: missing keys {missing}"]
    num, num_dof = np.asarray(clip["dof"]).shape
    sizes = {"T": (num,), "TD": (num, num_dof), "T3": (num, 3)}
    problems = array_problems(clip, {name: sizes[layout] for name, layout in EXTRA_ARRAY_KEYS.items()})
    problems += number_problems(clip, "action_scale")
    if num < 2:
        problems.append(f"a trajectory needs at least 2 frames, found {num}")
    return problems


def check_trajectory(traj: Trajectory, path: str | Path | None, robot: RobotSpec | None = None) -> None:
    """Refuse, naming `path`, a trajectory whose collection entry :func:`read_collection` would refuse."""
    problems = collection_clip_problems(trajectory_to_clip(traj, load_robot_spec() if robot is None else robot))
    if problems:
        raise MotionFileError(path, f"trajectory {traj.motion_id!r}: " + "; ".join(problems))


def write_collection(path: str | Path, trajectories: dict[str, Trajectory], robot: RobotSpec | None = None) -> Path:
    """Write trajectories (key → trajectory) atomically as one collection file, after the checks its readers make."""
    robot = load_robot_spec() if robot is None else robot
    clips = {key: trajectory_to_clip(t, robot) for key, t in trajectories.items()}
    for key, clip in clips.items():
        problems = collection_clip_problems(clip)
        if problems:
            raise MotionFileError(path, f"refusing to write entry {key!r}: " + "; ".join(problems))
    path = Path(path)
    atomic_write(path, lambda tmp: joblib.dump(clips, tmp))
    return path


def _clip_to_trajectory(path: Path, key: str, clip: dict[str, Any]) -> Trajectory:
    problems = collection_clip_problems(clip)
    if problems:
        raise MotionFileError(path, f"entry {key!r}: " + "; ".join(problems))
    return _trajectory_from_clip(clip)


def as_stored(traj: Trajectory, robot: RobotSpec | None = None) -> Trajectory:
    """``traj`` at the precision of its collection entry (float32 arrays but the root quaternion, read back as
    float64): what :func:`read_collection` returns for a file written from it. A fit is sensitive to that rounding
    (the per-joint Δa of a kick's six rollouts, fitted unrounded and from the file: weights up to 1.7 % of the
    largest apart), so rollouts fitted in memory must be as stored for a refit of the file to give the same model."""
    return _trajectory_from_clip(trajectory_to_clip(traj, load_robot_spec() if robot is None else robot))


def _trajectory_from_clip(clip: dict[str, Any]) -> Trajectory:
    arrays = {name: np.asarray(clip[name], dtype=np.float64) for name in EXTRA_ARRAY_KEYS}
    return Trajectory(
        motion_id=str(clip["motion_id"]),
        fps=float(clip["fps"]),
        root_pos_w=np.asarray(clip["root_trans_offset"], dtype=np.float64),
        root_quat_w=quat_xyzw_to_wxyz(np.asarray(clip["root_rot"], dtype=np.float64)),
        root_lin_vel_w=arrays["root_lin_vel"],
        root_ang_vel_w=arrays["root_ang_vel"],
        dof_pos=np.asarray(clip["dof"], dtype=np.float64),
        dof_vel=arrays["dof_vel"],
        action=arrays["action"],
        pd_target=arrays["pd_target"],
        phase=arrays["phase"],
        action_scale=float(clip["action_scale"]),
        source=str(clip["source"]),
        sim_config_json=str(clip.get("sim_config", "")),
    )


def read_collection(path: str | Path) -> dict[str, Trajectory]:
    """Read a collection file safely (restricted unpickler) and check the stage-2 keys."""
    path = Path(path)
    clips = read_motion_library(path)
    return {key: _clip_to_trajectory(path, key, clip) for key, clip in clips.items()}
