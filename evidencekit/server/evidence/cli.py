"""`research-evidence`: the research-evidence service's commands, apart from the toolkit's.

The same commands are offered to `evidencekit` through entry points (`evidencekit.commands`), so
`evidencekit retrieve ...` and `evidencekit serve` keep working where the service is installed;
a toolkit-only install (no `service` extra) lists none of them.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

from evidencekit.commands import Command, help_line

PROG = "research-evidence"
INSTALL = "pip install 'evidencekit[service]'"
# What the service needs beyond the toolkit: the `service` extra.
SERVICE_MODULES = ("tortoise", "lxml", "parsel", "pysrt", "charset_normalizer", "uuid_utils")

CLIENT = ("retrieve", "status", "documents", "search")  # the rest serve


def usage() -> str:
    """The service's commands, written from their Command entries (the lines `evidencekit --help`
    shows of them too)."""
    client = [help_line(name, command) for name, command in COMMANDS.items() if name in CLIENT]
    server = [help_line(name, command) for name, command in COMMANDS.items() if name not in CLIENT]
    return "\n".join([
        f"usage: {PROG} COMMAND [ARGS]   ({PROG} COMMAND --help for each)", "",
        "The research-evidence service, built with the evidencekit toolkit (`evidencekit --help`).", "",
        "client (EVIDENCEKIT_URL, SOSOAPI_ACCESS_TOKEN, EVIDENCEKIT_WORKSPACE):", *client, "",
        "server (DATABASE_URL or EVIDENCEKIT_DATA_DIR, EVIDENCEKIT_*: docs/settings.md):", *server, "",
        "client exit codes: 0 success, 1 settled without success, 2 bad usage or input, 3 refused by the",
        "server, 4 server unreachable, 5 --wait timed out.", "",
        f"{'  completion {' + ','.join(SHELLS) + '}':<46}print a shell completion script",
        f"{'':46}(eval \"$({PROG} completion bash)\")", "",
        "The same commands answer as `evidencekit COMMAND` where the service is installed."])


@cache
def missing() -> list[str]:
    """The service extra's modules this install lacks (empty: the service can run)."""
    return [name for name in SERVICE_MODULES if importlib.util.find_spec(name) is None]


def _client(name: str) -> Callable[[list[str]], int]:
    def main(argv: list[str]) -> int:
        from evidencekit.client.evidence.cli import main as client_main

        return client_main([name, *argv])

    return main


def _client_parser(name: str) -> Callable[[], argparse.ArgumentParser]:
    def parser() -> argparse.ArgumentParser:
        from evidencekit._argparse_adapter import subcommands
        from evidencekit.client.evidence.cli import build_parser

        return subcommands(build_parser())[name]

    return parser


def _server(module: str) -> tuple[Callable[[list[str]], int], Callable[[], argparse.ArgumentParser]]:
    """The command in `evidencekit.server.evidence.<module>` (`main`, `build_parser`), imported when run."""

    def loaded() -> Any:
        return importlib.import_module(f"evidencekit.server.evidence.{module}")

    def main(argv: list[str]) -> int:
        code: int = loaded().main(argv)
        return code

    def parser() -> argparse.ArgumentParser:
        built: argparse.ArgumentParser = loaded().build_parser()
        return built

    return main, parser


def _command(help_text: str, usage: str, *, module: str = "", client: str = "") -> Command:
    main, parser = (_client(client), _client_parser(client)) if client else _server(module)
    return Command(help_text, main, usage, parser, missing, INSTALL,
                   section=f"the research-evidence service ({PROG} --help)")


retrieve = _command("retrieve public pages or captions as evidence", "URL [--wait] | --from-file FILE",
                    client="retrieve")
status = _command("show a receipt", "MUTATION_ID", client="status")
documents = _command("read stored documents as markdown", "documents/HOST/PATH ...", client="documents")
search = _command("find stored documents by words in them", "WORDS... [--limit N]", client="search")
serve = _command("REST and MCP (Streamable HTTP) with an in-process worker",
                 "[--host H] [--port P] [--no-worker] [--http auto|httptools|h11]", module="serve")
mcp = _command("MCP over stdio (SOSOAPI_ACCESS_TOKEN)", "", module="mcp_server")
worker = _command("a worker process (several may share PostgreSQL)", "", module="worker_process")
admin = _command("workspaces, users, members, tokens", "...", module="admin")
import_pages = _command("take the vendor's published pages into contracts/", "PAGE...", module="page_import")

SHELLS = ("bash", "zsh", "tcsh", "fish")  # as `evidencekit completion` (evidencekit._completion.SHELLS)


def command_tree() -> argparse.ArgumentParser:
    """`research-evidence`'s commands as completion sees them (and `completion` itself)."""
    from evidencekit._completion import build_parser as completion_parser
    from evidencekit._completion import tree_of

    parsers = {name: [command.parser()] for name, command in COMMANDS.items() if command.parser is not None}
    helps = {name: command.help for name, command in COMMANDS.items()}
    parsers["completion"], helps["completion"] = [completion_parser(PROG)], "print a shell completion script"
    return tree_of(PROG, parsers, helps)


def completion(argv: list[str]) -> int:
    """`research-evidence completion bash|zsh|tcsh|fish`: written as `evidencekit completion` is."""
    from evidencekit._completion import main as completion_main

    return completion_main(argv, PROG, command_tree)


COMMANDS: dict[str, Command] = {"retrieve": retrieve, "status": status, "documents": documents, "search": search,
                                "serve": serve, "mcp": mcp, "worker": worker, "admin": admin,
                                "import-pages": import_pages}


def main(argv: list[str] | None = None) -> int:
    """`research-evidence COMMAND ...`, a closed pipe (`| head -1`) ending it quietly."""
    args = sys.argv[1:] if argv is None else argv
    try:
        return _dispatch(args)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        from evidencekit.cli import version

        print(f"{PROG} {version()}")
        return 0
    absent = missing()
    if absent and (args[0] in COMMANDS or args[0].partition("=")[0] == "--workspace"):
        print(f"{PROG}: the research-evidence service needs the service extra (missing: {', '.join(absent)}): "
              f"{INSTALL}", file=sys.stderr)
        return 2
    if args[0].partition("=")[0] == "--workspace":  # `--workspace W retrieve ...`
        from evidencekit.client.evidence.cli import main as client_main

        return client_main(args)
    if args[0] in COMMANDS:
        return COMMANDS[args[0]].main(args[1:])
    if args[0] == "completion":
        return completion(args[1:])
    close = difflib.get_close_matches(args[0], list(COMMANDS), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    print(f"{PROG}: unknown command {args[0]!r} ({hint}try: {PROG} --help)", file=sys.stderr)
    return 2
