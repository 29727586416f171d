"""Env steps per second of the G1 tracking environment's stepping options, side by side.

One policy step = 4 physics steps of 5 ms with per-environment PD targets (decimation 4). All
options start from the same states (a real clip's reference poses, official ASAP retarget) and
hold PD targets near them, so contact load is that of a standing / squatting G1.

    python bench/bench_env.py [--num-envs 128] [--steps 40] [--repeats 5] [--threads 2]

Prints the median of ``--repeats`` timings per option and its ratio to the raw references:
``mj_step`` on one core (÷ decimation) and the raw ``mujoco.batch.Batch`` on ``--threads``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import mujoco
import mujoco.batch
import numpy as np
import torch
from mujoco import rollout as mj_rollout

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CLIP = REPO / "tests/fixtures/asap_reference/0-motions_raw_tairantestbed_smpl_video_squat_level1_filter_amass.pkl"

from robots.registry import load_robot_spec
from trainers.config import DomainRandConfig, TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.ppo.actor_critic import ActorCritic
from trainers.reference import load_references
from trainers.sim_model import build_training_model

DECIMATION = 4


def median_rate(fn, work: int, repeats: int) -> float:
    """Median of work/seconds over repeats (one warm-up call first)."""
    fn()
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        rates.append(work / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=128)
    ap.add_argument("--steps", type=int, default=40, help="policy steps per timing")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    n, steps = args.num_envs, args.steps
    model = build_training_model()
    refs = load_references(CLIP, model, load_robot_spec())
    cfg = TrackingEnvConfig(domain_rand=DomainRandConfig(enabled=False))
    env = TrackingEnv(refs, n, cfg, seed=0, model=model)
    qpos0, qvel0, ctrl0 = env._qpos.copy(), env._qvel.copy(), env._ctrl.copy()
    rng = np.random.default_rng(0)
    targets = ctrl0 + rng.normal(0.0, 0.05, ctrl0.shape)  # per-env targets near the pose
    results: dict[str, float] = {}

    # 1. Raw mj_step on one MjData (one core), expressed per policy step.
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:], data.ctrl[:] = qpos0[0], qvel0[0], targets[0]

    def raw_single():
        for _ in range(steps * DECIMATION):
            mujoco.mj_step(model, data)

    results["raw mj_step, 1 core (÷4)"] = median_rate(raw_single, steps, args.repeats)

    # 2. Plain Python loop over N MjData, per-env ctrl each policy step.
    datas = [mujoco.MjData(model) for _ in range(n)]

    def plain_loop():
        for i, d in enumerate(datas):
            d.qpos[:], d.qvel[:] = qpos0[i], qvel0[i]
        for _ in range(steps):
            for i, d in enumerate(datas):
                d.ctrl[:] = targets[i]
                mujoco.mj_step(model, d, DECIMATION)

    results["plain loop, 1 core"] = median_rate(plain_loop, n * steps, args.repeats)

    # 3. mujoco.rollout: one call per policy step, full state in and out.
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.empty((n, mujoco.mj_stateSize(model, spec)))
    for i, d in enumerate(datas):
        d.qpos[:], d.qvel[:] = qpos0[i], qvel0[i]
        mujoco.mj_getState(model, d, state0[i], spec)
    rdatas = [mujoco.MjData(model) for _ in range(max(args.threads, 1))]
    control = np.repeat(targets[:, None, :], DECIMATION, axis=1)

    def rollout_loop():
        state = state0
        for _ in range(steps):
            out, _ = mj_rollout.rollout(model, rdatas, state, control, persistent_pool=True)
            state = out[:, -1]

    results[f"mujoco.rollout, {args.threads} threads"] = median_rate(rollout_loop, n * steps, args.repeats)
    mj_rollout.shutdown_persistent_pool()

    # 4. mujoco.batch.Batch, raw: write ctrl, step 4 substeps in C.
    batch = mujoco.batch.Batch(model, n, nthread=args.threads, persistent=True)
    bq, bv, bc = batch.bind("qpos"), batch.bind("qvel"), batch.bind("ctrl")

    def batch_raw():
        bq[:], bv[:] = qpos0, qvel0
        for _ in range(steps):
            bc[:] = targets
            batch.step(nstep=DECIMATION, stage=mujoco.mjtStage.mjSTAGE_VEL)

    results[f"mujoco.batch.Batch, {args.threads} threads (raw)"] = median_rate(batch_raw, n * steps, args.repeats)

    # 5. The TrackingEnv on the Batch, with the [512, 256, 128] actor in the loop.
    policy = ActorCritic(env.num_obs, env.num_privileged_obs, env.num_actions).eval()
    env.termination_distance_m = 100.0  # measure stepping, not resets

    def env_with_policy():
        env.reset_envs(np.arange(n), start_phase=np.zeros(n))
        obs, _ = env.get_observations()
        for _ in range(steps):
            with torch.no_grad():
                actions = policy.act_inference(obs) * 0.0  # hold the reference pose (residual 0)
            obs, *_ = env.step(actions)

    results[f"TrackingEnv + policy, {args.threads} threads"] = median_rate(env_with_policy, n * steps, args.repeats)

    single = results["raw mj_step, 1 core (÷4)"]
    raw_batch = results[f"mujoco.batch.Batch, {args.threads} threads (raw)"]
    print(f"G1 23-dof, {n} envs, decimation {DECIMATION}, {steps} policy steps × {args.repeats} repeats (median)")
    print(f"{'option':48s} {'env steps/s':>12s} {'÷ raw 1-core':>13s} {'÷ raw Batch':>12s}")
    for name, rate in results.items():
        print(f"{name:48s} {rate:12.0f} {rate / single:13.2f} {rate / raw_batch:12.2f}")


if __name__ == "__main__":
    main()
