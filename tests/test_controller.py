"""The controller layer on short real clips: physically impossible edits fail inside the edited range
while the clean copy is performed; the performed motion replays from its own PD targets; an unstable
simulation ends a range with a reason; the CLI refuses bad input in one line."""

from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import smpl_clip

from retarget.controller import ControllerConfig, TrackerConfig, controller_check, track_motion, tracker_model
from retarget.controller.perform import performed_motion, performed_qpos
from retarget.controller.reference import interpolate_qpos
from retarget.controller.track import TrackingRun
from retarget.filter.dynamics import analyse_dynamics
from retarget.filter.robot_geometry import compute_robot_geometry
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz

FRAMES = 60  # 2 s at 30 Hz
CONFIG = ControllerConfig()
TAIL_EMPJPE_MM = 2.0  # the coarse tail's Empjpe on the clean squat against the whole 10 ms horizon's (measured 0.3)


def _retarget(g1, clip: str, start: int, stop: int):
    seq = read_amass_npz(smpl_clip(clip))
    seq = replace(seq, pose_rotvec=seq.pose_rotvec[start:stop], trans_w=seq.trans_w[start:stop])
    result = retarget_sequence(seq)
    fps = float(result.motion.fps)
    sole_w = compute_robot_geometry(result.qpos, g1).sole_w
    torque = analyse_dynamics(result.qpos, sole_w, fps, g1).joint_torque_nm
    return result.qpos, fps, torque, result.motion


@pytest.fixture(scope="module")
def squat(g1):
    """The first 4 s of a real squat, retargeted: (qpos (T, nq), fps, joint torques (T, D), motion)."""
    return _retarget(g1, "squat_level1_filter", 0, 120)


def _track(qpos, fps, torque, config=CONFIG):
    run = track_motion(qpos, fps, "g1_23dof", config, torque)
    return run, controller_check(run, len(qpos), fps, config)


@pytest.fixture(scope="module")
def clean(squat):
    qpos, fps, torque, _ = squat
    return _track(qpos[:FRAMES], fps, torque[:FRAMES])


def test_clean_squat_is_performed(clean):
    run, check = clean
    assert run.falls == ()
    assert check.passed, check.reason
    assert check.figures["tracked_fraction"] == 1.0
    # Eg-mpjpe well inside the quality bound; the retarget itself matches the human to ~30 mm.
    assert check.figures["eg_mpjpe_mm"] < 60.0
    assert check.figures["empjpe_mm"] <= check.figures["eg_mpjpe_mm"] + 1e-9


def test_lifted_segment_fails_inside_it(squat):
    qpos, fps, torque, _ = squat
    lifted = qpos[:FRAMES].copy()
    lifted[20:45, 2] += 0.25  # the whole body 25 cm up for 0.8 s, no jump to get there
    _, check = _track(lifted, fps, torque[:FRAMES])
    assert check.bad[20:45].mean() > 0.6, check.bad.nonzero()
    assert not check.bad[:18].any() and not check.bad[50:].any()


def test_root_teleport_fails_at_the_jump_and_tracking_resumes(squat):
    qpos, fps, torque, _ = squat
    frames = FRAMES + 15  # the chase before the fall lasts 0.5-0.9 s: room to see tracking resume after it
    moved = qpos[:frames].copy()
    moved[30:, 0] += 0.6  # 0.6 m sideways between two frames
    run, check = _track(moved, fps, torque[:frames])
    # The planner sees the jump coming (its horizon is 0.8 s) and lunges after it until it falls (0.5 m
    # away, ASAP's rule); the fall and the 0.5 s before it are bad, all after the jump; after the
    # restart it tracks again. (The jump itself is also a kinematic failure: 18 m/s of root speed.)
    # Measured: bad frames 42-57 of 75 (the squat retargeted with the default leg targets; 35-50 without).
    assert len(run.falls) >= 1 and "mean body distance" in run.falls[0].reason
    first_bad = int(np.argmax(check.bad))
    assert 30 <= first_bad <= 45, check.bad.nonzero()
    assert check.bad[first_bad : first_bad + 10].all()
    assert not check.bad[:30].any() and not check.bad[-5:].any()
    assert run.segment_starts[0] == 0 and len(run.segment_starts) >= 2


def test_time_times_five_fails_inside_the_fast_part(g1):
    # 3.3 s of walking (1.5 m, four steps) played 5× faster, after 0.7 s of the clip at its own pace.
    # (A squat at 5× is a quick bob the G1 can do: time × 5 is impossible only for motions like steps.)
    qpos, fps, torque, _ = _retarget(g1, "walk_level1_filter", 10, 130)
    fast = np.concatenate([qpos[:20], qpos[20:120:5], np.repeat(qpos[119:120], 10, axis=0)])
    tau = np.concatenate([torque[:20], torque[20:120:5], np.repeat(torque[119:120], 10, axis=0)])
    _, check = _track(fast, fps, tau)
    assert check.bad[20:40].any(), check.figures
    assert not check.bad[:8].any()


def test_performed_motion_replays_from_its_own_targets(clean, squat, g1):
    run, _ = clean
    model = tracker_model("g1_23dof", CONFIG.tracker.physics_dt_s)
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = run.qpos[0], run.qvel[0]
    mujoco.mj_forward(model, data)
    replayed = np.empty_like(run.qpos)
    replayed[0] = data.qpos
    for k in range(run.num_steps - 1):
        data.ctrl[:] = run.targets[k]
        mujoco.mj_step(model, data, nstep=CONFIG.tracker.decimation)
        replayed[k + 1] = data.qpos
    assert np.abs(replayed - run.qpos).max() < 1e-6
    # At the clip's rate, through the library motion type: control-rate samples land on clip frames.
    motion = performed_motion(run, squat[3], g1, model, (0, FRAMES))
    assert motion.num_frames == FRAMES and motion.fps == squat[1]
    on_grid = interpolate_qpos(run.qpos, 1.0 / run.dt_s, np.array([0.0, 0.4, 1.2]))
    frames = performed_qpos(run, FRAMES, squat[1])[[0, 12, 36]]
    np.testing.assert_allclose(frames, on_grid, atol=1e-9)
    # The performed feet stand on the floor: its contact-wrench residual is near zero in stance.
    qpos_f = performed_qpos(run, FRAMES, squat[1])
    dyn = analyse_dynamics(qpos_f, compute_robot_geometry(qpos_f, g1).sole_w, squat[1], g1)
    stance = dyn.in_contact.any(axis=1)
    assert stance.mean() > 0.9
    assert np.median(dyn.residual_force_n[stance]) < 0.05 * dyn.mass_kg * 9.81


def test_unstable_simulation_ends_the_range_with_a_reason(squat):
    qpos, fps, torque, _ = squat
    # A 50 ms physics step makes the stiff PD joints explode: MuJoCo detects it and resets the state.
    unstable = ControllerConfig(
        tracker=TrackerConfig(
            physics_dt_s=0.05, decimation=1, plan_step_factor=1, plan_tail_step_factor=0, num_samples=4, horizon_s=0.2
        )
    )
    run, check = _track(qpos[:30], fps, torque[:30], unstable)
    assert isinstance(run, TrackingRun) and run.falls
    assert any("unstable" in f.reason or "diverged" in f.reason or "distance" in f.reason for f in run.falls)
    assert not check.passed and check.reason


def test_cli_filter_controller_refuses_bad_input(tmp_path):
    from cli.main import main

    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"not an npz")
    out = CliRunner().invoke(
        main, ["filter", str(bad), "--layers", "kinematic,controller", "--json", str(tmp_path / "v.json")]
    )
    assert out.exit_code == 1
    assert "broken.npz" in out.output and "Traceback" not in out.output
    assert not (tmp_path / "v.json").exists()
    usage = CliRunner().invoke(main, ["filter", str(bad), "--layers", "kinematic,tracker"])
    assert usage.exit_code == 2 and "controller" in usage.output


def test_batch_stage_controller_writes_the_performed_motion_beside_and_in_place(tmp_path):
    import json

    from cli.main import main
    from retarget.asap_pkl import read_motion_library

    src = tmp_path / "src"
    src.mkdir()
    with np.load(smpl_clip("squat_level1_filter")) as npz:
        data = {k: npz[k] for k in npz.files}
    data["poses"], data["trans"] = data["poses"][:36], data["trans"][:36]  # 1.2 s
    np.savez(src / "short_squat.npz", **data)
    beside, in_place = tmp_path / "beside", tmp_path / "in_place"
    for out, mode in ((beside, "beside"), (in_place, "replace")):
        result = CliRunner().invoke(
            main,
            [
                "batch",
                str(src),
                "-o",
                str(out),
                "--executor",
                "inline",
                "--stage",
                "controller",
                "--performed",
                mode,
                "--quiet",
                "--format",
                "csv",
            ],
        )
        assert result.exit_code == 0, result.output
    row = json.loads((beside / "manifest.json").read_text())["clips"][0]
    assert row["metrics"]["controller.falls"] == 0.0 and row["metrics"]["controller.kept_fraction"] == 1.0
    assert 0.0 < row["metrics"]["controller.eg_mpjpe_mm"] < 60.0
    library = read_motion_library(beside / "motion_library.pkl")
    assert sorted(library) == ["short_squat", "short_squat_performed"]
    kinematic, performed = library["short_squat"], library["short_squat_performed"]
    assert performed["dof"].shape == kinematic["dof"].shape and performed["fps"] == kinematic["fps"]
    # The performed motion follows the kinematic one closely but is not it (the simulator moved it).
    gap = np.abs(performed["root_trans_offset"] - kinematic["root_trans_offset"]).max()
    assert 1e-4 < gap < 0.12
    # The consumer dialect gets both too, and reads back what the library holds.
    from retarget.formats.base import FormatOptions
    from retarget.formats.registry import read_motions

    assert sorted(p.name for p in (beside / "csv").iterdir()) == ["short_squat.csv", "short_squat_performed.csv"]
    (csv_performed,) = read_motions(
        beside / "csv" / "short_squat_performed.csv", options=FormatOptions(quat_order="xyzw", csv_fps=30.0)
    )  # Unitree layout, as written
    np.testing.assert_allclose(csv_performed.motion.root_pos_w, performed["root_trans_offset"], atol=1e-4)
    # The controller's figures: a column of the batch's table and of `report`, per clip, from the manifest.
    from rich.console import Console

    from cli.batch_cmd import _clip_table
    from retarget.batch.record import ClipRecord
    from retarget.viz.report import ReportConfig, build_report

    figures = row["metrics"]
    assert figures["controller.tracked_fraction"] == 1.0 and 0.0 < figures["controller.empjpe_mm"] < 40.0
    console = Console(record=True, width=250)
    console.print(_clip_table([ClipRecord.from_json_dict(row)]))
    assert f"100 % · {figures['controller.empjpe_mm']:.0f} mm · 0 falls" in console.export_text()
    page = build_report(beside, ReportConfig(preview_frames=0, plots=False)).html.read_text()
    clip_row = page[page.index('<tr class="v-ok" data-clip="short_squat"') :].split("</tr>")[0]
    for name in ("tracked_fraction", "empjpe_mm", "falls"):
        assert f"controller.{name.replace('_', '_<wbr>')}" in page
        assert f'data-v="{figures["controller." + name]!r}"' in clip_row
    replaced = read_motion_library(in_place / "motion_library.pkl")
    assert list(replaced) == ["short_squat"]
    np.testing.assert_allclose(replaced["short_squat"]["dof"], performed["dof"], atol=1e-6)


def test_perform_clip_writes_the_motion_and_its_provenance(tmp_path):
    import json

    from retarget.batch.record import file_sha256
    from retarget.controller import perform_clip
    from retarget.formats.registry import read_motions

    with np.load(smpl_clip("squat_level1_filter")) as npz:
        data = {k: npz[k] for k in npz.files}
    data["poses"], data["trans"] = data["poses"][:30], data["trans"][:30]
    src = tmp_path / "one_second.npz"
    np.savez(src, **data)
    from retarget.formats.registry import FormatNote

    with pytest.warns(FormatNote, match="23-dof motion written for beyondmimic"):  # the writer says it widens
        out = perform_clip(src, tmp_path / "performed.npz", fmt="beyondmimic")
    assert out.verdict.decision == "keep" and out.motion is not None
    doc = json.loads((tmp_path / "performed.npz.controller.json").read_text())
    assert doc["source_sha256"] == file_sha256(src) and doc["frame_range"] == [0, 30]
    assert doc["controller"]["tracker"]["num_samples"] == ControllerConfig().tracker.num_samples
    assert len(doc["pd_targets_rad"]) == out.run.num_steps and len(doc["pd_targets_rad"][0]) == 23
    assert 0.0 < doc["tracking_errors_mm"]["eg_mpjpe_mm"] < 60.0 and doc["falls"] == []
    (loaded,) = read_motions(tmp_path / "performed.npz")
    # write_motion keeps the clip's own rate; the consumer reads back the performed motion.
    assert loaded.motion.fps == 30.0 and loaded.motion.num_frames == 30
    np.testing.assert_allclose(loaded.motion.root_pos_w, out.motion.root_pos_w, atol=1e-5)
    np.testing.assert_allclose(
        np.abs(np.sum(loaded.motion.root_quat_w * out.motion.root_quat_w, axis=1)), 1.0, atol=1e-6
    )


def test_primitive_contact_planning_is_exact_while_the_feet_stand(squat):
    from retarget.controller.track import planning_model

    # A squat touches the floor with the sole spheres only: the planner's cheaper model (no mesh-floor tests)
    # rolls out the same physics, so the tracker makes the same plans and performs the same motion.
    qpos, fps, torque, _ = squat
    runs = []
    for primitive in (False, True):
        tracker = TrackerConfig(
            num_samples=8, plan_step_factor=1, plan_tail_step_factor=0, plan_primitive_contacts=primitive
        )
        runs.append(track_motion(qpos[:30], fps, "g1_23dof", ControllerConfig(tracker=tracker), torque[:30]))
    np.testing.assert_array_equal(runs[0].qpos, runs[1].qpos)
    full, cheap = tracker_model("g1_23dof", 0.005), planning_model("g1_23dof", 0.005, True)
    mesh = full.geom_type == mujoco.mjtGeom.mjGEOM_MESH
    assert full.geom_contype[mesh].any() and not cheap.geom_contype[mesh].any()
    assert (cheap.geom_contype[~mesh] == full.geom_contype[~mesh]).all()


def test_clean_jump_is_kept(g1):
    from retarget.controller import perform_result

    # A real side jump (3 s: crouch, take-off, flight, landing) that the static layers keep too.
    seq = read_amass_npz(smpl_clip("side_jump_level1_filter"))
    out = perform_result(retarget_sequence(seq), seq)
    check = out.verdict.check("controller.tracking")
    assert out.verdict.decision == "keep", out.verdict.reason
    assert check.figures["falls"] == 0 and check.figures["empjpe_mm"] < 40.0


def test_adaptive_sampling_rolls_out_fewer_samples_while_the_cost_is_low(squat):
    qpos, fps, torque, _ = squat
    counts = {}
    for threshold in (0.0, 1e9):  # never low / always low after the first plan
        tracker = TrackerConfig(num_samples=8, min_samples=3, adaptive_cost=threshold)
        run = track_motion(qpos[:15], fps, "g1_23dof", ControllerConfig(tracker=tracker), torque[:15])
        counts[threshold] = (run.plans, run.rollouts)
    plans, rollouts = counts[0.0]
    assert plans > 3 and rollouts == 8 * plans
    plans, rollouts = counts[1e9]
    assert rollouts == 8 + 3 * (plans - 1)  # the first plan has no previous cost: all samples


def _squat_control_reference(squat, g1, cfg: TrackerConfig):
    """The tracker model, the G1's dof indices and the control reference of the squat's first 30 frames."""
    from retarget.controller.reference import control_reference
    from retarget.controller.track import site_ids
    from robots.mujoco_model import dof_qpos_indices, dof_qvel_indices

    qpos, fps, _, _ = squat
    model = tracker_model("g1_23dof", cfg.physics_dt_s)
    dof_q, dof_v = dof_qpos_indices(model, g1), dof_qvel_indices(model, g1)
    ref = control_reference(model, qpos[:30], fps, 0.02, site_ids(model, "g1_23dof"), dof_v, g1.kp, g1.kd, None, True)
    return model, dof_q, dof_v, ref


def test_tail_rollout_continues_the_fine_rollout_where_it_ends(squat, g1):
    from retarget.controller.mpc import SamplingPlanner
    from retarget.controller.track import planning_model

    # With the tail in the same model, the split rollout is the single one (up to the solver's warm start,
    # which the state does not carry): the tail starts from the fine part's last state, step for step.
    cfg = TrackerConfig(num_samples=4)
    model, dof_q, dof_v, ref = _squat_control_reference(squat, g1, cfg)
    plan_model = planning_model("g1_23dof", 0.01, True)
    whole = SamplingPlanner(plan_model, ref, dof_q, dof_v, g1.kp, cfg)
    split = SamplingPlanner(plan_model, ref, dof_q, dof_v, g1.kp, replace(cfg, plan_tail_step_factor=2), plan_model)
    assert (whole.fine_steps, split.fine_steps, split.tail_decimation) == (40, 20, 2)
    data = mujoco.MjData(model)
    data.qpos[:] = ref.qpos[0]
    data.qpos[2] += cfg.init_height_offset_m
    data.qvel[:] = ref.qvel[0]
    mujoco.mj_forward(model, data)
    state = np.empty(mujoco.mj_stateSize(model, whole.state_spec))
    mujoco.mj_getState(model, data, state, whole.state_spec)
    noise = np.random.default_rng(0).standard_normal((4,) + whole.nominal.shape) * whole.sigma_rad
    targets = whole.targets(0, whole.residuals(noise))
    (s1, x1), (s2, x2) = (p.simulate(np.tile(state, (4, 1)), targets) for p in (whole, split))
    whole.close()
    split.close()
    assert s1.shape == s2.shape and x1.shape == x2.shape == (4, 40, 3 * len(g1.matched_points))
    np.testing.assert_allclose(x2, x1, atol=1e-6)
    np.testing.assert_allclose(s2[..., 0], s1[..., 0], atol=1e-9)  # the same times: no step lost or repeated


def test_coarse_tail_performs_the_clean_squat_as_the_whole_fine_horizon_does(clean, squat):
    # The default plans 20 ms steps after the first 0.4 s of each plan; the whole horizon at 10 ms performs
    # the same clean squat as closely (the `clean` fixture is the default).
    qpos, fps, torque, _ = squat
    config = ControllerConfig(tracker=TrackerConfig(plan_tail_step_factor=0))
    fine_run, fine_check = _track(qpos[:FRAMES], fps, torque[:FRAMES], config)
    run, check = clean
    assert CONFIG.tracker.plan_tail_step_factor == 4 and run.rollouts == fine_run.rollouts
    assert run.falls == fine_run.falls == () and check.passed and fine_check.passed
    assert check.figures["empjpe_mm"] == pytest.approx(fine_check.figures["empjpe_mm"], abs=TAIL_EMPJPE_MM)


def test_plan_tail_step_factor_must_divide_the_decimation_and_not_be_finer():
    from retarget.errors import ConfigError

    with pytest.raises(ConfigError, match="plan_tail_step_factor 3 must divide decimation 4"):
        TrackerConfig(plan_tail_step_factor=3)
    with pytest.raises(ConfigError, match="at least plan_step_factor 2"):
        TrackerConfig(plan_tail_step_factor=1)


def test_plan_step_factor_must_divide_the_decimation():
    from retarget.errors import ConfigError

    with pytest.raises(ConfigError, match="must divide decimation 4"):
        TrackerConfig(plan_step_factor=3)


def test_filter_table_has_the_controller_column(tmp_path):
    import json

    from cli.main import main

    with np.load(smpl_clip("squat_level1_filter")) as npz:
        data = {k: npz[k] for k in npz.files}
    data["poses"], data["trans"] = data["poses"][:36], data["trans"][:36]  # 1.2 s
    np.savez(tmp_path / "short_squat.npz", **data)
    args = ["filter", str(tmp_path / "short_squat.npz"), "--layers", "kinematic,controller"]
    out = CliRunner().invoke(main, [*args, "--json", str(tmp_path / "v.json")])
    assert out.exit_code == 0, out.output
    check = json.loads((tmp_path / "v.json").read_text())["verdicts"][0]["controller"]["check"]
    empjpe_mm = check["figures"]["empjpe_mm"]
    assert check["figures"]["tracked_fraction"] == 1.0 and 0.0 < empjpe_mm < 40.0
    table = CliRunner().invoke(main, args, env={"COLUMNS": "250"})  # one line per row
    assert table.exit_code == 0, table.output
    assert "tracked · Empjpe · falls" in table.output
    assert f"100 % · {empjpe_mm:.0f} mm · 0 falls" in table.output
    # Without the controller layer there is no such column.
    plain = CliRunner().invoke(main, ["filter", str(tmp_path / "short_squat.npz"), "--layers", "kinematic"])
    assert plain.exit_code == 0 and "Empjpe" not in plain.output


def test_controller_cell_reads_the_figures():
    from retarget.controller.figures import controller_cell, metrics_figures

    assert controller_cell({"tracked_fraction": 0.954, "empjpe_mm": 27.4, "falls": 1.0}) == "95 % · 27 mm · 1 fall"
    assert controller_cell({"tracked_fraction": 0.0, "empjpe_mm": float("nan"), "falls": 2}) == "0 % · - · 2 falls"
    assert controller_cell(None) == "-"
    assert metrics_figures({"controller.falls": 0.0}) is None  # a partial set is not a controller verdict


def test_warm_start_shift_keeps_the_previous_plan_at_the_knots_new_times(squat, g1):
    from retarget.controller.mpc import SamplingPlanner

    # The next plan samples around the last (weighted) plan moved forward by the executed steps: each shifted
    # knot is the previous plan's residual at that knot's absolute time, held at its last knot past its end.
    cfg = TrackerConfig(num_samples=2)
    model, dof_q, dof_v, ref = _squat_control_reference(squat, g1, cfg)
    planner = SamplingPlanner(model, ref, dof_q, dof_v, g1.kp, cfg)
    planner.close()
    previous = np.random.default_rng(1).standard_normal(planner.nominal.shape)
    knot_steps = planner.knot_steps
    assert knot_steps[-1] == planner.horizon - 1 == 39
    for steps in (2, 4, 13):
        planner.nominal = previous.copy()
        planner.shift(steps)
        new_times = np.minimum(knot_steps + steps, knot_steps[-1])
        expected = np.stack([np.interp(new_times, knot_steps, previous[:, j]) for j in range(previous.shape[1])], 1)
        np.testing.assert_allclose(planner.nominal, expected, atol=1e-12)
        # The first knot is the previous plan's residual at the step executed next.
        np.testing.assert_allclose(planner.nominal[0], planner.residuals(previous)[steps], atol=1e-12)


def test_a_replan_is_skipped_only_where_the_prediction_held_and_at_most_cap_times(squat):
    qpos, fps, torque, _ = squat

    def run(threshold_m: float, cap: int = 1, max_cost: float = 0.0) -> TrackingRun:
        tracker = TrackerConfig(
            num_samples=6, skip_replan_error_m=threshold_m, max_skipped_replans=cap, skip_replan_max_cost=max_cost
        )
        return track_motion(qpos[:30], fps, "g1_23dof", ControllerConfig(tracker=tracker), torque[:30])

    never = run(0.0)
    assert never.skipped_replans == 0 and np.isnan(never.prediction_error_m).all()
    assert set(np.diff(never.plan_steps)) == {2}
    # Predicting without ever skipping leaves the performed motion as it is (the prediction has its own data).
    tiny = run(1e-9)
    np.testing.assert_array_equal(tiny.qpos, never.qpos)
    interval_end = tiny.prediction_error_m[np.array(tiny.plan_steps[:-1]) + 2]
    assert np.isfinite(interval_end).all() and 0.0 < np.median(interval_end) < 0.01  # sub-cm foresight

    threshold = float(np.median(interval_end))
    some = run(threshold)
    gaps = np.diff(some.plan_steps)
    held = some.prediction_error_m[np.array(some.plan_steps[:-1]) + 2] < threshold
    np.testing.assert_array_equal(gaps, np.where(held, 4, 2))  # skipped exactly where the prediction held
    assert 0 < some.skipped_replans == held.sum() < len(gaps)

    for cap in (1, 2):
        always = run(1.0, cap)  # every prediction holds: each plan runs its cap + 1 intervals
        gaps = np.diff(always.plan_steps)
        assert set(gaps) == {2 * (cap + 1)}, gaps
        assert always.plans + always.skipped_replans == -(-(always.num_steps - 1) // 2)
    # The cost condition: no plan's best cost is under 1e-9, every one is under 1e9.
    np.testing.assert_array_equal(run(1.0, 1, 1e-9).qpos, tiny.qpos)
    np.testing.assert_array_equal(run(1.0, 1, 1e9).plan_steps, run(1.0, 1).plan_steps)


def test_skip_replan_settings_must_not_be_negative():
    from retarget.errors import ConfigError

    with pytest.raises(ConfigError, match="must not be negative"):
        TrackerConfig(skip_replan_error_m=-0.001)
    with pytest.raises(ConfigError, match="must not be negative"):
        TrackerConfig(max_skipped_replans=-1)
