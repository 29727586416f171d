"""Fine-tuning continues with the pre-trained run's rewards, or refuses to start."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import asap_reference

from retarget.errors import ConfigError
from trainers import rewards
from trainers.config import (
    PenaltyTerm,
    RewardConfig,
    TrackingEnvConfig,
    TrackingTerm,
    env_config_from_jsonable,
    to_jsonable,
)
from trainers.finetune.finetune import finetune_policy
from trainers.train import train_track

CLIP = "squat_level1_filter"

# Deliberately unlike the defaults: two tracking terms with other weights and σ, one penalty off the curriculum.
CUSTOM = RewardConfig(
    tracking=(TrackingTerm(rewards.joint_pos_error, 2.5, 0.7), TrackingTerm(rewards.feet_pos_error, 0.3, 0.05)),
    penalties=(PenaltyTerm(rewards.action_rate, -0.05, curriculum=False),),
    scale_by_dt=False,
)


def test_saved_config_round_trips_with_its_reward_terms():
    cfg = dataclasses.replace(TrackingEnvConfig(), reward=CUSTOM, random_start_max_phase=0.5)
    back = env_config_from_jsonable(json.loads(json.dumps(to_jsonable(cfg))))
    assert back == cfg  # functions compare by identity: each term holds the very function it was saved with
    assert back.reward != RewardConfig()


def test_an_unknown_reward_function_fails_loudly_unless_only_evaluating():
    saved = to_jsonable(dataclasses.replace(TrackingEnvConfig(), reward=CUSTOM))
    saved["reward"]["tracking"][0]["fn"] = "my_lab.rewards.secret_term"
    with pytest.raises(ConfigError, match=r"run/config.json: reward function 'my_lab.rewards.secret_term'"):
        env_config_from_jsonable(saved, "run/config.json")
    assert env_config_from_jsonable(saved, rewards_required=False).reward == RewardConfig()

    def secret_term(s):  # a user's own term, passed in explicitly
        return rewards.joint_pos_error(s)

    saved["reward"]["tracking"][0]["fn"] = to_jsonable(secret_term)
    assert env_config_from_jsonable(saved, reward_fns=(secret_term,)).reward.tracking[0].fn is secret_term
    del saved["reward"]
    with pytest.raises(ConfigError, match="no reward record"):
        env_config_from_jsonable(saved, "run/config.json")


def test_finetune_runs_with_the_pretrained_rewards(tmp_path):
    lib = asap_reference(CLIP)
    cfg = dataclasses.replace(TrackingEnvConfig(), reward=CUSTOM)
    cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, num_threads=1))
    train_track(lib, tmp_path / "pre", iterations=1, num_envs=2, env_cfg=cfg)
    result = finetune_policy(
        tmp_path / "pre", lib, tmp_path / "ft", sim="nominal", iterations=1, num_envs=2, num_threads=1
    )
    saved = json.loads((tmp_path / "ft" / "config.json").read_text())["env"]
    assert env_config_from_jsonable(saved).reward == CUSTOM
    assert result.rows and result.rows[-1]["iteration"] == 2

    # A pre-trained run whose reward names a function nobody can provide: refused before anything is written.
    pre = json.loads((tmp_path / "pre" / "config.json").read_text())
    pre["env"]["reward"]["penalties"][0]["fn"] = "elsewhere.unknown_penalty"
    (tmp_path / "pre" / "config.json").write_text(json.dumps(pre))
    with pytest.raises(ConfigError, match="elsewhere.unknown_penalty"):
        finetune_policy(tmp_path / "pre", lib, tmp_path / "ft2", sim="nominal", iterations=1, num_envs=2)
    assert not (tmp_path / "ft2").exists()
