"""Commands other installed distributions add to `evidencekit`: entry points in the
`evidencekit.commands` group, each named after its command and naming a `Command`.

    [project.entry-points."evidencekit.commands"]
    report = "my_api.cli:report"          # report = Command("make the weekly report", main, ...)

The toolkit's own commands (init, serve MODULE:NAME, mcp MODULE:NAME, codegen, conformance,
completion) come first: an entry point cannot replace one, except `serve` and `mcp` given no
MODULE:NAME, which go to the entry point of that name when one is installed (a distribution's
own server, as the research-evidence service's `serve`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata

__all__ = ["Command"]  # the rest serves the `evidencekit` command itself

GROUP = "evidencekit.commands"


@dataclass(frozen=True)
class Command:
    help: str  # one line for `evidencekit --help`
    main: Callable[[list[str]], int]  # the arguments after the command's name; the exit code
    usage: str = ""  # what follows the name in `evidencekit --help` ("URL [--wait]")
    parser: Callable[[], argparse.ArgumentParser] | None = None  # for shell completion
    missing: Callable[[], list[str]] = field(default=lambda: [])  # modules it needs that are absent
    install: str = ""  # how to install them ("pip install 'evidencekit[service]'")
    section: str = ""  # the heading it is listed under in `evidencekit --help`


def help_line(name: str, command: Command, usage: str | None = None) -> str:
    """`  name usage   help`, the help in a column of its own (on the next line when the usage is long)."""
    shown = f"  {name} {command.usage if usage is None else usage}".rstrip()
    return f"{shown:<46}{command.help}" if len(shown) < 46 else f"{shown}\n{'':46}{command.help}"


class NotInstalled(Exception):
    """The command's distribution is there, what it needs is not: the message says what to install."""


@cache
def _loaded() -> tuple[dict[str, Command], dict[str, str]]:
    found: dict[str, Command] = {}
    broken: dict[str, str] = {}  # name -> why its entry point gives no Command
    for point in metadata.entry_points(group=GROUP):
        try:
            command = point.load()
        except Exception as exc:  # noqa: BLE001 - another distribution's fault must not break the toolkit's commands
            broken.setdefault(point.name, f"{point.value} cannot be loaded: {type(exc).__name__}: {exc}")
            continue
        if isinstance(command, Command):
            found.setdefault(point.name, command)
        else:
            broken.setdefault(point.name, f"{point.value} is a {type(command).__name__}, not an "
                                          "evidencekit.commands.Command")
    return found, broken


def installed() -> dict[str, Command]:
    """Every command the installed distributions add, by name."""
    return _loaded()[0]


def available() -> dict[str, Command]:
    """The installed commands whose dependencies are all there."""
    return {name: command for name, command in installed().items() if not command.missing()}


def run(name: str, argv: list[str]) -> int | None:
    """Run an installed command (None: there is none of that name); NotInstalled when what it needs
    is missing."""
    command = installed().get(name)
    if command is None:
        if name in _loaded()[1]:
            raise NotInstalled(f"evidencekit {name}: the command's entry point ({GROUP}) {_loaded()[1][name]}")
        return None
    absent = command.missing()
    if absent:
        raise NotInstalled(f"evidencekit {name}: needs {', '.join(absent)}, which this install lacks"
                           + (f": {command.install}" if command.install else ""))
    return command.main(argv)
