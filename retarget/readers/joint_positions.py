"""Joint position arrays (T × J × 3) with a named joint order → SMPL pose sequence.

File layout (``.npz``, read with ``allow_pickle=False``)::

    joints_w     (T, J, 3)   joint positions in the world [m]
    joint_names  (J,)        names, SMPL's (``Pelvis``, ``L_Hip`` … see SMPL_JOINT_NAMES), any order;
                             the 22 body joints (Pelvis … R_Wrist) are required, the hands optional
    fps          scalar      frame rate [Hz]
    up_axis      'z' | 'y'   optional, default 'z' (y-up arrays are turned z-up by Rx(+90°))

Positions carry no twist, so each SMPL joint takes the minimal rotation from its parent that
points its bone along the source bone (see :mod:`retarget.readers.smpl_from_joints`).
:func:`write_joint_positions` writes the same layout (e.g. the world joints of a BVH clip).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.asap_pkl import atomic_write
from retarget.errors import MotionFileError
from retarget.npz_io import load_npz_arrays, numeric_array, scalar_number
from retarget.readers.bvh import Y_UP_TO_Z_UP
from retarget.readers.smpl_from_joints import PRIMARY_CHILD, BoneSource, SkeletonMap, smpl_from_joints
from retarget.smpl_sequence import SMPL_JOINT_NAMES, SmplSequence

REQUIRED: tuple[str, ...] = SMPL_JOINT_NAMES[:22]


def smpl_positions_map(names: tuple[str, ...]) -> SkeletonMap:
    """Bone j → primary child wherever both joints are present; no twist source."""
    bones = {
        j: BoneSource(None, (SMPL_JOINT_NAMES[j], SMPL_JOINT_NAMES[c]))
        for j, c in PRIMARY_CHILD.items()
        if SMPL_JOINT_NAMES[c] in names
    }
    return SkeletonMap(
        bones=bones,
        root="Pelvis",
        left_leg=("L_Hip", "L_Knee", "L_Ankle"),
        right_leg=("R_Hip", "R_Knee", "R_Ankle"),
        spine="Torso",
        chest_frame=("Chest", "Neck", "L_Thorax", "R_Thorax"),
    )


def read_joint_positions(path: str | Path) -> tuple[np.ndarray, tuple[str, ...], float]:
    """(T, J, 3) z-up positions [m], joint names, frame rate [Hz]."""
    path = Path(path)
    data = load_npz_arrays(path, "joint-position .npz", frame_keys=("joints_w",))
    missing = [k for k in ("joints_w", "joint_names", "fps") if k not in data]
    if missing:
        raise MotionFileError(path, f"joint-position file lacks keys {missing} (found {sorted(data)})")
    joints = numeric_array(path, data, "joints_w", "joint-position file")
    names = tuple(str(n) for n in np.asarray(data["joint_names"]).reshape(-1))
    if joints.ndim != 3 or joints.shape[1:] != (len(names), 3) or len(joints) == 0:
        raise MotionFileError(path, f"'joints_w' must be (T, {len(names)}, 3) with T > 0; found {joints.shape}")
    if not np.isfinite(joints).all():
        bad = np.flatnonzero(~np.isfinite(joints).reshape(len(joints), -1).all(axis=1))
        raise MotionFileError(path, f"'joints_w' has NaN or inf in {len(bad)} frame(s), first at frame {bad[0]}")
    fps = scalar_number(path, data["fps"], "fps", "joint-position file", positive=True)
    up = str(data["up_axis"]) if "up_axis" in data else "z"
    if up not in ("z", "y"):
        raise MotionFileError(path, f"'up_axis' must be 'z' or 'y', found {up!r}")
    return (joints @ Y_UP_TO_Z_UP.T if up == "y" else joints), names, fps


def read_joint_positions_as_smpl(path: str | Path) -> SmplSequence:
    """Read an SMPL-named joint-position file and convert it to an SMPL sequence."""
    path = Path(path)
    joints, names, fps = read_joint_positions(path)
    missing = [n for n in REQUIRED if n not in names]
    if missing:
        raise MotionFileError(path, f"joint names lack SMPL body joints {missing}; names must be SMPL's")
    return smpl_from_joints(path.stem, joints, names, fps, smpl_positions_map(names), None, source_path=path)


def write_joint_positions(path: str | Path, joints_w: np.ndarray, names: tuple[str, ...], fps: float) -> Path:
    """Write (T, J, 3) z-up positions [m] with their names and rate, atomically."""
    path = Path(path)

    def _save(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                joints_w=np.asarray(joints_w, dtype=np.float64),
                joint_names=np.array(names),
                fps=np.array(float(fps)),
                up_axis=np.array("z"),
                length_unit=np.array("m"),
            )

    atomic_write(path, _save)
    return path
