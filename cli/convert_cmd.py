"""`asap-retarget convert IN -o OUT`: between robot motion formats, or from human mocap by retargeting."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console, err_console
from cli.options import clip_options

# The names of retarget.formats.registry.ROBOT_FORMATS (a test keeps them equal); listed here so
# that `--help` does not import the formats.
ROBOT_FORMAT_NAMES = ("asap", "beyondmimic", "mjlab", "holosoma", "gmr", "csv")
_INPUT_FORMATS = ROBOT_FORMAT_NAMES + ("bvh", "joints", "amass", "gvhmr", "wham", "tram")
_BVH_UNITS = ("m", "cm", "mm", "inch", "cmu")


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("legacy_output", metavar="[OUTPUT]", required=False, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Output file (never the input). The older form `convert SOURCE OUTPUT` still works.",
)
@click.option(
    "--to",
    "to",
    type=click.Choice(ROBOT_FORMAT_NAMES),
    default=None,
    help="Output format, named for its consumer (default from the extension: .pkl asap, .npz beyondmimic, "
    ".csv csv). beyondmimic/mjlab/holosoma/gmr/csv hold the 29-dof G1.",
)
@click.option(
    "--from",
    "source_format",
    type=click.Choice(_INPUT_FORMATS),
    default=None,
    help="Input format (default: from the extension and the keys and shapes inside; needed for a BeyondMimic "
    "or mjlab .npz without joint names).",
)
@click.option(
    "--robot",
    default=None,
    help="Output robot: g1_23dof or g1_29dof (default: the consumer's, g1_29dof; ASAP: the source's).",
)
@click.option(
    "--fps",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Output rate [Hz] (default: beyondmimic/mjlab/holosoma 50, csv 30, else the source's).",
)
@click.option(
    "--quat-order",
    type=click.Choice(("wxyz", "xyzw")),
    default=None,
    help="CSV root quaternion order: xyzw (Unitree, LAFAN1; default when writing) or wxyz (ProtoMotions).",
)
@click.option(
    "--in-fps",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Rate [Hz] of an input CSV without a header (Unitree's are 30).",
)
@click.option("--clip", default=None, help="Clip to take from a multi-clip ASAP library.")
@click.option(
    "--ground", is_flag=True, help="Shift a robot input vertically so its median lowest-sole height is the floor."
)
@click.option(
    "--bvh-unit",
    type=click.Choice(_BVH_UNITS),
    default="cm",
    show_default=True,
    help="Length unit of a BVH input ('cmu': CMU's ASF unit, 1/0.45 inch).",
)
@click.option(
    "--csv-header",
    is_flag=True,
    help="CSV: add a '#' line stating order, rate, robot and joints (Unitree's own CSVs have none).",
)
@click.option("--no-csv-header", is_flag=True, hidden=True)  # the default now; kept so old scripts run
@clip_options
def convert(
    source: Path,
    legacy_output: Path | None,
    output: Path | None,
    to,
    source_format,
    robot,
    fps,
    quat_order,
    in_fps,
    clip,
    ground,
    bvh_unit,
    csv_header,
    no_csv_header,
    clip_options,
) -> None:
    """Convert SOURCE (ASAP .pkl, BeyondMimic/mjlab/holosoma .npz, CSV, GMR .pkl; or BVH / joint positions /
    AMASS / GVHMR, WHAM, TRAM results, which are retargeted) into -o OUTPUT."""
    from retarget.formats.base import FormatOptions
    from retarget.formats.convert import ConvertConfig, convert_file
    from retarget.readers.bvh import BvhConfig

    if output is not None and legacy_output is not None and output != legacy_output:
        raise click.UsageError(f"two outputs given: {legacy_output} and -o {output}")
    output = output or legacy_output
    if output is None:
        raise click.UsageError("missing the output file: -o OUTPUT")
    if csv_header and no_csv_header:
        raise click.UsageError("--csv-header and --no-csv-header contradict each other")
    options = FormatOptions(quat_order=quat_order, csv_fps=in_fps, csv_header=csv_header, clip=clip, ground=ground)
    config = ConvertConfig(
        to=to,
        source_format=source_format,
        robot=robot,
        fps=fps,
        options=options,
        bvh=BvhConfig(unit=bvh_unit),
        source=clip_options,
    )
    report = convert_file(source, output, config)
    how = "retargeted" if report.retargeted else "converted"
    order = f", root quaternion {quat_order or 'xyzw'}" if report.output_format == "csv" else ""
    console.print(
        f"{report.source_format} → {report.output_format} ({how}): {', '.join(report.clips)}, {report.frames} frames "
        f"at {report.fps:g} Hz on {report.robot}{order}"
    )
    for note in report.notes:
        err_console.print(f"[yellow]warning:[/] {note}", highlight=False)
    console.print(f"wrote {output}")
