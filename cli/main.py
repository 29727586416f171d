"""The `asap-retarget` command line: one Click group; each command lives in its own module,
parses options, calls one library function and prints a summary."""

from __future__ import annotations

import sys

import click
from rich.markup import escape

from cli.common import err_console, guard_commands
from cli.options import add_size_limit_options, size_limit_options
from retarget.errors import AsapRetargetError


class _Group(click.Group):
    """Turns the package's own errors into a one-line message and exit code 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except AsapRetargetError as exc:
            message = " ".join(str(exc).split())
            err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
            sys.exit(1)
        except KeyboardInterrupt:  # Ctrl-C: the shell's code for SIGINT, not click's "Aborted!" and exit code 1
            err_console.print("interrupted", highlight=False)
            sys.exit(130)


@click.group(cls=_Group)
@click.version_option(package_name="asap-retarget")
def main() -> None:
    """Retarget human SMPL motion onto the Unitree G1 and write ASAP motion libraries."""


main.params.extend(size_limit_options())  # before the command name; _register adds them after it too


def _register() -> None:
    # One line per command module; each module defines a Click command named after its file.
    from cli.batch_cmd import batch
    from cli.bench_log_cmd import bench_log
    from cli.collect_cmd import collect
    from cli.convert_cmd import convert
    from cli.delta_cmd import delta
    from cli.eval_cmd import eval_
    from cli.eval_policy_cmd import eval_policy
    from cli.export_policy_cmd import export_policy
    from cli.filter_cmd import filter_
    from cli.inspect_cmd import inspect
    from cli.loop_cmd import loop
    from cli.play_cmd import play
    from cli.render_cmd import render
    from cli.report_cmd import report
    from cli.retarget_cmd import retarget
    from cli.sim2sim_cmd import sim2sim
    from cli.summary_cmd import summary
    from cli.train_cmd import train

    for command in (
        retarget,
        batch,
        summary,
        inspect,
        eval_,
        filter_,
        convert,
        render,
        report,
        train,
        eval_policy,
        export_policy,
        bench_log,
        collect,
        delta,
        loop,
        play,
        sim2sim,
    ):
        guard_commands(command)
        add_size_limit_options(command)
        main.add_command(command)


_register()


if __name__ == "__main__":
    main()
