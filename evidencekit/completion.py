"""`evidencekit completion bash|zsh|tcsh`: a shell completion script, written by shtab from the
commands' own argparse parsers (so it cannot drift from what the commands accept).

    eval "$(evidencekit completion bash)"              # this shell
    evidencekit completion bash > ~/.local/share/bash-completion/completions/evidencekit
    evidencekit completion zsh > "${fpath[1]}/_evidencekit"
"""

from __future__ import annotations

import argparse
import importlib
import sys

import shtab

from evidencekit.cli import COMMANDS, SERVICE_COMMANDS, service_missing

SHELLS = ("bash", "zsh", "tcsh")
# Options and arguments that name files or folders: completed as paths.
FILES = {"from_file", "pages", "old", "new"}
FOLDERS = {"contracts", "project", "out"}


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    return next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))


def _mark_paths(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _mark_paths(sub)
        elif action.dest in FILES:
            action.complete = shtab.FILE  # type: ignore[attr-defined]
        elif action.dest in FOLDERS:
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]


def command_tree() -> argparse.ArgumentParser:
    """One parser holding every command, as completion sees them."""
    from evidencekit.client.evidence.cli import build_parser as client

    root = client()  # retrieve, status, documents, and --workspace before the command
    root.add_argument("-V", "--version", action="store_true", help="print the version")
    commands = _subparsers(root)
    without_service = bool(service_missing())
    for name, (module, help_text) in COMMANDS.items():
        if without_service and name in SERVICE_COMMANDS:
            continue  # not installed: nothing to complete
        parser = importlib.import_module(module).build_parser()
        commands.add_parser(name, parents=[parser], add_help=False, help=help_text,
                            description=parser.description)
    _mark_paths(root)
    return root


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidencekit completion", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shell", choices=SHELLS, help="the shell the script is for")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    sys.stdout.write(shtab.complete(command_tree(), shell=args.shell))
    return 0
