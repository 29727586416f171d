"""The `asap-retarget` command line: one Click group, one library call per command."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from retarget.errors import AsapRetargetError

DEFAULT_SOURCE_DIR = Path(__file__).resolve().parent.parent / "motions_raw"
DEFAULT_BATCH_OUT = Path("asap_retarget_out")

console = Console(stderr=False)
err_console = Console(stderr=True)


class _Group(click.Group):
    """Turns the package's own errors into a one-line message and exit code 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except AsapRetargetError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            sys.exit(1)


def _config(robot: str, fps: float, body_model: Path | None):
    from retarget.config import RetargetConfig

    return RetargetConfig(robot=robot, fps_out=fps, body_model_dir=None if body_model is None else str(body_model))


_robot_option = click.option("--robot", default="g1_23dof", show_default=True, help="Bundled robot description.")
_fps_option = click.option(
    "--fps", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True, help="Output rate [Hz]."
)
_body_model_option = click.option(
    "--body-model",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder with your SMPL/SMPL-H/SMPL-X model files (uses smplx); default: built-in neutral skeleton.",
)


@click.group(cls=_Group)
@click.version_option(package_name="asap-retarget")
def main() -> None:
    """Retarget human SMPL motion onto the Unitree G1 and write ASAP motion libraries."""


@main.command()
@click.argument("clip", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Output .pkl path.")
@_robot_option
@_fps_option
@_body_model_option
def retarget(clip: Path, output: Path, robot: str, fps: float, body_model: Path | None) -> None:
    """Retarget one AMASS-layout CLIP (.npz) into an ASAP .pkl."""
    from retarget.asap_pkl import motion_to_asap_dict, write_motion_library
    from retarget.pipeline import retarget_file
    from robots.registry import load_robot_spec

    config = _config(robot, fps, body_model)
    spec = load_robot_spec(robot)
    result = retarget_file(clip, config)
    write_motion_library(output, {result.motion.name: motion_to_asap_dict(result.motion, spec)})
    m = result.motion
    console.print(
        f"{m.name}: {m.num_frames} frames at {m.fps:g} Hz (source {result.source_fps:g} Hz), "
        f"mean matched-point distance {result.mean_match_error_mm:.1f} mm, {result.seconds:.2f} s"
    )
    console.print(f"wrote {output}")


@main.command()
@click.argument("source_dir", type=click.Path(path_type=Path), required=False)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), default=DEFAULT_BATCH_OUT, show_default=True,
    help="Output folder: one .pkl per clip, motion_library.pkl, summary.json/.csv, config.json.",
)  # fmt: skip
@_robot_option
@_fps_option
@_body_model_option
@click.option("--quiet", is_flag=True, help="No progress bar or table; only the final line.")
def batch(source_dir: Path | None, output: Path, robot: str, fps: float, body_model: Path | None, quiet: bool) -> None:
    """Retarget every .npz under SOURCE_DIR (default: the bundled motions_raw/)."""
    from retarget.batch import COMBINED_LIBRARY_NAME, SUMMARY_JSON, find_clips, run_batch

    source_dir = source_dir or DEFAULT_SOURCE_DIR
    config = _config(robot, fps, body_model)
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
            table.add_column(col, justify="right" if col not in ("clip", "status") else "left")
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
        f"(library {COMBINED_LIBRARY_NAME}, summary {SUMMARY_JSON})"
    )
    if failed:
        sys.exit(1)


@main.command()
@click.argument("library", type=click.Path(path_type=Path))
def inspect(library: Path) -> None:
    """Show the clips of a motion LIBRARY (.pkl) and validate them."""
    import numpy as np

    from retarget.inspect_library import inspect_library

    reports = inspect_library(library)
    table = Table(title=str(library))
    for col in ("clip", "robot", "frames", "fps", "duration [s]", "joint range [deg]", "limit frames", "verdict"):
        table.add_column(col)
    for r in reports:
        table.add_row(
            r.name, r.robot or "?", str(r.frames), f"{r.fps:g}", f"{r.duration_s:.2f}",
            f"{np.degrees(r.joint_min_rad.min()):.0f} … {np.degrees(r.joint_max_rad.max()):.0f}",
            str(r.limit_violation_frames), r.verdict,
        )  # fmt: skip
    console.print(table)
    for r in reports:
        for problem in r.problems:
            err_console.print(f"[red]{r.name}[/]: {problem}", highlight=False)
    if any(r.problems for r in reports):
        sys.exit(1)
