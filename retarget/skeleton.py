"""SMPL forward kinematics on a fixed skeleton (no licensed body model needed).

The built-in skeleton is SMPL's neutral rest skeleton (betas = 0): parent index and rest
offset from the parent in SMPL's native y-up frame, figures from PHC's ``smpl_humanoid.xml``
(see ``retarget/data/PROVENANCE.md``). With a body model (:mod:`retarget.body_model`) the
same FK runs on a shape-aware skeleton.

Kinematics (verified against ASAP's stored joints):
    p_0 = trans + J0                    (J0, the pelvis rest offset, is *not* rotated)
    G_j = G_parent(j) · R(pose_j)       (G_0 = R(pose_0), the root orientation)
    p_j = p_parent(j) + G_parent(j) · offset_j
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from retarget.rotations import rotvec_to_matrix
from retarget.smpl_sequence import NUM_SMPL_JOINTS, SMPL_JOINT_NAMES

_NEUTRAL_CSV = Path(__file__).resolve().parent / "data" / "smpl_neutral_skeleton.csv"


@dataclass(frozen=True)
class Skeleton:
    """A 24-joint SMPL tree."""

    parents: np.ndarray
    """(24,) parent index per joint, -1 for the pelvis."""
    offsets: np.ndarray
    """(24, 3) [m] rest offset from the parent in the SMPL native (y-up) frame; row 0 is J0,
    the pelvis rest position."""

    def rest_joints(self) -> np.ndarray:
        """(24, 3) [m] joint positions in the rest pose (T-pose, y-up)."""
        out = np.zeros((NUM_SMPL_JOINTS, 3))
        for j in range(NUM_SMPL_JOINTS):
            p = self.parents[j]
            out[j] = self.offsets[j] if p < 0 else out[p] + self.offsets[j]
        return out

    @staticmethod
    def from_rest_joints(rest_joints: np.ndarray, parents: np.ndarray) -> Skeleton:
        offsets = np.array(rest_joints, dtype=np.float64, copy=True)
        for j in range(1, NUM_SMPL_JOINTS):
            offsets[j] = rest_joints[j] - rest_joints[parents[j]]
        return Skeleton(parents=np.asarray(parents), offsets=offsets)


@lru_cache(maxsize=1)
def neutral_skeleton() -> Skeleton:
    """SMPL's neutral skeleton (betas = 0), as shipped in ``retarget/data``."""
    with open(_NEUTRAL_CSV, newline="") as fh:
        rows = list(csv.DictReader(fh))
    names = tuple(r["name"] for r in rows)
    if names != SMPL_JOINT_NAMES:
        raise RuntimeError(f"{_NEUTRAL_CSV}: joint order {names} is not SMPL's")
    parents = np.array([int(r["parent"]) for r in rows])
    offsets = np.array([[float(r["offset_x"]), float(r["offset_y"]), float(r["offset_z"])] for r in rows])
    return Skeleton(parents=parents, offsets=offsets)


def smpl_forward_kinematics(
    pose_rotvec: np.ndarray, trans_w: np.ndarray, skeleton: Skeleton | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """World joint positions and orientations of an SMPL pose sequence.

    Args:
        pose_rotvec: (T, 24, 3) [rad] axis-angle per joint (joint 0 = root orientation).
        trans_w: (T, 3) [m] SMPL translation.
        skeleton: defaults to the neutral skeleton.

    Returns:
        joints_w: (T, 24, 3) [m] joint positions in the world.
        rot_w: (T, 24, 3, 3) joint orientations G_j in the world.
    """
    skel = skeleton or neutral_skeleton()
    local = rotvec_to_matrix(pose_rotvec)
    num_frames = local.shape[0]
    rot_w = np.empty_like(local)
    joints_w = np.empty((num_frames, NUM_SMPL_JOINTS, 3))
    rot_w[:, 0] = local[:, 0]
    joints_w[:, 0] = trans_w + skel.offsets[0]
    for j in range(1, NUM_SMPL_JOINTS):
        p = skel.parents[j]
        rot_w[:, j] = rot_w[:, p] @ local[:, j]
        joints_w[:, j] = joints_w[:, p] + rot_w[:, p] @ skel.offsets[j]
    return joints_w, rot_w


def smpl_joint_positions(
    pose_rotvec: np.ndarray, trans_w: np.ndarray, joints: Sequence[int], skeleton: Skeleton | None = None
) -> np.ndarray:
    """(T, len(joints), 3) [m] world positions of `joints` only, as :func:`smpl_forward_kinematics` gives them
    (the same arithmetic), composing only the rotations of their ancestors: the floor levelling reads the feet,
    the trunk and the joints of the body's centre of mass, not the full kinematics of every frame."""
    skel = skeleton or neutral_skeleton()
    chain: set[int] = set()
    for j in joints:
        while j >= 0 and j not in chain:
            chain.add(j)
            j = int(skel.parents[j])
    order = sorted(chain)  # parents come before children in SMPL's joint order
    rotated = [j for j in order if j == 0 or any(skel.parents[c] == j for c in order)]
    local = dict(zip(rotated, np.moveaxis(rotvec_to_matrix(pose_rotvec[:, rotated]), 1, 0), strict=True))
    rot_w = {0: local[0]}
    pos_w = {0: trans_w + skel.offsets[0]}
    for j in order[1:]:
        p = int(skel.parents[j])
        pos_w[j] = pos_w[p] + rot_w[p] @ skel.offsets[j]
        if j in local:
            rot_w[j] = rot_w[p] @ local[j]
    return np.stack([pos_w[j] for j in joints], axis=1)
