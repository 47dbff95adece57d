"""evidencekit._argparse_adapter reads what argparse does not publish; these tests hold it to what
completion relies on, so a Python whose argparse moves those names fails here, not in a user's shell.
They import nothing but the adapter and the completion writers (run them on every Python the
project supports)."""

from __future__ import annotations

import argparse

from evidencekit._argparse_adapter import arguments, subcommand_helps, subcommands
from evidencekit._fish_completion import fish_script


def tree() -> argparse.ArgumentParser:
    """A parser with what the commands use: options before and after sub-commands, a parent's,
    choices, a positional, aliases, nested sub-commands, one without help, one with no arguments."""
    root = argparse.ArgumentParser(prog="tool")
    root.add_argument("-V", "--version", action="store_true", help="print the version")
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("--json", action="store_true", help="as JSON")
    commands = root.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser("fetch", parents=[shared], aliases=["get"], help="fetch a URL")
    fetch.add_argument("url", help="the URL")
    fetch.add_argument("--kind", choices=("page", "captions"), default="page", help="what to take")
    admin = commands.add_parser("admin", help="administer")
    below = admin.add_subparsers(dest="what")
    token = below.add_parser("token", help="make a token")
    token.add_argument("--role", choices=("viewer", "editor"))
    below.add_parser("tokens")  # no help
    commands.add_parser("version", help="the version")
    return root


def test_arguments_are_every_option_and_positional_in_order_without_help_or_sub_commands() -> None:
    root = tree()
    assert [action.option_strings for action in arguments(root)] == [["-V", "--version"]]
    fetch = subcommands(root)["fetch"]
    assert [(action.dest, action.option_strings) for action in arguments(fetch)] == [
        ("json", ["--json"]), ("url", []), ("kind", ["--kind"])]
    assert list(arguments(fetch)[2].choices or ()) == ["page", "captions"]
    assert arguments(subcommands(root)["version"]) == []
    assert arguments(subcommands(root)["admin"]) == []  # its sub-commands are not arguments


def test_sub_commands_are_every_name_with_its_parser_nested_ones_too() -> None:
    root = tree()
    found = subcommands(root)
    assert list(found) == ["fetch", "get", "admin", "version"]
    assert found["get"] is found["fetch"]
    assert found["fetch"].prog == "tool fetch"
    assert list(subcommands(found["admin"])) == ["token", "tokens"]
    assert subcommands(found["admin"])["token"].prog == "tool admin token"
    assert subcommands(found["fetch"]) == {}  # none: empty, not an error


def test_sub_command_helps_are_those_given() -> None:
    root = tree()
    assert subcommand_helps(root) == {"fetch": "fetch a URL", "admin": "administer", "version": "the version"}
    assert subcommand_helps(subcommands(root)["admin"]) == {"token": "make a token"}
    assert subcommand_helps(subcommands(root)["version"]) == {}


def test_the_fish_script_offers_every_sub_command_and_option_of_the_tree() -> None:
    lines = fish_script(tree(), "tool").replace("\\'", "'").splitlines()  # fish's quotes in quotes, undone

    def offered(name: str, after: str = "") -> str:
        found = [line for line in lines if f"-a '{name}'" in line and after in line]
        assert len(found) == 1, (name, after)
        return found[0]

    for name in ("fetch", "get", "admin", "version"):
        offered(name, "not __fish_seen_subcommand_from 'fetch' 'get' 'admin' 'version'")
    assert offered("fetch").endswith("-d 'fetch a URL'") and "-d" not in offered("get")
    assert offered("token", "__fish_seen_subcommand_from 'admin'").endswith("-d 'make a token'")
    offered("tokens", "__fish_seen_subcommand_from 'admin'")
    for option in ("-s 'V'", "-l 'version'", "-l 'json'", "-l 'kind'", "-l 'role'"):
        assert any(f" {option} " in line for line in lines), option
    assert any("-l 'kind' -x -a ''page' 'captions''" in line for line in lines)
    assert any("__fish_seen_subcommand_from 'token'" in line and "-l 'role'" in line for line in lines)
    assert not any("-l 'help'" in line for line in lines)  # fish offers its own
