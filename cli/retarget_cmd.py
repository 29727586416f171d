"""`asap-retarget retarget CLIP.npz -o OUT.pkl`."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import click

from cli.common import body_model_option, console, err_console, fps_option, make_config, robot_option
from cli.convert_cmd import ROBOT_FORMAT_NAMES
from cli.options import clip_options


@click.command()
@click.argument("clip", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Output file; the format follows the extension (.pkl ASAP, .npz BeyondMimic, .csv) unless --format.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(ROBOT_FORMAT_NAMES),
    default=None,
    help="Output format (see `asap-retarget convert`); written at --fps.",
)
@click.option(
    "--quat-order",
    type=click.Choice(["xyzw", "wxyz"]),
    default=None,
    help="CSV only: root quaternion order (default xyzw, Unitree style).",
)
@robot_option
@fps_option
@body_model_option
@clip_options
def retarget(
    clip: Path,
    output: Path,
    fmt: str | None,
    quat_order: str | None,
    robot: str,
    fps: float,
    body_model: Path | None,
    clip_options: Any,
) -> None:
    """Retarget one human CLIP (AMASS .npz, BVH, GVHMR .pt, WHAM .pkl, TRAM .npy or folder) into an ASAP .pkl
    (or another robot motion format)."""
    from retarget.atomic_io import check_output_path
    from retarget.formats import FormatOptions, output_format, write_motion
    from retarget.formats.asap import folder_mode_key
    from retarget.formats.registry import FormatNote
    from retarget.pipeline import retarget_sequence
    from retarget.readers.source import load_clip
    from robots.registry import load_robot_spec

    config = make_config(robot, fps, body_model, clip_options)
    spec = load_robot_spec(robot)
    # Output names that cannot be written fail before the work, not after it: an unusable extension, an ASAP
    # one-clip file whose name ASAP's folder mode would cut at a dot, a folder (the command guard refuses links,
    # devices and the input itself, but lets folders through: other commands write run folders).
    if output_format(output, fmt) == "asap":
        folder_mode_key(output)
    check_output_path(output)
    loaded = load_clip(clip, config.source)
    for line in loaded.notes:
        console.print(f"{clip}: {line}", highlight=False)
    result = retarget_sequence(loaded.seq, config)
    with warnings.catch_warnings(record=True) as notes:  # e.g. a 23-dof motion widened for a 29-dof consumer
        warnings.simplefilter("always", FormatNote)
        write_motion(output, result.motion, spec, fmt, FormatOptions(quat_order=quat_order))
    for note in notes:
        err_console.print(f"[yellow]warning:[/] {note.message}", highlight=False)
    m = result.motion
    console.print(
        f"{m.name}: {m.num_frames} frames at {m.fps:g} Hz (source {result.source_fps:g} Hz), "
        f"mean matched-point distance {result.mean_match_error_mm:.1f} mm, {result.seconds:.2f} s"
    )
    console.print(f"wrote {output}")
