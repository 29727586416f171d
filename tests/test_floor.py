"""Floor and gravity from the motion: real clips tilted by known angles about several axes and
lifted, the floor found again; level clips left exactly as they are; too little stance says so."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SMPL_DIR, smpl_clip

from retarget.floor import estimate_floor, level_sequence, rotation_to_up, transform_sequence
from retarget.readers.amass import read_amass_npz
from retarget.readers.source import SourceOptions, load_clip
from retarget.rotations import rotvec_to_matrix
from retarget.skeleton import smpl_forward_kinematics
from retarget.smpl_sequence import SmplSequence

# Clips with footfalls spread enough to pin the floor down (standard error below 1 deg).
CLIPS = ("walk_level2_filter", "jump_forward_level2_filter", "step_forward_back_level2_filter")
AXES = (np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0))
OFFSET_M = np.array([0.4, -0.3, 0.25])
UP = np.array([0.0, 0.0, 1.0])


def _joints(seq: SmplSequence) -> np.ndarray:
    return smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)[0]


def _angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1.0, 1.0))))


@pytest.mark.parametrize("name", CLIPS)
def test_tilted_and_lifted_clips_give_their_floor_back(name):
    seq = read_amass_npz(smpl_clip(name))
    level = estimate_floor(_joints(seq), seq.fps)
    assert not level.applied and level.stderr_deg < 1.0
    for tilt_deg in (3.0, 8.0, 15.0):
        for axis in AXES:
            rot = rotvec_to_matrix(axis * np.radians(tilt_deg))
            tilted = transform_sequence(seq, rot, OFFSET_M)
            est = estimate_floor(_joints(tilted), seq.fps)
            normal_true = rot @ UP  # the bundled clips stand on a level floor
            assert _angle_deg(est.normal_w, normal_true) < 0.5, (tilt_deg, axis)
            assert est.height_m == pytest.approx(level.height_m + normal_true @ OFFSET_M, abs=0.01)
            assert est.applied and est.tilt_deg == pytest.approx(tilt_deg, abs=0.5)
            fixed, again = level_sequence(tilted)
            check = estimate_floor(_joints(fixed), seq.fps)
            assert check.tilt_deg < 0.5 and abs(check.height_m) < 0.01
            # Levelling is a rigid motion of the clip: bone lengths and body pose untouched.
            assert np.allclose(fixed.pose_rotvec[:, 1:], seq.pose_rotvec[:, 1:])
            assert again.applied


def test_level_clips_are_left_exactly_as_they_are():
    """All 39 bundled ASAP clips (TRAM reconstructions, levelled by ASAP): no rotation, no shift."""
    paths = sorted(SMPL_DIR.glob("*.npz"))
    assert len(paths) == 39
    for path in paths:
        clip = load_clip(path)
        raw = read_amass_npz(path)
        assert clip.floor is not None
        assert not clip.floor.applied, (path.name, clip.floor.message)
        assert clip.floor.manifest_metrics()["floor_correction_deg"] == 0.0
        assert np.array_equal(clip.seq.pose_rotvec, raw.pose_rotvec) and np.array_equal(clip.seq.trans_w, raw.trans_w)


TILT_8X_5Y = rotvec_to_matrix(np.radians([8.0, 0.0, 0.0])) @ rotvec_to_matrix(np.radians([0.0, 5.0, 0.0]))


def _bundled(name: str):
    from pathlib import Path

    return read_amass_npz(Path(__file__).resolve().parents[1] / "motions_raw" / f"video_{name}_amass.npz")


def test_a_squat_in_place_is_levelled_by_its_flat_feet():
    """The bundled squat: feet never move apart (the footfall plane is refused), yet its flat feet with
    the skeleton's ankle-above-toe height give the floor of the 9.4 deg tilt back within 2.5 deg (the foot
    cue's own tilt on the level squat is 0.8 deg: bench/bench_floor.py), and the correction is made."""
    seq = _bundled("squat_level1_filter")
    tilted = transform_sequence(seq, TILT_8X_5Y, np.array([0.4, -0.3, 0.07]))
    est = estimate_floor(_joints(tilted), seq.fps)
    names = [c.name for c in est.cues]
    assert names[0] == "foot geometry" and "footfalls" not in names, names
    assert any("footfalls: planted feet spread" in m for m in est.missing), est.missing
    normal_true = TILT_8X_5Y @ UP
    assert _angle_deg(est.normal_w, normal_true) < 2.5
    assert est.applied and "cues: foot geometry" in est.message
    assert 0.0 < est.stderr_deg < 3.0
    # Rotation equivariance: the tilted clip's cue is the level clip's, turned by the tilt.
    level = estimate_floor(_joints(seq), seq.fps)
    assert not level.applied
    assert _angle_deg(est.cues[0].normal_w, TILT_8X_5Y @ level.cues[0].normal_w) < 0.05
    fixed, _ = level_sequence(tilted)
    assert estimate_floor(_joints(fixed), seq.fps).tilt_deg < 2.5


def test_the_centre_of_mass_flight_gives_gravity_on_a_level_jump_and_follows_a_tilt():
    """single_foot_jump_level1 (a test clip): over the 25 free-fall frames the estimator fits (29 airborne, in
    runs of 4 or more) the centre of mass falls 0.84 deg from +z: within its stated error (0.70 deg, 0.24 from
    the fit's residuals and the 0.66 bias; Mahalanobis size 1.64, inside the 2.45 that holds 95 % of an honest
    2-D error), where the pelvis, fitted the same way over the same frames, is 3.08 deg off (the legs swing under
    it). Tilted by 9.4 deg, the cue turns exactly with the clip and still finds the tilted gravity; the
    estimator fuses it and levels the clip."""
    from retarget.body_com import body_com_w
    from retarget.floor import FloorConfig, flight_min_frames, tilt_size
    from retarget.floor_cues import flight_cue

    seq = read_amass_npz(smpl_clip("single_foot_jump_level1_filter"))
    joints = _joints(seq)
    level = estimate_floor(joints, seq.fps)
    assert level.airborne is not None and int(level.airborne.sum()) == 29 and not level.applied
    config = FloorConfig()
    kwargs = {"min_frames": flight_min_frames(config, seq.fps), "bias_deg": config.flight_bias_deg}
    assert kwargs["min_frames"] == 8
    cue, why = flight_cue(body_com_w(joints), level.airborne, seq.fps, **kwargs)
    pelvis, _ = flight_cue(joints[:, 0], level.airborne, seq.fps, **kwargs)
    assert cue is not None and pelvis is not None, why
    assert cue.samples == 25 and cue.bias_deg == config.flight_bias_deg
    fused = next(c for c in level.considered if c.name == "flight")
    assert np.allclose(fused.normal_w, cue.normal_w) and fused.stderr_deg == pytest.approx(cue.stderr_deg)
    miss_deg = _angle_deg(cue.normal_w, UP)
    assert miss_deg == pytest.approx(0.84, abs=0.01)
    assert cue.stderr_deg == pytest.approx(0.70, abs=0.01) and miss_deg < 2.0 * cue.stderr_deg
    assert tilt_size(cue.normal_w, cue.covariance_w()) == pytest.approx(1.64, abs=0.01)
    assert _angle_deg(pelvis.normal_w, UP) == pytest.approx(3.08, abs=0.01)
    # The residuals' part of the covariance alone (no bias): 0.24 deg.
    bare, _ = flight_cue(body_com_w(joints), level.airborne, seq.fps, min_frames=8, bias_deg=0.0)
    assert bare is not None and bare.stderr_deg == pytest.approx(0.24, abs=0.01)

    tilted = joints @ TILT_8X_5Y.T + OFFSET_M
    turned, _ = flight_cue(body_com_w(tilted), level.airborne, seq.fps, **kwargs)
    assert turned is not None
    assert _angle_deg(turned.normal_w, TILT_8X_5Y @ cue.normal_w) < 1e-6  # equivariant: the same fit, turned
    assert np.allclose(turned.covariance_w(), TILT_8X_5Y @ cue.covariance_w() @ TILT_8X_5Y.T, atol=1e-12)
    assert _angle_deg(turned.normal_w, TILT_8X_5Y @ UP) < 2.0 * turned.stderr_deg
    est = estimate_floor(tilted, seq.fps)
    assert est.airborne is not None and np.array_equal(est.airborne, level.airborne)
    assert "flight" in [c.name for c in est.cues] and "flight" in est.message
    assert est.applied and _angle_deg(est.normal_w, TILT_8X_5Y @ UP) < 1.0
    assert np.isfinite(est.manifest_metrics()["floor_flight_stderr_deg"])


def test_a_flight_free_clip_gives_no_flight_cue_and_says_why():
    """The bundled walk never leaves the floor; a step clip's feet skim it for 6 frames, too short a flight;
    CR7_level1's 24 airborne frames (a run-up, a jump landing in a spin) 'fall' at 5.1 m/s^2, no free fall,
    and are refused by the gate on g."""
    from retarget.body_com import body_com_w
    from retarget.floor_cues import flight_cue

    reasons = {}
    for name in ("walk_level2_filter", "step_forward_forward_level4_filter", "CR7_level1_filter"):
        seq = read_amass_npz(smpl_clip(name))
        joints = _joints(seq)
        est = estimate_floor(joints, seq.fps)
        assert "flight" not in [c.name for c in est.considered] and not est.applied
        reasons[name] = next(m for m in est.missing if m.startswith("flight"))
    assert reasons == {
        "walk_level2_filter": "flight: 0 free-fall frames (need 8)",
        "step_forward_forward_level4_filter": "flight: 6 free-fall frames (need 8)",
        "CR7_level1_filter": "flight: free-fall acceleration 5.1 m/s^2, not g (within 20 %; 24 frames)",
    }
    cue, why = flight_cue(body_com_w(joints), np.zeros(len(joints), dtype=bool), seq.fps, min_frames=4, bias_deg=0.0)
    assert cue is None and why == "flight: 0 free-fall frames (need 4)"


def test_flight_covariance_is_honest_on_noisy_parabolas():
    """An exact free fall under a tilted gravity, two flight phases, with white noise of 5 mm on every
    position: the fitted direction's Mahalanobis size under the residual covariance (no bias) is sqrt(2) RMS
    over many draws (two degrees of freedom), and the mean direction is the true one."""
    from retarget.floor_cues import GRAVITY_M_S2, flight_cue

    rng = np.random.default_rng(0)
    fps, up = 30.0, TILT_8X_5Y @ UP
    t_s = np.arange(40) / fps
    airborne = np.zeros(40, dtype=bool)
    airborne[5:17] = airborne[24:36] = True
    path = np.zeros((40, 3))
    for a, b in ((5, 17), (24, 36)):
        local = t_s[a:b] - t_s[a]
        path[a:b] = (
            np.array([0.3, 0.1, 1.0]) + np.outer(local, [1.0, 0.5, 2.0]) - 0.5 * GRAVITY_M_S2 * np.outer(local**2, up)
        )
    sizes, normals = [], []
    for _ in range(400):
        cue, why = flight_cue(path + rng.normal(0.0, 0.005, path.shape), airborne, fps, min_frames=4, bias_deg=0.0)
        assert cue is not None, why
        sizes.append(_mahalanobis(cue, up))
        normals.append(cue.normal_w)
    assert np.sqrt(np.mean(np.square(sizes))) == pytest.approx(np.sqrt(2.0), rel=0.1)
    mean = np.mean(normals, axis=0)
    assert _angle_deg(mean, up) < 0.1
    exact, _ = flight_cue(path, airborne, fps, min_frames=4, bias_deg=0.0)
    assert exact is not None and _angle_deg(exact.normal_w, up) < 1e-9


def _mahalanobis(cue, truth: np.ndarray) -> float:
    """The cue's miss of the `truth` direction in its own standard errors (2 x 2, its tangent plane)."""
    from retarget.floor_cues import tangent_basis

    basis = tangent_basis(cue.normal_w)
    step = basis.T @ (truth / (truth @ cue.normal_w))
    cov = basis.T @ cue.covariance_w() @ basis
    return float(np.sqrt(step @ np.linalg.solve(cov, step)))


def test_the_centre_of_mass_of_the_rest_body():
    """de Leva's segments on SMPL's rest body: the weights sum to 1, the centre of mass lies within 5 mm of
    the pelvis's plane of symmetry (SMPL's rest body is symmetric to a few mm), just above the pelvis joint and
    below the first spine joint, 0.93 m above the toes
    (0.62 of the head joint's height: about 0.55-0.56 of stature, as for standing adults)."""
    from retarget.body_com import COM_WEIGHTS, body_com_w

    assert COM_WEIGHTS.sum() == pytest.approx(1.0) and (COM_WEIGHTS >= 0.0).all()
    pose = np.zeros((1, 24, 3))
    pose[0, 0] = [np.pi / 2, 0.0, 0.0]  # SMPL's y-up rest body stood up in the z-up world
    joints = smpl_forward_kinematics(pose, np.zeros((1, 3)))[0][0]
    com = body_com_w(joints[None])[0]
    assert abs(com[0] - joints[0, 0]) < 0.005
    assert joints[0, 2] < com[2] < joints[3, 2]
    assert com[2] - joints[[10, 11], 2].min() == pytest.approx(0.935, abs=0.002)


def test_a_walk_is_levelled_by_its_footfalls_and_flat_feet():
    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    tilted = transform_sequence(seq, TILT_8X_5Y, np.array([0.4, -0.3, 0.07]))
    est = estimate_floor(_joints(tilted), seq.fps)
    assert [c.name for c in est.cues][:2] == ["footfalls", "foot geometry"]
    assert est.applied and _angle_deg(est.normal_w, TILT_8X_5Y @ UP) < 0.5
    metrics = est.manifest_metrics()
    assert metrics["floor_correction_deg"] == pytest.approx(est.tilt_deg)
    assert np.isfinite(metrics["floor_footfalls_stderr_deg"]) and np.isnan(metrics["floor_flight_stderr_deg"])


def test_a_clip_without_a_usable_cue_is_refused_with_the_reason():
    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    short = seq.with_frames(seq.pose_rotvec[:8], seq.trans_w[:8], seq.fps)
    tilted = transform_sequence(short, rotvec_to_matrix(np.array([0.1, 0.0, 0.0])), OFFSET_M)
    kept, est = level_sequence(tilted)
    assert not est.applied and est.cues == ()
    assert est.message.startswith("floor not estimated: no usable cue (footfalls: feet planted for")
    assert "foot geometry: feet flat and planted" in est.message and "flight: " in est.message
    assert "quiet standing: both feet planted 0.20 s (need 0.5 s)" in est.message
    assert est.message.endswith("world frame kept as is")
    assert len(est.missing) == 4
    assert np.array_equal(kept.trans_w, tilted.trans_w) and np.array_equal(kept.pose_rotvec, tilted.pose_rotvec)


def test_rotation_to_up_is_the_smallest():
    for normal in (UP, np.array([0.1, -0.2, 0.97]), np.array([0.0, 0.3, 0.95])):
        normal = normal / np.linalg.norm(normal)
        rot = rotation_to_up(normal)
        assert np.allclose(rot @ normal, UP) and np.allclose(rot @ rot.T, np.eye(3))
        # No yaw added: the horizontal axis perpendicular to the tilt stays put.
        side = np.cross(normal, UP)
        if np.linalg.norm(side) > 1e-9:
            assert np.allclose(rot @ side, side)


def test_retarget_of_a_tilted_clip_matches_the_level_one(tmp_path):
    """Foot metrics of `eval` after levelling within 10 % of those of the untilted clip."""
    from retarget.config import RetargetConfig
    from retarget.metrics import MetricsConfig, evaluate_motion, load_human_reference
    from retarget.pipeline import retarget_file
    from robots.registry import load_robot_spec

    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    tilted = transform_sequence(seq, rotvec_to_matrix(AXES[2] * np.radians(8.0)), OFFSET_M)
    path = tmp_path / "walk_tilted.npz"
    np.savez(path, poses=tilted.pose_rotvec.reshape(-1, 72), trans=tilted.trans_w, mocap_framerate=seq.fps)
    config, spec = RetargetConfig(), load_robot_spec("g1_23dof")
    metrics = []
    for source in (smpl_clip("walk_level2_filter"), path):
        result = retarget_file(source, config)
        human = load_human_reference(source, result.motion.fps, config.contacts, SourceOptions())
        metrics.append(evaluate_motion(result.motion, human, spec, MetricsConfig()))
    level, fixed = metrics
    # The sole height is a few micrometres now (5.7 µm level, 6.5 µm levelled): below 2 µm the difference is
    # the levelling's round-off, not a worse foot, so it gets that absolute tolerance as well; likewise the tilt,
    # a hundredth of a degree (0.0176° level, 0.0157° levelled), below 0.003°.
    floor_abs = {"stance_sole_abs_height_mm": 0.002, "stance_tilt_deg": 0.003, "stance_slide_cm_s": 0.0}
    for key, abs_tol in floor_abs.items():
        assert getattr(fixed, key) == pytest.approx(getattr(level, key), rel=0.10, abs=abs_tol), key


def test_footfall_jackknife_equals_refitting_without_each_footfall():
    """The standard error from downdated sums equals the one from refitting the plane without each footfall
    in turn (the definition), on a tilted real walk."""
    from retarget.floor import _FOOT, _KIND, FloorConfig, _fit_normal, _jackknife_deg, _robust_fit, _run_labels

    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    tilted = transform_sequence(seq, rotvec_to_matrix(AXES[2] * np.radians(8.0)), OFFSET_M)
    foot = _joints(tilted)[:, _FOOT]
    level = _joints(seq)[:, _FOOT]  # footfalls picked on the level clip: low and slow
    speed = np.linalg.norm(np.gradient(level, 1.0 / seq.fps, axis=0), axis=-1)
    planted = (level[:, :, 2] - level[:, :, 2].min(axis=0) < 0.04) & (speed < 0.2)
    kinds = np.broadcast_to(_KIND, planted.shape)[planted]
    normal, _, keep = _robust_fit(foot[planted], kinds, UP, FloorConfig())
    points, kinds, runs = foot[planted][keep], kinds[keep], _run_labels(planted)[planted][keep]
    ids = np.unique(runs)
    assert len(ids) >= 6, len(ids)
    one_hot = (kinds[:, None] == np.arange(2)).astype(float)
    angles = []
    for i in ids:
        refit, _ = _fit_normal(points[runs != i], one_hot[runs != i], normal)
        angles.append(np.arccos(np.clip(refit @ normal, -1.0, 1.0)))
    expected = np.degrees(np.sqrt((len(ids) - 1) / len(ids) * np.sum(np.square(angles))))
    assert _jackknife_deg(points, kinds, runs, normal) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert expected > 0.0, expected


def test_floor_percentiles_and_medians_are_numpys():
    from retarget.floor import _kind_percentiles, _median

    rng = np.random.default_rng(2)
    for frames in (1, 2, 7, 144, 1001):
        height = rng.normal(size=(frames, 4))
        for percent in (0.0, 5.0, 50.0, 97.5, 100.0):
            expected = [np.percentile(height[:, [kind, kind + 2]], percent) for kind in (0, 1)]
            np.testing.assert_array_equal(_kind_percentiles(height, percent), expected)
        for values in (height[:, 0], height[1:, 1]) if frames > 1 else (height[:, 0],):  # odd and even lengths
            assert _median(values) == np.median(values)


def test_quiet_standing_stands_in_only_where_the_feet_say_nothing():
    """The bundled squat stands on both feet: its trunk gives a weak gravity prior (4.4 deg off +z on the level
    clip, standard error 5.8 deg: the 5.06 deg lean of the level tuning clips and its own spread). Beside the
    flat feet it is not used; with the foot cues switched off it is the cue, turned with the tilt, and too weak
    to correct a 15 deg tilt at 3 standard errors."""
    from retarget.floor import FloorConfig

    seq = _bundled("squat_level1_filter")
    joints = _joints(seq)
    level = estimate_floor(joints, seq.fps)
    assert [c.name for c in level.cues] == ["foot geometry"]
    assert "quiet standing: not needed (the feet give the floor)" in level.missing
    standing = next(c for c in level.considered if c.name == "quiet standing")
    assert _angle_deg(standing.normal_w, UP) == pytest.approx(4.38, abs=0.05)
    assert standing.stderr_deg == pytest.approx(5.84, abs=0.05)
    rot = rotvec_to_matrix(np.array([1.0, 0.0, 0.0]) * np.radians(15.0))
    no_feet = FloorConfig(min_stance_s=float("inf"), min_flat_s=float("inf"))
    est = estimate_floor(joints @ rot.T + OFFSET_M, seq.fps, no_feet)
    assert [c.name for c in est.cues] == ["quiet standing"]
    assert _angle_deg(est.normal_w, rot @ standing.normal_w) < 1e-6
    assert not est.applied and "floor level within its uncertainty" in est.message and "quiet standing" in est.message


def test_depth_drift_is_measured_where_the_feet_stay_put():
    """A floor rising 0.5 cm/s under the real squat (every joint lifted by 0.5 cm/s x t): the planted feet of the
    second half stand higher than those of the first by about the rise over half the clip (1.31 cm). On a walk
    in one direction the same rise is a slope along the path, and the fitted plane takes it as a tilt: the
    drift figure stays as on the level walk (the stated limit)."""
    for name, expect_cm in (("squat_level1_filter", 1.31), ("walk_level2_filter", 0.0)):
        seq = read_amass_npz(smpl_clip(name)) if name.startswith("walk") else _bundled(name)
        joints = _joints(seq)
        rising = joints.copy()
        rising[..., 2] += 0.005 * (np.arange(len(joints)) / seq.fps)[:, None]
        base, drifted = estimate_floor(joints, seq.fps), estimate_floor(rising, seq.fps)
        assert 100 * (drifted.drift_m - base.drift_m) == pytest.approx(expect_cm, abs=0.4), name
        assert np.isfinite(drifted.manifest_metrics()["floor_drift_m"])


def test_calibrated_flat_feet_take_the_left_toe_roll_off():
    """The rest skeleton's flat feet (ankle 5.58 cm above the toe on the left, 4.81 cm on the right, the toes
    level) against the heights measured on the level tuning clips (`bench/bench_floor.py --calibrate`: the left
    toe 0.55 cm below the right): on the level walk the foot-geometry cue comes closer to +z with the measured
    ones, its roll (across the feet) most; the footfall plane does not read them."""
    from retarget.floor import FloorConfig
    from retarget.floor_cues import rest_foot_heights_m

    rest = rest_foot_heights_m()
    assert rest[0] - rest[1] == pytest.approx(0.0558, abs=1e-4) and rest[2] - rest[3] == pytest.approx(0.0481, abs=1e-4)
    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    joints = _joints(seq)
    normals = {}
    rest_feet = FloorConfig(flat_foot_heights_m=(rest[0] - rest[1], 0.0, rest[2] - rest[3], 0.0))
    for label, config in (("rest", rest_feet), ("measured", FloorConfig())):
        normals[label] = {c.name: c.normal_w for c in estimate_floor(joints, seq.fps, config).cues}
    assert _angle_deg(normals["measured"]["foot geometry"], UP) < 0.4
    assert _angle_deg(normals["rest"]["foot geometry"], UP) > 0.8
    assert np.array_equal(normals["measured"]["footfalls"], normals["rest"]["footfalls"])


def test_settled_drops_the_ends_of_every_run():
    from retarget.floor_cues import settled

    mask = np.array([1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1], dtype=bool)
    expected = np.array([0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0], dtype=bool)
    assert np.array_equal(settled(mask, 1), expected)
    assert np.array_equal(settled(mask, 0), mask)
    assert not settled(mask, 3).any()


def test_the_flat_foot_heights_are_the_tuning_clips():
    """`FloorConfig.flat_foot_heights_m` and `flat_foot_spread_m` are what `bench/bench_floor.py --calibrate`
    measures on the tuning half (one source: the defaults are the data's, to the 0.1 mm they are written with)."""
    import contextlib
    import io
    import sys
    from pathlib import Path

    from retarget.floor import FloorConfig

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_floor

    with contextlib.redirect_stdout(io.StringIO()):
        medians = bench_floor.calibrate_bench()
    median, spread = medians["tuning"]
    np.testing.assert_allclose(median, FloorConfig().flat_foot_heights_m, atol=5e-5)
    np.testing.assert_allclose(spread, FloorConfig().flat_foot_spread_m, atol=5e-5)
    assert median[1] < -0.004  # the left toe stands lower than the right on a flat foot


def test_footfall_covariance_is_the_jackknife_per_tilt_direction():
    """The footfall cue's 2 x 2 covariance is the leave-one-footfall-out spread per direction, with the bias
    added in both: on the tilted real walk its trace is the scalar standard error squared (0.69 deg), it lies
    in the plane perpendicular to the normal, and it is not the same in every direction (0.36 and 0.59 deg:
    a walk in one direction pins the slope along the path better than across it)."""
    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    est = estimate_floor(_joints(seq) @ TILT_8X_5Y.T + OFFSET_M, seq.fps)
    footfalls = est.cues[0]
    assert footfalls.name == "footfalls" and footfalls.cov_w is not None
    assert np.degrees(np.sqrt(np.trace(footfalls.cov_w))) == pytest.approx(footfalls.stderr_deg, rel=1e-4)
    assert np.abs(footfalls.cov_w @ footfalls.normal_w).max() < 1e-12
    axes_deg = np.degrees(np.sqrt(np.linalg.eigvalsh(footfalls.cov_w)[1:]))
    np.testing.assert_allclose(axes_deg, [0.36, 0.59], atol=0.01)


def test_directional_fusion_takes_each_direction_from_the_cue_that_pins_it():
    """Information-form fusion of the real walk's cues equals the closed form (sum of the inverse covariances,
    solved) in the tangent plane; a cue whose covariance leaves one direction open gives none of it: the fused
    normal's component there is the other cue's, while the pinned direction still averages."""
    from dataclasses import replace

    from retarget.floor_cues import fuse, fuse_directional, tangent_basis

    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    cues = list(estimate_floor(_joints(seq) @ TILT_8X_5Y.T + OFFSET_M, seq.fps).cues)
    assert [c.name for c in cues] == ["footfalls", "foot geometry"]
    start, _ = fuse(cues)
    basis = tangent_basis(start)
    points = [basis.T @ c.normal_w / (c.normal_w @ start) for c in cues]
    info = [np.linalg.inv(basis.T @ c.covariance_w() @ basis) for c in cues]
    expected = start + basis @ np.linalg.solve(sum(info), sum(i @ p for i, p in zip(info, points, strict=True)))
    normal, cov_w = fuse_directional(cues)
    assert _angle_deg(normal, expected) < 1e-6
    assert np.trace(cov_w) < min(np.trace(c.covariance_w()) for c in cues)
    # The foot geometry with its first tangent direction opened (variance 1e6 rad^2): that component of the
    # fused normal is the footfalls', the other one is still shared.
    open_dir, shut_dir = basis[:, 0], basis[:, 1]
    loose = replace(cues[1], cov_w=cues[1].covariance_w() + 1e6 * np.outer(open_dir, open_dir))
    normal, _ = fuse_directional([cues[0], loose])
    along = normal / (normal @ start)
    assert along @ open_dir == pytest.approx(points[0][0], abs=1e-6)
    assert min(points[0][1], points[1][1]) - 1e-9 <= along @ shut_dir <= max(points[0][1], points[1][1]) + 1e-9


def test_a_tilt_along_a_pinned_direction_is_corrected_at_its_mahalanobis_size():
    """The real walk_level3 tilted 3 deg about y: one standard error per cue leaves it (3.30 deg is 2.71 standard
    errors, under 3); in the directions its footfalls and flat feet pin it is 8.5 standard errors (Mahalanobis),
    over 4.24, so it is corrected, to the untilted clip's own estimate turned by the tilt (exact: the estimator
    is rotation-equivariant) and within its 1.07 deg from +z of the tilted +z. The untilted clip stays below the
    gate (1.05) and is left as read. A tilt the scalar rule passes is corrected as before."""
    from retarget.floor import FloorConfig, tilt_size

    seq = read_amass_npz(smpl_clip("walk_level3_filter"))
    joints = _joints(seq)
    rot = rotvec_to_matrix(np.radians([0.0, 3.0, 0.0]))
    tilted = joints @ rot.T + OFFSET_M
    scalar = estimate_floor(tilted, seq.fps, FloorConfig(directional=False, footfall_bias_deg=0.0))
    assert not scalar.applied and scalar.tilt_size == pytest.approx(2.71, abs=0.01)
    est = estimate_floor(tilted, seq.fps)
    assert est.applied and est.tilt_size == pytest.approx(8.47, abs=0.01)
    level = estimate_floor(joints, seq.fps)
    assert not level.applied and level.tilt_size == pytest.approx(1.05, abs=0.01)
    assert _angle_deg(est.normal_w, rot @ level.normal_w) < 1e-4
    assert _angle_deg(est.normal_w, rot @ UP) < 1.1
    # The other gate still holds: the real squat_level3 tilted 8 deg about y has its flat feet only, and the tilt
    # lies along their loose direction (3.96 there, under 4.24), but it is 3.16 scalar standard errors: corrected.
    seq = read_amass_npz(smpl_clip("squat_level3_filter"))
    squat = estimate_floor(_joints(seq) @ rotvec_to_matrix(np.radians([0.0, 8.0, 0.0])).T + OFFSET_M, seq.fps)
    assert squat.applied and squat.tilt_size == pytest.approx(3.96, abs=0.01)
    assert squat.tilt_deg / squat.stderr_deg == pytest.approx(3.16, abs=0.01)
    assert "3.2 of them, 4.0 along the tilt; gates 3, 4.24; cues: foot geometry" in squat.message
    # The size is the tilt's length (gnomonic: tan) along each principal direction of the covariance, in its
    # standard errors: 3 deg along a 0.5 deg axis is 6, along a 2 deg axis 1.5.
    turn = rotvec_to_matrix(np.radians([0.0, -3.0, 0.0]))
    for sigmas_deg, expect in (((0.5, 2.0), 6.0), ((2.0, 0.5), 1.5)):
        cov = turn @ np.diag([*np.radians(sigmas_deg) ** 2, 0.0]) @ turn.T
        assert tilt_size(turn @ UP, cov) == pytest.approx(np.tan(np.radians(3.0)) / np.radians(3.0) * expect, rel=1e-9)
    assert tilt_size(UP, np.diag([1e-4, 1e-4, 0.0])) == 0.0


def test_the_trunk_fills_the_roll_a_single_flat_foot_leaves_open():
    """The real single-foot balance with the raised leg lifted 25 cm more (knee, ankle, toe), so only one foot
    ever stands: its flat foot pins the pitch along it (3.0 deg) but hardly the roll across it (8.8 deg), looser
    than the trunk over one foot (7.6 deg per direction: `one_foot_standing_bias_deg`), so the trunk joins as a
    prior. Along the loose direction the fused normal moves more than half way to the trunk's (0.57); along the
    pinned one it stays by the foot's (0.13). Without the trunk the foot stands alone; turned with a tilt, all of
    it turns with it."""
    from retarget.floor import FloorConfig

    seq = _bundled("single_foot_balance_level1_filter")
    joints = _joints(seq)
    joints[:, [5, 8, 11]] += np.array([0.0, 0.0, 0.25])
    est = estimate_floor(joints, seq.fps)
    assert [c.name for c in est.cues] == ["foot geometry", "quiet standing"]
    foot, trunk = est.cues
    eigval, eigvec = np.linalg.eigh(foot.covariance_w())
    np.testing.assert_allclose(np.degrees(np.sqrt(eigval[1:])), [2.97, 8.83], atol=0.01)
    assert np.degrees(np.sqrt(np.linalg.eigvalsh(trunk.covariance_w())[-1])) == pytest.approx(7.65, abs=0.01)
    pinned, loose = eigvec[:, 1], eigvec[:, 2]
    assert est.normal_w @ loose / (trunk.normal_w @ loose) == pytest.approx(0.57, abs=0.01)
    assert est.normal_w @ pinned / (trunk.normal_w @ pinned) == pytest.approx(0.13, abs=0.01)
    alone = estimate_floor(joints, seq.fps, FloorConfig(min_standing_s=float("inf")))
    assert [c.name for c in alone.cues] == ["foot geometry"]
    assert np.array_equal(alone.cues[0].normal_w, foot.normal_w)
    tilted = estimate_floor(joints @ TILT_8X_5Y.T + OFFSET_M, seq.fps)
    assert [c.name for c in tilted.cues] == ["foot geometry", "quiet standing"]
    assert _angle_deg(tilted.normal_w, TILT_8X_5Y @ est.normal_w) < 1e-4


def test_a_jump_levelled_by_its_flight_keeps_its_limb_directions():
    """single_foot_jump_level1 (a test clip, in place) tilted 3 deg about x+y and lifted: its flat feet alone
    cannot tell the tilt, the centre of mass's flight can, and the clip is levelled. Retargeted, its limb
    directions against the untilted human are within 0.5 deg of the untilted clip's retarget by both limb
    metrics (+0.09 and +0.41 deg: bench/bench_floor.py --limbs), where the retarget of the tilted clip as it is
    comes out 0.69 and 1.25 deg worse."""
    from retarget.config import RetargetConfig
    from retarget.metrics import MetricsConfig, evaluate_motion
    from retarget.metrics.clip import align
    from retarget.metrics.human import HumanReference
    from retarget.metrics.limbs_indep import score_indep
    from retarget.metrics.replay import replay_motion
    from retarget.pipeline import retarget_sequence
    from robots.registry import load_robot_spec

    seq = read_amass_npz(smpl_clip("single_foot_jump_level1_filter"))
    tilted = transform_sequence(seq, rotvec_to_matrix(AXES[2] * np.radians(3.0)), OFFSET_M)
    levelled, est = level_sequence(tilted)
    assert est.applied and "flight" in [c.name for c in est.cues]
    config = RetargetConfig()
    spec = load_robot_spec(config.robot)
    human = HumanReference.from_joints(_joints(seq), seq.fps, config.contacts)

    def limb_errors_deg(clip: SmplSequence) -> tuple[float, float]:
        motion = retarget_sequence(clip, config).motion
        row = evaluate_motion(motion, human, spec, MetricsConfig())
        motion, ref = align(motion, human)
        indep = score_indep(clip.name, replay_motion(spec, motion), ref)
        return row.limb_direction_error_deg, float(np.mean(list(indep.limb_dir_err_indep_deg.values())))

    untilted, fixed, raw = (np.array(limb_errors_deg(clip)) for clip in (seq, levelled, tilted))
    assert (np.abs(fixed - untilted) < 0.5).all(), (fixed, untilted)
    assert (raw - untilted > 0.6).all(), (raw, untilted)
