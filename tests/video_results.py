"""Write real clips in the saved layouts of GVHMR, WHAM and TRAM, as their demo scripts do
(``torch.save``, ``joblib.dump`` of a defaultdict, ``np.save`` of dicts of tensors), so the
readers are tested on files of the estimators' layouts without their model weights.

Each writer is the inverse of the documented convention: y-up worlds (z-up clip turned by
Rx(-90°)), WHAM's mid-hip translation, TRAM's camera-frame body plus a moving camera.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import joblib
import numpy as np
import torch

from retarget.floor import transform_sequence
from retarget.readers.bvh import Y_UP_TO_Z_UP
from retarget.readers.wham import mid_hip_rest_offset
from retarget.rotations import matrix_to_rotvec, rotvec_to_matrix
from retarget.skeleton import neutral_skeleton
from retarget.smpl_sequence import SmplSequence

Z_UP_TO_Y_UP = Y_UP_TO_Z_UP.T


def y_up(seq: SmplSequence) -> SmplSequence:
    """The clip in a y-up world (the pelvis moves rigidly with the world)."""
    return transform_sequence(seq, Z_UP_TO_Y_UP, np.zeros(3))


def write_gvhmr(path: Path, seq: SmplSequence, smplx: bool = True) -> Path:
    """`hmr4d_results.pt`: SMPL-X (63-wide) or SMPL (69-wide) body pose, y-up world."""
    src = y_up(seq)
    n = src.num_frames
    body = src.pose_rotvec[:, 1:22] if smplx else src.pose_rotvec[:, 1:]
    params = {
        "global_orient": torch.tensor(src.pose_rotvec[:, 0], dtype=torch.float32),
        "body_pose": torch.tensor(body.reshape(n, -1), dtype=torch.float32),
        "transl": torch.tensor(src.trans_w, dtype=torch.float32),
        "betas": torch.zeros(n, 10),
    }
    pred = {
        "smpl_params_global": params,
        "smpl_params_incam": dict(params),
        "K_fullimg": torch.eye(3).repeat(n, 1, 1),
        "net_outputs": {"static_conf_logits": torch.zeros(1, n, 6)},
    }
    torch.save(pred, path)
    return path


def wham_entry(seq: SmplSequence, frame_ids: np.ndarray) -> dict[str, np.ndarray]:
    """One WHAM track: the rows of `seq` at `frame_ids` (indices into the clip)."""
    src = y_up(seq)
    root = rotvec_to_matrix(src.pose_rotvec[frame_ids, 0])
    pelvis = src.trans_w[frame_ids] + neutral_skeleton().offsets[0]
    pose = src.pose_rotvec[frame_ids].reshape(len(frame_ids), 72)
    return {
        "pose": pose.astype(np.float32),  # camera frame in WHAM; unused by the reader
        "trans": np.zeros((len(frame_ids), 3), np.float32),
        "pose_world": pose.astype(np.float32),
        "trans_world": (pelvis + root @ mid_hip_rest_offset()).astype(np.float32),
        "betas": np.zeros((len(frame_ids), 10), np.float32),
        "frame_ids": np.asarray(frame_ids),
    }


def write_wham(path: Path, tracks: dict[int, dict[str, np.ndarray]]) -> Path:
    results: defaultdict[int, dict] = defaultdict(dict)
    for k, entry in tracks.items():
        results[k].update(entry)
    joblib.dump(results, path)
    return path


def camera_path(num_frames: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A panning, bobbing camera: (N, 3, 3) camera-to-world rotations, (N, 3) positions (y-up world)."""
    t = np.arange(num_frames) / 30.0
    rng = np.random.default_rng(seed)
    base = rotvec_to_matrix(np.array([np.pi, 0.0, 0.0]))  # camera y down, looking along -z of the world
    wobble = rotvec_to_matrix(np.stack([0.1 * np.sin(t), 0.4 * np.sin(0.5 * t), 0.05 * np.cos(t)], axis=1))
    rot = wobble @ base @ rotvec_to_matrix(rng.normal(0.0, 0.02, 3))
    pos = np.stack([0.5 * np.sin(0.3 * t), 1.2 + 0.02 * np.sin(2 * t), 3.0 + 0.2 * t], axis=1)
    return rot, pos


def write_tram(folder: Path, seq: SmplSequence, tracks: dict[int, np.ndarray]) -> Path:
    """A TRAM sequence folder: camera.npy and hps/hps_track_<k>.npy, each track the rows of `seq` at its frames."""
    src = y_up(seq)
    (folder / "hps").mkdir(parents=True, exist_ok=True)
    cam_rot, cam_pos = camera_path(seq.num_frames)
    np.save(
        folder / "camera.npy",
        {
            "pred_cam_R": cam_rot,
            "pred_cam_T": cam_pos,
            "world_cam_R": cam_rot,
            "world_cam_T": cam_pos,
            "img_focal": np.float64(1000.0),
        },
    )
    j0 = neutral_skeleton().offsets[0]
    for k, frames in tracks.items():
        r_cw = np.swapaxes(cam_rot[frames], 1, 2)
        rotmat = rotvec_to_matrix(src.pose_rotvec[frames])
        rotmat[:, 0] = r_cw @ rotmat[:, 0]
        pelvis_c = np.einsum("nij,nj->ni", r_cw, src.trans_w[frames] + j0 - cam_pos[frames])
        results = {
            "pred_cam": torch.zeros(len(frames), 3),
            "pred_pose": torch.tensor(matrix_to_rotvec(rotmat).reshape(len(frames), -1), dtype=torch.float32),
            "pred_shape": torch.zeros(len(frames), 10),
            "pred_rotmat": torch.tensor(rotmat, dtype=torch.float32),
            "pred_trans": torch.tensor((pelvis_c - j0)[:, None], dtype=torch.float32),
            "frame": torch.tensor(frames),
        }
        np.save(folder / "hps" / f"hps_track_{k}.npy", results)
    return folder
