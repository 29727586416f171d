"""`asap-retarget collect --policy RUN --motion LIB.pkl --real PROFILE -o OUT.pkl` (ASAP stage 2: collection)."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console
from cli.options import policy_option, real_option, seed_option


@click.command()
@policy_option(
    required=False,
    help_text="Tracking run folder or checkpoint (default: the zero action, i.e. PD on the reference pose).",
)
@click.option("--motion", type=click.Path(path_type=Path), default=None, help="Motion library (.pkl) to track.")
@click.option(
    "--from-log",
    "log_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Convert a real-robot log (.npz, keys in the README) instead of rolling out.",
)
@click.option("--clip", default=None, help="Only this clip of the library.")
@real_option()
@click.option(
    "--episodes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Rollouts per clip (later ones start at random phases).",
)
@seed_option()
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Collection file (.pkl).")
def collect(
    run: Path | None,
    motion: Path | None,
    log_path: Path | None,
    clip: str | None,
    profile: str,
    episodes: int,
    seed: int,
    output: Path,
) -> None:
    """Roll a tracking policy out in a "real" G1 and record states and the actions sent (ASAP layout + `action`)."""
    from trainers.delta.collect import collect_to_file

    summary = collect_to_file(
        output, run=run, motion=motion, log_path=log_path, clip=clip, profile=profile, episodes=episodes, seed=seed
    )
    console.print(summary)
