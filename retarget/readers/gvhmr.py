"""Read GVHMR results (``hmr4d_results.pt``).

Layout, from zju3dv/GVHMR ``tools/demo/demo.py`` (``torch.save(pred, paths.hmr4d_results)``) and
``hmr4d/model/gvhmr/gvhmr_pl_demo.py`` (``DemoPL.predict``), both at 44fbc19. Keys relied on::

    pred["smpl_params_global"]["global_orient"]  (F, 3)  root axis-angle, gravity-aligned world, y-up
    pred["smpl_params_global"]["body_pose"]      (F, 63) SMPL-X body (21 joints); (F, 69) read as SMPL
    pred["smpl_params_global"]["transl"]         (F, 3)  [m] body-model translation (pelvis = transl + J0)
    pred["smpl_params_global"]["betas"]          (F, 10) shape, averaged over the clip

``smpl_params_incam``, ``K_fullimg`` and ``net_outputs`` are not used. One person per file (the
demo runs on one tracked person), every frame present. The demo re-encodes the video at 30 fps
before inference (``run_preprocess``), so the frame rate is 30 Hz. The world is y-up; the reader
turns it z-up (override with ``SourceOptions.up_axis``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.errors import MotionFileError
from retarget.readers.video_pickle import load_pt, to_numpy
from retarget.readers.video_tracks import (
    VideoTrack,
    mean_betas,
    pelvis_rest_offset,
    require_frames,
    require_keys,
    split_body_pose,
)
from retarget.rotations import rotvec_to_matrix

UP_AXIS = "y"
FPS = 30.0
"""GVHMR's demo works on the video re-encoded at 30 fps [Hz]."""
_KEYS = ("global_orient", "body_pose", "transl")


def is_gvhmr(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("smpl_params_global"), dict)


def read_gvhmr_tracks(path: Path) -> dict[int, VideoTrack]:
    """The one person of a GVHMR result file, as track 0."""
    data = load_pt(path)
    if not is_gvhmr(data):
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise MotionFileError(path, f"not a GVHMR result: expected a dict with 'smpl_params_global', found {found}")
    params = data["smpl_params_global"]
    require_keys(path, "'smpl_params_global'", params, _KEYS)
    root = to_numpy(params["global_orient"]).astype(np.float64)
    if root.ndim != 2 or root.shape[1] != 3:
        raise MotionFileError(path, f"'global_orient' must be (F, 3) axis-angle; found {root.shape}")
    require_frames(path, 0, len(root))
    body, model_type = split_body_pose(path, "'body_pose'", to_numpy(params["body_pose"]))
    transl = to_numpy(params["transl"]).astype(np.float64)
    n = len(root)
    if len(body) != n or transl.shape != (n, 3):
        raise MotionFileError(
            path, f"'global_orient' has {n} frames but 'body_pose' {body.shape[:1]} and 'transl' {transl.shape}"
        )
    track = VideoTrack(
        track_id=0,
        frame_ids=np.arange(n),
        root_rotmat=rotvec_to_matrix(root),
        body_rotvec=body,
        pelvis=transl + pelvis_rest_offset(),
        betas=mean_betas(to_numpy(params.get("betas", np.zeros(10)))),
        model_type=model_type,
    )
    return {0: track}
