"""Convert one motion file into another format: robot formats are converted (robot layout,
rate), human formats (BVH, joint positions, AMASS) are retargeted first."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from retarget.asap_pkl import RobotMotion, motion_to_asap_dict, write_motion_library
from retarget.atomic_io import check_output_path, reading_inputs
from retarget.errors import ConfigError
from retarget.formats.asap import folder_mode_key
from retarget.formats.base import FormatOptions, LoadedMotion
from retarget.formats.motion_ops import resample_motion
from retarget.formats.registry import (
    ROBOT_FORMATS,
    detect_input_format,
    output_format,
    prepare_motion,
    read_motions,
    target_robot,
)
from retarget.readers.bvh import BvhConfig
from retarget.readers.source import VIDEO_FORMATS, SourceOptions, read_clip
from robots.registry import load_robot_spec


@dataclass(frozen=True)
class ConvertConfig:
    """What `convert` does beyond what the two file names say."""

    to: str | None = None
    """Output format (asap, beyondmimic, mjlab, holosoma, gmr, csv); None: from the output extension
    (.pkl → asap, .npz → beyondmimic, .csv → csv)."""
    source_format: str | None = None
    """Input format; None: from the extension and, for .npz/.pkl, the keys inside."""
    robot: str | None = None
    """Output robot; None: the consumer's (g1_29dof for all but ASAP), else the source's (g1_23dof for
    human inputs)."""
    fps: float | None = None
    """Output rate [Hz]; None: the format's usual rate (beyondmimic/mjlab/holosoma 50, csv 30) else the source's."""
    options: FormatOptions = field(default_factory=FormatOptions)
    """Format options (CSV quaternion order and rate, clip, grounding)."""
    bvh: BvhConfig = field(default_factory=BvhConfig)
    """BVH interpretation (unit)."""
    source: SourceOptions = field(default_factory=SourceOptions)
    """Video-pose results: person, video frame rate, up axis, floor levelling."""


@dataclass(frozen=True)
class ConvertReport:
    """What was read, what was written."""

    source_format: str
    output_format: str
    robot: str
    clips: tuple[str, ...]
    frames: int
    fps: float
    retargeted: bool
    notes: tuple[str, ...] = ()
    """What the conversion changed that the user should know (23-dof widened to 29, joints dropped),
    one line each."""


def _read_human(path: Path, fmt: str, config: ConvertConfig, robot: str, fps_out: float) -> list[LoadedMotion]:
    from retarget.config import RetargetConfig
    from retarget.pipeline import retarget_sequence
    from retarget.readers.amass import read_amass_npz
    from retarget.readers.bvh_smpl import read_bvh_as_smpl
    from retarget.readers.joint_positions import read_joint_positions_as_smpl

    if fmt == "bvh":
        seq = read_bvh_as_smpl(path, config.bvh)
    elif fmt == "joints":
        seq = read_joint_positions_as_smpl(path)
    elif fmt in VIDEO_FORMATS:
        seq = read_clip(path, config.source)
    else:
        seq = read_amass_npz(path)
    result = retarget_sequence(seq, RetargetConfig(robot=robot, fps_out=fps_out))
    return [LoadedMotion(result.motion, load_robot_spec(robot))]


def convert_file(src: str | Path, dst: str | Path, config: ConvertConfig = ConvertConfig()) -> ConvertReport:
    """Read `src`, bring it to the output robot and rate, write `dst` atomically."""
    src, dst = Path(src), Path(dst)
    with reading_inputs([src]):
        check_output_path(dst)  # not the input, nor a link, folder or device: refused before the work
    in_fmt = config.source_format or detect_input_format(src)
    out_fmt = output_format(dst, config.to)
    spec = ROBOT_FORMATS[out_fmt]
    human = in_fmt not in ROBOT_FORMATS
    if human:
        robot_name = config.robot or (spec.robots[0] if spec.robots else "g1_23dof")
        target_robot(out_fmt, load_robot_spec(robot_name), robot_name)  # an unfit robot fails before the work
        loaded = _read_human(src, in_fmt, config, robot_name, config.fps or spec.default_fps or 30.0)
    else:
        loaded = read_motions(src, in_fmt, config.options)
    if len(loaded) > 1 and out_fmt != "asap":
        names = ", ".join(lm.motion.name for lm in loaded)
        raise ConfigError(f"{src} holds {len(loaded)} clips ({names}); {out_fmt} holds one: choose one with --clip")
    if len(loaded) == 1 and out_fmt == "asap":
        folder_mode_key(dst)  # a name ASAP's folder mode would misread fails before any work
    notes: list[str] = []
    motions: list[RobotMotion] = []
    for lm in loaded:
        motion, target, changed = prepare_motion(lm.motion, lm.robot, out_fmt, config.robot)
        notes += changed
        fps = config.fps or spec.default_fps
        motions.append(resample_motion(motion, fps) if fps else motion)
    options = replace(config.options, source=config.options.source or str(src))
    if len(motions) == 1:
        spec.write(dst, motions[0], target, options)
    else:  # a library: ASAP's library mode takes any key, dots included
        write_motion_library(dst, {m.name: motion_to_asap_dict(m, target) for m in motions})
    return ConvertReport(
        source_format=in_fmt,
        output_format=out_fmt,
        robot=target.name,
        clips=tuple(m.name for m in motions),
        frames=sum(m.num_frames for m in motions),
        fps=motions[0].fps,
        retargeted=human,
        notes=tuple(notes),
    )
