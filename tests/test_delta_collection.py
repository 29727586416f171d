"""The collection file (ASAP layout + `action` + stage-2 state): round trip, robot-log conversion, `collect`."""

from __future__ import annotations

import dataclasses

import joblib
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import asap_reference
from trajectories import frames

from cli.main import main
from retarget.asap_pkl import read_motion_library, structural_problems
from retarget.errors import MotionFileError
from trainers.delta.collection import Trajectory, read_collection, write_collection
from trainers.delta.robot_log import read_robot_log, write_robot_log

SQUAT = asap_reference("squat_level1_filter")


def _trajectory(g1, num: int = 20, seed: int = 0) -> Trajectory:
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(num, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat[quat[:, 0] < 0] *= -1
    d = g1.num_dof
    return Trajectory(
        motion_id="squat",
        fps=50.0,
        root_pos_w=rng.normal(size=(num, 3)),
        root_quat_w=quat,
        root_lin_vel_w=rng.normal(size=(num, 3)),
        root_ang_vel_w=rng.normal(size=(num, 3)),
        dof_pos=rng.uniform(-0.5, 0.5, (num, d)),
        dof_vel=rng.normal(size=(num, d)),
        action=rng.normal(size=(num, d)),
        pd_target=rng.normal(size=(num, d)),
        phase=np.linspace(0, 1, num),
        action_scale=0.25,
        source="real:test",
    )


def _assert_same(a: Trajectory, b: Trajectory) -> None:
    for key in ("root_pos_w", "root_lin_vel_w", "root_ang_vel_w", "dof_pos", "dof_vel", "action", "pd_target", "phase"):
        np.testing.assert_allclose(getattr(a, key), getattr(b, key), atol=1e-6, err_msg=key)  # float32 storage
    dot = np.abs(np.sum(a.root_quat_w * b.root_quat_w, axis=1))
    np.testing.assert_allclose(dot, 1.0, atol=1e-9)
    assert (a.motion_id, a.fps, a.action_scale, a.source) == (b.motion_id, b.fps, b.action_scale, b.source)


def test_frames_helper_cuts_every_per_frame_field_and_keeps_the_scalars(g1):
    traj = _trajectory(g1, num=10)
    cut = frames(traj, slice(2, 5))
    per_frame = [f.name for f in dataclasses.fields(Trajectory) if np.shape(getattr(traj, f.name))[:1] == (10,)]
    assert len(per_frame) == 9 and cut.num_frames == 3
    for name in per_frame:
        np.testing.assert_array_equal(getattr(cut, name), getattr(traj, name)[2:5], err_msg=name)
    scalars = ("motion_id", "fps", "action_scale", "source")
    assert [getattr(cut, k) for k in scalars] == [getattr(traj, k) for k in scalars]


def test_collection_round_trip_and_asap_layout(tmp_path, g1):
    trajs = {"squat__0": _trajectory(g1), "squat__1": _trajectory(g1, 7, seed=1)}
    path = write_collection(tmp_path / "col.pkl", trajs, g1)
    back = read_collection(path)
    assert list(back) == list(trajs)
    for key, traj in trajs.items():
        _assert_same(traj, back[key])
    library = read_motion_library(path)  # a valid ASAP motion library, with the `action` key
    assert structural_problems(library["squat__0"]) == []
    assert library["squat__0"]["action"].shape == (20, g1.num_dof) and library["squat__0"]["fps"] == 50
    assert not list(tmp_path.glob(".*tmp"))


def test_a_plain_motion_library_is_not_a_collection(tmp_path):
    with pytest.raises(MotionFileError, match="missing keys.*action"):
        read_collection(SQUAT)
    bad = read_motion_library(SQUAT)
    clip = next(iter(bad.values()))
    num, d = clip["dof"].shape
    clip.update(
        action=np.zeros((num, d + 1)),
        pd_target=np.zeros((num, d)),
        dof_vel=np.zeros((num, d)),
        root_lin_vel=np.zeros((num, 3)),
        root_ang_vel=np.zeros((num, 3)),
        phase=np.zeros(num),
        motion_id="x",
        action_scale=0.25,
        source="",
    )
    joblib.dump(bad, tmp_path / "bad.pkl")
    with pytest.raises(MotionFileError, match=r"bad\.pkl.*'action' must have shape"):
        read_collection(tmp_path / "bad.pkl")


def test_robot_log_converts_with_joints_reordered(tmp_path, g1):
    traj = _trajectory(g1)
    order = np.random.default_rng(3).permutation(g1.num_dof)
    names = tuple(g1.joint_names[i] for i in order)
    shuffled = Trajectory(
        **{**traj.__dict__, **{k: getattr(traj, k)[:, order] for k in ("dof_pos", "dof_vel", "action", "pd_target")}}
    )
    log = write_robot_log(tmp_path / "robot.npz", shuffled, names, np.arange(20) / 50.0)
    _assert_same(read_robot_log(log, g1), traj)
    out = CliRunner().invoke(main, ["collect", "--from-log", str(log), "-o", str(tmp_path / "col.pkl")])
    assert out.exit_code == 0, out.output
    _assert_same(read_collection(tmp_path / "col.pkl")["squat__0"], traj)
    np.savez(tmp_path / "partial.npz", time_s=np.arange(3.0))
    with pytest.raises(MotionFileError, match=r"partial\.npz.*missing keys"):
        read_robot_log(tmp_path / "partial.npz", g1)


def test_collect_zero_action_rollout_in_a_real_profile(tmp_path, g1):
    out = CliRunner().invoke(
        main, ["collect", "--motion", str(SQUAT), "--real", "soft_ankles_delay", "-o", str(tmp_path / "col.pkl")]
    )
    assert out.exit_code == 0, out.output
    ((key, traj),) = read_collection(tmp_path / "col.pkl").items()
    assert traj.source == "real:soft_ankles_delay" and traj.fps == 50.0 and key.endswith("__0")
    assert traj.num_frames > 20 and traj.phase[0] == 0.0 and np.all(np.diff(traj.phase) > 0)
    # Zero action with the reference-pose offset: the PD target is the reference pose at the step's end.
    ref = next(iter(read_motion_library(SQUAT).values()))
    np.testing.assert_allclose(traj.action, 0.0)
    np.testing.assert_allclose(traj.pd_target[0], ref["dof"][0], atol=0.05)
    # The pelvis velocity is consistent with its positions (central difference, 50 Hz).
    fd = (traj.root_pos_w[2:] - traj.root_pos_w[:-2]) * 25.0
    assert np.median(np.abs(fd - traj.root_lin_vel_w[1:-1])) < 0.05
    out = CliRunner().invoke(main, ["collect", "-o", str(tmp_path / "x.pkl")])
    assert out.exit_code == 1 and "--motion" in out.output
