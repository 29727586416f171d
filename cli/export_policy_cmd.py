"""`asap-retarget export-policy --policy RUN -o policy.onnx`: the actor for deployment, with a JSON sidecar."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console
from cli.options import policy_option, resolve_policy


@click.command(name="export-policy")
@policy_option(required=False)
@click.argument("run_arg", metavar="[RUN]", type=click.Path(path_type=Path), required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="policy.onnx (ONNX) or policy.pt (TorchScript).",
)
def export_policy(run: Path | None, run_arg: Path | None, output: Path) -> None:
    """Export the actor of the policy (a run folder or checkpoint) to ONNX or TorchScript.

    The policy may also be given as the positional RUN (the old form)."""
    from trainers.export import export_actor
    from trainers.policy_io import load_policy

    if output.suffix not in (".onnx", ".pt"):
        raise click.BadParameter("the output must end in .onnx or .pt", param_hint="--output")
    path = export_actor(load_policy(resolve_policy(run, run_arg)), output)
    console.print(f"wrote {path} and {path.name}.json (joint order, observation layout, gains)")
