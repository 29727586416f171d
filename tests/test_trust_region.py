"""The KL trust region around the pre-trained policy (ASAP-TR): the bound holds on real observations, an update
inside it is untouched, and fine-tuning with it stays within it where plain PPO does not."""

from __future__ import annotations

import copy
import csv
import json
import math

import pytest
import torch
from conftest import asap_reference

from robots.registry import load_robot_spec
from trainers.env import TrackingEnv
from trainers.finetune.finetune import finetune_policy
from trainers.policy_io import read_run_config
from trainers.ppo.runner import OnPolicyRunner
from trainers.ppo.trust_region import AnchorTrustRegion, mean_kl, pull_toward_anchor
from trainers.real.model import build_real_model
from trainers.reference import load_references


@pytest.fixture(scope="module")
def pretrained_and_obs(tiny_kick_policy):
    """The tiny kick policy and 96 observations of it tracking the real kick reference in the nominal G1."""
    _, env_cfg, ppo_cfg = read_run_config(tiny_kick_policy / "config.json")
    nominal = build_real_model("nominal", env_cfg.sim)
    refs = load_references(asap_reference("kick_level2_filter"), nominal, load_robot_spec(env_cfg.sim.robot))
    env = TrackingEnv(refs, 4, env_cfg, seed=0, model=nominal)
    runner = OnPolicyRunner(env, ppo_cfg)
    runner.load(tiny_kick_policy / "model_last.pt")
    obs, _ = env.get_observations()
    batch = []
    with torch.no_grad():
        for _ in range(24):
            batch.append(obs)
            obs, *_ = env.step(runner.policy.act_inference(obs))
    return runner.policy, torch.cat(batch)


def test_mean_kl_matches_torch_for_diagonal_gaussians(pretrained_and_obs):
    anchor, obs = pretrained_and_obs
    moved = copy.deepcopy(anchor)
    with torch.no_grad():
        moved.log_std += 0.3
        moved.actor.net[-1].bias += 0.05
    with torch.no_grad():
        p, q = anchor.distribution(obs), moved.distribution(obs)
        expected = float(torch.distributions.kl_divergence(p, q).sum(-1).mean())
    assert mean_kl(anchor, moved, obs) == pytest.approx(expected, rel=1e-6)
    assert mean_kl(anchor, anchor, obs) == 0.0


def test_a_step_past_the_bound_is_pulled_back_to_just_inside_it(pretrained_and_obs):
    anchor, obs = pretrained_and_obs
    moved = copy.deepcopy(anchor)
    torch.manual_seed(0)
    with torch.no_grad():
        for p in moved.actor.net.parameters():
            p += 0.05 * torch.randn_like(p)
        moved.log_std -= 0.2
        moved.actor.norm.mean += 0.1  # the normalizer is part of the deployed actor: it moves back too
    critic_before = [p.clone() for p in moved.critic.parameters()]
    region = AnchorTrustRegion(max_kl=0.05)
    assert mean_kl(anchor, moved, obs) > 10 * region.max_kl
    fraction, kl = pull_toward_anchor(moved, anchor, obs, region)
    assert 0.0 < fraction < 1.0
    assert kl == pytest.approx(mean_kl(anchor, moved, obs))
    # Inside the bound, and near it: bisection to 2⁻¹² of the step leaves the KL within a few % of the bound.
    assert 0.9 * region.max_kl < kl <= region.max_kl
    # Every actor tensor sits the same fraction of the way from the anchor; the critic is not touched.
    w_anchor, w_moved = anchor.actor.net[0].weight, moved.actor.net[0].weight
    assert torch.allclose(moved.log_std, anchor.log_std - 0.2 * fraction, atol=1e-6)
    assert torch.allclose(moved.actor.norm.mean, anchor.actor.norm.mean + 0.1 * fraction, atol=1e-6)
    assert not torch.equal(w_anchor, w_moved)
    assert all(torch.equal(a, b) for a, b in zip(critic_before, moved.critic.parameters()))


def test_a_step_inside_the_bound_is_kept_as_it_is(pretrained_and_obs):
    anchor, obs = pretrained_and_obs
    moved = copy.deepcopy(anchor)
    with torch.no_grad():
        moved.actor.net[-1].bias += 0.01
    before = copy.deepcopy(moved.state_dict())
    kl = mean_kl(anchor, moved, obs)
    assert kl > 0.0
    assert pull_toward_anchor(moved, anchor, obs, AnchorTrustRegion(max_kl=2 * kl)) == (1.0, kl)
    assert all(torch.equal(before[k], v) for k, v in moved.state_dict().items())


def test_bad_bounds_are_refused():
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="max_kl"):
            AnchorTrustRegion(max_kl=bad)


def test_finetuning_with_the_region_stays_inside_where_plain_ppo_leaves_it(
    tiny_kick_policy, pretrained_and_obs, tmp_path
):
    """Three PPO iterations in the nominal simulator from the tiny kick policy: plain PPO moves the actor more than
    the bound from the pre-trained one; with the region, every update ends inside it, and the record says so."""
    lib = asap_reference("kick_level2_filter")
    bound = 1e-3
    plain = finetune_policy(tiny_kick_policy, lib, tmp_path / "plain", sim="nominal", iterations=3, num_envs=4)

    def bounded_run(name: str):
        return finetune_policy(
            tiny_kick_policy,
            lib,
            tmp_path / name,
            sim="nominal",
            iterations=3,
            num_envs=4,
            trust_region=AnchorTrustRegion(max_kl=bound),
        )

    bounded = bounded_run("bounded")
    assert all(r["anchor_kl"] != r["anchor_kl"] for r in plain.rows)  # NaN: no anchor
    assert all(0.0 < r["anchor_kl"] <= bound for r in bounded.rows)
    assert any(r["anchor_fraction"] < 1.0 for r in bounded.rows)  # the bound acted
    # Plain PPO's policies, measured the same way on the same real observations, leave the bound.
    anchor, obs = pretrained_and_obs
    plain_policy = copy.deepcopy(anchor)
    plain_policy.load_state_dict(torch.load(tmp_path / "plain" / "model_last.pt", weights_only=True)["model"])
    assert mean_kl(anchor, plain_policy, obs) > bound
    record = json.loads((tmp_path / "bounded" / "config.json").read_text())["finetune"]
    assert record["trust_region"] == {"max_kl": bound, "bisection_steps": 12}
    assert json.loads((tmp_path / "plain" / "config.json").read_text())["finetune"]["trust_region"] is None
    # The run's learning_curve.csv has the region's figures of every iteration (NaN without a region).
    curve = lambda run: list(csv.DictReader((tmp_path / run / "learning_curve.csv").open()))
    for key in ("anchor_kl", "anchor_fraction"):
        assert [float(r[key]) for r in curve("bounded")] == [r[key] for r in bounded.rows]
        assert all(math.isnan(float(r[key])) for r in curve("plain"))
    assert all(0.0 < float(r["anchor_kl"]) <= bound for r in curve("bounded"))
    assert all(0.0 < float(r["anchor_fraction"]) <= 1.0 for r in curve("bounded"))
    # Fine-tuning is deterministic: the same call again gives the same policy and the same region figures.
    again = bounded_run("again")
    weights = lambda run: torch.load(tmp_path / run / "model_last.pt", weights_only=True)["model"]
    assert all(torch.equal(v, weights("again")[k]) for k, v in weights("bounded").items())
    assert [r["anchor_kl"] for r in again.rows] == [r["anchor_kl"] for r in bounded.rows]


def test_bench_runs_asap_tr_on_asaps_correction_and_reports_the_drift(tiny_kick_policy, tmp_path):
    """bench_table4 with ASAP-TR: the same Δa file as ASAP, the bound recorded, the paired difference ASAP-TR − ASAP
    reported; table4_drift puts ASAP-TR nearer the pre-trained policy than ASAP. Not among the default methods."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_table4
    import table4_drift

    assert "ASAP-TR" not in bench_table4.parse_args(["--policy", "", "--motion", "", "-o", ""]).methods.split(",")
    out = tmp_path / "t4"
    args = ["--policy", str(tiny_kick_policy), "--motion", str(asap_reference("kick_level2_filter"))]
    args += ["--real", "combined", "--seeds", "0", "--iterations", "3", "--num-envs", "4", "--episodes", "2"]
    args += ["--eval-episodes", "2", "--methods", "ASAP,ASAP-TR,Oracle", "--trust-region-kl", "0.001", "--jobs", "1"]
    args += ["--asap-rounds", "1"]
    summary = bench_table4.main([*args, "-o", str(out)])["robots"]["combined"]
    record = lambda name: json.loads((out / "combined" / f"{name}_s0" / "config.json").read_text())["finetune"]
    assert record("ASAP-TR")["trust_region"]["max_kl"] == 0.001 and record("ASAP")["trust_region"] is None
    assert record("ASAP-TR")["delta_sha256"] == record("ASAP")["delta_sha256"]
    assert "ASAP-TR − ASAP" in summary["gap_share_ci"]["completion"]
    drift = table4_drift.main([str(out / "combined")])
    assert set(drift) == {"ASAP_s0", "ASAP-TR_s0", "Oracle_s0"}
    assert 0.0 < drift["ASAP-TR_s0"] < drift["ASAP_s0"]
    with pytest.raises(SystemExit, match="trust-region-kl"):
        bench_table4.main([*args, "--trust-region-kl", "0", "-o", str(tmp_path / "bad")])
    assert not (tmp_path / "bad").exists()


def test_train_finetune_takes_the_trust_region_from_the_command_line(tiny_kick_policy, tmp_path):
    from click.testing import CliRunner

    from cli.main import main

    kick = str(asap_reference("kick_level2_filter"))
    args = ["train", "finetune", "--policy", str(tiny_kick_policy), "--motion", kick, "--delta", "constant:0.05"]
    args += ["--iterations", "3", "--num-envs", "4"]
    out = CliRunner().invoke(main, [*args, "--trust-region-kl", "0.001", "-o", str(tmp_path / "tr")])
    assert out.exit_code == 0, out.output
    record = json.loads((tmp_path / "tr" / "config.json").read_text())["finetune"]["trust_region"]
    assert record["max_kl"] == 0.001
    rows = list(csv.DictReader((tmp_path / "tr" / "learning_curve.csv").open()))
    assert rows and all(float(r["anchor_kl"]) <= 0.001 * 1.0001 for r in rows)  # the bound held every iteration
    for bad in ("0", "-1", "nan"):
        out = CliRunner().invoke(main, [*args, "--trust-region-kl", bad, "-o", str(tmp_path / f"bad{bad}")])
        assert out.exit_code == 2 and "--trust-region-kl" in out.output and "Traceback" not in out.output, out.output
        assert not (tmp_path / f"bad{bad}").exists()


def test_a_fine_tuning_folder_is_resumed_only_by_the_same_fine_tuning(tiny_kick_policy, tmp_path):
    from click.testing import CliRunner

    from cli.main import main

    kick = str(asap_reference("kick_level2_filter"))
    run = tmp_path / "ft"
    args = ["train", "finetune", "--policy", str(tiny_kick_policy), "--motion", kick, "--num-envs", "4", "-o", str(run)]
    out = CliRunner().invoke(main, [*args, "--delta", "constant:0.05", "--iterations", "1"])
    assert out.exit_code == 0, out.output
    weights = (run / "model_last.pt").read_bytes()
    for other in (["--delta", "constant:0.1"], ["--delta", "constant:0.05", "--trust-region-kl", "0.5"]):
        out = CliRunner().invoke(main, [*args, *other, "--iterations", "2"])
        lines = out.output.strip().splitlines()
        assert out.exit_code == 1 and len(lines) == 1 and "holds another fine-tuning" in lines[0], out.output
        assert (run / "model_last.pt").read_bytes() == weights  # nothing trained into it
    out = CliRunner().invoke(main, [*args, "--delta", "constant:0.05", "--iterations", "2"])  # the same: resumes
    assert out.exit_code == 0 and (run / "model_last.pt").read_bytes() != weights, out.output
