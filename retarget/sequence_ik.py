"""Whole-sequence IK: all frames solved together, with contacts, floor and smoothness.

Each Gauss-Newton iteration linearises every frame's residuals at once (vectorised FK and
Jacobians from :mod:`retarget.tree_kinematics`) and solves one sparse system for the
increments of all frames: per-frame blocks from the tracking terms, coupled between frames by
an acceleration penalty on root position and joint angles. Ordered frame by frame, that
system is banded (bandwidth two frames), so a banded Cholesky solves it in time linear in the
clip length. Joint limits are enforced by projecting each iterate onto the box.

Why one solve for the whole clip rather than frame after frame: a per-frame IK can only
damp toward the previous frame, which lags and still jitters where the pose is
ill-conditioned; the acceleration term lets every frame see both neighbours, and one call per
iteration instead of one per frame is what makes thousands of frames per second possible.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solveh_banded
from threadpoolctl import threadpool_limits

from retarget.tree_kinematics import TreeKinematics, so3_exp, so3_log


_PIN_STIFFNESS = 1e8  # diagonal added to a pinned joint: its increment becomes (limit - dof)


@dataclass(frozen=True)
class SequenceIkConfig:
    """Weights (as residual scales) and iteration counts of the whole-sequence IK."""

    position_weight: float = 1.0
    """Scale of matched-point position residuals [1/m]."""
    segment_weight: float = 2.0
    """Scale of the limb-segment vector residuals (thigh, shank, upper arm, forearm) [1/m]."""
    orientation_weight: float = 0.25
    """Scale of pelvis, torso and swing-foot orientation residuals [1/rad]."""
    contact_position_weight: float = 10.0
    """Scale of the stance-foot position residual [1/m] (keeps the foot in place, on the floor)."""
    contact_orientation_weight: float = 3.0
    """Scale of the stance-foot flatness/heading residual [1/rad]."""
    floor_weight: float = 30.0
    """Scale of the floor residual of swing-foot sole points [1/m] (active only near or below the floor)."""
    self_collision_weight: float = 10.0
    """Scale of the residual of overlapping collision proxy spheres (arms against hips and thighs) [1/m]."""
    floor_margin_m: float = 0.003
    """Swing-foot sole points below this height are pushed up to it [m]: a Gauss-Newton step that
    only reacts once a point is below z = 0 leaves it slightly below at the last iteration."""
    acceleration_weight: float = 5e-3
    """Scale of joint and root accelerations [m per rad/s²]: 4 rad/s² costs like 2 cm of error."""
    damping: float = 1e-4
    """Levenberg-Marquardt damping added to the normal equations."""
    max_step: float = 0.25
    """Largest change of any coordinate of a frame in one iteration [rad or m]; larger steps are scaled."""
    iterations: int = 5
    """Gauss-Newton iterations over the whole clip (after the keyframe pass)."""
    extra_iterations: int = 6
    """Further iterations allowed while a floor or collision constraint is still violated."""
    constraint_tolerance_m: float = 0.002
    """Floor and collision violations up to this are accepted [m]."""
    keyframe_stride: int = 6
    """Every this many frames a keyframe is solved first; 1 disables the coarse pass."""
    keyframe_iterations: int = 25
    """Gauss-Newton iterations of the keyframe pass (from the rest pose)."""
    keyframe_max_step: float = 0.25
    """Trust region of the keyframe pass [rad or m]."""
    step_tolerance: float = 1e-4
    """Stop early when the largest increment of any frame is below this [rad, m]."""


@dataclass(frozen=True)
class PointLayout:
    """How the kinematics' tracked points split into targets, soles and collision proxies."""

    num_points: int
    """Target points (first in the kinematics)."""
    num_soles: int
    """Sole points (next), kept above the floor."""
    pair_a: np.ndarray
    """(K,) index (into the proxy block, after the soles) of the first sphere of each collision pair."""
    pair_b: np.ndarray
    """(K,) index of the second sphere of each pair."""
    pair_clearance_m: np.ndarray
    """(K,) sum of the two radii [m]: the spheres may not come closer than this."""
    proxy_radius_m: np.ndarray
    """(Q,) radius of each proxy sphere [m]; each must also stay above the floor."""
    segment_a: np.ndarray
    """(G,) target-point index where each limb segment starts (shoulder, elbow, hip, knee)."""
    segment_b: np.ndarray
    """(G,) target-point index where it ends (elbow, hand, knee, ankle)."""


@dataclass(frozen=True)
class SequenceTargets:
    """Per-frame targets; weights of 0 switch a residual off for that frame."""

    point_pos_w: np.ndarray
    """(T, P, 3) [m] targets of the tracked points."""
    point_weight: np.ndarray
    """(T, P) residual scale per point and frame [1/m]."""
    frame_rot_w: np.ndarray
    """(T, F, 3, 3) target orientations of the tracked frames."""
    frame_weight: np.ndarray
    """(T, F) residual scale per frame target [1/rad]."""
    segment_vec_w: np.ndarray
    """(T, G, 3) [m] target vector of each limb segment (end minus start): the scaled human limb."""
    segment_weight: np.ndarray
    """(T, G) residual scale per segment and frame [1/m]."""
    sole_floor_check: np.ndarray
    """(T, S) True where a sole point is kept above the floor by the floor residual (swing feet; stance
    feet are held on the floor by their contact targets)."""


class SequenceIK:
    """Solves whole clips for one robot and one set of tracked points, frames and sole points.

    `kin` tracks, in order, the positions of `layout.num_points` target points, `layout.num_soles`
    floor-checked sole points and the collision proxy points; and the orientations of the target frames.
    """

    def __init__(self, kin: TreeKinematics, layout: "PointLayout", lower, upper,
                 config: SequenceIkConfig = SequenceIkConfig()):  # fmt: skip
        self.kin = kin
        self.layout = layout
        self.num_points = layout.num_points
        self.lower = np.asarray(lower)
        self.upper = np.asarray(upper)
        self.config = config
        n = kin.num_tangent
        self._n = n
        iu, ju = np.triu_indices(n)
        self._iu, self._ju = iu, ju
        # Root position and joints are smoothed; root rotation follows the pelvis orientation target.
        self._smoothed = np.r_[0:3, 6:n]

    def _normal_equations(self, state, targets: SequenceTargets):
        """Per-frame Gauss-Newton blocks H_t = A_tᵀA_t and g_t = A_tᵀb_t from all weighted residual rows."""
        root_pos, root_rot, dof = state
        # Dense Jacobians for the target points and soles; collision spheres get them only when active.
        dense = self.num_points + self.layout.num_soles
        pos, jac_pos, ori, jac_rot, cache = self.kin.jacobians(root_pos, root_rot, dof, num_dense=dense)
        P = self.num_points
        num_frames = pos.shape[0]
        # Tracked positions, scaled by their weights.
        w_p = targets.point_weight[..., None]
        rows_p = (jac_pos[:, :P] * w_p[..., None]).reshape(num_frames, -1, self._n)
        res_p = (w_p * (targets.point_pos_w - pos[:, :P])).reshape(num_frames, -1)
        # Limb segments as vectors: the robot's upper arm points where the human's does even when its
        # shoulder is not exactly at the scaled human shoulder.
        lay = self.layout
        w_s = targets.segment_weight[..., None]
        seg = pos[:, lay.segment_b] - pos[:, lay.segment_a]
        rows_s = ((jac_pos[:, lay.segment_b] - jac_pos[:, lay.segment_a]) * w_s[..., None]).reshape(
            num_frames, -1, self._n
        )
        res_s = (w_s * (targets.segment_vec_w - seg)).reshape(num_frames, -1)
        # Tracked orientations: world-frame rotation error log(R_target Rᵀ).
        w_r = targets.frame_weight[..., None]
        err_r = so3_log(targets.frame_rot_w @ np.swapaxes(ori, -1, -2))
        rows_r = (jac_rot * w_r[..., None]).reshape(num_frames, -1, self._n)
        res_r = (w_r * err_r).reshape(num_frames, -1)
        A = np.concatenate([rows_p, rows_s, rows_r], axis=1)
        b = np.concatenate([res_p, res_s, res_r], axis=1)
        H = np.swapaxes(A, 1, 2) @ A
        g = (np.swapaxes(A, 1, 2) @ b[..., None])[..., 0]
        # One-sided constraints are active in few (frame, point) pairs: gather only those rows.
        violation = 0.0
        for frames, rows, res, weight in self._one_sided_rows(targets, pos, jac_pos, cache):
            if len(frames) == 0:
                continue
            _add_per_frame(H, frames, rows[:, :, None] * rows[:, None, :])
            _add_per_frame(g, frames, rows * res[:, None])
            violation = max(violation, float((res / weight).max(initial=0.0)))
        return H, g, violation

    def _one_sided_rows(self, targets: SequenceTargets, pos: np.ndarray, jac_pos: np.ndarray, cache):
        """(frame index, weighted Jacobian row, weighted residual, weight) of every active one-sided
        constraint: sole points and collision spheres above the floor, arm spheres clear of the body."""
        P, S, lay, cfg = self.num_points, self.layout.num_soles, self.layout, self.config
        out = []
        # Floor: swing-foot soles keep a small margin; stance soles are held at z = 0 by their targets.
        margin = np.where(targets.sole_floor_check, cfg.floor_margin_m, 0.0)
        sole_z = pos[:, P : P + S, 2]
        t, k = np.nonzero(self._sticky("floor", sole_z < margin))
        w = cfg.floor_weight
        out.append((t, jac_pos[t, P + k, 2] * w, np.maximum(margin[t, k] - sole_z[t, k], 0.0) * w, w))
        # Collision spheres (hands, knees, hips) stay above the floor too, e.g. in a crawl.
        proxy_z = pos[:, P + S :, 2]
        t, k = np.nonzero(self._sticky("proxy_floor", proxy_z < lay.proxy_radius_m))
        jac = self.kin.point_jacobians(cache, t, P + S + k)
        out.append((t, jac[:, 2] * w, np.maximum(lay.proxy_radius_m[k] - proxy_z[t, k], 0.0) * w, w))
        # Arm spheres are pushed out of body spheres along the line of their centres.
        proxy = pos[:, P + S :]
        diff = proxy[:, lay.pair_a] - proxy[:, lay.pair_b]  # (T, K, 3)
        dist = np.linalg.norm(diff, axis=-1)
        t, k = np.nonzero(self._sticky("collision", dist < lay.pair_clearance_m))
        normal = diff[t, k] / np.maximum(dist[t, k], 1e-9)[:, None]
        jac = self.kin.point_jacobians(cache, t, P + S + lay.pair_a[k]) - self.kin.point_jacobians(
            cache, t, P + S + lay.pair_b[k]
        )  # (N, 3, n)
        w = cfg.self_collision_weight
        rows = np.einsum("na,nam->nm", normal, jac) * w
        out.append((t, rows, np.maximum(lay.pair_clearance_m[k] - dist[t, k], 0.0) * w, w))
        return out

    def _sticky(self, name: str, violated: np.ndarray) -> np.ndarray:
        """Rows of a one-sided constraint stay on once violated (with zero residual while satisfied),
        for the rest of the solve once the planned iterations are done: switching them off again makes
        Gauss-Newton chatter around the boundary, leaving points alternately in and out of the floor."""
        if not self._sticky_on:
            return violated
        sticky = self._active.get(name)
        sticky = violated if sticky is None or sticky.shape != violated.shape else (sticky | violated)
        self._active[name] = sticky
        return sticky

    def _pin_joints_to_limits(self, H: np.ndarray, g: np.ndarray, dof: np.ndarray, dof_step: np.ndarray) -> bool:
        """Joints whose step would cross a limit are pinned at that limit for a second solve, so the
        other joints compensate instead of planning on a move that the projection would undo.
        Returns whether any joint was pinned (H and g are modified in place)."""
        target = np.clip(dof + dof_step, self.lower, self.upper)
        t, d = np.nonzero(target != dof + dof_step)
        if len(t) == 0:
            return False
        # A stiff spring to the limit: the solved increment of a pinned joint is (limit - dof).
        H[t, 6 + d, 6 + d] += _PIN_STIFFNESS
        g[t, 6 + d] += _PIN_STIFFNESS * (target[t, d] - dof[t, d])
        return True

    def _solve_banded(self, H, g, x_smooth, fps):
        T, n = g.shape
        u = 2 * n
        size = T * n
        ab = np.zeros((u + 1, size))
        # Per-frame blocks (upper triangle) into banded upper storage: ab[u + i - j, j] = A[i, j].
        cols = (np.arange(T)[:, None] * n + self._ju[None, :]).ravel()
        rows = np.broadcast_to(u + self._iu - self._ju, (T, len(self._iu))).ravel()
        ab[rows, cols] = H[:, self._iu, self._ju].ravel()
        ab[u] += self.config.damping
        rhs = g.reshape(-1).copy()
        if T >= 3 and self.config.acceleration_weight > 0:
            w = (self.config.acceleration_weight * fps**2) ** 2
            # D2ᵀD2 for second differences over T frames: diagonals (0, ±1, ±2) per smoothed dimension.
            d0 = np.full(T, 6.0)
            d0[[0, -1]], d0[[1, -2]] = 1.0, 5.0
            d1 = np.full(T - 1, -4.0)
            d1[[0, -1]] = -2.0
            d2 = np.ones(T - 2)
            for d in self._smoothed:
                idx = np.arange(T) * n + d
                ab[u, idx] += w * d0
                ab[u - n, idx[1:]] += w * d1
                ab[u - 2 * n, idx[2:]] += w * d2
            # Gradient of the penalty at the current values: -w D2ᵀD2 x.
            x = x_smooth
            acc = x[:-2] - 2 * x[1:-1] + x[2:]
            grad = np.zeros_like(x)
            grad[:-2] += acc
            grad[1:-1] -= 2 * acc
            grad[2:] += acc
            full = np.zeros((T, n))
            full[:, self._smoothed] = grad
            rhs -= w * full.reshape(-1)
        return solveh_banded(ab, rhs, lower=False, check_finite=False).reshape(T, n)

    def solve(self, targets: SequenceTargets, fps: float, init):
        """Solve the clip from `init` = (root_pos (T,3), root_rot (T,3,3), dof (T,D)).

        Returns the state tuple and the number of iterations used."""
        # BLAS threads fight each other on these small problems (and with a batch's other
        # workers): one thread is many times faster than two on a loaded machine.
        with threadpool_limits(limits=1, user_api="blas"):
            stride = self.config.keyframe_stride
            num_frames = targets.point_pos_w.shape[0]
            coarse_iterations = 0
            if stride > 1 and num_frames > 2 * stride:
                # Coarse to fine: solve every `stride`-th frame from the rest pose (cheap: 1/stride of the
                # frames, where large moves such as a deep squat need many iterations), then start the
                # full clip from the interpolated keyframe solution, which needs only a few.
                keys = np.unique(np.r_[np.arange(0, num_frames, stride), num_frames - 1])
                coarse, coarse_iterations = self._solve(
                    _take(targets, keys), fps / stride, tuple(a[keys] for a in init), self.config.keyframe_iterations,
                    max_step=self.config.keyframe_max_step, extra_iterations=0,
                )  # fmt: skip
                init = _interpolate_state(coarse, keys, num_frames)
            state, iterations = self._solve(
                targets, fps, init, self.config.iterations, self.config.max_step, self.config.extra_iterations
            )
            return state, iterations + coarse_iterations / stride

    def _solve(self, targets: SequenceTargets, fps: float, init, max_iterations: int, max_step: float,
               extra_iterations: int):  # fmt: skip
        root_pos, root_rot, dof = (np.array(a, dtype=np.float64, copy=True) for a in init)
        dof = np.clip(dof, self.lower, self.upper)
        self._active: dict[str, np.ndarray] = {}
        self._sticky_on = False
        iterations = 0
        for iterations in range(1, max_iterations + extra_iterations + 1):
            self._sticky_on = iterations > max_iterations
            H, g, violation = self._normal_equations((root_pos, root_rot, dof), targets)
            # Past the planned iterations, go on only while a floor or collision constraint is violated:
            # their rows switch on only once violated, so the last planned step can leave a point slightly in.
            if iterations > max_iterations and violation <= self.config.constraint_tolerance_m:
                iterations -= 1
                break
            x_smooth = np.concatenate([root_pos, np.zeros_like(root_pos), dof], axis=1)[:, self._smoothed]
            step = self._solve_banded(H, g, x_smooth, fps)
            if self._pin_joints_to_limits(H, g, dof, step[:, 6:]):
                step = self._solve_banded(H, g, x_smooth, fps)
            # Trust region: Gauss-Newton steps are only valid near the linearisation point.
            largest = np.abs(step).max(axis=1, keepdims=True)
            step *= np.minimum(1.0, max_step / np.maximum(largest, 1e-12))
            root_pos += step[:, 0:3]
            root_rot = so3_exp(step[:, 3:6]) @ root_rot
            dof = np.clip(dof + step[:, 6:], self.lower, self.upper)
            if np.abs(step).max() < self.config.step_tolerance and violation <= self.config.constraint_tolerance_m:
                break
        return (root_pos, root_rot, dof), iterations


def _add_per_frame(total: np.ndarray, frames: np.ndarray, values: np.ndarray) -> None:
    """total[frames[i]] += values[i], summing repeated frames (a faster np.add.at)."""
    order = np.argsort(frames, kind="stable")
    sorted_frames = frames[order]
    unique, starts = np.unique(sorted_frames, return_index=True)
    total[unique] += np.add.reduceat(values[order], starts, axis=0)


def _take(targets: SequenceTargets, frames: np.ndarray) -> SequenceTargets:
    return SequenceTargets(*(getattr(targets, f.name)[frames] for f in dataclasses.fields(SequenceTargets)))


def _interpolate_state(state, keys: np.ndarray, num_frames: int):
    """Keyframe states to every frame: lerp positions and joints, slerp the root rotation."""
    root_pos, root_rot, dof = state
    t = np.arange(num_frames)
    lerp = lambda a: np.stack([np.interp(t, keys, a[:, i]) for i in range(a.shape[1])], axis=1)  # noqa: E731
    idx = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 2)
    alpha = ((t - keys[idx]) / (keys[idx + 1] - keys[idx]))[:, None]
    # Slerp on SO(3): R = R0 · exp(alpha · log(R0ᵀ R1)).
    rel = so3_log(np.swapaxes(root_rot[idx], -1, -2) @ root_rot[idx + 1])
    rot = root_rot[idx] @ so3_exp(alpha * rel)
    return lerp(root_pos), rot, lerp(dof)
