"""`delta fit --method ppo`: train π^Δ with PPO, print the learning curve's ends, save the LearnedDelta file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trainers.delta.collection import Trajectory
from trainers.delta.ppo_fit import delta_ppo_config, fit_ppo_delta


def fit_ppo_command(
    trajs: list[Trajectory],
    output: Path,
    joints: str,
    iterations: int,
    num_envs: int,
    horizon_s: float,
    echo: Callable[[str], None] = print,
) -> None:
    """Train with the CLI's settings (horizon in seconds → policy steps), log every 10th iteration, save."""
    cfg = delta_ppo_config(joints, iterations, num_envs, horizon_steps=max(1, round(horizon_s * trajs[0].fps)))

    def log(row: dict) -> None:
        if row["iteration"] == 1 or row["iteration"] % 10 == 0 or row["iteration"] == iterations:
            echo(
                f"it {row['iteration']:>4}  reward/step {row['mean_step_reward']:.4f}  "
                f"return {row['mean_episode_return']:.2f}  σ {row['action_std']:.3f}  {row['wall_s']:.0f} s"
            )

    model, rows = fit_ppo_delta(trajs, cfg, on_iteration=log)
    model.save(output)
    echo(f"wrote {output}: PPO π^Δ on {joints}, {rows[-1]['env_steps']} env steps, {rows[-1]['wall_s']:.0f} s")
