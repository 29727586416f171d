"""Turn a source skeleton's motion (world joint positions, optionally joint rotations) into an
SMPL pose sequence, so BVH mocap and joint-position arrays flow through the same retargeting
as SMPL clips.

Method (direction matching on SMPL's neutral skeleton):
* Every SMPL joint j with a primary child c is mapped to a source *segment* (two source joints).
  Its world rotation G_j is chosen so that the SMPL bone j → c points exactly along that segment:
  G_j = swing(G_ref · r̂_c → d̂) · G_ref, where r̂_c is the bone's rest direction and d̂ the
  segment's direction in the frame. ``swing`` is the minimal rotation between two directions.
* Twist (rotation about the bone, which positions cannot tell) comes from G_ref: the source's own
  global rotation of the joint that drives the segment when the source has rotations (BVH), else
  the already-solved SMPL parent (no twist relative to the parent: the minimal-rotation choice).
* The pelvis takes the source root's rotation (BVH), or the frame spanned by the hip line and the
  pelvis → spine direction (positions only; the chest likewise from the thorax line and the neck).
  Leaf joints (toes, head, hands) take G_ref.
* Lengths are SMPL's: only directions are taken from the source. The root path is scaled by
  SMPL leg length / source leg length so strides and pelvis height stay proportional to the legs
  the retargeter sees, and the SMPL hip midpoint follows the source hip midpoint. The scaling is
  about the world origin, so a floor at z = 0 stays at z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.rotations import matrix_to_quat, quat_to_rotvec
from retarget.skeleton import Skeleton, neutral_skeleton
from retarget.smpl_sequence import NUM_SMPL_JOINTS, SmplSequence

# SMPL joint → the child whose bone direction its rotation sets (the chest follows the neck).
PRIMARY_CHILD: dict[int, int] = {
    1: 4,
    2: 5,
    3: 6,
    4: 7,
    5: 8,
    6: 9,
    7: 10,
    8: 11,
    9: 12,
    12: 15,
    13: 16,
    14: 17,
    16: 18,
    17: 19,
    18: 20,
    19: 21,
    20: 22,
    21: 23,
}


@dataclass(frozen=True)
class BoneSource:
    """Where one SMPL joint's rotation comes from in the source skeleton."""

    twist_from: str | None
    """Source joint whose global rotation is the twist reference; None: the SMPL parent's rotation."""
    segment: tuple[str, str] | None
    """(from, to) source joints the SMPL bone joint → primary child must point along; None: no swing."""


@dataclass(frozen=True)
class SkeletonMap:
    """How a source skeleton maps onto SMPL's 24 joints."""

    bones: dict[int, BoneSource]
    """SMPL joint index → its source (joints not listed take their parent's rotation)."""
    root: str
    """Source root joint (its rotation orients the SMPL pelvis when the source has rotations)."""
    left_leg: tuple[str, str, str]
    """Source (hip, knee, ankle), left side."""
    right_leg: tuple[str, str, str]
    """Source (hip, knee, ankle), right side."""
    spine: str
    """Source joint above the pelvis, for the pelvis frame when the source has no rotations."""
    chest_frame: tuple[str, str, str, str] | None = None
    """Source (chest, neck, left thorax, right thorax): without rotations, the SMPL chest takes the
    frame of the thorax line and the chest → neck direction, which places both shoulders."""


def swing_rotation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(T, 3, 3) minimal rotations taking unit vectors a (T, 3) onto unit vectors b (T, 3)."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    axis = np.cross(a, b)
    sin = np.linalg.norm(axis, axis=-1)
    cos = np.sum(a * b, axis=-1)
    # Opposite vectors: any axis perpendicular to a works; take the one closest to a × x or a × y.
    fallback = np.cross(a, np.where(np.abs(a[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]))
    axis = np.where((sin < 1e-12)[:, None], fallback, axis)
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    angle = np.arctan2(sin, cos)
    k = np.zeros((len(a), 3, 3))
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    k -= np.transpose(k, (0, 2, 1))
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _frame(x: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(…, 3, 3) orthonormal frame with columns x̂, up ⟂ x̂, x̂ × up."""
    x = _unit(x)
    y = _unit(up - np.sum(up * x, axis=-1, keepdims=True) * x)
    return np.stack([x, y, np.cross(x, y)], axis=-1)


def leg_length_m(positions_w: np.ndarray, names: tuple[str, ...], leg: tuple[str, str, str]) -> float:
    """Mean over frames of hip→knee + knee→ankle [m] in the source."""
    hip, knee, ankle = (positions_w[:, names.index(n)] for n in leg)
    return float(np.mean(np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)))


def _check_not_degenerate(
    positions_w: np.ndarray, names: tuple[str, ...], skeleton_map: SkeletonMap, source_path: Path | None
) -> None:
    """Coincident hips or zero-length legs give no body frame and no scale: refuse them in one line."""
    idx = {n: i for i, n in enumerate(names)}
    hip_width_m = np.linalg.norm(
        positions_w[:, idx[skeleton_map.left_leg[0]]] - positions_w[:, idx[skeleton_map.right_leg[0]]], axis=-1
    )
    legs_m = [leg_length_m(positions_w, names, leg) for leg in (skeleton_map.left_leg, skeleton_map.right_leg)]
    bad = np.flatnonzero(hip_width_m < 1e-4)
    if len(bad) or not min(legs_m) > 1e-3:
        where = f"the hips coincide in {len(bad)} frame(s), first {bad[0]}" if len(bad) else "a leg has zero length"
        raise MotionFileError(source_path, f"degenerate joint positions: {where}; check the file's joints and units")


def smpl_from_joints(
    name: str,
    positions_w: np.ndarray,
    names: tuple[str, ...],
    fps: float,
    skeleton_map: SkeletonMap,
    rest_to_world: np.ndarray | None = None,
    source_path: Path | None = None,
    skeleton: Skeleton | None = None,
) -> SmplSequence:
    """SMPL axis-angle poses and translation reproducing the source's segment directions.

    Args:
        positions_w: (T, J, 3) [m] source joints in the z-up world.
        names: the J source joint names.
        rest_to_world: (T, J, 3, 3) source global rotations mapping a joint's rest-frame vector
            (axes as SMPL's rest frame: y up, x left, z forward) to the world; None for positions only.
    """
    skel = skeleton or neutral_skeleton()
    idx = {n: i for i, n in enumerate(names)}
    num_frames = positions_w.shape[0]
    _check_not_degenerate(positions_w, names, skeleton_map, source_path)
    glob = np.empty((num_frames, NUM_SMPL_JOINTS, 3, 3))
    if rest_to_world is not None:
        glob[:, 0] = rest_to_world[:, idx[skeleton_map.root]]
    else:
        lhip, rhip = positions_w[:, idx[skeleton_map.left_leg[0]]], positions_w[:, idx[skeleton_map.right_leg[0]]]
        up_src = positions_w[:, idx[skeleton_map.spine]] - 0.5 * (lhip + rhip)
        rest = _frame(skel.offsets[1] - skel.offsets[2], skel.offsets[3] - 0.5 * (skel.offsets[1] + skel.offsets[2]))
        glob[:, 0] = _frame(lhip - rhip, up_src) @ rest.T
    for j in range(1, NUM_SMPL_JOINTS):
        parent = skel.parents[j]
        src = skeleton_map.bones.get(j, BoneSource(None, None))
        if j == 9 and rest_to_world is None and skeleton_map.chest_frame is not None:
            chest, neck, left, right = (positions_w[:, idx[n]] for n in skeleton_map.chest_frame)
            off = skel.offsets
            glob[:, j] = _frame(left - right, neck - chest) @ _frame(off[13] - off[14], off[12]).T
            continue
        if src.twist_from is not None and rest_to_world is not None:
            ref = rest_to_world[:, idx[src.twist_from]]
        else:
            ref = glob[:, parent]
        if src.segment is None or j not in PRIMARY_CHILD:
            glob[:, j] = ref
            continue
        seg = positions_w[:, idx[src.segment[1]]] - positions_w[:, idx[src.segment[0]]]
        rest_dir = skel.offsets[PRIMARY_CHILD[j]] / np.linalg.norm(skel.offsets[PRIMARY_CHILD[j]])
        current = ref @ rest_dir
        # A zero-length segment in some frame (coincident joints) gives no direction: keep ref.
        target = np.where((np.linalg.norm(seg, axis=-1) < 1e-9)[:, None], current, seg)
        glob[:, j] = swing_rotation(current, target) @ ref
    local = np.empty_like(glob)
    local[:, 0] = glob[:, 0]
    for j in range(1, NUM_SMPL_JOINTS):
        local[:, j] = np.transpose(glob[:, skel.parents[j]], (0, 2, 1)) @ glob[:, j]
    pose = quat_to_rotvec(matrix_to_quat(local))
    # Root: SMPL hip midpoint on the scaled source hip midpoint; p_pelvis = trans + J0.
    smpl_leg = 0.5 * sum(np.linalg.norm(skel.offsets[k]) + np.linalg.norm(skel.offsets[k + 3]) for k in (4, 5))
    src_leg = 0.5 * (
        leg_length_m(positions_w, names, skeleton_map.left_leg)
        + leg_length_m(positions_w, names, skeleton_map.right_leg)
    )
    mid_hips = 0.5 * (positions_w[:, idx[skeleton_map.left_leg[0]]] + positions_w[:, idx[skeleton_map.right_leg[0]]])
    pelvis = (smpl_leg / src_leg) * mid_hips - glob[:, 0] @ (0.5 * (skel.offsets[1] + skel.offsets[2]))
    return SmplSequence(
        name=name, pose_rotvec=pose, trans_w=pelvis - skel.offsets[0], fps=float(fps), source_path=source_path
    )
