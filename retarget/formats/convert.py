"""Convert one motion file into another format: robot formats are converted (robot layout,
rate), human formats (BVH, joint positions, AMASS) are retargeted first."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from retarget.asap_pkl import RobotMotion, motion_to_asap_dict, write_motion_library
from retarget.errors import ConfigError
from retarget.formats.base import FormatOptions, LoadedMotion
from retarget.formats.motion_ops import convert_dof, resample_motion
from retarget.formats.registry import ROBOT_FORMATS, detect_input_format, output_format, read_motions, write_motion
from retarget.readers.bvh import BvhConfig
from retarget.readers.source import VIDEO_FORMATS, SourceOptions, read_clip
from robots.registry import load_robot_spec

# A Unitree-style CSV row holds the full G1's 29 joints; the other formats keep the source robot.
_DEFAULT_ROBOT = {"csv": "g1_29dof"}


@dataclass(frozen=True)
class ConvertConfig:
    """What `convert` does beyond what the two file names say."""

    to: str | None = None
    """Output format (asap, beyondmimic, csv, gmr); None: from the output extension (.pkl → asap)."""
    source_format: str | None = None
    """Input format; None: from the extension and, for .npz/.pkl, the keys inside."""
    robot: str | None = None
    """Output robot; None: the source's (g1_29dof for CSV, and g1_23dof for human inputs)."""
    fps: float | None = None
    """Output rate [Hz]; None: the format's usual rate (beyondmimic 50, csv 30) else the source's."""
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
    dropped_joint_max_rad: float
    """Largest angle of joints the output robot lacks (29 → 23: the wrists), 0 when none."""


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
    in_fmt = config.source_format or detect_input_format(src)
    out_fmt = output_format(dst, config.to)
    spec = ROBOT_FORMATS[out_fmt]
    human = in_fmt not in ROBOT_FORMATS
    if human:
        robot_name = config.robot or _DEFAULT_ROBOT.get(out_fmt, "g1_23dof")
        loaded = _read_human(src, in_fmt, config, robot_name, config.fps or spec.default_fps or 30.0)
    else:
        loaded = read_motions(src, in_fmt, config.options)
    if len(loaded) > 1 and out_fmt != "asap":
        names = ", ".join(lm.motion.name for lm in loaded)
        raise ConfigError(f"{src} holds {len(loaded)} clips ({names}); {out_fmt} holds one: choose one with --clip")
    lost = 0.0
    motions: list[RobotMotion] = []
    target = load_robot_spec(config.robot or _DEFAULT_ROBOT.get(out_fmt) or loaded[0].robot.name)
    for lm in loaded:
        motion, dropped = convert_dof(lm.motion, lm.robot, target)
        lost = max(lost, dropped)
        fps = config.fps or spec.default_fps
        motions.append(resample_motion(motion, fps) if fps else motion)
    options = replace(config.options, source=config.options.source or str(src))
    if len(motions) == 1:
        write_motion(dst, motions[0], target, out_fmt, options)
    else:
        write_motion_library(dst, {m.name: motion_to_asap_dict(m, target) for m in motions})
    return ConvertReport(
        source_format=in_fmt, output_format=out_fmt, robot=target.name, clips=tuple(m.name for m in motions),
        frames=sum(m.num_frames for m in motions), fps=motions[0].fps, retargeted=human, dropped_joint_max_rad=lost,
    )  # fmt: skip
