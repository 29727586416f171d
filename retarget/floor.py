"""Floor and gravity from the motion itself: level and ground a clip whose world frame is tilted.

Video reconstructions put the person in a world frame estimated from the image (a gravity
direction from one frame, a SLAM map), so the floor the feet stand on can be tilted by a few
degrees and sit at any height. Planted feet trace that floor: a foot joint that is near its
lowest and not moving lies a fixed distance above it. The plane is fitted to those points with
one normal shared by all foot joints and one offset per joint kind (ankles sit higher than
toes), by total least squares, with outliers (a foot sliding or mis-tracked) dropped at
several median absolute deviations. Stance is told by 3-D speed, which does not depend on the
tilt, and by height along the current normal estimate, refined as the normal converges.

The correction is the smallest rotation taking the normal to +z, then a vertical shift that
puts the floor at z = 0. A clip whose floor is already level within ``FloorConfig.min_tilt_deg``
is left exactly as it is, so AMASS clips and the ASAP clips are not disturbed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.body_com import COM_JOINTS, COM_WEIGHTS
from retarget.contacts import FOOT_JOINTS, detect_foot_contacts
from retarget.floor_cues import (
    Cue,
    flight_cue,
    foot_geometry_cue,
    fuse,
    fuse_directional,
    isotropic_cov,
    quiet_standing_cue,
    settled,
    tangent_basis,
)
from retarget.quantiles import median as _median
from retarget.quantiles import row_percentiles
from retarget.rotations import matrix_to_rotvec, rotvec_to_matrix
from retarget.skeleton import neutral_skeleton, smpl_joint_positions
from retarget.smpl_sequence import SmplSequence

_UP = np.array([0.0, 0.0, 1.0])
# Foot joints in the order (left ankle, left toe, right ankle, right toe); their kind (0 ankle, 1 toe).
_FOOT = np.array([FOOT_JOINTS[0][0], FOOT_JOINTS[0][1], FOOT_JOINTS[1][0], FOOT_JOINTS[1][1]])
_KIND = np.array([0, 1, 0, 1])
_NECK = 12
CUE_NAMES = ("footfalls", "foot geometry", "flight", "quiet standing")
_USED = np.r_[_FOOT, 0, _NECK, [j for j in COM_JOINTS if j not in (*_FOOT, 0, _NECK)]]
"""The joints the floor estimate reads: the four foot joints, the pelvis and the neck, then the others the
centre of mass reads (the flight cue)."""
_PELVIS, _NECK_AT = 4, 5
"""Where the pelvis and the neck are in `_USED`."""
_COM_OF_USED = COM_WEIGHTS[_USED]
"""(len(_USED),) the centre of mass as a weighted sum of the joints read (all its joints are among them)."""


@dataclass(frozen=True)
class FloorConfig:
    """How the floor plane is estimated and when the clip is corrected."""

    min_tilt_deg: float = 0.3
    """Floors tilted less than this are left alone (no rotation, no shift) [deg]."""
    stance_speed_m_s: float = 0.2
    """A foot joint moving slower than this (3-D speed) may be planted [m/s]."""
    stance_height_m: float = 0.04
    """...when it is also within this height of its grounded height along the normal [m]."""
    ground_percentile: float = 5.0
    """Percentile of a foot joint's height taken as its grounded height [%] (as in the stance detector)."""
    min_stance_s: float = 0.5
    """Planted time needed, averaged over the four foot joints (ankles, toes), to trust a plane [s]."""
    min_spread_m: float = 0.08
    """Needed spread of the planted points along the plane's weaker in-plane direction (standard
    deviation) [m]: feet that never move apart cannot tell a tilt from a pose."""
    outlier_mads: float = 3.0
    """Planted points farther than this many (scaled) median absolute deviations from the plane are dropped."""
    iterations: int = 4
    """Rounds of stance selection and plane fitting."""
    first_band_m: float = 0.15
    """Height band of the first round, along the body's mean up direction [m]."""
    max_lean_deg: float = 20.0
    """A fitted floor whose normal is farther than this from the body's mean up direction (pelvis to neck)
    is rejected [deg]: a foot held still in the air, not a floor."""
    footfall_bias_deg: float = 0.5
    """Systematic error of the footfall plane [deg], added to its leave-one-footfall-out covariance in both
    tilt directions: the term that makes its Mahalanobis size on the level tuning clips honest (1.38 RMS
    against the square root of 2; with none, 2.51: the scalar jackknife covers the plane's 1.60 deg RMS tilt
    there, 0.90 standard errors RMS, but the direction it pins best it pins too well; bench/bench_floor.py)."""
    flat_foot_heights_m: tuple[float, float, float, float] = (0.0548, -0.0055, 0.0485, 0.0)
    """Height of each foot joint (L ankle, L toe, R ankle, R toe) above the right toe when both feet stand flat
    and planted [m]: the median over the level tuning clips (`bench/bench_floor.py --calibrate`). The rest
    skeleton's (:func:`retarget.floor_cues.rest_foot_heights_m`: 5.50, -0.08, 4.81, 0 cm) differs in the left
    toe: reconstructed left feet stand toes down by about 2 deg, which alone tilted the foot-geometry cue by
    0.6 deg of roll. The foot-geometry cue fits the plane with these offsets; the footfall plane keeps one free
    offset per joint kind."""
    flat_foot_spread_m: tuple[float, float, float, float] = (0.0029, 0.0036, 0.0028, 0.0)
    """How far a clip's flat-foot heights stray from `flat_foot_heights_m`, per joint [m]: the spread (scaled
    MAD) over the level tuning clips (`bench/bench_floor.py --calibrate`; the right toe is the reference).
    The foot-geometry cue carries it through each clip's own geometry into its standard error."""
    flat_edge_s: float = 0.0
    """Time dropped at each end of a foot's flat stance before the foot-geometry cue reads it [s]: heel strike
    and toe-off. None: dropping 0.1 s leaves the left toe as low and more tilt on the tuning half
    (`bench/bench_floor.py --set flat_edge_s=0.1`)."""
    min_flat_s: float = 0.5
    """Flat planted time (ankle and toe of a foot both planted, averaged over the feet) the foot-geometry
    cue needs [s]."""
    foot_geometry_bias_deg: float = 1.19
    """Systematic error of the foot-geometry cue beyond its flat-foot heights' spread [deg], added to its
    residual standard error and the carried height spread: the term that makes its tilts on the level tuning
    clips one standard error RMS, as the footfalls' (bench/bench_floor.py)."""
    foot_geometry_damping_m: float = 0.005
    """With `directional`: the foot-geometry fit's steps are damped as if its points spread this much across
    every tilt direction [m], so a direction the flat feet do not pin (one still foot's roll: its ankle and
    toe are a line) keeps the start's normal instead of wandering on noise; its variance, from the undamped
    fit, stays huge, and the fusion takes that direction from the other cues. Feet 10 cm apart move 0.25 %."""
    flight_min_s: float = 0.25
    """Free-fall time (in flight phases of at least `flight_min_phase_frames`) the flight cue needs [s]: 8
    frames at 30 Hz. Shorter flights leave a fit whose residuals claim far more than it knows
    (jump_forward_level1's 6 frames: 0.30 deg for a 4.9 deg miss), and the bias that covers them (2.39 deg at
    4 frames) drowns the long ones: on the tuning half 4 frames left 0.98 deg median (20 % within 0.5 deg),
    0.25 s 0.86 (35 %) (bench/bench_floor.py --set flight_min_s=0.13 --set flight_bias_deg=2.39)."""
    flight_min_phase_frames: int = 4
    """Frames a flight phase needs to enter the flight cue's parabola fit (it has three unknowns per axis)."""
    flight_edge_frames: int = 0
    """Frames dropped at each end of a flight phase (take-off, landing). None: dropping one (with its own honest
    bias, 0.79 deg) leaves 30 % of the tuning half's tilted cases within 0.5 deg against 35 %
    (bench/bench_floor.py --set flight_edge_frames=1 --set flight_bias_deg=0.79)."""
    flight_g_tolerance: float = 0.2
    """A flight's fitted acceleration more than this fraction from g is no free fall [-]: on the level tuning
    clips the jumps' centre of mass falls at 8.4-9.6 m/s^2 (within 15 %), the false flights (feet skimming the
    floor, a jump with no foot cue turned to the trunk) at 1.3-4.2 (bench/bench_floor.py --flight)."""
    flight_bias_deg: float = 0.66
    """Systematic error of the flight cue [deg], added to its residual covariance (isotropic): the term that
    makes its tilts on the level tuning clips sqrt(2) Mahalanobis sizes RMS, as two honest degrees of freedom
    (4 clips, 1.22 deg RMS off +z; bench/bench_floor.py --flight). A video jump is no exact free fall (its path
    is smoothed, its depth drifts), and the residuals of a short fit understate that. On the test half the
    same term would be 1.70 deg: there the cue is over-confident (2.68 Mahalanobis RMS)."""
    min_standing_s: float = 0.5
    """Time with both feet planted the quiet-standing cue needs [s]."""
    quiet_standing_bias_deg: float = 5.06
    """Systematic error of the quiet-standing cue [deg]: people lean. The RMS tilt of the trunk on the level
    tuning clips (bench/bench_floor.py)."""
    one_foot_standing_bias_deg: float = 10.8
    """With `directional`, where both feet are never down together: the trunk's systematic error over one flat
    foot [deg] (a balance, a hop: the body leans over the standing leg). The RMS tilt of that trunk on the level
    tuning clips that have it (two: 4.2 and 14.7 deg; bench/bench_floor.py)."""
    significance: float = 3.0
    """A tilt is corrected when it exceeds this many (scalar) standard errors: uneven foot heights in a level
    reconstruction must not pass for a tilted floor. Without `directional` the only rule."""
    directional: bool = True
    """Fuse the cues with their 2 x 2 covariances over the two tilt directions and gate on the tilt's
    Mahalanobis size as well; False: one standard error per cue, inverse-variance weights and `significance`."""
    mahalanobis_significance: float = 4.24
    """With `directional`, a tilt is also corrected when its Mahalanobis size (standard errors along its own
    direction) exceeds this: 3 x sqrt(2), the `significance` rule for a cue equally sure in both directions,
    above every level tuning clip's size (3.98 at most; bench/bench_floor.py). A tilt along a direction the
    feet pin then passes where the scalar rule, which spreads their doubt over both directions, left it."""


@dataclass(frozen=True)
class FloorEstimate:
    """The floor under a clip, in the clip's own world frame, and what was done about it."""

    normal_w: np.ndarray
    """(3,) unit floor normal (up) in the source world frame."""
    height_m: float
    """Floor offset along the normal [m]: grounded height of the lowest foot joint (as the stance detector's floor)."""
    tilt_deg: float
    """Angle between the floor normal and +z [deg]."""
    stderr_deg: float
    """Standard error of the fused normal's direction [deg] (inf: no cue): the square root of the fused
    covariance's trace, the RMS size of its 2-D error, each direction at least the least biased cue's bias."""
    planted_s: float
    """Planted time used for the fit, averaged over the four foot joints [s]."""
    spread_m: float
    """Spread of the planted points along the weaker in-plane direction [m]."""
    applied: bool
    """True when the clip was rotated and shifted."""
    message: str
    """One line for the user: the correction, or why none was made."""
    cues: tuple[Cue, ...] = ()
    """The cues fused into `normal_w` (inverse-variance weights)."""
    missing: tuple[str, ...] = ()
    """Why each cue not used was not usable."""
    considered: tuple[Cue, ...] = ()
    """Every cue the clip offered, used or not (the bench measures each one's bias on level clips)."""
    drift_deg: float = float("nan")
    """Depth drift: angle between the footfall planes of the clip's first and second halves [deg] (NaN where
    a half has too few spread footfalls). A monocular floor that recedes or rises along the clip shows here;
    one plane is fitted to the whole clip."""
    drift_m: float = float("nan")
    """Depth drift: change of the planted feet's height along the normal from the first half to the second [m]."""
    tilt_size: float = float("nan")
    """The tilt in standard errors along its own direction (Mahalanobis size under the fused 2 x 2
    covariance; without `FloorConfig.directional`, tilt / standard error) [-]: what the correction is gated on."""

    airborne: np.ndarray | None = None
    """(T,) the frames the flight cue took as airborne (neither foot down on the clip turned to the feet's
    floor); the flight cue fits the frames of runs of at least `FloorConfig.flight_min_phase_frames`."""

    def manifest_metrics(self) -> dict[str, float]:
        """Batch-manifest fields: the estimate, and the correction made (zeros when none)."""
        return {
            "floor_tilt_deg": self.tilt_deg,
            "floor_stderr_deg": self.stderr_deg if np.isfinite(self.stderr_deg) else float("nan"),
            "floor_correction_deg": self.tilt_deg if self.applied else 0.0,
            "floor_shift_m": -self.height_m if self.applied else 0.0,
            "floor_drift_deg": self.drift_deg,
            "floor_drift_m": self.drift_m,
            "floor_tilt_size": self.tilt_size,
            **{
                f"floor_{name.replace(' ', '_')}_stderr_deg": next(
                    (c.stderr_deg for c in self.cues if c.name == name), float("nan")
                )
                for name in CUE_NAMES
            },
        }


def _kind_percentiles(height: np.ndarray, percent: float) -> np.ndarray:
    """(2,) `percent` percentile of the ankle and the toe heights of (T, 4) `height`, as numpy's default
    (linear) method gives it."""
    return row_percentiles(height.reshape(-1, 2, 2).transpose(2, 0, 1).reshape(2, -1), percent)


def _kind_sums(points: np.ndarray, kinds: np.ndarray, groups: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sufficient statistics of a plane fit with one offset per kind: per group (a kind, or a footfall's
    kind), the count, the sum of the points and the sum of their outer products. Groups numbered in `kinds`."""
    count = np.bincount(kinds, minlength=groups).astype(float)
    total = np.stack([np.bincount(kinds, weights=points[:, a], minlength=groups) for a in range(3)], axis=1)
    outer = (points[:, :, None] * points[:, None, :]).reshape(-1, 9)
    moment = np.stack([np.bincount(kinds, weights=outer[:, a], minlength=groups) for a in range(9)], axis=1)
    return count, total, moment.reshape(-1, 3, 3)


def _scatter(count: np.ndarray, total: np.ndarray, moment: np.ndarray) -> np.ndarray:
    """(..., 3, 3) scatter about each kind's own mean, summed over kinds (axis -3 of `moment`): what is left
    for the normal to explain once every kind has its own offset. Empty kinds add nothing."""
    safe = np.where(count > 0, count, 1.0)
    centred = moment - total[..., :, None] * total[..., None, :] / safe[..., None, None]
    return np.where((count > 0)[..., None, None], centred, 0.0).sum(axis=-3)


def _fit_normal(points: np.ndarray, one_hot: np.ndarray, up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total least squares: one normal, one offset per kind (`one_hot`: (N, 2) the kind of each point).
    Returns (normal, eigenvalues ascending)."""
    mean = (one_hot.T @ points) / np.maximum(one_hot.sum(axis=0), 1.0)[:, None]
    centred = points - one_hot @ mean
    eigval, eigvec = np.linalg.eigh(centred.T @ centred / max(len(points), 1))
    normal = eigvec[:, 0]
    return (normal if normal @ up >= 0 else -normal), eigval


def _robust_fit(
    points: np.ndarray, kinds: np.ndarray, up: np.ndarray, config: FloorConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit, drop points beyond `outlier_mads` from the plane, refit. Returns (normal, eigenvalues, kept)."""
    keep = np.ones(len(points), dtype=bool)
    one_hot = (kinds[:, None] == np.arange(2)).astype(float)
    for _ in range(2):
        normal, eigval = _fit_normal(points[keep], one_hot[keep], up)
        residual = points @ normal
        for of_kind in one_hot.T.astype(bool):
            kept = residual[of_kind & keep]
            if len(kept):
                residual[of_kind] -= _median(kept)
        mad = 1.4826 * _median(np.abs(residual[keep])) + 1e-6
        keep = np.abs(residual) <= config.outlier_mads * mad
    return normal, eigval, keep


def _run_labels(planted: np.ndarray) -> np.ndarray:
    """(T, J) id of the contiguous planted run each planted sample belongs to (runs numbered per joint)."""
    starts = planted & ~np.vstack([np.zeros((1, planted.shape[1]), dtype=bool), planted[:-1]])
    return np.cumsum(starts.T.reshape(-1)).reshape(planted.shape[::-1]).T


def _jackknife_deg(points: np.ndarray, kinds: np.ndarray, runs: np.ndarray, normal: np.ndarray) -> float:
    """:func:`_jackknife` as one standard error [deg]."""
    return _jackknife(points, kinds, runs, normal)[0]


def _jackknife(
    points: np.ndarray, kinds: np.ndarray, runs: np.ndarray, normal: np.ndarray
) -> tuple[float, np.ndarray | None]:
    """(standard error of the normal's direction [deg], its (3, 3) covariance in the world frame [rad^2]), leaving
    out one planted run at a time: samples within one footfall are not independent, footfalls nearly are.

    Every leave-one-out fit is the full fit's statistics less one footfall's (a downdate), so the runs
    cost one pass over the points and one batch of 3 x 3 eigen-decompositions. The points are centred on
    their kind's mean first, which keeps the subtraction from cancelling digits."""
    ids, run_of = np.unique(runs, return_inverse=True)
    if len(ids) < 3:
        return float("inf"), None
    count, total, _ = _kind_sums(points, kinds)
    centred = points - (total / np.maximum(count, 1.0)[:, None])[kinds]
    count, total, moment = _kind_sums(centred, kinds)
    # Group g = 2 * run + kind: each footfall's share of each kind's statistics, (R, 2, ...).
    run_count, run_total, run_moment = _kind_sums(centred, 2 * run_of.reshape(-1) + kinds, 2 * len(ids))
    scatter = _scatter(
        count - run_count.reshape(-1, 2),
        total - run_total.reshape(-1, 2, 3),
        moment - run_moment.reshape(-1, 2, 3, 3),
    )
    _, eigvec = np.linalg.eigh(scatter)
    # Each refit's normal, signed like `normal` (|cos|), against it.
    refits = eigvec[:, :, 0] * np.sign(eigvec[:, :, 0] @ normal)[:, None]
    angles = np.arccos(np.clip(np.abs(refits @ normal), -1.0, 1.0))
    scale = (len(ids) - 1) / len(ids)
    # The same spread per tilt direction: each refit's step off `normal`, in the plane perpendicular to it.
    steps = refits - np.outer(refits @ normal, normal)
    return float(np.degrees(np.sqrt(scale * np.sum(np.square(angles))))), scale * steps.T @ steps


def estimate_floor(joints_w: np.ndarray, fps: float, config: FloorConfig = FloorConfig()) -> FloorEstimate:
    """The floor plane under SMPL joints (T, 24, 3) [m] sampled at `fps` [Hz]."""
    return _estimate_floor(joints_w[:, _USED], fps, config)


def _estimate_floor(joints_w: np.ndarray, fps: float, config: FloorConfig) -> FloorEstimate:
    """:func:`estimate_floor` from the joints it reads, (T, len(_USED), 3) in the order of `_USED`."""
    foot = joints_w[:, : len(_FOOT)]  # (T, 4, 3)
    speed = np.linalg.norm(np.gradient(foot, 1.0 / fps, axis=0), axis=-1) if len(foot) > 1 else np.zeros((1, 4))
    kinds_all = np.broadcast_to(_KIND, speed.shape)
    # Start from the body's mean up direction (pelvis to neck), which tilts with the world frame,
    # with a wide height band: heights along a first guess drift over a long walk.
    trunk = (joints_w[:, _NECK_AT] - joints_w[:, _PELVIS]).mean(axis=0)
    trunk_up = trunk / (np.linalg.norm(trunk) + 1e-12)
    normal, eigval = trunk_up, np.zeros(3)
    planted = np.zeros_like(speed, dtype=bool)
    keep = np.zeros(0, dtype=bool)
    for round_ in range(config.iterations):
        height = foot @ normal  # (T, 4)
        grounded = _kind_percentiles(height, config.ground_percentile)
        band = config.stance_height_m if round_ else config.first_band_m
        previous, planted = planted, (speed < config.stance_speed_m_s) & (height - grounded[_KIND] < band)
        if planted.sum() < 4:
            break
        if round_ and np.array_equal(planted, previous):
            break  # the same planted points: the fit would be the same normal again
        normal, eigval, keep = _robust_fit(foot[planted], kinds_all[planted], normal, config)
    height = foot @ normal
    floor = float(_kind_percentiles(height, config.ground_percentile).min())
    tilt = float(np.degrees(np.arccos(np.clip(normal @ _UP, -1.0, 1.0))))
    planted_s = int(planted.sum()) / len(_FOOT) / fps
    spread = float(np.sqrt(max(eigval[1], 0.0)))
    stderr, jack_cov = float("inf"), None
    if planted.sum() >= 4:
        stderr, jack_cov = _jackknife(
            foot[planted][keep], kinds_all[planted][keep], _run_labels(planted)[planted][keep], normal
        )

    kept = "world frame kept as is"
    cues: list[Cue] = []
    missing: list[str] = []
    lean = float(np.degrees(np.arccos(np.clip(normal @ trunk_up, -1.0, 1.0))))
    if planted_s < config.min_stance_s:
        missing.append(f"footfalls: feet planted for {planted_s:.2f} s (need {config.min_stance_s:g} s)")
    elif spread < config.min_spread_m:
        missing.append(f"footfalls: planted feet spread {spread * 100:.1f} cm (need {config.min_spread_m * 100:g} cm)")
    elif lean > config.max_lean_deg:
        missing.append(
            f"footfalls: plane {lean:.0f} deg off the body's mean up direction (at most {config.max_lean_deg:g})"
        )
    elif not np.isfinite(stderr):
        missing.append("footfalls: fewer than 3 footfalls")
    else:
        cues.append(
            Cue(
                "footfalls",
                normal,
                float(np.hypot(stderr, config.footfall_bias_deg)),
                int(planted.sum()),
                config.footfall_bias_deg,
                None if jack_cov is None else jack_cov + isotropic_cov(normal, config.footfall_bias_deg),
            )
        )
    start = normal if lean <= config.max_lean_deg else trunk_up
    if config.directional and not cues:
        # Without usable footfalls their plane's normal is noise in the direction they leave open, and the
        # foot-geometry fit keeps its start in a direction its own points leave open: the trunk is the prior.
        start = trunk_up
    flat = np.repeat(settled(planted[:, 0::2] & planted[:, 1::2], round(config.flat_edge_s * fps)), 2, axis=1)
    geometry, why = foot_geometry_cue(
        foot,
        flat,
        start,
        fps,
        heights_m=np.asarray(config.flat_foot_heights_m),
        height_spread_m=np.asarray(config.flat_foot_spread_m),
        min_flat_s=config.min_flat_s,
        bias_deg=config.foot_geometry_bias_deg,
        outlier_mads=config.outlier_mads,
        damping_m=config.foot_geometry_damping_m if config.directional else 0.0,
    )
    # The airborne frames are told on the clip turned to the feet's floor (the trunk's without one).
    airborne = flight_airborne(joints_w, fps, cues[0].normal_w if cues else geometry.normal_w if geometry else start)
    flight, why_flight = _flight(joints_w, fps, airborne, config)
    standing, why_standing = quiet_standing_cue(
        joints_w[:, _NECK_AT] - joints_w[:, _PELVIS],
        np.asarray(planted.all(axis=1)),
        fps,
        min_standing_s=config.min_standing_s,
        bias_deg=config.quiet_standing_bias_deg,
    )
    one_foot = False
    if standing is None and config.directional:
        # Standing on one foot, the body still holds its centre of mass over it: the trunk is the same weak
        # prior, read while one foot is flat and planted, and it fills the roll that foot leaves open.
        standing, _ = quiet_standing_cue(
            joints_w[:, _NECK_AT] - joints_w[:, _PELVIS],
            np.asarray((planted[:, 0::2] & planted[:, 1::2]).any(axis=1)),
            fps,
            min_standing_s=config.min_standing_s,
            bias_deg=config.one_foot_standing_bias_deg,
        )
        one_foot = standing is not None
    for cue, reason in ((geometry, why), (flight, why_flight)):
        if cue is None:
            missing.append(reason)
        elif (off := np.degrees(np.arccos(np.clip(cue.normal_w @ trunk_up, -1.0, 1.0)))) > config.max_lean_deg:
            missing.append(
                f"{cue.name}: normal {off:.0f} deg off the body's mean up direction (at most {config.max_lean_deg:g})"
            )
        else:
            cues.append(cue)
    # The trunk is a weak prior: beside the feet it only adds its lean (bench/bench_floor.py), so it stands
    # in only where no foot cue is usable.
    considered = tuple(cues) + ((standing,) if standing is not None else ())
    if standing is None:
        missing.append(why_standing)
    elif one_foot and not any(c.name in ("footfalls", "foot geometry") for c in cues):
        # Alone, a trunk over one foot is no floor (a body bent over a raised leg): it only fills beside a foot.
        missing.append("quiet standing: on one foot, used only beside a foot cue")
    elif any(c.name in ("footfalls", "foot geometry") for c in cues) and not (
        config.directional and _leaves_open(cues, standing)
    ):
        missing.append("quiet standing: not needed (the feet give the floor)")
    else:
        cues.append(standing)
    slow = speed < config.stance_speed_m_s
    if not cues:
        drift_deg, drift_m = _drift(foot, slow, kinds_all, trunk_up, config)
        return FloorEstimate(
            _UP.copy(),
            floor,
            0.0,
            float("inf"),
            planted_s,
            spread,
            False,
            f"floor not estimated: no usable cue ({'; '.join(missing)}); {kept}",
            (),
            tuple(missing),
            considered,
            drift_deg,
            drift_m,
            airborne=airborne,
        )
    # The cues read the same feet, so their biases need not average out: the uncertainty that decides
    # whether to correct is never below the least biased cue's bias.
    bias = min(c.bias_deg for c in cues)
    if config.directional:
        normal, cov_w = fuse_directional(cues)
        cov_w = _floored(cov_w, normal, bias)
        stderr = float(np.degrees(np.sqrt(max(np.trace(cov_w), 0.0))))
        size = tilt_size(normal, cov_w)
    else:
        normal, stderr = fuse(cues)
        stderr = max(stderr, bias)
    drift_deg, drift_m = _drift(foot, slow, kinds_all, normal, config)
    floor = float(_kind_percentiles(foot @ normal, config.ground_percentile).min())
    tilt = float(np.degrees(np.arccos(np.clip(normal @ _UP, -1.0, 1.0))))
    significant = tilt >= config.significance * stderr
    if config.directional:
        # Either rule: the tilt's size along its own direction, or its angle over the scalar standard error
        # (an 8 deg tilt along the loose axis of one flat-foot cue passes this one, not the first).
        significant = significant or size > config.mahalanobis_significance
    else:
        size = tilt / stderr
    used = ", ".join(c.name for c in cues)

    def result(applied: bool, message: str) -> FloorEstimate:
        return FloorEstimate(
            normal,
            floor,
            tilt,
            stderr,
            planted_s,
            spread,
            applied,
            message,
            tuple(cues),
            tuple(missing),
            considered,
            drift_deg,
            drift_m,
            size,
            airborne,
        )

    # Both sizes the gates read: the tilt over the standard error shown, and along its own direction.
    along = (
        f": {tilt / stderr:.1f} of them, {size:.1f} along the tilt; gates {config.significance:g}, "
        f"{config.mahalanobis_significance:g}"
        if config.directional
        else ""
    )
    if tilt < config.min_tilt_deg:
        return result(
            False, f"floor level (tilt {tilt:.2f} deg < {config.min_tilt_deg:g}; cues: {used}); clip unchanged"
        )
    if not significant:
        return result(
            False,
            f"floor level within its uncertainty (tilt {tilt:.2f} deg, standard error "
            f"{stderr:.2f} deg{along}; cues: {used}); clip unchanged",
        )
    return result(
        True,
        f"floor tilted {tilt:.2f} deg (standard error {stderr:.2f}{along}; cues: {used}), at {floor:+.3f} m: "
        "clip levelled and grounded",
    )


def _leaves_open(cues: list[Cue], prior: Cue) -> bool:
    """True when the cues fused leave some tilt direction less known than `prior` knows it: a still foot's
    roll, feet that never move apart. The prior then fills that direction (beside well-spread feet it would
    only add its lean)."""
    _, cov_w = fuse_directional(cues)
    return float(np.linalg.eigvalsh(cov_w)[-1]) > float(np.linalg.eigvalsh(prior.covariance_w())[-1])


def _floored(cov_w: np.ndarray, normal_w: np.ndarray, bias_deg: float) -> np.ndarray:
    """(3, 3) `cov_w` with every tilt direction's variance at least the isotropic `bias_deg`'s."""
    basis = tangent_basis(normal_w)
    eigval, eigvec = np.linalg.eigh(basis.T @ cov_w @ basis)
    floored = (eigvec * np.maximum(eigval, np.radians(bias_deg) ** 2 / 2.0)) @ eigvec.T
    return basis @ floored @ basis.T


def tilt_size(normal_w: np.ndarray, cov_w: np.ndarray) -> float:
    """Size of the tilt (+z seen from `normal_w`, gnomonic: tan of the angle, in its tangent plane) in the
    standard errors of `cov_w` in that direction (Mahalanobis): a tilt along a well-pinned direction counts for
    more than the same angle along a loose one."""
    basis = tangent_basis(normal_w)
    step = basis.T @ (_UP / (_UP @ normal_w))
    cov = basis.T @ cov_w @ basis
    return float(np.sqrt(max(float(step @ np.linalg.solve(cov + np.eye(2) * 1e-300, step)), 0.0)))


def _drift(
    foot: np.ndarray, slow: np.ndarray, kinds: np.ndarray, normal: np.ndarray, config: FloorConfig
) -> tuple[float, float]:
    """(angle between the footfall planes of the first and second half of the clip [deg], rise of the planted
    feet along `normal` from the first half to the second [m]); NaN where a half cannot say.

    Each half picks its own planted feet (slow, and near that half's grounded height), so a floor that
    drifts by more than the stance band over the clip is still followed."""
    half = np.arange(len(foot)) < len(foot) / 2
    height = foot @ normal
    normals, rises = [], []
    for part in (half, ~half):
        if part.sum() < 2:
            return float("nan"), float("nan")
        grounded = _kind_percentiles(height[part], config.ground_percentile)
        chosen = slow & part[:, None] & (height - grounded[_KIND] < config.stance_height_m)
        if chosen.sum() < 4 or len(np.unique(kinds[chosen])) < 2:
            return float("nan"), float("nan")
        points, kind = foot[chosen], kinds[chosen]
        rises.append(np.array([_median(points[kind == k] @ normal) for k in range(2)]))
        fitted, eigval, _ = _robust_fit(points, kind, normal, config)
        normals.append(fitted if np.sqrt(max(eigval[1], 0.0)) >= config.min_spread_m else None)
    rise_m = float(np.mean(rises[1] - rises[0]))
    if normals[0] is None or normals[1] is None:
        return float("nan"), rise_m
    return float(np.degrees(np.arccos(np.clip(normals[0] @ normals[1], -1.0, 1.0)))), rise_m


def flight_airborne(joints_w: np.ndarray, fps: float, normal: np.ndarray) -> np.ndarray:
    """(T,) frames with neither foot down, told by the project's contact detector on the joints read
    ((T, len(_USED), 3), order of `_USED`) turned so that `normal` is +z."""
    full = np.zeros((len(joints_w), 24, 3))
    full[:, _USED] = joints_w @ rotation_to_up(normal).T
    return detect_foot_contacts(full, fps).airborne


def used_com_w(joints_w: np.ndarray) -> np.ndarray:
    """(T, 3) the body's centre of mass from the joints read ((T, len(_USED), 3), order of `_USED`)."""
    return joints_w.transpose(0, 2, 1) @ _COM_OF_USED


def flight_min_frames(config: FloorConfig, fps: float) -> int:
    """Free-fall frames the flight cue needs at `fps` [Hz] (`FloorConfig.flight_min_s`; never fewer than 4)."""
    if not np.isfinite(config.flight_min_s):
        return np.iinfo(np.int64).max
    return max(4, int(np.ceil(config.flight_min_s * fps - 1e-9)))


def _flight(joints_w: np.ndarray, fps: float, airborne: np.ndarray, config: FloorConfig) -> tuple[Cue | None, str]:
    """The flight cue of the centre of mass over the `airborne` frames."""
    return flight_cue(
        used_com_w(joints_w),
        airborne,
        fps,
        min_frames=flight_min_frames(config, fps),
        bias_deg=config.flight_bias_deg,
        edge_frames=config.flight_edge_frames,
        min_phase_frames=config.flight_min_phase_frames,
        g_tolerance=config.flight_g_tolerance,
    )


def rotation_to_up(normal_w: np.ndarray) -> np.ndarray:
    """(3, 3) the smallest rotation taking the unit `normal_w` to +z (no yaw added)."""
    axis = np.cross(normal_w, _UP)
    sin, cos = np.linalg.norm(axis), float(normal_w @ _UP)
    if sin < 1e-12:
        return np.eye(3)
    return rotvec_to_matrix(axis / sin * np.arctan2(sin, cos))


def transform_sequence(seq: SmplSequence, rot: np.ndarray, shift_w: np.ndarray) -> SmplSequence:
    """The clip moved rigidly: every point p goes to ``rot @ p + shift_w``.

    SMPL puts the pelvis at trans + J0 with J0 not rotated by the root, so the translation
    follows the pelvis: trans' = rot (trans + J0) + shift - J0 (J0 of the neutral skeleton).
    """
    j0 = neutral_skeleton().offsets[0]
    pose = seq.pose_rotvec.copy()
    pose[:, 0] = matrix_to_rotvec(rot @ rotvec_to_matrix(seq.pose_rotvec[:, 0]))
    trans = (seq.trans_w + j0) @ rot.T + shift_w - j0
    return seq.with_frames(pose, trans, seq.fps)


def level_sequence(seq: SmplSequence, config: FloorConfig = FloorConfig()) -> tuple[SmplSequence, FloorEstimate]:
    """Estimate the floor under `seq` and, if it is tilted, rotate and shift the clip so it is z = 0."""
    # Only the joints it reads (the feet, the trunk and the centre of mass's): the clip's full kinematics
    # comes later, after resampling.
    estimate = _estimate_floor(smpl_joint_positions(seq.pose_rotvec, seq.trans_w, _USED), seq.fps, config)
    if not estimate.applied:
        return seq, estimate
    return transform_sequence(
        seq, rotation_to_up(estimate.normal_w), np.array([0.0, 0.0, -estimate.height_m])
    ), estimate
