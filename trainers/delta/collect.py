"""Stage 2, collection: roll a tracking policy out in a "real" G1 and record what Δa is fitted to.

The rollout is the tracking trainer's own environment (:class:`trainers.env.TrackingEnv`, its
observations, action mapping and 0.5 m failure rule) given the "real" model instead of the nominal
one, made deterministic as for evaluation (no randomization, no pushes, no joint noise). Any
callable from actor observations to actions works as the policy: a trained run
(:func:`trainers.policy_io.load_policy`), or the zero action (PD on the reference pose with the
default ``reference_pose`` action offset) when there is no policy yet.

The rollouts come back at the precision their collection file stores
(:func:`~trainers.delta.collection.as_stored`): a fit on them in memory and a fit on the written file are one fit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig, to_jsonable
from trainers.delta.collection import Trajectory, as_stored, write_collection
from trainers.env import TrackingEnv
from trainers.evaluate import eval_env_config
from trainers.metrics import SUCCESS_DISTANCE_M
from trainers.real.model import build_real_model
from trainers.real.profiles import DEFAULT_REAL_PROFILE, get_profile
from trainers.reference import MotionReference, load_references

Policy = Callable[[torch.Tensor], torch.Tensor]


def zero_policy(num_actions: int) -> Policy:
    """The zero action: the PD holds the reference pose (or the default pose with ASAP's offset)."""
    return lambda obs: torch.zeros(obs.shape[0], num_actions)


def collect_rollouts(
    policy: Policy | None,
    references: list[MotionReference],
    profile: str,
    env_cfg: TrackingEnvConfig | None = None,
    episodes: int = 1,
    seed: int = 0,
) -> dict[str, Trajectory]:
    """``episodes`` rollouts per clip (the first from phase 0, the others from random phases) in ``profile``, at
    the collection file's precision."""
    prof = get_profile(profile)
    cfg = eval_env_config(TrackingEnvConfig() if env_cfg is None else env_cfg)
    model = build_real_model(prof, cfg.sim)
    clip_ids = np.repeat(np.arange(len(references)), episodes)
    env = TrackingEnv(references, len(clip_ids), cfg, seed=seed, model=model)
    policy = zero_policy(env.num_actions) if policy is None else policy
    rng = np.random.default_rng(seed)
    start = np.where(np.arange(len(clip_ids)) % episodes == 0, 0.0, rng.uniform(0.0, 0.9, len(clip_ids)))
    n = env.num_envs
    env.reset_envs(np.arange(n), start_phase=start, clip_ids=clip_ids)
    env.termination_distance_m = SUCCESS_DISTANCE_M
    frames: list[dict[str, np.ndarray]] = []
    active = np.ones(n, dtype=bool)
    alive: list[np.ndarray] = []
    obs, _ = env.get_observations()
    while active.any():
        s = env.state
        with torch.no_grad():
            action = np.clip(policy(obs).numpy().astype(np.float64), -cfg.sim.action_clip, cfg.sim.action_clip)
        frames.append(
            {
                "root_pos_w": s.point_pos_w[:, 0].copy(),
                "root_quat_w": s.body_quat_w[:, 0].copy(),
                "root_lin_vel_w": s.point_lin_vel_w[:, 0].copy(),
                "root_ang_vel_w": s.body_ang_vel_w[:, 0].copy(),
                "dof_pos": s.dof_pos.copy(),
                "dof_vel": s.dof_vel.copy(),
                "action": action,
                "pd_target": env.pd_targets(action),
                "phase": env.phase().copy(),
            }
        )
        alive.append(active.copy())
        obs, _, dones, _ = env.step(torch.as_tensor(action, dtype=torch.float32))
        active &= ~dones.numpy()
    alive_mask = np.stack(alive)  # (T, N) environment n still running at frame t
    out: dict[str, Trajectory] = {}
    sim_json = json.dumps(to_jsonable(cfg.sim))
    robot = load_robot_spec(cfg.sim.robot)
    for i in range(n):
        rows = np.flatnonzero(alive_mask[:, i])
        pick = {k: np.stack([frames[t][k][i] for t in rows]) for k in frames[0]}
        ref = references[clip_ids[i]]
        recorded = Trajectory(
            motion_id=ref.name,
            fps=1.0 / env.policy_dt_s,
            action_scale=cfg.sim.action_scale,
            source=f"real:{prof.name}",
            sim_config_json=sim_json,
            **pick,
        )
        out[f"{ref.name}__{i % episodes}"] = as_stored(recorded, robot)
    return out


def collect_to_file(
    output: str | Path,
    run: str | Path | None = None,
    motion: str | Path | None = None,
    log_path: str | Path | None = None,
    clip: str | None = None,
    profile: str = DEFAULT_REAL_PROFILE,
    episodes: int = 1,
    seed: int = 0,
) -> str:
    """The ``collect`` command: roll out (or convert a robot log) and write the collection file; a summary line."""
    from retarget.errors import ConfigError

    robot = load_robot_spec()
    if log_path is not None:
        from trainers.delta.robot_log import read_robot_log

        traj = read_robot_log(log_path, robot)
        write_collection(output, {f"{traj.motion_id}__0": traj}, robot)
        return f"wrote {output}: 1 trajectory ({traj.num_frames} frames) converted from {log_path}"
    if motion is None:
        raise ConfigError("collect needs --motion LIB.pkl (to roll out) or --from-log LOG.npz (to convert)")
    env_cfg, policy = TrackingEnvConfig(), None
    if run is not None:
        from trainers.policy_io import load_policy

        loaded = load_policy(run)
        env_cfg, policy = loaded.env_cfg, loaded.policy.act_inference
    refs = load_references(motion, build_real_model("nominal", env_cfg.sim), robot, clip)
    trajs = collect_rollouts(policy, refs, profile, env_cfg, episodes, seed)
    write_collection(output, trajs, robot)
    frames = sum(t.num_frames for t in trajs.values())
    return f"wrote {output}: {len(trajs)} trajectories, {frames} frames at 50 Hz, profile {profile}"
