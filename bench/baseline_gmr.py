"""A GMR-style baseline: per-frame, two-stage differential IK with mink, on OUR scaled targets.

What GMR does (YanjieZe/GMR, MIT; facts from its README and its `motion_retarget.py` /
`ik_configs/smplx_to_g1.json`, not its code):

* human bodies are scaled by a per-body factor table (G1: 0.9 for legs and trunk, 0.8 for arms,
  times actual height / 1.8 m) and matched to robot bodies with position/orientation offsets;
* each frame runs two mink IK stages warm-started from the previous frame: stage 1 ("table 1")
  pulls the pelvis and feet by position (weight 100) and many bodies by orientation (weight 10);
  stage 2 ("table 2") adds the positions of all matched bodies (weight 10; pelvis and feet 100,
  feet orientation 50);
* mink `FrameTask`s with `lm_damping=1`, solver DAQP, damping 0.5, step dt = the MuJoCo
  timestep; `ConfigurationLimit` and, by default, `VelocityLimit` (3π rad/s for every motor);
* per stage one solve, then up to 10 more while the task error still drops by more than 1e-3;
* one ground offset per clip;
* README speed: 60–70 frames/s on an AMD Threadripper 7960X, 35–45 on an i9-13900K.

This module keeps that structure but feeds it the SAME scaled targets as our pipeline
(:mod:`retarget.scaling` + the matched points/frames of :mod:`robots.g1`), so a benchmark compares
solvers, not scalings. Differences, on purpose: URDF velocity limits instead of a flat 3π rad/s;
a light posture task (the issue asks for one; GMR has none); hands are matched by position only
(our matched frames carry no hand orientation); the ground offset puts the clip's lowest sole
point on the floor, as our pipeline's does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import mink
import mujoco
import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.pipeline import SMPL_FROM_ROBOT  # the same robot-from-SMPL frame map as ours
from retarget.readers.amass import read_amass_npz
from retarget.resample import resample_sequence
from retarget.scaling import compute_limb_scales, scale_joints
from retarget.skeleton import neutral_skeleton, smpl_forward_kinematics
from robots.mujoco_model import build_mujoco_model, dof_qpos_indices
from robots.registry import RobotSpec, load_robot_spec

_KEY_POINTS = ("pelvis", "left_ankle", "right_ankle", "left_hand", "right_hand")
_HEAVY_POINTS = ("pelvis", "left_ankle", "right_ankle")


@dataclass(frozen=True)
class GmrBaselineConfig:
    """Weights and stopping rule of the GMR-style baseline (GMR's G1 values where it has them)."""

    robot: str = "g1_23dof"
    """Bundled robot name."""
    fps_out: float = 30.0
    """Output frame rate [Hz]."""
    key_position_cost: float = 100.0
    """Stage 1 and 2: pelvis and feet position weight [1/m] (GMR: 100)."""
    hand_position_cost: float = 100.0
    """Stage 1: hand position weight [1/m]."""
    stage1_orientation_cost: float = 10.0
    """Stage 1: pelvis, torso and feet orientation weight [1/rad] (GMR: 10)."""
    point_position_cost: float = 10.0
    """Stage 2: every other matched point's position weight [1/m] (GMR: 10)."""
    body_orientation_cost: float = 5.0
    """Stage 2: pelvis and torso orientation weight [1/rad] (GMR: 5)."""
    foot_orientation_cost: float = 50.0
    """Stage 2: feet orientation weight [1/rad] (GMR: 50)."""
    posture_cost: float = 0.01
    """Posture task toward q = 0 [1/rad] (a light regulariser; GMR has none)."""
    lm_damping: float = 1.0
    """Levenberg-Marquardt damping of each frame task (GMR: 1)."""
    damping: float = 0.5
    """Damping passed to mink.solve_ik (GMR: 0.5)."""
    max_extra_iters: int = 10
    """Per stage: solves after the first while the error keeps dropping (GMR: 10)."""
    min_error_decrease: float = 1e-3
    """Per stage: stop when the task error drops by less than this (GMR: 1e-3)."""
    solver: str = "daqp"
    """QP solver (GMR: daqp)."""


@dataclass(frozen=True)
class GmrResult:
    motion: RobotMotion
    qpos: np.ndarray
    """(T, nq) MuJoCo configurations after grounding."""
    iterations: np.ndarray
    """(T,) IK solves per frame (both stages)."""
    seconds: float
    """Wall time for the clip, reading included [s]."""


class GmrBaseline:
    """Two-stage per-frame IK; build once per robot, reuse across clips."""

    def __init__(self, config: GmrBaselineConfig = GmrBaselineConfig()):
        self.config = cfg = config
        self.robot: RobotSpec = load_robot_spec(cfg.robot)
        self.model = build_mujoco_model(self.robot)
        self.configuration = mink.Configuration(self.model)
        self.dt = float(self.model.opt.timestep)
        names = [p.name for p in self.robot.matched_points]

        def point(name: str, cost: float) -> mink.FrameTask:
            return mink.FrameTask(
                f"match_{name}", "site", position_cost=cost, orientation_cost=0.0, lm_damping=cfg.lm_damping
            )

        def frame(body: str, cost: float) -> mink.FrameTask:
            return mink.FrameTask(body, "body", position_cost=0.0, orientation_cost=cost, lm_damping=cfg.lm_damping)

        foot = set(self.robot.foot_links)
        self.stage1_points = {
            n: point(n, cfg.key_position_cost if n in _HEAVY_POINTS else cfg.hand_position_cost) for n in _KEY_POINTS
        }
        self.stage2_points = {
            n: point(n, cfg.key_position_cost if n in _HEAVY_POINTS else cfg.point_position_cost) for n in names
        }
        self.stage1_frames = [frame(f.body, cfg.stage1_orientation_cost) for f in self.robot.matched_frames]
        self.stage2_frames = [
            frame(f.body, cfg.foot_orientation_cost if f.body in foot else cfg.body_orientation_cost)
            for f in self.robot.matched_frames
        ]
        self.posture = mink.PostureTask(self.model, cost=cfg.posture_cost)
        self.posture.set_target(self.model.qpos0)
        self.stage1 = [*self.stage1_points.values(), *self.stage1_frames, self.posture]
        self.stage2 = [*self.stage2_points.values(), *self.stage2_frames, self.posture]
        velocity = dict(zip(self.robot.joint_names, self.robot.velocity_limit_rad_s))
        self.limits = [mink.ConfigurationLimit(self.model), mink.VelocityLimit(self.model, velocity)]
        self._point_index = {n: i for i, n in enumerate(names)}

    def targets(self, path: str | Path) -> tuple[str, float, np.ndarray, np.ndarray]:
        """Our pipeline's scaled targets for a clip: name, fps, (T, P, 3) points, (T, F, 3, 3) frames."""
        seq = resample_sequence(read_amass_npz(path), self.config.fps_out)
        skeleton = neutral_skeleton()
        joints_w, rot_w = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w, skeleton)
        scaled = scale_joints(joints_w, skeleton.parents, compute_limb_scales(skeleton, self.model, self.robot))
        points = scaled[:, [p.smpl_joint for p in self.robot.matched_points]]
        frames = rot_w[:, [f.smpl_joint for f in self.robot.matched_frames]] @ SMPL_FROM_ROBOT
        return seq.name, seq.fps, points, frames

    def _set_targets(self, points_w: np.ndarray, frames_rot_w: np.ndarray) -> None:
        identity = mink.SO3.identity()
        for tasks in (self.stage1_points, self.stage2_points):
            for name, task in tasks.items():
                task.set_target(mink.SE3.from_rotation_and_translation(identity, points_w[self._point_index[name]]))
        for tasks in (self.stage1_frames, self.stage2_frames):
            for task, rot in zip(tasks, frames_rot_w):
                task.set_target(mink.SE3.from_rotation_and_translation(mink.SO3.from_matrix(rot), np.zeros(3)))

    def _error(self, tasks) -> float:
        return float(np.linalg.norm(np.concatenate([t.compute_error(self.configuration) for t in tasks])))

    def _stage(self, tasks) -> int:
        cfg = self.config
        solves, error = 0, self._error(tasks)
        while True:
            # Keywords: solve_ik's sixth positional parameter is `safety_break`, not `limits` (passing the limits
            # there drops the velocity limit and rebuilds a ConfigurationLimit on every call, 30 % of the time).
            vel = mink.solve_ik(self.configuration, tasks, self.dt, cfg.solver, damping=cfg.damping, limits=self.limits)
            self.configuration.integrate_inplace(vel, self.dt)
            solves += 1
            new_error = self._error(tasks)
            if error - new_error <= cfg.min_error_decrease or solves > cfg.max_extra_iters:
                return solves
            error = new_error

    def retarget_file(self, path: str | Path) -> GmrResult:
        start = time.perf_counter()
        name, fps, points, frames = self.targets(path)
        q0 = self.model.qpos0.copy()
        q0[:3] = points[0, 0]
        mujoco.mju_mat2Quat(q0[3:7], np.ascontiguousarray(frames[0, 0]).reshape(-1))
        self.configuration.update(q0)
        qpos = np.empty((len(points), self.model.nq))
        iterations = np.empty(len(points), dtype=int)
        for t in range(len(points)):
            self._set_targets(points[t], frames[t])
            iterations[t] = self._stage(self.stage1) + self._stage(self.stage2)
            qpos[t] = self.configuration.q
        qpos[:, 2] -= self._lowest_sole_z(qpos)  # one ground offset per clip
        quat = qpos[:, 3:7] / np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
        motion = RobotMotion(
            name=name,
            fps=fps,
            root_pos_w=qpos[:, :3].copy(),
            root_quat_w=quat,
            dof_pos=qpos[:, dof_qpos_indices(self.model, self.robot)].copy(),
            human_joints_w=np.zeros((len(points), 24, 3)),
        )
        return GmrResult(motion, qpos, iterations, time.perf_counter() - start)

    def _lowest_sole_z(self, qpos: np.ndarray) -> float:
        data = mujoco.MjData(self.model)
        feet = [(self.model.body(link).id, self.robot.sole_points_b(link)) for link in self.robot.foot_links]
        lowest = np.inf
        for q in qpos:
            data.qpos[:] = q
            mujoco.mj_kinematics(self.model, data)
            for body, pts in feet:
                lowest = min(lowest, float((data.xpos[body] + pts @ data.xmat[body].reshape(3, 3).T)[:, 2].min()))
        return lowest
