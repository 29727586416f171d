"""The downstream benchmark's table (markdown) and plot, both made from its summary dict alone."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from retarget.asap_pkl import atomic_write

# (summary key, column header): tracking against the source's own reference, then the human clip.
TRACKING_COLUMNS = (
    ("success", "success"),
    ("completion", "completed"),
    ("eg_mpjpe_mm", "Eg-mpjpe [mm]"),
    ("empjpe_mm", "Empjpe [mm]"),
)
HUMAN_COLUMNS = (
    ("limb_direction_error_deg", "limb err [deg]"),
    ("stance_sole_abs_height_mm", "stance \\|sole z\\| [mm]"),
    ("stance_tilt_deg", "stance tilt [deg]"),
    ("stance_slide_cm_s", "stance slide [cm/s]"),
    ("floating_fraction", "floating"),
)
SPREAD_KEYS = ("completion", "eg_mpjpe_mm", "empjpe_mm", "vs_human.limb_direction_error_deg")
LATE_CHECKPOINTS = 3
PLOTTED = (
    ("success", "success"),
    ("completion", "clip completed"),
    ("eg_mpjpe_mm", "Eg-mpjpe vs own ref [mm]"),
    ("empjpe_mm", "Empjpe vs own ref [mm]"),
    ("vs_human.limb_direction_error_deg", "limb err vs human [deg]"),
)


def _fmt(value: float | None, key: str) -> str:
    if value is None or math.isnan(value):  # None (JSON null) or NaN: no stance frames, nothing to report
        return "—"
    if key in ("success", "completion", "floating_fraction"):
        return f"{value:.0%}"
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def _get(row: dict, dotted: str) -> float | None:
    value: object = row
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value if isinstance(value, (int, float)) else None


def at_common_budget(summary: dict) -> list[tuple[dict, dict]]:
    """(run, checkpoint) pairs, each run at the largest env-step count that every run of its clip reached."""
    reached: dict[str, int] = {}
    for run in summary["runs"]:
        top = run["checkpoints"][-1]["env_steps"]
        reached[run["clip"]] = min(reached.get(run["clip"], top), top)
    return [
        (run, [c for c in run["checkpoints"] if c["env_steps"] <= reached[run["clip"]]][-1]) for run in summary["runs"]
    ]


def final_table_rows(summary: dict) -> list[list[str]]:
    """One row per run at the common budget: identity, tracking vs own reference, performed motion vs human."""
    rows = []
    for run, last in at_common_budget(summary):
        rows.append(
            [
                run["clip"],
                run["source"],
                str(run["seed"]),
                run["source_sha256"][:12],
                f"{last['env_steps']:,}",
                *(_fmt(last[k], k) for k, _ in TRACKING_COLUMNS),
                *(_fmt(last["vs_human"][k], k) for k, _ in HUMAN_COLUMNS),
                *(_fmt(run["reference_vs_human"][k], k) for k, _ in HUMAN_COLUMNS[:3]),
            ]
        )
    return rows


def final_table_header() -> list[str]:
    return [
        "clip",
        "source",
        "seed",
        "file sha256",
        "env steps",
        *(h for _, h in TRACKING_COLUMNS),
        *(f"policy vs human: {h}" for _, h in HUMAN_COLUMNS),
        *(f"reference vs human: {h}" for _, h in HUMAN_COLUMNS[:3]),
    ]


def _markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def late_spread_rows(summary: dict, last: int = LATE_CHECKPOINTS) -> list[list[str]]:
    """Per run, mean ± standard deviation over its last ``last`` checkpoints at or below the common budget:
    how much a figure moves between neighbouring checkpoints of one run, a floor for the noise of a ranking."""
    rows = []
    for run, at in at_common_budget(summary):
        window = [c for c in run["checkpoints"] if c["env_steps"] <= at["env_steps"]][-last:]
        cells = []
        for key in SPREAD_KEYS:
            values = np.array([np.nan if (v := _get(c, key)) is None else v for c in window], dtype=float)
            values = values[np.isfinite(values)] * (100.0 if key == "completion" else 1.0)
            cells.append(f"{values.mean():.1f} ± {values.std():.1f}" if values.size else "—")
        rows.append(
            [
                run["clip"],
                run["source"],
                str(run["seed"]),
                f"{window[0]['env_steps']:,}–{window[-1]['env_steps']:,}",
                *cells,
            ]
        )
    return rows


def table_markdown(summary: dict) -> str:
    """The table at the common budget, then every checkpoint of every run (the curves as numbers)."""
    s = summary["settings"]
    budget = (
        f"Budget per run: {s['iterations']} iterations × {s['steps_per_iteration']} = "
        f"{s['iterations'] * s['steps_per_iteration']:,} env steps; {s['num_envs']} envs; seeds {s['seeds']}; "
        f"evaluation: {s['episodes']} randomized-physics episodes, seed {s['eval_seed']}."
    )
    legend = (
        "Rows: each run at the largest env-step count that every run of its clip reached. "
        'Tracking columns are measured against each source\'s own reference; "vs human" columns score the '
        "motion the policy performed (episodes played on through falls) against the SMPL clip with "
        "`asap-retarget eval`'s metrics."
    )
    lines = [f"Command: `{summary['command']}`", "", budget, "", legend, ""]
    lines += _markdown(final_table_header(), final_table_rows(summary))
    curve_header = [
        "clip",
        "source",
        "seed",
        "iteration",
        "env steps",
        *(h for _, h in TRACKING_COLUMNS),
        "limb err vs human [deg]",
    ]
    curve_rows = [
        [
            run["clip"],
            run["source"],
            str(run["seed"]),
            str(c["iteration"]),
            f"{c['env_steps']:,}",
            *(_fmt(c[k], k) for k, _ in TRACKING_COLUMNS),
            _fmt(c["vs_human"]["limb_direction_error_deg"], "limb_direction_error_deg"),
        ]
        for run in summary["runs"]
        for c in run["checkpoints"]
    ]
    spread_header = [
        "clip",
        "source",
        "seed",
        "env steps",
        "completed [%]",
        "Eg-mpjpe [mm]",
        "Empjpe [mm]",
        "limb err vs human [deg]",
    ]
    spread = (
        f"Mean ± standard deviation over the last {LATE_CHECKPOINTS} checkpoints at or below the common "
        "budget (checkpoint-to-checkpoint spread of one run; seed-to-seed spread is not measured here):"
    )
    lines += ["", spread, ""]
    lines += _markdown(spread_header, late_spread_rows(summary))
    lines += ["", "Every evaluated checkpoint:", ""] + _markdown(curve_header, curve_rows)
    return "\n".join(lines) + "\n"


def plot_curves(summary: dict, png_path: Path) -> Path | None:
    """One row of panels per clip: each plotted metric against env steps, one line per (source, seed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    clips = list(dict.fromkeys(r["clip"] for r in summary["runs"]))
    sources = list(dict.fromkeys(r["source"] for r in summary["runs"]))
    colors = {s: f"C{i}" for i, s in enumerate(sources)}
    fig, axes = plt.subplots(len(clips), len(PLOTTED), figsize=(4 * len(PLOTTED), 3.2 * len(clips)), squeeze=False)
    for row, clip in enumerate(clips):
        for run in (r for r in summary["runs"] if r["clip"] == clip):
            steps = [c["env_steps"] for c in run["checkpoints"]]
            for col, (key, _) in enumerate(PLOTTED):
                values = [_get(c, key) for c in run["checkpoints"]]
                axes[row, col].plot(
                    steps,
                    [float("nan") if v is None else v for v in values],
                    marker="o",
                    color=colors[run["source"]],
                    label=f"{run['source']} (seed {run['seed']})",
                )
        for col, (key, title) in enumerate(PLOTTED):
            ax = axes[row, col]
            ax.set_title(f"{clip.removeprefix('video_')}: {title}" if col == 0 else title, fontsize=9)
            ax.set_xlabel("env steps")
            ax.ticklabel_format(axis="x", style="sci", scilimits=(6, 6))
            if key in ("success", "completion"):
                ax.set_ylim(-0.05, 1.05)
            ax.grid(alpha=0.3)
        axes[row, 0].legend(fontsize=8)
    fig.tight_layout()
    atomic_write(png_path, lambda tmp: fig.savefig(tmp, format="png", dpi=80))
    plt.close(fig)
    return png_path


def main() -> None:
    """Re-render table.md and curves.png from a summary.json (e.g. after changing this module)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("summary", type=Path)
    args = parser.parse_args()
    summary = json.loads(args.summary.read_text())
    table = args.summary.with_name("table.md")
    atomic_write(table, lambda tmp: tmp.write_text(table_markdown(summary)))
    plot_curves(summary, args.summary.with_name("curves.png"))
    print(f"wrote {table} and {args.summary.with_name('curves.png')}")


if __name__ == "__main__":
    main()
