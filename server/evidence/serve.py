"""`evidencekit serve`: REST and MCP (Streamable HTTP at /mcp) on one port, the store, the in-process worker."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from evidencekit.server.evidence.env_check import check_or_exit, configure_logging, setting
from evidencekit.server.evidence.store.db import (
    database_url,
    is_postgres,
    open_store,
    shown_url,
    sqlite_path,
)
from evidencekit.server.runtime import heap

READ_SECONDS_ENV = "EVIDENCEKIT_REQUEST_READ_SECONDS"
PER_CLIENT_ENV = "EVIDENCEKIT_MAX_CONNECTIONS_PER_CLIENT"
CONNECTIONS_ENV = "EVIDENCEKIT_MAX_CONNECTIONS"


async def _bootstrap(url: str) -> dict[str, Any]:
    from evidencekit.server.evidence.admin import bootstrap

    async with open_store(url):
        return await bootstrap()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="evidencekit serve", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-worker", action="store_true", help="do not run the in-process worker")
    parser.add_argument("--http", choices=("auto", "httptools", "h11"), default="auto",
                        help="HTTP/1.1 parser (auto: httptools when installed, as it is by default)")
    args = parser.parse_args(argv)
    check_or_exit()
    configure_logging("INFO")
    import uvicorn

    from evidencekit.server.evidence.app import create_app

    url = database_url()
    try:
        first = asyncio.run(_bootstrap(url))
    except Exception as exc:  # noqa: BLE001 - one clear line, not a traceback
        print(f"evidencekit: cannot open the database {shown_url(url)}: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 1
    base = f"http://{args.host}:{args.port}"
    where = "PostgreSQL" if is_postgres(url) else sqlite_path(url)
    print(f"evidencekit: serving {base} (database: {where})", flush=True)
    print(f"  workspace_id: {first['workspace_id']}")
    if first["created_token"]:  # a secret is shown once; later starts do not print it into logs
        print("first run: created a workspace, an editor and this token (also kept in the data folder, mode 0600)")
        print(f"  token:        {first['token']}")
        authorization = f"'Authorization: Bearer {first['token']}'"
    else:
        print(f"  token:        not shown again; set it with: TOKEN=$({sys.executable} -m evidencekit admin bootstrap "
              "--json | python3 -c 'import json, sys; print(json.load(sys.stdin)[\"token\"])')")
        authorization = '"Authorization: Bearer $TOKEN"'  # double quotes: the shell expands $TOKEN
    print(f"  try: curl -s {base}/research-api/evidence/retrieve -H {authorization} "
          f"-H 'Content-Type: application/json' -d '{{\"workspace_id\": \"{first['workspace_id']}\", "
          f"\"mutation_id\": \"'$(python3 -c 'import uuid; print(uuid.uuid4())')'\", "
          f"\"url\": \"https://example.com/\", \"kind\": \"url_text\"}}'", flush=True)
    from evidencekit.server.runtime.http_protocol import bounded_protocol

    read_seconds = float(setting(READ_SECONDS_ENV, "10"))
    per_client = int(setting(PER_CLIENT_ENV, "256"))
    # h11 bounds the head itself; the read deadline and the per-client cap come with httptools
    http: Any = args.http if args.http == "h11" else bounded_protocol(read_seconds, per_client)
    app = create_app(url, in_process_worker=not args.no_worker)
    heap.settle()
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", access_log=False, http=http,
                limit_concurrency=int(setting(CONNECTIONS_ENV, "2048")), timeout_keep_alive=5)
    return 0
