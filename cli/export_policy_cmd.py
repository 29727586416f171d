"""`asap-retarget export-policy RUN -o policy.onnx`: the actor for deployment, with a JSON sidecar."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console


@click.command(name="export-policy")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True,
              help="policy.onnx (ONNX) or policy.pt (TorchScript).")  # fmt: skip
def export_policy(run: Path, output: Path) -> None:
    """Export the actor of the policy in RUN (folder or checkpoint) to ONNX or TorchScript."""
    from trainers.export import export_actor
    from trainers.policy_io import load_policy

    if output.suffix not in (".onnx", ".pt"):
        raise click.BadParameter("the output must end in .onnx or .pt", param_hint="--output")
    path = export_actor(load_policy(run), output)
    console.print(f"wrote {path} and {path.name}.json (joint order, observation layout, gains)")
