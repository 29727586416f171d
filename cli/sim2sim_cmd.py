"""`asap-retarget sim2sim --policy POLICY.onnx --motion LIB.pkl`: the exported policy in a plain MuJoCo loop."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console
from cli.options import policy_option, real_option


@click.command()
@policy_option(
    "policy_path",
    hidden_aliases=("--onnx",),
    help_text="Exported policy (.onnx, from export-policy), with its sidecar POLICY.onnx.json beside it.",
)
@click.option("--motion", type=click.Path(path_type=Path), required=True, help="Motion library (.pkl).")
@click.option("--clip", default=None, help="Clip to track (required when the library holds several).")
@real_option()
@click.option("--pd-hz", type=float, default=1000.0, show_default=True, help="PD loop and physics rate [Hz].")
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="Stop after N policy steps.")
def sim2sim(policy_path, motion, clip, profile, pd_hz, max_steps) -> None:
    """Run an exported policy with its own explicit PD loop (deployment path); print the paper's metrics."""
    from retarget.errors import MotionFileError
    from robots.registry import load_robot_spec
    from trainers.config import SimConfig
    from trainers.reference import load_references
    from trainers.sim2sim import Sim2SimConfig, Sim2SimRunner, load_onnx_policy, load_sidecar
    from trainers.sim_model import build_training_model

    info = load_sidecar(policy_path)
    policy = load_onnx_policy(policy_path)
    sim = SimConfig(robot=info["sim"]["robot"])
    refs = load_references(motion, build_training_model(sim), load_robot_spec(sim.robot), clip)
    if len(refs) != 1:
        raise MotionFileError(motion, f"holds {len(refs)} clips; choose one with --clip")
    runner = Sim2SimRunner(info, refs[0], Sim2SimConfig(pd_hz=pd_hz, profile=profile))
    result = runner.run(policy, max_steps)
    m = result.metrics
    console.print(
        f"{refs[0].name} ({profile}, PD {pd_hz:g} Hz, policy {1 / runner.policy_dt_s:g} Hz): {result.steps} steps; "
        f"success {m.success_rate:.0%}, Eg-mpjpe {m.eg_mpjpe_mm:.1f} mm, Empjpe {m.empjpe_mm:.1f} mm, "
        f"Evel {m.evel_mm_per_frame:.2f} mm/frame, Eacc {m.eacc_mm_per_frame2:.2f} mm/frame²",
        highlight=False,
    )
