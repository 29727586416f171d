"""The environment PPO trains π^Δ in: the NOMINAL G1, reset to recorded "real" states, replaying recorded actions.

Each of the N environments is a :class:`~trainers.real.stepper.PdRobot` on the nominal model. An
episode starts at a random recorded frame t₀ of a random trajectory of the collection (the exact
recorded state: joints, pelvis pose and velocities, delayed-actuator history filled with the
recorded target) and lasts ``horizon_steps`` policy steps or until the trajectory ends (a time-out,
bootstrapped), or until the pelvis is ``termination_pelvis_m`` away from the recorded one (a failure).

At step t the action Δa (policy action units, on the joint subset only) is added to the recorded
action: the nominal PD target is q*_t + s·Δa (s = ``action_scale``, held for the policy step) — the
same thing a frozen π^Δ does in stage 3. The observation is π^Δ's input,
:func:`trainers.delta.learned.features` of (recorded q*_t, simulated state), so a trained actor is
a :class:`~trainers.delta.learned.LearnedDelta` as it stands. The reward after the step compares the
simulated state with the recorded frame t + 1:

    r = (exp(−e_q/σ_q) + exp(−e_q̇/σ_q̇) + exp(−e_body/σ_body)) / 3 − w·Σ_j Δa_j²

e_q, e_q̇: mean over joints of squared joint position [rad²] / velocity [(rad/s)²] errors; e_body:
mean over bodies of squared position distance [m²] (pelvis included; recorded bodies by forward
kinematics). The penalty is ``action_norm_weight``·‖Δa‖² (sum over the subset, action units, the
clipped Δa that was applied) — the paper's 0.1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from retarget.errors import AsapRetargetError
from retarget.rotations import quat_to_matrix
from robots.registry import load_robot_spec
from trainers.delta.collection import Trajectory
from trainers.delta.learned import features, joint_ids
from trainers.delta.replay import recorded_body_positions, reset_to_frame
from trainers.real.model import build_real_model
from trainers.real.stepper import PdRobot


@dataclass(frozen=True)
class DeltaEnvConfig:
    """The π^Δ environment."""

    joints: str = "ankles"
    """Joint subset Δa acts on (``trainers.delta.learned.JOINT_SETS``); ankles: the 4 ankle joints."""
    horizon_steps: int = 50
    """Episode length [policy steps] (50 = 1 s, the paper's best closed-loop horizon)."""
    action_norm_weight: float = 0.1
    """w of the penalty w·Σ Δa² [action units²] (the paper's 0.1)."""
    sigma_joint_pos: float = 1e-3
    """σ_q [rad²] of the joint-position term (1e-3 ≈ 1.8° RMS gives e⁻¹)."""
    sigma_joint_vel: float = 0.5
    """σ_q̇ [(rad/s)²] of the joint-velocity term."""
    sigma_body_pos: float = 1e-3
    """σ_body [m²] of the body-position term (1e-3 ≈ 32 mm mean distance gives e⁻¹)."""
    max_delta_action: float = 2.0
    """Δa is clipped to ±this [action units] before it is applied (and penalized)."""
    termination_pelvis_m: float = 0.3
    """Pelvis distance from the recorded one [m] that ends an episode as a failure."""
    seed: int = 0
    """Seed of the start sampler."""


class DeltaEnvError(AsapRetargetError):
    """A collection the π^Δ environment cannot train on."""


class DeltaReplayEnv:
    """rsl_rl-shaped VecEnv (:mod:`trainers.vecenv`) over N nominal G1s replaying a collection."""

    def __init__(self, trajs: list[Trajectory], num_envs: int, cfg: DeltaEnvConfig | None = None):
        self.cfg = DeltaEnvConfig() if cfg is None else cfg
        self.trajs = [t for t in trajs if t.num_frames >= 2]
        if not self.trajs:
            raise DeltaEnvError("the collection has no trajectory with at least two frames")
        self.robots = [PdRobot(build_real_model("nominal")) for _ in range(num_envs)]
        self.ids = joint_ids(self.cfg.joints, load_robot_spec().joint_names)
        self.action_scale = float(self.trajs[0].action_scale)
        # Recorded body positions (forward kinematics in the nominal model), once per trajectory.
        self.bodies = [recorded_body_positions(self.robots[0], t, np.arange(t.num_frames)) for t in self.trajs]
        self.rng = np.random.default_rng(self.cfg.seed)
        # Starts weighted by the transitions each trajectory has, so every recorded transition is equally likely.
        weights = np.array([t.num_frames - 1 for t in self.trajs], dtype=float)
        self.traj_prob = weights / weights.sum()
        self.num_envs, self.num_actions = num_envs, int(self.ids.size)
        self.max_episode_length = self.cfg.horizon_steps
        self.device = "cpu"
        self.traj_index = np.zeros(num_envs, dtype=int)
        self.frame = np.zeros(num_envs, dtype=int)
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long)
        self._ep_sums = {k: np.zeros(num_envs) for k in ("match", "action_norm")}
        for i in range(num_envs):
            self.reset_env(i)
        self.num_obs = int(self._obs(0).size)
        self.num_privileged_obs = int(self._critic_obs(0).size)

    # --- episodes ---------------------------------------------------------------------------
    def reset_env(self, i: int, traj_index: int | None = None, frame: int | None = None) -> None:
        """Put environment i in a recorded state (random unless both indices are given)."""
        k = int(self.rng.choice(len(self.trajs), p=self.traj_prob)) if traj_index is None else traj_index
        t = int(self.rng.integers(0, self.trajs[k].num_frames - 1)) if frame is None else frame
        self.traj_index[i], self.frame[i] = k, t
        reset_to_frame(self.robots[i], self.trajs[k], t)
        self.episode_length_buf[i] = 0
        for v in self._ep_sums.values():
            v[i] = 0.0

    def _obs(self, i: int) -> np.ndarray:
        r, traj = self.robots[i], self.trajs[self.traj_index[i]]
        rot_w = r.root_quat_w
        return features(
            traj.pd_target[self.frame[i]], r.dof_pos, r.dof_vel, rot_w, quat_to_matrix(rot_w) @ r.root_ang_vel_b
        )

    def _critic_obs(self, i: int) -> np.ndarray:
        """Actor input plus what the critic needs to value the rest: time left and the drift from the record."""
        r, k, t = self.robots[i], self.traj_index[i], self.frame[i]
        traj = self.trajs[k]
        left = min(self.cfg.horizon_steps - int(self.episode_length_buf[i]), traj.num_frames - 1 - t)
        drift = np.concatenate([r.dof_pos - traj.dof_pos[t], r.root_pos_w - traj.root_pos_w[t]])
        return np.concatenate([self._obs(i), [left / self.cfg.horizon_steps], 10.0 * drift])

    def get_observations(self) -> tuple[torch.Tensor, dict]:
        obs, critic = self._all_obs()
        return obs, {"observations": {"critic": critic}}

    def _all_obs(self) -> tuple[torch.Tensor, torch.Tensor]:
        obs = np.stack([self._obs(i) for i in range(self.num_envs)])
        critic = np.stack([self._critic_obs(i) for i in range(self.num_envs)])
        return torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(critic, dtype=torch.float32)

    # --- stepping ---------------------------------------------------------------------------
    def reward_terms(self, i: int) -> dict[str, float]:
        """Matching terms of environment i against the recorded frame it is at now (after a step)."""
        r, k, t = self.robots[i], self.traj_index[i], self.frame[i]
        traj, c = self.trajs[k], self.cfg
        e_q = float(np.mean((r.dof_pos - traj.dof_pos[t]) ** 2))
        e_qd = float(np.mean((r.dof_vel - traj.dof_vel[t]) ** 2))
        e_b = float(np.mean(np.sum((r.body_pos_w - self.bodies[k][t]) ** 2, axis=-1)))
        match = (
            np.exp(-e_q / c.sigma_joint_pos) + np.exp(-e_qd / c.sigma_joint_vel) + np.exp(-e_b / c.sigma_body_pos)
        ) / 3
        pelvis = float(np.linalg.norm(r.root_pos_w - traj.root_pos_w[t]))
        return {"match": float(match), "e_q": e_q, "e_qd": e_qd, "e_body": e_b, "pelvis_m": pelvis}

    def action_penalty(self, delta_action: np.ndarray) -> np.ndarray:
        """w·Σ Δa² per environment, of the clipped Δa (N, J) that is applied."""
        clipped = np.clip(delta_action, -self.cfg.max_delta_action, self.cfg.max_delta_action)
        return self.cfg.action_norm_weight * np.sum(clipped**2, axis=-1)

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict]:
        act = np.clip(
            np.asarray(actions, dtype=float).reshape(self.num_envs, -1),
            -self.cfg.max_delta_action,
            self.cfg.max_delta_action,
        )
        penalty = self.action_penalty(act)
        rewards = np.zeros(self.num_envs)
        dones = np.zeros(self.num_envs, dtype=bool)
        time_outs = np.zeros(self.num_envs, dtype=bool)
        ended: dict[str, list[float]] = {"match": [], "action_norm": [], "length": []}
        for i, robot in enumerate(self.robots):
            traj = self.trajs[self.traj_index[i]]
            target = traj.pd_target[self.frame[i]].copy()
            target[self.ids] += self.action_scale * act[i]
            robot.step_policy(target)
            self.frame[i] += 1
            self.episode_length_buf[i] += 1
            terms = self.reward_terms(i)
            rewards[i] = terms["match"] - penalty[i]
            self._ep_sums["match"][i] += terms["match"]
            self._ep_sums["action_norm"][i] += penalty[i]
            failed = terms["pelvis_m"] > self.cfg.termination_pelvis_m
            out = self.episode_length_buf[i] >= self.cfg.horizon_steps or self.frame[i] >= traj.num_frames - 1
            if failed or out:
                dones[i], time_outs[i] = True, out and not failed
                ended["length"].append(float(self.episode_length_buf[i]))
                for key in ("match", "action_norm"):
                    ended[key].append(self._ep_sums[key][i])
                self.reset_env(i)
        obs, critic = self._all_obs()
        extras = {
            "time_outs": torch.as_tensor(time_outs),
            "observations": {"critic": critic},
            "episode": {k: float(np.mean(v)) for k, v in ended.items() if v},
        }
        return obs, torch.as_tensor(rewards, dtype=torch.float32), torch.as_tensor(dones), extras
