"""Deployment boundary: the fine-tuned policy is exported and run alone — no delta model in its graph or its files."""

from __future__ import annotations

import collections
import json
import shutil

import numpy as np
import onnx
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference
from onnx.reference import ReferenceEvaluator

from cli.main import main
from retarget.batch.record import file_sha256
from robots.registry import load_robot_spec
from trainers.delta.learned import DeltaMLP, LearnedDelta, LearnedDeltaConfig, joint_ids
from trainers.export import export_actor
from trainers.finetune.real_eval import evaluate_in_profile
from trainers.policy_io import load_policy
from trainers.real.model import build_real_model
from trainers.reference import load_references

CLIP = "kick_level2_filter"


def _shapes(model: onnx.ModelProto) -> collections.Counter:
    return collections.Counter(tuple(t.dims) for t in model.graph.initializer)


def _io(model: onnx.ModelProto) -> list[tuple[str, list]]:
    dims = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
    return [(v.name, dims(v)) for v in (*model.graph.input, *model.graph.output)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deploy")
    lib = asap_reference(CLIP)
    cli = CliRunner()
    out = cli.invoke(
        main,
        [
            "train",
            "track",
            "--motion",
            str(lib),
            "-o",
            str(tmp / "pre"),
            "--iterations",
            "1",
            "--num-envs",
            "4",
            "--threads",
            "1",
        ],
    )
    assert out.exit_code == 0, out.output
    torch.manual_seed(0)
    ids = joint_ids("ankles", load_robot_spec().joint_names)
    (tmp / "delta").mkdir()
    delta = LearnedDelta(
        DeltaMLP(52, ids.size, (128, 128)),
        ids,
        np.zeros(52),
        np.ones(52),
        LearnedDeltaConfig(joints="ankles", model="mlp", previous_target=False),
    ).save(tmp / "delta" / "delta.pt")
    out = cli.invoke(
        main,
        [
            "train",
            "finetune",
            "--policy",
            str(tmp / "pre"),
            "--delta",
            str(delta),
            "--motion",
            str(lib),
            "-o",
            str(tmp / "ft"),
            "--iterations",
            "2",
            "--threads",
            "1",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "from iteration 1 to 3" in out.output
    return tmp, lib, delta


def test_finetune_starts_from_the_pretrained_policy_and_records_the_delta(runs):
    tmp, _, delta = runs
    config = json.loads((tmp / "ft" / "config.json").read_text())
    rec = config["finetune"]
    assert rec["sim"] == "delta" and rec["delta_sha256"] == file_sha256(delta)
    assert rec["base_sha256"] == file_sha256(tmp / "pre" / "model_last.pt") and rec["target_iteration"] == 3
    assert config["env"] == json.loads((tmp / "pre" / "config.json").read_text())["env"]  # same rewards and obs
    assert load_policy(tmp / "ft").iteration == 3
    # The curricula's state travels with the checkpoint: the fine-tuning carries on from the pre-trained values.
    pre, ft = load_policy(tmp / "pre"), load_policy(tmp / "ft")
    raw = torch.load(tmp / "pre" / "model_last.pt", weights_only=True)
    assert pre.penalty_scale == raw["penalty_scale"] and pre.termination_distance_m == raw["termination_distance_m"]
    assert 0.0 < pre.penalty_scale <= 1.0 and 0.0 < ft.penalty_scale <= 1.0 and ft.termination_distance_m > 0.0
    # Nothing in the fine-tuned run folder is (or contains) the delta model.
    delta_bytes = delta.read_bytes()
    assert all(p.read_bytes() != delta_bytes for p in (tmp / "ft").iterdir())
    payload = torch.load(tmp / "ft" / "model_last.pt", weights_only=True)
    assert all(k.startswith(("actor.", "critic", "log_std")) for k in payload["model"])


def test_exported_graph_has_no_delta_and_actions_do_not_depend_on_delta_files(runs):
    tmp, lib, delta = runs
    export_actor(load_policy(tmp / "pre"), tmp / "pre.onnx")
    export_actor(load_policy(tmp / "ft"), tmp / "ft.onnx")
    pre, ft = onnx.load(tmp / "pre.onnx"), onnx.load(tmp / "ft.onnx")
    num_obs = load_policy(tmp / "ft").policy.actor.net[0].in_features
    assert _io(ft) == _io(pre) == [("obs", ["batch", num_obs]), ("actions", ["batch", 23])]
    # Same tensors (the actor's), none of the delta MLP's (52→128, 128→128, 128→4).
    assert _shapes(ft) == _shapes(pre)
    assert not {(128, 52), (52, 128), (128, 128), (4, 128), (128, 4)} & set(_shapes(ft))
    assert abs((tmp / "ft.onnx").stat().st_size / (tmp / "pre.onnx").stat().st_size - 1.0) < 0.01
    assert sorted({n.op_type for n in ft.graph.node}) == sorted({n.op_type for n in pre.graph.node})

    obs = torch.as_tensor(np.random.default_rng(0).normal(size=(8, num_obs)), dtype=torch.float32)
    with torch.no_grad():
        with_delta = load_policy(tmp / "ft").policy.act_inference(obs).numpy()
        vanilla = load_policy(tmp / "pre").policy.act_inference(obs).numpy()
    assert np.abs(with_delta - vanilla).max() > 1e-4  # fine-tuning changed the policy
    shutil.move(delta.parent, tmp / "elsewhere")  # the delta files are gone
    try:
        with torch.no_grad():
            without = load_policy(tmp / "ft").policy.act_inference(obs).numpy()
        np.testing.assert_array_equal(without, with_delta)
        onnx_actions = ReferenceEvaluator(ft).run(None, {"obs": obs.numpy()})[0]
        np.testing.assert_allclose(onnx_actions, with_delta, atol=1e-5)
        # The deployment evaluation ("real" profile, policy alone) runs without them too.
        loaded = load_policy(tmp / "ft")
        refs = load_references(lib, build_real_model("nominal"), load_robot_spec())
        overall, _ = evaluate_in_profile(loaded.policy.act_inference, refs, "soft_ankles_delay", loaded.env_cfg)
        assert overall.num_episodes == 1 and overall.num_frames > 2 and np.isfinite(overall.eg_mpjpe_mm)
    finally:
        shutil.move(tmp / "elsewhere", delta.parent)


def test_finetune_needs_its_inputs(runs):
    tmp, lib, _ = runs
    cli = CliRunner()
    base = ["train", "finetune", "--policy", str(tmp / "pre"), "--motion", str(lib), "--iterations", "1"]
    out = cli.invoke(main, [*base, "-o", str(tmp / "x")])
    assert out.exit_code == 1 and "needs --delta" in out.output
    out = cli.invoke(main, [*base, "-o", str(tmp / "y"), "--sim", "real"])
    assert out.exit_code == 1 and "needs --real" in out.output
    out = cli.invoke(main, [*base, "-o", str(tmp / "z"), "--delta", str(tmp / "nope.pt")])
    assert out.exit_code == 1 and "nope.pt: no such delta model file" in out.output
    assert not any((tmp / d).exists() for d in ("x", "y", "z"))  # nothing written on bad input
