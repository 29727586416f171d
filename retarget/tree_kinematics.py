"""Forward kinematics and Jacobians of a floating-base robot, vectorised over frames.

The kinematic tree (joint parents, placements, axes, frame placements) is read from the
pinocchio model built from the URDF; this module only evaluates it for many frames at once
with numpy, which is what a whole-sequence solver needs (one call per iteration instead of
one per frame). Tests check it against pinocchio's own FK and against finite differences.

Configuration: root position ``root_pos_w`` (T, 3), root rotation ``root_rot_w`` (T, 3, 3) and
joint angles ``dof`` (T, D). Tangent (increment) layout, used by :meth:`jacobians`:
``[d root_pos_w (3), d root_rot (3, world-frame rotation vector), d dof (D)]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from retarget.rotations import matrix_to_rotvec, rotvec_to_matrix, skew
from robots.pinocchio_model import build_pinocchio_model
from robots.registry import RobotSpec


def axis_angle_matrices(axes: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rodrigues: rotation matrices (..., 3, 3) about unit `axes` (..., 3) by `angles` (...)."""
    x, y, z = axes[..., 0], axes[..., 1], axes[..., 2]
    c, s = np.cos(angles), np.sin(angles)
    C = 1.0 - c
    return np.stack(
        [
            np.stack([c + x * x * C, x * y * C - z * s, x * z * C + y * s], -1),
            np.stack([y * x * C + z * s, c + y * y * C, y * z * C - x * s], -1),
            np.stack([z * x * C - y * s, z * y * C + x * s, c + z * z * C], -1),
        ],
        -2,
    )


so3_exp = rotvec_to_matrix  # (…, 3) rotation vectors → (…, 3, 3)
so3_log = matrix_to_rotvec  # (…, 3, 3) → rotation vectors, accurate near 0 and π


@dataclass(frozen=True)
class PointSpec:
    """A point rigidly attached to a joint's frame."""

    joint: int
    """Index into the revolute joints (-1 for the root)."""
    pos_j: np.ndarray
    """Position in that joint's frame [m]."""
    rot_j: np.ndarray
    """Orientation of the attached body frame in the joint frame (3, 3)."""


class TreeKinematics:
    """Vectorised FK/Jacobians for one robot, a set of tracked points and a set of tracked frames."""

    def __init__(
        self,
        robot: RobotSpec,
        points: Sequence[tuple[str, tuple[float, float, float]]],
        frames: Sequence[str] = (),
    ):
        """`points`: (body name, offset in that body's frame [m]) whose positions are tracked;
        `frames`: body names whose orientations are tracked."""
        model = build_pinocchio_model(robot)
        self.num_dof = robot.num_dof
        # Revolute joints are pinocchio joints 2.. (0 universe, 1 free flyer); index them from 0.
        self.parent = np.array([model.parents[i] - 2 for i in range(2, model.njoints)])  # -1 = root
        self.placement_rot = np.array([model.jointPlacements[i].rotation for i in range(2, model.njoints)])
        self.placement_pos = np.array([model.jointPlacements[i].translation for i in range(2, model.njoints)])
        self.axis_j = robot.urdf.joint_axes_b
        specs = [self._attach(model, body, offset) for body, offset in points]
        specs += [self._attach(model, body, (0.0, 0.0, 0.0)) for body in frames]
        self.num_points = len(points)
        self.num_frames = len(frames)
        self.point_joint = np.array([p.joint for p in specs], dtype=int)
        self.point_pos_j = np.array([p.pos_j for p in specs]).reshape(-1, 3)
        self.point_rot_j = np.array([p.rot_j for p in specs]).reshape(-1, 3, 3)
        # ancestor[k, j]: revolute joint j moves point/frame k; chains[k]: those joints' indices.
        self.ancestor = np.zeros((len(specs), self.num_dof), dtype=bool)
        for k, spec in enumerate(specs):
            j = spec.joint
            while j >= 0:
                self.ancestor[k, j] = True
                j = self.parent[j]
        self.chains = [np.flatnonzero(row) for row in self.ancestor]

    @staticmethod
    def _attach(model: pin.Model, body: str, offset) -> PointSpec:
        frame_id = model.getFrameId(body, pin.BODY)
        if frame_id >= model.nframes:
            raise KeyError(f"robot has no body {body!r}")
        placement = model.frames[frame_id].placement
        return PointSpec(
            joint=model.frames[frame_id].parentJoint - 2,
            pos_j=placement.rotation @ np.asarray(offset, dtype=float) + placement.translation,
            rot_j=placement.rotation.copy(),
        )

    @property
    def num_tangent(self) -> int:
        return 6 + self.num_dof

    def joint_frames(self, root_pos_w: np.ndarray, root_rot_w: np.ndarray, dof: np.ndarray):
        """World origin (T, D, 3), orientation (T, D, 3, 3) and axis (T, D, 3) of every joint."""
        num_frames = dof.shape[0]
        local = axis_angle_matrices(np.broadcast_to(self.axis_j, dof.shape + (3,)), dof)
        origin = np.empty((num_frames, self.num_dof, 3))
        rot = np.empty((num_frames, self.num_dof, 3, 3))
        for j in range(self.num_dof):
            p = self.parent[j]
            parent_rot = root_rot_w if p < 0 else rot[:, p]
            parent_pos = root_pos_w if p < 0 else origin[:, p]
            origin[:, j] = parent_pos + parent_rot @ self.placement_pos[j]
            rot[:, j] = parent_rot @ self.placement_rot[j] @ local[:, j]
        axis_w = np.einsum("tjab,jb->tja", rot, self.axis_j)
        return origin, rot, axis_w

    def _attached(self, root_pos_w, root_rot_w, frames):
        """Positions (T, P, 3) of the tracked points and orientations (T, F, 3, 3) of the tracked frames:
        only what is tracked of each (the rotations of the many points are never needed)."""
        origin, rot, _ = frames
        # Index 0 of the extended arrays is the root, 1.. the revolute joints.
        all_rot = np.concatenate([root_rot_w[:, None], rot], axis=1)
        all_pos = np.concatenate([root_pos_w[:, None], origin], axis=1)
        P = self.num_points
        point_joint = self.point_joint[:P] + 1
        pos = all_pos[:, point_joint] + np.einsum("tkab,kb->tka", all_rot[:, point_joint], self.point_pos_j[:P])
        return pos, all_rot[:, self.point_joint[P:] + 1] @ self.point_rot_j[P:]

    def forward(self, root_pos_w, root_rot_w, dof):
        """Tracked point positions (T, P, 3) and tracked frame orientations (T, F, 3, 3)."""
        return self._attached(root_pos_w, root_rot_w, self.joint_frames(root_pos_w, root_rot_w, dof))

    def jacobians(self, root_pos_w, root_rot_w, dof, num_dense: int | None = None):
        """Tracked positions and orientations with their Jacobians w.r.t. the tangent increment.

        Only the first `num_dense` points (default all) get Jacobians for every frame; the others
        (e.g. collision spheres, rarely active) get them on demand from :meth:`point_jacobians` with
        the returned cache.

        Returns:
            pos (T, P, 3), jac_pos (T, num_dense, 3, 6+D), ori (T, F, 3, 3), jac_rot (T, F, 3, 6+D)
            (jac_rot maps increments to the world-frame angular change of the frame), cache.
        """
        frames = self.joint_frames(root_pos_w, root_rot_w, dof)
        origin, _, axis_w = frames
        pos, ori = self._attached(root_pos_w, root_rot_w, frames)
        P = self.num_points
        cache = (root_pos_w, origin, axis_w, pos)
        dense = P if num_dense is None else num_dense
        t, k = np.meshgrid(np.arange(dof.shape[0]), np.arange(dense), indexing="ij")
        jac_pos = self.point_jacobians(cache, t.ravel(), k.ravel()).reshape(dof.shape[0], dense, 3, -1)
        jac_rot = np.zeros((dof.shape[0], self.num_frames, 3, self.num_tangent))
        jac_rot[..., 3:6] = np.eye(3)
        jac_rot[..., 6:] = np.swapaxes(axis_w[:, None] * self.ancestor[None, P:, :, None], 2, 3)
        return pos, jac_pos, ori, jac_rot, cache

    def point_jacobians(self, cache, frames: np.ndarray, points: np.ndarray) -> np.ndarray:
        """(N, 3, 6+D) position Jacobians of tracked point `points[i]` at frame `frames[i]`."""
        root_pos_w, origin, axis_w, pos = cache
        p = pos[frames, points]  # (N, 3)
        jac = np.empty((len(frames), 3, self.num_tangent))
        jac[:, :, 0:3] = np.eye(3)
        # d p / d theta_root = e_k × (p - root) for the world-frame rotation increment.
        jac[:, :, 3:6] = -skew(p - root_pos_w[frames])
        # Column of joint j: axis_j × (p - o_j), zero unless j moves the point.
        a = axis_w[frames]  # (N, D, 3)
        lever = p[:, None, :] - origin[frames]  # (N, D, 3)
        mask = self.ancestor[points]
        jac[:, 0, 6:] = (a[..., 1] * lever[..., 2] - a[..., 2] * lever[..., 1]) * mask
        jac[:, 1, 6:] = (a[..., 2] * lever[..., 0] - a[..., 0] * lever[..., 2]) * mask
        jac[:, 2, 6:] = (a[..., 0] * lever[..., 1] - a[..., 1] * lever[..., 0]) * mask
        return jac
