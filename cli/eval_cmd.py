"""`asap-retarget eval LIBRARY.pkl --source CLIP.npz|DIR [--json [OUT.json]]`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cli.common import console
from cli.options import clip_options, emit_json, json_option, robot_option

# (metric field, column header, format) shown in the table; the JSON has every field.
_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("num_frames", "frames", "{:.0f}"),
    ("limb_direction_error_deg", "limb err\n[deg]", "{:.1f}"),
    ("stance_sole_abs_height_mm", "stance\n|sole z|\n[mm]", "{:.1f}"),
    ("stance_tilt_deg", "stance\ntilt\n[deg]", "{:.1f}"),
    ("stance_slide_cm_s", "stance\nslide\n[cm/s]", "{:.2f}"),
    ("penetration_mm", "pene-\ntration\n[mm]", "{:.1f}"),
    ("floating_fraction", "floating\n[%]", "{:.0%}"),
    ("joint_limit_violation_frames", "limit\nframes", "{:.0f}"),
    ("velocity_limit_violation_frames", "vel-limit\nsteps", "{:.0f}"),
    ("self_collision_fraction", "self-coll\n>1 cm [%]", "{:.0%}"),
    ("mean_abs_acc_rad_s2", "|q̈|\n[rad/s²]", "{:.2f}"),
    ("mean_abs_jerk_rad_s3", "|jerk|\n[rad/s³]", "{:.1f}"),
)


def _fmt(fmt: str, value: float) -> str:
    return "—" if math.isnan(value) else fmt.format(value)  # NaN (no stance) shows as a dash


def metrics_table(title: str, clips, summary) -> Table:
    from retarget.metrics import source_stem

    table = Table(title=title)
    table.add_column("clip", no_wrap=True)
    for _, header, _ in _COLUMNS:
        table.add_column(escape(header), justify="right")  # "[deg]" is not rich markup
    for clip in clips:
        table.add_row(source_stem(clip.name), *(_fmt(f, getattr(clip, k)) for k, _, f in _COLUMNS))
    for label, stats in (("mean", summary.mean), ("median", summary.median)):
        table.add_row(f"[bold]{label}[/]", *(_fmt(f, stats[k]) for k, _, f in _COLUMNS), style="bold")
    return table


@click.command(name="eval")
@click.argument("library", type=click.Path(path_type=Path))
@click.option(
    "--source",
    type=click.Path(path_type=Path),
    required=True,
    help="Source SMPL clip (.npz) or a folder of them; each clip's source is found by name "
    "(ASAP's '0-motions_raw_tairantestbed_smpl_' key prefix is stripped).",
)
@json_option("the report (every metric of every clip)")
@robot_option(detect=True)
@clip_options
def eval_(library: Path, source: Path, json_out: Path | None, robot: str | None, clip_options: Any) -> None:
    """Score every clip of a motion LIBRARY (.pkl, ours or ASAP's) against its source SMPL clip."""
    from retarget.metrics import MetricsConfig, evaluate_library, report_dict, summarize

    config = MetricsConfig()
    clips = evaluate_library(library, source, robot=robot, config=config, source_options=clip_options)
    if json_out is not None and emit_json(
        json_out, report_dict(clips, config, library=str(library), source=str(source))
    ):
        return
    # Off a terminal rich assumes 80 columns, too narrow for 13 columns: print logs at full width.
    out = console if console.is_terminal else Console(width=170)
    out.print(metrics_table(str(library), clips, summarize(clips)))
    if json_out is not None:
        console.print(f"wrote {json_out}")
