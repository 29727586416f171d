"""One Table IV from two bench runs of the same policy and episodes: the methods a new run did not repeat are taken
from an earlier run, and the gap shares recomputed over the whole table.

SysID and the Oracle do not depend on the Δa, and every stage of the bench is deterministic for a given policy and
seed, so a run that only tries a new Δa (``--methods ASAP``) need not fine-tune them again. The runs must be paired:
the tool refuses unless the clip, the pre-trained policy's iteration, the fine-tuning budget, the seeds and Vanilla's
per-episode results (the evaluation episodes themselves) are the same in both, per robot.

    python bench/table4_merge.py NEW/table4.json --from OLD/table4.json --methods SysID,Oracle -o merged.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_table4 import gap_closed, gap_shares_with_ci
from table4_report import ReportError, load_tables
from table4_stats import ORDER, method_order

from retarget.atomic_io import atomic_write

SAME_ARGS = ("seeds", "iterations", "num_envs", "episodes", "eval_episodes")
"""Bench arguments that must agree for two runs' rows to be paired."""


def check_paired(new: dict, old: dict, where: str) -> None:
    """Raise :class:`ReportError` unless the two runs share clip, policy, budget and seeds."""
    for key in ("clip", "policy_iteration"):
        if new.get(key) != old.get(key):
            raise ReportError(f"{where}: {key} {new.get(key)!r} here, {old.get(key)!r} in the earlier run")
    for key in SAME_ARGS:
        if new["args"].get(key) != old["args"].get(key):
            raise ReportError(f"{where}: --{key} {new['args'].get(key)!r} here, {old['args'].get(key)!r} earlier")


def merge(new: dict, old: dict, methods: list[str], source: str) -> dict:
    """``new`` with ``methods``' rows of every robot the two share taken from ``old``; shares recomputed."""
    check_paired(new, old, source)
    merged = json.loads(json.dumps({k: v for k, v in new.items() if k != "path"}))
    shared = [r for r in new["robots"] if r in old["robots"]]
    if not shared:
        raise ReportError(f"{source}: no robot in common with the new run")
    for real in shared:
        here, there = merged["robots"][real], old["robots"][real]
        if here["results"]["Vanilla"] != there["results"]["Vanilla"]:
            raise ReportError(f"{source} [{real}]: Vanilla's episodes differ; the runs are not paired")
        for method in methods:
            if method in here["results"]:
                raise ReportError(f"[{real}] {method} is in the new run already; merge only what it did not run")
            if method not in there["results"]:
                raise ReportError(f"{source} [{real}]: no {method} rows")
            here["results"][method] = there["results"][method]
            for key, cost in there.get("finetune_cost", {}).items():
                if key.rsplit("_s", 1)[0] == method:
                    here.setdefault("finetune_cost", {})[key] = cost
        here["results"] = {name: here["results"][name] for name in method_order(here["results"])}
        shares = gap_shares_with_ci(here["results"]) if "Oracle" in here["results"] else {}
        here["gap_share_ci"] = shares
        here["gap_closed"] = gap_closed(shares)
        here.setdefault("merged_rows", {}).update({m: source for m in methods})
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("new", type=Path, help="table4.json of the run to complete")
    parser.add_argument("--from", dest="old", type=Path, required=True, help="table4.json of the earlier run")
    parser.add_argument("--methods", required=True, help="comma list of the earlier run's methods to take")
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    try:
        unknown = set(methods) - set(ORDER[1:])
        if unknown:
            raise ReportError(f"--methods: unknown {', '.join(sorted(unknown))}; valid: {', '.join(ORDER[1:])}")
        if args.out.resolve() in (args.new.resolve(), args.old.resolve()):
            raise ReportError(f"{args.out}: would overwrite an input; write the merged table elsewhere")
        new, old = load_tables([args.new, args.old])
        merged = merge(new, old, methods, str(args.old))
    except ReportError as exc:
        print(f"table4_merge: {exc}", file=sys.stderr)
        return 1
    atomic_write(args.out, lambda tmp: tmp.write_text(json.dumps(merged, indent=2, default=float)))
    print(f"wrote {args.out} ({', '.join(methods)} from {args.old})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
