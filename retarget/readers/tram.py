"""Read TRAM results: per-track SMPL (``hps/hps_track_<k>.npy``) placed in the world by the
separately estimated camera trajectory (``camera.npy``).

Layout, from yufu-wang/tram at 4861c11. ``scripts/estimate_humans.py`` writes, per track ``k``
(tracks ranked by length, longest first), ``np.save(f"{hps_folder}/hps_track_{k}.npy", results)``
with ``results`` from ``lib/models/hmr_vimo.py`` ``HMR_VIMO.inference``. Keys relied on (torch tensors)::

    pred_rotmat  (F, 24, 3, 3)  SMPL joint rotations, root in the camera frame
    pred_trans   (F, 1, 3)      [m] SMPL translation in the camera frame
    pred_shape   (F, 10)        shape, averaged over the track (as the visualiser does)
    frame        (F,)           video frame index of each row (gaps between valid chunks)

``scripts/estimate_camera.py`` writes ``np.save(f"{seq_folder}/camera.npy", camera)`` with::

    world_cam_R  (N, 3, 3)  camera-to-world rotation per video frame
    world_cam_T  (N, 3)     [m] camera position in the world per video frame

and ``lib/pipeline/visualization.py`` (``visualize_tram``) places the body in the world as
``p_w = world_cam_R[frame] @ p_c + world_cam_T[frame]``. That world is y-up (``cam_wrt_world`` in
``lib/camera/est_gravity.py``: gravity from one image, so its floor may be tilted). A track is read
from its ``hps_track_<k>.npy`` (track ``k``) or from the sequence folder (``camera.npy`` plus
``hps/``: every track). The frame rate is the video's and is not stored: 30 Hz unless given.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.readers.video_pickle import load_npy_object, to_numpy
from retarget.readers.video_tracks import VideoTrack, mean_betas, pelvis_rest_offset, require_frames, require_keys
from retarget.rotations import matrix_to_rotvec

UP_AXIS = "y"
CAMERA_FILE = "camera.npy"
_TRACK_FILE = re.compile(r"^hps_track_(\d+)\.npy$")
_KEYS = ("pred_rotmat", "pred_trans", "frame")


def is_tram_track_file(path: Path) -> bool:
    return _TRACK_FILE.match(path.name) is not None


def is_tram_folder(path: Path) -> bool:
    return path.is_dir() and (path / CAMERA_FILE).is_file() and (path / "hps").is_dir()


def _camera(track_path: Path) -> tuple[np.ndarray, np.ndarray]:
    for folder in (track_path.parent.parent, track_path.parent):
        cam_path = folder / CAMERA_FILE
        if cam_path.is_file():
            break
    else:
        raise MotionFileError(
            track_path,
            f"no {CAMERA_FILE} in {track_path.parent.parent} (TRAM's camera "
            "trajectory, written by scripts/estimate_camera.py): cannot place the "
            "track in the world",
        )
    cam = load_npy_object(cam_path)
    if not isinstance(cam, dict) or not {"world_cam_R", "world_cam_T"} <= set(cam):
        found = sorted(cam) if isinstance(cam, dict) else type(cam).__name__
        raise MotionFileError(cam_path, f"not a TRAM camera: expected 'world_cam_R', 'world_cam_T'; found {found}")
    rot, pos = to_numpy(cam["world_cam_R"]).astype(np.float64), to_numpy(cam["world_cam_T"]).astype(np.float64)
    if rot.ndim != 3 or rot.shape[1:] != (3, 3) or pos.shape != (len(rot), 3):
        raise MotionFileError(
            cam_path, f"'world_cam_R' {rot.shape} and 'world_cam_T' {pos.shape}: expected (N, 3, 3) and (N, 3)"
        )
    return rot, pos


def read_tram_track(path: Path) -> VideoTrack:
    """One ``hps_track_<k>.npy`` in TRAM's world frame."""
    data = load_npy_object(path)
    if not isinstance(data, dict):
        raise MotionFileError(
            path, f"not a TRAM track: expected a dict of {', '.join(_KEYS)}; found {type(data).__name__}"
        )
    require_keys(path, "not a TRAM track:", data, _KEYS)
    match = _TRACK_FILE.match(path.name)
    track_id = int(match.group(1)) if match else 0
    rotmat = to_numpy(data["pred_rotmat"]).astype(np.float64)
    n = len(rotmat)
    require_frames(path, track_id, n)
    if rotmat.shape[1:] not in ((24, 3, 3), (22, 3, 3)):
        raise MotionFileError(path, f"'pred_rotmat' must be (F, 24, 3, 3) SMPL or (F, 22, 3, 3); found {rotmat.shape}")
    trans_c = to_numpy(data["pred_trans"]).astype(np.float64).reshape(n, -1)
    frames = to_numpy(data["frame"]).reshape(-1)
    if trans_c.shape != (n, 3) or len(frames) != n:
        raise MotionFileError(path, f"{n} rotations, 'pred_trans' {trans_c.shape}, {len(frames)} frame ids")
    if frames.dtype.kind not in "iu":
        raise MotionFileError(path, f"'frame' must be integers; found {frames.dtype}")
    cam_rot, cam_pos = _camera(path)
    if n and (frames.min() < 0 or frames.max() >= len(cam_rot)):
        raise MotionFileError(path, f"frames {frames.min()}..{frames.max()} outside the camera's {len(cam_rot)} frames")
    r_wc, t_wc = cam_rot[frames], cam_pos[frames]
    body = matrix_to_rotvec(rotmat[:, 1:])
    model_type = "smpl" if rotmat.shape[1] == 24 else "smplx"
    if model_type == "smplx":
        body = np.concatenate([body, np.zeros((n, 2, 3))], axis=1)
    pelvis_c = trans_c + pelvis_rest_offset()
    return VideoTrack(
        track_id=track_id,
        frame_ids=frames,
        root_rotmat=r_wc @ rotmat[:, 0],
        pelvis=np.einsum("nij,nj->ni", r_wc, pelvis_c) + t_wc,
        body_rotvec=body,
        betas=mean_betas(to_numpy(data.get("pred_shape", np.zeros(10)))),
        model_type=model_type,
    )


def read_tram_tracks(path: Path) -> dict[int, VideoTrack]:
    """The track of an ``hps_track_<k>.npy``, or every track of a TRAM sequence folder."""
    if path.is_dir():
        files = sorted(p for p in (path / "hps").glob("hps_track_*.npy") if is_tram_track_file(p))
        if not files:
            raise MotionFileError(path, "TRAM folder without hps/hps_track_<k>.npy files")
        tracks = [read_tram_track(p) for p in files]
        return {t.track_id: t for t in tracks}
    track = read_tram_track(path)
    return {track.track_id: track}
