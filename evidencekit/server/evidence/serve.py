"""`research-evidence serve`: REST and MCP (Streamable HTTP at /mcp) on one port, the store, the in-process worker."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
import uuid
from typing import Any

from evidencekit.server.evidence.env_check import check_or_exit, configure_logging, setting
from evidencekit.server.evidence.fetch.policy import ALLOW_ENV
from evidencekit.server.evidence.store.db import (
    DATABASE_URL_ENV,
    database_url,
    is_postgres,
    open_store,
    selecting_env,
    shown_url,
    sqlite_path,
)
from evidencekit.server.generated.operations import RETRIEVE, STATUS
from evidencekit.server.runtime import _serving as serving

READ_SECONDS_ENV = "EVIDENCEKIT_REQUEST_READ_SECONDS"
PER_CLIENT_ENV = "EVIDENCEKIT_MAX_CONNECTIONS_PER_CLIENT"
CONNECTIONS_ENV = "EVIDENCEKIT_MAX_CONNECTIONS"


async def _bootstrap(url: str) -> dict[str, Any]:
    from evidencekit.server.evidence.admin import bootstrap

    async with open_store(url):
        return await bootstrap()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="research-evidence serve", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine "
                        "only; 0.0.0.0 for every interface)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0: any free port)")
    parser.add_argument("--no-worker", action="store_true", help="do not run the in-process worker")
    parser.add_argument("--http", choices=("auto", "httptools", "h11"), default="auto",
                        help="HTTP/1.1 parser (auto: httptools when installed, as it is by default)")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    check_or_exit()
    configure_logging("INFO")

    from evidencekit.server.evidence.app import create_app

    url = database_url()
    try:  # bind first: the banner names a port that is really ours, and a first run whose port is
        # taken creates nothing (its token would be shown once, to a start that did not serve)
        listening = serving.listen(args.host, args.port)
    except serving.UsageError as exc:
        print(f"evidencekit: {exc}", file=sys.stderr)
        return 1
    try:
        first = asyncio.run(_bootstrap(url))
    except Exception as exc:  # noqa: BLE001 - one clear line, not a traceback
        listening.close()
        print(f"evidencekit: cannot open the database {shown_url(url)}: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 1
    port = listening.getsockname()[1]
    base = f"http://{args.host if ':' not in args.host else f'[{args.host}]'}:{port}"
    where = "PostgreSQL" if is_postgres(url) else sqlite_path(url)
    print(f"evidencekit: serving {base} (database: {where})", flush=True)
    allowed = os.environ.get(ALLOW_ENV, "").strip()
    if allowed:
        print(f"evidencekit: WARNING: {ALLOW_ENV}={allowed}: anyone who may call retrieve can read these hosts "
              "at private addresses and over plain http; for tests and intranets only", file=sys.stderr, flush=True)
    print(f"  workspace_id: {first['workspace_id']}")
    if first["created_token"]:  # a secret is shown once; later starts do not print it into logs
        print("first run: created a workspace, an editor and this token (also kept in the data folder, mode 0600)")
        print(f"  token:        {first['token']}")
        authorization = f"'Authorization: Bearer {first['token']}'"
    else:
        # the settings that chose this database go into the line: pasted into a shell without them, a
        # bootstrap would open (and create) another database, whose token this server refuses
        chosen, hidden = selecting_env()
        print(f"  token:        not shown again; set it with: TOKEN=$({chosen}{shlex.quote(sys.executable)} -m "
              "evidencekit admin bootstrap --json | python3 -c 'import json, sys; print(json.load(sys.stdin)"
              "[\"token\"])')" + (f"  # in a shell where {DATABASE_URL_ENV} is set as for this server (it "
                                    "holds a password, not printed here)" if hidden else ""))
        authorization = '"Authorization: Bearer $TOKEN"'  # double quotes: the shell expands $TOKEN
    workspace, mutation = first["workspace_id"], uuid.uuid4()  # one id in both lines: pasting either again is safe
    print(f"  try: curl -s {base}{RETRIEVE.rest_path} -H {authorization} "
          f"-H 'Content-Type: application/json' -d '{{\"workspace_id\": \"{workspace}\", "
          f"\"mutation_id\": \"{mutation}\", \"url\": \"https://example.com/\", \"kind\": \"url_text\"}}'")
    print(f"  then: curl -s {base}{STATUS.rest_path} -H {authorization} -H 'Content-Type: application/json' "
          f"-d '{{\"workspace_id\": \"{workspace}\", \"mutation_id\": \"{mutation}\"}}'")
    token = first["token"] if first["created_token"] else "$TOKEN"
    print(f"  CLI:  export EVIDENCEKIT_URL={base} SOSOAPI_ACCESS_TOKEN={token} EVIDENCEKIT_WORKSPACE={workspace}"
          "\n        research-evidence retrieve https://example.com/ --wait", flush=True)
    limits = serving.ServingLimits(read_seconds=float(setting(READ_SECONDS_ENV, "10")),
                            per_client=int(setting(PER_CLIENT_ENV, "256")),
                            max_connections=int(setting(CONNECTIONS_ENV, "2048")),
                            reserved_paths=frozenset({"/healthz"}))
    serving.run(create_app(url, in_process_worker=not args.no_worker), listening, limits, args.http)
    return 0
