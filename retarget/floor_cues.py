"""Cues to a clip's gravity direction that do not need the feet to spread apart.

- Foot geometry: the joints of a flat foot stand at known heights above the floor (measured on level
  clips, not fitted per clip; the rest skeleton's are close). Planted flat feet then lie on one plane
  with known offsets per joint, so the ankle-toe line of a single foot fixes the pitch along it, and
  two feet side by side fix the roll across them: in-place motions get a floor.
- Ballistic flight: while neither foot touches the ground, the body's centre of mass falls freely, so the
  acceleration of a parabola fitted to it points along -gravity, whatever the feet do. The pelvis does not
  fall freely (the legs tuck and swing under it): on the four level tuning clips with 0.25 s of flight its
  fitted acceleration is 2.4-11 deg off +z, the centre of mass's 0.5-2.2 deg (bench/bench_floor.py --flight).
- Quiet standing: with both feet planted, the trunk (pelvis to neck) is held near gravity; a weak
  prior with the lean of people standing as its spread.

Each cue returns a unit normal (up) in the clip's world frame and a standard error [deg] from
its own residuals, plus a systematic term for the bias measured on level clips (bench/bench_floor.py);
the fits also return their 2 x 2 covariance over the two tilt directions, and :func:`fuse_directional`
combines the cues in information form, so a direction one cue leaves open is taken from the others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.quantiles import median
from retarget.skeleton import neutral_skeleton

GRAVITY_M_S2 = 9.81
MIN_RESIDUAL_M = 1e-4
"""Least residual spread the foot-geometry fit is credited with [m] (see :func:`foot_geometry_cue`)."""
_LEG_CHAINS = ((1, 4, 7, 10), (2, 5, 8, 11))
"""(hip, knee, ankle, toe) SMPL joint indices of the left and right leg."""


@dataclass(frozen=True)
class Cue:
    """One estimate of the floor normal."""

    name: str
    """'footfalls', 'foot geometry', 'flight' or 'quiet standing'."""
    normal_w: np.ndarray
    """(3,) unit normal (up) in the source world frame."""
    stderr_deg: float
    """Standard error of its direction [deg]: residual spread, and the cue's bias floor."""
    samples: int
    """Points (foot geometry) or frames (flight) it rests on."""
    bias_deg: float = 0.0
    """The systematic part of `stderr_deg` [deg]: what more samples of the same clip would not shrink."""
    cov_w: np.ndarray | None = None
    """(3, 3) covariance of the normal's direction in the world frame [rad^2], in the plane perpendicular to
    `normal_w`: the two tilt directions a cue pins down differently (a flat foot's heel-toe line its pitch,
    two feet side by side the roll across them). None: the same in every direction (`stderr_deg`)."""

    def covariance_w(self) -> np.ndarray:
        """(3, 3) `cov_w`, or the isotropic one whose trace is `stderr_deg` squared."""
        if self.cov_w is not None:
            return self.cov_w
        return isotropic_cov(self.normal_w, self.stderr_deg)


def isotropic_cov(normal_w: np.ndarray, stderr_deg: float) -> np.ndarray:
    """(3, 3) covariance [rad^2] of a direction known to `stderr_deg` (the RMS size of its 2-D error) in every
    tilt direction: half the variance on each of the two axes perpendicular to `normal_w`."""
    return np.radians(stderr_deg) ** 2 / 2.0 * (np.eye(3) - np.outer(normal_w, normal_w))


def rest_foot_heights_m() -> np.ndarray:
    """(4,) height of each foot joint (L ankle, L toe, R ankle, R toe) above the right toe when the rest
    skeleton stands [m]: SMPL's rest feet stand flat, y being up in its frame."""
    offsets = neutral_skeleton().offsets
    down = np.zeros(4)
    for side, chain in enumerate(_LEG_CHAINS):
        depth = np.cumsum([offsets[j][1] for j in chain])  # hip ... ankle, toe, y of each below the pelvis
        down[2 * side : 2 * side + 2] = depth[-2:]
    return down - down[3]


def settled(mask: np.ndarray, frames: int) -> np.ndarray:
    """(T, ...) `mask` less `frames` frames at each end of every run: a foot that has just landed or is about
    to lift (heel strike, toe-off) is slow but not yet flat."""
    out = mask.copy()
    for shift in range(1, frames + 1):
        out[shift:] &= mask[:-shift]
        out[:-shift] &= mask[shift:]
        out[:shift] = False
        out[-shift:] = False
    return out


def tangent_basis(normal: np.ndarray) -> np.ndarray:
    """(3, 2) two unit vectors perpendicular to `normal` and to each other."""
    # Written out: np.cross's general-axis handling costs 20 µs a call, and a clip asks for ~12 bases. The
    # products and differences are np.cross's, term for term (the same floats), and the norm np.linalg.norm's.
    n0, n1, n2 = float(normal[0]), float(normal[1]), float(normal[2])
    h0, h1, h2 = (1.0, 0.0, 0.0) if abs(n0) < 0.9 else (0.0, 1.0, 0.0)
    first = np.array([n1 * h2 - n2 * h1, n2 * h0 - n0 * h2, n0 * h1 - n1 * h0])
    first /= np.sqrt(first.dot(first))
    f0, f1, f2 = float(first[0]), float(first[1]), float(first[2])
    return np.array([[f0, n1 * f2 - n2 * f1], [f1, n2 * f0 - n0 * f2], [f2, n0 * f1 - n1 * f0]])


def foot_geometry_cue(
    foot_w: np.ndarray,
    planted: np.ndarray,
    start_w: np.ndarray,
    fps: float,
    *,
    heights_m: np.ndarray,
    height_spread_m: np.ndarray,
    min_flat_s: float,
    bias_deg: float,
    outlier_mads: float,
    damping_m: float = 0.0,
) -> tuple[Cue | None, str]:
    """Normal from planted flat feet with known offsets (foot joint j at c + heights_m[j]).

    `foot_w` (T, 4, 3) in the order (L ankle, L toe, R ankle, R toe); `planted` (T, 4); `heights_m` (4,)
    each joint's height above the floor on a flat foot, up to a common offset, and `height_spread_m` (4,)
    how far a clip's own heights stray from them (one error per joint, held over the clip). A foot counts
    as flat in frames where its ankle and its toe are both planted. Gauss-Newton on the normal's two tangent
    components and the one offset c (steps damped as if the points spread `damping_m` in every direction:
    a direction they do not pin keeps `start_w`'s); outliers dropped at `outlier_mads` MADs. The standard
    error, and the covariance per tilt direction, combine the residuals', the height errors carried through
    this clip's own geometry (two feet far apart pin the roll; one still foot hardly does) and `bias_deg`.
    Returns (cue or None, why none)."""
    points, offsets, joints = [], [], []
    flat_frames = 0
    for side in range(2):
        flat = planted[:, 2 * side] & planted[:, 2 * side + 1]
        flat_frames += int(flat.sum())
        points += [foot_w[flat, 2 * side], foot_w[flat, 2 * side + 1]]
        offsets += [np.full(int(flat.sum()), heights_m[2 * side]), np.full(int(flat.sum()), heights_m[2 * side + 1])]
        joints += [np.full(int(flat.sum()), 2 * side), np.full(int(flat.sum()), 2 * side + 1)]
    flat_s = flat_frames / 2.0 / fps
    if flat_s < min_flat_s or flat_frames < 3:
        return None, f"foot geometry: feet flat and planted {flat_s:.2f} s (need {min_flat_s:g} s)"
    p, h = np.concatenate(points), np.concatenate(offsets)
    normal = start_w / np.linalg.norm(start_w)
    keep = np.ones(len(p), dtype=bool)
    jac = np.zeros((len(p), 3))
    for round_ in range(6):
        basis = tangent_basis(normal)
        # r = p . n - c - h, linear in (u, c) with n = normalize(normal + basis u).
        jac = np.column_stack([p @ basis, -np.ones(len(p))])
        rhs = -(p @ normal - h)
        if damping_m > 0.0:
            # A tilt step costs as much as moving the points of a `damping_m` wide patch: where the flat
            # points spread less than that across (one still foot), the roll stays at the start's.
            ridge = np.diag([1.0, 1.0, 0.0]) * damping_m**2 * int(keep.sum())
            sol = np.linalg.solve(jac[keep].T @ jac[keep] + ridge, jac[keep].T @ rhs[keep])
        else:
            sol, *_ = np.linalg.lstsq(jac[keep], rhs[keep], rcond=None)
        normal = normal + basis @ sol[:2]
        normal /= np.linalg.norm(normal)
        if round_ in (1, 3):
            residual = p @ normal - h
            residual -= median(residual[keep])
            mad = 1.4826 * median(np.abs(residual[keep])) + 1e-6
            keep = np.abs(residual) <= outlier_mads * mad
    basis = tangent_basis(normal)
    jac = np.column_stack([p @ basis, -np.ones(len(p))])[keep]
    residual = (p @ normal - h)[keep]
    residual -= residual.mean()
    dof = max(len(residual) - 3, 1)
    # Samples within a footfall are not independent: count each ~0.5 s of flat stance as one sample.
    correlated = max(1.0, 0.5 * fps)
    inverse = _weak_inverse(jac.T @ jac)
    # A fit that is exact because its points cannot over-determine it (one still foot: two points, a line)
    # claims no precision: the residual is floored at 0.1 mm, a tenth of the least seen on the bundled clips
    # (1.0 mm), so a direction the points leave open gets a huge variance from the weak inverse.
    variance = max(float(residual @ residual / dof), MIN_RESIDUAL_M**2)
    cov = inverse[:2, :2] * variance * correlated
    stat_deg = float(np.degrees(np.sqrt(max(np.trace(cov), 0.0))))
    # A joint's height off by d_j in this clip moves the solution by inverse J^T D d (D: which joint each
    # point is); the errors are independent per joint with the measured spread.
    which = np.concatenate(joints)[keep]
    carry = inverse @ (jac.T @ (which[:, None] == np.arange(4)))  # (3, 4)
    shape_cov = (carry * np.square(height_spread_m)) @ carry.T
    shape_deg = float(np.degrees(np.sqrt(max(np.trace(shape_cov[:2, :2]), 0.0))))
    bias = float(np.hypot(shape_deg, bias_deg))
    cov_w = basis @ (cov + shape_cov[:2, :2]) @ basis.T
    cov_w = cov_w + isotropic_cov(normal, bias_deg)
    return Cue("foot geometry", normal, float(np.hypot(stat_deg, bias)), int(keep.sum()), bias, cov_w), ""


def _weak_inverse(normal_matrix: np.ndarray) -> np.ndarray:
    """Inverse of a least-squares normal matrix whose weakest direction may carry no information (one still
    foot says nothing about the roll across it): eigenvalues floored at 1e-12 of the largest, so that
    direction gets a huge variance instead of the zero a pseudo-inverse would give it."""
    eigval, eigvec = np.linalg.eigh(normal_matrix)
    floor = max(float(eigval[-1]), 1e-300) * 1e-12
    return (eigvec / np.maximum(eigval, floor)) @ eigvec.T


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of every run of True in the 1-D `mask`."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return [(int(a), int(b)) for a, b in zip(edges[0::2], edges[1::2], strict=True)]


@dataclass(frozen=True)
class FreeFall:
    """A parabola fitted to a point's flight phases: the shared acceleration and its covariance."""

    acc_w: np.ndarray
    """(3,) fitted acceleration in the world frame [m/s^2]."""
    acc_cov_w: np.ndarray
    """(3, 3) its covariance from the fit's residuals [(m/s^2)^2]."""
    frames: int
    """Frames fitted."""


def fit_free_fall(
    point_w: np.ndarray, airborne: np.ndarray, fps: float, *, edge_frames: int = 0, min_phase_frames: int = 4
) -> FreeFall | None:
    """Least squares on the positions `point_w` (T, 3) over each flight phase (a run of `airborne` frames less
    `edge_frames` at each end, at least `min_phase_frames` long): each phase its own position and velocity, all
    one acceleration, so no second difference amplifies the reconstruction's noise. The acceleration's
    covariance is the residuals' (3 x 3, pooled over phases) through the fit. None: no phase long enough."""
    phases = [
        (a + edge_frames, b - edge_frames)
        for a, b in _runs(np.asarray(airborne, dtype=bool))
        if b - a - 2 * edge_frames >= min_phase_frames
    ]
    if not phases:
        return None
    frames = sum(b - a for a, b in phases)
    design = np.zeros((frames, 2 * len(phases) + 1))
    row = 0
    for k, (a, b) in enumerate(phases):
        t_s = (np.arange(a, b) - (a + b - 1) / 2.0) / fps  # centred: the columns stay well conditioned
        design[row : row + len(t_s), 2 * k] = 1.0
        design[row : row + len(t_s), 2 * k + 1] = t_s
        design[row : row + len(t_s), -1] = 0.5 * t_s**2
        row += len(t_s)
    target = np.concatenate([point_w[a:b] for a, b in phases])
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    residual = target - design @ solution
    dof = max(frames - design.shape[1], 1)
    # A fit that is exact because it has as many frames as unknowns claims no precision: floored at 0.1 mm.
    residual_cov = residual.T @ residual / dof + np.eye(3) * MIN_RESIDUAL_M**2
    acc_cov = float(np.linalg.inv(design.T @ design)[-1, -1]) * residual_cov
    return FreeFall(solution[-1], acc_cov, frames)


def flight_cue(
    com_w: np.ndarray,
    airborne: np.ndarray,
    fps: float,
    *,
    min_frames: int,
    bias_deg: float,
    edge_frames: int = 0,
    min_phase_frames: int = 4,
    g_tolerance: float = 0.2,
) -> tuple[Cue | None, str]:
    """Normal from the centre of mass's free fall: minus the acceleration of a parabola fitted to it in flight.

    `com_w` (T, 3) the body's centre of mass (:func:`retarget.body_com.body_com_w`); `airborne` (T,) frames with
    neither foot down; the fit is :func:`fit_free_fall`'s. Its acceleration's covariance becomes the direction's
    2 x 2 covariance (across the direction, divided by the acceleration's size squared), widened by the
    isotropic `bias_deg`. An acceleration whose size is more than `g_tolerance` (a fraction) from g is not a
    free fall (feet skimming the floor, a tracking glitch) and gives no cue. Returns (cue or None, why none)."""
    fall = fit_free_fall(com_w, airborne, fps, edge_frames=edge_frames, min_phase_frames=min_phase_frames)
    frames = 0 if fall is None else fall.frames
    if fall is None or frames < min_frames:
        return None, f"flight: {frames} free-fall frames (need {min_frames})"
    size = float(np.linalg.norm(fall.acc_w))
    if abs(size - GRAVITY_M_S2) > g_tolerance * GRAVITY_M_S2:
        return None, (
            f"flight: free-fall acceleration {size:.1f} m/s^2, not g (within {100 * g_tolerance:g} %; {frames} frames)"
        )
    normal = -fall.acc_w / size
    across = np.eye(3) - np.outer(normal, normal)
    cov_w = across @ fall.acc_cov_w @ across / size**2 + isotropic_cov(normal, bias_deg)
    stderr = float(np.degrees(np.sqrt(max(np.trace(cov_w), 0.0))))
    return Cue("flight", normal, stderr, frames, bias_deg, cov_w), ""


def quiet_standing_cue(
    trunk_w: np.ndarray, standing: np.ndarray, fps: float, *, min_standing_s: float, bias_deg: float
) -> tuple[Cue | None, str]:
    """Normal from the trunk's mean direction (pelvis to neck) over frames where both feet are planted.

    A person standing on both feet holds the trunk near gravity, but not on it: people lean, and the
    reconstruction's spine has its own bend. So this is a weak prior, its standard error never below
    `bias_deg` (the lean measured on level clips), that weighs only where the feet say little."""
    frames = int(standing.sum())
    if frames / fps < min_standing_s:
        return None, f"quiet standing: both feet planted {frames / fps:.2f} s (need {min_standing_s:g} s)"
    unit = trunk_w[standing] / np.linalg.norm(trunk_w[standing], axis=1, keepdims=True)
    mean = unit.mean(axis=0)
    normal = mean / np.linalg.norm(mean)
    spread = np.linalg.norm(unit - normal, axis=1)
    # A lean held for a while is one sample: count one independent sample per 0.5 s of standing.
    independent = max(frames / max(0.5 * fps, 1.0), 1.0)
    stat_deg = float(np.degrees(np.sqrt(np.mean(spread**2) / independent)))
    return Cue("quiet standing", normal, float(np.hypot(stat_deg, bias_deg)), frames, bias_deg), ""


def fuse(cues: list[Cue]) -> tuple[np.ndarray, float]:
    """Inverse-variance weighted mean of the cues' normals and its standard error [deg]."""
    weights = np.array([1.0 / c.stderr_deg**2 for c in cues])
    normal = sum(w * c.normal_w for w, c in zip(weights, cues, strict=True))
    normal = normal / np.linalg.norm(normal)
    return normal, float(1.0 / np.sqrt(weights.sum()))


def fuse_directional(cues: list[Cue]) -> tuple[np.ndarray, np.ndarray]:
    """Information-form fusion of the cues with their 2 x 2 covariances: each cue's normal as a point of the
    tangent plane at the scalar-weighted mean (gnomonic: exact for a direction, whatever its distance), its
    covariance there inverted, summed, solved. A direction one cue leaves open (its variance huge) is then
    taken from the others. Returns (unit normal, (3, 3) covariance [rad^2] in its tangent plane)."""
    start, _ = fuse(cues)
    basis = tangent_basis(start)
    information = np.zeros((2, 2))
    pull = np.zeros(2)
    for cue in cues:
        point = basis.T @ cue.normal_w / (cue.normal_w @ start)
        cov = basis.T @ cue.covariance_w() @ basis
        inverse = np.linalg.inv(cov + np.eye(2) * 1e-300)
        information += inverse
        pull += inverse @ point
    offset = np.linalg.solve(information, pull)
    normal = start + basis @ offset
    normal /= np.linalg.norm(normal)
    cov_basis = tangent_basis(normal)
    # The fused covariance, moved to the new normal's tangent plane (the two planes differ by the tiny offset).
    cov_w = basis @ np.linalg.inv(information) @ basis.T
    project = cov_basis @ cov_basis.T
    return normal, project @ cov_w @ project
