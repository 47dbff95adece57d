"""A fish completion script written from an argparse parser tree (shtab writes bash, zsh and tcsh,
not fish): commands and sub-commands with their help, options with theirs, choices, and file or
folder names where an argument is marked as one (completion._mark_paths)."""

from __future__ import annotations

import argparse

import shtab

from evidencekit._argparse_adapter import arguments, subcommand_helps, subcommands


def quote(text: str) -> str:
    """`text` as one fish word: inside fish's single quotes only \\ and ' are special."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _condition(path: list[str], siblings: list[str]) -> str:
    """fish's test that the words typed so far are `path`, and none of `siblings` follows."""
    tests = [f"__fish_seen_subcommand_from {quote(word)}" for word in path]
    if siblings:
        tests.append("not __fish_seen_subcommand_from " + " ".join(quote(word) for word in siblings))
    elif not path:
        tests.append("__fish_use_subcommand")
    return "; and ".join(tests)


def _line(program: str, condition: str, *parts: str) -> str:
    return f"complete -c {program} -n {quote(condition)} " + " ".join(part for part in parts if part)


def _help(text: str | None) -> str:
    text = " ".join((text or "").split()).replace("%(default)s", "").replace("%%", "%")
    return f"-d {quote(text[:80])}" if text and text != argparse.SUPPRESS else ""


def _arguments(program: str, parser: argparse.ArgumentParser, path: list[str], below: list[str]) -> list[str]:
    lines = []
    condition = _condition(path, below)
    for action in arguments(parser):
        complete = getattr(action, "complete", None)
        values = ""
        if action.choices:
            # fish splits -a's argument into words again: each choice quoted inside it too
            values = "-x -a " + quote(" ".join(quote(str(choice)) for choice in action.choices))
        elif complete == shtab.DIRECTORY:
            values = "-x -a '(__fish_complete_directories)'"
        elif complete == shtab.FILE:
            values = "-r -F"
        elif action.nargs != 0:
            values = "-x"
        if action.option_strings:
            names = [f"-l {quote(name[2:])}" if name.startswith("--") else f"-s {quote(name[1:])}"
                     for name in action.option_strings]
            lines.append(_line(program, condition, *names, values, _help(action.help)))
        elif values not in ("", "-x"):  # a positional argument with choices or paths
            lines.append(_line(program, condition, values, _help(action.help)))
    return lines


def fish_script(parser: argparse.ArgumentParser, program: str) -> str:
    lines = [f"# fish completion for {program}; load: {program} completion fish | source",
             f"complete -c {program} -f"]

    def walk(node: argparse.ArgumentParser, path: list[str]) -> None:
        children = subcommands(node)
        names = list(children)
        lines.extend(_arguments(program, node, path, names))
        helps = subcommand_helps(node)
        for name in names:
            lines.append(_line(program, _condition(path, names), "-a", quote(name), _help(helps.get(name))))
        for name, child in children.items():
            walk(child, [*path, name])

    walk(parser, [])
    return "\n".join(lines) + "\n"
