"""Compiled per-frame Gauss-Newton blocks of the whole-sequence IK (numba).

For every frame this runs forward kinematics of the tree, forms each residual's Jacobian
with only its non-zero columns (root and the point's ancestor joints) and accumulates
H_t = Σ w² JᵀJ and g_t = Σ w² Jᵀe in place. Doing this in one compiled loop instead of
numpy's whole-array passes is what makes the solver fast: the arrays involved are small,
so numpy spends most of its time on temporaries and dispatch. :mod:`retarget.tree_kinematics`
stays the readable reference; the tests check this kernel against it.

Residual blocks (weights are residual scales): tracked points (P), sole points kept above
the floor (S), collision spheres kept above the floor and apart (Q spheres, K pairs), limb
segments as vectors (G), tracked frame orientations (F). Point layout: [P | S | Q | F].
"""

from __future__ import annotations

import numba
import numpy as np

_CACHE = True  # compiled code is cached next to this file, so each worker compiles once


@numba.njit(cache=_CACHE, fastmath=False)
def _rodrigues(axis, angle, out):
    x, y, z = axis[0], axis[1], axis[2]
    c, s = np.cos(angle), np.sin(angle)
    C = 1.0 - c
    out[0, 0], out[0, 1], out[0, 2] = c + x * x * C, x * y * C - z * s, x * z * C + y * s
    out[1, 0], out[1, 1], out[1, 2] = y * x * C + z * s, c + y * y * C, y * z * C - x * s
    out[2, 0], out[2, 1], out[2, 2] = z * x * C - y * s, z * y * C + x * s, c + z * z * C


@numba.njit(cache=_CACHE, fastmath=False)
def _mm3(A, B, out):
    """out = A @ B for 3×3 matrices."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@numba.njit(cache=_CACHE, fastmath=False)
def _mm3t(A, B, out):
    """out = A @ Bᵀ for 3×3 matrices."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[j, 0] + A[i, 1] * B[j, 1] + A[i, 2] * B[j, 2]


@numba.njit(cache=_CACHE, fastmath=False)
def _so3_log(R, out):
    """Rotation vector of R (3×3), accurate near 0 and π."""
    cos_angle = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    angle = np.arccos(cos_angle)
    vx, vy, vz = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    if angle < 1e-6:
        out[0], out[1], out[2] = 0.5 * vx, 0.5 * vy, 0.5 * vz
    elif angle < np.pi - 1e-4:
        k = angle / (2.0 * np.sin(angle))
        out[0], out[1], out[2] = k * vx, k * vy, k * vz
    else:
        # Near π: the axis comes from the largest diagonal of (R + I) / 2 = a aᵀ.
        i = 0
        if R[1, 1] > R[i, i]:
            i = 1
        if R[2, 2] > R[i, i]:
            i = 2
        a = np.empty(3)
        for j in range(3):
            a[j] = 0.5 * (R[i, j] + R[j, i]) if j != i else 0.5 * (R[i, i] + 1.0)
        norm = np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
        sign = 1.0 if (a[0] * vx + a[1] * vy + a[2] * vz) >= 0.0 else -1.0
        for j in range(3):
            out[j] = sign * angle * a[j] / norm


@numba.njit(cache=_CACHE, fastmath=False)
def _point_jacobian(k, p, root_pos, jo, jaxis, anc, anc_n, J):
    """Position Jacobian (3, n) of point k at world position p (other columns left zero)."""
    J[0, 0], J[1, 1], J[2, 2] = 1.0, 1.0, 1.0
    J[0, 1] = J[0, 2] = J[1, 0] = J[1, 2] = J[2, 0] = J[2, 1] = 0.0
    rx, ry, rz = p[0] - root_pos[0], p[1] - root_pos[1], p[2] - root_pos[2]
    # d p / d theta_root = e × (p - root): the columns of -skew(p - root).
    J[0, 3], J[0, 4], J[0, 5] = 0.0, rz, -ry
    J[1, 3], J[1, 4], J[1, 5] = -rz, 0.0, rx
    J[2, 3], J[2, 4], J[2, 5] = ry, -rx, 0.0
    for m in range(anc_n[k]):
        j = anc[k, m]
        lx, ly, lz = p[0] - jo[j, 0], p[1] - jo[j, 1], p[2] - jo[j, 2]
        ax, ay, az = jaxis[j, 0], jaxis[j, 1], jaxis[j, 2]
        J[0, 6 + j] = ay * lz - az * ly
        J[1, 6 + j] = az * lx - ax * lz
        J[2, 6 + j] = ax * ly - ay * lx


@numba.njit(cache=_CACHE, fastmath=False)
def _clear(J, k, anc, anc_n):
    for m in range(anc_n[k]):
        j = anc[k, m]
        J[0, 6 + j] = 0.0
        J[1, 6 + j] = 0.0
        J[2, 6 + j] = 0.0


@numba.njit(cache=_CACHE, fastmath=False)
def _accumulate(H, g, cols, ncols, row, w2, res):
    """H += w² row rowᵀ (lower triangle) and g += w² row·res over the listed columns (ascending)."""
    for a in range(ncols):
        ca = cols[a]
        ra = row[ca] * w2
        if ra == 0.0:
            continue
        g[ca] += ra * res
        Ha = H[ca]
        for b in range(a + 1):
            cb = cols[b]
            Ha[cb] += ra * row[cb]


@numba.njit(cache=_CACHE, fastmath=False)
def _accumulate3(H, g, cols, ncols, J, w0, w1, w2, r0, r1, r2):
    """H += Σ_a w_a² J[a] J[a]ᵀ (lower triangle) and g += Σ_a w_a² J[a] r_a for the three rows of J over the
    listed columns (ascending): one pass over H for a 3-D residual instead of three."""
    J0, J1, J2 = J[0], J[1], J[2]
    for a in range(ncols):
        ca = cols[a]
        j0, j1, j2 = J0[ca] * w0, J1[ca] * w1, J2[ca] * w2
        g[ca] += j0 * r0 + j1 * r1 + j2 * r2
        Ha = H[ca]
        for b in range(a + 1):
            cb = cols[b]
            Ha[cb] += j0 * J0[cb] + j1 * J1[cb] + j2 * J2[cb]


@numba.njit(cache=_CACHE, fastmath=False)
def _chain_cols(ka, kb, anc, anc_n, mark, cols):
    """Fill `cols` (ascending) with the columns a residual of points ka and kb (kb = −1: one point) can touch:
    the root's six and both points' ancestor joints; return their count. Rows are zero elsewhere, and the
    rank-one updates cost the square of this count instead of the square of the full width."""
    for c in range(6):
        cols[c] = c
    for k in (ka, kb):
        if k < 0:
            continue
        for m in range(anc_n[k]):
            mark[6 + anc[k, m]] = True
    nc = 6
    for c in range(6, mark.shape[0]):
        if mark[c]:
            mark[c] = False
            cols[nc] = c
            nc += 1
    return nc


@numba.njit(cache=_CACHE, fastmath=False)
def _joint_frames(rp, rr, dof, t, parent, plc_rot, plc_pos, axis_j, local, M, R, jo, jaxis):
    """Forward kinematics of frame t (root at `rp`, `rr`; joint angles ``dof[t]``): every joint's world
    orientation R (D, 3, 3), origin jo (D, 3) and axis jaxis (D, 3). Parents come before children. Indices,
    not row views, go in and out: a view costs reference counting in the innermost loops."""
    for j in range(dof.shape[1]):
        p = parent[j]
        PR = rr if p < 0 else R[p]
        PO = rp if p < 0 else jo[p]
        _rodrigues(axis_j[j], dof[t, j], local)
        for a in range(3):
            jo[j, a] = PO[a] + PR[a, 0] * plc_pos[j, 0] + PR[a, 1] * plc_pos[j, 1] + PR[a, 2] * plc_pos[j, 2]
        _mm3(PR, plc_rot[j], M)
        _mm3(M, local, R[j])
        for a in range(3):
            jaxis[j, a] = R[j, a, 0] * axis_j[j, 0] + R[j, a, 1] * axis_j[j, 1] + R[j, a, 2] * axis_j[j, 2]


@numba.njit(cache=_CACHE, fastmath=False)
def _point_position(k, rp, rr, R, jo, pt_joint, pt_pos_j, out, row):
    """World position of tracked point k into ``out[row]``, given the joint frames of :func:`_joint_frames`."""
    pj = pt_joint[k]
    PR = rr if pj < 0 else R[pj]
    PO = rp if pj < 0 else jo[pj]
    for a in range(3):
        out[row, a] = PO[a] + PR[a, 0] * pt_pos_j[k, 0] + PR[a, 1] * pt_pos_j[k, 1] + PR[a, 2] * pt_pos_j[k, 2]


@numba.njit(cache=_CACHE, fastmath=False)
def tracked_forward(root_pos, root_rot, dof, tree, frame_start, pos_out, rot_out):
    """The solver's own kinematics for a whole clip: positions of the first ``pos_out.shape[1]`` tracked points
    into `pos_out` (T, P', 3) and orientations of the tracked frames (points ``frame_start`` on) into `rot_out`
    (T, F, 3, 3). What :meth:`retarget.tree_kinematics.TreeKinematics.forward` gives, without numpy's
    per-joint passes over the frames (the match errors and the stance heading hold need it once per clip)."""
    D = dof.shape[1]
    R = np.empty((D, 3, 3))
    jo = np.empty((D, 3))
    jaxis = np.empty((D, 3))
    local = np.empty((3, 3))
    M = np.empty((3, 3))
    for t in range(dof.shape[0]):
        rp, rr = root_pos[t], root_rot[t]
        _joint_frames(
            rp, rr, dof, t, tree.parent, tree.placement_rot, tree.placement_pos, tree.axis_j, local, M, R, jo, jaxis
        )
        pos_t = pos_out[t]
        for k in range(pos_out.shape[1]):
            _point_position(k, rp, rr, R, jo, tree.point_joint, tree.point_pos_j, pos_t, k)
        for f in range(rot_out.shape[1]):
            k = frame_start + f
            pj = tree.point_joint[k]
            _mm3(rr if pj < 0 else R[pj], tree.point_rot_j[k], rot_out[t, f])


@numba.njit(cache=_CACHE, fastmath=False)
def _one_sided_residual(violation, sticky, augmented, on, shift, t, i):
    """Residual (≥ 0) of one-sided row (t, i) whose constraint is violated by `violation` [m] (negative:
    satisfied), or −1 when the row is off.

    A penalty row alone balances the tracking pull at a residual violation, and switches off as soon
    as a step overshoots, so it flips from one iteration to the next. The augmented-Lagrangian shift
    (λ/w² of the row) grows by the violation left after each step while the row is on, so the row aims
    past the constraint by just what the pull needs and stays on (shift > 0) once the point sits on it;
    it shrinks back when the point moves away for good, and the row switches off at shift 0."""
    if augmented and on[t, i]:
        shift[t, i] = max(0.0, shift[t, i] + violation)
    r = violation + shift[t, i]
    now = r > 0.0 or (sticky and on[t, i])
    on[t, i] = now
    if not now:
        return -1.0
    return max(r, 0.0)


@numba.njit(cache=_CACHE, fastmath=False)
def normal_equations(root_pos, root_rot, dof, tree, layout, targets, one_sided, H, g):
    """Fill H (T, n, n) and g (T, n) for the state (root_pos (T, 3), root_rot (T, 3, 3), dof (T, D)) given the
    tree, layout, targets and one-sided rows (:mod:`retarget.ik.pass_inputs`); return the largest one-sided
    violation [m]."""
    parent, plc_rot, plc_pos, axis_j = tree.parent, tree.placement_rot, tree.placement_pos, tree.axis_j
    pt_joint, pt_pos_j, pt_rot_j, anc, anc_n = (
        tree.point_joint,
        tree.point_pos_j,
        tree.point_rot_j,
        tree.ancestors,
        tree.ancestor_count,
    )
    P, S, Q, F = layout.num_points, layout.num_soles, layout.num_spheres, layout.num_frames
    seg_a, seg_b, proxy_r = layout.segment_a, layout.segment_b, layout.sphere_radius_m
    pair_a, pair_b, pair_clear = layout.pair_a, layout.pair_b, layout.pair_clearance_m
    tgt_pos, tgt_w, seg_vec, seg_w = (
        targets.point_pos_w,
        targets.point_weight,
        targets.segment_vec_w,
        targets.segment_weight,
    )
    frm_rot, frm_w, sole_check = targets.frame_rot_w, targets.frame_weight, targets.sole_floor_check
    floor_margin, floor_w, col_w = one_sided.floor_margin_m, one_sided.floor_weight, one_sided.collision_weight
    sticky, augmented = one_sided.sticky, one_sided.augmented
    T, D = dof.shape
    n = 6 + D
    N = pt_joint.shape[0]
    violation = 0.0
    R = np.empty((D, 3, 3))
    jo = np.empty((D, 3))
    jaxis = np.empty((D, 3))
    local = np.empty((3, 3))
    pos = np.empty((N, 3))
    J = np.zeros((3, n))
    J2 = np.zeros((3, n))
    J3 = np.zeros((3, n))
    row = np.zeros(n)
    cols = np.empty(n, dtype=np.int64)
    mark = np.zeros(n, dtype=np.bool_)
    # Each point's and each segment's columns do not depend on the frame: listed once per call, not per frame.
    G = seg_a.shape[0]
    chain_cols = np.empty((N + G, n), dtype=np.int64)
    chain_n = np.empty(N + G, dtype=np.int64)
    for k in range(N):
        chain_n[k] = _chain_cols(k, -1, anc, anc_n, mark, chain_cols[k])
    for s in range(G):
        chain_n[N + s] = _chain_cols(seg_a[s], seg_b[s], anc, anc_n, mark, chain_cols[N + s])
    E = np.empty((3, 3))
    M = np.empty((3, 3))
    ORI = np.empty((3, 3))
    e = np.empty(3)
    for t in range(T):
        Ht, gt = H[t], g[t]
        Ht[:, :] = 0.0
        gt[:] = 0.0
        rp, rr = root_pos[t], root_rot[t]
        # Forward kinematics (parents come before children), written out here rather than through
        # _joint_frames: called from this loop, the helpers made the whole kernel twice as slow.
        for j in range(D):
            p = parent[j]
            PR = rr if p < 0 else R[p]
            PO = rp if p < 0 else jo[p]
            _rodrigues(axis_j[j], dof[t, j], local)
            for a in range(3):
                jo[j, a] = PO[a] + PR[a, 0] * plc_pos[j, 0] + PR[a, 1] * plc_pos[j, 1] + PR[a, 2] * plc_pos[j, 2]
            _mm3(PR, plc_rot[j], M)
            _mm3(M, local, R[j])
            for a in range(3):
                jaxis[j, a] = R[j, a, 0] * axis_j[j, 0] + R[j, a, 1] * axis_j[j, 1] + R[j, a, 2] * axis_j[j, 2]
        for k in range(N):
            pj = pt_joint[k]
            PR = rr if pj < 0 else R[pj]
            PO = rp if pj < 0 else jo[pj]
            for a in range(3):
                pos[k, a] = PO[a] + PR[a, 0] * pt_pos_j[k, 0] + PR[a, 1] * pt_pos_j[k, 1] + PR[a, 2] * pt_pos_j[k, 2]
        # Tracked points: J over root + ancestors.
        for k in range(P):
            w2 = tgt_w[t, k] ** 2
            if w2 == 0.0:
                continue
            _point_jacobian(k, pos[k], rp, jo, jaxis, anc, anc_n, J)
            e0, e1, e2 = tgt_pos[t, k, 0] - pos[k, 0], tgt_pos[t, k, 1] - pos[k, 1], tgt_pos[t, k, 2] - pos[k, 2]
            _accumulate3(Ht, gt, chain_cols[k], chain_n[k], J, w2, w2, w2, e0, e1, e2)
            _clear(J, k, anc, anc_n)
        # Limb segments: J_b - J_a over all columns.
        for s in range(seg_a.shape[0]):
            w2 = seg_w[t, s] ** 2
            ka, kb = seg_a[s], seg_b[s]
            _point_jacobian(kb, pos[kb], rp, jo, jaxis, anc, anc_n, J)
            _point_jacobian(ka, pos[ka], rp, jo, jaxis, anc, anc_n, J2)
            cols_s, nc = chain_cols[N + s], chain_n[N + s]
            for m in range(nc):
                c = cols_s[m]
                for a in range(3):
                    J3[a, c] = J[a, c] - J2[a, c]
            e0 = seg_vec[t, s, 0] - (pos[kb, 0] - pos[ka, 0])
            e1 = seg_vec[t, s, 1] - (pos[kb, 1] - pos[ka, 1])
            e2 = seg_vec[t, s, 2] - (pos[kb, 2] - pos[ka, 2])
            _accumulate3(Ht, gt, cols_s, nc, J3, w2, w2, w2, e0, e1, e2)
            _clear(J, kb, anc, anc_n)
            _clear(J2, ka, anc, anc_n)
        # Tracked orientations: world-frame error log(R_target Rᵀ); J = [0, I, ancestor axes].
        for f in range(F):
            k = P + S + Q + f
            pj = pt_joint[k]
            PR = rr if pj < 0 else R[pj]
            _mm3(PR, pt_rot_j[k], ORI)
            _mm3t(frm_rot[t, f], ORI, E)
            _so3_log(E, e)
            for a in range(3):
                for c in range(6):
                    J3[a, c] = 1.0 if c == 3 + a else 0.0  # d(rotation error) / d(root position, rotation)
                for m in range(anc_n[k]):
                    J3[a, 6 + anc[k, m]] = jaxis[anc[k, m], a]
            w0, w1, w2 = frm_w[t, f, 0] ** 2, frm_w[t, f, 1] ** 2, frm_w[t, f, 2] ** 2
            _accumulate3(Ht, gt, chain_cols[k], chain_n[k], J3, w0, w1, w2, e[0], e[1], e[2])
        # Floor: sole points (swing feet keep a margin; stance soles are held by their contact targets).
        fw2 = floor_w * floor_w
        for s in range(S):
            k = P + s
            margin = floor_margin if sole_check[t, s] else 0.0
            z = pos[k, 2]
            violation = max(violation, margin - z)
            res = _one_sided_residual(margin - z, sticky, augmented, one_sided.floor_on, one_sided.floor_shift_m, t, s)
            if res >= 0.0:
                _point_jacobian(k, pos[k], rp, jo, jaxis, anc, anc_n, J)
                _accumulate(Ht, gt, chain_cols[k], chain_n[k], J[2], fw2, res)
                _clear(J, k, anc, anc_n)
        # Collision spheres stay above the floor too (hands, knees in a crawl).
        for q in range(Q):
            k = P + S + q
            z = pos[k, 2]
            violation = max(violation, proxy_r[q] - z)
            res = _one_sided_residual(
                proxy_r[q] - z, sticky, augmented, one_sided.sphere_on, one_sided.sphere_shift_m, t, q
            )
            if res >= 0.0:
                _point_jacobian(k, pos[k], rp, jo, jaxis, anc, anc_n, J)
                _accumulate(Ht, gt, chain_cols[k], chain_n[k], J[2], fw2, res)
                _clear(J, k, anc, anc_n)
        # Arm spheres pushed out of body spheres along the line of their centres.
        cw2 = col_w * col_w
        pair_on, pair_shift = one_sided.pair_on, one_sided.pair_shift_m
        for c in range(pair_a.shape[0]):
            ka, kb = P + S + pair_a[c], P + S + pair_b[c]
            dx, dy, dz = pos[ka, 0] - pos[kb, 0], pos[ka, 1] - pos[kb, 1], pos[ka, 2] - pos[kb, 2]
            dist2 = dx * dx + dy * dy + dz * dz
            if dist2 >= pair_clear[c] * pair_clear[c] and not pair_on[t, c] and pair_shift[t, c] == 0.0:
                continue  # apart, row off and no shift: the row stays off (most of the 693 pairs, most frames)
            dist = np.sqrt(dist2)
            violation = max(violation, pair_clear[c] - dist)
            res = _one_sided_residual(
                pair_clear[c] - dist, sticky, augmented, one_sided.pair_on, one_sided.pair_shift_m, t, c
            )
            if res < 0.0:
                continue
            inv = 1.0 / max(dist, 1e-9)
            nx, ny, nz = dx * inv, dy * inv, dz * inv
            _point_jacobian(ka, pos[ka], rp, jo, jaxis, anc, anc_n, J)
            _point_jacobian(kb, pos[kb], rp, jo, jaxis, anc, anc_n, J2)
            for col in range(n):
                row[col] = nx * (J[0, col] - J2[0, col]) + ny * (J[1, col] - J2[1, col]) + nz * (J[2, col] - J2[2, col])
            nc = _chain_cols(ka, kb, anc, anc_n, mark, cols)
            _accumulate(Ht, gt, cols, nc, row, cw2, res)
            _clear(J, ka, anc, anc_n)
            _clear(J2, kb, anc, anc_n)
        # The blocks were accumulated in their lower triangles: mirror them.
        for a in range(n):
            for b in range(a):
                Ht[b, a] = Ht[a, b]
    return violation
