"""`asap-retarget bench-log --real PROFILE -o log.npz`: record a gantry bench log from a "real" G1 profile."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console
from cli.options import real_option


@click.command("bench-log")
@real_option()
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Log file (.npz).")
@click.option("--duration", type=click.FloatRange(min=0.1), default=4.0, show_default=True, help="Length [s].")
def bench_log(profile: str, output: Path, duration: float) -> None:
    """Hang the G1 from a gantry, move four left-leg joints along the bench trajectory, log it (keys: README)."""
    from trainers.real.bench import record_bench_log, write_bench_log

    log = record_bench_log(profile, duration)
    write_bench_log(output, log)
    console.print(
        f"wrote {output}: {len(log.time_s)} ticks at {log.fps:g} Hz, joints {', '.join(log.bench_joints)}, "
        f"source {log.source}"
    )
