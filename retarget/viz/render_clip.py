"""Render one clip of a motion library to a video file (the `asap-retarget render` command)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.errors import ConfigError, MotionFileError
from retarget.readers.source import SourceOptions
from retarget.viz.motion_input import (
    human_contacts,
    load_robot_motion,
    robot_for_motion,
    source_skeleton_joints,
)
from retarget.viz.motion_view import MotionRenderer, Panel, RenderConfig, display_name
from retarget.viz.video import write_still, write_video


@dataclass(frozen=True)
class RenderSummary:
    """What a render wrote and how long it took."""

    output: Path
    clips: tuple[str, ...]
    """Clip name of each panel."""
    frames: int
    fps: float
    """Frame rate of the output [Hz]."""
    width_px: int
    height_px: int
    seconds: float
    """Wall time including set-up and encoding [s]."""


def make_panel(
    motion: RobotMotion,
    label: str,
    source: Path | None,
    robot: str | None = None,
    source_options: SourceOptions | None = None,
) -> Panel:
    """A panel for `motion`, with its source skeleton and human stance when they are known."""
    robot_name = robot_for_motion(motion, robot)
    skeleton = None
    if source is not None:
        skeleton = source_skeleton_joints(source, motion.fps, robot_name, motion.num_frames, source_options)
    return Panel(motion, robot_name, label, skeleton, human_contacts(motion, skeleton))


def _labels(main: Path, other: Path | None) -> tuple[str, str]:
    a = display_name(main.stem)
    if other is None:
        return a, ""
    b = display_name(other.stem)
    if a == b:  # same clip name in both files: tell them apart by folder
        a, b = f"{main.parent.name}/{a}", f"{other.parent.name}/{b}"
    return a, b


def load_panels(
    library: Path,
    clip: str | None = None,
    source: Path | None = None,
    compare: Path | None = None,
    robot: str | None = None,
    source_options: SourceOptions | None = None,
) -> list[Panel]:
    """The panel of `clip` in `library` and, with `compare`, the same clip from the other library."""
    library = Path(library)
    motion = load_robot_motion(library, clip)
    label, compare_label = _labels(library, None if compare is None else Path(compare))
    panels = [make_panel(motion, label, source, robot, source_options)]
    if compare is not None:
        try:
            other = load_robot_motion(compare, clip or motion.name)
        except MotionFileError:
            if clip is not None:
                raise
            # Our clip key is the source stem; the other library may prefix it (ASAP's keys do).
            other = load_robot_motion(compare, display_name(motion.name))
        panels.append(make_panel(other, compare_label, source, panels[0].robot, source_options))
    return panels


def render_library_clip(
    library: Path,
    output: Path,
    clip: str | None = None,
    source: Path | None = None,
    compare: Path | None = None,
    config: RenderConfig | None = None,
    robot: str | None = None,
    max_frames: int | None = None,
    still_frame: int | None = None,
    source_options: SourceOptions | None = None,
    on_frame: Callable[[int, int], None] | None = None,
) -> RenderSummary:
    """Render `clip` of `library` (beside the same clip of `compare`) to `output`: a video (.mp4,
    .mkv, .mov, animated .webp/.gif) or, for .png, one still (`still_frame`, default the middle).
    `on_frame(done, total)` is called before the first frame and after each one."""
    config = config or RenderConfig()
    start = time.perf_counter()
    panels = load_panels(library, clip, source, compare, robot, source_options)
    with MotionRenderer(panels, config) as renderer:
        fps = renderer.fps
        if Path(output).suffix.lower() == ".png":
            index = renderer.num_frames // 2 if still_frame is None else still_frame
            if not 0 <= index < renderer.num_frames:
                raise ConfigError(f"frame {index} is outside the clip's {renderer.num_frames} frames")
            write_still(output, renderer.render_frame(index))
            written = 1
        else:
            count = renderer.num_frames if max_frames is None else min(max_frames, renderer.num_frames)
            written = write_video(output, _frames(renderer, count, on_frame), renderer.fps)
    return RenderSummary(
        output=Path(output),
        clips=tuple(p.motion.name for p in panels),
        frames=written,
        fps=fps,
        width_px=config.width_px,
        height_px=config.height_px,
        seconds=time.perf_counter() - start,
    )


def _frames(renderer: MotionRenderer, count: int, on_frame: Callable[[int, int], None] | None) -> Iterator[np.ndarray]:
    for i in range(count):
        if on_frame is not None:
            on_frame(i, count)
        yield renderer.render_frame(i)
    if on_frame is not None:
        on_frame(count, count)
