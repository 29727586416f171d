"""The G1 tracking environment: N MuJoCo simulations stepped together by :class:`mujoco.batch.Batch`.

rsl_rl-shaped interface (see :mod:`trainers.vecenv`): ``get_observations() -> (obs, extras)``,
``step(actions) -> (obs, rewards, dones, extras)`` with torch tensors on the CPU. Internally
everything is NumPy over the environment axis; the physics runs ``decimation`` substeps per
policy step inside one C call on ``sim.num_threads`` threads, the PD law in the actuators.
"""

from __future__ import annotations

from typing import Any

import mujoco
import mujoco.batch
import numpy as np
import torch

from robots.registry import load_robot_spec
from trainers import observations as obs_terms
from trainers.config import ActionOffset, TrackingEnvConfig
from trainers.randomization import push_velocity, randomize_batch
from trainers.real.batch import make_batch
from trainers.real.model import fill_batch_target_history
from trainers.reference import MotionReference, ReferenceFrame, body_layout, point_site_and_body_ids
from trainers.sim_model import build_training_model, default_joint_pos, joint_addresses
from trainers.state import TrackingState
from trainers.tracking_step import compute_reward, failed


class TrackingEnv:
    """Phase-based motion tracking of one or more reference clips (one clip per environment)."""

    def __init__(
        self,
        references: list[MotionReference],
        num_envs: int,
        cfg: TrackingEnvConfig | None = None,
        seed: int = 0,
        model: mujoco.MjModel | None = None,
    ):
        cfg = TrackingEnvConfig() if cfg is None else cfg
        self.cfg, self.refs, self.num_envs = cfg, list(references), int(num_envs)
        self.device = "cpu"
        self.rng = np.random.default_rng(seed)
        self.robot = load_robot_spec(cfg.sim.robot)
        self.model = model if model is not None else build_training_model(cfg.sim)
        self.layout = body_layout(self.robot)
        self.body_ids, self.site_ids = point_site_and_body_ids(self.model, self.layout)
        self.qpos_adr, self.qvel_adr = joint_addresses(self.model, self.robot)
        self.q_default = default_joint_pos(self.robot)
        self.num_actions = self.robot.num_dof
        self.policy_dt_s = cfg.sim.physics_dt_s * cfg.sim.decimation
        self.max_episode_length = int(np.ceil(max(r.duration_s for r in self.refs) / self.policy_dt_s))
        self.batch = make_batch(self.model, self.num_envs, cfg.sim.num_threads, cfg.sim.engine, cfg.sim.warp_device)
        randomize_batch(self.batch, cfg.domain_rand, self.body_ids, self.body_ids[0], self.rng)
        b = self.batch
        self._qpos, self._qvel, self._ctrl = b.bind("qpos"), b.bind("qvel"), b.bind("ctrl")
        self._xpos, self._xquat, self._site_xpos = b.bind("xpos"), b.bind("xquat"), b.bind("site_xpos")
        self._cvel, self._subtree_com, self._force = b.bind("cvel"), b.bind("subtree_com"), b.bind("actuator_force")
        # Delayed actuators (a "real" profile) keep a history of targets; resets fill it (see reset_envs).
        self._history = b.bind("history") if self.model.nhistory else None
        self._history_scratch = mujoco.MjData(self.model) if self.model.nhistory else None
        n, d = self.num_envs, self.num_actions
        self.frame_size = obs_terms.frame_size(d)
        self.num_obs = self.frame_size * cfg.obs.history_len
        self.num_privileged_obs = self.num_obs + 3 + 6 * len(self.layout.point_names)
        self.clip_id = np.zeros(n, dtype=int)
        self.clip_duration_s = np.array([r.duration_s for r in self.refs])
        self.time_s = np.zeros(n)
        self.start_time_s = np.zeros(n)
        self.episode_length_buf = torch.zeros(n, dtype=torch.long)
        self.action = np.zeros((n, d))
        self.last_action = np.zeros((n, d))
        self.history = np.zeros((n, cfg.obs.history_len, self.frame_size))
        self.penalty_scale = cfg.curriculum.penalty_scale_init
        self.termination_distance_m = cfg.curriculum.termination_distance_init_m
        self.episode_sums: dict[str, np.ndarray] = {}
        self.finished_ratios: list[float] = []
        self.state: TrackingState  # set by reset() below, and by every step
        self.reset()

    # --- reference ---------------------------------------------------------------------------
    def phase(self, time_s: np.ndarray | None = None) -> np.ndarray:
        t = self.time_s if time_s is None else time_s
        return np.clip(t / self.clip_duration_s[self.clip_id], 0.0, 1.0)

    def reference(self, time_s: np.ndarray | None = None) -> ReferenceFrame:
        """The reference of every environment's clip at its (or the given) time."""
        phase = self.phase(time_s)
        if len(self.refs) == 1:
            return self.refs[0].sample(phase)
        parts = [self.refs[c].sample(phase[self.clip_id == c]) for c in range(len(self.refs))]
        order = np.concatenate([np.flatnonzero(self.clip_id == c) for c in range(len(self.refs))])
        inverse = np.argsort(order)
        fields = ReferenceFrame.__dataclass_fields__
        return ReferenceFrame(**{f: np.concatenate([getattr(p, f) for p in parts])[inverse] for f in fields})

    # --- state -------------------------------------------------------------------------------
    def _velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, P, 3) point linear and (N, B, 3) body angular velocities from cvel (world-aligned, about the CoM)."""
        cvel = self._cvel[:, self.body_ids]
        ang, lin = cvel[..., :3], cvel[..., 3:]
        com = self._subtree_com[:, self.body_ids[0]][:, None]  # every robot body is in the pelvis' tree
        body_lin = lin + np.cross(ang, self._xpos[:, self.body_ids] - com)
        site_body = [list(self.body_ids).index(self.model.site_bodyid[s]) for s in self.site_ids]
        site_lin = lin[:, site_body] + np.cross(ang[:, site_body], self._site_xpos[:, self.site_ids] - com)
        return np.concatenate([body_lin, site_lin], axis=1), ang

    def _make_state(self, ref: ReferenceFrame, terminated: np.ndarray) -> TrackingState:
        point_vel, body_ang = self._velocities()
        return TrackingState(
            layout=self.layout,
            point_pos_w=np.concatenate([self._xpos[:, self.body_ids], self._site_xpos[:, self.site_ids]], axis=1),
            ref_point_pos_w=ref.point_pos_w,
            point_lin_vel_w=point_vel,
            ref_point_lin_vel_w=ref.point_lin_vel_w,
            body_quat_w=self._xquat[:, self.body_ids].copy(),
            ref_body_quat_w=ref.body_quat_w,
            body_ang_vel_w=body_ang,
            ref_body_ang_vel_w=ref.body_ang_vel_w,
            dof_pos=self._qpos[:, self.qpos_adr].copy(),
            ref_dof_pos=ref.dof_pos,
            dof_vel=self._qvel[:, self.qvel_adr].copy(),
            ref_dof_vel=ref.dof_vel,
            action=self.action.copy(),
            last_action=self.last_action.copy(),
            actuator_force=self._force.copy(),
            dof_lower_rad=self.robot.lower_rad,
            dof_upper_rad=self.robot.upper_rad,
            dof_vel_limit_rad_s=self.robot.velocity_limit_rad_s,
            effort_limit_nm=self.robot.effort_limit_nm,
            terminated=terminated,
            foot_contact_height_m=self.cfg.foot_contact_height_m,
        )

    def _frame(self) -> np.ndarray:
        quat = self._qpos[:, 3:7]
        return obs_terms.actor_frame(
            self._qvel[:, 3:6],
            quat,
            self._qpos[:, self.qpos_adr] - self.q_default,
            self._qvel[:, self.qvel_adr],
            self.action,
            self.phase(),
            self.cfg.obs.ang_vel_scale,
            self.cfg.obs.dof_vel_scale,
        )

    def _observations(self) -> tuple[torch.Tensor, dict]:
        clip = self.cfg.obs.clip
        actor = np.clip(self.history.reshape(self.num_envs, -1), -clip, clip)
        s = self.state
        extra = obs_terms.critic_extras(
            self._qpos[:, :3],
            self._qpos[:, 3:7],
            self._qvel[:, :3],
            s.point_pos_w,
            s.ref_point_pos_w,
            self.cfg.obs.lin_vel_scale,
        )
        critic = np.clip(np.concatenate([actor, extra], axis=1), -clip, clip)
        obs = torch.as_tensor(actor, dtype=torch.float32)
        return obs, {"observations": {"critic": torch.as_tensor(critic, dtype=torch.float32)}}

    def get_observations(self) -> tuple[torch.Tensor, dict]:
        return self._observations()

    # --- reset / step ------------------------------------------------------------------------
    def reset_envs(
        self, ids: np.ndarray, start_phase: np.ndarray | None = None, clip_ids: np.ndarray | None = None
    ) -> None:
        """Reference state initialization: put environments ``ids`` on a (random) clip at a (random) phase."""
        ids = np.asarray(ids, dtype=int)
        if ids.size == 0:
            return
        self.clip_id[ids] = self.rng.integers(len(self.refs), size=ids.size) if clip_ids is None else clip_ids
        duration = self.clip_duration_s[self.clip_id[ids]]
        if start_phase is None:
            start_phase = (
                self.rng.uniform(0.0, self.cfg.random_start_max_phase, ids.size)
                if self.cfg.random_start
                else np.zeros(ids.size)
            )
        self.time_s[ids] = self.start_time_s[ids] = np.asarray(start_phase) * duration
        ref = self.reference()
        self.batch.reset(ids, stage=mujoco.mjtStage.mjSTAGE_NONE)
        qpos = self._qpos[ids]
        qpos[:, :3] = ref.root_pos_w[ids] + np.array([0.0, 0.0, self.cfg.sim.init_height_offset_m])
        qpos[:, 3:7] = ref.root_quat_w[ids]
        noise = self.rng.uniform(-1.0, 1.0, (ids.size, self.num_actions)) * self.cfg.init_dof_noise_rad
        qpos[:, self.qpos_adr] = ref.dof_pos[ids] + noise
        qvel = np.zeros((ids.size, self.model.nv))
        qvel[:, :3] = ref.root_lin_vel_w[ids]
        qvel[:, 3:6] = obs_terms.rotate_to_base(ref.root_quat_w[ids], ref.root_ang_vel_w[ids])
        qvel[:, self.qvel_adr] = ref.dof_vel[ids]
        self._qpos[ids], self._qvel[ids] = qpos, qvel
        self._ctrl[ids] = ref.dof_pos[ids]
        if self._history is not None:
            # A delayed robot starts holding its start pose: without this, the zeros a reset leaves in the
            # target history pull every joint toward q = 0 for the first ``delay`` physics steps.
            fill_batch_target_history(self.model, self._history, ids, qpos[:, self.qpos_adr], self._history_scratch)
        self.batch.forward(ids)
        self.action[ids] = self.last_action[ids] = 0.0
        self.episode_length_buf[torch.as_tensor(ids)] = 0
        self.state = self._make_state(ref, np.zeros(self.num_envs, dtype=bool))
        frame = self._frame()[ids]
        self.history[ids] = frame[:, None]

    def reset(self) -> tuple[torch.Tensor, dict]:
        self.reset_envs(np.arange(self.num_envs))
        return self._observations()

    def pd_targets(self, action: np.ndarray, ref_next: ReferenceFrame | None = None) -> np.ndarray:
        """q* = scale·clip(a) + offset, the offset being q_default or the reference at the step's end."""
        a = np.clip(action, -self.cfg.sim.action_clip, self.cfg.sim.action_clip)
        if self.cfg.sim.action_offset is ActionOffset.REFERENCE_POSE:
            if ref_next is None:
                ref_next = self.reference(self.time_s + self.policy_dt_s)
            offset = ref_next.dof_pos
        else:
            offset = self.q_default
        return self.cfg.sim.action_scale * a + offset

    def after_physics(self, unstable: np.ndarray) -> None:
        """Called once per policy step after the physics, before anything reads the new state.

        Nothing here; a simulator that edits the state it produced (delta dynamics) overrides it.
        """

    def step(self, actions: torch.Tensor | np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict]:
        act = np.asarray(actions.detach().numpy() if isinstance(actions, torch.Tensor) else actions, dtype=np.float64)
        self.last_action, self.action = self.action, np.clip(act, -self.cfg.sim.action_clip, self.cfg.sim.action_clip)
        ref = self.reference(self.time_s + self.policy_dt_s)  # where the step ends: targets and rewards
        self._ctrl[:] = self.pd_targets(self.action, ref)
        self._qvel[:, :2] += push_velocity(self.cfg.domain_rand, self.num_envs, self.policy_dt_s, self.rng)
        unstable = np.zeros(self.num_envs, dtype=bool)
        try:
            self.batch.step(nstep=self.cfg.sim.decimation, stage=mujoco.mjtStage.mjSTAGE_VEL)
        except mujoco.batch.SimulationError as exc:
            unstable[exc.ids] = True
        self.after_physics(unstable)
        self.time_s += self.policy_dt_s
        self.episode_length_buf += 1
        self.state = self._make_state(ref, unstable)
        terminated = failed(self.state, self.termination_distance_m) | unstable
        self.state.terminated = terminated
        time_out = (self.phase() >= 1.0 - 1e-9) & ~terminated
        rew, terms = compute_reward(self.state, self.cfg.reward, self.penalty_scale, self.policy_dt_s)
        for key, value in terms.items():
            self.episode_sums.setdefault(key, np.zeros(self.num_envs))[:] += value
        self.history = np.roll(self.history, 1, axis=1)
        self.history[:, 0] = self._frame()
        done = terminated | time_out
        # The points of this step, kept before done environments are reset (evaluation reads them).
        self.step_points_w = (self.state.point_pos_w, self.state.ref_point_pos_w)
        extras: dict[str, Any] = {"time_outs": torch.as_tensor(time_out), "episode": {}}
        ids = np.flatnonzero(done)
        if ids.size:
            episode = {f"rew_{k}": float(v[ids].mean()) for k, v in self.episode_sums.items()}
            episode["termination_distance_m"] = self.termination_distance_m
            episode["penalty_scale"] = self.penalty_scale
            extras["episode"] = episode
            possible = self.clip_duration_s[self.clip_id[ids]] - self.start_time_s[ids]
            ratio = (self.time_s[ids] - self.start_time_s[ids]) / np.maximum(possible, self.policy_dt_s)
            self.finished_ratios.extend(np.clip(ratio, 0.0, 1.0).tolist())
            for v in self.episode_sums.values():
                v[ids] = 0.0
            self.reset_envs(ids)
        obs, obs_extras = self._observations()
        extras.update(obs_extras)
        return obs, torch.as_tensor(rew, dtype=torch.float32), torch.as_tensor(done), extras

    # --- curricula ---------------------------------------------------------------------------
    def update_curricula(self) -> None:
        """Once per iteration: long episodes tighten termination and raise penalties; short ones relax them."""
        if not self.finished_ratios:
            return
        c = self.cfg.curriculum
        mean_ratio = float(np.mean(self.finished_ratios))
        self.finished_ratios.clear()
        if mean_ratio > c.long_episode_fraction:
            self.penalty_scale = min(self.penalty_scale * c.penalty_rate, c.penalty_scale_max)
            self.termination_distance_m = max(
                self.termination_distance_m * c.termination_rate, c.termination_distance_min_m
            )
        elif mean_ratio < c.short_episode_fraction:
            self.penalty_scale = max(self.penalty_scale / c.penalty_rate, 0.0)
            self.termination_distance_m = min(
                self.termination_distance_m / c.termination_rate, c.termination_distance_init_m
            )
