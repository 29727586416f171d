"""What the viewers draw: a robot motion picked from a library, its MuJoCo configurations,
and the source human skeleton recomputed from the clip's SMPL file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from retarget.asap_pkl import (
    RobotMotion,
    asap_dict_to_motion,
    motion_qpos,  # noqa: F401  (re-exported for the viz modules)
    read_motion_library,
)
from retarget.contacts import FootContacts, detect_foot_contacts
from retarget.errors import MotionFileError
from robots.registry import load_robot_spec, robot_for_dof_count

if TYPE_CHECKING:
    from retarget.readers.source import SourceOptions


def _matches(key: str, clip: str) -> bool:
    # ASAP names clips "0-motions_raw_tairantestbed_smpl_<clip>"; accept the bare clip name too.
    return key == clip or key.endswith(("_" + clip, "-" + clip))


def load_robot_motion(path: str | Path, clip: str | None = None) -> RobotMotion:
    """One clip of a motion library (`.pkl`); `clip` may be omitted for a one-clip library."""
    path = Path(path)
    if not path.is_file():
        raise MotionFileError(path, "no such motion library")
    library = read_motion_library(path)
    names = list(library)
    if clip is None:
        if len(names) != 1:
            raise MotionFileError(path, f"holds {len(names)} clips; choose one with --clip: {', '.join(names[:20])}")
        key = names[0]
    else:
        found = [k for k in names if _matches(k, clip)]
        if len(found) != 1:
            what = "no clip" if not found else f"{len(found)} clips"
            raise MotionFileError(path, f"{what} named {clip!r}; valid choices: {', '.join(names[:20])}")
        key = found[0]
    return asap_dict_to_motion(key, library[key])


def robot_for_motion(motion: RobotMotion, robot: str | None = None) -> str:
    """The bundled robot that drives `motion`: the given name, else the one with its joint count."""
    if robot is not None:
        spec = load_robot_spec(robot)
        if spec.num_dof != motion.dof_pos.shape[1]:
            raise MotionFileError(
                None, f"clip {motion.name!r} has {motion.dof_pos.shape[1]} joints, {robot} {spec.num_dof}"
            )
        return robot
    return robot_for_dof_count(motion.dof_pos.shape[1]).name


def source_skeleton_joints(
    source: str | Path, fps: float, robot_name: str, num_frames: int, options: SourceOptions | None = None
) -> np.ndarray:
    """(num_frames, 24, 3) [m] the source clip's SMPL joints, scaled to the robot as the retargeter
    scales them (per-limb factors, root path by the leg ratio), standing on z = 0.

    The clip is resampled to the motion's rate; a length that differs by rounding is padded
    with the last frame or cut.
    """
    from retarget.readers.source import SourceOptions, read_clip
    from retarget.resample import resample_sequence
    from retarget.scaling import compute_limb_scales, scale_joints
    from retarget.skeleton import neutral_skeleton, smpl_forward_kinematics
    from robots.mujoco_model import build_mujoco_model

    seq = resample_sequence(read_clip(source, options or SourceOptions()), fps)
    skeleton = neutral_skeleton()
    joints_w, _ = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w, skeleton)
    robot = load_robot_spec(robot_name)
    joints_w = scale_joints(joints_w, skeleton.parents, compute_limb_scales(skeleton, build_mujoco_model(robot), robot))
    # Stand the skeleton on the floor by its own grounded foot joints (the stance detector's floor).
    joints_w = joints_w - np.array([0.0, 0.0, detect_foot_contacts(joints_w, fps).floor_z_m])
    if len(joints_w) >= num_frames:
        return joints_w[:num_frames]
    if len(joints_w) < num_frames - 2:
        raise MotionFileError(
            source, f"has {len(joints_w)} frames at {fps:g} Hz, the motion {num_frames}: not its source"
        )
    return np.concatenate([joints_w, np.repeat(joints_w[-1:], num_frames - len(joints_w), axis=0)])


def human_contacts(motion: RobotMotion, source_joints_w: np.ndarray | None) -> FootContacts | None:
    """Human stance from the source skeleton, else from the joints stored in the library (None if absent)."""
    joints = source_joints_w
    if joints is None and np.abs(motion.human_joints_w).max() > 0:
        joints = motion.human_joints_w
    return None if joints is None else detect_foot_contacts(joints, motion.fps)
