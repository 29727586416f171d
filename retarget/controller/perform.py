"""The performed motion: what the simulated G1 executed, as a library clip with its provenance.

The tracker's configurations (control rate) are sampled at the clip's own rate over a frame range
the verdict kept, and written through the library writers, so every consumer reads the performed
motion as it reads a kinematic retarget. The provenance (source hash, tracker settings, tracking
errors, the PD targets that produced it) goes into a JSON file beside it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion, atomic_write
from retarget.controller.config import ControllerConfig
from retarget.controller.reference import interpolate_qpos
from retarget.controller.track import TrackingRun
from retarget.controller.verdict import frame_steps, tracking_errors_mm
from robots.mujoco_model import dof_qpos_indices
from robots.registry import RobotSpec

PERFORMED_SUFFIX = "_performed"
"""Key suffix of a performed motion written beside its kinematic retarget in one library."""


def performed_qpos(run: TrackingRun, num_frames: int, fps: float) -> np.ndarray:
    """(T, nq) the simulated configurations at the clip's frame times."""
    times = np.arange(num_frames) / fps
    return interpolate_qpos(run.qpos, 1.0 / run.dt_s, np.minimum(times, (run.num_steps - 1) * run.dt_s))


def performed_motion(
    run: TrackingRun,
    reference: RobotMotion,
    robot: RobotSpec,
    model,
    frame_range: tuple[int, int] | None = None,
    name: str | None = None,
) -> RobotMotion:
    """The performed motion over `frame_range` (start, stop exclusive) of the reference clip, at its rate;
    `human_joints_w` are the reference's (the targets the motion was made for)."""
    a, b = frame_range if frame_range is not None else (0, reference.num_frames)
    qpos = performed_qpos(run, reference.num_frames, reference.fps)[a:b]
    quat = qpos[:, 3:7] / np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
    return RobotMotion(
        name=name or reference.name,
        fps=reference.fps,
        root_pos_w=qpos[:, 0:3].copy(),
        root_quat_w=quat,
        dof_pos=qpos[:, dof_qpos_indices(model, robot)].copy(),
        human_joints_w=reference.human_joints_w[a:b].copy(),
    )


@dataclass(frozen=True)
class Provenance:
    """Where a performed motion comes from and how well it follows its reference."""

    clip: str
    source_sha256: str
    frame_range: tuple[int, int]
    """Frames of the kinematic retarget it covers (start, stop exclusive)."""
    fps: float
    config: ControllerConfig
    errors_mm: dict
    """Eg-mpjpe, Empjpe and worst mean body distance over the covered frames [mm]."""
    falls: list
    """Where the tracker fell, anywhere in the clip: [time s, reason]."""

    def to_dict(self) -> dict:
        return {
            "clip": self.clip,
            "source_sha256": self.source_sha256,
            "frame_range": list(self.frame_range),
            "fps": self.fps,
            "controller": self.config.to_dict(),
            "tracking_errors_mm": {k: round(v, 2) for k, v in self.errors_mm.items()},
            "falls": self.falls,
        }


def provenance(
    run: TrackingRun,
    clip: str,
    fps: float,
    frame_range: tuple[int, int],
    config: ControllerConfig,
    source_sha256: str = "",
) -> Provenance:
    steps = frame_steps(run, frame_range[1], fps)[frame_range[0] :]
    mask = np.zeros(run.num_steps, dtype=bool)
    if len(steps):
        mask[steps[0] : steps[-1] + 1] = True
    falls = [[round(f.step * run.dt_s, 3), f.reason] for f in run.falls]
    return Provenance(clip, source_sha256, frame_range, fps, config, tracking_errors_mm(run, mask), falls)


def write_provenance(path: str | Path, prov: Provenance, targets: np.ndarray | None = None) -> Path:
    """Write the provenance JSON (with the control-rate PD targets when given) atomically."""
    doc = prov.to_dict()
    if targets is not None:
        doc["pd_targets_rad"] = np.round(targets, 6).tolist()
    text = json.dumps(doc, indent=1)
    path = Path(path)
    atomic_write(path, lambda tmp: tmp.write_text(text))
    return path
