"""`asap-retarget convert IN OUT`: between robot motion formats, or from human mocap by retargeting."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import clip_options, console, err_console

_ROBOT_FORMATS = ("asap", "beyondmimic", "csv", "gmr")
_INPUT_FORMATS = _ROBOT_FORMATS + ("bvh", "joints", "amass", "gvhmr", "wham", "tram")
_BVH_UNITS = ("m", "cm", "mm", "inch", "cmu")


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("output", type=click.Path(path_type=Path))
@click.option("--to", "to", type=click.Choice(_ROBOT_FORMATS), default=None,
              help="Output format (default: from OUTPUT's extension; .pkl means asap).")
@click.option("--from", "source_format", type=click.Choice(_INPUT_FORMATS), default=None,
              help="Input format (default: from the extension and the keys inside).")
@click.option("--robot", default=None, help="Output robot: g1_23dof or g1_29dof (default: the source's; CSV: g1_29dof).")
@click.option("--fps", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Output rate [Hz] (default: beyondmimic 50, csv 30, else the source's).")
@click.option("--quat-order", type=click.Choice(("wxyz", "xyzw")), default=None,
              help="CSV root quaternion order: xyzw (Unitree, LAFAN1; default when writing) or wxyz (ProtoMotions).")
@click.option("--in-fps", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Rate [Hz] of an input CSV without a header (Unitree's are 30).")
@click.option("--clip", default=None, help="Clip to take from a multi-clip ASAP library.")
@click.option("--ground", is_flag=True, help="Shift a robot input vertically so its median lowest-sole height is the floor.")
@click.option("--bvh-unit", type=click.Choice(_BVH_UNITS), default="cm", show_default=True,
              help="Length unit of a BVH input ('cmu': CMU's ASF unit, 1/0.45 inch).")
@click.option("--no-csv-header", is_flag=True, help="Write a bare CSV (no '#' lines stating the conventions).")
@clip_options
def convert(source: Path, output: Path, to, source_format, robot, fps, quat_order, in_fps, clip, ground, bvh_unit,
            no_csv_header, clip_options) -> None:  # fmt: skip
    """Convert SOURCE (ASAP .pkl, BeyondMimic .npz, CSV, GMR .pkl; or BVH / joint positions / AMASS,
    which are retargeted) into OUTPUT."""
    from retarget.formats.base import FormatOptions
    from retarget.formats.convert import ConvertConfig, convert_file
    from retarget.readers.bvh import BvhConfig

    options = FormatOptions(quat_order=quat_order, csv_fps=in_fps, csv_header=not no_csv_header, clip=clip, ground=ground)
    config = ConvertConfig(to=to, source_format=source_format, robot=robot, fps=fps, options=options,
                           bvh=BvhConfig(unit=bvh_unit), source=clip_options)  # fmt: skip
    report = convert_file(source, output, config)
    how = "retargeted" if report.retargeted else "converted"
    order = f", root quaternion {quat_order or 'xyzw'}" if report.output_format == "csv" else ""
    console.print(
        f"{report.source_format} → {report.output_format} ({how}): {', '.join(report.clips)}, {report.frames} frames "
        f"at {report.fps:g} Hz on {report.robot}{order}"
    )
    if report.dropped_joint_max_rad > 1e-6:
        err_console.print(f"[yellow]warning:[/] dropped joints the output robot lacks (max |q| = "
                          f"{report.dropped_joint_max_rad:.3f} rad)")  # fmt: skip
    console.print(f"wrote {output}")
