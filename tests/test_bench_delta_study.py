"""The Δa study end to end on a tiny budget in a MuJoCo "real" robot: two variants, one seed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import asap_reference

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_delta_study
from delta_study_variants import Setting, VariantError, parse_setting, variants

from retarget.batch.record import file_sha256
from robots.registry import load_robot_spec
from trainers.delta.collection import read_collection
from trainers.delta.defaults import DEFAULT_MODEL
from trainers.delta.learned import JOINT_SETS, LearnedDelta
from trainers.delta.one_step import previous_targets
from trainers.delta.ppo_fit import DeltaPPOConfig
from trainers.observations import rotate_to_base

TINY = ["--real", "combined", "--seeds", "0", "--num-envs", "4", "--eval-episodes", "2"]
TINY += ["--default", "rollouts=2,iterations=1", "--variants", "joints=ankles"]


@pytest.fixture(scope="module")
def study(tmp_path_factory, tiny_kick_policy):
    """A one-iteration policy of the kick and the study of two variants on it."""
    tmp = tmp_path_factory.mktemp("delta_study")
    kick = str(asap_reference("kick_level2_filter"))
    args = ["--policy", str(tiny_kick_policy), "--motion", kick, *TINY, "-o", str(tmp / "s")]
    return tmp / "s", args, bench_delta_study.main(args)


def test_every_variant_has_a_row_with_its_shares_and_costs(study):
    out, _, _ = study
    robot = json.loads((out / "study.json").read_text())["robots"]["combined"]
    assert list(robot["variants"]) == ["default", "joints=ankles"]
    assert len(robot["Vanilla"]) == 1 and len(robot["Oracle"]) == 1  # evaluated once, shared by the variants
    table = (out / "study.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and "variant |" not in line]
    names = [r.split(" | ")[0].strip("| ") for r in rows]
    assert names == ["Vanilla", "Oracle", "default", "joints=ankles", "joints=ankles"]  # metrics, then vs default
    for rec in robot["variants"].values():
        assert set(rec["gap_share_ci"]) == {"success_rate", "eg_mpjpe_mm", "completion"}
        assert rec["fit"]["cpu_s"] > 0 and rec["finetune_cost"]["s0"]["cpu_s"] > 0
        (row,) = rec["results"]
        assert row["eg_mpjpe_mm"] == pytest.approx(
            np.average(row["episodes"]["eg_mpjpe_mm"], weights=row["episodes"]["frames"])
        )
    assert robot["variants"]["default"]["vs_default"] is None
    assert set(robot["variants"]["joints=ankles"]["vs_default"]) == {"success_rate", "eg_mpjpe_mm", "completion"}


def test_a_variants_setting_reaches_its_fit_and_fine_tuning(study):
    out, _, summary = study
    robot = summary["robots"]["combined"]
    assert robot["variants"]["default"]["fit"]["file"] == {
        "kind": DEFAULT_MODEL,
        "joints": 23,
        "previous_target": True,
    }
    assert robot["variants"]["joints=ankles"]["fit"]["file"]["joints"] == 4
    trajs = list(read_collection(out / "combined" / "collect.pkl").values())
    assert len(trajs) == 2  # the default's rollouts, the most any variant needs
    assert robot["variants"]["default"]["fit"]["transitions"] == sum(t.num_frames - 1 for t in trajs)
    names = load_robot_spec().joint_names
    ankles = [i for i, n in enumerate(names) if n.endswith(JOINT_SETS["ankles"])]
    folder = out / "combined" / "variants" / "joints-ankles"
    delta = LearnedDelta.load(folder / "delta.pt")
    tr = trajs[0]
    ang_b = rotate_to_base(tr.root_quat_w, tr.root_ang_vel_w)
    d = delta.delta_targets(tr.pd_target, tr.dof_pos, tr.dof_vel, tr.root_quat_w, ang_b, previous_targets(tr))
    assert np.abs(d[:, ankles]).max() > 0 and not np.delete(d, ankles, axis=1).any()  # acts on the ankles only
    record = json.loads((folder / "ASAP_s0" / "config.json").read_text())["finetune"]
    assert record["delta_sha256"] == file_sha256(folder / "delta.pt") and record["iterations"] == 1
    assert sorted(p.name for p in (out / "combined" / "labels").iterdir()) == ["all", "ankles"]


def test_a_rerun_keeps_finished_variants(study, capsys):
    out, args, summary = study
    stamps = {p: p.stat().st_mtime_ns for p in (out / "combined").rglob("*.json")}
    again = bench_delta_study.main(args)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[combined] ")]
    assert [line.split(":")[0].split()[-1] for line in lines] == ["default", "joints=ankles"]  # one per variant
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # nothing fitted, fine-tuned or evaluated again
    assert (
        again["robots"]["combined"]["variants"]["joints=ankles"]["results"]
        == (summary["robots"]["combined"]["variants"]["joints=ankles"]["results"])
    )


def test_a_ppo_delta_is_fitted_with_the_stated_budget(study, tmp_path):
    out, _, _ = study
    trajs = list(read_collection(out / "combined" / "collect.pkl").values())
    ppo = DeltaPPOConfig(num_envs=2, iterations=1)
    fit = bench_delta_study.fit_delta(out / "combined", trajs, Setting(rollouts=1, model="ppo"), ppo, tmp_path)
    assert fit["file"] == {"kind": "mlp", "joints": 23, "previous_target": False}  # PPO's actor is an MLP
    assert fit["env_steps"] == 1 * 2 * ppo.ppo.num_steps_per_env and fit["fitting_frames"] == trajs[0].num_frames


def test_settings_and_bad_variants():
    base = Setting()
    assert parse_setting("rollouts=2,iterations=1", base) == Setting(rollouts=2, iterations=1)
    assert list(variants(base, ["joints=ankles", f"rollouts={base.rollouts}", "model=ppo"])) == [
        "default",
        "joints=ankles",
        "model=ppo",
    ]
    for spec, message in (("joints=toes", "joints must be one of ankles, legs, all"), ("speed=2", "expected FACTOR")):
        with pytest.raises(VariantError, match=message):
            base.changed(spec)
    with pytest.raises(SystemExit, match="^bench_delta_study: variant 'rollouts=0': rollouts must be a positive"):
        bench_delta_study.main(["--policy", "x", "--motion", "y", "--variants", "rollouts=0", "-o", "z"])
