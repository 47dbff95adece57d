"""The `evidencekit` command: `serve`, `mcp` (stdio), `admin ...`, `worker`, `codegen ...` (generate, check, lock, diff, import)."""

from __future__ import annotations

import sys

USAGE = """usage: evidencekit COMMAND [ARGS]   (evidencekit COMMAND --help for each)

client (EVIDENCEKIT_URL, SOSOAPI_ACCESS_TOKEN, EVIDENCEKIT_WORKSPACE):
  retrieve URL [--wait] | --from-file FILE   retrieve public pages or captions as evidence
  status MUTATION_ID                          show a receipt
  documents documents/HOST/PATH ...           read stored documents as markdown

server (DATABASE_URL or EVIDENCEKIT_DATA_DIR, EVIDENCEKIT_*; see README.md):
  serve [--host H] [--port P] [--no-worker] [--http auto|httptools|h11]
                                              REST and MCP (Streamable HTTP) with an in-process worker
  mcp                                         MCP over stdio (SOSOAPI_ACCESS_TOKEN)
  worker                                      a worker process (several may share PostgreSQL)
  admin ...                                   workspaces, users, members, tokens
  import-pages PAGE...                        take the vendor's published pages into contracts/

toolkit (run from a project whose pyproject.toml has [tool.evidencekit.codegen]):
  codegen {generate,check,lock,diff}          the contract-first generator

client exit codes: 0 success, 1 settled without success, 2 bad usage or input, 3 refused by the
server, 4 server unreachable, 5 --wait timed out."""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] in ("retrieve", "status", "documents") or args[0].partition("=")[0] == "--workspace":
        from evidencekit.client.evidence.cli import main as client_main

        return client_main(args)
    if args[0] == "mcp":
        from evidencekit.server.evidence.mcp_server import main as mcp_main

        return mcp_main(args[1:])
    if args[0] == "serve":
        from evidencekit.server.evidence.serve import main as serve_main

        return serve_main(args[1:])
    if args[0] == "admin":
        from evidencekit.server.evidence.admin import main as admin_main

        return admin_main(args[1:])
    if args[0] == "worker":
        from evidencekit.server.evidence.worker_process import main as worker_main

        return worker_main(args[1:])
    if args[0] == "import-pages":
        from evidencekit.server.evidence.page_import import main as import_main

        return import_main(args[1:])
    if args[0] == "codegen":
        from evidencekit.codegen.cli import main as codegen_main

        return codegen_main(args[1:], prog="evidencekit codegen")
    print(f"evidencekit: unknown command {args[0]!r} (try: evidencekit --help)", file=sys.stderr)
    return 2
