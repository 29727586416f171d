"""The tracking environment with a learned state residual: s' = f_sim(s, a) + Δs(s, a) (the DeltaDynamics baseline).

Δs is computed from the state the policy acted in and the PD target it sent, and added to the
simulator's state once per policy step, after the physics: joint positions and velocities, and the
pelvis' linear and angular velocities (the free joint's angular velocity is in the pelvis frame,
so the world-frame Δω is rotated into it). Positions-dependent quantities are then recomputed.
The policy, its observations, rewards and storage are untouched, as with Δa.
"""

from __future__ import annotations

import mujoco
import numpy as np

from retarget.rotations import quat_to_matrix
from trainers.delta.dynamics import DeltaDynamics
from trainers.env import TrackingEnv
from trainers.reference import ReferenceFrame


class DeltaDynamicsEnv(TrackingEnv):
    """:class:`TrackingEnv` whose every policy step ends with the frozen Δs added to the state."""

    def __init__(self, *args, dynamics: DeltaDynamics, **kwargs):
        self.dynamics = dynamics
        self._pending_delta: np.ndarray | None = None
        super().__init__(*args, **kwargs)

    def pd_targets(self, action: np.ndarray, ref_next: ReferenceFrame | None = None) -> np.ndarray:
        target = super().pd_targets(action, ref_next)
        if hasattr(self, "_qpos"):
            # The control still holds the previous step's target (after a reset: the start pose).
            self._pending_delta = self.dynamics(
                target,
                self._qpos[:, self.qpos_adr].copy(),
                self._qvel[:, self.qvel_adr].copy(),
                self._qpos[:, 3:7].copy(),
                self._qvel[:, 3:6].copy(),
                previous_target=self._ctrl.copy(),
            )
        return target

    def after_physics(self, unstable: np.ndarray) -> None:
        if self._pending_delta is None:
            return
        delta, d = self._pending_delta, self.num_actions
        delta = np.where(unstable[:, None], 0.0, delta)
        qpos, qvel = self._qpos, self._qvel
        qpos[:, self.qpos_adr] += delta[:, :d]
        qvel[:, self.qvel_adr] += delta[:, d : 2 * d]
        qvel[:, :3] += delta[:, 2 * d : 2 * d + 3]
        rot = quat_to_matrix(qpos[:, 3:7] / np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True))
        qvel[:, 3:6] += np.einsum("nji,nj->ni", rot, delta[:, 2 * d + 3 :])
        self._pending_delta = None
        ok = np.flatnonzero(~unstable)
        if ok.size:
            self.batch.forward(ok, stage=mujoco.mjtStage.mjSTAGE_VEL)
