"""A Table IV run's policies evaluated again in each "real" robot on more matched episodes: how much of the spread of
success over fine-tuning seeds is the policies, and how much the few episodes each seed is scored on.

    python bench/table4_reevaluate.py OUT --episodes 32 [--checkpoint deployed|last] [--robots combined]

Run from the folder the bench ran in (the table records the motion's path as it was given). Every row of
``OUT/table4.json`` (Vanilla, each method and round, each seed) is rolled out alone in the robot on ``--episodes``
matched episodes (the bench's draws: randomized physics in a MuJoCo robot, start-pose noise in PyBullet; seed 100, so
every policy meets the same episodes), with the checkpoint the table deployed or the fine-tuning's last. Written as a
table of the bench's format (``OUT/table4_eval<N>[_last].json``), so ``table4_report.py`` and ``table4_compare.py``
read it; printed: per method, the success of each seed on the table's episodes and on these, and the spread over
seeds both ways (the issue's figure: the standard deviation of the seeds' success rates), beside the part of it a
seed's score owes to its episodes alone (:func:`table4_stats.episode_noise`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_table4 import (
    DEFAULT_EVAL_EPISODES,
    evaluate,
    evaluation_episodes,
    gap_closed,
    gap_shares_with_ci,
    robot_folder,
    run_folder,
)
from table4_stats import episode_noise

from retarget.atomic_io import atomic_write
from robots.registry import load_robot_spec
from trainers.policy_io import load_policy
from trainers.real.model import build_real_model
from trainers.reference import load_references

CHECKPOINTS = {"deployed": None, "last": "model_last.pt"}
"""Which checkpoint of a fine-tuning folder is evaluated (None: the folder, i.e. what its loaders deploy)."""


def policy_path(folder: Path, checkpoint: str) -> Path:
    name = CHECKPOINTS[checkpoint]
    return folder if name is None else folder / name


def reevaluate_robot(
    out: Path, table: dict, real: str, refs, env_cfg, episodes: int, checkpoint: str, methods: list[str] | None = None
) -> dict:
    """The robot's rows (``methods``' only, if given; Vanilla always) on ``episodes`` matched episodes: results and
    gap shares as the bench writes them."""
    seeds = [int(s) for s in table["args"]["seeds"].split(",")]
    rows = [name for name in table["robots"][real]["results"] if methods is None or name in methods]
    robot = out / robot_folder(real)
    results: dict[str, list[dict]] = {"Vanilla": [evaluate(out / "pre", refs, real, episodes)]}
    for name in rows:
        if name == "Vanilla":
            continue
        folders = [policy_path(robot / run_folder(name, s), checkpoint) for s in seeds]
        results[name] = [evaluate(f, refs, real, episodes) for f in folders]
        print(f"[{real}] {name}: success per seed {success_counts(results[name])} of {episodes}", flush=True)
    shares = gap_shares_with_ci(results) if "Oracle" in results else {}
    return {
        "evaluation": evaluation_episodes(real, episodes, env_cfg),
        "results": results,
        "gap_closed": gap_closed(shares),
        "gap_share_ci": shares,
    }


def success_counts(rows: list[dict]) -> str:
    return " ".join(str(round(sum(r["episodes"]["success_rate"]))) for r in rows)


def spread_lines(before: dict, after: dict, real: str) -> list[str]:
    """Per method: each seed's success on the table's and on the new episodes, the spread over seeds (standard
    deviation of the seeds' success rates, points) and the episodes' share of it."""
    lines = [f"## {real}", "", "| method | episodes | success per seed | mean | spread over seeds | episode noise |"]
    lines.append("|---|---|---|---|---|---|")
    for name, rows in after.items():
        if name == "Vanilla" or name not in before:
            continue
        for label, rs in (("table", before[name]), ("again", rows)):
            rates = np.array([r["success_rate"] for r in rs])
            n = len(rs[0]["episodes"]["success_rate"])
            lines.append(
                f"| {name} | {n} ({label}) | {success_counts(rs)} | {100 * rates.mean():.0f} % | "
                f"± {100 * rates.std():.0f} | ± {100 * episode_noise(rs):.0f} |"
            )
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="a bench_table4.py output folder")
    ap.add_argument("--episodes", type=int, default=DEFAULT_EVAL_EPISODES, help="matched episodes per policy")
    ap.add_argument("--checkpoint", choices=sorted(CHECKPOINTS), default="deployed")
    ap.add_argument("--robots", default=None, help="comma list (default: every robot of its table4.json)")
    ap.add_argument(
        "--methods", default=None, help="comma list of rows to roll out again (default: all; Vanilla always)"
    )
    ap.add_argument("-o", "--output", default=None, help="default: OUT/table4_eval<N>[_last].json")
    args = ap.parse_args(argv)
    if args.episodes < 2:
        raise SystemExit(f"--episodes {args.episodes}: give at least 2 (one episode has no spread)")
    out = Path(args.out)
    source = out / "table4.json"
    try:
        table = json.loads(source.read_text())
        bench = table["args"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"{source}: cannot read it as a bench table ({type(exc).__name__}: {exc})") from None
    robots = args.robots.split(",") if args.robots else list(table["robots"])
    unknown = [r for r in robots if r not in table["robots"]]
    if unknown:
        raise SystemExit(f"{source}: no robot {', '.join(unknown)} in it (it has {', '.join(table['robots'])})")
    pre = load_policy(out / "pre")
    nominal = build_real_model("nominal", pre.env_cfg.sim)
    refs = load_references(bench["motion"], nominal, load_robot_spec(), bench["clip"])
    suffix = "" if args.checkpoint == "deployed" else f"_{args.checkpoint}"
    target = Path(args.output) if args.output else out / f"table4_eval{args.episodes}{suffix}.json"
    again = {k: v for k, v in table.items() if k != "robots"}
    again |= {"reevaluated_from": str(source), "eval_episodes": args.episodes, "checkpoint": args.checkpoint}
    again["args"] = {**bench, "eval_episodes": args.episodes}
    again["robots"] = {}
    # Table IV of the last checkpoints sits beside the selected one; its rows are compared with it.
    before_path = out / ("table4.json" if args.checkpoint == "deployed" else "table4_last.json")
    before = json.loads(before_path.read_text())["robots"] if before_path.is_file() else table["robots"]
    lines = [f"# {table['clip']}: success over seeds on {args.episodes} episodes ({args.checkpoint} checkpoints)", ""]
    methods = args.methods.split(",") if args.methods else None
    for real in robots:
        again["robots"][real] = reevaluate_robot(
            out, table, real, refs, pre.env_cfg, args.episodes, args.checkpoint, methods
        )
        lines += spread_lines(before[real]["results"], again["robots"][real]["results"], real)
    atomic_write(target, lambda tmp: tmp.write_text(json.dumps(again, indent=1)))
    print("\n".join(lines))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
