"""What the completion scripts read of an argparse parser that argparse does not publish: the only
module that touches argparse's private names (`ArgumentParser._actions`, `_SubParsersAction`,
`_HelpAction`, `_SubParsersAction._choices_actions`).

argparse has no public way to list a parser's arguments or sub-commands once they are added; the
completion scripts (evidencekit._completion, evidencekit._fish_completion) and the service's
commands (evidencekit.server.evidence.cli, which offers the client's sub-commands as commands of
their own) read a parser tree only through these functions. shtab, which writes the bash, zsh and
tcsh scripts, reads the same attributes itself.

tests/test_argparse_adapter.py holds them to what completion relies on: every option and positional
argument in order, no help or sub-command action among them, every sub-command (nested ones too)
with its parser and its help. Tested on CPython 3.11.2 and 3.11.7 (`requires-python` is >=3.11),
3.12.1 and 3.13.0; 3.14 not yet (argparse is the Python's own: there is no upper pin to keep it in).
"""

from __future__ import annotations

import argparse


def _subparsers_action(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    return next((action for action in parser._actions if isinstance(action, argparse._SubParsersAction)), None)


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options and positional arguments of `parser`, in the order added (parents' first where
    they came first); not its -h/--help, nor the action holding its sub-commands."""
    return [action for action in parser._actions
            if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction)]


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The sub-commands of `parser` (aliases too), each with its parser, in the order added; empty
    when it has none."""
    action = _subparsers_action(parser)
    return dict(action.choices) if action is not None else {}


def subcommand_helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The help of each sub-command of `parser` that has one (by its name, not its aliases)."""
    action = _subparsers_action(parser)
    if action is None:
        return {}
    return {choice.dest: choice.help for choice in action._choices_actions if choice.help}
