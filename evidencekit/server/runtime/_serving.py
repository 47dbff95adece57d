"""Serve any project's app as the research service serves its own: uvicorn with the hardened HTTP
protocol (bounded heads, read deadlines, a connection budget with a reserve for health checks:
http_protocol), logging written off the event loop (log_queue), uvloop, one write per response.

    evidencekit serve myapi.app:create --port 8080          # REST, /mcp and /openapi.json
    evidencekit mcp myapi.app:create_stdio                  # the same tools over stdio

`MODULE:NAME` names the app: a function is called with no arguments and must return the ASGI app
(`create_app(...)` of the generated package, with the project's handlers and auth); anything else
is the app itself. For `mcp`, the function takes the credential (`--token-env`, default
EVIDENCEKIT_MCP_TOKEN) and returns `create_stdio_server(...)`'s server.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import importlib
import inspect
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evidencekit.server.runtime import _heap as heap
from evidencekit.server.runtime._http_protocol import bounded_protocol
from evidencekit.server.runtime._log_queue import log_off_the_loop


@dataclass(frozen=True)
class ServingLimits:
    """What `serve` holds clients to (docs/toolkit.md, "Serving")."""

    read_seconds: float = 10.0  # a request's head and body arrive within this, else 408
    per_client: int = 256  # connections one address holds at once
    max_connections: int = 2048  # connections in all (past it: displacement, then a reserve)
    reserved_paths: frozenset[str] = frozenset({"/healthz"})  # answered on the reserve's connections
    keep_alive: float = 5.0  # an idle keep-alive connection is closed after this


class UsageError(Exception):
    """The app or the address cannot be used: one line for the user."""


def load(spec: str) -> Any:
    """The object `MODULE:NAME` names (the current folder importable, as `python -m` has it)."""
    module_name, colon, name = spec.partition(":")
    if not colon or not module_name or not name:
        raise UsageError(f"{spec!r} is not MODULE:NAME (for instance myapi.app:create)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import {module_name}: {exc}") from None
    try:
        return getattr(module, name)
    except AttributeError:
        raise UsageError(f"{module_name} has no {name}") from None


def app_of(spec: str) -> Any:
    """The ASGI app `MODULE:NAME` names: a function's result, or the object itself."""
    found = load(spec)
    return found() if inspect.isfunction(found) else found


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one), bound before anything is announced."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        hint = " (another server runs there; choose another --port)" if exc.errno == errno.EADDRINUSE else ""
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from None
    sock.set_inheritable(True)
    return sock


def base_url(host: str, sock: socket.socket) -> str:
    return f"http://{host if ':' not in host else f'[{host}]'}:{sock.getsockname()[1]}"


def run(app: Any, sock: socket.socket, limits: ServingLimits = ServingLimits(), http: str = "auto") -> None:
    """Serve `app` on `sock` until SIGINT or SIGTERM, hardened (`http="h11"`: uvicorn's own parser,
    which bounds heads itself but keeps none of the rest)."""
    import uvicorn

    protocol: Any = http if http == "h11" else bounded_protocol(
        limits.read_seconds, limits.per_client, limits.max_connections, reserved_paths=limits.reserved_paths)
    heap.settle()
    # log_config=None: uvicorn's lines go through the logging configured by the caller (its own
    # configuration would close that handler); access lines come from the app's policy layer (_policies.py)
    config = uvicorn.Config(app, log_level="info", log_config=None, access_log=False, http=protocol,
                            limit_concurrency=limits.max_connections if http == "h11" else None,
                            timeout_keep_alive=int(limits.keep_alive))
    uvicorn.Server(config).run(sockets=[sock])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidencekit serve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("app", help="MODULE:NAME of the app, or of a function returning it (myapi.app:create)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free one)")
    parser.add_argument("--http", choices=("auto", "httptools", "h11"), default="auto",
                        help="HTTP/1.1 parser (auto: the hardened httptools protocol)")
    parser.add_argument("--read-seconds", type=float, default=ServingLimits.read_seconds,
                        help="a request must arrive whole within this (default 10)")
    parser.add_argument("--max-connections", type=int, default=ServingLimits.max_connections,
                        help="connections in all (default 2048)")
    parser.add_argument("--max-connections-per-client", type=int, default=ServingLimits.per_client,
                        help="connections one client address holds (default 256; raise it behind a proxy)")
    parser.add_argument("--health-path", action="append", default=None,
                        help="a path answered on the connections kept past the budget (default /healthz)")
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    log_off_the_loop(args.log_level)
    try:
        app = app_of(args.app)
        sock = listen(args.host, args.port)
    except UsageError as exc:
        print(f"evidencekit serve: {exc}", file=sys.stderr)
        return 2
    print(f"evidencekit: serving {args.app} at {base_url(args.host, sock)} (REST, /mcp, /openapi.json)", flush=True)
    limits = ServingLimits(read_seconds=args.read_seconds, per_client=args.max_connections_per_client,
                    max_connections=args.max_connections,
                    reserved_paths=frozenset(args.health_path or ServingLimits.reserved_paths))
    run(app, sock, limits, args.http)
    return 0


def build_stdio_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidencekit mcp", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("server", help="MODULE:NAME of a function taking the credential and returning the MCP "
                                       "server (myapi.app:create_stdio)")
    parser.add_argument("--token-env", default="EVIDENCEKIT_MCP_TOKEN",
                        help="the environment variable holding the credential every call acts with "
                             "(default EVIDENCEKIT_MCP_TOKEN; unset: calls are anonymous)")
    return parser


def stdio_main(argv: list[str]) -> int:
    from evidencekit.server.runtime._mcp import serve_stdio

    args = build_stdio_parser().parse_args(argv)
    log_off_the_loop("WARNING")  # stderr: stdout carries the protocol
    try:
        factory: Callable[[str | None], Any] = load(args.server)
    except UsageError as exc:
        print(f"evidencekit mcp: {exc}", file=sys.stderr)
        return 2
    asyncio.run(serve_stdio(factory(os.environ.get(args.token_env) or None)))
    return 0
