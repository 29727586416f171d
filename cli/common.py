"""Shared pieces of the CLI: consoles, the common options, and config assembly."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from retarget.errors import AsapRetargetError

# No emoji codes: a message quoting "noise:-1:" or a file named "a:+1:.pkl" must print as it is.
console = Console(soft_wrap=True, emoji=False)
err_console = Console(stderr=True, soft_wrap=True, emoji=False)


class CommandError(AsapRetargetError):
    """An error a command reports as its one line (the message names the file)."""


robot_option = click.option("--robot", default="g1_23dof", show_default=True, help="Bundled robot description.")
fps_option = click.option(
    "--fps", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True, help="Output rate [Hz]."
)
body_model_option = click.option(
    "--body-model",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder with your SMPL/SMPL-H/SMPL-X model files (uses smplx); default: built-in neutral skeleton.",
)


def make_config(robot: str, fps: float, body_model: Path | None, source: Any = None):
    from retarget.config import RetargetConfig
    from retarget.readers.source import SourceOptions

    return RetargetConfig(
        robot=robot,
        fps_out=fps,
        body_model_dir=None if body_model is None else str(body_model),
        source=source or SourceOptions(),
    )


OUTPUT_PARAMS: tuple[str, ...] = ("output", "json_out")
"""Parameter names under which commands take the path they write (a file, or a folder for runs and batches)."""


def _path_values(params: dict[str, Any]) -> list[Path]:
    paths: list[Path] = []
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, Path):
                paths.append(item)
    return paths


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a symlink loop, a name too long
        return False


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _named(message: str, paths: list[Path]) -> str:
    """`message`, led by the first of `paths` unless it already names one of them, or leads with the option
    ("--delta noise:nan: ...") whose value is wrong: then no file is at fault."""
    if not paths or message.startswith("--") or any(str(p) in message or p.name in message for p in paths):
        return message
    return f"{paths[0]}: {message}"


def guarded(callback: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command's callback: its existing input files may not be overwritten (see
    :func:`retarget.atomic_io.reading_inputs`), an output that is an input or not a regular file is
    refused before any work, and every error leaves as one :class:`AsapRetargetError` naming a file —
    the last net under the readers' own validation, for what they did not foresee."""
    from retarget.atomic_io import check_output_path, reading_inputs

    @functools.wraps(callback)
    def wrapper(**kwargs: Any) -> Any:
        paths = _path_values(kwargs)
        outputs = _path_values({k: v for k, v in kwargs.items() if k in OUTPUT_PARAMS})
        inputs = [p for p in _path_values({k: v for k, v in kwargs.items() if k not in OUTPUT_PARAMS}) if _is_file(p)]
        named = inputs + [p for p in paths if p not in inputs]
        with reading_inputs(inputs):
            try:
                for out in outputs:
                    if not out.is_dir():
                        check_output_path(out)
                return callback(**kwargs)
            except (click.ClickException, click.exceptions.Exit, click.Abort):
                raise
            except AsapRetargetError as exc:
                raise CommandError(_named(_one_line(exc), named)) from exc
            except OSError as exc:
                where = [Path(exc.filename)] if exc.filename else named
                raise CommandError(
                    _named(f"{exc.strerror or _one_line(exc)}; check the path and its permissions", where)
                ) from exc
            except MemoryError as exc:
                raise CommandError(
                    _named(
                        "ran out of memory; the input is too large or corrupt (see the size limits: "
                        "--max-frames, --max-elements)",
                        named,
                    )
                ) from exc
            except RecursionError as exc:
                raise CommandError(
                    _named("nested too deeply to process; the file is corrupt or hostile", named)
                ) from exc
            except Exception as exc:  # the last net: one line, never a traceback
                raise CommandError(
                    _named(
                        f"cannot process it ({type(exc).__name__}: {_one_line(exc)}); check the "
                        "file, or report this with the command line",
                        named,
                    )
                ) from exc

    return wrapper


def guard_commands(command: click.Command) -> None:
    """Apply :func:`guarded` to `command`'s callback, or to every command of a group."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            guard_commands(sub)
    elif command.callback is not None and not getattr(command.callback, "_guarded", False):
        command.callback = guarded(command.callback)
        command.callback._guarded = True  # type: ignore[attr-defined]
