"""bench/table4_merge.py on real bench outputs: rows taken from an earlier run of the same policy and episodes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import table4_merge

SIDE_JUMP = REPO / "docs/table4/side_jump_heldout/side_jump2_table4.json"
"""The held-out side jump, both robots, 6 seeds: Vanilla, SysID, ASAP, ASAP-TR and the Oracle."""
SQUAT = REPO / "docs/table4/bounded_delta/squat_phys_table4.json"


def _without(path: Path, methods: tuple[str, ...], out: Path) -> Path:
    data = json.loads(path.read_text())
    for summary in data["robots"].values():
        for method in methods:
            del summary["results"][method]
    out.write_text(json.dumps(data))
    return out


def test_merging_back_what_was_removed_gives_the_original_shares(tmp_path):
    new = _without(SIDE_JUMP, ("SysID", "Oracle"), tmp_path / "new.json")
    out = tmp_path / "merged.json"
    assert table4_merge.main([str(new), "--from", str(SIDE_JUMP), "--methods", "SysID,Oracle", "-o", str(out)]) == 0
    merged, original = json.loads(out.read_text()), json.loads(SIDE_JUMP.read_text())
    for real, summary in original["robots"].items():
        mine = merged["robots"][real]
        assert list(mine["results"]) == list(summary["results"])  # Table IV's row order
        assert mine["results"] == summary["results"]
        for metric, shares in summary["gap_closed"].items():
            for method, share in shares.items():
                assert mine["gap_closed"][metric][method] == pytest.approx(share, abs=1e-12), (real, metric, method)
        assert mine["merged_rows"] == {"SysID": str(SIDE_JUMP), "Oracle": str(SIDE_JUMP)}
        assert {k for k in mine["finetune_cost"] if k.startswith("SysID_s")} == {f"SysID_s{s}" for s in range(6)}


def test_refuses_what_is_not_paired_or_already_there(tmp_path, capsys):
    new = _without(SIDE_JUMP, ("Oracle",), tmp_path / "new.json")
    out = tmp_path / "merged.json"
    assert table4_merge.main([str(new), "--from", str(SQUAT), "--methods", "Oracle", "-o", str(out)]) == 1
    assert "clip" in capsys.readouterr().err and not out.exists()
    assert table4_merge.main([str(new), "--from", str(SIDE_JUMP), "--methods", "SysID", "-o", str(out)]) == 1
    assert "SysID is in the new run already" in capsys.readouterr().err
    assert table4_merge.main([str(new), "--from", str(SIDE_JUMP), "--methods", "Oracle", "-o", str(new)]) == 1
    assert "would overwrite an input" in capsys.readouterr().err
    other = json.loads(SIDE_JUMP.read_text())
    other["robots"]["combined"]["results"]["Vanilla"][0]["episodes"]["completion"][0] += 0.01
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert (
        table4_merge.main([str(new), "--from", str(tmp_path / "other.json"), "--methods", "Oracle", "-o", str(out)])
        == 1
    )
    assert "Vanilla's episodes differ" in capsys.readouterr().err and not out.exists()


def test_reference_oracle_of_another_budget_tops_every_gap(tmp_path, capsys):
    """An Oracle fine-tuned longer (here: ASAP's rows standing in for it) replaces the run's own as the top of the
    gaps; the shares are those of a table whose Oracle rows are the reference's, and the report names its budget."""
    import table4_report
    from bench_table4 import gap_shares_with_ci

    original = json.loads(SIDE_JUMP.read_text())
    ref = json.loads(SIDE_JUMP.read_text())
    ref["args"]["iterations"] = 2 * original["args"]["iterations"]
    for summary in ref["robots"].values():
        summary["results"]["Oracle"] = summary["results"]["ASAP"]
    (tmp_path / "ref.json").write_text(json.dumps(ref))
    out = tmp_path / "merged.json"
    argv = [str(SIDE_JUMP), "--from", str(tmp_path / "ref.json"), "--methods", "Oracle", "--reference", "-o", str(out)]
    assert table4_merge.main(argv) == 0
    printed = capsys.readouterr().out
    merged = json.loads(out.read_text())
    assert merged["oracle_iterations"] == 2 * original["args"]["iterations"]
    for real, summary in original["robots"].items():
        mine = merged["robots"][real]
        assert mine["results"]["Oracle"] == summary["results"]["ASAP"]
        expected = gap_shares_with_ci(mine["results"], replicates=50)
        for metric in expected:
            for method in ("SysID", "ASAP"):
                want = expected[metric][method]["share"]
                assert mine["gap_closed"][metric][method] == pytest.approx(want, nan_ok=True), (real, metric, method)
        assert mine["gap_closed"]["eg_mpjpe_mm"]["ASAP"] == pytest.approx(1.0)  # ASAP is its own reference here
        rows = {n: [r["success_rate"] for r in summary["results"][n]] for n in ("ASAP", "Oracle")}
        difference = sum(rows["ASAP"]) / len(rows["ASAP"]) - sum(rows["Oracle"]) / len(rows["Oracle"])
        assert f"[{real}] Oracle at 100 it. − at 50 it. (paired): success_rate {difference:+.3f}" in printed
    assert "(policy it. " in table4_report.run_label(merged) and "Oracle 100 it.)" in table4_report.run_label(merged)


def test_reference_refuses_other_methods_and_unpaired_runs(tmp_path, capsys):
    out = tmp_path / "merged.json"
    base = [str(SIDE_JUMP), "--from", str(SIDE_JUMP)]
    assert table4_merge.main([*base, "--methods", "SysID", "--reference", "-o", str(out)]) == 1
    assert "--reference replaces the Oracle only" in capsys.readouterr().err
    other = json.loads(SIDE_JUMP.read_text())
    other["args"]["seeds"] = "0,1,2"
    (tmp_path / "other.json").write_text(json.dumps(other))
    argv = [str(SIDE_JUMP), "--from", str(tmp_path / "other.json"), "--methods", "Oracle", "--reference"]
    assert table4_merge.main([*argv, "-o", str(out)]) == 1
    assert "--seeds" in capsys.readouterr().err and not out.exists()


def test_later_round_rows_merge_back_and_unknown_rows_are_refused(tmp_path, capsys):
    rounds = REPO / "docs/table4/rounds/kick2_combined_table4_eval32.json"
    new = _without(rounds, ("SysID", "SysID r2"), tmp_path / "new.json")
    out = tmp_path / "merged.json"
    assert table4_merge.main([str(new), "--from", str(rounds), "--methods", "SysID,SysID r2", "-o", str(out)]) == 0
    merged, original = json.loads(out.read_text()), json.loads(rounds.read_text())
    assert merged["robots"]["combined"]["results"] == original["robots"]["combined"]["results"]
    for bad in ("Vanilla", "SysID r1", "Foo"):
        assert table4_merge.main([str(new), "--from", str(rounds), "--methods", bad, "-o", str(out)]) == 1
        assert f"--methods: unknown {bad}" in capsys.readouterr().err
