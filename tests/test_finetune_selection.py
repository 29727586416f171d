"""Which fine-tuning checkpoint is deployed: the best candidate in the fine-tuning's own simulator."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from conftest import asap_reference

from trainers.config import TrackingEnvConfig
from trainers.finetune.finetune import finetune_policy
from trainers.finetune.selection import candidates, matched_episode_config, score_key
from trainers.finetune.selection_config import (
    DEPLOYED,
    MIN_START_NOISE_RAD,
    NO_SELECTION,
    SELECTION_FILE,
    SelectionConfig,
)
from trainers.policy_io import find_checkpoint, load_policy
from trainers.train import train_track

CLIP = "kick_level2_filter"
PICK = SelectionConfig(every=1, episodes=2)


@pytest.fixture(scope="module")
def pre(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("select")
    cfg = TrackingEnvConfig()
    cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, num_threads=1))
    train_track(asap_reference(CLIP), tmp / "pre", iterations=1, num_envs=4, env_cfg=cfg)
    return tmp


def finetune(pre, out, iterations, selection):
    return finetune_policy(
        pre / "pre", asap_reference(CLIP), out, sim="nominal", iterations=iterations, num_envs=4, num_threads=1,
        selection=selection,
    )  # fmt: skip


def test_the_deployed_checkpoint_is_the_best_candidate_and_every_loader_takes_it(pre):
    out = pre / "ft"
    result = finetune(pre, out, 3, PICK)
    record = json.loads((out / SELECTION_FILE).read_text())
    assert result.selection == record
    rows = record["candidates"]
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4]  # the pre-trained checkpoint and each fine-tuning one
    assert rows[0]["checkpoint"] == str(pre / "pre" / "model_last.pt")
    best = max(rows, key=score_key)
    assert record["chosen_iteration"] == best["iteration"]
    assert all(0.0 < r["completion"] <= 1.0 and r["eg_mpjpe_mm"] > 0.0 for r in rows)
    chosen = dict(candidates(out, pre / "pre" / "model_last.pt", 1))[best["iteration"]]
    assert (out / DEPLOYED).read_bytes() == chosen.read_bytes()
    assert find_checkpoint(out) == out / DEPLOYED
    assert load_policy(out).iteration == best["iteration"]
    # Resuming with the same budget keeps the selection; a larger budget chooses again among more candidates.
    again = finetune(pre, out, 3, PICK)
    assert again.rows == [] and again.selection == record
    more = finetune(pre, out, 4, PICK)
    assert [r["iteration"] for r in more.selection["candidates"]] == [1, 2, 3, 4, 5]
    assert more.selection["candidates"][:4] == rows  # the same matched episodes for every candidate
    # Without selection the last checkpoint is deployed, and no stale choice is left behind.
    plain = finetune(pre, out, 4, NO_SELECTION)
    assert plain.selection is None and not (out / DEPLOYED).exists() and not (out / SELECTION_FILE).exists()
    assert load_policy(out).iteration == 5


def test_candidates_are_the_base_the_numbered_checkpoints_past_it_and_an_unnumbered_last(tmp_path):
    base = tmp_path / "base.pt"
    for name, it in [("model_40.pt", 40), ("model_60.pt", 60), ("model_50.pt", 50), ("model_last.pt", 65)]:
        torch.save({"iteration": it}, tmp_path / name)
    found = candidates(tmp_path, base, 50)
    assert found == [(50, base), (60, tmp_path / "model_60.pt"), (65, tmp_path / "model_last.pt")]
    torch.save({"iteration": 60}, tmp_path / "model_last.pt")  # the last is also numbered: listed once
    assert [it for it, _ in candidates(tmp_path, base, 50)] == [50, 60]


def test_score_prefers_completion_then_lower_eg_mpjpe():
    rows = [
        {"completion": 0.9, "eg_mpjpe_mm": 50.0},
        {"completion": 1.0, "eg_mpjpe_mm": 90.0},
        {"completion": 1.0, "eg_mpjpe_mm": 80.0},
    ]
    assert max(rows, key=score_key) == rows[2]


def test_matched_episodes_differ_by_physics_where_randomized_else_by_start_pose():
    cfg = TrackingEnvConfig()
    assert cfg.domain_rand.enabled
    randomized = matched_episode_config(cfg, 8)
    assert randomized.domain_rand.enabled and randomized.init_dof_noise_rad == 0.0 and not randomized.random_start
    assert randomized.domain_rand.push_interval_s == 0.0
    fixed = matched_episode_config(
        dataclasses.replace(cfg, domain_rand=dataclasses.replace(cfg.domain_rand, enabled=False)), 8
    )
    assert not fixed.domain_rand.enabled and fixed.init_dof_noise_rad >= MIN_START_NOISE_RAD
    one = matched_episode_config(cfg, 1)
    assert not one.domain_rand.enabled and one.init_dof_noise_rad == 0.0
