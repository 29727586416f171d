"""`asap-retarget batch [DIR] -o OUTDIR`: parallel, resumable retargeting of a folder of clips.

Exit codes: 0 every clip ok; 3 the batch finished but some clips failed (listed in the manifest
and by `asap-retarget summary`); 1 the batch could not run (bad folder, locked output, unknown
robot); 2 usage error; 130 interrupted (rerun the same command to resume).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cli.common import body_model_option, console, err_console, fps_option, make_config, robot_option
from cli.convert_cmd import ROBOT_FORMAT_NAMES
from cli.options import clip_options

DEFAULT_SOURCE_DIR = Path(__file__).resolve().parent.parent / "motions_raw"
DEFAULT_BATCH_OUT = Path("asap_retarget_out")
MAX_FAILURES_SHOWN = 20


def _eta_text(event) -> str:
    # Skipped clips finish instantly; estimate from the clips actually processed.
    processed = event.finished - event.skipped
    if processed == 0:
        return "ETA -"
    spent_s = event.work_s if event.work_s > 0 else event.elapsed_s  # start-up is paid once, not per clip
    left_s = spent_s / processed * (event.total - event.finished)
    return f"ETA {int(left_s // 60)}:{int(left_s % 60):02d}"


def clip_rate_text(event) -> str:
    """Output frames per wall second of clip work (worker start-up and the one-time solver build excluded)."""
    if event.work_s <= 0:
        return "-"
    return f"{event.frames / event.work_s:.0f}"


class _Reporter:
    """Live bar (default), one JSON line per clip (`--jsonl`), or nothing (`--quiet`)."""

    def __init__(self, mode: str, total: int):
        self.mode = mode
        self.progress = Progress(
            TextColumn("[bold]retarget"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed[/] {task.fields[skipped]} skipped"),
            TextColumn("{task.fields[fps]} frames/s"),
            TextColumn("{task.fields[eta]}"),
            TimeElapsedColumn(),
            console=console,
            disable=mode != "bar",
        )
        self.task = self.progress.add_task("clips", total=total, failed=0, skipped=0, fps="-", eta="ETA -")
        self.startup_shown = False

    def __call__(self, event) -> None:
        if self.mode == "jsonl":
            row = {"event": "clip", "kind": event.kind, "finished": event.finished, "total": event.total}
            row.update(event.record.to_json_dict())
            print(json.dumps(row), flush=True)
        elif self.mode == "bar":
            if event.work_s > 0 and not self.startup_shown:  # its own step, so no rate counts it
                self.startup_shown = True
                self.progress.console.print(
                    f"workers started in {event.startup_s:.1f} s (start-up and one-time solver build; "
                    "not counted in frames/s)",
                    highlight=False,
                )
            self.progress.update(
                self.task,
                completed=event.finished,
                failed=event.failed,
                skipped=event.skipped,
                fps=clip_rate_text(event),
                eta=_eta_text(event),
            )


MAX_TABLE_ROWS = 60  # per-clip table for small batches; large ones: `asap-retarget summary`


def _clip_table(records) -> Table:
    """Per-clip figures: frames, rate, time, matched-point distance, and any stage verdicts."""
    from retarget.controller.figures import CELL_HEADER, controller_cell, metrics_figures

    show_verdicts = any(r.verdicts for r in records)
    show_controller = any(metrics_figures(r.metrics) for r in records)
    table = Table()
    table.add_column("clip", max_width=34, overflow="ellipsis", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for col in ("frames", "fps", "time [s]", "match [mm]"):
        table.add_column(escape(col), justify="right", no_wrap=True)  # "[s]" is a unit, not rich markup
    if show_verdicts:
        table.add_column("verdicts", overflow="fold")
    if show_controller:
        table.add_column(CELL_HEADER, no_wrap=True)
    for r in records:
        err = r.metrics.get("mean_match_error_mm") if r.ok else None
        row = [r.clip, r.status, str(r.frames), f"{r.fps:g}", f"{r.seconds:.2f}", "-" if err is None else f"{err:.1f}"]
        if show_verdicts:
            row.append("; ".join(r.verdicts.values()))
        if show_controller:
            row.append(controller_cell(metrics_figures(r.metrics)))
        table.add_row(*row)
    return table


def _interrupt_exits_130(callback: Callable[..., Any]) -> Callable[..., Any]:
    """Ctrl-C anywhere in the command (also while it imports the package or discovers clips, before any worker
    runs): one line and exit code 130, never click's "Aborted!" with exit code 1."""

    @functools.wraps(callback)
    def wrapper(**kwargs: Any) -> Any:
        try:
            return callback(**kwargs)
        except KeyboardInterrupt:
            err_console.print(
                f"interrupted; finished clips are kept in {kwargs['output']}; rerun the same command to resume",
                highlight=False,
                soft_wrap=True,
            )
            sys.exit(130)

    return wrapper


def _given(name: str) -> bool:
    """Whether the user passed option `name` on the command line (not its default)."""
    return click.get_current_context().get_parameter_source(name) == ParameterSource.COMMANDLINE


@click.command()
@click.argument("source_dir", type=click.Path(path_type=Path), required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=DEFAULT_BATCH_OUT,
    show_default=True,
    help="Output folder: clips/*.pkl, records/*.json, motion_library.pkl, manifest.json/.csv, config.json.",
)
@robot_option
@fps_option
@body_model_option
@clip_options
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Parallel workers [default: all cores].")
@click.option(
    "--executor",
    type=click.Choice(["process", "thread", "ray", "inline"]),
    default="process",
    show_default=True,
    help="process: crash-isolated process pool; thread: threads of this process (less memory, no timeout); "
    "ray: Ray tasks (pip install 'asap-retarget[ray]'); inline: debugging.",
)
@click.option(
    "--address", default=None, help="Ray cluster to join (with --executor ray), e.g. auto or ray://host:10001."
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0),
    default=900.0,
    show_default=True,
    help="Per-clip time limit [s]; the clip fails and its worker is replaced. 0: no limit.",
)
@click.option("--force", is_flag=True, help="Redo every clip, even those already done with this config.")
@click.option("--no-library", is_flag=True, help="Skip the combined motion_library.pkl.")
@click.option(
    "--stage",
    "stages",
    type=click.Choice(["filter", "eval", "controller"]),
    multiple=True,
    help="Per-clip stage (repeatable): 'filter' (physics filter verdict; trims to the longest kept range), "
    "'eval' (retargeting metrics against the source), 'controller' (sampling-MPC tracking in the training "
    "simulator; writes the motion the G1 performed, see --performed). Figures go to the manifest.",
)
@click.option(
    "--performed",
    type=click.Choice(["replace", "beside"]),
    default="replace",
    show_default=True,
    help="With --stage controller: the performed motion replaces the kinematic retarget in the library, "
    "or goes beside it as <clip>_performed.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(ROBOT_FORMAT_NAMES),
    default="asap",
    show_default=True,
    help="Consumer dialect of the per-clip files: other than asap, each ok clip is also written to OUTPUT/<format>/ "
    "(beyondmimic/mjlab/holosoma at 50 Hz unless --fps is given).",
)
@click.option(
    "--move-stale",
    is_flag=True,
    help="Move outputs whose source clip is gone into OUTDIR/stale/ instead of removing them.",
)
@click.option("--quiet", is_flag=True, help="No progress bar; only the final line (and failures on stderr).")
@click.option("--jsonl", is_flag=True, help="One JSON object per clip on stdout, then one for the batch.")
@_interrupt_exits_130
def batch(
    source_dir: Path | None,
    output: Path,
    robot: str,
    fps: float,
    body_model: Path | None,
    workers: int | None,
    executor: str,
    address: str | None,
    timeout_s: float,
    force: bool,
    no_library: bool,
    stages: tuple[str, ...],
    performed: str,
    fmt: str,
    move_stale: bool,
    quiet: bool,
    jsonl: bool,
    clip_options: Any,
) -> None:
    """Retarget every clip (.npz; GVHMR .pt, WHAM .pkl, TRAM hps_track_*.npy) under SOURCE_DIR (default: the
    bundled motions_raw/).

    Reruns skip clips already done with the same source bytes and config and redo the rest, so a
    killed batch resumes where it stopped. Exit code: 0 all clips ok, 3 some clips failed (see the
    manifest or `asap-retarget summary OUTDIR`), 1 the batch could not run, 130 interrupted."""
    from retarget.batch import EXIT_SOME_FAILED, BatchOptions, available_cores, run_batch
    from retarget.batch.run import UNTIMED_EXECUTORS
    from retarget.batch.sources import STALE_DIR, discover_clips
    from retarget.batch.stages import STAGES

    if quiet and jsonl:
        raise click.UsageError("--quiet and --jsonl are exclusive")
    if address is not None and executor != "ray":
        raise click.UsageError("--address needs --executor ray")
    if performed == "beside":
        stages = tuple("controller-beside" if s == "controller" else s for s in stages)
    source_dir = source_dir or DEFAULT_SOURCE_DIR
    if executor in UNTIMED_EXECUTORS and timeout_s and _given("timeout_s"):
        # A thread (or the calling process) cannot be stopped from outside: a hung clip holds its slot.
        err_console.print(
            f"[yellow]warning:[/] --timeout {timeout_s:g} is not enforced with --executor {executor} "
            "(a thread cannot be stopped); use --executor process for per-clip time limits",
            highlight=False,
            soft_wrap=True,
        )
    if click.get_current_context().get_parameter_source("fps") == ParameterSource.DEFAULT:
        from retarget.formats.registry import ROBOT_FORMATS

        fps = ROBOT_FORMATS[fmt].default_fps or fps  # retarget straight at the consumer's rate
    config = make_config(robot, fps, body_model, clip_options)
    options = BatchOptions(
        workers=workers or available_cores(),
        executor=executor,
        ray_address=address,
        timeout_s=timeout_s or None,
        force=force,
        combined_library=not no_library,
        stages=tuple(STAGES[name] for name in dict.fromkeys(stages)),
        output_format=fmt,
        move_stale=move_stale,
    )
    discovery = discover_clips(source_dir)
    for folder in discovery.unreadable:
        err_console.print(
            f"[yellow]warning:[/] {escape(str(folder))}: cannot be read (permission denied); its clips "
            "are not in this batch",
            highlight=False,
            soft_wrap=True,
        )
    sources = discovery.clips
    if not sources:
        raise click.UsageError(f"no .npz clips under {source_dir}")
    reporter = _Reporter("quiet" if quiet else "jsonl" if jsonl else "bar", len(sources))
    with reporter.progress:
        result = run_batch(sources, output, config, options, on_event=reporter)
    if result.stale:
        where = f"moved into {output / STALE_DIR}" if move_stale else "removed"
        err_console.print(
            f"{len(result.stale)} clip(s) whose source is gone: outputs {where}: "
            f"{escape(', '.join(result.stale[:MAX_FAILURES_SHOWN]))}",
            highlight=False,
            soft_wrap=True,
        )
    for line in result.unwritten:
        err_console.print(f"[red]not written[/] {escape(line)}", highlight=False, soft_wrap=True)
    failed = result.failed
    code = EXIT_SOME_FAILED if failed else 0
    line = (
        f"{len(result.records) - len(failed)}/{len(result.records)} clips ok ({result.processed} processed, "
        f"{result.skipped} already done), {len(failed)} failed; outputs in {output.resolve()}"
    )
    if jsonl:
        print(
            json.dumps(
                {
                    "event": "batch",
                    "clips": len(result.records),
                    "failed": len(failed),
                    "processed": result.processed,
                    "skipped": result.skipped,
                    "out_dir": str(output.resolve()),
                    "exit_code": code,
                }
            ),
            flush=True,
        )
    else:
        if not quiet and len(result.records) <= MAX_TABLE_ROWS:
            console.print(_clip_table(result.records))
        for record in failed[:MAX_FAILURES_SHOWN]:
            reason = (record.error or f"{record.source}: failed (no reason recorded)").splitlines()[0]
            err_console.print(f"[red]failed[/] {reason}", highlight=False, soft_wrap=True)
        if len(failed) > MAX_FAILURES_SHOWN:
            err_console.print(f"... and {len(failed) - MAX_FAILURES_SHOWN} more: asap-retarget summary {output}")
        if result.export is not None:
            for note in result.export.notes:
                err_console.print(f"[yellow]warning:[/] {note}", highlight=False, soft_wrap=True)
            console.print(f"{fmt} files: {result.export.folder} ({result.export.written} written)", highlight=False)
        console.print(line, soft_wrap=True, highlight=False)
    sys.exit(code)
