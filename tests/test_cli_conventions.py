"""One set of CLI conventions across every command (cli/options.py), with old spellings as hidden aliases."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner
from conftest import smpl_clip

from cli.main import main
from trainers.config import SimConfig
from trainers.real.profiles import DEFAULT_REAL_PROFILE, PROFILES


def _commands(group: click.Group = main, prefix: str = "") -> dict[str, click.Command]:
    found = {}
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            found.update(_commands(cmd, f"{prefix}{name} "))
        else:
            found[f"{prefix}{name}"] = cmd
    return found


COMMANDS = _commands()


def _option(cmd: click.Command, flag: str) -> click.Option | None:
    return next((p for p in cmd.params if isinstance(p, click.Option) and flag in p.opts), None)


def test_every_command_is_found():
    assert len(COMMANDS) >= 23 and {"retarget", "batch", "filter", "train track", "delta fit", "sim2sim"} <= set(
        COMMANDS
    )


@pytest.mark.parametrize("flag", ["--seed", "--threads", "--num-envs", "--real", "--policy", "--robot", "--json"])
def test_shared_options_have_help_and_one_default(flag):
    defaults = {}
    for name, cmd in COMMANDS.items():
        opt = _option(cmd, flag)
        if opt is None:
            continue
        assert opt.help, f"{name} {flag} has no help"
        if not opt.required:
            defaults[name] = opt.default
    assert defaults, flag
    if flag == "--threads":  # `train finetune`: the pre-trained run's (None), as finetune_policy
        assert set(defaults.values()) == {SimConfig.num_threads, None} and defaults["train finetune"] is None
    if flag == "--seed":
        assert set(defaults.values()) == {0}
    if flag == "--real":  # required in `loop`; only for --sim real in `train finetune`
        assert set(defaults.values()) - {None} == {DEFAULT_REAL_PROFILE} and DEFAULT_REAL_PROFILE in PROFILES
    if flag == "--robot":  # made from a human clip: g1_23dof; read from a robot file: the robot it names
        assert set(defaults.values()) == {"g1_23dof", None}
        assert (
            defaults["eval"] is None and defaults["retarget"] == defaults["filter"] == defaults["batch"] == "g1_23dof"
        )


def test_every_command_takes_the_size_limits_after_its_name():
    for flag in ("--max-frames", "--max-elements"):
        group = _option(main, flag)
        assert group is not None and group.help
        for name, cmd in COMMANDS.items():
            opt = _option(cmd, flag)
            assert opt is not None, (name, flag)
            assert (opt.help, opt.callback, opt.expose_value) == (group.help, group.callback, False), name


def test_outputs_go_to_dash_o_or_json():
    for name, cmd in COMMANDS.items():
        for p in cmd.params:
            if isinstance(p, click.Option) and any(o.startswith(("--out", "-o")) for o in p.opts):
                assert p.opts == ["-o", "--output"] or name == "convert", (name, p.opts)  # convert: issue of its own


def test_filter_takes_the_retarget_options_batch_takes():
    retarget_flags = {"--robot", "--fps", "--body-model"}
    for name in ("retarget", "batch", "filter"):
        assert retarget_flags <= {o for p in COMMANDS[name].params for o in getattr(p, "opts", [])}, name


def test_old_spellings_work_but_are_hidden():
    sim2sim_help = CliRunner().invoke(main, ["sim2sim", "--help"]).output
    assert "--policy" in sim2sim_help and "--onnx" not in sim2sim_help
    assert _option(COMMANDS["sim2sim"], "--onnx") is _option(COMMANDS["sim2sim"], "--policy")
    ctx = COMMANDS["sim2sim"].make_context("sim2sim", ["--onnx", "p.onnx", "--motion", "m.pkl"])
    assert str(ctx.params["policy_path"]) == "p.onnx"
    for name in ("eval-policy", "export-policy"):  # the positional RUN of old scripts
        assert "--policy" in CliRunner().invoke(main, [name, "--help"]).output
    out = CliRunner().invoke(main, ["export-policy", "-o", "x.onnx"])
    assert out.exit_code == 2 and "--policy" in out.output
    out = CliRunner().invoke(main, ["export-policy", "a", "--policy", "b", "-o", "x.onnx"])
    assert out.exit_code == 2 and "give the policy once" in out.output


def test_json_alone_prints_and_with_a_path_writes(tmp_path):
    runner = CliRunner()
    src, out_dir = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "squat.npz").write_bytes(smpl_clip("squat_level1_filter").read_bytes())
    batch = runner.invoke(
        main, ["batch", str(src), "-o", str(out_dir), "--quiet", "--workers", "1", "--executor", "inline"]
    )
    assert batch.exit_code == 0, batch.output
    printed = runner.invoke(main, ["summary", str(out_dir), "--json"])
    assert printed.exit_code == 0, printed.output
    doc = json.loads(printed.output)
    written = runner.invoke(main, ["summary", str(out_dir), "--json", str(tmp_path / "s.json")])
    assert written.exit_code == 0 and "wrote" in written.output
    assert json.loads((tmp_path / "s.json").read_text()) == doc
