"""`asap-retarget batch [DIR] -o OUTDIR`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from cli.common import body_model_option, console, err_console, fps_option, make_config, robot_option

DEFAULT_SOURCE_DIR = Path(__file__).resolve().parent.parent / "motions_raw"
DEFAULT_BATCH_OUT = Path("asap_retarget_out")


@click.command()
@click.argument("source_dir", type=click.Path(path_type=Path), required=False)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), default=DEFAULT_BATCH_OUT, show_default=True,
    help="Output folder: one .pkl per clip, motion_library.pkl, summary.json/.csv, config.json.",
)  # fmt: skip
@robot_option
@fps_option
@body_model_option
@click.option("--quiet", is_flag=True, help="No progress bar or table; only the final line.")
def batch(source_dir: Path | None, output: Path, robot: str, fps: float, body_model: Path | None, quiet: bool) -> None:
    """Retarget every .npz under SOURCE_DIR (default: the bundled motions_raw/).

    Exit code 0 when every clip succeeded, 1 when some failed (they are listed in the summary)."""
    from retarget.batch import COMBINED_LIBRARY_NAME, SUMMARY_JSON, find_clips, run_batch

    source_dir = source_dir or DEFAULT_SOURCE_DIR
    config = make_config(robot, fps, body_model)
    sources = find_clips(source_dir)
    if not sources:
        raise click.UsageError(f"no .npz clips under {source_dir}")
    progress = Progress(
        TextColumn("[bold]retarget"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[last]}"),
        TimeRemainingColumn(), console=console, disable=quiet,
    )  # fmt: skip
    with progress:
        task = progress.add_task("clips", total=len(sources), last="")
        records = run_batch(
            sources, output, config,
            on_record=lambda r: progress.update(task, advance=1, last=f"{r.clip} {r.status}"),
        )  # fmt: skip
    failed = [r for r in records if r.status != "ok"]
    if not quiet:
        table = Table(title=f"{len(records)} clips from {source_dir}")
        for col in ("clip", "status", "frames", "fps", "time [s]", "match err [mm]"):
            table.add_column(col, justify="left" if col in ("clip", "status") else "right")
        for r in records:
            table.add_row(
                r.clip, r.status, str(r.frames), f"{r.fps:g}", f"{r.seconds:.2f}",
                "-" if r.status != "ok" else f"{r.mean_match_error_mm:.1f}",
            )  # fmt: skip
        console.print(table)
        for r in failed:
            err_console.print(f"[red]failed[/] {r.error}", highlight=False, soft_wrap=True)
    ok = len(records) - len(failed)
    console.print(
        f"{ok}/{len(records)} clips retargeted; outputs in {output.resolve()} "
        f"(library {COMBINED_LIBRARY_NAME}, summary {SUMMARY_JSON})",
        soft_wrap=True,
    )
    if failed:
        sys.exit(1)
