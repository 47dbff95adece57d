"""Run the catalogue: `python -m library_api.serve` (REST and MCP over HTTP on 127.0.0.1:8010) or
`python -m library_api.serve stdio` (MCP over stdin/stdout, acting with LIBRARY_API_TOKEN).

LIBRARY_API_TOKEN is the librarian's bearer token (granted catalog:write); without it a random
one is made for this run and printed on stderr.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys

from evidencekit.server.runtime import ServiceHooks, listen, log_off_the_loop, serve, serve_stdio
from starlette.applications import Starlette

from library_api.auth import WRITE, Caller, TokenAuth
from library_api.generated.app import create_app, create_stdio_server
from library_api.handlers import SAMPLE_BOOKS, Catalogue

HOST, PORT = "127.0.0.1", 8010


def hooks_for(token: str) -> ServiceHooks:
    """The librarian's token may write; without a token nobody is authenticated."""
    tokens = {token: Caller("librarian", frozenset({WRITE}))} if token else {}
    return ServiceHooks(auth=TokenAuth(tokens))


def librarian_token() -> str:
    token = os.environ.get("LIBRARY_API_TOKEN", "")
    if not token:
        token = secrets.token_urlsafe(24)
        print(f"LIBRARY_API_TOKEN is not set; this run's librarian token: {token}", file=sys.stderr)
    return token


def app(token: str) -> Starlette:
    return create_app(Catalogue(SAMPLE_BOOKS), hooks_for(token))


def main() -> None:
    # What `evidencekit serve` does: uvicorn with the toolkit's hardened protocol and connection
    # budget, logs written off the event loop
    log_off_the_loop("INFO")
    serve(app(librarian_token()), listen(HOST, PORT))


def stdio() -> None:
    token = os.environ.get("LIBRARY_API_TOKEN", "")
    server = create_stdio_server(Catalogue(SAMPLE_BOOKS), hooks_for(token), credential=token)
    asyncio.run(serve_stdio(server))


if __name__ == "__main__":
    if sys.argv[1:] == ["stdio"]:
        stdio()
    else:
        main()
