"""bench/delta_ablate.py: a per-joint Δa minus one term gives the fitted δ minus exactly that term."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import delta_ablate

from trainers.delta.learned import LearnedDelta, LearnedDeltaConfig
from trainers.delta.per_joint import PerJointLinear, own_columns


def _delta(rng) -> LearnedDelta:
    num_dof, ids = 4, np.array([0, 2, 3])
    cols = own_columns(ids, num_dof)
    num_features = 3 * num_dof + 6
    model = PerJointLinear(cols)
    with torch.no_grad():
        model.weight.copy_(torch.as_tensor(rng.normal(size=cols.shape), dtype=torch.float32))
        model.bias.copy_(torch.as_tensor(rng.normal(size=len(ids)), dtype=torch.float32))
    cfg = LearnedDeltaConfig(joints="all", model="per_joint_physical", previous_target=True)
    return LearnedDelta(model, ids, rng.normal(size=num_features), rng.uniform(0.5, 2.0, num_features), cfg)


def _predict(delta: LearnedDelta, x_raw: np.ndarray) -> np.ndarray:
    x = torch.as_tensor((x_raw - delta.mean) / delta.std, dtype=torch.float32)
    return delta.model(x).detach().numpy().astype(float)


@pytest.mark.parametrize("term", delta_ablate.TERMS)
def test_dropping_a_term_removes_exactly_its_contribution(term, tmp_path):
    rng = np.random.default_rng(3)
    delta = _delta(rng)
    x_raw = rng.normal(size=(50, len(delta.mean)))
    out = tmp_path / "ablated.pt"
    assert delta_ablate.main([str(delta.save(tmp_path / "delta.pt")), "--drop", term, "-o", str(out)]) == 0
    ablated = LearnedDelta.load(out)
    cols = delta.model.columns.numpy()
    k = delta_ablate.TERMS.index(term)
    raw_coef = delta.model.weight.detach().numpy()[:, k] / delta.std[cols[:, k]]
    expected = _predict(delta, x_raw) - x_raw[:, cols[:, k]] * raw_coef
    np.testing.assert_allclose(_predict(ablated, x_raw), expected, atol=1e-4)
    assert np.all(ablated.model.weight.detach().numpy()[:, k] == 0.0)
    # Every other term's raw coefficient is the fitted one.
    others = [c for c in range(cols.shape[1]) if c != k]
    np.testing.assert_allclose(
        ablated.model.weight.detach().numpy()[:, others], delta.model.weight.detach().numpy()[:, others], rtol=1e-6
    )


def test_refuses_an_unknown_term_an_mlp_and_overwriting_its_input(tmp_path):
    rng = np.random.default_rng(0)
    delta = _delta(rng)
    path = delta.save(tmp_path / "delta.pt")
    with pytest.raises(ValueError, match="unknown terms"):
        delta_ablate.drop_terms(delta, ("friction",))
    mlp = LearnedDelta(delta.model, delta.joint_ids, delta.mean, delta.std, LearnedDeltaConfig(model="mlp"))
    with pytest.raises(ValueError, match="per-joint"):
        delta_ablate.drop_terms(mlp, ("damping",))
    before = path.read_bytes()
    with pytest.raises(SystemExit, match="overwrite"):
        delta_ablate.main([str(path), "--drop", "damping", "-o", str(path)])
    assert path.read_bytes() == before


def test_refuses_a_term_the_model_does_not_fit(tmp_path):
    rng = np.random.default_rng(1)
    num_dof, ids = 4, np.array([0, 2, 3])
    cols = own_columns(ids, num_dof, ("stiffness", "delay"))
    model = PerJointLinear(cols)
    cfg = LearnedDeltaConfig(joints="all", model="per_joint_undamped", previous_target=True)
    num_features = 3 * num_dof + 6
    undamped = LearnedDelta(model, ids, rng.normal(size=num_features), np.ones(num_features), cfg)
    with pytest.raises(ValueError, match="no damping term"):
        delta_ablate.drop_terms(undamped, ("damping",))
    path = undamped.save(tmp_path / "undamped.pt")
    with pytest.raises(SystemExit, match="undamped.pt: .*no damping term"):
        delta_ablate.main([str(path), "--drop", "damping", "-o", str(tmp_path / "x.pt")])
    assert not (tmp_path / "x.pt").exists()
    # Dropping the delay it does fit works on the same model (its delay column is its second).
    assert np.all(delta_ablate.drop_terms(undamped, ("delay",)).model.weight.detach().numpy()[:, 1] == 0.0)
    no_prev_cols = own_columns(ids, num_dof, ("stiffness", "damping"))
    no_prev_cfg = LearnedDeltaConfig(joints="all", model="per_joint_physical", previous_target=False)
    no_prev = LearnedDelta(
        PerJointLinear(no_prev_cols), ids, np.zeros(2 * num_dof + 6), np.ones(2 * num_dof + 6), no_prev_cfg
    )
    with pytest.raises(ValueError, match="no delay term"):
        delta_ablate.drop_terms(no_prev, ("delay",))
