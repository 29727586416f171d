"""One PD-controlled G1 stepped from Python: physics at 200 Hz, PD targets from the policy at 50 Hz.

The same class drives the nominal simulator and any "real" profile (the difference lives in the
model, :mod:`trainers.real.model`). A correction δ(q*, q, q̇) — the delta action, in PD-target
units [rad] — can be added to the targets either once per policy step (what a learned Δa does:
computed from the state the policy saw and held for the ``decimation`` physics steps) or at
every physics step (the exact form of the analytic soft-joint correction).
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from robots.mujoco_model import dof_qpos_indices, dof_qvel_indices
from robots.registry import load_robot_spec
from trainers.config import SimConfig
from trainers.real.model import fill_target_history
from trainers.real.profiles import OTHER_ENGINE
from trainers.real.pybullet_engine import PybulletBatch, model_engine

TargetCorrection = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""δ(q* (D,), q (D,), q̇ (D,)) -> (D,) [rad], added to the PD targets."""


class PdRobot:
    """A G1 (floating base on the floor, or fixed to a gantry) under joint PD control."""

    def __init__(self, model: mujoco.MjModel, sim: SimConfig | None = None):
        self.sim = SimConfig() if sim is None else sim
        self.model = model
        self.data = mujoco.MjData(model)
        self.robot = load_robot_spec(self.sim.robot)
        self.qpos_adr = dof_qpos_indices(model, self.robot)
        self.qvel_adr = dof_qvel_indices(model, self.robot)
        self.fixed_base = model.nq == self.robot.num_dof
        self.decimation = self.sim.decimation
        self.policy_dt_s = self.sim.physics_dt_s * self.sim.decimation
        # A model marked for another engine is stepped there; self.data then mirrors its state.
        self.engine = PybulletBatch(model, 1) if model_engine(model) == OTHER_ENGINE else None

    # --- state -------------------------------------------------------------------------------
    @property
    def dof_pos(self) -> np.ndarray:
        return self.data.qpos[self.qpos_adr].copy()

    @property
    def dof_vel(self) -> np.ndarray:
        return self.data.qvel[self.qvel_adr].copy()

    @property
    def root_pos_w(self) -> np.ndarray:
        return np.zeros(3) if self.fixed_base else self.data.qpos[:3].copy()

    @property
    def root_quat_w(self) -> np.ndarray:
        """wxyz."""
        return np.array([1.0, 0.0, 0.0, 0.0]) if self.fixed_base else self.data.qpos[3:7].copy()

    @property
    def root_lin_vel_w(self) -> np.ndarray:
        return np.zeros(3) if self.fixed_base else self.data.qvel[:3].copy()

    @property
    def root_ang_vel_b(self) -> np.ndarray:
        """Angular velocity in the pelvis frame (MuJoCo's free-joint convention) [rad/s]."""
        return np.zeros(3) if self.fixed_base else self.data.qvel[3:6].copy()

    @property
    def body_pos_w(self) -> np.ndarray:
        """(nbody − 1, 3) world positions of every body but the world [m] (pelvis first)."""
        return self.data.xpos[1:].copy()

    def reset(
        self,
        dof_pos: np.ndarray,
        dof_vel: np.ndarray | None = None,
        targets: np.ndarray | None = None,
        root_pos_w: np.ndarray | None = None,
        root_quat_w: np.ndarray | None = None,
        root_lin_vel_w: np.ndarray | None = None,
        root_ang_vel_b: np.ndarray | None = None,
    ) -> None:
        """Put the robot in a state; a delayed actuator's history is filled with ``targets`` (default: dof_pos)."""
        mujoco.mj_resetData(self.model, self.data)
        d = self.data
        d.qpos[self.qpos_adr] = dof_pos
        if dof_vel is not None:
            d.qvel[self.qvel_adr] = dof_vel
        if not self.fixed_base:
            d.qpos[:3] = (0.0, 0.0, 0.8) if root_pos_w is None else root_pos_w
            d.qpos[3:7] = (1.0, 0.0, 0.0, 0.0) if root_quat_w is None else root_quat_w
            d.qvel[:3] = 0.0 if root_lin_vel_w is None else root_lin_vel_w
            d.qvel[3:6] = 0.0 if root_ang_vel_b is None else root_ang_vel_b
        targets = np.asarray(dof_pos if targets is None else targets, dtype=float)
        d.ctrl[:] = targets
        fill_target_history(self.model, d, targets)
        mujoco.mj_forward(self.model, d)
        if self.engine is not None:
            for key in ("qpos", "qvel", "ctrl"):
                self.engine.bind(key)[0] = getattr(d, key)
            self.engine.forward()

    def _mj_step(self, nstep: int) -> None:
        if self.engine is None:
            mujoco.mj_step(self.model, self.data, nstep=nstep)
            return
        self.engine.bind("ctrl")[0] = self.data.ctrl
        self.engine.step(nstep)
        self.data.qpos[:], self.data.qvel[:] = self.engine.bind("qpos")[0], self.engine.bind("qvel")[0]
        mujoco.mj_forward(self.model, self.data)

    # --- stepping ----------------------------------------------------------------------------
    def step_physics(self, targets: np.ndarray) -> None:
        """One physics step with PD targets ``targets`` (D,) [rad]."""
        self.data.ctrl[:] = targets
        self._mj_step(1)

    def step_policy(
        self, targets: np.ndarray, correction: TargetCorrection | None = None, every_physics_step: bool = False
    ) -> None:
        """One policy step: ``decimation`` physics steps with the targets held (plus the correction)."""
        targets = np.asarray(targets, dtype=float)
        if correction is None:
            self.data.ctrl[:] = targets
            self._mj_step(self.decimation)
        elif every_physics_step:
            for _ in range(self.decimation):
                self.step_physics(targets + correction(targets, self.dof_pos, self.dof_vel))
        else:
            self.data.ctrl[:] = targets + correction(targets, self.dof_pos, self.dof_vel)
            self._mj_step(self.decimation)
        # mj_step leaves positions-dependent quantities (xpos) one step behind; readers want them current.
        mujoco.mj_kinematics(self.model, self.data)

    def run_targets(
        self, targets: np.ndarray, correction: TargetCorrection | None = None, every_physics_step: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Apply (T, D) targets one per policy step; (T+1, D) joint positions and velocities, start included."""
        qs, qds = [self.dof_pos], [self.dof_vel]
        for target in targets:
            self.step_policy(target, correction, every_physics_step)
            qs.append(self.dof_pos)
            qds.append(self.dof_vel)
        return np.stack(qs), np.stack(qds)
