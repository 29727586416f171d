"""The downstream benchmark end to end on a tiny budget, and the pieces it relies on."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import asap_reference, smpl_clip

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_downstream
import downstream_sources
from downstream_report import at_common_budget, late_spread_rows

from retarget.asap_pkl import read_motion_library
from retarget.batch.record import file_sha256
from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.evaluate import eval_env_config, performed_motions, rollout_episodes
from trainers.metrics import SUCCESS_DISTANCE_M
from trainers.reference import load_references
from trainers.sim_model import build_training_model

CLIP = "squat_level1_filter"


def _table(lines: list[str], start: int) -> list[list[str]]:
    """The markdown table starting at line ``start``: cells of each line (header first, separator dropped)."""
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").replace("\\|", "¦").split("|")])
    return [rows[0]] + rows[2:]


def test_two_sources_end_to_end_each_row_from_its_own_file(tmp_path, capsys):
    out = tmp_path / "out"
    args = [
        "--clips",
        str(smpl_clip(CLIP)),
        "--sources",
        "asap",
        "ours",
        "--env-steps",
        "192",
        "--num-envs",
        "4",
        "--checkpoint-every",
        "1",
        "--episodes",
        "2",
        "--stages",
        "2",
        "--results",
        str(tmp_path / "results"),
        "--out",
        str(out),
    ]
    bench_downstream.main(args)
    summary = json.loads((out / "summary.json").read_text())
    runs = summary["runs"]
    assert [r["source"] for r in runs] == ["asap", "ours"]
    assert runs[0]["source_file"] == str(asap_reference(CLIP).resolve())
    for run in runs:
        file = Path(run["source_file"])
        assert run["source_sha256"] == hashlib.sha256(file.read_bytes()).hexdigest() == file_sha256(file)
        assert Path(run["trained_on"]) == file.resolve()  # the run's config.json names the file that was hashed
        assert [c["iteration"] for c in run["checkpoints"]] == [1, 2]
        assert [c["env_steps"] for c in run["checkpoints"]] == [96, 192]
        assert all(0.0 <= c["completion"] <= 1.0 and c["eg_mpjpe_mm"] > 0.0 for c in run["checkpoints"])
        assert all(np.isfinite(c["vs_human"]["limb_direction_error_deg"]) for c in run["checkpoints"])
    assert runs[0]["source_sha256"] != runs[1]["source_sha256"]
    # The official retarget's reference-vs-human figures are the `eval` ones quoted for that data (feet off the floor).
    assert runs[0]["reference_vs_human"]["stance_sole_abs_height_mm"] > 20.0
    assert runs[1]["reference_vs_human"]["stance_sole_abs_height_mm"] < 5.0

    lines = (out / "table.md").read_text().splitlines()
    header, *rows = _table(lines, next(i for i, line in enumerate(lines) if line.startswith("|")))
    assert len(rows) == 2 and all(len(r) == len(header) for r in rows)
    assert [r[header.index("source")] for r in rows] == ["asap", "ours"]
    assert [r[header.index("file sha256")] for r in rows] == [r["source_sha256"][:12] for r in runs]
    assert [r[header.index("env steps")] for r in rows] == ["192", "192"]
    assert len(_table(lines, next(i for i, line in enumerate(lines) if line.startswith("Mean ±")) + 2)) == 1 + 2
    curve_start = lines.index("Every evaluated checkpoint:") + 2
    assert len(_table(lines, curve_start)) == 1 + 4
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Each stage called `train track` once per run; a rerun trains nothing and re-reads the cached evaluations.
    log = tmp_path / "results" / smpl_clip(CLIP).stem / "ours" / "seed0" / "train.log"
    assert log.read_text().count("$ asap-retarget train track") == 2
    bench_downstream.main(args)
    assert log.read_text().count("$ asap-retarget train track") == 2
    assert json.loads((out / "summary.json").read_text())["runs"] == runs
    assert "ours seed 0: 192 env steps" in capsys.readouterr().out


def test_controller_source_is_the_whole_performed_squat(tmp_path):
    """The controller slot: the motion the controller layer's simulated G1 performed, a whole-clip library of its
    own (not our retarget's bytes), cached per results folder."""
    clip = smpl_clip(CLIP)
    path = downstream_sources.SOURCES["controller"].prepare(clip, tmp_path)
    ours = downstream_sources.SOURCES["ours"].prepare(clip, tmp_path)
    ((key, performed),) = read_motion_library(path).items()
    ((_, kinematic),) = read_motion_library(ours).items()
    assert key.endswith(clip.stem) and performed["dof"].shape == kinematic["dof"].shape
    assert file_sha256(path) != file_sha256(ours)
    assert 0.0 < np.abs(performed["dof"] - kinematic["dof"]).mean() < 0.1  # tracked closely, not copied [rad]
    stamp = path.stat().st_mtime_ns
    assert downstream_sources.SOURCES["controller"].prepare(clip, tmp_path) == path and path.stat().st_mtime_ns == stamp


def test_unknown_source_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        bench_downstream.main(["--sources", "mocap", "--results", str(tmp_path)])
    assert exc.value.code == 2 and "mocap" in capsys.readouterr().err


def test_unknown_clip_is_one_line_naming_the_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        bench_downstream.main(["--clips", "no_such_clip", "--results", str(tmp_path)])
    assert exc.value.code == 1 and "no_such_clip.npz" in capsys.readouterr().err


def test_milestones_are_checkpoint_multiples_ending_at_the_budget():
    settings = bench_downstream.TrainSettings(2_949_120, 256, 30, 1, 0.5, 8, 0)
    assert settings.iterations == 480 and settings.steps_per_iteration == 256 * 24
    assert bench_downstream.milestones(settings, 4) == [120, 240, 360, 480]
    odd = bench_downstream.TrainSettings(7 * 96, 4, 2, 1, 0.5, 8, 0)
    assert bench_downstream.milestones(odd, 3) == [4, 6, 7]
    assert bench_downstream.milestones(odd, 1) == [7]


def test_table_compares_runs_at_the_budget_all_of_them_reached():
    curve = lambda *steps: [{"env_steps": s} for s in steps]
    summary = {
        "runs": [
            {"clip": "a", "checkpoints": curve(10, 20, 30)},
            {"clip": "a", "checkpoints": curve(10, 20)},
            {"clip": "b", "checkpoints": curve(10, 20, 30)},
        ]
    }
    assert [c["env_steps"] for _, c in at_common_budget(summary)] == [20, 20, 30]


def test_late_spread_is_mean_and_population_sd_of_the_last_checkpoints():
    point = lambda steps, done, err: {
        "env_steps": steps,
        "completion": done,
        "eg_mpjpe_mm": err,
        "empjpe_mm": err,
        "vs_human": {"limb_direction_error_deg": None},
    }
    run = {
        "clip": "a",
        "source": "x",
        "seed": 0,
        "checkpoints": [point(10, 0.9, 1.0), point(20, 0.2, 10.0), point(30, 0.4, 20.0), point(40, 0.6, 30.0)],
    }
    (row,) = late_spread_rows({"runs": [run]}, last=3)
    assert row[3:] == ["20–40", "40.0 ± 16.3", "20.0 ± 8.2", "20.0 ± 8.2", "—"]


def test_performed_motion_is_the_evaluated_episode_played_through_the_fall():
    """Same seed, same randomized physics: the recorded pelvis path is eval-policy's until the 0.5 m failure,
    and it goes on to the clip's end after it."""
    cfg = TrackingEnvConfig()
    refs = load_references(asap_reference(CLIP), build_training_model(cfg.sim), load_robot_spec(cfg.sim.robot))
    policy = lambda obs: torch.zeros(obs.shape[0], 23)  # PD on the reference: falls within the clip
    motions = performed_motions(policy, refs, cfg, episodes_per_clip=2, seed=3, domain_rand=True)
    env = TrackingEnv(refs, 2, eval_env_config(cfg, domain_rand=True), seed=3)
    episodes = rollout_episodes(policy, env, np.zeros(2, dtype=int))
    full = int(np.ceil(refs[0].duration_s / env.policy_dt_s))
    for motion, (robot_pts, ref_pts) in zip(motions, episodes):
        assert motion.fps == pytest.approx(50.0) and motion.num_frames == full
        n = len(robot_pts)  # up to and including the failing frame
        assert n < full
        np.testing.assert_allclose(motion.root_pos_w[:n], robot_pts[:, 0], atol=1e-9)
        assert np.linalg.norm(robot_pts[-1] - ref_pts[-1], axis=-1).mean() > SUCCESS_DISTANCE_M  # it did fail
        np.testing.assert_allclose(motion.dof_pos[0], refs[0].dof_pos[0], atol=1e-6)  # starts on the reference
        np.testing.assert_allclose(np.linalg.norm(motion.root_quat_w, axis=1), 1.0, atol=1e-6)
