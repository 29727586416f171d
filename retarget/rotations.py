"""Rotation helpers. Quaternions are **wxyz** everywhere inside this package.

The only place xyzw appears is in the two functions named for it, used by the
readers and writers of formats that store xyzw (ASAP `.pkl`, GMR pkl, Unitree CSV).
All functions are vectorised over leading axes. The conversions are written out in numpy rather than
taken from ``scipy.spatial.transform``: importing that package costs 0.2-0.4 s, more than a whole clip's
retargeting, and every process that retargets would pay it. They agree with scipy to rounding (tests).
"""

from __future__ import annotations

import numpy as np


def _flat(a: np.ndarray, width: int) -> tuple[np.ndarray, tuple[int, ...]]:
    a = np.asarray(a, dtype=np.float64)
    return a.reshape(-1, width), a.shape[:-1]


def quat_wxyz_to_xyzw(q_wxyz: np.ndarray) -> np.ndarray:
    """Reorder scalar-first quaternions to scalar-last (for xyzw file formats)."""
    q = np.asarray(q_wxyz)
    return np.concatenate([q[..., 1:4], q[..., :1]], axis=-1)


def quat_xyzw_to_wxyz(q_xyzw: np.ndarray) -> np.ndarray:
    """Reorder scalar-last quaternions (as read from xyzw formats) to scalar-first."""
    q = np.asarray(q_xyzw)
    return np.concatenate([q[..., 3:4], q[..., :3]], axis=-1)


def quat_normalize(q_wxyz: np.ndarray) -> np.ndarray:
    q = np.asarray(q_wxyz, dtype=np.float64)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_canonical(q_wxyz: np.ndarray) -> np.ndarray:
    """The representative of ±q with w >= 0 (q and -q are the same rotation)."""
    q = np.asarray(q_wxyz, dtype=np.float64)
    return np.where(q[..., :1] < 0.0, -q, q)


def quat_mul(a_wxyz: np.ndarray, b_wxyz: np.ndarray) -> np.ndarray:
    """Hamilton product a ⊗ b (apply b first, then a)."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a_wxyz, dtype=np.float64), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b_wxyz, dtype=np.float64), -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_conj(q_wxyz: np.ndarray) -> np.ndarray:
    q = np.array(q_wxyz, dtype=np.float64, copy=True)
    q[..., 1:] *= -1.0
    return q


def _half_angle_sinc(angle: np.ndarray) -> np.ndarray:
    """sin(angle / 2) / angle, with its Taylor series below 1e-4 rad (where the quotient loses digits)."""
    small = angle < 1e-4
    safe = np.where(small, 1.0, angle)
    return np.where(small, 0.5 - angle**2 / 48.0, np.sin(0.5 * safe) / safe)


def rotvec_to_quat(rotvec: np.ndarray) -> np.ndarray:
    """Axis-angle [rad] (axis × angle) to unit quaternion wxyz."""
    r, lead = _flat(rotvec, 3)
    angle = np.linalg.norm(r, axis=1)
    q = np.concatenate([np.cos(0.5 * angle)[:, None], _half_angle_sinc(angle)[:, None] * r], axis=1)
    return q.reshape(*lead, 4)


def quat_to_rotvec(q_wxyz: np.ndarray) -> np.ndarray:
    """Unit quaternion wxyz to axis-angle [rad] with angle in [0, π]."""
    q, lead = _flat(q_wxyz, 4)
    q = quat_canonical(q / np.linalg.norm(q, axis=1, keepdims=True))  # w >= 0: the angle is in [0, π]
    vec_norm = np.linalg.norm(q[:, 1:], axis=1)
    angle = 2.0 * np.arctan2(vec_norm, q[:, 0])
    return (q[:, 1:] / _half_angle_sinc(angle)[:, None]).reshape(*lead, 3)


def rotvec_to_matrix(rotvec: np.ndarray) -> np.ndarray:
    return quat_to_matrix(rotvec_to_quat(rotvec))


def quat_to_matrix(q_wxyz: np.ndarray) -> np.ndarray:
    q, lead = _flat(q_wxyz, 4)
    w, x, y, z = (q / np.linalg.norm(q, axis=1, keepdims=True)).T
    m = np.empty((len(q), 3, 3))
    m[:, 0, 0], m[:, 0, 1], m[:, 0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    m[:, 1, 0], m[:, 1, 1], m[:, 1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    m[:, 2, 0], m[:, 2, 1], m[:, 2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    return m.reshape(*lead, 3, 3)


def matrix_to_quat(mat: np.ndarray) -> np.ndarray:
    """Rotation matrices (…, 3, 3) to unit quaternions wxyz (either sign; w >= 0 when the trace dominates).

    Each quaternion comes from the largest of 1 + trace and 1 + 2 m_ii − trace, so the square root never
    takes a small argument (Shepperd's method)."""
    m = np.asarray(mat, dtype=np.float64)
    lead = m.shape[:-2]
    m = m.reshape(-1, 3, 3)
    diag = np.stack([m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], axis=1)
    trace = diag.sum(axis=1)
    choice = np.argmax(np.concatenate([diag, trace[:, None]], axis=1), axis=1)
    q = np.empty((len(m), 4))  # wxyz
    by_trace = choice == 3
    t = m[by_trace]
    q[by_trace] = np.stack(
        [1.0 + trace[by_trace], t[:, 2, 1] - t[:, 1, 2], t[:, 0, 2] - t[:, 2, 0], t[:, 1, 0] - t[:, 0, 1]], axis=1
    )
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        sel = choice == i
        a = m[sel]
        q[sel, 1 + i] = 1.0 - trace[sel] + 2.0 * a[:, i, i]
        q[sel, 1 + j] = a[:, j, i] + a[:, i, j]
        q[sel, 1 + k] = a[:, k, i] + a[:, i, k]
        q[sel, 0] = a[:, k, j] - a[:, j, k]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q.reshape(*lead, 4)


def matrix_to_rotvec(mat: np.ndarray) -> np.ndarray:
    """Rotation matrices (…, 3, 3) to axis-angle [rad] with angle in [0, π]."""
    return quat_to_rotvec(matrix_to_quat(mat))


def quat_slerp(q0_wxyz: np.ndarray, q1_wxyz: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Spherical interpolation along the shorter arc; `alpha` broadcasts over leading axes."""
    q0 = quat_normalize(q0_wxyz)
    q1 = quat_normalize(q1_wxyz)
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    # Take the short way round: q and -q are the same rotation.
    q1 = np.where(dot < 0.0, -q1, q1)
    dot = np.abs(dot)
    t = np.asarray(alpha, dtype=np.float64)[..., None]
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin_theta = np.sin(theta)
    # Nearly parallel quaternions: fall back to normalised lerp, which is exact in the limit.
    small = sin_theta < 1e-9
    safe = np.where(small, 1.0, sin_theta)
    w0 = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(small, t, np.sin(t * theta) / safe)
    return quat_normalize(w0 * q0 + w1 * q1)


def quat_angle_between(a_wxyz: np.ndarray, b_wxyz: np.ndarray) -> np.ndarray:
    """Geodesic angle [rad] between two rotations."""
    dot = np.abs(np.sum(quat_normalize(a_wxyz) * quat_normalize(b_wxyz), axis=-1))
    return 2.0 * np.arccos(np.clip(dot, -1.0, 1.0))


def skew(v: np.ndarray) -> np.ndarray:
    """(..., 3, 3) cross-product matrices of (..., 3) vectors: ``skew(v) @ f == v × f``."""
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out
