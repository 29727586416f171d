"""`asap-retarget inspect FILE.pkl`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from cli.common import console, err_console


@click.command()
@click.argument("library", type=click.Path(path_type=Path))
def inspect(library: Path) -> None:
    """Show the clips of a motion LIBRARY (.pkl) and validate them (exit 1 if any is invalid); for a
    video-pose result (GVHMR .pt, WHAM .pkl, TRAM .npy or folder), list its tracked people."""
    import numpy as np

    from retarget.inspect_library import inspect_library
    from retarget.readers.source import video_format_of

    fmt = video_format_of(library)
    if fmt is not None:
        _print_tracks(library, fmt)
        return

    reports = inspect_library(library)
    table = Table(title=str(library))
    for col in ("clip", "robot", "frames", "fps", "duration [s]", "joint range [deg]", "limit frames", "verdict"):
        table.add_column(escape(col))  # "[s]" is a unit, not rich markup
    for r in reports:
        table.add_row(
            r.name,
            r.robot or "?",
            str(r.frames),
            f"{r.fps:g}",
            f"{r.duration_s:.2f}",
            f"{np.degrees(r.joint_min_rad.min()):.0f} … {np.degrees(r.joint_max_rad.max()):.0f}",
            str(r.limit_violation_frames),
            r.verdict,
        )
    console.print(table)
    for r in reports:
        for problem in r.problems:
            err_console.print(f"[red]{r.name}[/]: {problem}", highlight=False)
    if any(r.problems for r in reports):
        sys.exit(1)


def _print_tracks(path: Path, fmt: str) -> None:
    import numpy as np

    from retarget.readers.source import read_tracks

    tracks = read_tracks(path, fmt)
    table = Table(title=f"{path} ({fmt})")
    for col in ("person", "frames", "video frames", "missing", "model"):
        table.add_column(col)
    longest = max(sorted(tracks), key=lambda k: tracks[k].num_frames) if tracks else None
    for k, t in sorted(tracks.items()):
        frames = np.unique(t.frame_ids)
        span = f"{frames[0]}–{frames[-1]}" if len(frames) else "—"
        missing = int(frames[-1] - frames[0] + 1 - len(frames)) if len(frames) else 0
        label = f"{k} (default)" if k == longest else str(k)
        table.add_row(label, str(t.num_frames), span, str(missing), t.model_type)
    console.print(table)
