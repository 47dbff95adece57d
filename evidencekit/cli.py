"""The `evidencekit` command: the toolkit's commands (init, serve MODULE:NAME, mcp MODULE:NAME,
codegen, conformance, completion), and those installed distributions add (`evidencekit.commands`):
the research-evidence service's, where it is installed (its own command: `research-evidence`)."""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Callable
from importlib import metadata

from evidencekit.commands import NotInstalled, available, help_line, installed
from evidencekit.commands import run as run_installed

__all__ = ["main", "version"]  # what the installed `evidencekit` script and the service's --version call

HEAD = """usage: evidencekit COMMAND [ARGS]   (evidencekit COMMAND --help for each; --version)

toolkit (run from a project whose pyproject.toml has [tool.evidencekit.codegen]):
  init [FOLDER] [--package P] [--contracts DIR]
                                              a new project that serves and passes conformance at once
  serve MODULE:NAME [--port P]                your project's app, hardened (REST, /mcp, /openapi.json)
  mcp MODULE:NAME                             your project's MCP tools over stdio
  codegen {generate,check,lock,diff}          the contract-first generator
  conformance (--url BASE | --mcp-url URL | --mcp-stdio CMD) [--read-only] [--junit FILE]
                                              check a running server against the contracts
                                              (exit 0 conforms, 1 violations, 2 usage, 3 unreachable)
  completion {bash,zsh,tcsh}                  print a shell completion script
                                              (eval "$(evidencekit completion bash)")"""

# The toolkit's commands: a line of help, the module, its function that runs the command (argv ->
# exit code) and the one that builds its argparse parser (for completion).
COMMANDS = {
    "init": ("start a project: contracts, generated code, handlers, tests", "evidencekit.codegen._scaffold",
             "main", "build_parser"),
    "serve": ("your project's app, hardened (REST, /mcp, /openapi.json)", "evidencekit.server.runtime._serving",
              "main", "build_parser"),
    "mcp": ("your project's MCP tools over stdio", "evidencekit.server.runtime._serving",
            "stdio_main", "build_stdio_parser"),
    "codegen": ("the contract-first generator", "evidencekit.codegen._cli", "main", "build_parser"),
    "conformance": ("check a running server against the contracts", "evidencekit.testing._gate.cli",
                    "main", "build_parser"),
    "completion": ("print a shell completion script", "evidencekit._completion", "main", "build_parser"),
}


def usage() -> str:
    """The toolkit's commands, then those of installed distributions that can run here."""
    lines = [HEAD]
    sections: dict[str, list[str]] = {}
    for name, command in available().items():
        if name in COMMANDS and name not in ("serve", "mcp"):
            continue  # the toolkit's own wins
        usage = f"(no MODULE:NAME) {command.usage}" if name in ("serve", "mcp") else None
        sections.setdefault(command.section or "installed commands", []).append(help_line(name, command, usage))
    for section, entries in sections.items():
        lines += ["", f"{section}:", *entries]
    return "\n".join(lines)


def version() -> str:
    try:
        return metadata.version("evidencekit")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    """The command, with a closed pipe (`evidencekit documents ... | head -1`) ending it quietly."""
    try:
        return _dispatch(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        # The reader went away: what it wanted was written. Point stdout at nothing so that the
        # interpreter's last flush does not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except NotInstalled as exc:
        print(exc, file=sys.stderr)
        return 2


def _own_app(args: list[str]) -> bool:
    """`serve`/`mcp` with MODULE:NAME, or with none installed that can run here: the toolkit's."""
    if len(args) > 1 and not args[1].startswith("-"):
        return True
    return args[0] not in available()


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        print(f"evidencekit {version()}")
        return 0
    if args[0].startswith("-"):  # an option before the command (`--workspace W retrieve ...`) goes after it
        named = next((index for index, arg in enumerate(args) if arg in installed()), None)
        if named is not None:
            args = [args[named], *args[:named], *args[named + 1:]]
    name = args[0]
    if name in COMMANDS and (name not in ("serve", "mcp") or _own_app(args)):
        _, module, function, _ = COMMANDS[name]
        main_of_command: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
        return main_of_command(args[1:])
    ran = run_installed(name, args[1:])
    if ran is not None:
        return ran
    close = difflib.get_close_matches(name, [*COMMANDS, *available()], n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    print(f"evidencekit: unknown command {name!r} ({hint}try: evidencekit --help)", file=sys.stderr)
    return 2
