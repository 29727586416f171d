"""The human side of the metrics: the SOURCE SMPL clip, resampled to the robot motion's rate.

Metrics compare the robot with the human it was made from, not with any solver's own
(scaled, offset) targets: joints come from SMPL forward kinematics of the source `.npz`,
stance from :func:`retarget.contacts.detect_foot_contacts` on those joints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.contacts import ContactConfig, detect_foot_contacts
from retarget.errors import MotionFileError
from retarget.readers.source import CLIP_SUFFIXES, SourceOptions, read_clip
from retarget.readers.tram import is_tram_folder
from retarget.resample import resample_sequence
from retarget.skeleton import smpl_forward_kinematics

# ASAP's motion-library keys prefix the source stem, e.g. "0-motions_raw_tairantestbed_smpl_<stem>".
_ASAP_KEY_PREFIX = re.compile(r"^\d+-motions_raw_tairantestbed_smpl_")


@dataclass(frozen=True)
class HumanReference:
    """Source-clip joints and stance, frame-aligned with a robot motion."""

    joints_w: np.ndarray
    """(T, 24, 3) [m] SMPL joints in the source world (z-up, unscaled)."""
    stance: np.ndarray
    """(T, 2) bool, human foot stance (0 left, 1 right)."""
    fps: float
    """Frame rate [Hz]."""

    @property
    def num_frames(self) -> int:
        return int(self.joints_w.shape[0])

    @staticmethod
    def from_joints(joints_w: np.ndarray, fps: float, contacts: ContactConfig = ContactConfig()) -> HumanReference:
        joints_w = np.asarray(joints_w, dtype=np.float64)
        stance = detect_foot_contacts(joints_w, fps, contacts).stance
        return HumanReference(joints_w=joints_w, stance=stance, fps=float(fps))

    def frames(self, count: int) -> HumanReference:
        """The first `count` frames."""
        return HumanReference(self.joints_w[:count], self.stance[:count], self.fps)


def load_human_reference(
    path: str | Path, fps: float, contacts: ContactConfig = ContactConfig(), source: SourceOptions | None = None
) -> HumanReference:
    """Read a human clip (as the retargeter reads it), resample it to `fps` [Hz] and run SMPL FK (neutral skeleton)."""
    seq = resample_sequence(read_clip(path, source or SourceOptions()), fps)
    joints_w, _ = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    return HumanReference.from_joints(joints_w, seq.fps, contacts)


def source_stem(clip_name: str) -> str:
    """The source file stem a library key refers to (ASAP's key prefix stripped)."""
    return _ASAP_KEY_PREFIX.sub("", clip_name)


def find_source_clip(clip_name: str, source: str | Path) -> Path:
    """The source `.npz` of a library clip: `source` itself when it is a file, else the file in the
    folder whose stem is the clip name, the clip name without ASAP's key prefix, or the longest stem the
    clip name ends with (after a separator)."""
    source = Path(source)
    if source.is_file() or is_tram_folder(source):
        return source
    if not source.is_dir():
        raise MotionFileError(source, "source does not exist; expected an AMASS .npz clip or a folder of them")
    stems = {p.stem: p for p in sorted(source.iterdir()) if p.suffix.lower() in CLIP_SUFFIXES}
    for candidate in (clip_name, source_stem(clip_name)):
        if candidate in stems:
            return stems[candidate]
    suffixes = [s for s in stems if clip_name.endswith(s) and clip_name[-len(s) - 1 : -len(s)] in ("_", "-", "/")]
    if suffixes:
        return stems[max(suffixes, key=len)]
    raise MotionFileError(
        source, f"no source clip for {clip_name!r}: expected {source_stem(clip_name)}.npz in this folder"
    )
