"""End-to-end training throughput: the project's PPO vs rsl-rl-lib 5.5's PPO on the same tracking env, interleaved.

Both runners get the same env settings (squat_level1_filter, official ASAP retarget; default TrackingEnvConfig
with ``--threads`` MuJoCo threads; torch on 1 thread) and the same PPOConfig (rsl_rl's through
:func:`trainers.rsl_rl_adapter.rsl_rl_train_cfg`). Their iterations alternate (ours, rsl_rl, ours, ...) so that
load from other processes on the machine hits both alike; one iteration = rollout + update + curriculum,
timed around ``learn(1)``. Prints the median env steps/s of each and the ratio rsl_rl / ours.

    python bench/bench_rsl_rl.py [--num-envs 64] [--iterations 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CLIP = REPO / "tests/fixtures/asap_reference/0-motions_raw_tairantestbed_smpl_video_squat_level1_filter_amass.pkl"

from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.ppo.config import PPOConfig
from trainers.ppo.runner import OnPolicyRunner as OurRunner
from trainers.reference import load_references
from trainers.rsl_rl_adapter import RslRlTrackingEnv, rsl_rl_train_cfg
from trainers.sim_model import build_training_model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=20, help="iterations of each runner")
    ap.add_argument("--threads", type=int, default=1, help="MuJoCo threads")
    args = ap.parse_args()
    from rsl_rl.runners import OnPolicyRunner as RslRunner

    cfg = TrackingEnvConfig()
    cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, num_threads=args.threads))
    ppo = PPOConfig()
    torch.set_num_threads(ppo.torch_threads)
    model = build_training_model(cfg.sim)
    refs = load_references(CLIP, model, load_robot_spec(cfg.sim.robot))
    torch.manual_seed(0)
    ours = OurRunner(TrackingEnv(refs, args.num_envs, cfg, seed=0, model=model), ppo)
    torch.manual_seed(0)
    vec = RslRlTrackingEnv(TrackingEnv(refs, args.num_envs, cfg, seed=0, model=model), ppo.num_steps_per_env)
    with contextlib.redirect_stdout(io.StringIO()):
        rsl = RslRunner(vec, rsl_rl_train_cfg(ppo), log_dir=None, device="cpu")
    steps = ppo.num_steps_per_env * args.num_envs
    rates: dict[str, list[float]] = {"ours": [], "rsl_rl": []}
    for _ in range(args.iterations):
        for name, learn in (("ours", lambda: ours.learn(1)), ("rsl_rl", lambda: rsl.learn(1))):
            start = time.perf_counter()
            learn()
            rates[name].append(steps / (time.perf_counter() - start))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"{args.num_envs} envs, {args.iterations} interleaved iterations each, {steps} env steps per iteration")
    for name, rate in med.items():
        print(f"  {name:7s} median {rate:8.1f} env steps/s  (min {min(rates[name]):.1f}, max {max(rates[name]):.1f})")
    print(f"  ratio rsl_rl / ours: {med['rsl_rl'] / med['ours']:.3f}")


if __name__ == "__main__":
    main()
