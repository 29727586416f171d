"""The per-joint linear Δa: closed-form fit, physical coefficients on soft-ankle and delayed robots, file round trip."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference
from trajectories import frames as first_frames

from cli.main import main
from retarget.rotations import quat_to_matrix
from trainers.delta.collect import collect_rollouts
from trainers.delta.collection import write_collection
from trainers.delta.defaults import PER_JOINT_TERMS, TERMS
from trainers.delta.learned import DeltaModelError, LearnedDelta, LearnedDeltaConfig, fit_learned_delta, joint_ids
from trainers.delta.one_step import previous_targets
from trainers.delta.per_joint import TERM_BOUNDS, column_terms, fit_per_joint_ridge, normalized_bounds, own_columns
from trainers.finetune.delta_actions import LearnedDeltaAction
from trainers.real.model import build_real_model
from trainers.reference import load_references


def _wiggle(obs: torch.Tensor) -> torch.Tensor:
    """Actions of ±0.1 swinging with the clip phase (the last entry of the newest 76-wide actor frame), a
    different phase per joint: PD targets that change every step, as a tracking policy's do."""
    offsets = torch.linspace(0.0, 2 * np.pi, 23)
    return 0.1 * torch.sin(2 * np.pi * 20 * obs[:, 75:76] + offsets)


def _rollout(g1, profile: str, frames: int, policy=None):
    refs = load_references(asap_reference("squat_level1_filter"), build_real_model("nominal"), g1)
    (traj,) = collect_rollouts(policy, refs, profile).values()
    return first_frames(traj, slice(frames))


def _physical_coefficients(model: LearnedDelta) -> np.ndarray:
    """(J, C) coefficients on the raw features (the fit works on normalized ones)."""
    cols = model.model.columns.numpy()
    return model.model.weight.detach().numpy() / model.std[cols]


def test_ridge_recovers_known_coefficients_and_ignores_other_joints():
    rng = np.random.default_rng(0)
    num_dof, ids = 5, np.array([1, 3])
    cols = own_columns(ids, num_dof)
    np.testing.assert_array_equal(cols, [[1, 6, 17], [3, 8, 19]])  # layout [e (5), q̇ (5), ω (3), g (3), prev (5)]
    x = rng.normal(size=(300, 3 * num_dof + 6))
    true_w, true_b = np.array([[2.0, -0.5, 1.0], [-0.3, 0.0, 0.7]]), np.array([0.1, -0.2])
    y = np.stack([x[:, cols[k]] @ true_w[k] + true_b[k] for k in range(2)], axis=1)
    model = fit_per_joint_ridge(x, y, cols, ridge=1e-9)
    np.testing.assert_allclose(model.weight.detach().numpy(), true_w, atol=1e-5)
    np.testing.assert_allclose(model.bias.detach().numpy(), true_b, atol=1e-5)
    x[:, [0, 2, 4, 5, 7, 10, 11, 12, 13, 14, 15, 16, 18, 20]] += 100.0  # other joints' and base columns
    np.testing.assert_allclose(model(torch.as_tensor(x, dtype=torch.float32)).detach().numpy(), y, atol=1e-3)


def test_bounded_fit_is_the_ridge_inside_the_box_and_the_best_point_of_the_box_outside():
    """Joint 0's true coefficients lie inside the physical box: the bounded fit equals the closed-form ridge. Joint
    1's (anti-damping b = +0.5, an anticipating c = −1.3) do not: the bounded fit sits on those bounds, and no
    other point of the box fits its labels better."""
    rng = np.random.default_rng(1)
    num_dof, ids = 3, np.array([0, 2])
    cols = own_columns(ids, num_dof)
    x = rng.normal(size=(400, 3 * num_dof + 6))
    true_w, true_b = np.array([[-0.3, -0.2, 0.6], [-0.4, 0.5, -1.3]]), np.array([0.05, -0.1])
    y = np.stack([x[:, cols[k]] @ true_w[k] + true_b[k] for k in range(2)], axis=1)
    y += 0.01 * rng.normal(size=y.shape)
    box = normalized_bounds(cols, np.ones(x.shape[1]), num_dof)  # unit std: the box is TERM_BOUNDS itself
    assert box.shape == (2, 3, 2) and np.array_equal(box[1], np.array([TERM_BOUNDS[t] for t in TERMS]))
    free = fit_per_joint_ridge(x, y, cols, ridge=1.0)
    bounded = fit_per_joint_ridge(x, y, cols, ridge=1.0, bounds=box)
    w_free, w = free.weight.detach().numpy(), bounded.weight.detach().numpy()
    np.testing.assert_allclose(w[0], w_free[0], atol=1e-6)
    np.testing.assert_allclose(bounded.bias.detach().numpy()[0], free.bias.detach().numpy()[0], atol=1e-6)
    assert w[1, 1] == 0.0 and w[1, 2] == 0.0 and -1.0 <= w[1, 0] <= 1.0  # on the damping and delay bounds

    def objective(coef: np.ndarray, bias: float) -> float:
        return float(((x[:, cols[1]] @ coef + bias - y[:, 1]) ** 2).sum() + (coef**2).sum())

    best = objective(w[1], float(bounded.bias.detach().numpy()[1]))
    assert best > objective(w_free[1], float(free.bias.detach().numpy()[1]))  # the box costs fit
    for _ in range(200):  # feasible neighbours never beat it (the bias is free)
        coef = np.clip(w[1] + rng.normal(scale=0.05, size=3), box[1, :, 0], box[1, :, 1])
        assert objective(coef, float(bounded.bias.detach().numpy()[1]) + rng.normal(scale=0.01)) >= best - 1e-9


def test_columns_per_term_and_back():
    num_dof, ids = 5, np.array([1, 3])
    undamped = own_columns(ids, num_dof, PER_JOINT_TERMS["per_joint_undamped"])
    np.testing.assert_array_equal(undamped, [[1, 17], [3, 19]])  # q* − q and q*_{t−1} − q*_t: no 0.05·q̇ column
    assert column_terms(undamped, num_dof) == ("stiffness", "delay")
    assert column_terms(own_columns(ids, num_dof), num_dof) == TERMS
    assert column_terms(own_columns(ids, num_dof, ("stiffness", "damping")), num_dof) == ("stiffness", "damping")
    with pytest.raises(ValueError, match="unknown per-joint terms"):
        own_columns(ids, num_dof, ("stiffness", "friction"))
    # The box of each column is its term's, whatever the column's position.
    scale = np.arange(1.0, 3 * num_dof + 7)
    box = normalized_bounds(undamped, scale, num_dof)
    np.testing.assert_array_equal(box[1, 1], np.array(TERM_BOUNDS["delay"]) * scale[19])
    np.testing.assert_array_equal(box[0, 0], np.array(TERM_BOUNDS["stiffness"]) * scale[1])


def test_fit_recovers_the_soft_ankle_stiffness_ratio(g1):
    """Ankle Kp × 0.65 ⇒ δ = (0.65 − 1)(q* − q): the fitted tracking-error coefficient is ≈ −0.35."""
    traj = _rollout(g1, "soft_ankles", 60)
    model, stats = fit_learned_delta([traj], LearnedDeltaConfig(joints="ankles", model="per_joint_linear"))
    assert stats["transitions"] == traj.num_frames - 1
    a = _physical_coefficients(model)[:, 0]
    np.testing.assert_allclose(a, -0.35, atol=0.08)  # measured −0.33 … −0.36 (a policy-rate δ held 4 physics steps)


@pytest.mark.parametrize("kind", list(PER_JOINT_TERMS))
def test_fit_recovers_a_one_policy_step_delay(g1, kind):
    """A 20 ms delay runs q*_{t−1} for the whole step ⇒ δ = q*_{t−1} − q*_t: coefficient 1 on the target change
    and none on the tracking error, on the joints whose one-step response identifies it (arms and waist; a
    stance leg's labels are dominated by the contacts). The bounded kinds find the same inside their box, the
    undamped one without a velocity term."""
    traj = _rollout(g1, "delay", 60, policy=_wiggle)
    model, _ = fit_learned_delta([traj], LearnedDeltaConfig(joints="all", model=kind, previous_target=True))
    terms = column_terms(model.model.columns.numpy(), len(g1.joint_names))
    assert terms == PER_JOINT_TERMS[kind]
    coef = _physical_coefficients(model)
    if kind != "per_joint_linear":
        for c, term in enumerate(terms):  # on 0.05·q̇ the raw coefficient has the same sign as the damping's
            low, high = TERM_BOUNDS[term]
            assert np.all(coef[:, c] >= low - 1e-6) and np.all(coef[:, c] <= high + 1e-6)
    stiffness, delay = terms.index("stiffness"), terms.index("delay")
    upper = [
        k
        for k, j in enumerate(model.joint_ids)
        if g1.joint_names[j].startswith(("waist", "left_s", "left_e", "right_s", "right_e"))
    ]
    assert len(upper) == 11
    np.testing.assert_allclose(coef[upper, delay], 1.0, atol=0.15)  # measured 0.89–0.98
    np.testing.assert_allclose(coef[upper, stiffness], 0.0, atol=0.08)  # measured |a| ≤ 0.04


def test_round_trip_and_batched_action_match(g1, tmp_path):
    traj = _rollout(g1, "soft_ankles", 20)
    cfg = LearnedDeltaConfig(joints="ankles", model="per_joint_linear", previous_target=True)
    model, _ = fit_learned_delta([traj], cfg)
    back = LearnedDelta.load(model.save(tmp_path / "pj.pt"))
    assert back.cfg.model == "per_joint_linear"
    prev = previous_targets(traj)
    args = (traj.pd_target[7], traj.dof_pos[7], traj.dof_vel[7], traj.root_quat_w[7], traj.root_ang_vel_w[7], prev[7])
    single = back.delta_target(*args)
    np.testing.assert_array_equal(single, model.delta_target(*args))
    assert set(np.flatnonzero(single)) <= set(joint_ids("ankles", g1.joint_names))
    # The batched action the fine-tuning env applies equals the single-state δ / action_scale.
    rot_t = quat_to_matrix(traj.root_quat_w[7]).T
    batched = LearnedDeltaAction(back)(
        traj.pd_target[7][None],
        traj.dof_pos[7][None],
        traj.dof_vel[7][None],
        traj.root_quat_w[7][None],
        (rot_t @ traj.root_ang_vel_w[7])[None],
        0.25,
        prev[7][None],
    )
    np.testing.assert_allclose(batched[0], single / 0.25, rtol=1e-5, atol=1e-6)


def test_unknown_model_kind_is_refused(g1):
    traj = _rollout(g1, "soft_ankles", 5)
    with pytest.raises(DeltaModelError, match="unknown delta model 'cubic'"):
        fit_learned_delta([traj], LearnedDeltaConfig(model="cubic"))


def test_delta_fit_command_writes_the_bounded_per_joint_model_with_damping_on_request(g1, tmp_path):
    coll = tmp_path / "collect.pkl"
    write_collection(coll, {"squat__0": _rollout(g1, "soft_ankles", 15)})
    args = ["delta", "fit", str(coll), "-o", str(tmp_path / "d.pt"), "--joints", "ankles"]
    out = CliRunner().invoke(main, [*args, "--model", "per_joint_physical"])
    assert out.exit_code == 0, out.output
    assert "per_joint_physical fit RMS" in out.output
    loaded = LearnedDelta.load(tmp_path / "d.pt")
    assert loaded.cfg.model == "per_joint_physical" and loaded.cfg.previous_target
    assert loaded.model.columns.shape == (4, 3)
    coef = _physical_coefficients(loaded)
    assert coef[:, 0].min() >= -1.0 - 1e-6 and coef[:, 1].max() <= 1e-9 and 0.0 <= coef[:, 2].min() + 1e-9


def test_delta_fit_writes_the_unbounded_model_on_request(g1, tmp_path):
    coll = tmp_path / "collect.pkl"
    write_collection(coll, {"squat__0": _rollout(g1, "soft_ankles", 15)})
    args = ["delta", "fit", str(coll), "-o", str(tmp_path / "d.pt"), "--joints", "ankles"]
    out = CliRunner().invoke(main, [*args, "--model", "per_joint_linear"])
    assert out.exit_code == 0, out.output
    assert "per_joint_linear fit RMS" in out.output
    loaded = LearnedDelta.load(tmp_path / "d.pt")
    assert loaded.cfg.model == "per_joint_linear" and loaded.model.columns.shape == (4, 3)


def test_delta_fit_writes_the_undamped_model_by_default_and_it_round_trips(g1, tmp_path):
    coll = tmp_path / "collect.pkl"
    traj = _rollout(g1, "soft_ankles", 15)
    write_collection(coll, {"squat__0": traj})
    out = CliRunner().invoke(main, ["delta", "fit", str(coll), "-o", str(tmp_path / "d.pt"), "--joints", "ankles"])
    assert out.exit_code == 0, out.output
    assert "per_joint_undamped fit RMS" in out.output
    loaded = LearnedDelta.load(tmp_path / "d.pt")
    assert loaded.cfg.model == "per_joint_undamped" and loaded.model.columns.shape == (4, 2)
    assert column_terms(loaded.model.columns.numpy(), len(g1.joint_names)) == ("stiffness", "delay")
    coef = _physical_coefficients(loaded)
    assert coef[:, 0].min() >= -1.0 - 1e-6 and 0.0 <= coef[:, 1].min() + 1e-9
    # δ does not move with the joint velocity: the model reads no q̇.
    prev = previous_targets(traj)
    args_t = [traj.pd_target[5], traj.dof_pos[5], traj.dof_vel[5], traj.root_quat_w[5], traj.root_ang_vel_w[5], prev[5]]
    faster = list(args_t)
    faster[2] = args_t[2] + 3.0
    np.testing.assert_array_equal(loaded.delta_target(*args_t), loaded.delta_target(*faster))


def test_delta_fit_pools_several_collections(g1, tmp_path):
    first, second = tmp_path / "squat.pkl", tmp_path / "other.pkl"
    write_collection(first, {"squat__0": _rollout(g1, "soft_ankles", 15)})
    write_collection(second, {"squat__0": _rollout(g1, "soft_ankles", 12)})  # same key in another file: both kept
    args = ["delta", "fit", str(first), str(second), "--joints", "ankles", "-o"]
    out = CliRunner().invoke(main, [*args, str(tmp_path / "both.pt")])
    assert out.exit_code == 0, out.output
    assert "25 transitions" in out.output  # 14 + 11: a rollout's last frame has no transition
    alone = CliRunner().invoke(main, ["delta", "fit", str(first), "--joints", "ankles", "-o", str(tmp_path / "a.pt")])
    assert "14 transitions" in alone.output
    missing = CliRunner().invoke(
        main, ["delta", "fit", str(first), str(tmp_path / "nope.pkl"), "-o", str(tmp_path / "x.pt")]
    )
    assert missing.exit_code == 1 and "nope.pkl" in missing.output and "Traceback" not in missing.output
    assert not (tmp_path / "x.pt").exists()
