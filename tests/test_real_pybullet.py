"""The "real" G1 played by PyBullet: same URDF, same PD law and rates, another contact model and integrator."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import asap_reference
from pd_drop import drop_states

from cli.main import main
from robots.registry import load_robot_spec
from trainers.delta.collection import read_collection
from trainers.delta.dynamics import transitions
from trainers.delta.one_step import one_step_rms
from trainers.real.bench import read_bench_log
from trainers.real.model import build_real_model
from trainers.real.profiles import UnknownProfileError, get_profile
from trainers.real.pybullet_engine import model_engine
from trainers.real.stepper import PdRobot

pytest.importorskip("pybullet")
SQUAT = asap_reference("squat_level1_filter")


def test_profile_names_choose_the_engine():
    p = get_profile("pybullet:soft_ankles")
    assert p.engine == "pybullet" and p.name == "pybullet:soft_ankles"
    assert p.kp_multiplier("left_ankle_pitch_joint") == 0.65 and p.kp_multiplier("left_knee_joint") == 1.0
    assert get_profile("pybullet").name == "pybullet:nominal" and get_profile("soft_ankles").engine == "mujoco"
    with pytest.raises(UnknownProfileError, match="pybullet:<one of them>"):
        get_profile("pybullet:stiff")
    assert model_engine(build_real_model("pybullet:soft_ankles")) == "pybullet"
    assert model_engine(build_real_model("soft_ankles")) == "mujoco"


def _drop(profile: str, g1, steps: int) -> np.ndarray:
    """Pelvis height [m] per policy step after releasing the G1 0.8 m up in the default pose under PD."""
    return drop_states(profile, g1, steps)[:, 2]


@pytest.mark.parametrize("robot", ["g1_23dof", "g1_29dof"])
def test_floating_g1_lands_like_mujoco(robot):
    g1 = load_robot_spec(robot)
    # PD alone does not balance the G1 in either engine (both tip forward after ~0.8 s); until then the
    # landing and the stance height agree to a few cm.
    mj, pb = _drop("nominal", g1, 30), _drop("pybullet", g1, 30)
    assert np.all(np.abs(pb - mj) < 0.03), np.round(pb - mj, 3)
    assert np.all(pb[5:] > 0.7) and np.max(np.abs(pb - mj)) > 1e-4  # standing, and a different contact model


def test_gantry_step_response_close_but_different(g1):
    knee = g1.joint_names.index("left_knee_joint")
    responses = []
    for profile in ("nominal", "pybullet"):
        robot = PdRobot(build_real_model(profile, fixed_base=True))
        robot.reset(np.zeros(g1.num_dof))
        target = np.zeros(g1.num_dof)
        target[knee] = 0.5
        q, _ = robot.run_targets(np.tile(target, (25, 1)))
        responses.append(q[:, knee])
    mj, pb = responses
    diff = np.abs(pb - mj)
    assert diff.max() < 0.05 and diff.max() > 1e-3, np.round(diff, 4)
    assert abs(pb[-1] - 0.5) < 0.05 and abs(mj[-1] - 0.5) < 0.05


def test_cli_collect_and_bench_log_run_against_pybullet(tmp_path):
    out = CliRunner().invoke(
        main,
        ["collect", "--motion", str(SQUAT), "--real", "pybullet:soft_ankles_delay", "-o", str(tmp_path / "col.pkl")],
    )
    assert out.exit_code == 0, out.output
    (traj,) = read_collection(tmp_path / "col.pkl").values()
    assert traj.source == "real:pybullet:soft_ankles_delay" and traj.num_frames > 20
    fd = (traj.root_pos_w[2:] - traj.root_pos_w[:-2]) * 25.0  # pelvis velocity matches its positions
    assert np.median(np.abs(fd - traj.root_lin_vel_w[1:-1])) < 0.05
    # Replayed one step at a time from the recorded states, the PyBullet robot reproduces its own rollout
    # (resets and state transfer are exact); no MuJoCo profile does, not even the one it was built from.
    pairs = transitions([traj])
    own = one_step_rms(build_real_model("pybullet:soft_ankles_delay"), pairs)
    mujoco_twin, nominal = (one_step_rms(build_real_model(p), pairs) for p in ("soft_ankles_delay", "nominal"))
    assert own < 1e-4 and mujoco_twin > 20 * max(own, 1e-5) and nominal > mujoco_twin
    out = CliRunner().invoke(
        main, ["bench-log", "--real", "pybullet", "--duration", "0.5", "-o", str(tmp_path / "log.npz")]
    )
    assert out.exit_code == 0, out.output
    log = read_bench_log(tmp_path / "log.npz")
    assert log.source == "real:pybullet:nominal" and np.isfinite(log.dof_pos).all()
    # The bench joints follow their targets (one policy step behind) to within a few degrees.
    ids = log.bench_ids
    assert np.median(np.abs(log.dof_pos[2:, ids] - log.pd_target[1:-1, ids])) < 0.1


def test_cli_sim2sim_onnx_and_eval_policy_run_against_pybullet(tmp_path):
    from test_play import CLIP, write_tiny_run

    from trainers.export import export_actor
    from trainers.policy_io import load_policy

    run = write_tiny_run(tmp_path / "run", seed=1)
    onnx_path = export_actor(load_policy(run), tmp_path / "policy.onnx")
    motion = str(asap_reference(CLIP))
    out = CliRunner().invoke(
        main,
        [
            "sim2sim",
            "--onnx",
            str(onnx_path),
            "--motion",
            motion,
            "--real",
            "pybullet",
            "--pd-hz",
            "200",
            "--max-steps",
            "10",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "Eg-mpjpe" in out.output and "PD 200 Hz" in out.output
    args = ["eval-policy", "--policy", str(run), "--motion", motion]
    in_pybullet, in_training_sim = (CliRunner().invoke(main, a) for a in (args + ["--real", "pybullet"], args))
    assert in_pybullet.exit_code == 0 and in_training_sim.exit_code == 0, in_pybullet.output
    assert "(iteration 0)" in in_pybullet.output and in_pybullet.output != in_training_sim.output
    out = CliRunner().invoke(main, ["eval-policy", "--policy", str(run), "--motion", motion, "--real", "pybullet:x"])
    assert out.exit_code == 1 and "pybullet:<one of them>" in out.output
    out = CliRunner().invoke(main, args + ["--real", "pybullet", "--domain-rand"])
    assert out.exit_code == 1 and "not available" in out.output and "Traceback" not in out.output
