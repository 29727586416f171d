"""One Table IV from two bench runs of the same policy and episodes: the methods a new run did not repeat are taken
from an earlier run, and the gap shares recomputed over the whole table.

SysID and the Oracle do not depend on the Δa, and every stage of the bench is deterministic for a given policy and
seed, so a run that only tries a new Δa (``--methods ASAP``) need not fine-tune them again. The runs must be paired:
the tool refuses unless the clip, the pre-trained policy's iteration, the fine-tuning budget, the seeds and Vanilla's
per-episode results (the evaluation episodes themselves) are the same in both, per robot.

    python bench/table4_merge.py NEW/table4.json --from OLD/table4.json --methods SysID,Oracle -o merged.json

With ``--reference`` the earlier run's Oracle *replaces* this run's as the top of every gap: an Oracle fine-tuned in
the robot with another budget (e.g. 100 iterations, what two ASAP rounds of 50 spend in simulation) on the same policy,
seeds and episodes. Only the budget may differ; the merged table records it (``oracle_iterations``) and the report
names it. The paired difference of the two Oracles (same seeds, same episodes) is printed.

    python bench/table4_merge.py MAIN/table4_eval32.json --from ORACLE100/table4_eval32.json --methods Oracle \\
        --reference -o main_oracle100.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_table4 import gap_closed, gap_shares_with_ci
from table4_report import ReportError, load_tables
from table4_stats import ORDER, SHARE_METRICS, episode_samples, method_order, paired_difference, parse_round

from retarget.atomic_io import atomic_write

SAME_ARGS = ("seeds", "iterations", "num_envs", "episodes", "eval_episodes")
"""Bench arguments that must agree for two runs' rows to be paired."""


def _is_row(name: str) -> bool:
    """A fine-tuned row of Table IV: a method of :data:`ORDER` but Vanilla, or a later round of one ('ASAP r2')."""
    try:
        return parse_round(name)[0] != "Vanilla"
    except ValueError:
        return False


def check_paired(new: dict, old: dict, where: str, same_args: tuple[str, ...] = SAME_ARGS) -> None:
    """Raise :class:`ReportError` unless the two runs share clip, policy, evaluation and ``same_args``."""
    for key in ("clip", "policy_iteration", "eval_episodes"):
        if new.get(key) != old.get(key):
            raise ReportError(f"{where}: {key} {new.get(key)!r} here, {old.get(key)!r} in the earlier run")
    for key in same_args:
        if new["args"].get(key) != old["args"].get(key):
            raise ReportError(f"{where}: --{key} {new['args'].get(key)!r} here, {old['args'].get(key)!r} earlier")


def _shared_robots(new: dict, old: dict, source: str) -> list[str]:
    """The robots both runs measured, each checked to have the same Vanilla episodes (the runs are paired)."""
    shared = [r for r in new["robots"] if r in old["robots"]]
    if not shared:
        raise ReportError(f"{source}: no robot in common with the new run")
    for real in shared:
        if new["robots"][real]["results"]["Vanilla"] != old["robots"][real]["results"]["Vanilla"]:
            raise ReportError(f"{source} [{real}]: Vanilla's episodes differ; the runs are not paired")
    return shared


def _recompute_shares(here: dict) -> None:
    here["results"] = {name: here["results"][name] for name in method_order(here["results"])}
    shares = gap_shares_with_ci(here["results"]) if "Oracle" in here["results"] else {}
    here["gap_share_ci"] = shares
    here["gap_closed"] = gap_closed(shares)


def merge(new: dict, old: dict, methods: list[str], source: str) -> dict:
    """``new`` with ``methods``' rows of every robot the two share taken from ``old``; shares recomputed."""
    check_paired(new, old, source)
    merged = json.loads(json.dumps({k: v for k, v in new.items() if k != "path"}))
    for real in _shared_robots(new, old, source):
        here, there = merged["robots"][real], old["robots"][real]
        for method in methods:
            if method in here["results"]:
                raise ReportError(f"[{real}] {method} is in the new run already; merge only what it did not run")
            if method not in there["results"]:
                raise ReportError(f"{source} [{real}]: no {method} rows")
            here["results"][method] = there["results"][method]
            for key, cost in there.get("finetune_cost", {}).items():
                if key.rsplit("_s", 1)[0] == method:
                    here.setdefault("finetune_cost", {})[key] = cost
        _recompute_shares(here)
        here.setdefault("merged_rows", {}).update({m: source for m in methods})
    return merged


def with_reference(new: dict, old: dict, source: str) -> tuple[dict, dict[str, dict[str, tuple[float, float, float]]]]:
    """``new`` (only the robots both ran) with ``old``'s Oracle as the reference of every share, and per robot the
    paired difference of the two Oracles (``old``'s − ``new``'s: mean, 95 % interval) per metric."""
    check_paired(new, old, source, tuple(k for k in SAME_ARGS if k != "iterations"))
    shared = _shared_robots(new, old, source)
    merged = json.loads(json.dumps({k: v for k, v in new.items() if k not in ("path", "robots")}))
    merged["robots"] = {}
    merged["oracle_iterations"] = old["args"]["iterations"]
    differences: dict[str, dict[str, tuple[float, float, float]]] = {}
    for real in shared:
        here = json.loads(json.dumps(new["robots"][real]))
        mine, theirs = here["results"].get("Oracle"), old["robots"][real]["results"].get("Oracle")
        if theirs is None:
            raise ReportError(f"{source} [{real}]: no Oracle rows")
        if mine is not None:
            differences[real] = {
                key: paired_difference(episode_samples(theirs, key), episode_samples(mine, key))
                for key in SHARE_METRICS
            }
        here["results"]["Oracle"] = theirs
        here["reference"] = {"source": source, "oracle_iterations": old["args"]["iterations"]}
        _recompute_shares(here)
        merged["robots"][real] = here
    return merged, differences


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("new", type=Path, help="table4.json of the run to complete")
    parser.add_argument("--from", dest="old", type=Path, required=True, help="table4.json of the earlier run")
    parser.add_argument("--methods", required=True, help="comma list of the earlier run's methods to take")
    parser.add_argument(
        "--reference",
        action="store_true",
        help="--methods Oracle only: the earlier run's Oracle (any budget) replaces this run's as the gaps' top",
    )
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    try:
        unknown = [m for m in methods if not _is_row(m)]
        if unknown:
            raise ReportError(
                f"--methods: unknown {', '.join(sorted(unknown))}; valid: {', '.join(ORDER[1:])} (and 'ASAP r2', ...)"
            )
        if args.out.resolve() in (args.new.resolve(), args.old.resolve()):
            raise ReportError(f"{args.out}: would overwrite an input; write the merged table elsewhere")
        if args.reference and methods != ["Oracle"]:
            raise ReportError("--reference replaces the Oracle only: give --methods Oracle")
        new, old = load_tables([args.new, args.old])
        differences: dict[str, dict[str, tuple[float, float, float]]] = {}
        if args.reference:
            merged, differences = with_reference(new, old, str(args.old))
        else:
            merged = merge(new, old, methods, str(args.old))
    except ReportError as exc:
        print(f"table4_merge: {exc}", file=sys.stderr)
        return 1
    atomic_write(args.out, lambda tmp: tmp.write_text(json.dumps(merged, indent=2, default=float)))
    print(f"wrote {args.out} ({', '.join(methods)} from {args.old})")
    for real, by_metric in differences.items():
        print(
            f"[{real}] Oracle at {merged['oracle_iterations']} it. − at {new['args']['iterations']} it. (paired): "
            + "; ".join(f"{key} {d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for key, (d, lo, hi) in by_metric.items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
