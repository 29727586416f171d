"""Δa and Δs fits are reproducible: the same collection file gives the same weights and the same file bytes, in one
process and in another one with another torch thread count, and rollouts in memory are what their file holds."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import asap_reference
from trajectories import frames

from trainers.delta.collect import collect_rollouts
from trainers.delta.collection import read_collection, write_collection
from trainers.delta.dynamics import DeltaDynamicsConfig, fit_delta_dynamics
from trainers.delta.learned import LearnedDelta, LearnedDeltaConfig, fit_learned_delta, fit_on_labels, transition_labels
from trainers.real.model import build_real_model
from trainers.reference import load_references
from trainers.reproducible import REPRODUCIBLE_TORCH_THREADS

REPO = Path(__file__).resolve().parents[1]
MLP = LearnedDeltaConfig(model="mlp", epochs=100)
"""The paper's MLP Δa on every joint, few Adam steps (enough for every reduction to count)."""


@pytest.fixture(scope="module")
def rollout(g1):
    """The zero policy's rollout of the real squat reference in the `combined` robot (dry friction, torque limits)."""
    refs = load_references(asap_reference("squat_level1_filter"), build_real_model("nominal"), g1)
    (traj,) = collect_rollouts(None, refs, "combined").values()
    return traj


@pytest.fixture(scope="module")
def collection(rollout, tmp_path_factory) -> Path:
    """A collection file of the rollout's first 25 frames (24 transitions), written by the trainers' own writer."""
    path = tmp_path_factory.mktemp("collection") / "collect.pkl"
    return write_collection(path, {"squat__0": frames(rollout, slice(25))})


def _state(model: LearnedDelta) -> dict[str, torch.Tensor]:
    return {**model.model.state_dict(), "mean": torch.as_tensor(model.mean), "std": torch.as_tensor(model.std)}


def _assert_equal_states(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for key, value in a.items():
        assert torch.equal(value, b[key]), key


def test_rollouts_in_memory_are_what_their_collection_file_holds(rollout, tmp_path):
    """A fit on rollouts in memory (the bench's) and a refit of their file must see the same numbers: the file
    stores float32, so the rollouts come back rounded as stored (unrounded, a kick's Δa weights moved by up to 1.7 %
    of the largest)."""
    (back,) = read_collection(write_collection(tmp_path / "c.pkl", {"squat__0": rollout})).values()
    for field in dataclasses.fields(rollout):
        mine, stored = getattr(rollout, field.name), getattr(back, field.name)
        if isinstance(mine, np.ndarray):
            assert mine.dtype == stored.dtype and np.array_equal(mine, stored), field.name
        else:
            assert mine == stored, field.name
    assert rollout.num_frames > 25 and np.array_equal(rollout.dof_pos, rollout.dof_pos.astype(np.float32))


@pytest.mark.parametrize("cfg", [LearnedDeltaConfig(), MLP], ids=["per_joint_undamped", "mlp"])
def test_fitting_twice_on_one_collection_gives_equal_weights_and_equal_files(collection, cfg, tmp_path):
    trajs = list(read_collection(collection).values())
    first, first_stats = fit_learned_delta(trajs, cfg)
    second, second_stats = fit_learned_delta(list(read_collection(collection).values()), cfg)
    _assert_equal_states(_state(first), _state(second))
    assert first_stats == second_stats and first_stats["transitions"] == 24
    # Saved twice, under other names and folders: the same bytes (the archive is not named after a temporary file).
    a, b = first.save(tmp_path / "delta.pt"), second.save(tmp_path / "other" / "renamed.pt")
    assert a.read_bytes() == b.read_bytes()
    _assert_equal_states(_state(LearnedDelta.load(b)), _state(first))


def test_the_fits_do_not_depend_on_the_callers_torch_threads(collection):
    """Adam on float32 MLPs: 4 torch threads used to end on other weights than 1 (a real kick fit, and this one)."""
    trajs = list(read_collection(collection).values())
    x, y = transition_labels(trajs, MLP)
    before = torch.get_num_threads()
    fits, dynamics = [], []
    try:
        for threads in (4, 1):
            torch.set_num_threads(threads)
            fits.append(fit_on_labels(x, y, MLP)[0])
            dynamics.append(fit_delta_dynamics(trajs, DeltaDynamicsConfig(epochs=100))[0])
            assert torch.get_num_threads() == threads  # the caller's count is given back
    finally:
        torch.set_num_threads(before)
    _assert_equal_states(_state(fits[0]), _state(fits[1]))
    _assert_equal_states(dynamics[0].model.state_dict(), dynamics[1].model.state_dict())
    assert REPRODUCIBLE_TORCH_THREADS == 1


def test_a_refit_in_another_process_with_other_threads_writes_the_same_file(collection, tmp_path):
    """`asap-retarget delta fit` in a fresh process, its torch and BLAS pools at 3 threads, against this process.
    (Torch's is set in the command: from OMP_NUM_THREADS alone it stops at the physical core count.)"""
    ours = fit_learned_delta(list(read_collection(collection).values()), MLP)[0].save(tmp_path / "here.pt")
    theirs = tmp_path / "there.pt"
    env = {**os.environ, "OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "3", "OPENBLAS_NUM_THREADS": "3"}
    code = "import sys, torch; torch.set_num_threads(3); from cli.main import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "delta", "fit"]
    cmd += [str(collection), "-o", str(theirs), "--model", "mlp", "--epochs", str(MLP.epochs)]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert theirs.read_bytes() == ours.read_bytes()
