"""BVH mocap → SMPL pose sequence, through a documented joint map (CMU's skeleton built in).

CMU joint map (``cmu_01_01.bvh`` and every CMU ASF→BVH conversion with the same 31 joints).
Each SMPL joint's bone follows the CMU segment listed, with twist from the CMU joint listed
(the joint whose rotation drives that segment); see :mod:`retarget.readers.smpl_from_joints`.

==================  ==========================  ============================  ========================
SMPL joint          bone follows (CMU)          twist from (CMU)              note
==================  ==========================  ============================  ========================
0  Pelvis           —                           Hips (root rotation)          hip midpoint drives root
1/2  L/R_Hip        LeftUpLeg → LeftLeg         LeftUpLeg                     thigh
4/5  L/R_Knee       LeftLeg → LeftFoot          LeftLeg                       shank
7/8  L/R_Ankle      LeftFoot → LeftToeBase      LeftFoot                      foot
10/11 L/R_Toe       —                           LeftToeBase                   leaf
3  Torso            LowerBack → Spine           LowerBack                     lower spine
6  Spine            Spine → Spine1              Spine                         mid spine
9  Chest            Neck → Neck1                Neck                          upper trunk
12 Neck             Neck1 → Head                Neck1
15 Head             —                           Head                          leaf
13/14 L/R_Thorax    LeftShoulder → LeftArm      LeftShoulder                  clavicle
16/17 L/R_Shoulder  LeftArm → LeftForeArm       LeftArm                       upper arm
18/19 L/R_Elbow     LeftForeArm → LeftHand      LeftForeArm                   forearm
20/21 L/R_Wrist     LeftHand → LFingers         LeftFingerBase                hand
22/23 L/R_Hand      —                           LFingers                      leaf
==================  ==========================  ============================  ========================

(Right side: the same with Right*/R* names.) CMU's thumbs and finger tips are not used. The CMU
rest pose faces +z with the left side at +x, y up: SMPL's rest frame, so a CMU joint's global
rotation is directly a reference orientation for the matching SMPL joint. The converter checks
this (left hip at +x, toes at +z in the rest pose) and refuses a skeleton that is mirrored or
faces elsewhere, rather than producing a mirrored motion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.readers.bvh import UNITS_M, BvhConfig, BvhMotion, read_bvh
from retarget.readers.smpl_from_joints import BoneSource, SkeletonMap, leg_length_m, smpl_from_joints
from retarget.smpl_sequence import SmplSequence


def _cmu_map() -> SkeletonMap:
    bones: dict[int, BoneSource] = {
        3: BoneSource("LowerBack", ("LowerBack", "Spine")),
        6: BoneSource("Spine", ("Spine", "Spine1")),
        9: BoneSource("Neck", ("Neck", "Neck1")),
        12: BoneSource("Neck1", ("Neck1", "Head")),
        15: BoneSource("Head", None),
    }
    for s, k in (("L", 0), ("R", 1)):
        side = "Left" if s == "L" else "Right"
        bones[1 + k] = BoneSource(f"{side}UpLeg", (f"{side}UpLeg", f"{side}Leg"))
        bones[4 + k] = BoneSource(f"{side}Leg", (f"{side}Leg", f"{side}Foot"))
        bones[7 + k] = BoneSource(f"{side}Foot", (f"{side}Foot", f"{side}ToeBase"))
        bones[10 + k] = BoneSource(f"{side}ToeBase", None)
        bones[13 + k] = BoneSource(f"{side}Shoulder", (f"{side}Shoulder", f"{side}Arm"))
        bones[16 + k] = BoneSource(f"{side}Arm", (f"{side}Arm", f"{side}ForeArm"))
        bones[18 + k] = BoneSource(f"{side}ForeArm", (f"{side}ForeArm", f"{side}Hand"))
        bones[20 + k] = BoneSource(f"{side}FingerBase", (f"{side}Hand", f"{s}Fingers"))
        bones[22 + k] = BoneSource(f"{s}Fingers", None)
    return SkeletonMap(
        bones=bones,
        root="Hips",
        left_leg=("LeftUpLeg", "LeftLeg", "LeftFoot"),
        right_leg=("RightUpLeg", "RightLeg", "RightFoot"),
        spine="Spine",
    )


CMU_MAP: SkeletonMap = _cmu_map()
"""The CMU mocap skeleton (31 joints) → SMPL."""


def _required_joints(skeleton_map: SkeletonMap) -> set[str]:
    names = {skeleton_map.root, skeleton_map.spine, *skeleton_map.left_leg, *skeleton_map.right_leg}
    for bone in skeleton_map.bones.values():
        names |= {bone.twist_from} if bone.twist_from else set()
        names |= set(bone.segment or ())
    return names


def _check_rest_pose(path: Path | None, bvh: BvhMotion, skeleton_map: SkeletonMap) -> None:
    """The rest pose must face +z with the left leg at +x (SMPL's rest frame); else refuse."""
    rest = np.zeros((len(bvh.joint_names), 3))
    for j, p in enumerate(bvh.parents):
        rest[j] = bvh.offsets_m[j] if p < 0 else rest[p] + bvh.offsets_m[j]
    hip_l, hip_r = rest[bvh.index(skeleton_map.left_leg[0])], rest[bvh.index(skeleton_map.right_leg[0])]
    ankle_l = rest[bvh.index(skeleton_map.left_leg[2])]
    toe_segment = skeleton_map.bones[7].segment  # SMPL left ankle → left toe
    if toe_segment is None:
        raise MotionFileError(path, "the skeleton map gives the left foot no segment; cannot check the rest pose")
    toe_l = rest[bvh.index(toe_segment[1])]
    if not (hip_l[0] > hip_r[0] and toe_l[2] > ankle_l[2]):
        raise MotionFileError(
            path,
            "the BVH rest pose does not face +z with the left leg at +x (y up); this converter "
            "would mirror or turn it. Supported: CMU-style rest poses",
        )


def _check_unit(path: Path | None, bvh: BvhMotion, skeleton_map: SkeletonMap, config: BvhConfig) -> None:
    leg = leg_length_m(bvh.positions_w, bvh.joint_names, skeleton_map.left_leg)
    low, high = config.leg_length_range_m
    if not low <= leg <= high:
        fits = [u for u, m in UNITS_M.items() if low <= leg / UNITS_M[config.unit] * m <= high]
        raise MotionFileError(
            path,
            f"with unit {config.unit!r} the leg (hip→knee→ankle) is {leg:.3f} m, outside the human range "
            f"{low}–{high} m; the file's unit is probably one of {fits or 'none of ' + str(list(UNITS_M))} "
            "(CLI: --bvh-unit)",
        )


def bvh_to_smpl(
    bvh: BvhMotion, path: Path | None = None, skeleton_map: SkeletonMap = CMU_MAP, config: BvhConfig = BvhConfig()
) -> SmplSequence:
    """An SMPL sequence whose bones follow the BVH segments (see the module's joint map)."""
    missing = sorted(_required_joints(skeleton_map) - set(bvh.joint_names))
    if missing:
        raise MotionFileError(path, f"the BVH skeleton lacks joints the map needs: {missing} (supported: CMU)")
    _check_rest_pose(path, bvh, skeleton_map)
    _check_unit(path, bvh, skeleton_map, config)
    return smpl_from_joints(
        bvh.name, bvh.positions_w, bvh.joint_names, bvh.fps, skeleton_map, bvh.rest_to_world, source_path=path
    )


def read_bvh_as_smpl(
    path: str | Path, config: BvhConfig = BvhConfig(), skeleton_map: SkeletonMap = CMU_MAP
) -> SmplSequence:
    """Read a BVH file and convert it to an SMPL sequence ready for :func:`retarget_sequence`."""
    path = Path(path)
    return bvh_to_smpl(read_bvh(path, config), path, skeleton_map, config)
