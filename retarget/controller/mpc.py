"""One receding-horizon plan: sample PD-target residual knots, roll them out in MuJoCo, weight by cost.

The plan is `num_knots` residual vectors (one per joint) spaced evenly over the horizon and
interpolated linearly at the control rate; the PD target is the reference joint angle plus the
residual, held for `decimation` physics steps as the trainers' policy does. Each plan rolls out the
warm-started nominal (no noise) and `num_samples − 1` noisy copies with :func:`mujoco.rollout`, and
moves the nominal to the MPPI average of the samples (weights exp(−(c − c_min)/λ), λ a fraction of
the cost spread, so the weights do not depend on the cost's scale). With a tail model the rollouts
continue from their states at `plan_fine_horizon_s` in that coarser-stepped model (same state layout).
"""

from __future__ import annotations

import mujoco
import numpy as np
from mujoco import rollout

from retarget.controller.config import TrackerConfig
from retarget.controller.reference import ControlReference


class SamplingPlanner:
    """Plans PD-target residuals around a reference for one MuJoCo model (not thread-safe)."""

    def __init__(
        self,
        model: mujoco.MjModel,
        ref: ControlReference,
        dof_qpos: np.ndarray,
        dof_qvel: np.ndarray,
        kp: np.ndarray,
        cfg: TrackerConfig,
        tail_model: mujoco.MjModel | None = None,
    ) -> None:
        self.model, self.ref, self.cfg = model, ref, cfg
        self.dof_qpos, self.dof_qvel = dof_qpos, dof_qvel
        self.horizon = max(2, round(cfg.horizon_s / (cfg.physics_dt_s * cfg.decimation)))
        """Control steps in the horizon."""
        self.sigma_rad = np.clip(cfg.noise_torque_nm / kp, cfg.noise_min_rad, cfg.noise_max_rad)
        self.limit_rad = cfg.max_residual_factor * self.sigma_rad
        self.knot_steps = np.linspace(0.0, self.horizon - 1, cfg.num_knots)
        self.nominal = np.zeros((cfg.num_knots, len(kp)))
        self.rng = np.random.default_rng(cfg.seed)
        self.state_spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.datas = [mujoco.MjData(model) for _ in range(max(cfg.num_threads, 1))]
        self.pool = rollout.Rollout(nthread=cfg.num_threads if cfg.num_threads != 1 else 0)
        self.plan_decimation = cfg.decimation // cfg.plan_step_factor
        """Physics steps of the planning model per control step."""
        self.tail_model = tail_model
        self.tail_decimation = cfg.decimation // cfg.plan_tail_step_factor if tail_model is not None else 0
        """Physics steps of the tail model per control step."""
        fine = round(cfg.plan_fine_horizon_s / (cfg.physics_dt_s * cfg.decimation))
        self.fine_steps = min(max(fine, 1), self.horizon) if tail_model is not None else self.horizon
        """Control steps of the horizon rolled out in the planning model (the rest in the tail model)."""
        self.tail_datas = [mujoco.MjData(tail_model) for _ in self.datas] if tail_model is not None else []
        self.last_costs = np.zeros(cfg.num_samples)
        self.last_best_cost = np.inf
        self.prediction_data = mujoco.MjData(model)
        """Scratch data of the executed plan's prediction: its own, so the solver warm start it leaves behind
        does not reach the samples' rollouts (the state does not carry it)."""
        self.rollouts = 0
        """Samples rolled out so far (the tracker's cost is proportional to it)."""

    def close(self) -> None:
        self.pool.close()

    def residuals(self, knots: np.ndarray) -> np.ndarray:
        """(..., H, D) residual per control step from (..., K, D) knots."""
        steps = np.arange(self.horizon)
        j = np.clip(np.searchsorted(self.knot_steps, steps, side="right") - 1, 0, len(self.knot_steps) - 2)
        w = (steps - self.knot_steps[j]) / (self.knot_steps[j + 1] - self.knot_steps[j])
        return knots[..., j, :] * (1 - w)[:, None] + knots[..., j + 1, :] * w[:, None]

    def shift(self, steps: int) -> None:
        """Warm start: the nominal plan moved forward by `steps` control steps (held at its last knot)."""
        t = np.minimum(self.knot_steps + steps, self.knot_steps[-1])
        j = np.clip(np.searchsorted(self.knot_steps, t, side="right") - 1, 0, len(self.knot_steps) - 2)
        w = ((t - self.knot_steps[j]) / (self.knot_steps[j + 1] - self.knot_steps[j]))[:, None]
        self.nominal = self.nominal[j] * (1 - w) + self.nominal[j + 1] * w

    def reset(self) -> None:
        self.nominal[:] = 0.0
        self.last_best_cost = np.inf

    def num_samples(self) -> int:
        """Samples of the next plan: `min_samples` while the last plan's best cost stayed under
        `adaptive_cost` (the warm-started nominal is tracking; little to search), else `num_samples`."""
        cfg = self.cfg
        if 0 < cfg.min_samples < cfg.num_samples and self.last_best_cost < cfg.adaptive_cost:
            return cfg.min_samples
        return cfg.num_samples

    def _ref_window(self, k0: int) -> np.ndarray:
        """Reference step indices k0+1 … k0+H (clamped to the last one)."""
        return np.minimum(np.arange(k0 + 1, k0 + 1 + self.horizon), self.ref.num_steps - 1)

    def targets(self, k0: int, residual: np.ndarray) -> np.ndarray:
        """(..., H, D) PD targets for control steps k0 … k0+H−1."""
        idx = np.minimum(np.arange(k0, k0 + self.horizon), self.ref.num_steps - 1)
        return self.ref.qpos[idx][:, self.dof_qpos] + self.ref.target_offset_rad[idx] + residual

    def plan(self, state: np.ndarray, k0: int) -> np.ndarray:
        """Improve the nominal plan from the full physics `state` at control step `k0`; returns the (H, D)
        PD targets of the new nominal."""
        cfg = self.cfg
        num = self.num_samples()
        noise = self.rng.standard_normal((num,) + self.nominal.shape) * self.sigma_rad
        noise[0] = 0.0  # the nominal itself is always a candidate
        knots = np.clip(self.nominal + noise, -self.limit_rad, self.limit_rad)
        residual = self.residuals(knots)
        states, sensors = self.simulate(np.tile(state, (num, 1)), self.targets(k0, residual))
        self.rollouts += num
        costs = self.cost(states, sensors, residual, k0)
        self.last_costs = costs
        self.last_best_cost = float(np.min(costs))
        finite = np.isfinite(costs)
        if not finite.any():
            return self.targets(k0, self.residuals(self.nominal))
        c = np.where(finite, costs, np.inf)
        best = float(c.min())
        spread = float(np.median(c[finite]) - best)
        weights = np.exp(-(c - best) / max(cfg.temperature * spread, 1e-12))
        weights /= weights.sum()
        self.nominal = np.einsum("n,nkd->kd", weights, knots)
        return self.targets(k0, self.residuals(self.nominal))

    def predict_bodies(self, state: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """(S, B, 3) world positions of the bodies (the world body left out) at the end of each control step of
        the (S, D) PD `targets` from the full physics `state`, as the planning model predicts them."""
        dec, m = self.plan_decimation, self.model
        ctrl = np.repeat(targets[None], dec, axis=1)
        data = self.prediction_data
        states, _ = self.pool.rollout(m, [data], state[None], ctrl)
        bodies = np.empty((len(targets), m.nbody - 1, 3))
        for i, s in enumerate(states[0, dec - 1 :: dec]):
            data.qpos[:] = s[1 : 1 + m.nq]
            mujoco.mj_kinematics(m, data)
            bodies[i] = data.xpos[1:]
        return bodies

    def simulate(self, initial: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N, H, nstate) states and (N, H, S·3) sensor values at the end of each control step of the
        (N, H, D) PD targets from (N, nstate) initial states: the first `fine_steps` in the planning model,
        the rest from where those end in the tail model."""
        fine, dec = self.fine_steps, self.plan_decimation
        ctrl = np.repeat(targets[:, :fine], dec, axis=1)
        states, sensors = self.pool.rollout(self.model, self.datas, initial, ctrl)
        states, sensors = states[:, dec - 1 :: dec], sensors[:, dec - 1 :: dec]
        if fine == self.horizon:
            return states, sensors
        tail_dec = self.tail_decimation
        ctrl = np.repeat(targets[:, fine:], tail_dec, axis=1)
        tail_states, tail_sensors = self.pool.rollout(self.tail_model, self.tail_datas, states[:, -1], ctrl)
        return (
            np.concatenate([states, tail_states[:, tail_dec - 1 :: tail_dec]], axis=1),
            np.concatenate([sensors, tail_sensors[:, tail_dec - 1 :: tail_dec]], axis=1),
        )

    def cost(self, states: np.ndarray, sites: np.ndarray, residual: np.ndarray, k0: int) -> np.ndarray:
        """(N,) cost of (N, H, nstate) states and (N, H, S·3) tracked-site positions; NaN states cost inf."""
        cfg, m = self.cfg, self.model
        idx = self._ref_window(k0)
        qpos = states[..., 1 : 1 + m.nq]
        qvel = states[..., 1 + m.nq : 1 + m.nq + m.nv]
        site = sites.reshape(sites.shape[:2] + (-1, 3))
        body = np.mean(np.sum((site - self.ref.site_pos_w[idx]) ** 2, axis=-1), axis=-1) / cfg.body_sigma_m**2
        quat = 1.0 - np.sum(qpos[..., 3:7] * self.ref.qpos[idx, 3:7], axis=-1) ** 2
        joint = np.mean((qpos[..., self.dof_qpos] - self.ref.qpos[idx][:, self.dof_qpos]) ** 2, axis=-1) / 0.2**2
        jvel = np.mean((qvel[..., self.dof_qvel] - self.ref.qvel[idx][:, self.dof_qvel]) ** 2, axis=-1) / 2.0**2
        root_vel = (
            np.sum((qvel[..., 0:3] - self.ref.qvel[idx, 0:3]) ** 2, axis=-1) / 0.5**2
            + np.sum((qvel[..., 3:6] - self.ref.qvel[idx, 3:6]) ** 2, axis=-1) / 2.0**2
        )
        effort = np.mean((residual / self.sigma_rad) ** 2, axis=-1)
        step = (
            cfg.body_weight * body
            + cfg.root_quat_weight * quat / 0.05
            + cfg.joint_weight * joint
            + cfg.joint_vel_weight * jvel
            + cfg.root_vel_weight * root_vel
            + cfg.effort_weight * effort
        )
        step[:, -1] *= cfg.terminal_weight
        total = step.mean(axis=1)
        return np.where(np.isfinite(total), total, np.inf)
