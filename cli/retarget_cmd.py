"""`asap-retarget retarget CLIP.npz -o OUT.pkl`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cli.common import body_model_option, clip_options, console, fps_option, make_config, robot_option


@click.command()
@click.argument("clip", type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), required=True,
    help="Output file; the format follows the extension (.pkl ASAP, .npz BeyondMimic, .csv) unless --format.",
)  # fmt: skip
@click.option(
    "--format", "fmt", type=click.Choice(["asap", "beyondmimic", "csv", "gmr"]), default=None,
    help="Output format (see `asap-retarget convert`); written at --fps.",
)
@click.option(
    "--quat-order", type=click.Choice(["xyzw", "wxyz"]), default=None,
    help="CSV only: root quaternion order (default xyzw, Unitree style).",
)
@robot_option
@fps_option
@body_model_option
@clip_options
def retarget(
    clip: Path, output: Path, fmt: str | None, quat_order: str | None, robot: str, fps: float, body_model: Path | None,
    clip_options: Any,
) -> None:  # fmt: skip
    """Retarget one human CLIP (AMASS .npz, BVH, GVHMR .pt, WHAM .pkl, TRAM .npy or folder) into an ASAP .pkl
    (or another robot motion format)."""
    from retarget.formats import FormatOptions, output_format, write_motion
    from retarget.pipeline import retarget_sequence
    from retarget.readers.source import load_clip
    from robots.registry import load_robot_spec

    config = make_config(robot, fps, body_model, clip_options)
    spec = load_robot_spec(robot)
    output_format(output, fmt)  # an unusable extension fails before the work, not after
    loaded = load_clip(clip, config.source)
    for note in loaded.notes:
        console.print(f"{clip}: {note}", highlight=False)
    result = retarget_sequence(loaded.seq, config)
    write_motion(output, result.motion, spec, fmt, FormatOptions(quat_order=quat_order))
    m = result.motion
    console.print(
        f"{m.name}: {m.num_frames} frames at {m.fps:g} Hz (source {result.source_fps:g} Hz), "
        f"mean matched-point distance {result.mean_match_error_mm:.1f} mm, {result.seconds:.2f} s"
    )
    console.print(f"wrote {output}")
