"""The CLI's shared options: one spelling, one default and one help text for each, across every command.

Conventions (docs/cli.md): outputs go to ``-o/--output``; ``--json [PATH]`` writes the JSON report to PATH, or prints
it on stdout instead of the table when given alone; ``--robot`` defaults to ``g1_23dof`` where a command makes a
robot motion from a human one, and to the robot a file names where it reads robot motions; ``--real`` names the
"real" G1 profile (one default); a trained policy is ``--policy``; ``--seed``, ``--threads`` and ``--num-envs``
mean the same everywhere. Old spellings stay as hidden aliases (:class:`AliasedOption`) so scripts keep working.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from cli.common import body_model_option, fps_option
from cli.common import robot_option as robot_default_option
from retarget.limits import MAX_ELEMENTS_ENV, MAX_FRAMES_ENV, Limits
from trainers.defaults import DEFAULT_ENGINE, DEFAULT_NUM_THREADS, DEFAULT_WARP_DEVICE, ENGINES, ITERATIONS_CONVENTION
from trainers.real.profiles import DEFAULT_REAL_PROFILE

F = TypeVar("F", bound=Callable[..., Any])

STDOUT = Path("-")
"""``--json`` given without a path."""


class AliasedOption(click.Option):
    """An option with old spellings that still work but do not appear in ``--help``."""

    def __init__(self, *args: Any, hidden_aliases: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.hidden_aliases = hidden_aliases

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown, self.opts = self.opts, [o for o in self.opts if o not in self.hidden_aliases]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown


def seed_option(default: int = 0) -> Callable[[F], F]:
    return click.option(
        "--seed",
        type=int,
        default=default,
        show_default=True,
        help="Random seed of torch, numpy and the simulated environments (same seed, same run).",
    )


def iterations_option(default: int, what: str = "PPO iterations", flag: str = "--iterations") -> Callable[[F], F]:
    """An iteration budget, with the one convention of how it counts (the run's total) in its help."""
    return click.option(
        flag, type=click.IntRange(min=1), default=default, show_default=True, help=f"{what}. {ITERATIONS_CONVENTION}"
    )


def threads_option(default: int | None = DEFAULT_NUM_THREADS, unset: str = "") -> Callable[[F], F]:
    """``--threads``; ``default=None`` with ``unset`` saying what None means (e.g. the pre-trained run's)."""
    return click.option(
        "--threads",
        type=click.IntRange(min=0),
        default=default,
        show_default=default is not None,
        help="MuJoCo threads stepping the environments (0: all CPUs)" + (f"; default: {unset}." if unset else "."),
    )


def engine_options(func: F) -> F:
    """``--engine`` and ``--device``: what steps the physics of a training run (``SimConfig.engine``)."""
    func = click.option(
        "--device",
        "warp_device",
        default=DEFAULT_WARP_DEVICE,
        show_default=True,
        help="Warp device of --engine warp: cuda, cuda:N, or cpu (Warp's CPU backend: slow, for checks).",
    )(func)
    return click.option(
        "--engine",
        type=click.Choice(ENGINES),
        default=DEFAULT_ENGINE,
        show_default=True,
        help="Physics: mujoco (MuJoCo's C engine on --threads CPU threads) or warp (MuJoCo Warp, every environment "
        "on one GPU; pip install -e '.[warp]'). Same G1 model and PD gains; checkpoints are the same either way.",
    )(func)


def _finite_kl(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def trust_region_option(func: F) -> F:
    """``--trust-region-kl``: ASAP-TR's bound on the fine-tuned actor's drift (None: plain PPO)."""
    return click.option(
        "--trust-region-kl",
        type=click.FloatRange(min=0.0, min_open=True),
        default=None,
        callback=_finite_kl,
        help="ASAP-TR: after every update, pull the actor back toward the pre-trained one until the mean "
        "KL(pre-trained ‖ fine-tuned) on that update's observations is at most this [nats] (docs/table4.md; "
        "default: plain PPO).",
    )(func)


def selection_options(func: F) -> F:
    """``--select-every`` / ``--select-episodes``: which fine-tuning checkpoint is deployed
    (:mod:`trainers.finetune.selection`)."""
    from trainers.finetune.selection_config import DEFAULT_SELECT_EVERY, DEFAULT_SELECTION

    func = click.option(
        "--select-episodes",
        type=click.IntRange(min=1),
        default=DEFAULT_SELECTION.episodes,
        show_default=True,
        help="Matched episodes each candidate checkpoint runs in the fine-tuning simulator (with --select-every).",
    )(func)
    return click.option(
        "--select-every",
        type=click.IntRange(min=0),
        default=DEFAULT_SELECTION.every,
        show_default=True,
        help="Deploy (as model_deployed.pt) the best of the pre-trained checkpoint and every N-th fine-tuning "
        f"iteration, judged in the fine-tuning simulator by clip completion, then Eg-mpjpe (e.g. "
        f"{DEFAULT_SELECT_EVERY}); 0: the last checkpoint.",
    )(func)


def num_envs_option(default: int | None, what: str = "Parallel simulated environments") -> Callable[[F], F]:
    return click.option(
        "--num-envs", type=click.IntRange(min=1), default=default, show_default=default is not None, help=f"{what}."
    )


def real_option(
    param: str = "profile",
    required: bool = False,
    default: str | None = DEFAULT_REAL_PROFILE,
    help_text: str = 'The "real" G1: a profile name (nominal, soft_ankles, delay, ...) or a sysid.json.',
) -> Callable[[F], F]:
    return click.option(
        "--real",
        param,
        required=required,
        default=None if required else default,
        show_default=not required and default is not None,
        help=help_text,
    )


def policy_option(
    param: str = "run",
    required: bool = True,
    hidden_aliases: tuple[str, ...] = (),
    help_text: str = "Trained policy: a run folder or a checkpoint (.pt).",
) -> Callable[[F], F]:
    return click.option(
        "--policy",
        *hidden_aliases,
        param,
        cls=AliasedOption,
        hidden_aliases=hidden_aliases,
        type=click.Path(path_type=Path),
        required=required,
        default=None,
        help=help_text,
    )


def json_option(what: str = "the report") -> Callable[[F], F]:
    return click.option(
        "--json",
        "json_out",
        type=click.Path(path_type=Path),
        is_flag=False,
        flag_value=str(STDOUT),
        default=None,
        metavar="[PATH]",
        help=f"Write {what} as JSON to PATH; given alone, print it on stdout instead of the table.",
    )


def robot_option(detect: bool) -> Callable[[F], F]:
    """``detect``: the command reads robot motions, whose files name their robot (the default)."""
    if not detect:
        return robot_default_option
    return click.option(
        "--robot", default=None, help="Bundled robot description (default: the robot the file names, else g1_23dof)."
    )


def retarget_options(f: F) -> F:
    """The options that define how a human clip is retargeted (``retarget``, ``batch``, ``filter``)."""
    return robot_default_option(fps_option(body_model_option(f)))


def emit_json(json_out: Path, doc: Any) -> bool:
    """Write ``doc`` to ``json_out`` atomically, or print it when ``json_out`` is ``-``. True when printed."""
    text = json.dumps(doc, indent=1)
    if json_out == STDOUT:
        click.echo(text)
        return True
    from retarget.asap_pkl import atomic_write

    atomic_write(json_out, lambda tmp: tmp.write_text(text))
    return False


def resolve_policy(option_value: Path | None, positional: Path | None) -> Path:
    """The policy given as ``--policy`` or (old form) as the positional RUN; exactly one of them."""
    if option_value is not None and positional is not None and option_value != positional:
        raise click.UsageError("give the policy once: --policy RUN")
    chosen = option_value if option_value is not None else positional
    if chosen is None:
        raise click.UsageError("missing option '--policy' (a run folder or checkpoint)")
    return chosen


_CLIP_OPTIONS = (
    click.option(
        "--person",
        type=click.IntRange(min=0),
        default=None,
        help="Video-pose results with several people: the track id (default: the longest track; "
        "`inspect FILE` lists them).",
    ),
    click.option(
        "--video-fps",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        help="Frame rate of the video behind a WHAM/TRAM result [Hz] (not stored in them; default 30).",
    ),
    click.option(
        "--up-axis",
        type=click.Choice(["y", "z"]),
        default=None,
        help="World up axis of a video-pose result (default: the estimator's, y for GVHMR, WHAM, TRAM).",
    ),
    click.option(
        "--level-floor/--no-level-floor",
        default=True,
        show_default=True,
        help="Estimate the floor from the planted feet; level and ground a tilted clip.",
    ),
    click.option(
        "--smooth-hz",
        type=click.FloatRange(min=0),
        default=None,
        help="Low-pass cut-off against video jitter [Hz] (default: 6 for video-pose results, off for "
        "other clips; 0: off).",
    ),
)


def clip_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """How a human clip is read (--person, --video-fps, --up-axis, --level-floor, --smooth-hz), passed to the
    command as one `clip_options` argument (a SourceOptions)."""

    @functools.wraps(func)
    def wrapper(
        *args: Any,
        person: int | None,
        video_fps: float | None,
        up_axis: str | None,
        level_floor: bool,
        smooth_hz: float | None,
        **kwargs: Any,
    ) -> Any:
        from retarget.readers.source import SourceOptions

        options = SourceOptions(
            person=person, video_fps=video_fps, up_axis=up_axis, level_floor=level_floor, smooth_hz=smooth_hz
        )
        return func(*args, clip_options=options, **kwargs)

    for option in reversed(_CLIP_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


_SIZE_LIMIT_ENV: dict[str, str] = {"max_frames": MAX_FRAMES_ENV, "max_elements": MAX_ELEMENTS_ENV}


def _set_size_limit(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    # Through the environment, so batch workers in other processes apply the same limits.
    if value is not None and param.name is not None:
        os.environ[_SIZE_LIMIT_ENV[param.name]] = str(value)
    return value


def size_limit_options() -> list[click.Option]:
    """A new ``--max-frames`` and ``--max-elements`` pair (Click binds an option object to one command)."""
    common: dict[str, Any] = {
        "type": click.IntRange(min=1),
        "default": None,
        "expose_value": False,
        "callback": _set_size_limit,
    }
    return [
        click.Option(
            ["--max-frames"],
            help=f"Refuse motions longer than this many frames, read or resampled [default: {Limits.max_frames}; "
            f"env {MAX_FRAMES_ENV}].",
            **common,
        ),
        click.Option(
            ["--max-elements"],
            help=f"Refuse arrays a file declares larger than this many elements [default: {Limits.max_elements}; "
            f"env {MAX_ELEMENTS_ENV}].",
            **common,
        ),
    ]


def add_size_limit_options(command: click.Command) -> None:
    """Let ``command`` (each command of a group) take the size limits after its name, as the main group does before
    it; given in both places, the one after the name wins. A command whose own option has the same flag or name keeps
    its own, and its size limit goes before the command name."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_size_limit_options(sub)
        return
    taken = {flag for p in command.params for flag in p.opts} | {p.name for p in command.params}
    command.params.extend(o for o in size_limit_options() if not ({o.name, *o.opts} & taken))
