"""The one in-memory type for human motion: an SMPL-family pose sequence."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

SMPL_JOINT_NAMES: tuple[str, ...] = (
    "Pelvis",
    "L_Hip",
    "R_Hip",
    "Torso",
    "L_Knee",
    "R_Knee",
    "Spine",
    "L_Ankle",
    "R_Ankle",
    "Chest",
    "L_Toe",
    "R_Toe",
    "Neck",
    "L_Thorax",
    "R_Thorax",
    "Head",
    "L_Shoulder",
    "R_Shoulder",
    "L_Elbow",
    "R_Elbow",
    "L_Wrist",
    "R_Wrist",
    "L_Hand",
    "R_Hand",
)
NUM_SMPL_JOINTS = 24


@dataclass(frozen=True)
class SmplSequence:
    """An SMPL pose sequence in the AMASS world frame (z-up, metres, radians).

    SMPL-H and SMPL-X sources are reduced to the 24 SMPL joints: their 21 body joints map
    one to one, the two SMPL hand joints get identity rotations, fingers/face are dropped.
    """

    name: str
    """Clip name (the source file's stem)."""
    pose_rotvec: np.ndarray
    """(T, 24, 3) [rad] axis-angle per SMPL joint; joint 0 is the root orientation in the
    world, the others are relative to their parent joint."""
    trans_w: np.ndarray
    """(T, 3) [m] SMPL translation in the world (z-up). The pelvis is at trans + J0."""
    fps: float
    """Frame rate [Hz] (may be non-integer)."""
    betas: np.ndarray = field(default_factory=lambda: np.zeros(10))
    """Body shape coefficients (any length); used only with a body model."""
    gender: str = "neutral"
    model_type: str = "smpl"
    """Layout of the source file: 'smpl', 'smplh' or 'smplx'."""
    source_path: Path | None = None

    @property
    def num_frames(self) -> int:
        return int(self.pose_rotvec.shape[0])

    @property
    def duration_s(self) -> float:
        """Time between the first and last frame [s]."""
        return (self.num_frames - 1) / self.fps

    def with_frames(self, pose_rotvec: np.ndarray, trans_w: np.ndarray, fps: float) -> SmplSequence:
        return replace(self, pose_rotvec=pose_rotvec, trans_w=trans_w, fps=fps)
