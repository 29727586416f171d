"""Shared pieces of the CLI: consoles, the common options, and config assembly."""

from __future__ import annotations

import functools
from collections.abc import Callable
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


_CLIP_OPTIONS = (
    click.option("--person", type=click.IntRange(min=0), default=None,
                 help="Video-pose results with several people: the track id (default: the longest track; "
                 "`inspect FILE` lists them)."),
    click.option("--video-fps", type=click.FloatRange(min=0, min_open=True), default=None,
                 help="Frame rate of the video behind a WHAM/TRAM result [Hz] (not stored in them; default 30)."),
    click.option("--up-axis", type=click.Choice(["y", "z"]), default=None,
                 help="World up axis of a video-pose result (default: the estimator's, y for GVHMR, WHAM, TRAM)."),
    click.option("--level-floor/--no-level-floor", default=True, show_default=True,
                 help="Estimate the floor from the planted feet; level and ground a tilted clip."),
    click.option("--smooth-hz", type=click.FloatRange(min=0), default=None,
                 help="Low-pass cut-off against video jitter [Hz] (default: 6 for video-pose results, off for "
                 "other clips; 0: off)."),
)  # fmt: skip


def clip_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """How a human clip is read (--person, --video-fps, --up-axis, --level-floor, --smooth-hz), passed to the
    command as one `clip_options` argument (a SourceOptions)."""

    @functools.wraps(func)
    def wrapper(*args: Any, person: int | None, video_fps: float | None, up_axis: str | None, level_floor: bool,
                smooth_hz: float | None, **kwargs: Any) -> Any:  # fmt: skip
        from retarget.readers.source import SourceOptions

        options = SourceOptions(person=person, video_fps=video_fps, up_axis=up_axis, level_floor=level_floor,
                                smooth_hz=smooth_hz)  # fmt: skip
        return func(*args, clip_options=options, **kwargs)

    for option in reversed(_CLIP_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
