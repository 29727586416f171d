"""Did each round's fine-tuning simulator see what the robot saw? Per seed of a Table IV run made with
``--select-every``: the score the round's own simulator gave the policy the round started from and the checkpoint it
deployed (``selection.json``: 8 matched episodes in nominal physics + that round's Δa, or the method's own model),
beside the robot's score of the same two policies on the table's matched episodes.

    python bench/table4_rounds_check.py OUT/table4_eval32.json [--methods "ASAP,ASAP r2"] [--robots combined]

The table may be the bench's own ``table4.json`` or a re-evaluation of it (:mod:`table4_reevaluate`); the run
folders are those of the folder the table lies in. A round starts from the previous round's deployed policy of the
same seed (round 1: the pre-trained one, Vanilla). Printed per method and robot: per seed, success / completion in
the simulator (start → deployed) and in the robot (start → deployed), and over seeds how often the simulator moved
the policy and what the robot made of the moves (success up, equal, down), with the mean change of robot success
where the simulator moved and where it kept the start. Nothing is fine-tuned or rolled out again.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_table4 import robot_folder, run_folder
from table4_stats import parse_round, round_name

from trainers.finetune.selection_config import SELECTION_FILE


class CheckError(Exception):
    """A table or run folder that cannot be read as a bench output with selection records."""


@dataclass(frozen=True)
class SeedCheck:
    """One fine-tuning: its start and deployed policy, each scored by the simulator and by the robot."""

    seed: int
    moved_iterations: int
    """Fine-tuning iterations of the deployed checkpoint past the start (0: the start was deployed)."""
    sim_start: dict[str, float]
    sim_deployed: dict[str, float]
    robot_start: dict[str, float]
    robot_deployed: dict[str, float]


def start_row(method: str) -> str:
    """The table row a method's fine-tuning starts from: Vanilla for round 1, round k − 1 of the same method."""
    base, k = parse_round(method)
    return "Vanilla" if k == 1 else round_name(base, k - 1)


def check_method(results: dict[str, list[dict]], robot_dir: Path, method: str) -> list[SeedCheck]:
    """Every seed of ``method`` in one robot whose fine-tuning kept a selection record."""
    start = start_row(method)
    if start not in results:
        raise CheckError(f"{method} starts from {start}, which the table lacks")
    checks = []
    for seed, row in enumerate(results[method]):
        path = robot_dir / run_folder(method, seed) / SELECTION_FILE
        if not path.is_file():
            continue
        try:
            record = json.loads(path.read_text())
            candidates = {c["iteration"]: c for c in record["candidates"]}
            chosen, base = candidates[record["chosen_iteration"]], candidates[record["base_iteration"]]
        except (OSError, ValueError, KeyError) as exc:
            raise CheckError(f"{path}: not a selection record ({exc})") from exc
        robot_start = results[start][0 if start == "Vanilla" else seed]
        checks.append(
            SeedCheck(
                seed,
                record["chosen_iteration"] - record["base_iteration"],
                base,
                chosen,
                robot_start,
                row,
            )
        )
    return checks


def _pair(a: dict, b: dict) -> str:
    return f"{a['success_rate']:4.0%} / {a['completion']:4.0%} → {b['success_rate']:4.0%} / {b['completion']:4.0%}"


def summary_line(checks: list[SeedCheck]) -> str:
    """How often the simulator moved the policy, and what the robot made of the moves."""
    change = np.array([c.robot_deployed["success_rate"] - c.robot_start["success_rate"] for c in checks])
    moved = np.array([c.moved_iterations > 0 for c in checks])
    up, down = int(np.sum(moved & (change > 0))), int(np.sum(moved & (change < 0)))
    text = (
        f"moved {int(moved.sum())} of {len(checks)} seeds: robot success up {up}, equal {int(moved.sum()) - up - down}"
    )
    text += f", down {down}"
    if moved.any():
        text += f"; mean change where moved {change[moved].mean():+.0%}"
    if (~moved).any():
        text += f", where kept {change[~moved].mean():+.0%}"
    return text


def report(table_path: Path, methods: list[str] | None, robots: list[str] | None) -> tuple[str, dict]:
    """The printed report and, per robot and method, the seeds' checks."""
    try:
        table = json.loads(table_path.read_text())
        by_robot = table["robots"]
    except (OSError, ValueError, KeyError) as exc:
        raise CheckError(f"{table_path}: not a table4.json of bench_table4.py ({exc})") from exc
    episodes = table.get("eval_episodes", table.get("args", {}).get("eval_episodes"))
    lines, out = [], {}
    for real in robots or list(by_robot):
        if real not in by_robot:
            raise CheckError(f"{table_path}: no robot {real!r} (it has {', '.join(by_robot)})")
        results = by_robot[real]["results"]
        robot_dir = table_path.parent / robot_folder(real)
        for method in methods or [m for m in results if m not in ("Vanilla", "Oracle")]:
            if method not in results:
                raise CheckError(f"{table_path} [{real}]: no {method} rows")
            checks = check_method(results, robot_dir, method)
            if not checks:
                continue
            out.setdefault(real, {})[method] = checks
            lines.append(
                f"[{real}] {method} (from {start_row(method)}): success / completion, simulator on its 8 selection "
                f"episodes | robot on the table's {episodes}"
            )
            for c in checks:
                lines.append(
                    f"  s{c.seed}  +{c.moved_iterations:3d} it.  sim {_pair(c.sim_start, c.sim_deployed)}  |  "
                    f"robot {_pair(c.robot_start, c.robot_deployed)}"
                )
            lines.append("  " + summary_line(checks))
    if not out:
        raise CheckError(f"{table_path}: no fine-tuning with a {SELECTION_FILE} (a run made without --select-every)")
    return "\n".join(lines), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table", type=Path, help="table4.json (or a re-evaluation of it) in a bench output folder")
    ap.add_argument("--methods", default=None, help="comma list of rows (default: every fine-tuned row)")
    ap.add_argument("--robots", default=None, help="comma list (default: every robot of the table)")
    args = ap.parse_args(argv)
    split = lambda text: [x for x in text.split(",") if x] if text else None
    try:
        text, _ = report(args.table, split(args.methods), split(args.robots))
    except CheckError as exc:
        print(f"table4_rounds_check: {exc}", file=sys.stderr)
        return 1
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
