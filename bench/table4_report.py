"""Table IV over several clips: the ``table4.json`` of several ``bench_table4.py`` runs (one per clip and its own
pre-trained policy) → one markdown table per "real" robot, per clip and pooled over clips, and one plot.

    python bench/table4_report.py /tmp/table4_squat/table4.json /tmp/table4_balance/table4.json \\
        -o docs/table4/report.md --plot docs/table4/report.png

Per clip: success, Eg-mpjpe and completion (mean over seeds) and each method's share of the Vanilla→Oracle gap
with its 95 % bootstrap interval (:mod:`table4_stats`). Pooled: the metrics averaged over clips (each clip
counts once) and the shares of the pooled gap, every clip's seeds and episodes redrawn on their own. A
method enters the pooled row of a robot only if every clip of that robot ran it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table4_stats import (
    SHARE_METRICS,
    Clip,
    GapShare,
    compared_pairs,
    episode_samples,
    format_share,
    gap_share,
    method_order,
    parse_round,
    share_difference,
)

from retarget.asap_pkl import atomic_write

SHARE_AXIS_LIMITS = (150.0, 250.0)
"""The plot shows shares from −150 % to 250 % of the gap (what lies beyond is read in the table)."""
LOWER_IS_BETTER = ("eg_mpjpe_mm",)
NO_GAIN_NOTE = (
    "† the Oracle is no better than Vanilla in this metric (a zero or wrong-way gap): the share measures a change "
    "that is not an improvement."
)
SHARE_LABELS = {"success_rate": "success", "eg_mpjpe_mm": "Eg-mpjpe", "completion": "completion"}


class ReportError(Exception):
    """A table4.json that cannot be read as a bench output."""


def load_tables(paths: list[Path]) -> list[dict]:
    """The bench summaries, each with its ``clip`` and ``robots`` (robot → summary)."""
    tables = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ReportError(f"{path}: cannot read it as JSON ({exc})") from exc
        if "robots" not in data or "clip" not in data:
            raise ReportError(f"{path}: not a table4.json of bench_table4.py with robots (no 'robots'/'clip' key)")
        for real, summary in data["robots"].items():
            for name, rows in summary["results"].items():
                try:
                    parse_round(name)
                except ValueError as exc:
                    raise ReportError(f"{path}: {real}: {exc}") from exc
                if any("episodes" not in row for row in rows):
                    raise ReportError(f"{path}: {real} {name} has no per-episode results (an older bench run)")
        tables.append({**data, "path": str(path)})
    return tables


def run_label(table: dict) -> str:
    """The clip, the pre-trained policy's iteration (two policies of one clip stay apart) and, where an Oracle of
    another budget is the reference (``table4_merge.py --reference``), its iterations."""
    notes = [f"policy it. {table['policy_iteration']}"] if table.get("policy_iteration") is not None else []
    if table.get("oracle_iterations") is not None:
        notes.append(f"Oracle {table['oracle_iterations']} it.")
    return table["clip"] + (f" ({', '.join(notes)})" if notes else "")


def clip_samples(summary: dict, key: str) -> Clip:
    """Every row of one robot's summary as per-episode samples of ``key`` (what the share functions read)."""
    return {name: episode_samples(rows, key) for name, rows in summary["results"].items()}


def robot_report(tables: list[dict], real: str, replicates: int) -> tuple[list[str], dict]:
    """Markdown lines of one robot's table and its pooled shares (metric → method → GapShare)."""
    runs = [(run_label(t), t["robots"][real]) for t in tables if real in t["robots"]]
    methods = method_order({m for _, s in runs for m in s["results"]})
    share_cols = " | ".join(f"{SHARE_LABELS[k]} gap closed" for k in SHARE_METRICS)
    lines = [
        f"### {real}",
        "",
        f"| clip | method | success | Eg-mpjpe [mm] | completion | {share_cols} |",
        "|---|---|---|---|---|" + "---|" * len(SHARE_METRICS),
    ]

    def row(clip: str, name: str, means: dict[str, float], shares: dict[str, GapShare] | None) -> str:
        cells = [f"{means['success_rate']:.0%}", f"{means['eg_mpjpe_mm']:.1f}", f"{means['completion']:.0%}"]
        cells += [_share_cell(shares[k], k) if shares else "" for k in SHARE_METRICS]
        return f"| {clip} | {name} | " + " | ".join(cells) + " |"

    has_oracle = [("Vanilla" in s["results"] and "Oracle" in s["results"]) for _, s in runs]
    for (clip, summary), oracle in zip(runs, has_oracle):
        for name in [m for m in methods if m in summary["results"]]:
            means = {k: float(np.mean([r[k] for r in summary["results"][name]])) for k in SHARE_METRICS}
            shares = None
            if oracle and name not in ("Vanilla", "Oracle"):
                shares = {k: gap_share([clip_samples(summary, k)], name, replicates=replicates) for k in SHARE_METRICS}
            lines.append(row(clip, name, means, shares))
    pooled: dict[str, dict[str, GapShare]] = {k: {} for k in SHARE_METRICS}
    if len(runs) > 1:
        everywhere = [m for m in methods if all(m in s["results"] for _, s in runs)]
        label = f"pooled ({len(runs)} clips)"
        for name in everywhere:
            means = {
                k: float(np.mean([np.mean([r[k] for r in s["results"][name]]) for _, s in runs])) for k in SHARE_METRICS
            }
            shares = None
            if all(has_oracle) and name not in ("Vanilla", "Oracle"):
                shares = {
                    k: gap_share([clip_samples(s, k) for _, s in runs], name, replicates=replicates)
                    for k in SHARE_METRICS
                }
                for k in SHARE_METRICS:
                    pooled[k][name] = shares[k]
            lines.append(row(f"**{label}**", name, means, shares))
    if any("†" in line for line in lines):
        lines += ["", NO_GAIN_NOTE]
    lines += budgets(runs)
    lines += differences(runs, has_oracle, replicates)
    return lines + [""], pooled


def budgets(runs: list[tuple[str, dict]]) -> list[str]:
    """Lines of the budgets per seed of runs with later rounds (fitting rollouts, fine-tuning iterations in all)."""
    lines = []
    for clip, summary in runs:
        if "budget" in summary:
            cells = [
                f"{name} {b['fitting_rollouts']} rollouts + {b['finetune_iterations']} it."
                for name, b in summary["budget"].items()
            ]
            lines.append(f"- {clip}, budget per seed (fitting rollouts, fine-tuning iterations): " + ", ".join(cells))
    return ["", *lines] if lines else []


def differences(runs: list[tuple[str, dict]], has_oracle: list[bool], replicates: int) -> list[str]:
    """Lines of the paired differences of gap shares (ASAP − SysID, ...) per clip and pooled, where both ran."""
    lines = []
    for a, b in compared_pairs({m for _, s in runs for m in s["results"]}):
        usable = [(c, s) for (c, s), ok in zip(runs, has_oracle) if ok and a in s["results"] and b in s["results"]]
        if not usable:
            continue
        lines += ["", f"{a} − {b}, difference of their shares of the gap [95 % paired bootstrap interval]:", ""]
        groups = [(c, [s]) for c, s in usable] + (
            [(f"pooled ({len(usable)} clips)", [s for _, s in usable])] if len(usable) > 1 else []
        )
        for label, summaries in groups:
            cells = []
            for key in SHARE_METRICS:
                d = share_difference([clip_samples(s, key) for s in summaries], a, b, replicates=replicates)
                cells.append(f"{SHARE_LABELS[key]} {format_share(d)}")
            lines.append(f"- {label}: " + ", ".join(cells))
    return lines


def oracle_gains(g: GapShare, key: str) -> bool:
    """True when the Oracle improves on Vanilla in ``key`` (lower Eg-mpjpe, higher success or completion)."""
    return g.gap < 0 if key in LOWER_IS_BETTER else g.gap > 0


def _share_cell(g: GapShare, key: str) -> str:
    text = format_share(g)
    return text if text == "—" or oracle_gains(g, key) else f"{text} †"


def plot(tables: list[dict], robots: list[str], path: Path, replicates: int) -> None:
    """Per robot: each method's share of the Eg-mpjpe, success and completion gaps with its interval, pooled
    over clips (bars) and per clip (dots)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(robots), figsize=(6 * len(robots), 4), squeeze=False)
    for ax, real in zip(axes[0], robots):
        runs = [t["robots"][real] for t in tables if real in t["robots"]]
        runs = [s for s in runs if "Vanilla" in s["results"] and "Oracle" in s["results"]]
        names = method_order({m for s in runs for m in s["results"]} - {"Vanilla", "Oracle"})
        methods = [m for m in names if all(m in s["results"] for s in runs)]
        width = 0.8 / len(SHARE_METRICS)
        for j, key in enumerate(SHARE_METRICS):
            x = np.arange(len(methods)) + (j - (len(SHARE_METRICS) - 1) / 2) * width
            g = [gap_share([clip_samples(s, key) for s in runs], m, replicates=replicates) for m in methods]
            share = np.array([v.share for v in g])
            err = np.array([[v.share - v.low for v in g], [v.high - v.share for v in g]])
            ax.bar(x, 100 * share, width, yerr=100 * np.nan_to_num(err), capsize=3, label=SHARE_LABELS[key])
            for i, m in enumerate(methods):
                per_clip = [gap_share([clip_samples(s, key)], m, replicates=1).share for s in runs]
                ax.scatter([x[i]] * len(per_clip), 100 * np.array(per_clip), color="k", s=8, zorder=3)
        low, high = ax.get_ylim()
        if low < -SHARE_AXIS_LIMITS[0] or high > SHARE_AXIS_LIMITS[1]:  # a tiny gap makes shares explode
            ax.set_ylim(max(low, -SHARE_AXIS_LIMITS[0]), min(high, SHARE_AXIS_LIMITS[1]))
            ax.text(0.01, 0.97, "axis clipped", transform=ax.transAxes, va="top", fontsize=8)
        ax.axhline(0, color="k", lw=0.8)
        ax.axhline(100, color="#888", lw=0.8, ls="--")
        ax.axhline(50, color="#c44", lw=0.8, ls=":")
        ax.set_xticks(np.arange(len(methods)), methods, rotation=20)
        ax.set_ylabel("share of the Vanilla→Oracle gap [%]")
        ax.set_title(f"{real} ({len(runs)} clip{'s' if len(runs) != 1 else ''}; dots: per clip)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def report(paths: list[Path], replicates: int = 2000) -> tuple[str, list[str], list[dict]]:
    """The markdown report of ``paths``, the robots it covers and the loaded tables."""
    tables = load_tables(paths)
    robots = list(dict.fromkeys(real for t in tables for real in t["robots"]))
    lines = [
        (
            f"Table IV over {len(tables)} clip(s): {', '.join(run_label(t) for t in tables)}. Mean over seeds; gap "
            "closed: share of the Vanilla→Oracle gap, [95 % bootstrap interval over seeds and evaluation episodes]."
        ),
        "",
    ]
    for real in robots:
        lines += robot_report(tables, real, replicates)[0]
    return "\n".join(lines), robots, tables


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+", type=Path, help="table4.json files (one per clip)")
    ap.add_argument("-o", "--out", type=Path, default=None, help="markdown file to write (else printed only)")
    ap.add_argument("--plot", type=Path, default=None, help="PNG of the pooled gap shares")
    ap.add_argument("--replicates", type=int, default=2000, help="bootstrap replicates per share")
    args = ap.parse_args(argv)
    try:
        text, robots, tables = report(args.tables, args.replicates)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(text)
    if args.out:
        atomic_write(args.out, lambda tmp: tmp.write_text(text + "\n"))
    if args.plot:
        plot(tables, robots, args.plot, args.replicates)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
