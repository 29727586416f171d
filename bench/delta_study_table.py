"""The Δa study's markdown table and progress line, from ``study.json``'s content."""

from __future__ import annotations

import numpy as np
from table4_stats import SHARE_METRICS, GapShare, format_share

COLUMNS = ("success_rate", "eg_mpjpe_mm", "completion")
LABELS = {"success_rate": "success", "eg_mpjpe_mm": "Eg-mpjpe", "completion": "completion"}
UNITS = {"success_rate": "", "eg_mpjpe_mm": " [mm]", "completion": ""}


def _cell(rows: list[dict], key: str) -> str:
    v = np.array([r[key] for r in rows])
    fmt = (lambda x: f"{x:.1f}") if key == "eg_mpjpe_mm" else (lambda x: f"{100 * x:.0f} %")
    return fmt(v.mean()) + (f" ± {fmt(v.std())}" if len(v) > 1 else "")


def _fit_cell(setting: dict, fit: dict) -> str:
    data = f"{setting['rollouts']} ({fit['fitting_frames']} fr.)"
    return f"{setting['joints']} ({fit['file']['joints']}), {setting['model']}, {data}"


def _setting(s: dict) -> str:
    fine_tuning = f"{s['iterations']} fine-tuning iterations"
    return f"Δa on {s['joints']} joints, {s['model']}, {s['rollouts']} fitting rollouts, {fine_tuning}"


def _cpu(cost: dict) -> float:
    return float(np.median([c["cpu_s"] for c in cost.values()]))


def progress_line(real: str, name: str, record: dict, wall_s: float) -> str:
    """One line per finished variant: its metrics, shares of the gap and cost."""
    ci = record["gap_share_ci"]
    shares = ", ".join(f"{LABELS[k]} {format_share(GapShare(**ci[k]))}" for k in SHARE_METRICS)
    metrics = ", ".join(f"{LABELS[k]} {_cell(record['results'], k)}" for k in COLUMNS)
    return (
        f"[{real}] {name}: {metrics}; gap closed: {shares}; fit {record['fit']['cpu_s']:.0f} CPU s, "
        f"fine-tune {_cpu(record['finetune_cost']):.0f} CPU s/seed; {wall_s:.0f} s"
    )


def markdown(summary: dict) -> str:
    """Per robot: every variant's metrics, shares of the Vanilla→Oracle gap and costs; then each variant's share
    minus the default's (paired bootstrap)."""
    ppo = summary["ppo_budget"]
    total = ppo["iterations"] * ppo["num_envs"] * ppo["steps_per_env"]
    title = (
        f"# Δa study (policy iteration {summary['policy_iteration']}, seeds {summary['args']['seeds']}, "
        f"{summary['args']['num_envs']} envs, {summary['args']['eval_episodes']} matched evaluation episodes)"
    )
    budget = (
        f"Default: {_setting(summary['default'])}. ppo Δa: {ppo['iterations']} iterations × {ppo['num_envs']} envs × "
        f"{ppo['steps_per_env']} steps ({total:,} nominal "
        f"steps), episodes of {ppo['horizon_steps']} policy steps. Shares: 95 % bootstrap intervals over seeds and "
        "episodes; the Oracle fine-tunes for the default's iterations."
    )
    lines = [title, "", budget]
    for real, robot in summary["robots"].items():
        lines += ["", f"## {real}", ""]
        head = "| variant | Δa: joints (count), model, rollouts (frames) | fine-tune its. | "
        head += " | ".join(LABELS[k] + UNITS[k] for k in COLUMNS)
        head += " | " + " | ".join(f"{LABELS[k]} gap closed" for k in SHARE_METRICS)
        lines += [head + " | fit CPU [s] | fine-tune CPU [s/seed] |", "|---" * 11 + "|"]
        for name in ("Vanilla", "Oracle"):
            cells = " | ".join(_cell(robot[name], k) for k in COLUMNS)
            lines.append(f"| {name} | | | {cells} | | | | | |")
        for name, rec in robot["variants"].items():
            cells = " | ".join(_cell(rec["results"], k) for k in COLUMNS)
            shares = " | ".join(format_share(GapShare(**rec["gap_share_ci"][k])) for k in SHARE_METRICS)
            fit = _fit_cell(rec["setting"], rec["fit"])
            lines.append(
                f"| {name} | {fit} | {rec['setting']['iterations']} | {cells} | {shares} | "
                f"{rec['fit']['cpu_s']:.0f} | {_cpu(rec['finetune_cost']):.0f} |"
            )
        others = {n: r for n, r in robot["variants"].items() if r.get("vs_default")}
        if others:
            lines += ["", "Share minus the default's share (paired bootstrap, 95 %):", ""]
            lines += ["| variant | " + " | ".join(LABELS[k] for k in SHARE_METRICS) + " |", "|---|---|---|---|"]
            for name, rec in others.items():
                diffs = " | ".join(format_share(GapShare(**rec["vs_default"][k])) for k in SHARE_METRICS)
                lines.append(f"| {name} | {diffs} |")
    return "\n".join(lines) + "\n"
