"""The bootstrap Δa ensemble: each member is the regression on its resample's labels, environment i steps with
member i mod K, files round-trip, and the bench's ASAP-E fine-tunes against it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import asap_reference
from trajectories import frames

from retarget.batch.record import file_sha256
from retarget.rotations import quat_to_matrix
from trainers.delta.collect import collect_rollouts
from trainers.delta.ensemble import (
    DeltaEnsemble,
    bootstrap_rollouts,
    fit_delta_ensemble,
    load_delta_file,
)
from trainers.delta.learned import (
    DeltaModelError,
    LearnedDelta,
    LearnedDeltaConfig,
    fit_on_labels,
    transition_labels,
)
from trainers.delta.one_step import previous_targets
from trainers.finetune.delta_actions import load_delta_action
from trainers.real.model import build_real_model
from trainers.reference import load_references

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

CFG = LearnedDeltaConfig(joints="legs", model="per_joint_undamped", previous_target=True)


@pytest.fixture(scope="module")
def rollouts(g1):
    """Three short zero-action rollouts of the squat in the `combined` robot (first from phase 0, then random)."""
    refs = load_references(asap_reference("squat_level1_filter"), build_real_model("nominal"), g1)
    trajs = collect_rollouts(None, refs, "combined", episodes=3, seed=4)
    return [frames(t, slice(12)) for t in trajs.values()]


@pytest.fixture(scope="module")
def fitted(rollouts):
    labels = transition_labels(rollouts, CFG)
    ensemble, stats = fit_delta_ensemble(rollouts, CFG, members=4, seed=3, labels=labels)
    return labels, ensemble, stats


def batch(trajs, rows_per_traj=3):
    """A batch of states from the rollouts' frames: (target, q, qd, quat, base angular velocity, previous target)."""
    picks = [(t, i) for t in trajs for i in range(1, 1 + rows_per_traj)]
    ang_b = [quat_to_matrix(t.root_quat_w[i]).T @ t.root_ang_vel_w[i] for t, i in picks]
    return (
        np.array([t.pd_target[i] for t, i in picks]),
        np.array([t.dof_pos[i] for t, i in picks]),
        np.array([t.dof_vel[i] for t, i in picks]),
        np.array([t.root_quat_w[i] for t, i in picks]),
        np.array(ang_b),
        np.array([t.pd_target[i - 1] for t, i in picks]),
    )


def test_each_member_is_the_regression_on_its_bootstrap_resample(rollouts, fitted):
    (x, y), ensemble, stats = fitted
    resamples = bootstrap_rollouts(len(rollouts), 4, seed=3)
    assert stats["resamples"] == [r.tolist() for r in resamples] and len(ensemble.members) == 4
    per_traj = [t.num_frames - 1 for t in rollouts]
    starts = np.concatenate([[0], np.cumsum(per_traj)[:-1]])
    state = batch(rollouts)
    for member, picks in zip(ensemble.members, resamples):
        rows = np.concatenate([np.arange(starts[i], starts[i] + per_traj[i]) for i in picks])
        alone, _ = fit_on_labels(x[rows], y[rows], CFG)
        np.testing.assert_array_equal(member.delta_targets(*state), alone.delta_targets(*state))
    # Resamples that differ give members that differ (the point of the ensemble).
    assert len({tuple(sorted(r)) for r in stats["resamples"]}) > 1
    outputs = np.stack([m.delta_targets(*state) for m in ensemble.members])
    assert np.ptp(outputs, axis=0).max() > 0


def test_disagreement_is_the_members_spread_on_the_fitting_transitions(rollouts, fitted):
    """Recomputed from each member's own δ on every transition's state: RMS over transitions and the fitted joints of
    the members' standard deviation."""
    _, ensemble, stats = fitted
    spreads = []
    for traj in rollouts:
        n = traj.num_frames - 1
        ang_b = np.array([quat_to_matrix(traj.root_quat_w[i]).T @ traj.root_ang_vel_w[i] for i in range(n)])
        previous = previous_targets(traj)[:n]
        state = (traj.pd_target[:n], traj.dof_pos[:n], traj.dof_vel[:n], traj.root_quat_w[:n], ang_b, previous)
        out = np.stack([m.delta_targets(*state)[:, m.joint_ids] for m in ensemble.members])
        spreads.append(out.var(axis=0))
    expected = float(np.sqrt(np.concatenate(spreads).mean()))
    assert stats["disagreement_rms_rad"] == pytest.approx(expected, rel=1e-3)
    assert 0 < stats["disagreement_rms_rad"] < stats["label_rms_rad"]


def test_environment_i_steps_with_member_i_mod_k_and_files_round_trip(rollouts, fitted, tmp_path):
    _, ensemble, _ = fitted
    target, q, qd, quat, ang, prev = batch(rollouts)  # 9 rows, 4 members
    action = load_delta_action(ensemble.save(tmp_path / "ensemble.pt"))
    got = action(target, q, qd, quat, ang, 0.25, previous_target=prev)
    for i in range(len(target)):
        member = ensemble.members[i % 4]
        one = slice(i, i + 1)
        own = member.delta_targets(target[one], q[one], qd[one], quat[one], ang[one], prev[one])
        np.testing.assert_allclose(got[i], own[0] / 0.25, atol=1e-12)
    with pytest.raises(Exception, match="previous PD target"):
        action(target, q, qd, quat, ang, 0.25)
    # One fit still loads as one fit; a file of neither kind names itself.
    single = load_delta_file(ensemble.members[0].save(tmp_path / "one.pt"))
    assert isinstance(single, LearnedDelta) and isinstance(load_delta_file(tmp_path / "ensemble.pt"), DeltaEnsemble)
    DeltaEnsemble([]).save(tmp_path / "empty.pt")
    for bad in ("empty.pt", "junk.pt"):
        (tmp_path / "junk.pt").write_bytes(b"junk")
        with pytest.raises(DeltaModelError, match=bad):
            load_delta_file(tmp_path / bad)


def test_labels_must_match_the_rollouts(rollouts, fitted):
    (x, y), _, _ = fitted
    with pytest.raises(DeltaModelError, match="labels"):
        fit_delta_ensemble(rollouts, CFG, members=2, labels=(x[:-1], y[:-1]))
    with pytest.raises(DeltaModelError, match="at least one member"):
        fit_delta_ensemble(rollouts, CFG, members=0, labels=(x, y))


def test_bench_asap_e_fine_tunes_against_the_ensemble_of_its_fitting_rollouts(tiny_kick_policy, tmp_path):
    import bench_table4

    out = tmp_path / "e"
    summary = bench_table4.main(
        ["--policy", str(tiny_kick_policy), "--motion", str(asap_reference("kick_level2_filter"))]
        + ["--real", "combined", "--seeds", "0", "--iterations", "1", "--num-envs", "4", "--episodes", "2"]
        + ["--eval-episodes", "2", "--methods", "ASAP,ASAP-E", "--jobs", "1", "--ensemble-members", "3"]
        + ["--asap-rounds", "1", "-o", str(out)]
    )
    robot = summary["robots"]["combined"]
    assert list(robot["results"]) == ["Vanilla", "ASAP", "ASAP-E"]
    fits = robot["fits"]["ensemble"]
    assert fits["members"] == 3 and fits["transitions"] == robot["fits"]["delta"]["transitions"]
    ensemble = load_delta_file(out / "combined" / bench_table4.ENSEMBLE_FILE)
    assert isinstance(ensemble, DeltaEnsemble) and len(ensemble.members) == 3
    config = json.loads((out / "combined" / "ASAP-E_s0" / "config.json").read_text())["finetune"]
    assert config["delta_sha256"] == file_sha256(out / "combined" / bench_table4.ENSEMBLE_FILE)
    asap = json.loads((out / "combined" / "ASAP_s0" / "config.json").read_text())["finetune"]
    assert asap["delta_sha256"] == file_sha256(out / "combined" / "delta.pt") != config["delta_sha256"]
