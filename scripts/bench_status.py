"""The status-read benchmark: requests/s through the full stack against a bare Starlette endpoint.

`evidencekit serve` (auth, database read, contract validation of every response) and its peers
are all up at once, on the same uvicorn settings, and measured in interleaved rounds by wrk with
32 connections. The load cycles through RECEIPTS distinct pending receipts, so every request reads
its own row (a poll of one receipt over and over would let the read batch answer 32 requests with
one row). Sides:

ours          `evidencekit serve --no-worker`
floor         the status call's own steps in a bare ASGI function (bench_floor_app.py)
peer          bare Starlette returning the same bytes (bench_peer_app.py), as uvicorn runs it
peer_settled  the same peer with the heap settled as serve settles its own (server/runtime/heap.py)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import uuid
from pathlib import Path

from bench_common import (
    PG_ADMIN,
    PYTHON,
    ROOT,
    LeanClient,
    Row,
    free_port,
    pg_database,
    ratios,
    shown_ratio,
    wait_ready,
)

RECEIPTS = 1000
HTTP_SETTINGS = {"httptools": "httptools + uvloop (as shipped)", "h11": "h11 + uvloop"}
SIDES = ("ours", "floor", "peer", "peer_settled")


def wrk_script(bodies: list[str], token: str) -> str:
    """A wrk script POSTing the bodies in turn; wrk's second thread starts halfway through them, so
    the two threads are never on the same receipt at the same time."""
    listed = ",\n".join(json.dumps(body) for body in bodies)
    return (f"local bodies = {{\n{listed}\n}}\n"
            f'local headers = {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer {token}"}}\n'
            "local threads = 0\n"
            "function setup(thread)\n"
            "  thread:set(\"first\", threads * math.floor(#bodies / 2))\n"
            "  threads = threads + 1\n"
            "end\n"
            "local turn = 0\n"
            "request = function()\n"
            "  turn = turn + 1\n"
            '  return wrk.format("POST", nil, headers, bodies[(first + turn) % #bodies + 1])\n'
            "end\n")


def wrk(url: str, script: Path, seconds: int) -> float:
    if shutil.which("wrk") is None:
        subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, capture_output=True)
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", "-s", str(script), url],
                         capture_output=True, text=True, check=True).stdout
    non_2xx = next((line for line in out.splitlines() if "Non-2xx" in line), None)
    if non_2xx:
        raise SystemExit(f"wrk saw errors: {non_2xx}\n{out}")
    return float(next(line for line in out.splitlines() if line.startswith("Requests/sec")).split()[1])


def serve(env: dict[str, str], port: int, http: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PYTHON, "-m", "evidencekit", "serve", "--no-worker", "--port", str(port), "--http", http],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def asgi_app(module: str, env: dict[str, str], http: str, port: int, settle: bool) -> subprocess.Popen[bytes]:
    """scripts/<module>.py's `app` on the same uvicorn settings as the service."""
    command = [PYTHON, str(ROOT / "scripts" / "bench_asgi.py"), module, str(port), http, *(["--settle"] if settle else [])]
    return subprocess.Popen(command, cwd=ROOT / "scripts", env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


async def make_receipts(port: int, token: str, workspace: str, count: int) -> list[str]:
    """`count` pending receipts (never fetched: the service runs no worker); their status bodies."""
    client = LeanClient(port, token)
    gate = asyncio.Semaphore(16)

    async def one(number: int) -> str:
        mutation = str(uuid.uuid4())
        async with gate:
            status, answer = await client.post("/research-api/evidence/retrieve", {
                "workspace_id": workspace, "mutation_id": mutation,
                "url": f"https://example.com/never-fetched/{number}", "kind": "url_text"})
        assert status == 200, answer
        return json.dumps({"workspace_id": workspace, "mutation_id": mutation})

    try:
        return await asyncio.gather(*(one(number) for number in range(count)))
    finally:
        client.close()


def status_bench(database: str, seconds: int, rounds: int, data: Path, http: str) -> tuple[dict[str, list[float]], str]:
    """Requests/s of every side in every round, and one status answer (the bytes the peer sends).

    A shared machine's speed drifts over a minute (other tenants, CPU boost): measuring each side
    once, one after the other, would fold that drift into the ratio. Each round runs the sides
    back to back, in a rotating order, and ratios are taken within a round.
    """
    import httpx

    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "EVIDENCEKIT_LOG_LEVEL": "WARNING",
           "PYTHONPATH": str(ROOT), "EVIDENCEKIT_RETRIEVE_PER_MINUTE": str(RECEIPTS * 10)}
    if database != "sqlite":
        env["DATABASE_URL"] = database
    ports = {side: free_port() for side in SIDES}
    processes = [serve(env, ports["ours"], http)]
    try:
        wait_ready(f"http://127.0.0.1:{ports['ours']}/healthz", processes[0])
        boot = json.loads(subprocess.run([PYTHON, "-m", "evidencekit", "admin", "bootstrap", "--json"], cwd=ROOT,
                                         env=env, capture_output=True, text=True, check=True).stdout)
        bodies = asyncio.run(make_receipts(ports["ours"], boot["token"], boot["workspace_id"], RECEIPTS))
        answer = httpx.post(f"http://127.0.0.1:{ports['ours']}/research-api/evidence/status", content=bodies[0],
                            headers={"Authorization": f"Bearer {boot['token']}"}, timeout=5)
        answer.raise_for_status()
        (data / "peer-body.json").write_bytes(answer.content)
        (data / "load.lua").write_text(wrk_script(bodies, boot["token"]))
        peer_env = {**env, "BENCH_PEER_BODY": str(data / "peer-body.json")}
        processes.append(asgi_app("bench_floor_app", env, http, ports["floor"], settle=True))
        processes.append(asgi_app("bench_peer_app", peer_env, http, ports["peer"], settle=False))
        processes.append(asgi_app("bench_peer_app", peer_env, http, ports["peer_settled"], settle=True))
        for process, side in zip(processes[1:], SIDES[1:], strict=True):
            wait_ready(f"http://127.0.0.1:{ports[side]}/", process)
        rates: dict[str, list[float]] = {side: [] for side in SIDES}
        each = max(2, round(seconds / rounds))
        for turn in range(rounds):
            for side in SIDES[turn % len(SIDES):] + SIDES[:turn % len(SIDES)]:
                url = f"http://127.0.0.1:{ports[side]}/research-api/evidence/status"
                rates[side].append(wrk(url, data / "load.lua", each))
        return rates, answer.text
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def run_status(seconds: int, rounds: int, rows: list[Row], bodies: list[str]) -> list[float]:
    """Every side on the same uvicorn settings, for each HTTP parser: the faster the parser, the
    larger the share of the service's own work, so the ratio is lower with httptools."""
    request_seconds = []
    name = f"evidencekit_bench_{uuid.uuid4().hex[:8]}"
    try:
        asyncio.run(pg_database(True, name))
        postgres: str | None = PG_ADMIN.rsplit("/", 1)[0] + "/" + name
    except OSError as exc:
        rows.append(("status read, PostgreSQL", "skipped", f"PostgreSQL unreachable: {exc}", "", ">= 0.5"))
        postgres = None
    try:
        for http, label in HTTP_SETTINGS.items():
            for database, shown in (("sqlite", "SQLite"), (postgres, "PostgreSQL")):
                if database is None:
                    continue
                with tempfile.TemporaryDirectory() as tmp:
                    rates, body = status_bench(database, seconds, rounds, Path(tmp), http)
                median = {side: statistics.median(rates[side]) for side in SIDES}
                peer = f"{median['peer']:.0f} bare Starlette"
                rows.append((f"status read, {shown}, {label} (req/s, 32 conns)", f"{median['ours']:.0f}",
                             peer, shown_ratio(ratios(rates["ours"], rates["peer"])), ">= 0.5"))
                rows.append((f"  the same, against the peer with serve's heap settling, {shown}, {http}",
                             f"{median['ours']:.0f}", f"{median['peer_settled']:.0f} bare Starlette, settled",
                             shown_ratio(ratios(rates["ours"], rates["peer_settled"])), "(for reference)"))
                rows.append((f"  floor: the same steps with no plumbing, {shown}, {http}", f"{median['floor']:.0f}",
                             peer, shown_ratio(ratios(rates["floor"], rates["peer"])), "(bound on the first row)"))
                bodies.append(body)
                request_seconds.append(1 / median["ours"])  # one process serves them all: its time per request
    finally:
        if postgres is not None:
            asyncio.run(pg_database(False, name))
    return request_seconds
