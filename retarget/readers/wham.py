"""Read WHAM results (``wham_output.pkl``).

Layout, from yohanshin/WHAM ``demo.py`` at 2b54f77 (``joblib.dump(results, ".../wham_output.pkl")``,
``results = defaultdict(dict)`` keyed by track id). Keys relied on, per track::

    results[id]["pose_world"]   (F, 72) SMPL axis-angle: root in the world frame, then 23 body joints
    results[id]["trans_world"]  (F, 3)  [m] world position of WHAM's mid-hip point (see below)
    results[id]["betas"]        (F, 10) shape, averaged over the track
    results[id]["frame_ids"]    (F,)    video frame index of each row; gaps where tracking was lost

``pose``/``trans`` (camera frame) and ``verts`` are not used. The world is y-up: the network is
called with ``return_y_up=True`` (``lib/models/wham.py``, ``rollout``). ``trans_world`` is not
SMPL's ``transl``: WHAM's SMPL wrapper (``lib/models/smpl.py``, ``get_output``) shifts the body
so that the mean of its regressed hip joints (11, 12) lands on ``transl``. The reader takes that
point as the mid-point of SMPL's hip joints and puts the pelvis at
``trans_world - R_root · (o_L_hip + o_R_hip) / 2`` (rest offsets of the neutral skeleton);
WHAM's regressed hips differ from SMPL's by a fixed offset in the pelvis frame of a few
centimetres. The frame rate is the video's and is not in the file: 30 Hz unless given.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.readers.video_pickle import load_result_pickle, to_numpy
from retarget.readers.video_tracks import VideoTrack, mean_betas, require_frames, require_keys, split_body_pose
from retarget.rotations import rotvec_to_matrix
from retarget.skeleton import neutral_skeleton

UP_AXIS = "y"
_KEYS = ("pose_world", "trans_world", "frame_ids")
_HIPS = (1, 2)


def is_wham(data: object) -> bool:
    return (
        isinstance(data, dict)
        and len(data) > 0
        and all(isinstance(v, dict) and "pose_world" in v and "trans_world" in v for v in data.values())
    )


def is_wham_file(path: Path) -> bool:
    """True for a pickle holding WHAM's per-track layout (False for other pickles, e.g. motion libraries)."""
    try:
        return is_wham(load_result_pickle(path))
    except MotionFileError:
        return False


def mid_hip_rest_offset() -> np.ndarray:
    """(3,) [m] mid-point of SMPL's two hip joints from the pelvis, in the pelvis frame (neutral skeleton)."""
    return neutral_skeleton().offsets[list(_HIPS)].mean(axis=0)


def _track(path: Path, track_id: int, entry: dict) -> VideoTrack:
    require_keys(path, f"track {track_id}", entry, _KEYS)
    pose = to_numpy(entry["pose_world"]).astype(np.float64)
    if pose.ndim != 2 or pose.shape[1] != 72:
        raise MotionFileError(path, f"track {track_id}: 'pose_world' must be (F, 72) SMPL; found {pose.shape}")
    require_frames(path, track_id, len(pose))
    body, model_type = split_body_pose(path, f"track {track_id}: 'pose_world'[:, 3:]", pose[:, 3:])
    root = rotvec_to_matrix(pose[:, :3])
    mid_hip = to_numpy(entry["trans_world"]).astype(np.float64).reshape(len(pose), -1)
    frames = to_numpy(entry["frame_ids"]).reshape(-1)
    if len(frames) != len(pose) or mid_hip.shape[1] != 3:
        raise MotionFileError(
            path, f"track {track_id}: {len(pose)} poses, {len(frames)} frame ids, 'trans_world' {mid_hip.shape}"
        )
    if frames.dtype.kind not in "iu":
        raise MotionFileError(path, f"track {track_id}: 'frame_ids' must be integers; found {frames.dtype}")
    return VideoTrack(
        track_id=track_id,
        frame_ids=frames,
        root_rotmat=root,
        body_rotvec=body,
        pelvis=mid_hip - root @ mid_hip_rest_offset(),
        betas=mean_betas(to_numpy(entry.get("betas", np.zeros(10)))),
        model_type=model_type,
    )


def read_wham_tracks(path: Path) -> dict[int, VideoTrack]:
    """Every tracked person of a WHAM result file, by track id."""
    data = load_result_pickle(path)
    if not is_wham(data):
        found = sorted(map(str, data))[:10] if isinstance(data, dict) else type(data).__name__
        raise MotionFileError(
            path,
            f"not a WHAM result: expected {{track id: {{'pose_world', 'trans_world', ...}}}}, found {found} "
            "(a clip is an AMASS .npz, a BVH, or a GVHMR/WHAM/TRAM result)",
        )
    tracks = {}
    for key, entry in data.items():
        try:
            track_id = int(key)
        except (TypeError, ValueError) as exc:
            raise MotionFileError(path, f"track id {key!r} is not an integer") from exc
        tracks[track_id] = _track(path, track_id, entry)
    return tracks
