"""`asap-retarget report OUTDIR`."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console, err_console
from cli.progress import progress_bar


@click.command()
@click.argument("out_dir", type=click.Path(path_type=Path))
@click.option(
    "--preview-frames",
    type=click.IntRange(min=0),
    default=16,
    show_default=True,
    help="Frames of each clip's animated preview (0: none).",
)
@click.option(
    "--plots/--no-plots", default=True, show_default=True, help="Joint-angle, foot-height and foot-tilt plots per clip."
)
@click.option(
    "--videos/--no-videos", default=False, show_default=True, help="Render a full 640x480 video per clip (slow)."
)
@click.option("--sort-by", default=None, help="Summary field ordering clips within a verdict, largest first.")
def report(out_dir, preview_frames, plots, videos, sort_by) -> None:
    """Write OUT_DIR/report.html for a batch output folder (reads OUT_DIR/summary.json)."""
    from retarget.viz.report import ReportConfig, build_report

    config = ReportConfig(preview_frames=preview_frames, plots=plots, videos=videos, sort_metric=sort_by)
    with progress_bar("report", "clips") as update:
        summary = build_report(out_dir, config, on_clip=update)
    for problem in summary.problems:
        err_console.print(f"[yellow]warning:[/] {problem}", highlight=False)
    console.print(f"wrote {summary.html}: {summary.clips} clips, {summary.previews} previews", highlight=False)
