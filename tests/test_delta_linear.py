"""The bench log and the linear δ fit: log round trip and checks, recovery of known coefficients, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cli.main import main
from retarget.errors import MotionFileError
from trainers.delta.linear_fit import BenchReplay, LinearDelta, fit_linear_delta
from trainers.real.bench import BENCH_JOINTS, BenchLog, bench_targets, read_bench_log, record_bench_log, write_bench_log
from trainers.real.model import build_real_model
from trainers.real.stepper import PdRobot


def test_bench_targets_stay_inside_the_limits(g1):
    targets = bench_targets(g1.joint_names)
    assert targets.shape == (201, g1.num_dof)
    ids = [g1.joint_names.index(j) for j in BENCH_JOINTS]
    others = np.setdiff1d(np.arange(g1.num_dof), ids)
    assert np.all(targets[:, others] == 0.0)
    margin = 0.1
    assert np.all(targets[:, ids] > g1.lower_rad[ids] + margin) and np.all(targets[:, ids] < g1.upper_rad[ids] - margin)


def test_bench_log_round_trip(tmp_path):
    log = record_bench_log("soft_ankles", duration_s=0.5)
    path = write_bench_log(tmp_path / "log.npz", log)
    back = read_bench_log(path)
    assert back.joint_names == log.joint_names and back.bench_joints == BENCH_JOINTS
    assert back.fps == 50.0 and back.source == "real:soft_ankles"
    for key in ("time_s", "dof_pos", "dof_vel", "pd_target"):
        np.testing.assert_array_equal(getattr(back, key), getattr(log, key))
    assert not list(tmp_path.glob(".*tmp"))


def test_bad_bench_logs_name_the_file_and_problem(tmp_path):
    log = record_bench_log("nominal", duration_s=0.2)
    path = tmp_path / "short.npz"
    np.savez(
        path,
        time_s=log.time_s,
        fps=50.0,
        joint_names=np.array(log.joint_names),
        bench_joints=np.array(["left_knee_joint"]),
        dof_pos=log.dof_pos[:, :3],
        dof_vel=log.dof_vel,
        pd_target=log.pd_target,
    )
    with pytest.raises(MotionFileError, match=r"short\.npz.*'dof_pos' has shape"):
        read_bench_log(path)
    np.savez(path, time_s=log.time_s)
    with pytest.raises(MotionFileError, match="missing keys"):
        read_bench_log(path)
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(MotionFileError, match="junk.npz"):
        read_bench_log(tmp_path / "junk.npz")


def test_fit_recovers_known_coefficients_from_a_synthetic_log(g1):
    """ "Real" = the nominal gantry G1 with a known linear δ; the fit must find that δ again."""
    truth = LinearDelta(BENCH_JOINTS, np.array([-0.3, -0.15, -0.2, -0.35]), np.array([-0.01, -0.02, -0.005, -0.015]))
    robot = PdRobot(build_real_model("nominal", fixed_base=True))
    targets = bench_targets(g1.joint_names, duration_s=2.0)
    robot.reset(targets[0])
    q, qd = robot.run_targets(targets[:-1], truth.correction(g1.joint_names))
    log = BenchLog(np.arange(len(targets)) / 50.0, 50.0, g1.joint_names, BENCH_JOINTS, q, qd, targets, "synthetic")
    result = fit_linear_delta(log)
    np.testing.assert_allclose(result.delta.a, truth.a, atol=0.01)
    np.testing.assert_allclose(result.delta.b, truth.b, atol=0.002)
    assert result.rms_after_deg < 0.01 < result.rms_before_deg
    assert BenchReplay(log).rms_deg(truth) < 1e-9  # the replay is the generator itself


def test_cli_bench_log_and_fit_linear(tmp_path):
    runner = CliRunner()
    log_path, fit_path = tmp_path / "log.npz", tmp_path / "fit.json"
    out = runner.invoke(main, ["bench-log", "--real", "soft_ankles_delay", "-o", str(log_path)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(main, ["delta", "fit-linear", str(log_path), "-o", str(fit_path)])
    assert out.exit_code == 0, out.output
    assert "sim × real tracking error: before" in out.output
    fit = json.loads(fit_path.read_text())
    # The target: at least halved on the soft-ankle + delay profile (measured 2.76° → 1.13°).
    assert fit["rms_after_deg"] <= 0.5 * fit["rms_before_deg"]
    assert all(a < 0 for a in fit["a"])  # soft and delayed joints: the sim must be made to track worse
    out = runner.invoke(main, ["delta", "fit-linear", str(tmp_path / "missing.npz")])
    assert out.exit_code == 1 and "missing.npz" in out.output
