"""The whole-sequence IK's Gauss-Newton iterations in compiled code (numba): one call per pass.

Per iteration: the per-frame normal equations (:func:`retarget.ik.kernel.normal_equations`), then one step
(:func:`gauss_newton_step`): springs on the joints held at a limit since the last iteration, the banded
system with the acceleration penalty, its Cholesky factor (:mod:`retarget.ik.banded`), the step, joints that
would newly cross a limit pinned there (low-rank correction from the same factor), the trust region and the
state update. Each piece used to be a numpy or scipy call costing 10-100 µs whatever the number of frames;
the keyframe passes (9-25 frames) paid ~0.45 ms per iteration in them. Compiled, an iteration costs what its
arithmetic costs.

State layout: tangent coordinates per frame [root position (3) | root rotation (3) | joints (D)]; the
system is ordered frame by frame, so it is banded with two frames' width.
"""

from __future__ import annotations

import sys

import numba
import numpy as np

from retarget.ik import banded, kernel
from retarget.ik.banded import (
    TILE,
    band_backward,
    band_cholesky,
    band_forward_many,
    band_solve,
    band_storage,
    dense_cholesky_solve,
)
from retarget.ik.compiled_cache import stamp_with_sources
from retarget.ik.kernel import normal_equations
from retarget.ik.pass_inputs import FrameTargets, OneSided, ResidualLayout, StepSettings, TreeArrays

_CACHE = True
PIN_STIFFNESS = 1e8
"""Diagonal added for a joint pinned at its limit: its increment becomes (limit − angle)."""
WOODBURY_MAX_PINS = 24
"""Beyond this many newly pinned joints a second factorisation is cheaper than the low-rank correction."""


@numba.njit(cache=_CACHE, fastmath=False)
def assemble_band(H, damping, acc_penalty, smoothed, band):
    """`band` (see :mod:`retarget.ik.banded`; bandwidth 2n) ← blockdiag(H_t) + damping·I + acc_penalty·D2ᵀD2 on
    the coordinates where `smoothed` (n,) is True (D2: second differences over frames)."""
    T, n = H.shape[0], H.shape[1]
    band[:, :] = 0.0
    for t in range(T):
        for b in range(n):
            column = band[t * n + b]  # column t n + b of the matrix: rows t n + a, a ≥ b, at offsets a − b
            for a in range(b, n):
                column[a - b] = H[t, a, b]
            column[0] += damping
    for j in range(T * n, band.shape[0]):
        band[j, 0] = 1.0  # padding columns: the identity
    if T < 3 or acc_penalty <= 0.0:
        return
    for t in range(T):
        # D2ᵀD2: diagonal 1, 5, 6, …, 6, 5, 1; first off-diagonal −2, −4, …, −4, −2; second 1.
        d0 = 6.0
        if t == 0 or t == T - 1:
            d0 = 1.0
        elif t == 1 or t == T - 2:
            d0 = 5.0
        d1 = -2.0 if (t == 1 or t == T - 1) else -4.0
        for d in range(n):
            if not smoothed[d]:
                continue
            i = t * n + d
            band[i, 0] += acc_penalty * d0
            if t >= 1:
                band[i - n, n] += acc_penalty * d1  # row i of column i − n
            if t >= 2:
                band[i - 2 * n, 2 * n] += acc_penalty


@numba.njit(cache=_CACHE, fastmath=False)
def smoothing_rhs(g, root_pos, dof, smoothed, acc_penalty, rhs):
    """rhs (≥ T n,) ← g − acc_penalty·D2ᵀD2 x: the gradient with the acceleration penalty's at the current state
    x (root position, joints; the root rotation is never smoothed); entries past T n (padding) ← 0."""
    T, n = g.shape
    rhs[T * n :] = 0.0
    for t in range(T):
        for c in range(n):
            rhs[t * n + c] = g[t, c]
    if T < 3 or acc_penalty <= 0.0:
        return
    # The second differences D2 x, frame by frame (contiguous rows, no branch per coordinate), then D2ᵀ of them.
    D = dof.shape[1]
    second = np.zeros((T - 2, n))
    for k in range(T - 2):
        row = second[k]
        for c in range(3):
            row[c] = root_pos[k, c] - 2.0 * root_pos[k + 1, c] + root_pos[k + 2, c]
        for d in range(D):
            row[6 + d] = dof[k, d] - 2.0 * dof[k + 1, d] + dof[k + 2, d]
    for c in range(n):
        if not smoothed[c] or (3 <= c < 6):
            second[:, c] = 0.0
    for t in range(T):
        # Σ over the second differences k touching frame t, in the order k = t, t − 1, t − 2.
        out = rhs[t * n : (t + 1) * n]
        for c in range(n):
            grad = 0.0
            if t <= T - 3:
                grad += second[t, c]
            if 1 <= t <= T - 2:
                grad -= 2.0 * second[t - 1, c]
            if t >= 2:
                grad += second[t - 2, c]
            out[c] -= acc_penalty * grad


@numba.njit(cache=_CACHE, fastmath=False)
def linear_step(H, g, root_pos, dof, smoothed, damping, acc_penalty, band, inv_diag, step):
    """Solve the banded normal equations for `step` (N₄ ≥ T n, padded); `band` and `inv_diag` keep the factor
    (for pinning)."""
    assemble_band(H, damping, acc_penalty, smoothed, band)
    smoothing_rhs(g, root_pos, dof, smoothed, acc_penalty, step)
    if not band_cholesky(band, inv_diag):
        raise ValueError("whole-sequence IK: the normal equations are not positive definite")
    band_solve(band, inv_diag, step)


@numba.njit(cache=_CACHE, fastmath=False)
def hold_at_limits(H, g, dof, held, lower, upper, side):
    """Springs in H and g that keep each joint of `held` (T, D) (pinned in the previous iteration) at its
    limit; `side` (T, D) ← +1 where a held joint sits at its upper limit, −1 at its lower, 0 elsewhere. A joint
    at a limit usually stays there, so carrying the active set over saves pinning it again every iteration."""
    T, D = dof.shape
    for t in range(T):
        for d in range(D):
            if not held[t, d]:
                side[t, d] = 0.0
                continue
            upper_side = 2.0 * dof[t, d] > lower[d] + upper[d]
            side[t, d] = 1.0 if upper_side else -1.0
            limit = upper[d] if upper_side else lower[d]
            H[t, 6 + d, 6 + d] += PIN_STIFFNESS
            g[t, 6 + d] += PIN_STIFFNESS * (limit - dof[t, d])


@numba.njit(cache=_CACHE, fastmath=False)
def still_pressing(step, dof, side, lower, upper, out):
    """`out` (T, D) ← held joints whose spring pushes back (the step would carry them past their limit): they
    stay held; the others are released for the next iteration. `step` is (T, n)."""
    T, D = dof.shape
    for t in range(T):
        for d in range(D):
            wanted = upper[d] - dof[t, d] if side[t, d] > 0 else lower[d] - dof[t, d]
            out[t, d] = side[t, d] * (step[t, 6 + d] - wanted) > 0.0


@numba.njit(cache=_CACHE, fastmath=False)
def pin_to_limits(
    H, g, root_pos, dof, held, lower, upper, smoothed, damping, acc_penalty, band, inv_diag, step, pinned
):
    """Re-solve `step` (N₄,) with every joint that would newly cross a limit (not in `held`) held exactly at
    it, the other coordinates compensating; `pinned` (T, D) ← those joints.

    Few (the usual case): the equality-constrained solution from the same factor, x = x₀ + A⁻¹E λ with
    (EᵀA⁻¹E) λ = y − Eᵀx₀; with Y = L⁻¹E, EᵀA⁻¹E = YᵀY and A⁻¹Eλ = L⁻ᵀ(Yλ), so only forward solves (four
    pins at a time, :func:`retarget.ik.banded.band_forward_many`) and one backward solve. Many: stiff springs
    in H and g and a new factorisation."""
    T, D = dof.shape
    n = 6 + D
    count = 0
    for t in range(T):
        for d in range(D):
            moved = dof[t, d] + step[t * n + 6 + d]
            crossing = (moved < lower[d] or moved > upper[d]) and not held[t, d]
            pinned[t, d] = crossing
            if crossing:
                count += 1
    if count == 0:
        return
    index = np.empty(count, dtype=np.int64)
    wanted = np.empty(count)
    j = 0
    for t in range(T):
        for d in range(D):
            if pinned[t, d]:
                moved = dof[t, d] + step[t * n + 6 + d]
                index[j] = t * n + 6 + d
                wanted[j] = min(max(moved, lower[d]), upper[d]) - dof[t, d]
                j += 1
    if count > WOODBURY_MAX_PINS:
        for j in range(count):
            t, c = index[j] // n, index[j] % n
            H[t, c, c] += PIN_STIFFNESS
            g[t, c] += PIN_STIFFNESS * wanted[j]
        linear_step(H, g, root_pos, dof, smoothed, damping, acc_penalty, band, inv_diag, step)
        return
    N = band.shape[0]
    Y = np.zeros((-(-count // TILE) * TILE, N))  # rows past `count` stay zero (and solve to zero)
    first = N
    for j in range(count):
        Y[j, index[j]] = 1.0
        first = min(first, index[j])
    band_forward_many(band, inv_diag, Y, first)
    M = np.empty((count, count))
    lam = np.empty(count)
    for a in range(count):
        lam[a] = wanted[a] - step[index[a]]
        for b in range(a + 1):
            s = _dot_from(Y[a], Y[b], max(index[a], index[b]))
            M[a, b] = s
            M[b, a] = s
    if not dense_cholesky_solve(M, lam):
        raise ValueError("whole-sequence IK: the pinned joints' system is not positive definite")
    v = np.zeros(N)
    for j in range(count):
        y = Y[j]
        for m in range(index[j], N):
            v[m] += lam[j] * y[m]
    band_backward(band, inv_diag, v)
    for m in range(N):
        step[m] += v[m]


@numba.njit(cache=_CACHE, fastmath=True)
def _dot_from(a, b, start):
    """Σ a[m] b[m] over m ≥ start (reassociated so that it vectorises)."""
    s = 0.0
    for m in range(start, a.shape[0]):
        s += a[m] * b[m]
    return s


@numba.njit(cache=_CACHE, fastmath=False)
def _rotate_by(rotvec, R, tmp):
    """R ← exp(rotvec) R (via the unit quaternion, as :func:`retarget.rotations.rotvec_to_matrix`)."""
    x, y, z = rotvec[0], rotvec[1], rotvec[2]
    angle = np.sqrt(x * x + y * y + z * z)
    sinc = 0.5 - angle * angle / 48.0 if angle < 1e-4 else np.sin(0.5 * angle) / angle
    qw, qx, qy, qz = np.cos(0.5 * angle), sinc * x, sinc * y, sinc * z
    norm = np.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
    qw, qx, qy, qz = qw / norm, qx / norm, qy / norm, qz / norm
    E = np.empty((3, 3))
    E[0, 0], E[0, 1], E[0, 2] = 1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)
    E[1, 0], E[1, 1], E[1, 2] = 2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)
    E[2, 0], E[2, 1], E[2, 2] = 2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)
    for i in range(3):
        for j in range(3):
            tmp[i, j] = E[i, 0] * R[0, j] + E[i, 1] * R[1, j] + E[i, 2] * R[2, j]
    R[:, :] = tmp


@numba.njit(cache=_CACHE, fastmath=False)
def work_arrays(T, n):
    """The banded factor's storage, its inverse diagonal and the step, for T frames of n coordinates."""
    rows, width = band_storage(T * n, 2 * n)
    return np.empty((rows, width)), np.empty(rows), np.empty(rows)


@numba.njit(cache=_CACHE, fastmath=False)
def gauss_newton_step(H, g, root_pos, root_rot, dof, held, lower, upper, smoothed, settings, band, inv_diag, step):
    """One step from the normal equations H (T, n, n), g (T, n) (both modified): updates the state
    (root_pos (T, 3), root_rot (T, 3, 3), dof (T, D)) and `held` (T, D) in place; returns the largest change
    of any coordinate [rad or m]. `band`, `inv_diag` and `step` are work arrays (:func:`work_arrays`)."""
    T, n = g.shape
    D = n - 6
    damping, acc_penalty = settings.damping, settings.acceleration_penalty
    side = np.zeros((T, D))
    if settings.pin_limits:
        hold_at_limits(H, g, dof, held, lower, upper, side)
    linear_step(H, g, root_pos, dof, smoothed, damping, acc_penalty, band, inv_diag, step)
    if settings.pin_limits:
        still = np.empty((T, D), dtype=np.bool_)
        still_pressing(step[: T * n].reshape(T, n), dof, side, lower, upper, still)
        pinned = np.empty((T, D), dtype=np.bool_)
        pin_to_limits(
            H, g, root_pos, dof, held, lower, upper, smoothed, damping, acc_penalty, band, inv_diag, step, pinned
        )
        for t in range(T):
            for d in range(D):
                held[t, d] = still[t, d] or pinned[t, d]
    largest_all = 0.0
    tmp = np.empty((3, 3))
    for t in range(T):
        s = step[t * n : (t + 1) * n]
        # Trust region: Gauss-Newton steps are only valid near the linearisation point.
        largest = 0.0
        for c in range(n):
            largest = max(largest, abs(s[c]))
        scale = min(1.0, settings.max_step / max(largest, 1e-12))
        for c in range(n):
            s[c] *= scale
            largest_all = max(largest_all, abs(s[c]))
        for c in range(3):
            root_pos[t, c] += s[c]
        _rotate_by(s[3:6], root_rot[t], tmp)
        for d in range(D):
            dof[t, d] = min(max(dof[t, d] + s[6 + d], lower[d]), upper[d])
    return largest_all


@numba.njit(cache=_CACHE, fastmath=False)
def solve_pass(
    root_pos, root_rot, dof, tree, layout, targets, one_sided, lower, upper, smoothed, settings, planned, extra
):
    """Gauss-Newton iterations from the state (modified in place): `planned` iterations, then up to `extra`
    more while a one-sided (floor, collision) constraint is violated by more than the tolerance. In those,
    switched-on rows stay on (and, with the augmented Lagrangian, update their shifts), so they cannot flip
    on and off. Stops early once no coordinate moves more than the step tolerance. Returns the iterations
    used. `one_sided` (:class:`retarget.ik.kernel.OneSided`) carries the rows' state; its flags are set here."""
    T, D = dof.shape
    n = 6 + D
    H = np.empty((T, n, n))
    g = np.empty((T, n))
    # Allocated once per pass: megabytes for long clips, fresh pages (and page faults) if made every iteration.
    band, inv_diag, step = work_arrays(T, n)
    held = np.zeros((T, D), dtype=np.bool_)
    tolerance = settings.constraint_tolerance_m
    iterations = 0
    for iteration in range(1, planned + extra + 1):
        iterations = iteration
        sticky = iteration > planned
        rows = OneSided(
            one_sided.floor_margin_m,
            one_sided.floor_weight,
            one_sided.collision_weight,
            sticky,
            settings.augmented_lagrangian and sticky,
            one_sided.floor_on,
            one_sided.sphere_on,
            one_sided.pair_on,
            one_sided.floor_shift_m,
            one_sided.sphere_shift_m,
            one_sided.pair_shift_m,
        )
        violation = normal_equations(root_pos, root_rot, dof, tree, layout, targets, rows, H, g)
        # Past the planned iterations, go on only while a floor or collision constraint is violated: their
        # rows switch on only once violated, so the last planned step can leave a point slightly in.
        if sticky and violation <= tolerance:
            iterations -= 1
            break
        largest = gauss_newton_step(
            H, g, root_pos, root_rot, dof, held, lower, upper, smoothed, settings, band, inv_diag, step
        )
        if largest < settings.step_tolerance and violation <= tolerance:
            break
    return iterations


@numba.njit(cache=_CACHE, fastmath=False)
def solve_pass_flat(
    root_pos,
    root_rot,
    dof,
    parent,
    placement_rot,
    placement_pos,
    axis_j,
    point_joint,
    point_pos_j,
    point_rot_j,
    ancestors,
    ancestor_count,
    num_points,
    num_soles,
    num_spheres,
    num_frames,
    segment_a,
    segment_b,
    sphere_radius_m,
    pair_a,
    pair_b,
    pair_clearance_m,
    point_pos_w,
    point_weight,
    segment_vec_w,
    segment_weight,
    frame_rot_w,
    frame_weight,
    sole_floor_check,
    floor_margin_m,
    floor_weight,
    collision_weight,
    sticky,
    augmented,
    floor_on,
    sphere_on,
    pair_on,
    floor_shift_m,
    sphere_shift_m,
    pair_shift_m,
    lower,
    upper,
    smoothed,
    damping,
    acceleration_penalty,
    pin_limits,
    max_step,
    step_tolerance,
    constraint_tolerance_m,
    augmented_lagrangian,
    planned,
    extra,
):
    """:func:`solve_pass` with every named tuple spread into its fields (in field order): the one entry point
    of the ahead-of-time compiled module (:mod:`retarget.ik.aot`), whose signature can only name arrays and
    scalars. :data:`FLAT_SIGNATURE` lists the types."""
    tree = TreeArrays(
        parent, placement_rot, placement_pos, axis_j, point_joint, point_pos_j, point_rot_j, ancestors, ancestor_count
    )
    layout = ResidualLayout(
        num_points,
        num_soles,
        num_spheres,
        num_frames,
        segment_a,
        segment_b,
        sphere_radius_m,
        pair_a,
        pair_b,
        pair_clearance_m,
    )
    targets = FrameTargets(
        point_pos_w, point_weight, segment_vec_w, segment_weight, frame_rot_w, frame_weight, sole_floor_check
    )
    one_sided = OneSided(
        floor_margin_m,
        floor_weight,
        collision_weight,
        sticky,
        augmented,
        floor_on,
        sphere_on,
        pair_on,
        floor_shift_m,
        sphere_shift_m,
        pair_shift_m,
    )
    settings = StepSettings(
        damping,
        acceleration_penalty,
        pin_limits,
        max_step,
        step_tolerance,
        constraint_tolerance_m,
        augmented_lagrangian,
    )
    return solve_pass(
        root_pos, root_rot, dof, tree, layout, targets, one_sided, lower, upper, smoothed, settings, planned, extra
    )


def _flat_signature() -> numba.core.typing.Signature:
    f8, i8, b1 = numba.float64, numba.int64, numba.boolean

    def arr(dtype, ndim):
        return numba.types.Array(dtype, ndim, "C")

    args = (
        [arr(f8, 2), arr(f8, 3), arr(f8, 2)]  # state
        + [arr(i8, 1), arr(f8, 3), arr(f8, 2), arr(f8, 2), arr(i8, 1), arr(f8, 2), arr(f8, 3), arr(i8, 2), arr(i8, 1)]
        + [i8, i8, i8, i8, arr(i8, 1), arr(i8, 1), arr(f8, 1), arr(i8, 1), arr(i8, 1), arr(f8, 1)]  # layout
        + [arr(f8, 3), arr(f8, 2), arr(f8, 3), arr(f8, 2), arr(f8, 4), arr(f8, 3), arr(b1, 2)]  # targets
        + [f8, f8, f8, b1, b1, arr(b1, 2), arr(b1, 2), arr(b1, 2), arr(f8, 2), arr(f8, 2), arr(f8, 2)]  # one-sided
        + [arr(f8, 1), arr(f8, 1), arr(b1, 1)]  # lower, upper, smoothed
        + [f8, f8, b1, f8, f8, f8, b1]  # settings
        + [i8, i8]
    )
    return i8(*args)


FLAT_SIGNATURE = _flat_signature()
"""Argument and return types of :func:`solve_pass_flat` (all arrays C-contiguous)."""


@numba.njit(cache=_CACHE, fastmath=False)
def tracked_forward_flat(
    root_pos,
    root_rot,
    dof,
    parent,
    placement_rot,
    placement_pos,
    axis_j,
    point_joint,
    point_pos_j,
    point_rot_j,
    ancestors,
    ancestor_count,
    frame_start,
    pos_out,
    rot_out,
):
    """:func:`retarget.ik.kernel.tracked_forward` with the tree spread into its fields: the compiled module's
    second entry point (:data:`FORWARD_SIGNATURE`)."""
    tree = TreeArrays(
        parent, placement_rot, placement_pos, axis_j, point_joint, point_pos_j, point_rot_j, ancestors, ancestor_count
    )
    kernel.tracked_forward(root_pos, root_rot, dof, tree, frame_start, pos_out, rot_out)


def _forward_signature() -> numba.core.typing.Signature:
    f8, i8 = numba.float64, numba.int64

    def arr(dtype, ndim):
        return numba.types.Array(dtype, ndim, "C")

    args = (
        [arr(f8, 2), arr(f8, 3), arr(f8, 2)]  # state
        + [arr(i8, 1), arr(f8, 3), arr(f8, 2), arr(f8, 2), arr(i8, 1), arr(f8, 2), arr(f8, 3), arr(i8, 2), arr(i8, 1)]
        + [i8, arr(f8, 3), arr(f8, 4)]
    )
    return numba.types.none(*args)


FORWARD_SIGNATURE = _forward_signature()
"""Argument types of :func:`tracked_forward_flat` (all arrays C-contiguous; returns nothing)."""

stamp_with_sources(sys.modules[__name__], (kernel, banded))
