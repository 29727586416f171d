"""Stage 3 on a pre-trained policy: ASAP (learned Δa) vs Continued vs Oracle, each evaluated alone in a "real" profile.

    python bench/bench_finetune.py --policy RUN --motion LIB.pkl --real soft_ankles_delay --iterations 40 \
        --num-envs 64 --episodes 8 -o /tmp/ft_bench

Collects ``--episodes`` rollouts of the policy in the profile, fits the learned ankle Δa, fine-tunes
for the same budget in the nominal simulator + Δa (ASAP), the nominal simulator (Continued) and
the profile itself (Oracle), and prints the paper's metrics of every policy run alone in the
profile from phase 0 (deterministic), plus the share of the Vanilla→Oracle Eg-mpjpe gap ASAP closes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robots.registry import load_robot_spec
from trainers.delta.collect import collect_rollouts
from trainers.delta.learned import LearnedDeltaConfig, fit_learned_delta
from trainers.finetune.finetune import finetune_policy
from trainers.finetune.real_eval import evaluate_in_profile
from trainers.policy_io import load_policy, snapshot_run
from trainers.real.model import build_real_model
from trainers.reference import load_references


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", required=True)
    ap.add_argument("--motion", required=True)
    ap.add_argument("--clip", default=None)
    ap.add_argument("--real", default="soft_ankles_delay")
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--variants", default="asap,continued,oracle", help="comma list; also: analytic")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    pre = snapshot_run(args.policy, out / "pre")  # the source run may still be training
    vanilla = load_policy(pre)
    refs = load_references(args.motion, build_real_model("nominal", vanilla.env_cfg.sim), load_robot_spec(), args.clip)
    t = time.perf_counter()
    trajs = collect_rollouts(vanilla.policy.act_inference, refs, args.real, vanilla.env_cfg, args.episodes, seed=1)
    paper_cfg = LearnedDeltaConfig(joints="ankles", model="mlp", previous_target=False)  # the paper's real-robot Δa
    model, stats = fit_learned_delta(list(trajs.values()), paper_cfg)
    model.save(out / "delta.pt")
    print(f"collect + fit Δa: {time.perf_counter() - t:.0f} s, {stats}", flush=True)
    runs = {"Vanilla": pre}
    plans = {
        "asap": ("ASAP", "delta", str(out / "delta.pt")),
        "analytic": ("ASAP-analytic", "delta", f"analytic:{args.real}"),
        "continued": ("Continued", "nominal", None),
        "oracle": ("Oracle", "real", None),
    }
    for key in args.variants.split(","):
        label, sim, delta = plans[key]
        t = time.perf_counter()
        finetune_policy(
            pre,
            args.motion,
            out / key,
            delta=delta,
            sim=sim,
            real_profile=args.real,
            clip=args.clip,
            iterations=args.iterations,
            num_envs=args.num_envs,
            seed=0,
            num_threads=1,
        )
        print(f"{label}: {args.iterations} iterations in {time.perf_counter() - t:.0f} s", flush=True)
        runs[label] = out / key
    print(f"\n{args.real}, policy alone from phase 0 | success | Eg-mpjpe | Empjpe | Evel | Eacc | clip done")
    eg = {}
    for label, folder in runs.items():
        loaded = load_policy(folder)
        m, per_clip = evaluate_in_profile(loaded.policy.act_inference, refs, args.real, loaded.env_cfg)
        eg[label] = m.eg_mpjpe_mm
        print(
            f"| {label} | {m.success_rate:.2f} | {m.eg_mpjpe_mm:.1f} | {m.empjpe_mm:.1f} | {m.evel_mm_per_frame:.2f} | "
            f"{m.eacc_mm_per_frame2:.2f} | {per_clip[0].mean_episode_fraction:.0%} |"
        )
    if "Oracle" in eg and "ASAP" in eg and eg["Vanilla"] != eg["Oracle"]:
        print(
            f"ASAP closes {(eg['Vanilla'] - eg['ASAP']) / (eg['Vanilla'] - eg['Oracle']):.0%} of the Vanilla→Oracle "
            f"Eg-mpjpe gap (ratio ASAP/Vanilla {eg['ASAP'] / eg['Vanilla']:.3f})"
        )


if __name__ == "__main__":
    main()
