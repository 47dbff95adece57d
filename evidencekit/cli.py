"""The `evidencekit` command: `serve`, `mcp` (stdio), `admin ...`, `worker`, `codegen ...` (generate, check, lock, diff, import)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print("usage: evidencekit {retrieve | status | documents | serve [--host H] [--port P] | mcp | admin ... | worker | codegen {generate,check,lock,diff,import} ...}")
        return 0 if args else 2
    if args[0] in ("retrieve", "status", "documents") or args[0] == "--workspace":
        from client.cli import main as client_main

        return client_main(args)
    if args[0] == "mcp":
        from server.mcp_server import main as mcp_main

        return mcp_main()
    if args[0] == "serve":
        from server.serve import main as serve_main

        return serve_main(args[1:])
    if args[0] == "admin":
        from server.admin import main as admin_main

        return admin_main(args[1:])
    if args[0] == "worker":
        from server.worker_process import main as worker_main

        return worker_main()
    if args[0] == "codegen":
        from codegen.cli import main as codegen_main

        return codegen_main(args[1:], prog="evidencekit codegen")
    print(f"evidencekit: unknown command {args[0]!r} (try: evidencekit codegen --help)", file=sys.stderr)
    return 2
