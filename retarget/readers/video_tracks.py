"""What the video-pose readers share: one tracked person as read from a result file, the
choice of person, and the step to an :class:`SmplSequence` (frame gaps, up axis, SMPL-X).

Video-pose estimators track several people per video; a track covers the frames where its
person was seen, by video frame index, with gaps where tracking was lost. Those gaps are
filled by interpolating between the frames on either side at their true times (slerp for
rotations, lerp for the pelvis), the same interpolation the resampler uses; a frame index
repeated in a track keeps its first occurrence.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.floor import transform_sequence
from retarget.readers.bvh import Y_UP_TO_Z_UP
from retarget.rotations import matrix_to_rotvec, quat_slerp, quat_to_rotvec, rotvec_to_quat
from retarget.skeleton import neutral_skeleton
from retarget.smpl_sequence import NUM_SMPL_JOINTS, SmplSequence

UP_AXES = ("y", "z")
# Axis-angle width of the body joints below the root: SMPL has 23, SMPL-X 21 (no SMPL hand joints).
_BODY_WIDTHS = {69: "smpl", 63: "smplx"}


@dataclass(frozen=True)
class VideoTrack:
    """One tracked person in the estimator's own world frame, at the frames where it was seen."""

    track_id: int
    frame_ids: np.ndarray
    """(N,) video frame index of each sample (may have gaps)."""
    root_rotmat: np.ndarray
    """(N, 3, 3) root orientation in the estimator's world frame."""
    body_rotvec: np.ndarray
    """(N, 23, 3) [rad] SMPL joints 1..23 relative to their parents (SMPL-X: the two hand joints zero)."""
    pelvis: np.ndarray
    """(N, 3) [m] SMPL pelvis joint in the estimator's world frame."""
    betas: np.ndarray
    """Shape coefficients (mean over the track)."""
    model_type: str
    """'smpl' or 'smplx', from the width of the body pose."""

    @property
    def num_frames(self) -> int:
        return len(self.frame_ids)


def pelvis_rest_offset() -> np.ndarray:
    """(3,) [m] J0, the pelvis rest position of the neutral skeleton: SMPL puts the pelvis at trans + J0."""
    return neutral_skeleton().offsets[0]


def split_body_pose(path: Path, what: str, body: np.ndarray) -> tuple[np.ndarray, str]:
    """(N, 23, 3) body joints and 'smpl'/'smplx' from a (N, 69) SMPL or (N, 63) SMPL-X body pose."""
    body = np.asarray(body, dtype=np.float64)
    if body.ndim != 2 or body.shape[1] not in _BODY_WIDTHS:
        raise MotionFileError(path, f"{what} must be (N, 69) SMPL or (N, 63) SMPL-X axis-angle; found {body.shape}")
    model_type = _BODY_WIDTHS[body.shape[1]]
    joints = body.reshape(len(body), body.shape[1] // 3, 3)
    if model_type == "smplx":
        joints = np.concatenate([joints, np.zeros((len(body), 2, 3))], axis=1)
    return joints, model_type


def require_keys(path: Path, where: str, mapping: dict, keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in mapping]
    if missing:
        raise MotionFileError(path, f"{where} lacks {', '.join(missing)}; has {sorted(map(str, mapping))}")


def mean_betas(value: object) -> np.ndarray:
    """Shape coefficients averaged over frames ((F, B) or (B,); none: ten zeros)."""
    betas = np.asarray(value, dtype=np.float64)
    return betas.reshape(-1, betas.shape[-1]).mean(axis=0) if betas.size else np.zeros(10)


def require_frames(path: Path, track_id: int, num_frames: int) -> None:
    if num_frames == 0:
        raise MotionFileError(path, f"track {track_id} is empty (no frames)")


def check_track(path: Path, track: VideoTrack) -> VideoTrack:
    """Shapes agree, values are finite, at least one frame."""
    n = track.num_frames
    require_frames(path, track.track_id, n)
    shapes = {
        "root orientation": (track.root_rotmat, (n, 3, 3)),
        "body pose": (track.body_rotvec, (n, 23, 3)),
        "translation": (track.pelvis, (n, 3)),
    }
    for what, (arr, shape) in shapes.items():
        if arr.shape != shape:
            raise MotionFileError(path, f"track {track.track_id}: {what} has shape {arr.shape}, expected {shape}")
        bad = ~np.isfinite(arr.reshape(n, -1)).all(axis=1)
        if bad.any():
            raise MotionFileError(
                path,
                f"track {track.track_id}: {what} has NaN or inf in {bad.sum()} frame(s), first at "
                f"frame {int(track.frame_ids[np.flatnonzero(bad)[0]])}",
            )
    return track


def choose_track(path: Path, tracks: dict[int, VideoTrack], person: int | None) -> tuple[VideoTrack, str | None]:
    """The track `person`, or the longest one with a note saying so."""
    if not tracks:
        raise MotionFileError(path, "holds no tracked person")
    listing = ", ".join(f"{k} ({t.num_frames} frames)" for k, t in sorted(tracks.items()))
    if person is not None:
        if person not in tracks:
            raise MotionFileError(path, f"no person {person}; tracks: {listing}")
        return tracks[person], None
    longest = max(sorted(tracks), key=lambda k: tracks[k].num_frames)
    note = (
        f"person {longest}, the longest of {len(tracks)} tracks ({listing}); choose another with --person"
        if (len(tracks) > 1)
        else None
    )
    return tracks[longest], note


def _fill_gaps(frames: np.ndarray, pose: np.ndarray, trans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every frame from the first to the last, interpolated at its true time between the samples around it."""
    full = np.arange(frames[0], frames[-1] + 1)
    hi = np.clip(np.searchsorted(frames, full, side="left"), 1, max(len(frames) - 1, 1))
    lo = hi - 1
    span = np.maximum(frames[hi] - frames[lo], 1)
    alpha = np.clip((full - frames[lo]) / span, 0.0, 1.0)
    quat = rotvec_to_quat(pose)
    q = quat_slerp(quat[lo], quat[hi], np.broadcast_to(alpha[:, None], (len(full), pose.shape[1])))
    a = alpha[:, None]
    return quat_to_rotvec(q), (1.0 - a) * trans[lo] + a * trans[hi]


def track_to_sequence(
    path: Path, track: VideoTrack, fps: float, up_axis: str, name: str
) -> tuple[SmplSequence, list[str]]:
    """The track as a z-up SMPL sequence at `fps` [Hz] with every frame present, and notes for the user."""
    if up_axis not in UP_AXES:
        raise MotionFileError(path, f"unknown up axis {up_axis!r}; valid choices: {', '.join(UP_AXES)}")
    check_track(path, track)
    notes: list[str] = []
    frames = np.asarray(track.frame_ids).astype(np.int64)
    order = np.argsort(frames, kind="stable")
    frames, first = np.unique(frames[order], return_index=True)
    keep = order[first]
    if len(keep) < track.num_frames:
        notes.append(f"dropped {track.num_frames - len(keep)} repeated frame(s)")
    pose = np.concatenate([matrix_to_rotvec(track.root_rotmat[keep])[:, None], track.body_rotvec[keep]], axis=1)
    trans = track.pelvis[keep] - pelvis_rest_offset()
    missing = int(frames[-1] - frames[0] + 1 - len(frames))
    if missing:
        longest = int(np.diff(frames).max() - 1)
        pose, trans = _fill_gaps(frames, pose, trans)
        notes.append(f"filled {missing} missing frame(s) by interpolation (longest gap {longest / fps:.2f} s)")
    assert pose.shape[1] == NUM_SMPL_JOINTS
    seq = SmplSequence(
        name=name,
        pose_rotvec=pose,
        trans_w=trans,
        fps=fps,
        betas=track.betas,
        model_type=track.model_type,
        source_path=path,
    )
    if up_axis == "y":
        seq = transform_sequence(seq, Y_UP_TO_Z_UP, np.zeros(3))
    return seq, notes
