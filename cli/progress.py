"""A progress bar for commands that take more than a couple of seconds (on stderr, so stdout stays parseable)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from cli.common import err_console

Update = Callable[[int, int, str], None]
"""``update(done, total, item)``: ``done`` of ``total`` units finished, ``item`` the one being worked on."""


@contextmanager
def progress_bar(label: str, unit: str) -> Iterator[Update]:
    """A bar that appears on the first update and disappears when the block ends (a summary line follows it)."""
    progress = Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[item]}"),
        console=err_console,
        transient=True,
    )
    task: list[object] = []

    def update(done: int, total: int, item: str = "") -> None:
        if not task:
            task.append(progress.add_task(label, total=total, item=item))
        progress.update(task[0], completed=done, total=total, item=item)  # type: ignore[arg-type]

    with progress:
        yield update
