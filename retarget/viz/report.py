"""`asap-retarget report OUTDIR`: one HTML page for a batch output folder.

Reads the batch's ``manifest.json`` (or an older ``summary.json``, or the per-clip records of a
batch still running; tolerant: unknown fields become columns, nested dicts
are flattened, missing ones are blank), makes per-clip files under ``report_files/<clip>/``
(an animated preview embedded in the page, plots, optionally a video; each reused while it
is newer than the clip's ``.pkl``), and writes ``report.html`` atomically.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from retarget.errors import AsapRetargetError, ConfigError, MotionFileError
from retarget.viz.files import write_shared
from retarget.viz.motion_input import load_robot_motion
from retarget.viz.motion_view import MotionRenderer, RenderConfig
from retarget.viz.render_clip import make_panel
from retarget.viz.report_html import ClipEntry, flatten, render_report_html
from retarget.viz.video import write_video

BATCH_TABLES: tuple[str, ...] = ("manifest.json", "summary.json")
"""Files holding the batch's per-clip rows, newest layout first."""
RECORDS_DIR = "records"
REPORT_HTML = "report.html"
ASSETS_DIR = "report_files"
# Metrics that order the clips when the summary has them (first found wins): larger = worse.
WORST_FIRST_METRICS: tuple[str, ...] = (
    "metrics.badness",
    "badness",
    "metrics.mean_match_error_mm",
    "mean_match_error_mm",
    "metrics.max_match_error_mm",
)


@dataclass(frozen=True)
class ReportConfig:
    """What the report makes for each clip."""

    preview_frames: int = 16
    """Frames of the animated preview embedded per clip; 1 makes a still, 0 none."""
    preview_width_px: int = 240
    """Preview width [px] (even)."""
    preview_height_px: int = 180
    """Preview height [px] (even)."""
    plots: bool = True
    """Write joints.png, foot_height.png and foot_tilt.png per clip and link them."""
    videos: bool = False
    """Render a full video per clip (slow: about 0.1-0.2 s per frame at 640×480 on one CPU core)."""
    video: RenderConfig = field(default_factory=RenderConfig)
    """Look of the per-clip videos."""
    sort_metric: str | None = None
    """Summary field ordering clips within a verdict, larger first; None picks from WORST_FIRST_METRICS."""

    def __post_init__(self) -> None:
        if self.preview_frames < 0:
            raise ConfigError(f"preview_frames must be >= 0, got {self.preview_frames}")


@dataclass(frozen=True)
class ReportSummary:
    """What `build_report` wrote."""

    html: Path
    clips: int
    previews: int
    problems: tuple[str, ...]
    """Clips whose files could not be made, with the reason (the page still lists them)."""


def read_batch(out_dir: Path) -> dict[str, Any]:
    """The batch's table: ``manifest.json``, else the older ``summary.json``, else ``records/*.json``.

    Returns a dict with a 'clips' list of row dicts and whatever header fields the file has.
    """
    out_dir = Path(out_dir)
    for name in BATCH_TABLES:
        path = out_dir / name
        if not path.is_file():
            continue
        try:
            payload = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MotionFileError(path, f"is not valid JSON ({exc})") from exc
        clips = payload.get("clips") if isinstance(payload, dict) else None
        if not isinstance(clips, list) or not all(isinstance(c, dict) for c in clips):
            raise MotionFileError(path, "expected an object with a 'clips' list of objects")
        return payload
    rows = []
    for path in sorted((out_dir / RECORDS_DIR).glob("*.json")):
        try:
            row = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # a record being written by a running batch; the manifest will have it
        if isinstance(row, dict):
            rows.append(row)
    if not rows:
        raise MotionFileError(
            out_dir, f"not a batch output folder: no {', '.join(BATCH_TABLES)} and no {RECORDS_DIR}/*.json"
        )
    return {"clips": rows, "note": f"read from {RECORDS_DIR}/ (no manifest yet)"}


def _fresh(asset: Path, source: Path) -> bool:
    return asset.is_file() and asset.stat().st_mtime >= source.stat().st_mtime


def _resolve(out_dir: Path, value: Any) -> Path | None:
    """A path from the summary: as written, else relative to OUTDIR, else its name inside OUTDIR."""
    if not value:
        return None
    path = Path(str(value))
    for candidate in (path, out_dir / path, out_dir / path.name):
        if candidate.is_file():
            return candidate
    return None


def _preview(panel, path: Path, pkl: Path, config: ReportConfig) -> bytes:
    if not _fresh(path, pkl):
        # Closer than the video's camera: the robot should fill a thumbnail.
        camera = replace(config.video.camera, distance_m=0.75 * config.video.camera.distance_m)
        cfg = replace(
            config.video,
            width_px=config.preview_width_px,
            height_px=config.preview_height_px,
            show_text=False,
            camera=camera,
        )
        with MotionRenderer([replace(panel, skeleton_w=None)], cfg) as renderer:
            count = min(config.preview_frames, renderer.num_frames)
            indices = np.linspace(0, renderer.num_frames - 1, count).round().astype(int)
            frames = [renderer.render_frame(int(i)) for i in indices]
            duration_s = max(renderer.num_frames - 1, 1) / renderer.fps
        write_video(path, frames, fps=max(count / duration_s, 0.5))
    return path.read_bytes()


def _clip_files(out_dir: Path, row: dict[str, Any], config: ReportConfig) -> tuple[ClipEntry, str | None]:
    from retarget.viz.plots import write_clip_plots

    clip = str(row.get("clip", "?"))
    pkl = _resolve(out_dir, row.get("output"))
    entry = ClipEntry(flatten(row))
    if pkl is None:
        return entry, None
    links = {"pkl": os.path.relpath(pkl, out_dir)}
    folder = re.sub(r"[^\w.-]", "_", clip).lstrip(".") or "clip"  # a folder name whatever the clip is called
    assets = out_dir / ASSETS_DIR / folder
    try:
        try:
            motion = load_robot_motion(pkl, clip)
        except MotionFileError:
            motion = load_robot_motion(pkl)  # a one-clip library whose key is not the row's name
        source = _resolve(out_dir, row.get("source"))
        panel = make_panel(motion, "", source)
        preview = None
        if config.preview_frames > 0:
            preview = _preview(panel, assets / "preview.webp", pkl, config)
        if config.plots:
            plot_names = ("joints", "foot_height", "foot_tilt")
            if not all(_fresh(assets / f"{n}.png", pkl) for n in plot_names):
                write_clip_plots(motion, panel.robot, assets, panel.contacts)
            links.update({n: f"{ASSETS_DIR}/{folder}/{n}.png" for n in plot_names})
        for video in (out_dir / "videos" / f"{folder}.mp4", assets / f"{folder}.mp4"):
            if video == assets / f"{folder}.mp4" and config.videos and not _fresh(video, pkl):
                with MotionRenderer([panel], config.video) as renderer:
                    write_video(video, (renderer.render_frame(i) for i in range(renderer.num_frames)), renderer.fps)
            if video.is_file():
                links["video"] = os.path.relpath(video, out_dir)
    except AsapRetargetError as exc:
        return ClipEntry(entry.row, links=links), f"{clip}: {exc}"
    return ClipEntry(entry.row, preview, "image/webp", links), None


def _pick_metric(rows: list[dict[str, Any]], wanted: str | None) -> str | None:
    keys = {k for r in rows for k in r}
    if wanted is not None and wanted in keys:
        return wanted
    if wanted is not None:
        if f"metrics.{wanted}" in keys:
            return f"metrics.{wanted}"
        numeric = sorted(k for k in keys if any(isinstance(r.get(k), (int, float)) for r in rows))
        raise ConfigError(f"no field {wanted!r} in this batch; valid choices: {', '.join(numeric)}")
    return next((m for m in WORST_FIRST_METRICS if m in keys), None)


def build_report(
    out_dir: str | Path, config: ReportConfig = ReportConfig(), on_clip: Callable[[int, int, str], None] | None = None
) -> ReportSummary:
    """Write OUTDIR/report.html for the batch in `out_dir`; `on_clip(done, total, name)` is called before each clip
    (its previews and plots are the slow part) and once at the end."""
    out_dir = Path(out_dir)
    payload = read_batch(out_dir)
    entries, problems = [], []
    rows = payload["clips"]
    for i, row in enumerate(rows):
        if on_clip is not None:
            on_clip(i, len(rows), str(row.get("clip", "")))
        entry, problem = _clip_files(out_dir, row, config)
        entries.append(entry)
        if problem:
            problems.append(problem)
    if on_clip is not None:
        on_clip(len(rows), len(rows), "")
    meta = {k: v for k, v in payload.items() if k != "clips" and not isinstance(v, dict)}
    if isinstance(payload.get("totals"), dict):
        meta.update(payload["totals"])
    metric = _pick_metric([e.row for e in entries], config.sort_metric)
    page = render_report_html(entries, f"asap-retarget report: {out_dir.resolve().name}", meta, metric)
    html_path = out_dir / REPORT_HTML
    write_shared(html_path, lambda tmp: _write_text(tmp, page))
    return ReportSummary(html_path, len(entries), sum(e.preview is not None for e in entries), tuple(problems))


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
