"""A motion clip as the tracking reference: MuJoCo FK over every frame, sampled by phase.

The clip is read only through :func:`retarget.asap_pkl.read_motion_library`. Body positions and
orientations come from forward kinematics of the same model the policy drives; velocities are
central differences over frames. Sampling at phase φ ∈ [0, 1] interpolates linearly between
frames (spherically for orientations).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from retarget.asap_pkl import RobotMotion, asap_dict_to_motion, read_motion_library
from retarget.errors import MotionFileError
from retarget.rotations import quat_canonical, quat_conj, quat_mul, quat_slerp, quat_to_rotvec
from robots.registry import RobotSpec
from trainers.sim_model import joint_addresses
from trainers.state import BodyLayout

EXTENDED_POINTS: tuple[str, ...] = ("left_hand", "right_hand", "head")
_UPPER_PREFIXES = ("waist", "torso", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow")


def body_layout(robot: RobotSpec) -> BodyLayout:
    """Pelvis + each joint's child link as bodies; those plus the extended hands/head as points."""
    bodies = (robot.urdf.root_link,) + tuple(j.child_link for j in robot.urdf.joints)
    points = bodies + EXTENDED_POINTS
    upper = [i for i, n in enumerate(points) if n.startswith(_UPPER_PREFIXES) or n in EXTENDED_POINTS]
    lower = [i for i in range(len(points)) if i not in upper]
    feet = [points.index(n) for n in robot.foot_links]
    return BodyLayout(
        point_names=points,
        body_names=bodies,
        upper_point_ids=np.array(upper),
        lower_point_ids=np.array(lower),
        feet_point_ids=np.array(feet),
        vr_point_ids=np.array([points.index(n) for n in EXTENDED_POINTS]),
        feet_body_ids=np.array([bodies.index(n) for n in robot.foot_links]),
    )


def point_site_and_body_ids(model: mujoco.MjModel, layout: BodyLayout) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo body ids of the tracked bodies, and site ids of the extended points (``match_<name>``)."""
    body_ids = np.array([model.body(n).id for n in layout.body_names])
    site_ids = np.array([model.site(f"match_{n}").id for n in EXTENDED_POINTS])
    return body_ids, site_ids


@dataclass(frozen=True)
class ReferenceFrame:
    """The reference sampled at one phase per environment (leading axis N)."""

    point_pos_w: np.ndarray
    point_lin_vel_w: np.ndarray
    body_quat_w: np.ndarray
    body_ang_vel_w: np.ndarray
    dof_pos: np.ndarray
    dof_vel: np.ndarray
    root_pos_w: np.ndarray
    root_quat_w: np.ndarray
    root_lin_vel_w: np.ndarray
    root_ang_vel_w: np.ndarray


@dataclass(frozen=True)
class MotionReference:
    """Per-frame reference arrays of one clip (T frames at ``fps``)."""

    name: str
    fps: float
    point_pos_w: np.ndarray
    """(T, P, 3) [m]."""
    point_lin_vel_w: np.ndarray
    """(T, P, 3) [m/s]."""
    body_quat_w: np.ndarray
    """(T, B, 4) wxyz."""
    body_ang_vel_w: np.ndarray
    """(T, B, 3) [rad/s]."""
    dof_pos: np.ndarray
    """(T, D) [rad]."""
    dof_vel: np.ndarray
    """(T, D) [rad/s]."""

    @property
    def num_frames(self) -> int:
        return int(self.dof_pos.shape[0])

    @property
    def duration_s(self) -> float:
        """Time from the first to the last frame [s]; phase 1 is the last frame."""
        return (self.num_frames - 1) / self.fps

    def sample(self, phase: np.ndarray) -> ReferenceFrame:
        """Interpolate at phases (N,) in [0, 1] (clipped)."""
        t = np.clip(np.asarray(phase, dtype=np.float64), 0.0, 1.0) * (self.num_frames - 1)
        i0 = np.minimum(np.floor(t).astype(int), self.num_frames - 2)
        a = t - i0

        def lerp(x: np.ndarray) -> np.ndarray:
            w = a.reshape((-1,) + (1,) * (x.ndim - 1))
            return (1.0 - w) * x[i0] + w * x[i0 + 1]

        quat = quat_slerp(self.body_quat_w[i0], self.body_quat_w[i0 + 1], a[:, None])
        pos, vel, ang = lerp(self.point_pos_w), lerp(self.point_lin_vel_w), lerp(self.body_ang_vel_w)
        return ReferenceFrame(
            point_pos_w=pos,
            point_lin_vel_w=vel,
            body_quat_w=quat,
            body_ang_vel_w=ang,
            dof_pos=lerp(self.dof_pos),
            dof_vel=lerp(self.dof_vel),
            root_pos_w=pos[:, 0],
            root_quat_w=quat[:, 0],
            root_lin_vel_w=vel[:, 0],
            root_ang_vel_w=ang[:, 0],
        )


def _angular_velocity_w(quat_w: np.ndarray, fps: float) -> np.ndarray:
    """(T, B, 3) world angular velocity from consecutive orientations (central differences)."""
    rel = quat_to_rotvec(quat_canonical(quat_mul(quat_w[1:], quat_conj(quat_w[:-1])))) * fps  # (T-1, B, 3)
    out = np.empty(quat_w.shape[:-1] + (3,))
    out[0], out[-1] = rel[0], rel[-1]
    out[1:-1] = 0.5 * (rel[1:] + rel[:-1])
    return out


def reference_from_motion(motion: RobotMotion, model: mujoco.MjModel, robot: RobotSpec) -> MotionReference:
    """Run FK over every frame of ``motion`` in ``model``."""
    if motion.num_frames < 2:
        raise MotionFileError(None, f"clip {motion.name!r} has {motion.num_frames} frame(s); tracking needs ≥ 2")
    layout = body_layout(robot)
    body_ids, site_ids = point_site_and_body_ids(model, layout)
    qpos_adr, _ = joint_addresses(model, robot)
    data = mujoco.MjData(model)
    num = motion.num_frames
    # Annotated without its shape: numpy's stub types np.gradient(..., axis=0) of a known 3-D shape as a tuple.
    pos: np.ndarray = np.empty((num, len(layout.point_names), 3))
    quat = np.empty((num, len(body_ids), 4))
    for t in range(num):
        data.qpos[:3] = motion.root_pos_w[t]
        data.qpos[3:7] = motion.root_quat_w[t]
        data.qpos[qpos_adr] = motion.dof_pos[t]
        mujoco.mj_kinematics(model, data)
        pos[t, : len(body_ids)] = data.xpos[body_ids]
        pos[t, len(body_ids) :] = data.site_xpos[site_ids]
        quat[t] = data.xquat[body_ids]
    return MotionReference(
        name=motion.name,
        fps=motion.fps,
        point_pos_w=pos,
        point_lin_vel_w=np.gradient(pos, 1.0 / motion.fps, axis=0),
        body_quat_w=quat,
        body_ang_vel_w=_angular_velocity_w(quat, motion.fps),
        dof_pos=motion.dof_pos.copy(),
        dof_vel=np.gradient(motion.dof_pos, 1.0 / motion.fps, axis=0),
    )


def load_references(
    library: str | Path, model: mujoco.MjModel, robot: RobotSpec, clip: str | None = None
) -> list[MotionReference]:
    """FK'd references of every clip of a library (or of one named clip)."""
    clips = read_motion_library(library)
    if clip is not None:
        if clip not in clips:
            raise MotionFileError(library, f"no clip {clip!r}; clips: {', '.join(sorted(clips))}")
        clips = {clip: clips[clip]}
    refs = []
    for name, data in clips.items():
        motion = asap_dict_to_motion(name, data)
        if motion.dof_pos.shape[1] != robot.num_dof:
            raise MotionFileError(
                library, f"clip {name!r} has {motion.dof_pos.shape[1]} joints, robot {robot.name} has {robot.num_dof}"
            )
        refs.append(reference_from_motion(motion, model, robot))
    return refs
