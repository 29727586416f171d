"""`asap-retarget eval-policy --policy RUN --motion LIB.pkl`: the paper's tracking metrics of a trained policy."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from cli.common import console
from cli.options import policy_option, real_option, resolve_policy, seed_option


@click.command(name="eval-policy")
@policy_option(required=False)
@click.argument("run_arg", metavar="[RUN]", type=click.Path(path_type=Path), required=False)
@click.option("--motion", type=click.Path(path_type=Path), required=True, help="Motion library (.pkl).")
@click.option("--clip", default=None, help="Evaluate on this clip only.")
@click.option("--episodes", type=click.IntRange(min=1), default=1, show_default=True, help="Episodes per clip.")
@click.option("--domain-rand", is_flag=True, help="Randomize physics per episode (else episodes are identical).")
@real_option(
    default=None,
    help_text='Evaluate in this "real" G1 (a profile name, pybullet:<profile>, a sysid.json) '
    "instead of the training simulator.",
)
@seed_option()
def eval_policy(
    run: Path | None,
    run_arg: Path | None,
    motion: Path,
    clip: str | None,
    episodes: int,
    domain_rand: bool,
    profile: str | None,
    seed: int,
) -> None:
    """Success (0.5 m rule), Eg-mpjpe, Empjpe, Evel, Eacc of the policy (a run folder or checkpoint).

    The policy may also be given as the positional RUN (the old form)."""
    from robots.registry import load_robot_spec
    from trainers.evaluate import evaluate_policy
    from trainers.policy_io import load_policy
    from trainers.reference import load_references
    from trainers.sim_model import build_training_model

    loaded = load_policy(resolve_policy(run, run_arg))
    cfg = loaded.env_cfg
    refs = load_references(motion, build_training_model(cfg.sim), load_robot_spec(cfg.sim.robot), clip)
    if profile is None:
        overall, per_clip = evaluate_policy(loaded.policy.act_inference, refs, cfg, episodes, seed, domain_rand)
    else:
        from trainers.finetune.real_eval import evaluate_in_profile

        overall, per_clip = evaluate_in_profile(
            loaded.policy.act_inference, refs, profile, cfg, episodes, seed, domain_rand
        )
    table = Table(title=f"{loaded.checkpoint} (iteration {loaded.iteration})")
    for col in ("clip", "success", "Eg-mpjpe [mm]", "Empjpe [mm]", "Evel [mm/frame]", "Eacc [mm/frame²]", "completed"):
        table.add_column(col)
    rows = [(c.clip, c.metrics, f"{c.mean_episode_fraction:.0%}") for c in per_clip] + [("all", overall, "")]
    for name, m, done in rows:
        table.add_row(
            name,
            f"{m.success_rate:.0%}",
            f"{m.eg_mpjpe_mm:.1f}",
            f"{m.empjpe_mm:.1f}",
            f"{m.evel_mm_per_frame:.2f}",
            f"{m.eacc_mm_per_frame2:.2f}",
            done,
        )
    console.print(table)
