"""Shared pieces of the CLI: consoles, the common options, and config assembly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

robot_option = click.option("--robot", default="g1_23dof", show_default=True, help="Bundled robot description.")
fps_option = click.option(
    "--fps", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True, help="Output rate [Hz]."
)
body_model_option = click.option(
    "--body-model",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder with your SMPL/SMPL-H/SMPL-X model files (uses smplx); default: built-in neutral skeleton.",
)


def make_config(robot: str, fps: float, body_model: Path | None, source: Any = None):
    from retarget.config import RetargetConfig
    from retarget.readers.source import SourceOptions

    return RetargetConfig(robot=robot, fps_out=fps, body_model_dir=None if body_model is None else str(body_model),
                          source=source or SourceOptions())  # fmt: skip

