"""Hostile bodies cannot stall the service: a dozen pathological bodies retrieved at once, beside a
calm page, while /healthz is polled.

    .venv/bin/python scripts/bench_hostile.py

Serves a local origin (plain http on 127.0.0.1, allowed through EVIDENCEKIT_ALLOW_PRIVATE_HOSTS) and
`evidencekit serve` on a fresh SQLite folder; submits every hostile URL, then the calm page, and
prints: the slowest /healthz answer during the run (target < 0.5 s), the seconds the calm page took
to settle (target < 5 s), and how each hostile receipt settled (target: every one, with a reason).
Only 127.0.0.1 is used.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
MB2 = 2 * 1024 * 1024


def _gz(body: bytes, media: str) -> Response:
    return Response(gzip.compress(body, 9), media_type=media, headers={"content-encoding": "gzip"})


HOSTILE: dict[str, tuple[str, object]] = {
    "vtt-ruby": ("published_captions", lambda: _gz(b"WEBVTT\n\n00:00.000 --> 00:01.000\n" + b"<rt " * (MB2 // 4),
                                                   "text/vtt")),
    "xhtml-cdata": ("url_text", lambda: _gz(b"<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'>"
                                            b"&nbsp;" + b"<![CDATA[" * (MB2 // 9), "application/xhtml+xml")),
    "tracks": ("published_captions", lambda: _gz(b"<video>" + b"<track kind='captions' srclang='en' src='t.vtt'>"
                                                 * (MB2 // 48), "text/html")),
    "nested-divs": ("url_text", lambda: _gz(b"<div>" * (MB2 // 5), "text/html")),
    "nested-tables": ("url_text", lambda: _gz(b"<table><tr><td>" * (MB2 // 15), "text/html")),
    "one-tag-attributes": ("url_text", lambda: _gz(b"<p " + b"a=b " * (MB2 // 4) + b">x", "text/html")),
    "srt-timings": ("published_captions", lambda: _gz(b"1\n00:00:00,000 --> 00:00:01,000\n" * (MB2 // 32),
                                                      "application/x-subrip")),
    "vtt-cues": ("published_captions", lambda: _gz(b"WEBVTT\n\n" + b"00:00.000 --> 00:01.000\nx\n\n" * (MB2 // 28),
                                                   "text/vtt")),
    "text-one-line": ("url_text", lambda: _gz(b"word " * (MB2 // 5), "text/plain")),
    "comments": ("url_text", lambda: _gz(b"<!--" * (MB2 // 4), "text/html")),
    "entities": ("url_text", lambda: _gz(b"&#" * (MB2 // 2), "text/html")),
    "gzip-bomb": ("url_text", lambda: _gz(b"<p>" + b"\0" * (200 * 1024 * 1024), "text/html")),
}


async def hostile(request: Request) -> Response:
    found = HOSTILE.get(request.path_params["name"])
    return Response(b"not here", 404) if found is None else found[1]()  # type: ignore[operator,no-any-return]


async def trickle(_: Request) -> StreamingResponse:
    async def body():  # type: ignore[no-untyped-def]
        yield b"<html><body><p>"
        for _ in range(60):
            await asyncio.sleep(1)
            yield b"x"

    return StreamingResponse(body(), media_type="text/html")


async def calm(_: Request) -> Response:
    return Response(b"<html lang='en'><head><title>Calm</title></head><body><article><h1>Calm</h1>"
                    + b"<p>An ordinary page with ordinary words in it.</p>" * 50 + b"</article></body></html>",
                    media_type="text/html")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_origin(port: int) -> uvicorn.Server:
    app = Starlette(routes=[Route("/h/{name}", hostile), Route("/trickle", trickle), Route("/calm", calm)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server


def main() -> int:
    origin_port, port = free_port(), free_port()
    origin = serve_origin(origin_port)
    data = Path(tempfile.mkdtemp(prefix="evidencekit-hostile-"))
    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": f"127.0.0.1:{origin_port}",
           "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "1000", "EVIDENCEKIT_WORKER_CONCURRENCY": "8",
           "EVIDENCEKIT_LOG_LEVEL": "WARNING"}
    server = subprocess.Popen([sys.executable, "-m", "evidencekit", "serve", "--port", str(port)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        token = workspace = ""
        assert server.stdout is not None
        while not (token and workspace):
            line = server.stdout.readline()
            if not line:
                raise SystemExit("serve stopped before it printed its token")
            if "token:" in line:
                token = line.split()[-1]
            if "workspace_id:" in line:
                workspace = line.split()[-1]
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
            for _ in range(100):
                try:
                    if http.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            slowest = [0.0]
            stop = threading.Event()

            def poll_health() -> None:
                with httpx.Client(base_url=base, timeout=30) as probe:
                    while not stop.is_set():
                        started = time.monotonic()
                        probe.get("/healthz")
                        slowest[0] = max(slowest[0], time.monotonic() - started)
                        time.sleep(0.05)

            poller = threading.Thread(target=poll_health, daemon=True)
            poller.start()
            receipts: dict[str, str] = {}
            origin_base = f"http://127.0.0.1:{origin_port}"
            for name, (kind, _) in HOSTILE.items():
                receipts[name] = send(http, workspace, f"{origin_base}/h/{name}", kind)
            receipts["trickle"] = send(http, workspace, f"{origin_base}/trickle", "url_text")
            calm_sent = time.monotonic()
            calm_id = send(http, workspace, f"{origin_base}/calm", "url_text")
            calm_seconds = wait(http, workspace, calm_id, 120) and time.monotonic() - calm_sent
            outcomes = {name: wait(http, workspace, mutation, 120) for name, mutation in receipts.items()}
            stop.set()
            poller.join(timeout=5)
        print(f"/healthz slowest: {slowest[0]:.3f} s (target < 0.5)")
        print(f"calm page settled in: {calm_seconds:.2f} s (target < 5)")
        for name, outcome in outcomes.items():
            print(f"  {name:22s} {outcome}")
        settled = all(outcome and outcome.split()[0] in ("completed", "unconfirmed") for outcome in outcomes.values())
        return 0 if slowest[0] < 0.5 and calm_seconds < 5 and settled else 1
    finally:
        server.terminate()
        server.wait(timeout=30)
        origin.should_exit = True


def send(http: httpx.Client, workspace: str, url: str, kind: str) -> str:
    mutation = str(uuid.uuid4())
    answer = http.post("/research-api/evidence/retrieve",
                       json={"workspace_id": workspace, "mutation_id": mutation, "url": url, "kind": kind})
    answer.raise_for_status()
    return mutation


def wait(http: httpx.Client, workspace: str, mutation: str, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        retrieval = http.post("/research-api/evidence/status",
                              json={"workspace_id": workspace, "mutation_id": mutation}).json()["retrieval"]
        if retrieval["state"] in ("completed", "unconfirmed", "cancelled", "expired"):
            result = retrieval.get("result") or {}
            return f"{retrieval['state']} {result.get('status')} {result.get('reason')}"
        time.sleep(0.1)
    return ""


if __name__ == "__main__":
    sys.exit(main())
