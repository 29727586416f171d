"""One clip from SMPL to robot motion: resample, FK, scale, IK, ground, measure."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.config import RetargetConfig
from retarget.contacts import detect_foot_contacts
from retarget.ik.frame import FrameByFrameIK
from retarget.ik.problem import build_sequence_problem, rest_matched_points
from retarget.ik.sequence import WholeSequenceIK
from retarget.readers.source import read_clip
from retarget.resample import resample_sequence
from retarget.rotations import matrix_to_quat
from retarget.scaling import compute_limb_scales, limb_scales_from_rest, scale_joints
from retarget.skeleton import Skeleton, neutral_skeleton, smpl_forward_kinematics
from retarget.smpl_sequence import SmplSequence
from robots.registry import RobotSpec, load_robot_spec

if TYPE_CHECKING:
    import mujoco

# Columns of the robot link frames expressed in SMPL's native rest frame (y-up, facing +z):
# robot x (forward) = SMPL z, robot y (left) = SMPL x, robot z (up) = SMPL y. A robot link
# whose rest orientation is identity follows R_link_w = G_joint_w · SMPL_FROM_ROBOT.
SMPL_FROM_ROBOT = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


@dataclass(frozen=True)
class RetargetResult:
    """A retargeted clip and the figures measured on it."""

    motion: RobotMotion
    qpos: np.ndarray
    """(T, nq) MuJoCo configurations (after grounding)."""
    match_error_m: np.ndarray
    """(T, P) [m] distance of each matched robot point from its scaled human target."""
    ik_iterations: np.ndarray
    """(T,) IK iterations per frame."""
    vertical_shift_m: np.ndarray
    """(T,) [m] vertical correction applied to the human targets (per contact, or one clip-wide offset)."""
    source_fps: float
    seconds: float
    """Wall time for this clip [s]."""

    @property
    def ground_offset_m(self) -> float:
        """Median vertical correction over the clip [m] (one number for summaries)."""
        return float(np.median(self.vertical_shift_m))

    @property
    def mean_match_error_mm(self) -> float:
        return float(self.match_error_m.mean() * 1000.0)


def _skeleton_for(seq: SmplSequence, config: RetargetConfig) -> Skeleton:
    if config.body_model_dir is None:
        return neutral_skeleton()
    from retarget.body_model import skeleton_from_body_model

    return skeleton_from_body_model(config.body_model_dir, seq.model_type, seq.gender, seq.betas)


def _sole_heights(model: mujoco.MjModel, robot: RobotSpec, qpos: np.ndarray) -> np.ndarray:
    """(T,) [m] height of the lowest sole point in each frame."""
    import mujoco

    data = mujoco.MjData(model)
    feet = [(model.body(link).id, robot.sole_points_b(link)) for link in robot.foot_links]
    lowest = np.empty(len(qpos))
    for t, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        z = [(data.xpos[b] + pts @ data.xmat[b].reshape(3, 3).T)[:, 2].min() for b, pts in feet]
        lowest[t] = min(z)
    return lowest


def _match_errors(model: mujoco.MjModel, robot: RobotSpec, qpos: np.ndarray, targets_w: np.ndarray) -> np.ndarray:
    import mujoco

    data = mujoco.MjData(model)
    site_ids = [model.site(f"match_{p.name}").id for p in robot.matched_points]
    err = np.empty(targets_w.shape[:2])
    for t, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        err[t] = np.linalg.norm(data.site_xpos[site_ids] - targets_w[t], axis=1)
    return err


def _solve_per_frame(model, robot, config, point_targets, frame_targets):
    """mink IK frame after frame, then one clip-wide offset puts the lowest sole point on the floor."""
    qpos, iterations = FrameByFrameIK(model, robot, config.ik).solve(point_targets, frame_targets)
    ground = float(_sole_heights(model, robot, qpos).min())
    qpos[:, 2] -= ground
    return qpos, iterations, np.full(len(qpos), -ground), point_targets - np.array([0.0, 0.0, ground])


def _solve_whole_sequence(robot, config, targets_w, frame_targets, stance, fps):
    """Contact-aware whole-sequence IK (see :mod:`retarget.ik.sequence`); the match errors come from the
    solver's own kinematics (the same matched points as the MuJoCo sites), so this path needs no MuJoCo model."""
    problem = build_sequence_problem(robot, targets_w, frame_targets, stance, config.sequence_ik)
    solver = WholeSequenceIK(
        problem.kinematics,
        problem.layout,
        robot.lower_rad,
        robot.upper_rad,
        config.sequence_ik,
    )
    (root_pos, root_rot, dof), iterations = solver.solve(problem.targets, fps, problem.initial_state)
    qpos = np.concatenate([root_pos, matrix_to_quat(root_rot), dof], axis=1)
    points_w, _ = solver.forward(root_pos, root_rot, dof)
    errors = np.linalg.norm(points_w - problem.targets.point_pos_w, axis=-1)
    return qpos, dof, np.full(len(qpos), iterations), problem.vertical_shift_m, errors


def retarget_sequence(seq: SmplSequence, config: RetargetConfig = RetargetConfig()) -> RetargetResult:
    """Retarget one SMPL sequence onto the configured robot."""
    start = time.perf_counter()
    robot = load_robot_spec(config.robot)
    skeleton = _skeleton_for(seq, config)
    src = resample_sequence(seq, config.fps_out)
    joints_w, rot_w = smpl_forward_kinematics(src.pose_rotvec, src.trans_w, skeleton)
    frame_targets = rot_w[:, [f.smpl_joint for f in robot.matched_frames]] @ SMPL_FROM_ROBOT
    if config.solver == "per_frame":
        # MuJoCo loads only for the per-frame solver: the whole-sequence path does not need it.
        from robots.mujoco_model import build_mujoco_model, dof_qpos_indices

        model = build_mujoco_model(robot)
        targets_w = scale_joints(joints_w, skeleton.parents, compute_limb_scales(skeleton, model, robot))
        point_targets = targets_w[:, [p.smpl_joint for p in robot.matched_points]]
        qpos, iterations, shift, point_targets = _solve_per_frame(model, robot, config, point_targets, frame_targets)
        errors = _match_errors(model, robot, qpos, point_targets)
        dof = qpos[:, dof_qpos_indices(model, robot)]
    else:
        targets_w = scale_joints(
            joints_w, skeleton.parents, limb_scales_from_rest(skeleton, rest_matched_points(robot))
        )
        stance = detect_foot_contacts(joints_w, src.fps, config.contacts).stance
        qpos, dof, iterations, shift, errors = _solve_whole_sequence(
            robot, config, targets_w, frame_targets, stance, src.fps
        )
    targets_w = targets_w + np.stack([np.zeros_like(shift), np.zeros_like(shift), shift], axis=1)[:, None, :]
    motion = RobotMotion(
        name=seq.name,
        fps=src.fps,
        root_pos_w=qpos[:, 0:3].copy(),
        root_quat_w=qpos[:, 3:7] / np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True),
        dof_pos=dof.copy(),
        human_joints_w=targets_w,
    )
    return RetargetResult(
        motion=motion,
        qpos=qpos,
        match_error_m=errors,
        ik_iterations=iterations,
        vertical_shift_m=shift,
        source_fps=seq.fps,
        seconds=time.perf_counter() - start,
    )


def retarget_file(path: str | Path, config: RetargetConfig = RetargetConfig()) -> RetargetResult:
    """Read a human clip (any format of :mod:`retarget.readers.source`) and retarget it."""
    return retarget_sequence(read_clip(path, config.source), config)
