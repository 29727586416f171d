"""`asap-retarget summary OUTDIR`: totals, failures and the worst clips of a batch."""

from __future__ import annotations

import math
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from cli.common import console
from cli.options import emit_json, json_option


@click.command()
@click.argument("out_dir", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--metric", default="mean_match_error_mm", show_default=True, help="Rank ok clips by this metric.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="How many worst clips.")
@json_option("the summary")
def summary(out_dir: Path, metric: str, top: int, json_out: Path | None) -> None:
    """Totals, failed clips with their reasons, and the worst clips by METRIC of a batch folder."""
    from retarget.batch.summary import metric_label, summarize_batch

    s = summarize_batch(out_dir, metric, top)
    if json_out is not None:
        payload = {
            "out_dir": str(out_dir),
            "from_manifest": s.from_manifest,
            "totals": s.totals,
            "metric": s.metric,
            "metric_mean": None if math.isnan(s.metric_mean) else s.metric_mean,
            "worst": [
                {"clip": r.clip, metric: r.seconds if metric == "seconds" else r.metrics.get(metric)} for r in s.worst
            ],
            "failures": [{"clip": r.clip, "source": r.source, "error": r.error} for r in s.failures],
        }
        if emit_json(json_out, payload):
            return
        console.print(f"wrote {json_out}")
    t = s.totals
    if not s.from_manifest:
        console.print("[yellow]no manifest (batch interrupted?): summarised from records/[/]")
    console.print(
        f"{t['clips']} clips: [green]{t['ok']} ok[/], [red]{t['failed']} failed[/]; {t['frames']} frames "
        f"({t['duration_s']:.1f} s of motion) in {t['seconds']:.1f} s of worker time; "
        f"{escape(metric_label(s.metric))}: {s.metric_mean:.3g} (mean over ok clips)",
        highlight=False,
    )
    if s.worst:
        label = escape(metric_label(s.metric))  # "[mm]" is a unit, not rich markup
        table = Table(title=f"worst {len(s.worst)} clips by {label}")
        columns = ["clip", label, "frames", "fps"] + ([] if s.metric == "seconds" else [escape("time [s]")])
        for col in columns:
            table.add_column(col, justify="left" if col == "clip" else "right")
        for r in s.worst:
            value = r.seconds if s.metric == "seconds" else r.metrics[s.metric]
            row = [r.clip, f"{value:.3g}", str(r.frames), f"{r.fps:g}"]
            table.add_row(*row, *([] if s.metric == "seconds" else [f"{r.seconds:.2f}"]))
        console.print(table)
    if s.failures:
        table = Table(title=f"{len(s.failures)} failed clips")
        table.add_column("clip")
        table.add_column("reason", overflow="fold")
        for r in s.failures:
            table.add_row(r.clip, (r.error or "").splitlines()[0])
        console.print(table)
