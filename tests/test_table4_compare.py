"""bench/table4_compare.py: one method run two ways on the same policy and episodes, compared paired."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import table4_compare


def _row(success: list[float], eg: list[float], completion: list[float]) -> dict:
    episodes = {"success_rate": success, "eg_mpjpe_mm": eg, "completion": completion, "frames": [100] * len(eg)}
    means = {k: sum(v) / len(v) for k, v in episodes.items() if k != "frames"}
    return {**means, "episodes": episodes}


def _table(path: Path, asap_completion: list[list[float]], vanilla_eg: float = 120.0) -> Path:
    """Vanilla completes 40 % and the Oracle 100 % of every episode; ASAP's seeds as given (2 episodes each)."""
    results = {
        "Vanilla": [_row([0.0, 0.0], [vanilla_eg, vanilla_eg], [0.4, 0.4])],
        "Oracle": [_row([1.0, 1.0], [100.0, 100.0], [1.0, 1.0])] * 2,
        "ASAP": [_row([float(c == 1.0) for c in seed], [110.0, 110.0], seed) for seed in asap_completion],
    }
    data = {"clip": "squat", "policy_iteration": 1000, "robots": {"combined": {"results": results}}}
    path.write_text(json.dumps(data))
    return path


def test_paired_difference_of_two_ways_is_the_difference_of_their_shares(tmp_path):
    a = _table(tmp_path / "a.json", [[1.0, 1.0], [1.0, 1.0]])  # completion share (1 − 0.4) / 0.6 = 100 %
    b = _table(tmp_path / "b.json", [[0.7, 0.7], [0.7, 0.7]])  # (0.7 − 0.4) / 0.6 = 50 %
    text = table4_compare.compare([a], [b], ("ASAP", "ASAP"), ("new", "old"), replicates=200)
    line = next(x for x in text.splitlines() if "| completion |" in x)
    assert "100 % [100, 100]" in line and "50 % [50, 50]" in line and line.endswith("50 % [50, 50] |")
    assert "new 8 8 (± 0); old 0 0 (± 0)" in text
    pooled = table4_compare.compare([a, a], [b, b], ("ASAP", "ASAP"), ("new", "old"), replicates=200)
    assert "pooled (2 clips)" in pooled


def test_refuses_runs_that_are_not_paired(tmp_path):
    a = _table(tmp_path / "a.json", [[1.0, 1.0]])
    other_policy = _table(tmp_path / "b.json", [[0.7, 0.7]], vanilla_eg=125.0)
    with pytest.raises(table4_compare.ReportError, match="Vanilla's episodes differ"):
        table4_compare.compare([a], [other_policy], ("ASAP", "ASAP"), ("new", "old"), replicates=50)
    with pytest.raises(table4_compare.ReportError, match="one of each per clip"):
        table4_compare.compare([a, a], [a], ("ASAP", "ASAP"), ("new", "old"), replicates=50)
    with pytest.raises(SystemExit, match="two different names"):
        table4_compare.main(["--a", str(a), "--b", str(a), "--labels", "same,same"])


def test_raw_comparison_pairs_the_methods_own_figures_and_needs_only_vanilla(tmp_path):
    a = _table(tmp_path / "a.json", [[1.0, 1.0], [0.7, 0.7]])
    b = _table(tmp_path / "b.json", [[0.7, 0.7], [0.7, 0.7]])
    oracle = json.loads(b.read_text())
    oracle["robots"]["combined"]["results"]["Oracle"] = [_row([0.0, 0.0], [90.0, 90.0], [0.9, 0.9])] * 2
    b.write_text(json.dumps(oracle))  # another Oracle (its own selection): the raw comparison does not use it
    text = table4_compare.compare_raw([a], [b], ("ASAP", "ASAP"), ("selected", "last"), replicates=400)
    completion = next(x for x in text.splitlines() if "| completion |" in x)
    # Seeds 0.3 and 0 apart: the mean difference is 15 points; redrawn seeds give 0 to 30.
    assert "| 85% | 70% | +15% [+0%, +30%] |" in completion
    eg = next(x for x in text.splitlines() if "| Eg-mpjpe |" in x)
    assert "+0.0 mm [+0.0 mm, +0.0 mm]" in eg
    with pytest.raises(table4_compare.ReportError, match="Vanilla's episodes differ"):
        other = _table(tmp_path / "c.json", [[1.0, 1.0]] * 2, 125.0)
        table4_compare.compare_raw([a], [other], ("ASAP", "ASAP"), ("x", "y"), 50)
    # Two methods of two runs (e.g. ASAP-E against ASAP): the same figures under the second run's method name.
    renamed = json.loads(b.read_text())
    results = renamed["robots"]["combined"]["results"]
    results["ASAP-E"] = results.pop("ASAP")
    (tmp_path / "e.json").write_text(json.dumps(renamed))
    other_names = table4_compare.compare_raw([a], [tmp_path / "e.json"], ("ASAP", "ASAP-E"), ("selected", "last"), 400)
    assert other_names.splitlines()[0].startswith("# ASAP / ASAP-E")
    assert other_names.splitlines()[1:] == text.splitlines()[1:]
    with pytest.raises(table4_compare.ReportError, match="ASAP missing from the last run"):
        table4_compare.compare_raw([a], [tmp_path / "e.json"], ("ASAP", "ASAP"), ("selected", "last"), 50)
