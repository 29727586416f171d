"""Where a fine-tuning method stands against the targets of a general claim, from Table IV runs of several clips in
each robot: per clip and robot, its share of the Vanilla→Oracle gap in Eg-mpjpe and in completion (target: at least
half) and the spread of its success over seeds (standard deviation of the seeds' success rates; target: at most
``--spread`` points); per robot, its share minus a baseline's pooled over the clips (target: ahead, i.e. above 0).

    python bench/table4_targets.py docs/table4/two_rounds/*.json --method "ASAP r2" --baseline "SysID r2"

Each check reads yes / no, or "no gap" where the Oracle is no better than Vanilla in that metric (the share then
measures no improvement, so the target cannot be judged there). Shares carry their 95 % bootstrap interval over
seeds and episodes (:mod:`table4_stats`); a point estimate past the target with an interval that straddles it is
"yes" with the interval beside it, to be read as such.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table4_report import SHARE_LABELS, ReportError, clip_samples, load_tables, oracle_gains, run_label
from table4_stats import SHARE_METRICS, GapShare, format_share, gap_share, round_name, share_difference

from trainers.finetune.loop_config import DEFAULT_ROUNDS

DEFAULT_METHOD = round_name("ASAP", DEFAULT_ROUNDS)
"""The row ``loop`` deploys by default."""
DEFAULT_BASELINE = round_name("SysID", DEFAULT_ROUNDS)
"""SysID at the same budget (rounds of rollouts and fine-tuning)."""
SHARE_TARGET = 0.5
"""Least share of the Vanilla→Oracle gap a method must close, in Eg-mpjpe and in completion."""
SPREAD_TARGET_POINTS = 20.0
"""Largest standard deviation over seeds of the seeds' success rates [percentage points]."""
GAP_METRICS = ("eg_mpjpe_mm", "completion")


@dataclass(frozen=True)
class ClipCheck:
    clip: str
    robot: str
    spread: float
    """Standard deviation over seeds of the seeds' success rates (fraction)."""
    shares: dict[str, GapShare]


def verdict(g: GapShare, key: str, target: float = SHARE_TARGET) -> str:
    if not np.isfinite(g.share) or not oracle_gains(g, key):
        return "no gap"
    return "yes" if g.share >= target else "no"


def check_clips(tables: list[dict], method: str, replicates: int) -> list[ClipCheck]:
    checks = []
    for table in tables:
        for real, summary in table["robots"].items():
            results = summary["results"]
            if method not in results or "Vanilla" not in results or "Oracle" not in results:
                continue
            rates = np.array([row["success_rate"] for row in results[method]])
            shares = {
                key: gap_share([clip_samples(summary, key)], method, replicates=replicates) for key in SHARE_METRICS
            }
            checks.append(ClipCheck(run_label(table), real, float(rates.std()), shares))
    return checks


def pooled_lead(
    tables: list[dict], robot: str, method: str, baseline: str, replicates: int
) -> tuple[int, dict[str, GapShare]] | None:
    """``method``'s pooled share minus ``baseline``'s per metric, over the clips of ``robot`` that ran both."""
    runs = [t["robots"][robot] for t in tables if robot in t["robots"]]
    runs = [s for s in runs if {method, baseline, "Vanilla", "Oracle"} <= set(s["results"])]
    if not runs:
        return None
    return len(runs), {
        key: share_difference([clip_samples(s, key) for s in runs], method, baseline, replicates=replicates)
        for key in SHARE_METRICS
    }


def report(paths: list[Path], method: str, baseline: str, spread_target: float, replicates: int) -> tuple[str, bool]:
    """The markdown report and whether every judged target was met."""
    tables = load_tables(paths)
    checks = check_clips(tables, method, replicates)
    if not checks:
        raise ReportError(f"no table has {method}, Vanilla and the Oracle")
    met = True
    lines = [
        (
            f"{method}: per clip and robot, share of the Vanilla→Oracle gap (target ≥ {SHARE_TARGET:.0%}) and "
            f"success spread over seeds (target ≤ {100 * spread_target:.0f} points)"
        ),
        "",
        "| clip | robot | Eg-mpjpe share | ≥ ½ | completion share | ≥ ½ | success spread | ≤ target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        cells = []
        for key in GAP_METRICS:
            v = verdict(c.shares[key], key)
            met &= v != "no"
            cells += [format_share(c.shares[key]), v]
        ok = c.spread <= spread_target + 1e-9
        met &= ok
        cells += [f"± {100 * c.spread:.0f}", "yes" if ok else "no"]
        lines.append(f"| {c.clip} | {c.robot} | " + " | ".join(cells) + " |")
    lines += ["", f"{method} − {baseline}, pooled share of the gap per robot (target: ahead, > 0):", ""]
    for robot in dict.fromkeys(c.robot for c in checks):
        lead = pooled_lead(tables, robot, method, baseline, replicates)
        if lead is None:
            lines.append(f"- {robot}: no clip ran both {method} and {baseline}")
            continue
        n, diffs = lead
        ahead = all(d.share > 0 for d in diffs.values() if np.isfinite(d.share))
        met &= ahead
        cells = ", ".join(f"{SHARE_LABELS[k]} {format_share(d)}" for k, d in diffs.items())
        lines.append(f"- {robot} ({n} clip{'s' if n != 1 else ''}): {cells} — {'ahead' if ahead else 'not ahead'}")
    return "\n".join(lines), met


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+", type=Path, help="table4.json files (one per clip; any robots)")
    ap.add_argument("--method", default=DEFAULT_METHOD, help="the row judged (default: what loop deploys)")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="the row it must lead, pooled per robot")
    ap.add_argument(
        "--spread", type=float, default=SPREAD_TARGET_POINTS, help="largest success spread over seeds [points]"
    )
    ap.add_argument("--replicates", type=int, default=2000, help="bootstrap replicates per share")
    args = ap.parse_args(argv)
    try:
        text, met = report(args.tables, args.method, args.baseline, args.spread / 100.0, args.replicates)
    except ReportError as exc:
        print(f"table4_targets: {exc}", file=sys.stderr)
        return 1
    print(text)
    print(f"\nevery judged target met: {'yes' if met else 'no'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
