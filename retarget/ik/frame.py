"""Per-frame inverse kinematics for the robot's root pose and joint angles (mink + DAQP).

Each frame solves a sequence of small QPs (mink's differential IK): the matched points
follow their scaled human targets, the pelvis, torso and feet follow the human segment
orientations, and joint limits are hard constraints. Each frame is warm-started from the
previous frame's solution, so a few iterations suffice and consecutive frames stay on the
same IK branch. mink is used rather than a hand-written solver because it handles the
free-flyer Lie group, frame Jacobians and limit constraints with tested code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from robots.registry import RobotSpec

if TYPE_CHECKING:
    import mujoco


@dataclass(frozen=True)
class IkConfig:
    """Weights and stopping rules of the per-frame IK."""

    position_cost: float = 1.0
    """Weight of matched-point position errors [1/m]."""
    orientation_cost: float = 0.2
    """Weight of pelvis/torso/foot orientation errors [1/rad]."""
    damping: float = 1e-4
    """Levenberg-Marquardt damping; also pulls each step toward the previous frame."""
    max_iters_first_frame: int = 300
    """Iteration cap for the first frame, which starts from the robot's rest pose."""
    max_iters_per_frame: int = 40
    """Iteration cap for each later frame (warm-started)."""
    step_tolerance: float = 1e-6
    """Stop iterating when the configuration step's norm [rad, m] falls below this."""
    solver: str = "daqp"
    """QP solver passed to qpsolvers."""


class FrameByFrameIK:
    """Solves IK frame after frame for one robot; reusable across clips."""

    _DT = 1.0  # mink's integration step; with dt = 1 a velocity is a configuration step.

    def __init__(self, model: mujoco.MjModel, robot: RobotSpec, config: IkConfig = IkConfig()):
        # mink (and MuJoCo) load here, not at import: importing the package for the whole-sequence solver
        # or for IkConfig should not pay their import time (0.3 s).
        import mink

        self._mink = mink
        self.model = model
        self.robot = robot
        self.config = config
        self.configuration = mink.Configuration(model)
        self.point_tasks = [
            mink.FrameTask(f"match_{p.name}", "site", position_cost=config.position_cost, orientation_cost=0.0)
            for p in robot.matched_points
        ]
        self.frame_tasks = [
            mink.FrameTask(f.body, "body", position_cost=0.0, orientation_cost=config.orientation_cost)
            for f in robot.matched_frames
        ]
        self.tasks = [*self.point_tasks, *self.frame_tasks]
        self.limits = [mink.ConfigurationLimit(model)]

    def _set_targets(self, points_w: np.ndarray, frames_rot_w: np.ndarray) -> None:
        mink = self._mink
        identity = mink.SO3.identity()
        for task, pos in zip(self.point_tasks, points_w):
            task.set_target(mink.SE3.from_rotation_and_translation(identity, pos))
        for task, rot in zip(self.frame_tasks, frames_rot_w):
            task.set_target(mink.SE3.from_rotation_and_translation(mink.SO3.from_matrix(rot), np.zeros(3)))

    def _iterate(self, max_iters: int) -> int:
        cfg, mink = self.config, self._mink
        for it in range(max_iters):
            vel = mink.solve_ik(
                self.configuration, self.tasks, self._DT, cfg.solver, damping=cfg.damping, limits=self.limits
            )
            self.configuration.integrate_inplace(vel, self._DT)
            if np.linalg.norm(vel) < cfg.step_tolerance:
                return it + 1
        return max_iters

    def initial_qpos(self, pelvis_pos_w: np.ndarray, pelvis_rot_w: np.ndarray) -> np.ndarray:
        import mujoco

        q = self.model.qpos0.copy()
        q[:3] = pelvis_pos_w
        mujoco.mju_mat2Quat(q[3:7], np.ascontiguousarray(pelvis_rot_w).reshape(-1))
        return q

    def solve(
        self, points_w: np.ndarray, frames_rot_w: np.ndarray, qpos_init: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Solve every frame.

        Args:
            points_w: (T, P, 3) [m] targets of the robot's matched points, in spec order.
            frames_rot_w: (T, F, 3, 3) target orientations of the matched frames.
            qpos_init: start configuration for frame 0 (default: rest pose at the pelvis target).

        Returns:
            qpos: (T, nq) MuJoCo configurations (root position, root quaternion wxyz, joints).
            iterations: (T,) IK iterations used per frame.
        """
        num_frames = points_w.shape[0]
        if qpos_init is None:
            qpos_init = self.initial_qpos(points_w[0, 0], frames_rot_w[0, 0])
        self.configuration.update(qpos_init)
        qpos = np.empty((num_frames, self.model.nq))
        iterations = np.empty(num_frames, dtype=int)
        for t in range(num_frames):
            self._set_targets(points_w[t], frames_rot_w[t])
            cap = self.config.max_iters_first_frame if t == 0 else self.config.max_iters_per_frame
            iterations[t] = self._iterate(cap)
            qpos[t] = self.configuration.q
        return qpos, iterations
