"""bench/delta_sampled_damping.py: a Δa damping term sampled once per policy step destabilizes a joint at a b about
(policy step / physics step) = 4 times smaller than the same term applied at every physics step."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import delta_sampled_damping as dsd

from trainers.delta.learned import LearnedDelta, LearnedDeltaConfig
from trainers.delta.per_joint import PerJointLinear, own_columns
from trainers.real.model import build_real_model
from trainers.real.stepper import PdRobot
from trainers.sim_model import default_joint_pos


@pytest.fixture(scope="module")
def hanging():
    robot = PdRobot(build_real_model("nominal", fixed_base=True))
    pose = default_joint_pos(robot.robot)
    return robot, pose, dsd.settled_state(robot, pose)


def test_ankle_critical_damping_scales_with_the_sampling_period(hanging):
    robot, pose, state = hanging
    j = robot.robot.joint_names.index("left_ankle_pitch_joint")
    args = (1.0, 50, 10)
    assert dsd.kick_growth(robot, state, pose, j, 0.0, False, *args) < 0.1  # the nominal PD damps the kick
    sampled = dsd.critical_b(robot, state, pose, j, False, *args)
    every = dsd.critical_b(robot, state, pose, j, True, *args)
    assert -2.0 < sampled < -0.4  # measured −0.95
    assert 3.0 < every / sampled < 5.0  # measured 4.2: 20 ms / 5 ms
    assert dsd.kick_growth(robot, state, pose, j, 0.9 * sampled, False, *args) < 1.0
    assert dsd.kick_growth(robot, state, pose, j, 1.1 * sampled, False, *args) >= 1.0
    assert dsd.kick_growth(robot, state, pose, j, 1.1 * sampled, True, *args) < 1.0  # the same b, every 5 ms


def test_fitted_damping_reads_raw_coefficients(tmp_path):
    num_dof, ids = 23, np.array([4, 10])
    cols = own_columns(ids, num_dof)
    model = PerJointLinear(cols)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.0, -0.6, 0.1]]))
    std = np.ones(3 * num_dof + 6)
    std[cols[:, 1]] = [2.0, 3.0]
    cfg = LearnedDeltaConfig(joints="all", model="per_joint_physical", previous_target=True)
    path = LearnedDelta(model, ids, np.zeros_like(std), std, cfg).save(tmp_path / "d.pt")
    fitted = dsd.fitted_damping(str(path), num_dof)
    assert fitted.keys() == {4, 10}
    np.testing.assert_allclose([fitted[4], fitted[10]], [-0.1, -0.2], rtol=1e-6)
    undamped_cfg = LearnedDeltaConfig(joints="all", model="per_joint_undamped", previous_target=True)
    undamped_model = PerJointLinear(own_columns(ids, num_dof, ("stiffness", "delay")))
    undamped = LearnedDelta(undamped_model, ids, np.zeros_like(std), std, undamped_cfg)
    with pytest.raises(SystemExit, match="no damping term"):
        dsd.fitted_damping(str(undamped.save(tmp_path / "u.pt")), num_dof)
