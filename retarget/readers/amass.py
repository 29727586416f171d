"""Read AMASS-layout SMPL, SMPL-H and SMPL-X `.npz` files into an :class:`SmplSequence`.

Accepted layouts (all AMASS variants seen in the wild):
* ``poses`` (T, 72) SMPL, (T, 156) SMPL-H (hands dropped), (T, 165) SMPL-X (face and
  hands dropped); or SMPL-X's split keys ``root_orient`` (T, 3) + ``pose_body`` (T, 63).
* frame rate as ``mocap_framerate`` or ``mocap_frame_rate`` (float or int, non-integer ok).
* ``gender`` as str, bytes, or a 0-d array of either; ``betas`` of any length.

The file is opened with ``allow_pickle=False``: an AMASS file never needs pickled objects,
and unpickling an untrusted file can run code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.npz_io import load_npz_arrays, numeric_array
from retarget.smpl_sequence import NUM_SMPL_JOINTS, SmplSequence

_FPS_KEYS = ("mocap_framerate", "mocap_frame_rate", "fps", "framerate")
# Number of axis-angle values per frame in `poses`, by layout.
_POSE_WIDTHS = {72: "smpl", 156: "smplh", 165: "smplx"}
_BODY_JOINTS = 22  # pelvis + 21 body joints shared by SMPL, SMPL-H and SMPL-X


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    return load_npz_arrays(path, "AMASS .npz clip", frame_keys=("poses", "trans", "root_orient", "pose_body"))


def _read_fps(path: Path, data: dict[str, np.ndarray]) -> float:
    for key in _FPS_KEYS:
        if key in data:
            try:
                fps = float(np.asarray(data[key]).reshape(-1)[0])
            except (TypeError, ValueError, IndexError) as exc:
                raise MotionFileError(path, f"frame rate {key!r} is not a number: {data[key]!r}") from exc
            if not np.isfinite(fps) or fps <= 0.0:
                raise MotionFileError(path, f"frame rate {key!r} must be a positive number, found {fps}")
            return fps
    raise MotionFileError(path, f"missing frame-rate key: expected one of {', '.join(_FPS_KEYS)}")


def _read_gender(value: np.ndarray | None) -> str:
    if value is None:
        return "neutral"
    item = np.asarray(value).reshape(-1)[0] if np.asarray(value).size else "neutral"
    if isinstance(item, (bytes, np.bytes_)):
        item = item.decode("utf-8", errors="replace")
    return str(item).strip().lower() or "neutral"


def _read_pose(path: Path, data: dict[str, np.ndarray]) -> tuple[np.ndarray, str]:
    """(T, 24, 3) SMPL axis-angle and the source layout name."""
    if "poses" in data:
        poses = numeric_array(path, data, "poses", "AMASS clip")
        if poses.ndim != 2 or poses.shape[1] not in _POSE_WIDTHS:
            raise MotionFileError(
                path,
                f"'poses' must have shape (T, 72) SMPL, (T, 156) SMPL-H or (T, 165) SMPL-X; found {poses.shape}",
            )
        model_type = _POSE_WIDTHS[poses.shape[1]]
        body = poses[:, : _BODY_JOINTS * 3].reshape(-1, _BODY_JOINTS, 3)
        hands = poses[:, 66:72].reshape(-1, 2, 3) if model_type == "smpl" else np.zeros((len(poses), 2, 3))
    elif "root_orient" in data and "pose_body" in data:
        root = numeric_array(path, data, "root_orient", "AMASS clip")
        body21 = numeric_array(path, data, "pose_body", "AMASS clip")
        if root.ndim != 2 or root.shape[1] != 3 or body21.ndim != 2 or body21.shape[1] != 63:
            raise MotionFileError(
                path,
                f"'root_orient' must be (T, 3) and 'pose_body' (T, 63); found {root.shape} and {body21.shape}",
            )
        if len(root) != len(body21):
            raise MotionFileError(path, f"'root_orient' has {len(root)} frames but 'pose_body' has {len(body21)}")
        model_type = "smplx"
        body = np.concatenate([root, body21], axis=1).reshape(-1, _BODY_JOINTS, 3)
        hands = np.zeros((len(root), 2, 3))
    else:
        raise MotionFileError(path, "missing pose keys: expected 'poses', or 'root_orient' and 'pose_body'")
    pose = np.concatenate([body, hands], axis=1).astype(np.float64)
    assert pose.shape[1] == NUM_SMPL_JOINTS
    return pose, model_type


def read_amass_npz(path: str | Path) -> SmplSequence:
    """Read and validate one AMASS-layout clip. Raises :class:`MotionFileError` naming the file."""
    path = Path(path)
    data = _load_npz(path)
    pose, model_type = _read_pose(path, data)
    num_frames = pose.shape[0]
    if num_frames == 0:
        raise MotionFileError(path, "has zero frames")
    if "trans" not in data:
        raise MotionFileError(path, "missing key 'trans' (T, 3) root translation")
    trans = numeric_array(path, data, "trans", "AMASS clip")
    if trans.shape != (num_frames, 3):
        raise MotionFileError(
            path, f"'trans' must have shape ({num_frames}, 3) to match the poses; found {np.shape(data['trans'])}"
        )
    for key, arr in (("poses", pose), ("trans", trans)):
        bad = ~np.isfinite(arr).reshape(num_frames, -1).all(axis=1)
        if bad.any():
            frames = np.flatnonzero(bad)
            raise MotionFileError(path, f"'{key}' has NaN or inf in {bad.sum()} frame(s), first at frame {frames[0]}")
    fps = _read_fps(path, data)
    betas = numeric_array(path, data, "betas", "AMASS clip").reshape(-1) if "betas" in data else np.zeros(10)
    if not np.isfinite(betas).all():
        raise MotionFileError(path, "'betas' has NaN or inf")
    return SmplSequence(
        name=path.stem,
        pose_rotvec=pose,
        trans_w=trans,
        fps=fps,
        betas=betas,
        gender=_read_gender(data.get("gender")),
        model_type=model_type,
        source_path=path,
    )
