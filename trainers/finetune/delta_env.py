"""The tracking environment with a frozen Δa inside the simulator: s' = f_sim(s, a + π^Δ(s, a)).

Only the PD targets change. The policy's action a is what the environment stores as its
action: it enters the observation history (last action), the action-rate penalty and the
rollout storage, so the policy sees and outputs a alone; Δa is computed from the state the
policy acted in and held for the ``decimation`` physics steps, as the real robot holds a target.
"""

from __future__ import annotations

import numpy as np

from trainers.env import TrackingEnv
from trainers.finetune.delta_actions import DeltaAction
from trainers.reference import ReferenceFrame


class DeltaActionEnv(TrackingEnv):
    """:class:`TrackingEnv` whose simulator receives a + Δa (Δa from a frozen :class:`DeltaAction`)."""

    def __init__(self, *args, delta: DeltaAction, **kwargs):
        self.delta = delta
        self.last_delta_action: np.ndarray | None = None
        self.previous_nominal_target: np.ndarray | None = None
        """(N, D) the policy's target of the previous step, before Δa (after a reset: the start pose)."""
        super().__init__(*args, **kwargs)

    def reset_envs(self, ids, start_phase=None, clip_ids=None) -> None:
        super().reset_envs(ids, start_phase, clip_ids)
        if self.previous_nominal_target is None:
            self.previous_nominal_target = np.zeros((self.num_envs, self.num_actions))
        self.previous_nominal_target[ids] = self._qpos[ids][:, self.qpos_adr]

    def pd_targets(self, action: np.ndarray, ref_next: ReferenceFrame | None = None) -> np.ndarray:
        nominal = super().pd_targets(action, ref_next)
        if not hasattr(self, "_qpos"):  # called before the batch exists (never, today): no state to read
            return nominal
        assert self.previous_nominal_target is not None  # set by every reset, the first in the constructor
        delta = self.delta(
            nominal,
            self._qpos[:, self.qpos_adr].copy(),
            self._qvel[:, self.qvel_adr].copy(),
            self._qpos[:, 3:7].copy(),
            self._qvel[:, 3:6].copy(),
            self.cfg.sim.action_scale,
            previous_target=self.previous_nominal_target.copy(),
        )
        self.previous_nominal_target = nominal
        self.last_delta_action = delta
        return super().pd_targets(action + delta, ref_next)
