"""`asap-retarget retarget CLIP.npz -o OUT.pkl`."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import body_model_option, console, fps_option, make_config, robot_option


@click.command()
@click.argument("clip", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Output .pkl path.")
@robot_option
@fps_option
@body_model_option
def retarget(clip: Path, output: Path, robot: str, fps: float, body_model: Path | None) -> None:
    """Retarget one AMASS-layout CLIP (.npz) into an ASAP .pkl."""
    from retarget.asap_pkl import motion_to_asap_dict, write_motion_library
    from retarget.pipeline import retarget_file
    from robots.registry import load_robot_spec

    config = make_config(robot, fps, body_model)
    spec = load_robot_spec(robot)
    result = retarget_file(clip, config)
    write_motion_library(output, {result.motion.name: motion_to_asap_dict(result.motion, spec)})
    m = result.motion
    console.print(
        f"{m.name}: {m.num_frames} frames at {m.fps:g} Hz (source {result.source_fps:g} Hz), "
        f"mean matched-point distance {result.mean_match_error_mm:.1f} mm, {result.seconds:.2f} s"
    )
    console.print(f"wrote {output}")
