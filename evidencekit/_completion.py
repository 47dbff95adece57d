"""`evidencekit completion bash|zsh|tcsh|fish`: a shell completion script, written from the
commands' own argparse parsers (so it cannot drift from what the commands accept): by shtab, and
for fish, which shtab does not write, by fish_completion.

    eval "$(evidencekit completion bash)"              # this shell
    evidencekit completion bash > ~/.local/share/bash-completion/completions/evidencekit
    evidencekit completion zsh > "${fpath[1]}/_evidencekit"
    evidencekit completion fish > ~/.config/fish/completions/evidencekit.fish
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

import shtab

from evidencekit._argparse_adapter import arguments, subcommands
from evidencekit._fish_completion import fish_script
from evidencekit.cli import COMMANDS
from evidencekit.commands import available

SHELLS = ("bash", "zsh", "tcsh", "fish")
# Options and arguments that name files or folders: completed as paths.
FILES = {"from_file", "pages", "old", "new"}
FOLDERS = {"contracts", "project", "out"}


def _mark_paths(parser: argparse.ArgumentParser) -> None:
    for action in arguments(parser):
        if action.dest in FILES:
            action.complete = shtab.FILE  # type: ignore[attr-defined]
        elif action.dest in FOLDERS:
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
    for sub in subcommands(parser).values():
        _mark_paths(sub)


def tree_of(prog: str, parsers: dict[str, list[argparse.ArgumentParser]], helps: dict[str, str]) -> argparse.ArgumentParser:
    """One parser holding the commands of `prog`, each made of its parsers (merged, the first's
    description), as completion sees them; file and folder arguments marked as such."""
    root = argparse.ArgumentParser(prog=prog)
    root.add_argument("-V", "--version", action="store_true", help="print the version")
    commands = root.add_subparsers(dest="command")
    for name, found in parsers.items():
        commands.add_parser(name, parents=found, add_help=False, help=helps[name], conflict_handler="resolve",
                            description=found[0].description)
    _mark_paths(root)
    return root


def command_tree() -> argparse.ArgumentParser:
    """One parser holding every command, as completion sees them: the toolkit's, and those installed
    distributions add that can run here (`serve` and `mcp` of both, merged)."""
    parsers: dict[str, list[argparse.ArgumentParser]] = {}
    helps: dict[str, str] = {}
    for name, (help_text, module, _, parser_of) in COMMANDS.items():
        parsers[name] = [getattr(importlib.import_module(module), parser_of)()]
        helps[name] = help_text
    for name, command in available().items():
        if command.parser is not None and (name not in COMMANDS or name in ("serve", "mcp")):
            parsers.setdefault(name, []).insert(0, command.parser())
            helps.setdefault(name, command.help)
    return tree_of("evidencekit", parsers, helps)


def build_parser(prog: str = "evidencekit") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"{prog} completion", description=__doc__.replace("evidencekit", prog),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shell", choices=SHELLS, help="the shell the script is for")
    return parser


def script(tree: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of `tree` (its prog the command completed) for `shell`."""
    return fish_script(tree, tree.prog) if shell == "fish" else str(shtab.complete(tree, shell=shell))


def main(argv: list[str], prog: str = "evidencekit",
         tree: Callable[[], argparse.ArgumentParser] = command_tree) -> int:
    """`PROG completion SHELL`: the script for `tree()`'s commands (a command of another program,
    `research-evidence completion`, passes its own prog and tree)."""
    args = build_parser(prog).parse_args(argv)
    sys.stdout.write(script(tree(), args.shell))
    return 0
