"""A second ASAP (and SysID) round of the Table IV bench on a tiny budget: it continues a finished run's folder,
collects with round 1's fine-tuned policy, refits on both rounds' rollouts and fine-tunes round 1's policy again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import asap_reference

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_table4
import table4_report
from table4_stats import SHARE_METRICS, compared_pairs, method_order, parse_round

from retarget.batch.record import file_sha256
from trainers.delta.collection import read_collection
from trainers.policy_io import find_checkpoint, load_policy

EPISODES = 2
ITERATIONS = 1
TINY = ["--seeds", "0", "--iterations", str(ITERATIONS), "--num-envs", "4", "--episodes", str(EPISODES)]
TINY += ["--eval-episodes", "2", "--methods", "SysID,ASAP,Oracle", "--jobs", "1", "--real", "combined"]
TINY += ["--select-every", "10"]  # round 2 starts from the checkpoint round 1 deployed


@pytest.fixture(scope="module")
def rounds(tmp_path_factory, tiny_kick_policy):
    """A one-iteration policy of the kick; round 1 of the bench; then ``--asap-rounds 2`` on the same folder."""
    tmp = tmp_path_factory.mktemp("rounds")
    kick = str(asap_reference("kick_level2_filter"))
    common = ["--policy", str(tiny_kick_policy), "--motion", kick, *TINY, "-o", str(tmp / "run")]
    first = bench_table4.main([*common, "--asap-rounds", "1"])
    robot = tmp / "run" / "combined"
    untouched = {p: p.stat().st_mtime_ns for p in (robot / "ASAP_s0" / "model_last.pt", robot / "collect.pkl")}
    second = bench_table4.main([*common, "--asap-rounds", "2"])
    return tmp, common, first, second, untouched


def test_round_two_refits_on_both_rounds_rollouts_from_round_one_policy(rounds):
    tmp, _, first, second, untouched = rounds
    robot = tmp / "run" / "combined"
    assert all(p.stat().st_mtime_ns == t for p, t in untouched.items())  # round 1 was read, not run again
    summary = second["robots"]["combined"]
    for name, method in (("ASAP r2", "ASAP"), ("SysID r2", "SysID")):
        record = summary["rounds"][name]["s0"]
        own = read_collection(robot / "rounds" / f"{method}_r2_s0" / "collect.pkl")
        assert record["rollouts"] == len(own) == EPISODES and record["fitted_on_rollouts"] == 2 * EPISODES
        assert record["base_policy"] == str(robot / f"{method}_s0")
        # Fine-tuned from round 1's checkpoint (recorded with its hash) for the same number of iterations more.
        finetune = json.loads((robot / f"{method}_r2_s0" / "config.json").read_text())["finetune"]
        base_ckpt = find_checkpoint(robot / f"{method}_s0")  # the checkpoint round 1 deployed
        assert finetune["base_checkpoint"] == str(base_ckpt.resolve())
        assert finetune["base_sha256"] == file_sha256(base_ckpt)
        assert finetune["target_iteration"] - finetune["base_iteration"] == ITERATIONS
        round_one = json.loads((robot / f"{method}_s0" / "selection.json").read_text())
        assert finetune["base_iteration"] == round_one["chosen_iteration"] == load_policy(base_ckpt).iteration
    # Δa of round 2 saw every transition of both rounds' rollouts (a rollout's last frame has none).
    own = read_collection(robot / "rounds" / "ASAP_r2_s0" / "collect.pkl").values()
    vanilla = read_collection(robot / "collect.pkl").values()
    transitions = sum(t.num_frames - 1 for t in [*own, *vanilla])
    assert summary["rounds"]["ASAP r2"]["s0"]["delta"]["transitions"] == transitions
    assert first["robots"]["combined"]["fits"]["delta"]["transitions"] == sum(t.num_frames - 1 for t in vanilla)
    finetune = json.loads((robot / "ASAP_r2_s0" / "config.json").read_text())["finetune"]
    assert finetune["delta_sha256"] == file_sha256(robot / "rounds" / "ASAP_r2_s0" / "delta.pt")
    assert finetune["delta_sha256"] != file_sha256(robot / "delta.pt")
    sysid = json.loads((robot / "SysID_r2_s0" / "config.json").read_text())["finetune"]
    assert sysid["real_profile"] == str(robot / "rounds" / "SysID_r2_s0" / "sysid.json")


def test_the_table_gains_the_new_rows_with_budgets_and_shares(rounds):
    tmp, _, first, second, _ = rounds
    before, after = first["robots"]["combined"], second["robots"]["combined"]
    assert method_order(after["results"]) == ["Vanilla", "SysID", "SysID r2", "ASAP", "ASAP r2", "Oracle"]
    for name in before["results"]:  # round 1 as it was
        assert after["results"][name] == before["results"][name]
    assert after["budget"] == {
        "SysID": {"fitting_rollouts": EPISODES, "finetune_iterations": ITERATIONS},
        "SysID r2": {"fitting_rollouts": 2 * EPISODES, "finetune_iterations": 2 * ITERATIONS},
        "ASAP": {"fitting_rollouts": EPISODES, "finetune_iterations": ITERATIONS},
        "ASAP r2": {"fitting_rollouts": 2 * EPISODES, "finetune_iterations": 2 * ITERATIONS},
    }
    for key in SHARE_METRICS:
        shares = after["gap_share_ci"][key]
        assert list(shares) == ["SysID", "SysID r2", "ASAP", "ASAP r2"] + [f"{a} − {b}" for a, b in PAIRS]
        for name, g in before["gap_share_ci"][key].items():  # round 1's intervals untouched
            assert json.dumps(shares[name]) == json.dumps(g)  # nan where the gap is zero
    on_disk = json.loads((tmp / "run" / "table4.json").read_text())
    assert on_disk["args"]["asap_rounds"] == 2 and "ASAP r2" in on_disk["robots"]["combined"]["results"]
    text, _, _ = table4_report.report([tmp / "run" / "table4.json"], replicates=50)
    assert "| ASAP r2 |" in text and "| SysID r2 |" in text
    assert "ASAP r2 − SysID r2, difference of their shares" in text
    assert f"ASAP r2 {2 * EPISODES} rollouts + {2 * ITERATIONS} it." in text


PAIRS = [("ASAP", "SysID"), ("ASAP r2", "ASAP"), ("ASAP r2", "SysID r2")]


def test_pairs_and_row_names():
    assert compared_pairs(["Vanilla", "SysID", "SysID r2", "ASAP", "ASAP r2", "Oracle"]) == PAIRS
    assert compared_pairs(["Vanilla", "ASAP", "ASAP r2", "ASAP r3", "Oracle"]) == [
        ("ASAP r2", "ASAP"),
        ("ASAP r3", "ASAP r2"),
    ]
    assert parse_round("SysID r12") == ("SysID", 12) and parse_round("Oracle") == ("Oracle", 1)
    for bad in ("ASAP r1", "Oracle r2", "ASAP r", "ASAP 2"):
        with pytest.raises(ValueError, match="not a Table IV method"):
            parse_round(bad)


def test_a_later_round_refuses_a_folder_of_other_settings(rounds, tmp_path):
    _, common, _, _, _ = rounds
    at = common.index("--iterations") + 1
    other = [*common[:at], "3", *common[at + 1 :]]
    with pytest.raises(SystemExit, match=r"table4.json: made with --iterations 1, this run has 3"):
        bench_table4.main([*other, "--asap-rounds", "2"])
    with pytest.raises(SystemExit, match="add ASAP to --methods"):
        bench_table4.main(["--policy", "x", "--motion", "y", "--methods", "SysID", "--asap-rounds", "2", "-o", "z"])
    with pytest.raises(SystemExit, match="--asap-rounds 0: give 1"):
        bench_table4.main(["--policy", "x", "--motion", "y", "--asap-rounds", "0", "-o", "z"])
    broken = tmp_path / "table4.json"
    broken.write_text("{")
    with pytest.raises(SystemExit, match=r"table4.json: cannot read it as the table of an earlier run"):
        bench_table4.main(["--policy", "x", "--motion", "y", "--asap-rounds", "2", "-o", str(tmp_path)])


def test_rounds_check_sets_each_rounds_simulator_scores_beside_the_robots(rounds, capsys):
    import table4_rounds_check

    tmp, _, _, _, _ = rounds
    table = tmp / "run" / "table4.json"
    results = json.loads(table.read_text())["robots"]["combined"]["results"]
    _, checks = table4_rounds_check.report(table, None, None)
    assert set(checks["combined"]) == {"SysID", "SysID r2", "ASAP", "ASAP r2"}
    for method, start in (("ASAP", "Vanilla"), ("ASAP r2", "ASAP"), ("SysID r2", "SysID")):
        (check,) = checks["combined"][method]
        record = json.loads(
            (tmp / "run" / "combined" / bench_table4.run_folder(method, 0) / "selection.json").read_text()
        )
        by_it = {c["iteration"]: c for c in record["candidates"]}
        assert (
            check.sim_start == by_it[record["base_iteration"]]
            and check.sim_deployed == by_it[record["chosen_iteration"]]
        )
        assert check.moved_iterations == record["chosen_iteration"] - record["base_iteration"]
        assert check.robot_start == results[start][0] and check.robot_deployed == results[method][0]
    assert table4_rounds_check.main([str(table), "--methods", "ASAP r2"]) == 0
    printed = capsys.readouterr().out
    assert "[combined] ASAP r2 (from ASAP)" in printed and "moved " in printed and "SysID" not in printed
    assert table4_rounds_check.main([str(table), "--robots", "pybullet:combined"]) == 1
    assert "no robot 'pybullet:combined'" in capsys.readouterr().err
    unselected = Path(__file__).resolve().parents[1] / "docs/table4/side_jump_heldout/side_jump2_table4.json"
    assert table4_rounds_check.main([str(unselected)]) == 1
    assert "no fine-tuning with a selection.json" in capsys.readouterr().err
