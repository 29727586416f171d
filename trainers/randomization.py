"""Basic domain randomization, written into a :class:`mujoco.batch.Batch`'s per-simulation model fields."""

from __future__ import annotations

import mujoco.batch
import numpy as np

from trainers.config import DomainRandConfig


def randomize_batch(
    batch: mujoco.batch.Batch,
    cfg: DomainRandConfig,
    robot_body_ids: np.ndarray,
    base_body_id: int,
    rng: np.random.Generator,
) -> None:
    """Sample friction, link masses, base CoM offset and PD gains once per environment."""
    if not cfg.enabled:
        return
    n = batch.nsim
    friction = batch.expand("geom_friction")
    friction[:, :, 0] *= rng.uniform(*cfg.friction_range, size=(n, 1))
    mass = batch.expand("body_mass")
    mass[:, robot_body_ids] *= rng.uniform(*cfg.link_mass_range, size=(n, len(robot_body_ids)))
    ipos = batch.expand("body_ipos")
    ipos[:, base_body_id] += rng.uniform(-cfg.base_com_offset_m, cfg.base_com_offset_m, size=(n, 3))
    # Mass and CoM feed constants that mj_setConst derives (subtree masses, inverse weights).
    batch.set_const()
    gain = batch.expand("actuator_gainprm")
    bias = batch.expand("actuator_biasprm")
    nu = gain.shape[1]
    kp_scale = rng.uniform(*cfg.pd_gain_range, size=(n, nu))
    kd_scale = rng.uniform(*cfg.pd_gain_range, size=(n, nu))
    gain[:, :, 0] *= kp_scale
    bias[:, :, 1] *= kp_scale
    bias[:, :, 2] *= kd_scale


def push_velocity(cfg: DomainRandConfig, num_envs: int, policy_dt_s: float, rng: np.random.Generator) -> np.ndarray:
    """(N, 2) horizontal base velocity kicks [m/s] for this policy step (mostly zeros)."""
    if not cfg.enabled or cfg.push_interval_s <= 0:
        return np.zeros((num_envs, 2))
    pushed = rng.random(num_envs) < policy_dt_s / cfg.push_interval_s
    kick = rng.uniform(-cfg.push_vel_m_s, cfg.push_vel_m_s, size=(num_envs, 2))
    return kick * pushed[:, None]
