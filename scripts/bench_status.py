"""The status-read benchmark: requests/s through the full stack against a bare Starlette endpoint.

`research-evidence serve` (auth, database read, contract validation of every response) and its peers
are all up at once, on the same uvicorn settings, and measured in interleaved rounds by wrk with
32 connections. The load cycles through RECEIPTS distinct receipts, so every request reads its own
row (a poll of one receipt over and over would let the read batch answer 32 requests with one
row). Two loads: pending receipts (every poll before the last), and receipts settled with a page
of text (the last poll every client makes; ~TEXT_CHARS characters of text). Sides:

ours          `research-evidence serve --no-worker`, access log off (EVIDENCEKIT_LOG_LEVEL=WARNING)
ours_logged   the same with its default access log (INFO), written to a file
floor         the status call's own steps in a bare ASGI function (bench_floor_app.py)
peer          bare Starlette returning the same bytes (bench_peer_app.py), as uvicorn runs it
peer_settled  the same peer with the heap settled as serve settles its own (server/runtime/_heap.py)
peer_logged   the peer with uvicorn's own access log on, written to a file

The logged sides and the settled load run with httptools (as shipped) only.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    database_url_beside,
    free_port,
    pg_database,
    ratios,
    shown_ratio,
    wait_ready,
)

RECEIPTS = 1000
TEXT_CHARS = 6000  # a news article's main text is a few thousand characters
HTTP_SETTINGS = {"httptools": "httptools + uvloop (as shipped)", "h11": "h11 + uvloop"}
SIDES = ("ours", "floor", "peer", "peer_settled")
LOGGED_SIDES = ("ours_logged", "peer_logged")
PEER_PATH = {"pending": "/research-api/evidence/status", "settled": "/settled/research-api/evidence/status"}


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


def serve(env: dict[str, str], port: int, http: str, log: Path | None) -> subprocess.Popen[bytes]:
    """`research-evidence serve`; with `log`, at its default log level (INFO: one access line per request)
    with its stderr in that file, else quiet."""
    env = {**env, "EVIDENCEKIT_LOG_LEVEL": "INFO" if log else "WARNING"}
    return subprocess.Popen([PYTHON, "-m", "evidencekit", "serve", "--no-worker", "--port", str(port), "--http", http],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=log.open("ab") if log else subprocess.DEVNULL)


def asgi_app(module: str, env: dict[str, str], http: str, port: int, settle: bool,
             log: Path | None = None) -> subprocess.Popen[bytes]:
    """scripts/<module>.py's `app` on the same uvicorn settings as the service; with `log`,
    uvicorn's own access log on, written to that file."""
    command = [PYTHON, str(ROOT / "scripts" / "bench_asgi.py"), module, str(port), http,
               *(["--settle"] if settle else []), *(["--access-log"] if log else [])]
    output = log.open("ab") if log else subprocess.DEVNULL  # uvicorn's access log is on stdout
    return subprocess.Popen(command, cwd=ROOT / "scripts", env=env, stdout=output, stderr=output)


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


async def settle_with_text(database: str, count: int, *, opened: bool = False) -> None:
    """Settle every pending receipt of `database` as a worker would, each with its own page of text
    (`opened`: this process has the store open already)."""
    import sys

    sys.path.insert(0, str(ROOT))
    from datetime import timedelta

    from evidencekit.server.evidence.store import jobs
    from evidencekit.server.evidence.store.db import open_store
    from evidencekit.server.evidence.store.evidence import Content

    sentence = "The committee reviewed the findings of the second study and asked for more samples. "
    async with contextlib.nullcontext() if opened else open_store(database):
        settled = 0
        while settled < count:
            claimed = await jobs.claim_many("bench", timedelta(minutes=5), max_attempts=3, limit=64)
            assert claimed, f"only {settled} of {count} receipts to settle"
            batch = []
            for receipt in claimed:
                text = (f"{receipt.url}: " + sentence * (TEXT_CHARS // len(sentence) + 1))[:TEXT_CHARS]
                result = {"kind": "url_text", "status": "ready", "reason": None, "warnings": [],
                          "retry_after_seconds": None, "title": "Findings of the second study",
                          "description": "What the committee found.", "text": text, "segments": [],
                          "provenance": {"source_url": receipt.url, "retrieved_at": "2026-12-01T10:00:00Z",
                                         "mime_type": "text/html", "parser_version": "research-public-retrieval/v1",
                                         "content_kind": "document_text", "caption_format": None,
                                         "language": "en", "language_source": "publisher_declared",
                                         "platform_native_verified": False}}
                batch.append(jobs.Settle(receipt, result, Content(f"h-{receipt.id}", receipt.url, result["title"],
                                                                  result["description"], text, f"# {text}", [])))
            settled += len(await jobs.settle_many("bench", batch))


def status_bench(database: str, seconds: int, rounds: int, data: Path, http: str,
                 extended: bool) -> tuple[dict[str, dict[str, list[float]]], dict[str, str]]:
    """Requests/s of every side under every load in every round, and one status answer per load
    (the bytes the peer sends). `extended`: the logged sides and the settled load too.

    A shared machine's speed drifts over a minute (other tenants, CPU boost): measuring each side
    once, one after the other, would fold that drift into the ratio. Each round runs the sides
    back to back, in a rotating order, and ratios are taken within a round.
    """
    import httpx

    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "PYTHONPATH": str(ROOT),
           "EVIDENCEKIT_RETRIEVE_PER_MINUTE": str(RECEIPTS * 10)}
    url = database
    if database != "sqlite":
        env["DATABASE_URL"] = database
    else:
        from evidencekit.server.evidence.store.db import database_url
        url = database_url(env)
    sides = SIDES + (LOGGED_SIDES if extended else ())
    loads = ("pending", "settled") if extended else ("pending",)
    ports = {side: free_port() for side in sides}
    logs = {side: data / f"{side}.log" for side in LOGGED_SIDES}
    processes = [serve(env, ports["ours"], http, None)]
    try:
        wait_ready(f"http://127.0.0.1:{ports['ours']}/healthz", processes[0])
        boot = json.loads(subprocess.run([PYTHON, "-m", "evidencekit", "admin", "bootstrap", "--json"], cwd=ROOT,
                                         env=env, capture_output=True, text=True, check=True).stdout)
        bodies = {}
        if extended:  # made and settled before the pending ones are made
            bodies["settled"] = asyncio.run(make_receipts(ports["ours"], boot["token"], boot["workspace_id"],
                                                          RECEIPTS))
            asyncio.run(settle_with_text(url, RECEIPTS))
        bodies["pending"] = asyncio.run(make_receipts(ports["ours"], boot["token"], boot["workspace_id"], RECEIPTS))
        answers = {}
        for load in loads:
            answer = httpx.post(f"http://127.0.0.1:{ports['ours']}/research-api/evidence/status",
                                content=bodies[load][0], headers={"Authorization": f"Bearer {boot['token']}"},
                                timeout=5)
            answer.raise_for_status()
            assert (answer.json()["retrieval"]["state"] == "completed") == (load == "settled"), answer.text
            answers[load] = answer.text
            (data / f"peer-{load}.json").write_bytes(answer.content)
            (data / f"{load}.lua").write_text(wrk_script(bodies[load], boot["token"]))
        peer_env = {**env, "BENCH_PEER_BODY": str(data / "peer-pending.json"),
                    "BENCH_PEER_SETTLED_BODY": str(data / ("peer-settled.json" if extended else "peer-pending.json"))}
        started = {"floor": asgi_app("bench_floor_app", env, http, ports["floor"], settle=True),
                   "peer": asgi_app("bench_peer_app", peer_env, http, ports["peer"], settle=False),
                   "peer_settled": asgi_app("bench_peer_app", peer_env, http, ports["peer_settled"], settle=True)}
        if extended:
            started["ours_logged"] = serve(env, ports["ours_logged"], http, logs["ours_logged"])
            started["peer_logged"] = asgi_app("bench_peer_app", peer_env, http, ports["peer_logged"], settle=False,
                                              log=logs["peer_logged"])
        processes += started.values()
        for side, process in started.items():
            wait_ready(f"http://127.0.0.1:{ports[side]}/{'healthz' if side.startswith('ours') else ''}", process)
        rates: dict[str, dict[str, list[float]]] = {load: {side: [] for side in sides} for load in loads}
        each = max(2, round(seconds / rounds))
        runs = [(load, side) for load in loads for side in sides]
        for turn in range(rounds):
            for load, side in runs[turn % len(runs):] + runs[:turn % len(runs)]:
                path = PEER_PATH[load] if side.startswith("peer") else PEER_PATH["pending"]
                rates[load][side].append(wrk(f"http://127.0.0.1:{ports[side]}{path}", data / f"{load}.lua", each))
        for side, log in logs.items() if extended else ():
            lines = sum(1 for _ in log.open("rb"))
            assert lines > 1000, f"{side} wrote {lines} log lines: its access log is not on"
        return rates, answers
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _row(label: str, rates: dict[str, list[float]], mine: str, theirs: str, peer_label: str, target: str) -> Row:
    median = {side: statistics.median(values) for side, values in rates.items()}
    return (label, f"{median[mine]:.0f}", f"{median[theirs]:.0f} {peer_label}",
            shown_ratio(ratios(rates[mine], rates[theirs])), target)


def run_status(seconds: int, rounds: int, rows: list[Row], bodies: list[str]) -> list[float]:
    """Every side on the same uvicorn settings, for each HTTP parser: the faster the parser, the
    larger the share of the service's own work, so the ratio is lower with httptools."""
    request_seconds = []
    name = f"evidencekit_bench_{uuid.uuid4().hex[:8]}"
    try:
        asyncio.run(pg_database(True, name))
        postgres: str | None = database_url_beside(PG_ADMIN, name)
    except OSError as exc:
        rows.append(("status read, PostgreSQL", "skipped", f"PostgreSQL unreachable: {exc}", "", ">= 0.5"))
        postgres = None
    try:
        for http, label in HTTP_SETTINGS.items():
            for database, shown in (("sqlite", "SQLite"), (postgres, "PostgreSQL")):
                if database is None:
                    continue
                extended = http == "httptools"
                with tempfile.TemporaryDirectory() as tmp:
                    rates, answers = status_bench(database, seconds, rounds, Path(tmp), http, extended)
                pending = rates["pending"]
                rows.append(_row(f"status read, {shown}, {label} (req/s, 32 conns)", pending, "ours", "peer",
                                 "bare Starlette", ">= 0.5"))
                rows.append(_row(f"  the same, against the peer with serve's heap settling, {shown}, {http}", pending,
                                 "ours", "peer_settled", "bare Starlette, settled", "(for reference)"))
                rows.append(_row(f"  floor: the same steps with no plumbing, {shown}, {http}", pending, "floor", "peer",
                                 "bare Starlette", "(bound on the first row)"))
                if extended:
                    settled = rates["settled"]
                    rows.append(_row(f"status read of a settled receipt with {TEXT_CHARS:,} characters of text, "
                                     f"{shown}, {http}", settled, "ours", "peer", "bare Starlette", ">= 0.5"))
                    rows.append(_row(f"  floor: the same steps with no plumbing, settled with text, {shown}, {http}",
                                     settled, "floor", "peer", "bare Starlette", "(bound on the row above)"))
                    for load, what in (("pending", "pending"), ("settled", "settled with text")):
                        rows.append(_row(f"status read, {what}, access log on both sides, {shown}, {http}",
                                         rates[load], "ours_logged", "peer_logged",
                                         "bare Starlette, uvicorn access log", ">= 0.5"))
                        rows.append(_row(f"  what logging costs: logged / quiet, {what}, {shown}, {http}",
                                         rates[load], "ours_logged", "ours", "quiet", ">= 0.85"))
                bodies.append(answers["pending"])
                request_seconds.append(1 / statistics.median(pending["ours"]))  # one process: its time per request
    finally:
        if postgres is not None:
            asyncio.run(pg_database(False, name))
    return request_seconds
