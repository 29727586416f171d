"""How far each fine-tuned policy of a bench_table4 run moved from the pre-trained one: mean KL(pre-trained ‖
fine-tuned) of the actor's action distribution [nats per action vector] on observations of the pre-trained policy
tracking the clip in the nominal G1 (64 environments × 48 steps, seed 0), the same observations for every policy.

    python bench/table4_drift.py OUT/combined   # OUT: a bench_table4.py output folder (its pre/ is the policy)
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import torch

from robots.registry import load_robot_spec
from trainers.env import TrackingEnv
from trainers.policy_io import find_checkpoint, read_run_config
from trainers.ppo.runner import OnPolicyRunner
from trainers.ppo.trust_region import mean_kl
from trainers.real.model import build_real_model
from trainers.reference import load_references


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("robot_folder", help="a robot subfolder of a bench_table4.py output (holds METHOD_sSEED/)")
    args = ap.parse_args(argv)
    folder = Path(args.robot_folder)
    pre_run = folder.parent / "pre"
    if not (folder.parent / "table4.json").is_file() or not pre_run.is_dir():
        sys.exit(f"{folder}: not a robot folder of a bench_table4.py output (no ../table4.json or ../pre/)")
    motion = json.loads((folder.parent / "table4.json").read_text())["args"]["motion"]
    _, env_cfg, ppo_cfg = read_run_config(pre_run / "config.json")
    nominal = build_real_model("nominal", env_cfg.sim)
    refs = load_references(motion, nominal, load_robot_spec(env_cfg.sim.robot), None)
    env = TrackingEnv(refs, 64, env_cfg, seed=0, model=nominal)
    runner = OnPolicyRunner(env, ppo_cfg)
    runner.load(find_checkpoint(pre_run))
    pre = copy.deepcopy(runner.policy)
    torch.manual_seed(0)
    obs, _ = env.get_observations()
    batch = []
    with torch.no_grad():
        for _ in range(48):
            batch.append(obs)
            obs, *_ = env.step(pre.distribution(obs).sample())
    observations = torch.cat(batch)
    drift = {}
    for run in sorted(p for p in folder.glob("*_s*") if (p / "model_last.pt").is_file()):
        tuned = copy.deepcopy(pre)
        tuned.load_state_dict(torch.load(run / "model_last.pt", weights_only=True)["model"])
        drift[run.name] = mean_kl(pre, tuned, observations)
        print(f"{run.name}: KL(pre-trained ‖ fine-tuned) {drift[run.name]:.3f} nats")
    return drift


if __name__ == "__main__":
    main()
