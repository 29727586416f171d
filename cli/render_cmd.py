"""`asap-retarget render FILE.pkl -o OUT.mp4`."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console
from cli.options import clip_options, robot_option
from cli.progress import progress_bar


@click.command()
@click.argument("library", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Video file (.mp4, .mkv, .mov, .webp, .gif) or one still (.png).",
)
@click.option("--clip", default=None, help="Clip name (required when the library holds several clips).")
@click.option(
    "--source",
    type=click.Path(path_type=Path),
    default=None,
    help="The clip's source (SMPL .npz or a video-pose result): draws the human skeleton and its stance.",
)
@click.option(
    "--compare",
    type=click.Path(path_type=Path),
    default=None,
    help="Another .pkl of the same clip, shown side by side (e.g. the official ASAP retarget).",
)
@click.option("--width", type=int, default=640, show_default=True, help="Image width [px] (all panels).")
@click.option("--height", type=int, default=480, show_default=True, help="Image height [px].")
@click.option("--fps", type=float, default=None, help="Output frame rate [Hz]; default: the motion's.")
@click.option(
    "--camera",
    default="three_quarter",
    show_default=True,
    help="front, three_quarter, side, back, top, or 'AZ,EL[,DIST]' (deg, deg, m).",
)
@click.option(
    "--skeleton-offset",
    type=float,
    default=0.9,
    show_default=True,
    help="Skeleton's sideways offset from the robot [m]; 0 draws it over the robot.",
)
@robot_option(detect=True)
@click.option(
    "--frame", "still_frame", type=int, default=None, help="With -o X.png: the frame to draw (default: the middle)."
)
@click.option("--frames", "frames", type=click.IntRange(min=1), default=None, help="Render only the first N frames.")
@clip_options
def render(
    library,
    output,
    clip,
    source,
    compare,
    width,
    height,
    fps,
    camera,
    skeleton_offset,
    robot,
    still_frame,
    frames,
    clip_options,
) -> None:
    """Render a clip of a motion LIBRARY (.pkl) with MuJoCo offscreen (no display or GPU needed)."""
    from retarget.viz import RenderConfig, parse_camera, render_library_clip

    config = RenderConfig(
        width_px=width, height_px=height, fps=fps, camera=parse_camera(camera), skeleton_offset_m=skeleton_offset
    )
    with progress_bar("render", "frames") as update:
        summary = render_library_clip(
            library,
            output,
            clip,
            source,
            compare,
            config,
            robot,
            frames,
            still_frame,
            source_options=clip_options,
            on_frame=lambda done, total: update(done, total, str(output)),
        )
    console.print(
        f"wrote {summary.output}: {summary.frames} frames at {summary.fps:g} Hz, "
        f"{summary.width_px}x{summary.height_px}, "
        f"{len(summary.clips)} panel(s), {summary.seconds:.1f} s ({summary.frames / summary.seconds:.1f} frames/s)",
        highlight=False,
    )
