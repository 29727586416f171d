"""Rotation helpers. Quaternions are **wxyz** everywhere inside this package.

The only place xyzw appears is in the two functions named for it, used by the
readers and writers of formats that store xyzw (ASAP `.pkl`, GMR pkl, Unitree CSV).
All functions are vectorised over leading axes.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


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


def rotvec_to_quat(rotvec: np.ndarray) -> np.ndarray:
    """Axis-angle [rad] (axis × angle) to unit quaternion wxyz."""
    r, lead = _flat(rotvec, 3)
    return Rotation.from_rotvec(r).as_quat(scalar_first=True).reshape(*lead, 4)


def quat_to_rotvec(q_wxyz: np.ndarray) -> np.ndarray:
    """Unit quaternion wxyz to axis-angle [rad] with angle in [0, π]."""
    q, lead = _flat(q_wxyz, 4)
    return Rotation.from_quat(q, scalar_first=True).as_rotvec().reshape(*lead, 3)


def rotvec_to_matrix(rotvec: np.ndarray) -> np.ndarray:
    r, lead = _flat(rotvec, 3)
    return Rotation.from_rotvec(r).as_matrix().reshape(*lead, 3, 3)


def quat_to_matrix(q_wxyz: np.ndarray) -> np.ndarray:
    q, lead = _flat(q_wxyz, 4)
    return Rotation.from_quat(q, scalar_first=True).as_matrix().reshape(*lead, 3, 3)


def matrix_to_quat(mat: np.ndarray) -> np.ndarray:
    m = np.asarray(mat, dtype=np.float64)
    lead = m.shape[:-2]
    q = Rotation.from_matrix(m.reshape(-1, 3, 3)).as_quat(scalar_first=True)
    return q.reshape(*lead, 4)


def matrix_to_rotvec(mat: np.ndarray) -> np.ndarray:
    """Rotation matrices (…, 3, 3) to axis-angle [rad] with angle in [0, π]."""
    m = np.asarray(mat, dtype=np.float64)
    return Rotation.from_matrix(m.reshape(-1, 3, 3)).as_rotvec().reshape(*m.shape[:-2], 3)


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
