"""The Table IV bench end to end on a tiny budget in a MuJoCo and a PyBullet "real" robot, and its report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import asap_reference

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_table4
import table4_fidelity
import table4_report
import table4_selection
from table4_stats import SHARE_METRICS, episode_samples, format_share, gap_share

ROBOTS = ("combined", "pybullet:combined")
TINY = ["--seeds", "0", "--iterations", "1", "--num-envs", "4", "--episodes", "2", "--eval-episodes", "2"]
TINY += ["--methods", "Continued,ASAP,Oracle", "--jobs", "1", "--select-every", "10", "--asap-rounds", "1"]


@pytest.fixture(scope="module")
def benches(tmp_path_factory, tiny_kick_policy):
    """A one-iteration policy of the kick; the bench on the kick in both robots, then on the squat in the MuJoCo
    robot with the kick's corrections (two clips for the report)."""
    tmp = tmp_path_factory.mktemp("table4")
    kick, squat = (str(asap_reference(c)) for c in ("kick_level2_filter", "squat_level1_filter"))
    policy = ["--policy", str(tiny_kick_policy)]
    first = bench_table4.main([*policy, "--motion", kick, "--real", ",".join(ROBOTS), *TINY, "-o", str(tmp / "a")])
    second = bench_table4.main(
        [*policy, "--motion", squat, "--real", "combined", "--corrections-from", str(tmp / "a"), *TINY]
        + ["-o", str(tmp / "b")]
    )
    return tmp, first, second


def test_one_table_per_robot_with_per_episode_results_that_add_up(benches):
    tmp, _, _ = benches
    on_disk = json.loads((tmp / "a" / "table4.json").read_text())
    assert list(on_disk["robots"]) == list(ROBOTS) and (tmp / "a" / "table4.png").stat().st_size > 10_000
    # The pre-trained policy's curriculum state, as its checkpoint holds it.
    raw = torch.load(tmp / "a" / "pre" / "model_last.pt", weights_only=True)
    assert on_disk["policy_penalty_scale"] == pytest.approx(raw["penalty_scale"])
    assert on_disk["policy_termination_distance_m"] == pytest.approx(raw["termination_distance_m"])
    for real in ROBOTS:
        summary = on_disk["robots"][real]
        assert list(summary["results"]) == ["Vanilla", "Continued", "ASAP", "Oracle"]
        for rows in summary["results"].values():
            (row,) = rows  # one seed
            ep = row["episodes"]
            assert len(ep["eg_mpjpe_mm"]) == len(ep["frames"]) == len(ep["completion"]) == 2
            # The table's Eg-mpjpe is the frame-weighted mean of the episodes', completion their mean.
            assert row["eg_mpjpe_mm"] == pytest.approx(np.average(ep["eg_mpjpe_mm"], weights=ep["frames"]))
            assert row["completion"] == pytest.approx(np.mean(ep["completion"]))
            assert row["success_rate"] == pytest.approx(np.mean(ep["success_rate"]))
        assert set(summary["gap_share_ci"]) == set(SHARE_METRICS)
        # Each method deployed the pre-trained checkpoint or its one fine-tuning iteration, as its own simulator
        # judged; the control (table4_last.json) deployed the last one, on the same matched episodes.
        assert summary["selection"]["every"] == bench_table4.DEFAULT_SELECT_EVERY
        control = json.loads((tmp / "a" / "table4_last.json").read_text())["robots"][real]["results"]
        assert control["Vanilla"] == summary["results"]["Vanilla"]
        for name in ("Continued", "ASAP", "Oracle"):
            (chosen,) = summary["chosen_iterations"][name]
            assert chosen in (0, 1)
            same_as = control[name] if chosen == 1 else summary["results"]["Vanilla"]
            assert summary["results"][name][0]["episodes"] == same_as[0]["episodes"]
        assert set(summary["gap_share_ci"]["completion"]) == {"Continued", "ASAP", "ASAP − Continued"}
        assert set(summary["finetune_cost"]) == {"Continued_s0", "ASAP_s0", "Oracle_s0"}
        assert (tmp / "a" / bench_table4.robot_folder(real) / "delta.pt").is_file()
    # Each robot has its own fits, fine-tunings and episodes.
    a, b = (on_disk["robots"][r] for r in ROBOTS)
    assert a["fits"]["delta_rms_action"] != b["fits"]["delta_rms_action"]
    assert a["results"]["Vanilla"][0]["eg_mpjpe_mm"] != b["results"]["Vanilla"][0]["eg_mpjpe_mm"]


def test_the_delta_file_is_what_delta_fit_gives_on_the_bench_collection(benches, tmp_path):
    """A user refitting Δa on a bench folder's collect.pkl with `delta fit` (whose defaults are the bench's) gets the
    bench's delta.pt byte for byte: the bench fits its rollouts as the file stores them."""
    from click.testing import CliRunner

    from cli.main import main

    tmp, first, _ = benches
    robot = tmp / "a" / "combined"
    refit = tmp_path / "delta.pt"
    result = CliRunner().invoke(main, ["delta", "fit", str(robot / "collect.pkl"), "-o", str(refit)])
    assert result.exit_code == 0, result.output
    assert refit.read_bytes() == (robot / "delta.pt").read_bytes()
    transitions = first["robots"]["combined"]["fits"]["delta"]["transitions"]
    assert f"{transitions} transitions" in result.output


def test_pybullet_episodes_differ_by_start_noise_and_its_oracle_trains_without_randomization(benches):
    tmp, first, _ = benches
    mujoco, pybullet = (first["robots"][r] for r in ROBOTS)
    assert mujoco["evaluation"] == {"domain_rand": True, "start_noise_rad": 0.0}
    assert pybullet["evaluation"] == {"domain_rand": False, "start_noise_rad": bench_table4.MIN_START_NOISE_RAD}
    eg = pybullet["results"]["Vanilla"][0]["episodes"]["eg_mpjpe_mm"]
    assert eg[0] != eg[1]  # a deterministic engine: only the start noise tells the two episodes apart
    record = lambda real, name: json.loads(
        (tmp / "a" / bench_table4.robot_folder(real) / f"{name}_s0" / "config.json").read_text()
    )["finetune"]
    assert record("pybullet:combined", "Oracle")["domain_rand"] is False
    assert record("combined", "Oracle")["domain_rand"] is True
    assert record("pybullet:combined", "Continued")["domain_rand"] is True  # MuJoCo-side methods keep it


def test_corrections_from_a_multi_robot_run_are_that_robots(benches):
    tmp, _, second = benches
    robot = tmp / "b" / "combined"
    assert (robot / "delta.pt").read_bytes() == (tmp / "a" / "combined" / "delta.pt").read_bytes()
    assert not (robot / "collect.pkl").exists()  # nothing fitted
    one_step = second["robots"]["combined"]["heldout_one_step_rms"]
    assert set(one_step) == {"nominal", "Oracle", "ASAP"} and all(np.isfinite(list(one_step.values())))


def test_fidelity_replays_the_bench_episodes_in_each_simulator(benches):
    """The Oracle played in its robot by the fidelity bench gives the table's figures to the digit (the same
    matched episodes); Vanilla is played in the nominal and the Δa simulator, which differ; each fine-tuned policy
    in its own simulator."""
    tmp, first, _ = benches
    for real in ROBOTS:
        report = table4_fidelity.fidelity(tmp / "a" / bench_table4.robot_folder(real))
        (oracle,) = report["rows"]["Oracle"]
        replayed, table = oracle["simulators"]["robot"], first["robots"][real]["results"]["Oracle"][0]
        for key in ("success_rate", "completion", "eg_mpjpe_mm"):
            assert replayed[key] == table[key] == oracle["robot"][key]
        (vanilla,) = report["rows"]["Vanilla"]
        assert set(vanilla["simulators"]) == {"nominal", "delta"}  # no SysID in this run: no sysid.json
        assert vanilla["simulators"]["nominal"]["eg_mpjpe_mm"] != vanilla["simulators"]["delta"]["eg_mpjpe_mm"]
        assert set(report["rows"]["ASAP"][0]["simulators"]) == {"delta"}
        assert set(report["rows"]["Continued"][0]["simulators"]) == {"nominal"}


def test_selection_check_scores_every_candidate_in_the_robot_on_the_tables_episodes(benches, tmp_path):
    tmp, first, _ = benches
    assert table4_selection.main([str(tmp / "a"), "--robots", "combined", "-o", str(tmp_path / "c.json")]) == 0
    check = json.loads((tmp_path / "c.json").read_text())["robots"]["combined"]
    table = first["robots"]["combined"]
    assert set(check) == {"ASAP", "Oracle"}  # the methods asked for that ran
    for method, got in check.items():
        (run,) = got["runs"]
        # The robot's figures of the pre-trained, deployed and last checkpoints are the table's own rows.
        assert run["pretrained"]["completion"] == table["results"]["Vanilla"][0]["completion"]
        assert run["selected"]["eg_mpjpe_mm"] == pytest.approx(table["results"][method][0]["eg_mpjpe_mm"])
        control = table["last_checkpoint"]["results"][method][0]
        assert run["last"]["eg_mpjpe_mm"] == pytest.approx(control["eg_mpjpe_mm"])
        assert len(run["robot"]) == len(run["simulator"]) == 2


def test_rank_correlation_of_candidate_orderings():
    rows = lambda c: [{"completion": x, "eg_mpjpe_mm": 1.0} for x in c]
    assert list(table4_selection.ranks(rows([0.2, 0.9, 0.5, 0.5]))) == [0.0, 3.0, 1.5, 1.5]
    assert table4_selection.spearman(rows([0.1, 0.2, 0.3]), rows([0.5, 0.6, 0.9])) == pytest.approx(1.0)
    assert table4_selection.spearman(rows([0.1, 0.2, 0.3]), rows([0.9, 0.6, 0.5])) == pytest.approx(-1.0)
    assert np.isnan(table4_selection.spearman(rows([0.1, 0.1]), rows([0.2, 0.3])))
    # Completion first, then the lower Eg-mpjpe.
    tie = [{"completion": 1.0, "eg_mpjpe_mm": 80.0}, {"completion": 1.0, "eg_mpjpe_mm": 60.0}]
    assert list(table4_selection.ranks(tie)) == [0.0, 1.0]


def test_fidelity_reward_terms_average_the_first_iterations_of_every_seed(tmp_path):
    for seed, scale in ((0, 1.0), (1, 3.0)):
        run = tmp_path / f"ASAP_s{seed}"
        run.mkdir()
        lines = [{"iteration": 1}]  # an iteration in which no episode ended logs no terms
        lines += [{"iteration": i, "rew_dof_vel_limits": -scale * i, "penalty_scale": 1.0} for i in range(2, 30)]
        (run / "episode_terms.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    terms = table4_fidelity.reward_terms(tmp_path, ["ASAP", "Oracle"], [0, 1])
    assert set(terms) == {"ASAP"}  # no Oracle runs here
    # The first 10 lines of each seed: iterations 2-10 carry terms (mean 6), at −1× and −3×.
    assert terms["ASAP"] == {"dof_vel_limits": pytest.approx(-(1.0 + 3.0) / 2 * 6.0)}


def test_report_pools_clips_per_robot(benches, tmp_path):
    tmp, first, second = benches
    paths = [tmp / "a" / "table4.json", tmp / "b" / "table4.json"]
    md, png = tmp_path / "report.md", tmp_path / "report.png"
    assert table4_report.main([str(p) for p in paths] + ["-o", str(md), "--plot", str(png)]) == 0
    text = md.read_text()
    mujoco = text[text.index("### combined") : text.index("### pybullet:combined")]
    pybullet = text[text.index("### pybullet:combined") :]
    rows = [line for line in mujoco.splitlines() if line.startswith("| ") and "clip |" not in line]
    assert len(rows) == 3 * 4  # two clips and the pooled rows, four methods each
    assert "ASAP − Continued, difference of their shares" in mujoco and "- pooled (2 clips): success" in mujoco
    assert "pooled" not in pybullet and png.stat().st_size > 10_000
    # Per clip: the bench's own interval; pooled: both clips redrawn on their own.
    for key, cell in zip(SHARE_METRICS, rows[1].strip("| ").split(" | ")[5:]):
        g = table4_report.GapShare(**first["robots"]["combined"]["gap_share_ci"][key]["Continued"])
        marked = cell != "—" and not table4_report.oracle_gains(g, key)  # the Oracle no better than Vanilla
        assert cell == format_share(g) + (" †" if marked else "")
    clips = [
        {n: episode_samples(r, "eg_mpjpe_mm") for n, r in s["robots"]["combined"]["results"].items()}
        for s in (first, second)
    ]
    pooled = next(r for r in rows if "pooled" in r and "Continued" in r)
    assert format_share(gap_share(clips, "Continued")) in pooled
    assert ("†" in text) == (table4_report.NO_GAIN_NOTE in text)


def test_bad_inputs_fail_with_one_line(tmp_path, capsys):
    stray = tmp_path / "other.json"
    stray.write_text(json.dumps({"results": {}}))
    assert table4_report.main([str(stray)]) == 1
    assert (
        capsys.readouterr().err.strip()
        == f"error: {stray}: not a table4.json of bench_table4.py with robots (no 'robots'/'clip' key)"
    )
    with pytest.raises(SystemExit, match="--real pybullet:nope"):
        bench_table4.main(["--policy", "x", "--motion", "y", "--real", "combined,pybullet:nope", "-o", str(tmp_path)])


def test_a_share_is_marked_when_the_oracle_does_not_improve():
    share = lambda gap: table4_report.GapShare(0.5, 0.2, 0.8, gap)
    assert table4_report.oracle_gains(share(-5.0), "eg_mpjpe_mm") and not table4_report.oracle_gains(
        share(5.0), "eg_mpjpe_mm"
    )
    assert table4_report.oracle_gains(share(0.1), "completion") and not table4_report.oracle_gains(
        share(0.0), "success_rate"
    )
    assert table4_report._share_cell(share(5.0), "eg_mpjpe_mm") == "50 % [20, 80] †"


def test_corrections_from_a_single_robot_run_made_before_robot_subfolders(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    (old / "table4.json").write_text(json.dumps({"fits": {"delta_rms_action": 0.25}}))
    (old / "delta.pt").write_bytes(b"delta")
    (old / "sysid.json").write_bytes(b"{}")
    assert bench_table4.reuse_corrections(old, "combined", new) == {"delta_rms_action": 0.25}
    assert sorted(p.name for p in new.iterdir()) == ["delta.pt", "sysid.json"]  # what that run had, no more
    multi = tmp_path / "multi"
    (multi / "combined").mkdir(parents=True)
    (multi / "table4.json").write_text(json.dumps({"robots": {"combined": {"fits": {"delta_rms_action": 0.5}}}}))
    with pytest.raises(SystemExit, match="no corrections for pybullet:combined"):
        bench_table4.reuse_corrections(multi, "pybullet:combined", new)


def test_pooled_rollouts_of_another_clip_join_every_fit(benches, tiny_kick_policy):
    tmp, first, _ = benches
    third = bench_table4.main(
        [
            "--policy",
            str(tiny_kick_policy),
            "--motion",
            str(asap_reference("squat_level1_filter")),
            "--real",
            "combined",
        ]
        + [*TINY[:-4], "--methods", "ASAP", "--jobs", "1", "--pool-rollouts", str(tmp / "a")]
        + ["--asap-rounds", "1", "-o", str(tmp / "c")]
    )
    fits, kick_fits = third["robots"]["combined"]["fits"], first["robots"]["combined"]["fits"]
    assert fits["pooled_from"] == [str(tmp / "a")] and fits["pooled_frames"] == kick_fits["fitting_frames"]
    # Labels come from every transition (a rollout's last frame has none): two squat and two kick rollouts.
    own = fits["fitting_frames"] - 2
    assert (
        fits["delta"]["transitions"] == own + kick_fits["fitting_frames"] - 2 == own + kick_fits["delta"]["transitions"]
    )
    assert (tmp / "c" / "combined" / "delta.pt").read_bytes() != (tmp / "a" / "combined" / "delta.pt").read_bytes()


def test_pooling_needs_the_robots_rollouts_and_excludes_reused_corrections(tmp_path):
    (tmp_path / "run" / "combined").mkdir(parents=True)
    with pytest.raises(SystemExit, match=r"--pool-rollouts .*run: no rollouts collected in combined"):
        bench_table4.pooled_rollouts([tmp_path / "run"], "combined")
    with pytest.raises(SystemExit, match=r"run: no rollouts collected in pybullet:combined"):  # checked up front
        bench_table4.main(
            ["--policy", "x", "--motion", "y", "--real", "pybullet:combined", "--pool-rollouts", str(tmp_path / "run")]
            + ["-o", str(tmp_path / "o")]
        )
    assert not (tmp_path / "o").exists()
    with pytest.raises(SystemExit, match="give one of them"):
        bench_table4.main(
            ["--policy", "x", "--motion", "y", "--real", "combined", "--pool-rollouts", "a", "--corrections-from", "b"]
            + ["-o", str(tmp_path / "o")]
        )


def test_reevaluation_on_the_tables_episode_count_reproduces_its_rows(benches, tmp_path):
    """Re-evaluating on as many matched episodes as the bench used gives the bench's rows again (deployed: the
    table; last: its control), so a re-evaluation on more episodes differs from the table only by its episodes."""
    import table4_reevaluate

    tmp, _, _ = benches
    for checkpoint, source in (("deployed", "table4.json"), ("last", "table4_last.json")):
        target = tmp_path / f"{checkpoint}.json"
        args = [str(tmp / "a"), "--episodes", "2", "--robots", "combined", "--checkpoint", checkpoint]
        assert table4_reevaluate.main([*args, "-o", str(target)]) == 0
        again = json.loads(target.read_text())["robots"]["combined"]["results"]
        table = json.loads((tmp / "a" / source).read_text())["robots"]["combined"]["results"]
        assert list(again) == list(table)
        for name, rows in table.items():
            assert [r["episodes"] for r in again[name]] == [r["episodes"] for r in rows], name
    # Another count is another set of matched episodes; the file reads as a table (the report pools it).
    more = tmp_path / "eval4.json"
    assert table4_reevaluate.main([str(tmp / "a"), "--episodes", "4", "--robots", "combined", "-o", str(more)]) == 0
    rows = json.loads(more.read_text())["robots"]["combined"]["results"]
    assert all(len(r["episodes"]["success_rate"]) == 4 for v in rows.values() for r in v)
    some = tmp_path / "some.json"
    args = [str(tmp / "a"), "--episodes", "4", "--robots", "combined", "--methods", "ASAP", "-o", str(some)]
    assert table4_reevaluate.main(args) == 0
    assert json.loads(some.read_text())["robots"]["combined"]["results"] == {k: rows[k] for k in ("Vanilla", "ASAP")}
    assert table4_report.main([str(more), "-o", str(tmp_path / "r.md")]) == 0
    with pytest.raises(SystemExit, match="no robot moon"):
        table4_reevaluate.main([str(tmp / "a"), "--robots", "moon"])


def test_episode_noise_is_the_seeds_binomial_standard_error():
    from table4_stats import episode_noise

    rows = [{"episodes": {"success_rate": [1.0, 0.0, 1.0, 0.0]}}, {"episodes": {"success_rate": [1.0] * 4}}]
    # p̂ = 0.5 over 4 episodes: 0.25 / 3; p̂ = 1: 0.
    assert episode_noise(rows) == pytest.approx(np.sqrt((0.25 / 3 + 0.0) / 2))
    with pytest.raises(ValueError, match="one episode"):
        episode_noise([{"episodes": {"success_rate": [1.0]}}])
