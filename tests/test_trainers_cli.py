"""`asap-retarget train track`, `eval-policy` and `export-policy` end to end on a real ASAP clip (tiny budget)."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from conftest import asap_reference

from cli.main import main

CLIP = "kick_level2_filter"


def test_train_track_then_eval_and_export(tmp_path):
    run = tmp_path / "run"
    lib = asap_reference(CLIP)
    cli = CliRunner()
    args = [
        "train",
        "track",
        "--motion",
        str(lib),
        "-o",
        str(run),
        "--iterations",
        "1",
        "--num-envs",
        "4",
        "--threads",
        "1",
    ]
    result = cli.invoke(main, args)
    assert result.exit_code == 0, result.output
    config = json.loads((run / "config.json").read_text())
    assert config["env"]["sim"]["decimation"] == 4 and config["env"]["reward"]["tracking"][0]["fn"].startswith(
        "trainers.rewards."
    )
    rows = list(csv.DictReader((run / "learning_curve.csv").open()))
    assert len(rows) == 1 and int(rows[0]["env_steps"]) == 4 * 24
    # --iterations counts the run's total: the same command again trains nothing, a larger total resumes.
    result = cli.invoke(main, args)
    assert result.exit_code == 0 and "already holds 1 iterations" in result.output, result.output
    assert [r["iteration"] for r in csv.DictReader((run / "learning_curve.csv").open())] == ["1"]
    at = args.index("--iterations") + 1
    result = cli.invoke(main, [*args[:at], "2", *args[at + 1 :]])
    assert result.exit_code == 0 and "resumed from" in result.output
    assert [r["iteration"] for r in csv.DictReader((run / "learning_curve.csv").open())] == ["1", "2"]

    result = cli.invoke(main, ["eval-policy", str(run), "--motion", str(lib)])
    assert result.exit_code == 0, result.output
    assert "Eg-mpjpe" in result.output and "all" in result.output

    result = cli.invoke(main, ["export-policy", str(run), "-o", str(tmp_path / "policy.onnx")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "policy.onnx").stat().st_size > 100_000  # [512, 256, 128] MLP weights


def test_unknown_clip_and_missing_run_are_clear_errors(tmp_path):
    cli = CliRunner()
    lib = asap_reference(CLIP)
    result = cli.invoke(
        main,
        [
            "train",
            "track",
            "--motion",
            str(lib),
            "--clip",
            "nope",
            "-o",
            str(tmp_path / "r"),
            "--iterations",
            "1",
            "--num-envs",
            "2",
        ],
    )
    assert result.exit_code == 1 and "no clip 'nope'" in result.output
    result = cli.invoke(main, ["eval-policy", str(tmp_path / "missing"), "--motion", str(lib)])
    assert result.exit_code == 1 and "no such run folder" in result.output


def test_wall_clock_budget_and_termination_start(tmp_path):
    """--max-minutes stops after the first iteration past the budget; --termination-init-m sets the drift curriculum."""
    run = tmp_path / "run"
    lib = asap_reference(CLIP)
    args = [
        "train",
        "track",
        "--motion",
        str(lib),
        "-o",
        str(run),
        "--iterations",
        "50",
        "--num-envs",
        "2",
        "--threads",
        "1",
        "--max-minutes",
        "0.0001",
        "--termination-init-m",
        "0.2",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((run / "learning_curve.csv").open()))
    assert len(rows) == 1  # 6 ms of budget: one iteration, then stop (checkpoint written)
    assert (run / "model_last.pt").exists()
    curriculum = json.loads((run / "config.json").read_text())["env"]["curriculum"]
    assert curriculum["termination_distance_init_m"] == 0.2 and curriculum["termination_distance_min_m"] == 0.2
    assert float(rows[0]["termination_distance_m"]) <= 0.2


def test_a_run_folder_that_is_a_file_is_refused_in_one_line_before_any_work(tmp_path):
    taken = tmp_path / "notes.txt"
    taken.write_text("keep")
    missing_motion = str(tmp_path / "missing.pkl")  # an error naming it would mean the work had started
    for args in (
        ["train", "track", "--motion", missing_motion, "-o", str(taken)],
        ["train", "track", "--motion", missing_motion, "-o", str(taken / "run")],
        ["train", "finetune", "--policy", str(tmp_path), "--motion", missing_motion, "-o", str(taken)],
    ):
        result = CliRunner().invoke(main, args)
        lines = result.output.strip().splitlines()
        assert result.exit_code == 1 and len(lines) == 1, result.output
        assert str(taken) in lines[0] and "missing.pkl" not in lines[0]
        assert "not a folder" in lines[0]
    assert "give a new folder name, or the folder of a run to resume" in lines[0]
    assert taken.read_text() == "keep"


def test_a_second_training_into_a_folder_being_trained_is_refused_in_one_line(tmp_path):
    from retarget.errors import ConfigError
    from retarget.folder_lock import FolderLock
    from trainers.checkpoints import TRAIN_LOCK

    run = tmp_path / "run"
    run.mkdir()
    args = ["train", "track", "--motion", str(asap_reference(CLIP)), "-o", str(run), "--iterations", "1"]
    args += ["--num-envs", "2", "--threads", "1"]
    with FolderLock(run, TRAIN_LOCK, "training", ConfigError):  # a training running in this folder
        result = CliRunner().invoke(main, args)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert str(run) in lines[0] and "another training is writing to this folder" in lines[0]
    assert sorted(p.name for p in run.iterdir()) == [TRAIN_LOCK]  # nothing written
    result = CliRunner().invoke(main, args)  # the lock is gone with its holder
    assert result.exit_code == 0, result.output

    from trainers.finetune.finetune import finetune_policy

    tuned = tmp_path / "tuned"
    tuned.mkdir()
    with FolderLock(tuned, TRAIN_LOCK, "training", ConfigError), pytest.raises(ConfigError, match="another training"):
        finetune_policy(run, asap_reference(CLIP), tuned, sim="nominal", iterations=1, num_envs=2)
    assert sorted(p.name for p in tuned.iterdir()) == [TRAIN_LOCK]
