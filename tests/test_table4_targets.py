"""bench/table4_targets.py on the real two-round Table IV runs: shares, spreads and the pooled lead as the issue
defines them, and the verdicts they give."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import table4_targets
from table4_stats import episode_samples, gap_share, share_difference

TWO_ROUNDS = REPO / "docs/table4/two_rounds"
KICK2 = TWO_ROUNDS / "kick2_combined.json"
SQUAT = TWO_ROUNDS / "squat_combined.json"


def _load(path: Path) -> dict:
    return {**json.loads(path.read_text()), "path": str(path)}


def test_shares_spread_and_lead_are_the_issue_definitions():
    table = _load(KICK2)
    results = table["robots"]["combined"]["results"]
    (check,) = table4_targets.check_clips([table], "ASAP r2", replicates=50)
    rates = [row["success_rate"] for row in results["ASAP r2"]]
    assert check.spread == pytest.approx(np.std(rates))  # population std over the six seeds
    for key in ("eg_mpjpe_mm", "completion"):
        clip = {n: episode_samples(rows, key) for n, rows in results.items()}
        assert check.shares[key].share == pytest.approx(gap_share([clip], "ASAP r2", replicates=1).share)
    n, lead = table4_targets.pooled_lead([table, _load(SQUAT)], "combined", "ASAP r2", "SysID r2", replicates=50)
    assert n == 2
    clips = [
        {n: episode_samples(rows, "completion") for n, rows in _load(p)["robots"]["combined"]["results"].items()}
        for p in (KICK2, SQUAT)
    ]
    want = share_difference(clips, "ASAP r2", "SysID r2", replicates=1).share
    assert lead["completion"].share == pytest.approx(want)


def test_verdicts_spread_miss_and_no_gap(tmp_path, capsys):
    assert table4_targets.main([str(KICK2), str(SQUAT), "--replicates", "50"]) == 0
    out = capsys.readouterr().out
    assert "| yes | 110 % [" in out and "every judged target met: yes" in out
    data = json.loads(KICK2.read_text())
    rows = data["robots"]["combined"]["results"]
    for i, row in enumerate(rows["ASAP r2"]):
        row["success_rate"] = float(i % 2)  # seeds that all win or all lose: ± 50 points
    rows["Oracle"] = [rows["Vanilla"][0]] * len(rows["Oracle"])  # an Oracle that learned nothing: no gap
    (tmp_path / "t.json").write_text(json.dumps(data))
    assert table4_targets.main([str(tmp_path / "t.json"), "--replicates", "50"]) == 0
    out = capsys.readouterr().out
    assert "| — | no gap | — | no gap | ± 50 | no |" in out and "every judged target met: no" in out
    assert table4_targets.main([str(KICK2), "--method", "ASAP r3"]) == 1
    assert "no table has ASAP r3" in capsys.readouterr().err
