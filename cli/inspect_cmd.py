"""`asap-retarget inspect FILE.pkl`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from cli.common import console, err_console


@click.command()
@click.argument("library", type=click.Path(path_type=Path))
def inspect(library: Path) -> None:
    """Show the clips of a motion LIBRARY (.pkl) and validate them (exit 1 if any is invalid)."""
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
