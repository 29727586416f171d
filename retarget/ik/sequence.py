"""Whole-sequence IK: all frames solved together, with contacts, floor and smoothness.

Each Gauss-Newton iteration linearises every frame's residuals at once (vectorised FK and
Jacobians from :mod:`retarget.tree_kinematics`) and solves one sparse system for the
increments of all frames: per-frame blocks from the tracking terms, coupled between frames by
an acceleration penalty on root position and joint angles. Ordered frame by frame, that
system is banded (bandwidth two frames), so a banded Cholesky solves it in time linear in the
clip length. Joint limits are enforced by projecting each iterate onto the box. Each pass of
iterations is one compiled call (:mod:`retarget.ik.gauss_newton`); this module orders the passes
(keyframes coarse to fine, then the whole clip) and prepares their inputs.

Why one solve for the whole clip rather than frame after frame: a per-frame IK can only
damp toward the previous frame, which lags and still jitters where the pose is
ill-conditioned; the acceleration term lets every frame see both neighbours, and one call per
iteration instead of one per frame is what makes thousands of frames per second possible.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from retarget.errors import ConfigError
from retarget.ik.aot import forward_function, pass_function
from retarget.ik.pass_inputs import FrameTargets, OneSided, ResidualLayout, StepSettings, TreeArrays
from retarget.tree_kinematics import TreeKinematics, so3_exp, so3_log


@dataclass(frozen=True)
class SequenceIkConfig:
    """Weights (as residual scales) and iteration counts of the whole-sequence IK."""

    position_weight: float = 1.0
    """Scale of matched-point position residuals [1/m]."""
    segment_weight: float = 2.0
    """Scale of the arm-segment vector residuals (upper arm, forearm) [1/m]."""
    leg_segment_weight: float = 2.0
    """Scale of the leg-segment vector residuals (thigh, shank) [1/m]."""
    leg_from_hip_roll: float = 0.35
    """How far [0, 1] each leg's knee, ankle and foot targets move from the bone-scaled human's towards the
    human leg rebuilt on the robot's (:func:`retarget.ik.problem.leg_chain_from_hip_roll_w`): the knee where
    the robot's hip-roll → knee line along the human thigh puts it, the ankle along the human shank from there.
    The scaled human leg hangs from the hip-pitch point, 5.2 cm medial of the robot's hip-roll origin, so its
    targets pull the robot thigh ~6° more adducted than the human's (most in stance, where the foot targets are
    heavy). The G1's knee bends in the thigh's plane only, so a human knee that is not in its thigh's plane (valgus)
    cannot be followed by thigh and shank at once: 1 puts the whole error on the shank, 0 mostly on the thigh."""
    swing_shank_segment_weight: float | None = 3.5
    """Scale of a shank's segment residual in the frames its foot swings [1/m] (None: ``leg_segment_weight``).
    A fast swing is where the smoothness penalty holds the shank back from the human's; in stance the shank is
    already placed by the planted foot and the knee. On the tuning half (bench/bench_limbs.py, with the heading
    hold at 1.5): shank 2.55° → 2.36° (official 2.83°), at or under the official on 12 → 16 of 20 clips; |jerk|
    +3 % median over the 39 clips, +4 % with ``contact_heading_weight`` 0.25 (4, with the floor weight at 60:
    +5.0 %, the most allowed)."""
    stance_shank_segment_weight: float | None = 3.0
    """Scale of a shank's segment residual in the frames its foot is planted and the human shank stands within
    45° of vertical [1/m], scaled down where the pose is low (``stance_shank_upright_ratios``; None:
    ``leg_segment_weight``). The shank's remaining error against the official retargets is lateral and in stance
    (CR7_level2, step_forward_forward_level3). With ``contact_orientation_weight`` 4.5 and ``acceleration_weight``
    5.3e-3 (which hold the planted foot flat and the joints smooth against the heavier shank), 3 takes the shank
    2.27° → 2.03° on the tuning half, at or under the official on 18 of 20 clips (bench/bench_limbs.py). 3.5 with
    flatness 5 and acceleration 5.35e-3: the median of the clips' mean stance sliding 1.07× of 139df3d's
    (bench/bench_quality_ab.py); 4 with flatness 5 and 5.2e-3: stance tilt 1.13× on the tuning half."""
    stance_shank_upright_ratios: tuple[float, float] | None = (0.6, 0.8)
    """Guard on ``stance_shank_segment_weight`` (off, full): the pelvis target's height over a leg's ankle target
    as a fraction of its standing (rest-pose) height; below the first the stance shank keeps its ordinary weight,
    above the second it takes the stance-shank weight, a smoothstep between
    (:func:`retarget.ik.problem.stance_posture_share`). A leg planted under a low pelvis (kneeling, crawling, a
    deep squat) is where the heavier shank fights the floor and collision rows: unguarded, the crawl
    SpiderMan_level2 (its stance pelvis at 0.41 of standing) went to |jerk| 3× (stance weight 4) with 16 mm of
    geometry in the floor. Upright stance on the tuning half stays above 0.72 (0.1st percentile), and the guard
    costs it nothing (shank 2.025° → 2.027°). None: no guard."""
    orientation_weight: float = 0.25
    """Scale of pelvis, torso and swing-foot orientation residuals [1/rad]."""
    contact_position_weight: float = 14.0
    """Scale of the stance-foot position residual [1/m] (keeps the foot in place, on the floor). At 10 the
    foot origin drifts under the pull of the leg targets (stance sliding 0.20 cm/s median over the 39 clips
    with the heading hold; 14: 0.14); 20 gives 0.10 but bends the thighs and raises the joint accelerations
    (see docs/retarget_quality_speed.md)."""
    contact_orientation_weight: float = 4.5
    """Scale of the stance-foot flatness residual (roll and pitch) [1/rad]. 4 rather than 3 to match the
    heavier position weight, which otherwise tilts stance feet up to 0.53° where the ankle pitch is busy; 4.5
    against the pull of the stance shank (``stance_shank_segment_weight``; at 4 the stance tilt median is 1.12×
    139df3d's, bench/bench_quality_ab.py)."""
    contact_heading_weight: float = 0.25
    """Scale of the stance-foot heading residual (rotation about the vertical) [1/rad]. Lighter than the
    flatness: the G1's ankle has no yaw, so a stance foot's heading is the whole leg's, and holding it to the
    human foot's heading (toes turned out more than the knee) swings the knee sideways off the human's and
    tilts the shank (3.0 here: shank error 2.92° over the 39 clips, 0.5: 2.74°; the official retargets 2.80°).
    With the leg targets of ``leg_from_hip_roll`` and the swing shank, 0.5 → 0.25 on the tuning half
    (bench/bench_limbs.py): shank 2.36° → 2.27°, at or under the official on 16 → 18 of 20 clips."""
    contact_heading_hold_weight: float | None = 1.5
    """After the keyframe pass, each stance phase's heading target becomes the robot foot's own mean heading
    over the phase (in the interpolated keyframe solution, found with ``contact_heading_weight``), at this
    weight in the fine pass [1/rad]: the foot keeps one heading through the stance (a turning foot slides)
    without being turned to the human toes' heading. None: the human heading at ``contact_heading_weight``
    (sliding 0.28 cm/s median over the 39 clips; with 1.0 and the position weight 14: 0.14 cm/s). 1.5 holds the
    feet against the heavier swing shank (``swing_shank_segment_weight``), which at 1.0 turns a stance foot of
    walk_level1 2.3° within a phase (1.7° at 1.5; sliding 0.14 → 0.11 cm/s median)."""
    ankle_pitch_margin_rad: float | None = 0.05
    """Stance feet stay flat unless the human shank leans further than the ankle pitch range minus this
    margin allows; then the foot pitches just enough (heel or toe lifted, see
    :func:`retarget.contact_targets.tilt_within_ankle_range`). None keeps every stance foot flat."""
    floor_weight: float = 40.0
    """Scale of the floor residual of swing-foot sole points [1/m] (active only near or below the floor). At 30
    the heavier swing shank (``swing_shank_segment_weight``) pulls soles 10 % deeper into the floor; 40 keeps them
    out (sole penetration 0.19 → 0.13 mm median over the 39 clips, bench/bench_quality_ab.py); 60 halves it but
    adds |jerk| (+4 % against +3 %) and, pressing the knee spheres of the crawl SpiderMan_level2 up, turns its
    thighs 7.0° → 12.7° off the human's (both with ``contact_heading_weight`` 0.5)."""
    floor_from_toe: bool = False
    """Take each stance phase's floor from the ankle's flat-foot height (the toe's height plus the flat foot's
    ankle-over-toe drop where the heel is raised, :func:`retarget.contact_targets.flat_ankle_height_w`) instead of
    the ankle's own. Off: with stance feet kept flat, a human phase on the ball of the foot then raises the body
    above the flat robot foot's reach (test half, bench/bench_limbs.py: pelvis height error 1.99 → 1.82 cm, but
    stance |sole z| 1.28×, tilt 1.11× median, bench/bench_quality_ab.py)."""
    floor_phase_percentile: float = 50.0
    """Percentile of a stance phase's (flat-foot) ankle heights that is taken as the ankle on the floor [%]. The
    median keeps the robot feet on the floor: 20 lowers the pelvis-height error 1.99 → 1.89 cm (test half) within
    5 % on every foot and smoothness median, but the mean self-collision frames 1.8×."""
    floor_per_phase: bool = True
    """One floor per stance phase, interpolated between phases (follows a reconstruction whose floor drifts);
    False: one floor for the clip (``floor_phase_percentile`` of all stance frames)."""
    heel_raise_threshold_m: float | None = None
    """Where the human ankle stands more than this above its flat-foot height in stance, the robot foot pitches
    about its toe to lift its ankle by the rest (:func:`retarget.contact_targets.heel_raise_pitch_rad`); None:
    stance feet flat (within the ankle range). With ``floor_from_toe`` and ``floor_phase_percentile`` 5, 0.005
    takes the pelvis-height error to 1.41 cm (test half) but stance tilt 6.0×, sliding 1.37×, |jerk| 1.15×
    (medians); off by default."""
    self_collision_weight: float = 10.0
    """Scale of the residual of overlapping collision proxy spheres (arms against hips and thighs) [1/m]."""
    floor_margin_m: float = 0.003
    """Swing-foot sole points below this height are pushed up to it [m]: a Gauss-Newton step that
    only reacts once a point is below z = 0 leaves it slightly below at the last iteration."""
    acceleration_weight: float = 5.3e-3
    """Scale of joint and root accelerations [m per rad/s²]: 4 rad/s² costs like 2 cm of error. 5.3e-3 rather
    than 5e-3 with the stance shank (``stance_shank_segment_weight``): the mean |jerk| over the 39 clips 1.06× of
    139df3d's before it, 1.02× with it (bench/bench_quality_ab.py); 5.5e-3 (stance shank 4, flatness 5) tilts the
    stance feet, median 1.11×."""
    damping: float = 0.1
    """Levenberg-Marquardt damping added to the normal equations. At 1e-4 Gauss-Newton steps overshoot in
    poorly determined directions and many keyframes settle into period-2 cycles (steps of 0.1-0.2 rad that
    never shrink); 0.1 damps them out, and every limb segment ends closer to the human (0.1° less on
    thighs and arms over the 39 clips) in fewer iterations."""
    pin_limits: bool = True
    """Re-solve a step with the joints that would cross a limit pinned there (instead of only clipping)."""
    max_step: float = 0.25
    """Largest change of any coordinate of a frame in one iteration [rad or m]; larger steps are scaled."""
    iterations: int = 4
    """Gauss-Newton iterations over the whole clip (after the keyframe pass)."""
    extra_iterations: int = 6
    """Further iterations allowed while a floor or collision constraint is still violated."""
    augmented_lagrangian: bool = True
    """Shift the target of each switched-on floor/collision row by the violation its last step left (an
    augmented-Lagrangian update): the rows then converge onto the constraint instead of balancing the
    tracking pull at a few mm of violation, or flipping on and off between iterations. False: plain penalty."""
    constraint_tolerance_m: float = 0.002
    """Floor and collision violations up to this are accepted [m]."""
    keyframe_stride: int = 6
    """Every this many frames a keyframe is solved first; 1 disables the coarse pass."""
    coarse_keyframe_factor: int = 3
    """The keyframe pass starts from a coarser one over every this-many-th keyframe (every 18th frame at the
    defaults), solved from the rest pose; then it needs only ``keyframe_refine_iterations``. From the rest
    pose, the stride-6 pass needed 15-22 iterations; the two levels together need a third fewer full-clip
    iteration equivalents and end closer to the human on every limb segment (thigh 2.99° → 2.94°, forearm
    3.90° → 3.83°). 1: one level."""
    keyframe_iterations: int = 15
    """Gauss-Newton iterations of the coarsest keyframe pass (from the rest pose)."""
    keyframe_refine_iterations: int = 4
    """Gauss-Newton iterations of a keyframe pass that starts from a coarser one."""
    keyframe_extra_iterations: int = 10
    """Further keyframe iterations allowed while a floor or collision constraint is still violated (as
    ``extra_iterations``, for the keyframe pass)."""
    keyframe_max_step: float = 0.25
    """Trust region of the keyframe pass [rad or m]."""
    step_tolerance: float = 1e-4
    """Stop early when the largest increment of any frame is below this [rad, m]."""

    def __post_init__(self) -> None:
        ratios = self.stance_shank_upright_ratios
        if ratios is not None and not (len(ratios) == 2 and 0.0 <= ratios[0] < ratios[1]):
            raise ConfigError(f"stance_shank_upright_ratios must be (off, full) with 0 <= off < full, got {ratios!r}")


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
    frame_yaw_weight: np.ndarray
    """(T, F) residual scale of the rotation error's component about the world vertical [1/rad] (the heading
    of a flat target); the other two components use ``frame_weight``."""
    segment_vec_w: np.ndarray
    """(T, G, 3) [m] target vector of each limb segment (end minus start): the scaled human limb."""
    segment_weight: np.ndarray
    """(T, G) residual scale per segment and frame [1/m]."""
    sole_floor_check: np.ndarray
    """(T, S) True where a sole point is kept above the floor by the floor residual (swing feet; stance
    feet are held on the floor by their contact targets)."""
    heading_phase: np.ndarray
    """(T, F) int: which stance phase a stance-foot frame target belongs to (numbered over the clip), −1 for
    every other frame target; used to hold one heading per stance phase."""


class WholeSequenceIK:
    """Solves whole clips for one robot and one set of tracked points, frames and sole points.

    `kin` tracks, in order, the positions of `layout.num_points` target points, `layout.num_soles`
    floor-checked sole points and the collision proxy points; and the orientations of the target frames.
    """

    def __init__(
        self, kin: TreeKinematics, layout: PointLayout, lower, upper, config: SequenceIkConfig = SequenceIkConfig()
    ):
        self.kin = kin
        self.layout = layout
        self.num_points = layout.num_points
        self.lower = np.ascontiguousarray(lower, dtype=np.float64)
        # Ancestor joints of every tracked point, padded, for the compiled kernel.
        self._anc_n = np.array([len(c) for c in kin.chains], dtype=np.int64)
        self._anc = np.zeros((len(kin.chains), max(1, int(self._anc_n.max()))), dtype=np.int64)
        for k, chain in enumerate(kin.chains):
            self._anc[k, : len(chain)] = chain
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.config = config
        n = kin.num_tangent
        self._n = n
        # Root position and joints are smoothed; root rotation follows the pelvis orientation target.
        self._smoothed = np.r_[0:3, 6:n]
        self._smoothed_mask = np.isin(np.arange(n), self._smoothed)
        self._tree = TreeArrays(
            kin.parent,
            kin.placement_rot,
            kin.placement_pos,
            kin.axis_j,
            kin.point_joint,
            kin.point_pos_j,
            kin.point_rot_j,
            self._anc,
            self._anc_n,
        )

    def _kernel_inputs(
        self, targets: SequenceTargets, num_frames: int
    ) -> tuple[ResidualLayout, FrameTargets, OneSided]:
        """The compiled kernel's view of the layout and the targets, and fresh one-sided rows (all off)."""
        lay, cfg = self.layout, self.config
        Q = len(lay.proxy_radius_m)
        layout = ResidualLayout(
            self.num_points,
            lay.num_soles,
            Q,
            self.kin.num_frames,
            *(
                np.ascontiguousarray(a)
                for a in (
                    lay.segment_a,
                    lay.segment_b,
                    lay.proxy_radius_m,
                    lay.pair_a,
                    lay.pair_b,
                    lay.pair_clearance_m,
                )
            ),
        )
        frame_targets = FrameTargets(
            np.ascontiguousarray(targets.point_pos_w),
            np.ascontiguousarray(targets.point_weight),
            np.ascontiguousarray(targets.segment_vec_w),
            np.ascontiguousarray(targets.segment_weight),
            np.ascontiguousarray(targets.frame_rot_w),
            np.stack([targets.frame_weight, targets.frame_weight, targets.frame_yaw_weight], axis=-1),
            np.ascontiguousarray(targets.sole_floor_check),
        )
        widths = (lay.num_soles, Q, len(lay.pair_a))
        one_sided = OneSided(
            cfg.floor_margin_m,
            cfg.floor_weight,
            cfg.self_collision_weight,
            False,
            False,
            *(np.zeros((num_frames, w), dtype=np.bool_) for w in widths),
            *(np.zeros((num_frames, w)) for w in widths),
        )
        return layout, frame_targets, one_sided

    def _normal_equations(self, state, targets: SequenceTargets):
        """Per-frame Gauss-Newton blocks H_t = Σ w² JᵀJ and g_t = Σ w² Jᵀe of all residuals at `state`, with
        every one-sided row off before the call, and the largest violation of the one-sided (floor, collision)
        constraints [m] (the first iteration of a pass; for tests). See :mod:`retarget.ik.kernel`."""
        from retarget.ik.kernel import normal_equations

        root_pos, root_rot, dof = (np.ascontiguousarray(a, dtype=np.float64) for a in state)
        H = np.empty((dof.shape[0], self._n, self._n))
        g = np.empty((dof.shape[0], self._n))
        layout, frame_targets, one_sided = self._kernel_inputs(targets, dof.shape[0])
        violation = normal_equations(root_pos, root_rot, dof, self._tree, layout, frame_targets, one_sided, H, g)
        return H, g, violation

    def solve(self, targets: SequenceTargets, fps: float, init):
        """Solve the clip from `init` = (root_pos (T,3), root_rot (T,3,3), dof (T,D)).

        Returns the state tuple and the number of iterations used."""
        num_frames = targets.point_pos_w.shape[0]
        coarse_iterations = 0.0
        previous: tuple[tuple, np.ndarray] | None = None
        for stride in self._keyframe_strides(num_frames):
            # Coarse to fine: solve every `stride`-th frame (cheap: 1/stride of the frames, where large
            # moves such as a deep squat need many iterations), each level from the interpolated solution
            # of the coarser one (the coarsest from the rest pose); the full clip then needs only a few.
            keys = np.unique(np.r_[np.arange(0, num_frames, stride), num_frames - 1])
            if previous is None:
                start, planned = tuple(a[keys] for a in init), self.config.keyframe_iterations
            else:
                start, planned = _interpolate_state(*previous, keys), self.config.keyframe_refine_iterations
            coarse, used = self._solve(
                _take(targets, keys),
                fps / stride,
                start,
                planned,
                max_step=self.config.keyframe_max_step,
                extra_iterations=self.config.keyframe_extra_iterations,
            )
            coarse_iterations += used / stride
            previous = (coarse, keys)
        if previous is not None:
            init = _interpolate_state(*previous, np.arange(num_frames))
            if self.config.contact_heading_hold_weight is not None:
                root_pos, root_rot, dof = init
                targets = _hold_stance_headings(
                    targets,
                    self.forward(root_pos, root_rot, dof, num_points=0)[1],
                    self.config.contact_heading_hold_weight,
                )
        state, iterations = self._solve(
            targets, fps, init, self.config.iterations, self.config.max_step, self.config.extra_iterations
        )
        return state, iterations + coarse_iterations

    def forward(self, root_pos_w, root_rot_w, dof, num_points: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Positions (T, P, 3) of the first `num_points` tracked points (default: the target points) and
        orientations (T, F, 3, 3) of the tracked frames: :meth:`TreeKinematics.forward` in compiled code."""
        root_pos, root_rot, q = (np.ascontiguousarray(a, dtype=np.float64) for a in (root_pos_w, root_rot_w, dof))
        T = q.shape[0]
        pos = np.empty((T, self.num_points if num_points is None else num_points, 3))
        rot = np.empty((T, self.kin.num_frames, 3, 3))
        forward_function()(root_pos, root_rot, q, *self._tree, self.kin.num_points, pos, rot)
        return pos, rot

    def _keyframe_strides(self, num_frames: int) -> list[int]:
        """Strides of the keyframe passes, coarsest first; each needs more than two strides of frames."""
        stride, factor = self.config.keyframe_stride, self.config.coarse_keyframe_factor
        if stride <= 1:
            return []
        strides = [stride * factor, stride] if factor > 1 else [stride]
        return [s for s in strides if num_frames > 2 * s]

    def _solve(
        self, targets: SequenceTargets, fps: float, init, max_iterations: int, max_step: float, extra_iterations: int
    ):
        root_pos, root_rot, dof = (np.array(a, dtype=np.float64, copy=True, order="C") for a in init)
        np.clip(dof, self.lower, self.upper, out=dof)
        cfg = self.config
        smoothing = dof.shape[0] >= 3 and cfg.acceleration_weight > 0
        settings = StepSettings(
            damping=cfg.damping,
            acceleration_penalty=(cfg.acceleration_weight * fps**2) ** 2 if smoothing else 0.0,
            pin_limits=cfg.pin_limits,
            max_step=max_step,
            step_tolerance=cfg.step_tolerance,
            constraint_tolerance_m=cfg.constraint_tolerance_m,
            augmented_lagrangian=cfg.augmented_lagrangian,
        )
        layout, frame_targets, one_sided = self._kernel_inputs(targets, dof.shape[0])
        # The compiled pass takes the named tuples spread into their fields (retarget.ik.aot).
        iterations = pass_function()(
            root_pos,
            root_rot,
            dof,
            *self._tree,
            *layout,
            *frame_targets,
            *one_sided,
            self.lower,
            self.upper,
            self._smoothed_mask,
            *settings,
            max_iterations,
            extra_iterations,
        )
        return (root_pos, root_rot, dof), int(iterations)


def _take(targets: SequenceTargets, frames: np.ndarray) -> SequenceTargets:
    return SequenceTargets(*(getattr(targets, f.name)[frames] for f in dataclasses.fields(SequenceTargets)))


def _hold_stance_headings(targets: SequenceTargets, frame_rot_w: np.ndarray, weight: float) -> SequenceTargets:
    """Targets whose stance-foot headings are, per stance phase, the circular mean heading of `frame_rot_w`
    (T, F, 3, 3: the tracked frames of a solution) over the phase, weighted by `weight` [1/rad]. Each target
    is turned about the vertical, so a pitched (heel- or toe-lifted) target keeps its pitch."""
    t, f = np.nonzero(targets.heading_phase >= 0)
    if len(t) == 0:
        return targets
    phase = targets.heading_phase[t, f]
    solved = np.arctan2(frame_rot_w[t, f, 1, 0], frame_rot_w[t, f, 0, 0])
    num_phases = int(phase.max()) + 1
    sin_sum = np.bincount(phase, np.sin(solved), num_phases)
    mean = np.arctan2(sin_sum, np.bincount(phase, np.cos(solved), num_phases))[phase]
    rot = targets.frame_rot_w.copy()
    turn = mean - np.arctan2(rot[t, f, 1, 0], rot[t, f, 0, 0])
    c, s = np.cos(turn), np.sin(turn)
    rz = np.zeros((len(t), 3, 3))
    rz[:, 0, 0], rz[:, 0, 1], rz[:, 1, 0], rz[:, 1, 1], rz[:, 2, 2] = c, -s, s, c, 1.0
    rot[t, f] = rz @ rot[t, f]
    yaw_weight = targets.frame_yaw_weight.copy()
    yaw_weight[t, f] = weight
    return dataclasses.replace(targets, frame_rot_w=rot, frame_yaw_weight=yaw_weight)


def _lerp_columns(values: np.ndarray, keys: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """`np.interp` of every column of `values` (at frame indices `keys`, ascending) at `frames` (within the
    keys) in one pass, with numpy's arithmetic (slope from the bracketing keys, exact at a key) so the result
    is bit for bit the same as a loop of `np.interp` over the columns."""
    x, xp = frames.astype(np.float64), keys.astype(np.float64)
    at = np.searchsorted(xp, x, side="right") - 1
    lo = np.minimum(at, len(xp) - 2)
    slope = (values[lo + 1] - values[lo]) / (xp[lo + 1] - xp[lo])[:, None]
    out = slope * (x - xp[lo])[:, None] + values[lo]
    exact = xp[at] == x
    out[exact] = values[at[exact]]
    return out


def _interpolate_state(state, keys: np.ndarray, frames: np.ndarray):
    """Keyframe states (at frame indices `keys`) at the frame indices `frames`: lerp positions and joints,
    slerp the root rotation."""
    root_pos, root_rot, dof = state
    t = frames
    idx = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 2)
    alpha = ((t - keys[idx]) / (keys[idx + 1] - keys[idx]))[:, None]
    # Slerp on SO(3): R = R0 · exp(alpha · log(R0ᵀ R1)), the logarithm once per pair of neighbouring keys.
    rel = so3_log(np.swapaxes(root_rot[:-1], -1, -2) @ root_rot[1:])[idx]
    rot = root_rot[idx] @ so3_exp(alpha * rel)
    return _lerp_columns(root_pos, keys, t), rot, _lerp_columns(dof, keys, t)
