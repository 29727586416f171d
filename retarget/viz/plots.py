"""Per-clip figures (PNG, matplotlib's Agg back-end, no display): joint angles against their
limits, foot heights and tilt with the human's stance phases, and any named time series
(the physics filter's figures plug in through `extra_series`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.contacts import FootContacts
from retarget.viz.files import write_shared
from retarget.viz.foot_track import FootTrack, track_feet
from retarget.viz.motion_input import motion_qpos
from robots.mujoco_model import build_mujoco_model
from robots.registry import load_robot_spec

DPI = 80
FOOT_NAMES = ("left", "right")
STANCE_COLOR = "#2ca02c"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)  # never a window, whatever the user's default
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    write_shared(path, lambda tmp: fig.savefig(tmp, format="png", dpi=DPI))
    _pyplot().close(fig)
    return path


def _shade_stance(ax, time_s: np.ndarray, stance: np.ndarray | None, label: bool) -> None:
    """Green bands over the frames where `stance` (T,) is True."""
    if stance is None or not stance.any():
        return
    edges = np.flatnonzero(np.diff(np.concatenate([[0], stance.astype(int), [0]])))
    half = 0.5 * (time_s[1] - time_s[0]) if len(time_s) > 1 else 0.5
    for i, (a, b) in enumerate(zip(edges[::2], edges[1::2])):
        ax.axvspan(
            time_s[a] - half,
            time_s[b - 1] + half,
            color=STANCE_COLOR,
            alpha=0.15,
            lw=0,
            label="human stance" if label and i == 0 else None,
        )


def plot_joint_angles(motion: RobotMotion, robot_name: str, path: Path) -> Path:
    """One small axis per joint: angle [deg] over time, the URDF limits dashed, violations red."""
    plt = _pyplot()
    robot = load_robot_spec(robot_name)
    time_s = np.arange(motion.num_frames) / motion.fps
    cols = 4
    rows = int(np.ceil(robot.num_dof / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(16, 2.0 * rows), sharex=True, squeeze=False)
    for j, ax in enumerate(axes.flat):
        if j >= robot.num_dof:
            ax.axis("off")
            continue
        q = np.degrees(motion.dof_pos[:, j])
        lo, hi = np.degrees(robot.lower_rad[j]), np.degrees(robot.upper_rad[j])
        ax.plot(time_s, q, lw=1.2, color="#1f77b4")
        ax.axhline(lo, ls="--", lw=0.8, color="#d62728")
        ax.axhline(hi, ls="--", lw=0.8, color="#d62728")
        outside = (q < lo) | (q > hi)
        if outside.any():
            ax.plot(time_s[outside], q[outside], ".", ms=3, color="#d62728")
        ax.set_title(robot.joint_names[j].removesuffix("_joint"), fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]", fontsize=8)
    fig.suptitle(f"{motion.name}: joint angles [deg] and limits (dashed)", fontsize=11)
    fig.tight_layout()
    return _save(fig, path)


def _plot_per_foot(
    values: np.ndarray,
    time_s: np.ndarray,
    contacts: FootContacts | None,
    ylabel: str,
    title: str,
    reference: float | None,
    path: Path,
) -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(12, 6), sharex=True)
    for f, ax in enumerate(axes):
        stance = None if contacts is None else contacts.stance[: len(time_s), f]
        _shade_stance(ax, time_s, stance, label=True)
        ax.plot(time_s, values[:, f], lw=1.3, color="#1f77b4", label=f"{FOOT_NAMES[f]} foot")
        if reference is not None:
            ax.axhline(reference, color="k", lw=0.8)
        ax.set_ylabel(ylabel)
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _save(fig, path)


def plot_foot_heights(track: FootTrack, fps: float, contacts: FootContacts | None, path: Path, name: str = "") -> Path:
    """Lowest sole point of each robot foot [mm] over time, the human's stance shaded."""
    time_s = np.arange(len(track.sole_height_m)) / fps
    return _plot_per_foot(
        track.sole_height_m * 1000.0,
        time_s,
        contacts,
        "sole height [mm]",
        f"{name}: robot sole height above the floor, human stance shaded",
        0.0,
        path,
    )


def plot_foot_tilt(track: FootTrack, fps: float, contacts: FootContacts | None, path: Path, name: str = "") -> Path:
    """Tilt of each robot foot from flat [deg] over time, the human's stance shaded."""
    time_s = np.arange(len(track.tilt_deg)) / fps
    return _plot_per_foot(
        track.tilt_deg,
        time_s,
        contacts,
        "foot tilt [deg]",
        f"{name}: robot foot tilt from flat, human stance shaded",
        None,
        path,
    )


def plot_time_series(series: Mapping[str, np.ndarray], fps: float, path: Path, title: str = "") -> Path:
    """One axis per named series: (T,) or (T, k) arrays sampled at `fps` (e.g. a filter's figures)."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(series), 1, figsize=(12, 2.2 * len(series) + 0.6), sharex=True, squeeze=False)
    for ax, (name, values) in zip(axes[:, 0], series.items()):
        values = np.asarray(values, dtype=np.float64)
        time_s = np.arange(len(values)) / fps
        ax.plot(time_s, values.reshape(len(values), -1), lw=1.1)
        ax.set_ylabel(name, fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _save(fig, path)


def write_clip_plots(
    motion: RobotMotion,
    robot_name: str,
    out_dir: Path,
    contacts: FootContacts | None = None,
    extra_series: Mapping[str, np.ndarray] | None = None,
) -> dict[str, Path]:
    """All figures of one clip into `out_dir`: joints.png, foot_height.png, foot_tilt.png and,
    with `extra_series` ({name: (T,) or (T, k) array at the motion's rate}), series.png."""
    out_dir = Path(out_dir)
    qpos = motion_qpos(motion, robot_name)
    track = track_feet(build_mujoco_model(robot_name), robot_name, qpos)
    plots = {
        "joints": plot_joint_angles(motion, robot_name, out_dir / "joints.png"),
        "foot_height": plot_foot_heights(track, motion.fps, contacts, out_dir / "foot_height.png", motion.name),
        "foot_tilt": plot_foot_tilt(track, motion.fps, contacts, out_dir / "foot_tilt.png", motion.name),
    }
    if extra_series:
        plots["series"] = plot_time_series(extra_series, motion.fps, out_dir / "series.png", motion.name)
    return plots
