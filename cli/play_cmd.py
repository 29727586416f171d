"""`asap-retarget play RUN --motion LIB.pkl -o OUT.mp4`: render a policy rollout (beside its reference)."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console
from cli.options import policy_option, real_option


@click.command()
@policy_option()
@click.option("--motion", type=click.Path(path_type=Path), required=True, help="Motion library (.pkl).")
@click.option("--clip", default=None, help="Clip to play (required when the library holds several).")
@real_option()
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Video (.mp4, .mkv, .mov, .webp, .gif) or one still (.png).",
)
@click.option("--no-reference", is_flag=True, help="Draw the policy alone (default: beside the reference clip).")
@click.option("--width", type=int, default=960, show_default=True, help="Image width [px] (all panels).")
@click.option("--height", type=int, default=480, show_default=True, help="Image height [px].")
@click.option(
    "--camera",
    default="three_quarter",
    show_default=True,
    help="front, three_quarter, side, back, top, or 'AZ,EL[,DIST]'.",
)
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="Stop after N policy steps.")
def play(run, motion, clip, profile, output, no_reference, width, height, camera, max_steps) -> None:
    """Roll the policy out from phase 0 (deterministic) and render it with MuJoCo offscreen."""
    from retarget.errors import MotionFileError
    from retarget.viz import RenderConfig, parse_camera
    from robots.registry import load_robot_spec
    from trainers.play import play_policy, reference_motion, render_rollout
    from trainers.policy_io import load_policy
    from trainers.reference import load_references
    from trainers.sim_model import build_training_model

    loaded = load_policy(run)
    cfg = loaded.env_cfg
    refs = load_references(motion, build_training_model(cfg.sim), load_robot_spec(cfg.sim.robot), clip)
    if len(refs) != 1:
        names = ", ".join(r.name for r in refs[:20])
        raise MotionFileError(motion, f"holds {len(refs)} clips; choose one with --clip: {names}")
    result = play_policy(loaded.policy.act_inference, refs[0], cfg, profile, max_steps)
    compare = None if no_reference else reference_motion(refs[0].name, motion, refs[0].name)
    config = RenderConfig(width_px=width, height_px=height, camera=parse_camera(camera))
    frames = render_rollout(result.motion, output, config, cfg.sim.robot, compare)
    m = result.metrics
    fell = "no fall" if result.failed_at_frame is None else f"failed (>0.5 m) at frame {result.failed_at_frame}"
    console.print(
        f"wrote {output}: {frames} frames at {result.motion.fps:g} Hz ({profile}); success {m.success_rate:.0%}, "
        f"Eg-mpjpe {m.eg_mpjpe_mm:.1f} mm, Empjpe {m.empjpe_mm:.1f} mm; {fell}",
        highlight=False,
    )
