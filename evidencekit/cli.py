"""The `evidencekit` command: `serve`, `mcp` (stdio), `admin ...`, `worker`, `codegen ...` (generate, check, lock, diff, import), `conformance` (the gate)."""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Callable
from importlib import metadata

USAGE = """usage: evidencekit COMMAND [ARGS]   (evidencekit COMMAND --help for each; --version)

client (EVIDENCEKIT_URL, SOSOAPI_ACCESS_TOKEN, EVIDENCEKIT_WORKSPACE):
  retrieve URL [--wait] | --from-file FILE   retrieve public pages or captions as evidence
  status MUTATION_ID                          show a receipt
  documents documents/HOST/PATH ...           read stored documents as markdown

server (DATABASE_URL or EVIDENCEKIT_DATA_DIR, EVIDENCEKIT_*: docs/settings.md):
  serve [--host H] [--port P] [--no-worker] [--http auto|httptools|h11]
                                              REST and MCP (Streamable HTTP) with an in-process worker
  mcp                                         MCP over stdio (SOSOAPI_ACCESS_TOKEN)
  worker                                      a worker process (several may share PostgreSQL)
  admin ...                                   workspaces, users, members, tokens
  import-pages PAGE...                        take the vendor's published pages into contracts/

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
                                              (eval "$(evidencekit completion bash)")

client exit codes: 0 success, 1 settled without success, 2 bad usage or input, 3 refused by the
server, 4 server unreachable, 5 --wait timed out."""


CLIENT_COMMANDS = ("retrieve", "status", "documents")  # evidencekit.client.evidence.cli
# The other commands: the module whose main(argv) runs it and whose build_parser() describes it
# (for completion), and a line of help.
COMMANDS = {
    "serve": ("evidencekit.server.evidence.serve", "REST and MCP (Streamable HTTP) with an in-process worker"),
    "mcp": ("evidencekit.server.evidence.mcp_server", "MCP over stdio (SOSOAPI_ACCESS_TOKEN)"),
    "worker": ("evidencekit.server.evidence.worker_process", "a worker process (several may share PostgreSQL)"),
    "admin": ("evidencekit.server.evidence.admin", "workspaces, users, members, tokens"),
    "import-pages": ("evidencekit.server.evidence.page_import", "take the vendor's published pages into contracts/"),
    "init": ("evidencekit.codegen.scaffold", "start a project: contracts, generated code, handlers, tests"),
    "codegen": ("evidencekit.codegen.cli", "the contract-first generator"),
    "conformance": ("evidencekit.testing.gate.cli", "check a running server against the contracts"),
    "completion": ("evidencekit.completion", "print a shell completion script"),
}


# The research-evidence service's commands, and what they need beyond the toolkit: the `service` extra.
SERVICE_COMMANDS = frozenset({"serve", "mcp", "worker", "admin", "import-pages"})
SERVICE_MODULES = ("tortoise", "lxml", "parsel", "pysrt", "charset_normalizer", "uuid_utils")


def service_missing() -> list[str]:
    """The service extra's modules this install lacks (empty: the service can run)."""
    import importlib.util

    return [name for name in SERVICE_MODULES if importlib.util.find_spec(name) is None]


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


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        print(f"evidencekit {version()}")
        return 0
    if args[0] in CLIENT_COMMANDS or args[0].partition("=")[0] == "--workspace":
        from evidencekit.client.evidence.cli import main as client_main

        return client_main(args)
    if args[0] in ("serve", "mcp") and len(args) > 1 and not args[1].startswith("-"):  # a project's own app
        from evidencekit.server.runtime import serving

        return serving.main(args[1:]) if args[0] == "serve" else serving.stdio_main(args[1:])
    if args[0] in SERVICE_COMMANDS and (missing := service_missing()):
        print(f"evidencekit {args[0]}: this command runs the research-evidence service, which needs the "
              f"service extra (missing: {', '.join(missing)}): pip install 'evidencekit[service]'. For your own "
              "contracts: evidencekit serve MODULE:NAME (evidencekit init writes one).", file=sys.stderr)
        return 2
    if args[0] in COMMANDS:
        main_of_command: Callable[[list[str]], int] = importlib.import_module(COMMANDS[args[0]][0]).main
        return main_of_command(args[1:])
    close = difflib.get_close_matches(args[0], [*CLIENT_COMMANDS, *COMMANDS], n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    print(f"evidencekit: unknown command {args[0]!r} ({hint}try: evidencekit --help)", file=sys.stderr)
    return 2
