"""Does a fine-tuning simulator rank checkpoints the way the "real" robot does? Every candidate checkpoint of a Table
IV run's fine-tunings (``bench_table4.py --select-every N``), deployed alone in the robot on the bench's matched
episodes, beside the score the selection gave it in its own simulator.

    python bench/table4_selection.py OUT [--robots combined] [--methods ASAP,SysID,Oracle] [-o OUT/selection_check.json]

Per method and robot it prints, over seeds, the robot's clip completion and Eg-mpjpe of four choices from the same
fine-tuning: the pre-trained checkpoint, the last checkpoint (plain fine-tuning), the one the selection deployed, and
the one the robot itself would have picked (a bound no user reaches); and the rank correlation (Spearman, completion
then Eg-mpjpe as in the selection) between the simulator's ordering of the candidates and the robot's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_table4 import evaluate, robot_folder

from retarget.atomic_io import atomic_write
from robots.registry import load_robot_spec
from trainers.finetune.selection import score_key
from trainers.finetune.selection_config import SELECTION_FILE
from trainers.policy_io import load_policy
from trainers.real.model import build_real_model
from trainers.reference import load_references


def ranks(rows: list[dict]) -> np.ndarray:
    """Rank of each row under :func:`score_key` (0: worst); tied keys share their mean rank."""
    keys = [score_key(r) for r in rows]
    order = sorted(range(len(rows)), key=lambda i: keys[i])
    out = np.empty(len(rows))
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and keys[order[j + 1]] == keys[order[i]]:
            j += 1
        out[[order[k] for k in range(i, j + 1)]] = (i + j) / 2.0
        i = j + 1
    return out


def spearman(a: list[dict], b: list[dict]) -> float:
    """Rank correlation of two orderings of the same candidates (NaN where either has every candidate tied)."""
    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0.0 or rb.std() == 0.0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def check_run(folder: Path, refs, real: str, episodes: int) -> dict:
    """One fine-tuning: its candidates in the simulator (from selection.json) and in the robot."""
    record = json.loads((folder / SELECTION_FILE).read_text())
    in_robot = []
    for row in record["candidates"]:
        # A name in the run folder, else the pre-trained checkpoint's path (relative to where the bench ran).
        path = folder / row["checkpoint"] if (folder / row["checkpoint"]).is_file() else Path(row["checkpoint"])
        r = evaluate(path, refs, real, episodes)
        in_robot.append({"iteration": row["iteration"], "completion": r["completion"], "eg_mpjpe_mm": r["eg_mpjpe_mm"]})
    by_it = {r["iteration"]: r for r in in_robot}
    return {
        "simulator": record["candidates"],
        "robot": in_robot,
        "chosen_iteration": record["chosen_iteration"],
        "pretrained": by_it[record["base_iteration"]],
        "last": in_robot[-1],
        "selected": by_it[record["chosen_iteration"]],
        "robot_best": max(in_robot, key=score_key),
        "spearman": spearman(record["candidates"], in_robot),
    }


def summarize(runs: list[dict]) -> dict:
    """Means over seeds of each choice's robot figures, and the median rank correlation."""
    out: dict = {}
    for choice in ("pretrained", "last", "selected", "robot_best"):
        out[choice] = {k: float(np.mean([r[choice][k] for r in runs])) for k in ("completion", "eg_mpjpe_mm")} | {
            "completion_per_seed": [r[choice]["completion"] for r in runs]
        }
    rho = [r["spearman"] for r in runs if np.isfinite(r["spearman"])]
    out["spearman_median"] = float(np.median(rho)) if rho else float("nan")
    out["selected_not_worse_than_last"] = int(sum(score_key(r["selected"]) >= score_key(r["last"]) for r in runs))
    out["seeds"] = len(runs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="a bench_table4.py output folder made with --select-every")
    ap.add_argument("--robots", default=None, help="comma list (default: every robot of its table4.json)")
    ap.add_argument("--methods", default="ASAP,SysID,Oracle")
    ap.add_argument("-o", "--output", default=None, help="default: OUT/selection_check.json")
    args = ap.parse_args(argv)
    out = Path(args.out)
    table = json.loads((out / "table4.json").read_text())
    bench = table["args"]
    robots = args.robots.split(",") if args.robots else list(table["robots"])
    pre = load_policy(out / "pre")
    nominal = build_real_model("nominal", pre.env_cfg.sim)
    refs = load_references(bench["motion"], nominal, load_robot_spec(), bench["clip"])
    seeds = [int(s) for s in bench["seeds"].split(",")]
    report: dict = {"clip": table["clip"], "robots": {}}
    for real in robots:
        report["robots"][real] = {}
        print(f"\n{table['clip']} in {real}: robot figures of four choices from the same fine-tunings (mean of seeds)")
        print("| method | pre-trained | last | selected | robot's own pick | Spearman sim↔robot | selected ≥ last |")
        print("|---|---|---|---|---|---|---|")
        for method in args.methods.split(","):
            folders = [out / robot_folder(real) / f"{method}_s{s}" for s in seeds]
            if not all((f / SELECTION_FILE).is_file() for f in folders):
                continue
            runs = [check_run(f, refs, real, bench["eval_episodes"]) for f in folders]
            s = summarize(runs)
            report["robots"][real][method] = {"summary": s, "runs": runs}
            cells = " | ".join(
                f"{s[c]['completion']:.0%}, {s[c]['eg_mpjpe_mm']:.1f} mm"
                for c in ("pretrained", "last", "selected", "robot_best")
            )
            print(
                f"| {method} | {cells} | "
                f"{s['spearman_median']:+.2f} | {s['selected_not_worse_than_last']}/{s['seeds']} |",
                flush=True,
            )
    path = Path(args.output) if args.output else out / "selection_check.json"
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(report, indent=2, default=float)))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
