"""`asap-retarget loop`: every stage's artefact and provenance (hash chain), skipping and resuming."""

from __future__ import annotations

import json

from click.testing import CliRunner
from conftest import asap_reference

from cli.main import main
from retarget.batch.record import file_sha256

CLIP = "kick_level2_filter"
KEY = f"0-motions_raw_tairantestbed_smpl_video_{CLIP}_amass"
ARTEFACTS = {
    "pretrain": "pretrain/model_last.pt",
    "collect": "collect.pkl",
    "fit_delta": "delta.pt",
    "finetune": "finetune/model_last.pt",
    "evaluate": "evaluation.json",
}


def test_loop_writes_every_stage_with_provenance_then_skips_and_resumes(tmp_path):
    lib, run = asap_reference(CLIP), tmp_path / "run"
    args = [
        "loop",
        "--motion",
        str(lib),
        "--clip",
        KEY,
        "--real",
        "soft_ankles_delay",
        "-o",
        str(run),
        "--rounds",
        "1",
        "--pretrain-iterations",
        "1",
        "--finetune-iterations",
        "1",
        "--num-envs",
        "4",
        "--episodes",
        "1",
        "--epochs",
        "20",
    ]
    cli = CliRunner()
    out = cli.invoke(main, args)
    assert out.exit_code == 0, out.output
    assert [f"[{k}/5] {s}" in out.output for k, s in enumerate(ARTEFACTS, 1)] == [True] * 5
    assert out.output.count("done in") == 5 and "Vanilla" in out.output and "ASAP" in out.output

    prov = json.loads((run / "provenance.json").read_text())["stages"]
    assert list(prov) == list(ARTEFACTS)
    sha = {s: file_sha256(run / a) for s, a in ARTEFACTS.items()}
    for stage, rel in ARTEFACTS.items():
        assert prov[stage]["artefact"] == {"path": str((run / rel).resolve()), "sha256": sha[stage]}
    lib_sha = file_sha256(lib)
    # The chain: which policy was rolled out, which data fitted Δa, which simulator and policy got it,
    # what was evaluated.
    assert (
        prov["pretrain"]["inputs"]["motion"]["sha256"] == lib_sha
        and prov["pretrain"]["inputs"]["simulator"] == "nominal"
    )
    assert prov["collect"]["inputs"]["policy"]["sha256"] == sha["pretrain"]
    assert prov["collect"]["inputs"]["motion_ids"] == [KEY]
    assert prov["collect"]["inputs"]["simulator"] == "real:soft_ankles_delay"
    assert prov["fit_delta"]["inputs"]["collection"]["sha256"] == sha["collect"]
    ft = prov["finetune"]["inputs"]
    assert (ft["policy"]["sha256"], ft["delta"]["sha256"], ft["simulator"]) == (
        sha["pretrain"],
        sha["fit_delta"],
        "nominal+delta",
    )
    ev = prov["evaluate"]["inputs"]
    assert (ev["vanilla"]["sha256"], ev["finetuned"]["sha256"]) == (sha["pretrain"], sha["finetune"])
    assert ev["simulator"] == "real:soft_ankles_delay"
    assert prov["pretrain"]["policy_iteration"] == 1 and prov["finetune"]["policy_iteration"] == 2
    evaluation = json.loads((run / "evaluation.json").read_text())
    assert set(evaluation["metrics"]) == {"Vanilla", "ASAP"}
    assert all(m["num_episodes"] == 1 and m["eg_mpjpe_mm"] > 0 for m in evaluation["metrics"].values())
    config = json.loads((run / "finetune" / "config.json").read_text())
    assert config["finetune"]["delta_sha256"] == sha["fit_delta"]

    # A second run skips every stage and rewrites nothing.
    mtimes = {s: (run / a).stat().st_mtime_ns for s, a in ARTEFACTS.items()}
    out = cli.invoke(main, args)
    assert out.exit_code == 0, out.output
    assert out.output.count("skipped") == 5 and "done in" not in out.output
    assert {s: (run / a).stat().st_mtime_ns for s, a in ARTEFACTS.items()} == mtimes

    # A lost artefact redoes its stage and what depends on it only if its inputs changed.
    (run / "evaluation.json").unlink()
    out = cli.invoke(main, args)
    assert out.exit_code == 0, out.output
    assert out.output.count("skipped") == 4 and "[5/5] evaluate  done" in out.output
    assert json.loads((run / "evaluation.json").read_text()) == evaluation  # deterministic evaluation

    # A larger fine-tuning budget resumes stage 3 from its checkpoint (iteration 2 → 3) and re-evaluates.
    out = cli.invoke(main, [*args[:-8], "--finetune-iterations", "2", *args[-6:]])
    assert out.exit_code == 0, out.output
    assert out.output.count("skipped") == 3 and "[4/5] finetune  done" in out.output
    prov = json.loads((run / "provenance.json").read_text())["stages"]
    assert prov["finetune"]["policy_iteration"] == 3 and prov["evaluate"]["inputs"]["finetuned"][
        "sha256"
    ] == file_sha256(run / "finetune" / "model_last.pt")


def test_loop_rejects_an_unknown_profile_before_any_work(tmp_path):
    out = CliRunner().invoke(
        main,
        ["loop", "--motion", str(asap_reference(CLIP)), "--clip", KEY, "--real", "moon", "-o", str(tmp_path / "r")],
    )
    assert out.exit_code == 1 and "unknown real profile 'moon'" in out.output
    assert not (tmp_path / "r").exists()


def test_loop_fine_tunes_anew_when_its_trust_region_or_its_delta_changes(tmp_path):
    run = tmp_path / "run"
    args = ["loop", "--motion", str(asap_reference(CLIP)), "--clip", KEY, "--real", "soft_ankles_delay", "-o", str(run)]
    args += ["--pretrain-iterations", "1", "--finetune-iterations", "2", "--num-envs", "4", "--episodes", "1"]
    args += ["--rounds", "1"]
    cli = CliRunner()
    out = cli.invoke(main, [*args, "--trust-region-kl", "0.01"])
    assert out.exit_code == 0, out.output
    finetune = json.loads((run / "finetune" / "config.json").read_text())["finetune"]
    assert finetune["trust_region"]["max_kl"] == 0.01
    prov = json.loads((run / "provenance.json").read_text())["stages"]
    assert prov["finetune"]["inputs"]["trust_region_kl"] == 0.01 and "trust_region_kl" not in prov["pretrain"]["inputs"]
    # Without the bound the fine-tuning is another one: it and what follows run again, the earlier stages are kept.
    out = cli.invoke(main, args)
    assert out.exit_code == 0 and out.output.count("done in") == 2, out.output
    assert json.loads((run / "finetune" / "config.json").read_text())["finetune"]["trust_region"] is None
    # Another Δa (other joints): refitted, and the fine-tuning starts again against it (not resumed, finished, from
    # the one fitted before).
    before = file_sha256(run / "finetune" / "model_last.pt")
    out = cli.invoke(main, [*args, "--joints", "ankles"])
    assert out.exit_code == 0 and out.output.count("done in") == 3, out.output
    record = json.loads((run / "finetune" / "config.json").read_text())["finetune"]
    assert record["delta_sha256"] == file_sha256(run / "delta.pt")
    assert file_sha256(run / "finetune" / "model_last.pt") != before  # a resumed, finished run would keep its weights


def test_loop_with_selection_evaluates_the_checkpoint_it_deployed(tmp_path):
    lib, run = asap_reference(CLIP), tmp_path / "run"
    args = ["loop", "--motion", str(lib), "--clip", KEY, "--real", "soft_ankles_delay", "-o", str(run)]
    args += ["--pretrain-iterations", "1", "--finetune-iterations", "2", "--num-envs", "4", "--episodes", "1"]
    args += ["--epochs", "20", "--select-every", "1", "--select-episodes", "2", "--rounds", "1"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    prov = json.loads((run / "provenance.json").read_text())["stages"]
    assert prov["finetune"]["inputs"]["selection"] == {"every": 1, "episodes": 2, "seed": 7}
    deployed = run / "finetune" / "model_deployed.pt"
    assert prov["evaluate"]["inputs"]["finetuned"] == {"path": str(deployed.resolve()), "sha256": file_sha256(deployed)}
    record = json.loads((run / "finetune" / "selection.json").read_text())
    assert [c["iteration"] for c in record["candidates"]] == [1, 2, 3]
    metrics = json.loads((run / "evaluation.json").read_text())["metrics"]
    if record["chosen_iteration"] == 1:  # the pre-trained checkpoint deployed: the same policy on the same episodes
        assert metrics["ASAP"] == metrics["Vanilla"]


def test_loop_second_round_collects_with_the_fine_tuned_policy_and_refits_on_both_rounds(tmp_path):
    lib, run = asap_reference(CLIP), tmp_path / "run"
    args = ["loop", "--motion", str(lib), "--clip", KEY, "--real", "soft_ankles_delay", "-o", str(run)]
    args += ["--pretrain-iterations", "1", "--finetune-iterations", "1", "--num-envs", "4", "--episodes", "1"]
    args += ["--epochs", "20"]
    cli = CliRunner()
    out = cli.invoke(main, args)  # two rounds: the default
    assert out.exit_code == 0, out.output
    assert out.output.count("done in") == 8 and "[8/8] evaluate" in out.output
    prov = json.loads((run / "provenance.json").read_text())["stages"]
    assert list(prov) == [*list(ARTEFACTS)[:-1], "collect_r2", "fit_delta_r2", "finetune_r2", "evaluate"]
    r1, r2 = run / "finetune" / "model_last.pt", run / "round2" / "finetune" / "model_last.pt"
    # Round 2 rolls round 1's fine-tuned policy out, fits on both rounds' rollouts and fine-tunes that policy again.
    assert prov["collect_r2"]["inputs"]["policy"]["sha256"] == file_sha256(r1)
    fitted_on = [c["sha256"] for c in prov["fit_delta_r2"]["inputs"]["collections"]]
    assert fitted_on == [file_sha256(run / "collect.pkl"), file_sha256(run / "round2" / "collect.pkl")]
    assert prov["fit_delta_r2"]["trajectories"] == 2 and prov["fit_delta"]["trajectories"] == 1
    ft = prov["finetune_r2"]["inputs"]
    delta_r2 = file_sha256(run / "round2" / "delta.pt")
    assert (ft["policy"]["sha256"], ft["delta"]["sha256"]) == (file_sha256(r1), delta_r2)
    assert prov["finetune"]["policy_iteration"] == 2 and prov["finetune_r2"]["policy_iteration"] == 3
    assert prov["evaluate"]["inputs"]["finetuned"]["sha256"] == file_sha256(r2)
    assert file_sha256(run / "delta.pt") != file_sha256(run / "round2" / "delta.pt")

    # One round: round 1 is complete (skipped), only the evaluation changes (round 1's policy).
    out = cli.invoke(main, [*args, "--rounds", "1"])
    assert out.exit_code == 0, out.output
    assert out.output.count("skipped") == 4 and "[5/5] evaluate  done" in out.output
    ev = json.loads((run / "provenance.json").read_text())["stages"]["evaluate"]["inputs"]
    assert ev["finetuned"]["sha256"] == file_sha256(r1)
