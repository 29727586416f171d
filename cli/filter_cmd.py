"""`asap-retarget filter CLIP.npz|DIR [--json [OUT]]`: retarget each clip and give it a physics verdict."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from cli.common import console, err_console, make_config
from cli.options import clip_options, emit_json, json_option, retarget_options

LAYERS = ("kinematic", "dynamic", "replay", "controller")
DEFAULT_LAYERS = ("kinematic", "dynamic", "replay")


@click.command(name="filter")
@click.argument("source", type=click.Path(path_type=Path))
@json_option("the verdicts (every check, its figures and frame ranges)")
@click.option(
    "--layers",
    default=",".join(DEFAULT_LAYERS),
    show_default=True,
    help="Comma-separated layers to run: kinematic, dynamic, replay, controller (sampling-MPC tracking; "
    "it decides, and the dynamic layer's checks become informational; a few s of CPU per s of motion).",
)
@click.option("--replay-decides", is_flag=True, help="Let a replay failure trim or reject (off: reported only).")
@retarget_options
@clip_options
def filter_(
    source: Path,
    json_out: Path | None,
    layers: str,
    replay_decides: bool,
    robot: str,
    fps: float,
    body_model: Path | None,
    clip_options: Any,
) -> None:
    """Retarget and physics-filter one human clip (AMASS .npz or a video-pose result) or every clip under a folder.

    Prints one row per clip: verdict (keep / trim / reject), the first failing check, its figure
    against its threshold, and the frames kept. Exit 1 if a clip could not be read."""
    from dataclasses import replace

    from retarget.batch import find_clips
    from retarget.errors import AsapRetargetError, MotionFileError
    from retarget.filter import FilterConfig, filter_clip
    from retarget.readers.source import CLIP_SUFFIXES
    from retarget.readers.tram import is_tram_folder

    chosen = tuple(x.strip() for x in layers.split(",") if x.strip())
    unknown = [x for x in chosen if x not in LAYERS]
    if unknown:
        raise click.UsageError(f"unknown layer(s) {unknown}; valid choices: {', '.join(LAYERS)}")
    if source.is_dir():
        clips = [source] if is_tram_folder(source) else find_clips(source)
        if not clips:
            raise MotionFileError(source, "holds no clips (.npz, or .pt/.pkl/.npy video-pose results)")
    elif source.exists() and source.suffix.lower() not in CLIP_SUFFIXES:
        raise MotionFileError(
            source,
            f"is a {source.suffix or 'extension-less'} file; filter reads human clips "
            "(it retargets them itself) or a folder of them",
        )
    elif source.exists():
        clips = [source]
    else:
        raise MotionFileError(source, "does not exist (expected an AMASS .npz clip or a folder of them)")
    config = FilterConfig(layers=chosen)
    config = replace(config, replay=replace(config.replay, decides=replay_decides))
    retarget_config = make_config(robot, fps, body_model, clip_options)  # as `batch` retargets
    verdicts, errors = [], []
    for clip in clips:
        try:
            verdicts.append(filter_clip(clip, config, retarget_config))
        except AsapRetargetError as exc:
            if len(clips) == 1:
                raise
            errors.append({"clip": clip.name, "error": str(exc)})
            err_console.print(f"[red]error[/] {exc}", highlight=False, soft_wrap=True)
    doc = {"config": config.to_dict(), "verdicts": [v.to_dict() for v in verdicts], "errors": errors}
    if json_out is not None and emit_json(json_out, doc):
        sys.exit(1 if errors else 0)
    from retarget.controller.figures import CELL_HEADER, controller_cell, controller_figures

    table = Table(title=f"physics filter: {len(verdicts)} clip(s) from {source}")
    controller = [controller_figures(v) for v in verdicts]
    show_controller = any(controller)
    columns = ["clip", "verdict", "kept", "first failing check", "figure", "limit", "replay"]
    if show_controller:
        columns.append(CELL_HEADER)
    for col in columns:
        table.add_column(col, justify="right" if col in ("kept", "figure", "limit") else "left")
    for v, figures in zip(verdicts, controller):
        first = v.check(v.first_failure) if v.first_failure else None
        ranges = v.replay.get("ranges", [])
        fell = [r["fail_time_s"] for r in ranges if r["failed"]]
        rep = "-" if not ranges else (f"fell at {fell[0]} s" if fell else "follows")
        row = [
            v.clip,
            v.decision,
            f"{v.kept_frames}/{v.num_frames}",
            first.name if first else "-",
            f"{first.worst:.3g} {first.unit}" if first else "-",
            f"{first.threshold:.3g}" if first else "-",
            rep,
        ]
        if show_controller:
            row.append(controller_cell(figures))
        table.add_row(*row)
    console.print(table)
    for v in verdicts:
        if v.decision != "keep" or v.repairs:
            console.print(f"[bold]{v.clip}[/] {v.decision}: {v.reason}", highlight=False, soft_wrap=True)
    counts = {d: sum(v.decision == d for v in verdicts) for d in ("keep", "trim", "reject")}
    console.print(
        f"keep {counts['keep']}, trim {counts['trim']}, reject {counts['reject']}"
        + (f", unreadable {len(errors)}" if errors else "")
    )
    if json_out is not None:
        console.print(f"wrote {json_out}")
    if errors:
        sys.exit(1)
