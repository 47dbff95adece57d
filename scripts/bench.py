"""One entry point for the benchmarks; each compares against a named peer measured in the same run.

    .venv/bin/python scripts/bench.py [status] [validation] [codegen] [retrieve] [parse] [--seconds 10] [--rounds 3]

status      requests/s of POST /research-api/evidence/status through the full stack (auth, database
            read, contract validation) with 32 connections (wrk), SQLite and PostgreSQL, against a bare
            Starlette endpoint returning the same bytes on the same uvicorn settings
validation  time to validate one status response against every published variant, as a share of
            the full request's time measured by `status`
codegen     `python -m codegen generate` and `check` (all contracts) against datamodel-codegen alone
            on the same six schemas
retrieve    N retrievals of ~200 KB pages from a local HTTPS origin, 50 in flight, until all settle,
            against a plain script doing the same fetches with httpx and the same parse calls; and the
            server's peak RSS over 200 retrievals of 20 MB pages (over the byte cap)
parse       scripts/bench_parse.py (HTML extraction vs trafilatura, captions vs webvtt-py / pysrt)

Only 127.0.0.1 is used. Results are printed and written to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PG_ADMIN = os.environ.get("EVIDENCEKIT_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
Row = tuple[str, str, str, str, str]  # benchmark, ours, peer, ratio, target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float = 60, verify: object = True) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited with {process.returncode}")
        try:
            httpx.get(url, timeout=1, verify=verify)  # type: ignore[arg-type]
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not come up")


def wrk(url: str, body: str, token: str, seconds: int) -> float:
    if shutil.which("wrk") is None:
        subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, capture_output=True)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(f'wrk.method = "POST"\nwrk.body = {json.dumps(body)}\n'
                     f'wrk.headers["Content-Type"] = "application/json"\n'
                     f'wrk.headers["Authorization"] = "Bearer {token}"\n')
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", "-s", script.name, url],
                         capture_output=True, text=True, check=True).stdout
    os.unlink(script.name)
    non_2xx = next((line for line in out.splitlines() if "Non-2xx" in line), None)
    if non_2xx:
        raise SystemExit(f"wrk saw errors: {non_2xx}\n{out}")
    return float(next(line for line in out.splitlines() if line.startswith("Requests/sec")).split()[1])


def serve(env: dict[str, str], port: int, http: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PYTHON, "-m", "evidencekit", "serve", "--no-worker", "--port", str(port), "--http", http],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


HTTP_SETTINGS = {"httptools": "httptools + uvloop (as shipped)", "h11": "h11 + uvloop"}


def asgi_app(module: str, env: dict[str, str], http: str, port: int) -> subprocess.Popen[bytes]:
    """scripts/<module>.py's `app` on the same uvicorn settings as the service."""
    return subprocess.Popen([PYTHON, "-m", "uvicorn", f"{module}:app", "--host", "127.0.0.1", "--port", str(port),
                             "--log-level", "warning", "--no-access-log", "--http", http],
                            cwd=ROOT / "scripts", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@dataclass
class StatusRates:
    """Requests/s of each side in each round; the ratios are taken within a round."""

    ours: list[float]
    floor: list[float]
    peer: list[float]
    body: str

    def ratio(self, side: list[float]) -> tuple[float, float, float]:
        """(median, lowest, highest) of side/peer over the rounds."""
        ratios = [mine / peer for mine, peer in zip(side, self.peer, strict=True)]
        return statistics.median(ratios), min(ratios), max(ratios)


def status_bench(database: str, seconds: int, rounds: int, data: Path, http: str) -> StatusRates:
    """The service, its floor and the bare peer, all up at once, measured in interleaved rounds.

    A shared machine's speed drifts over a minute (other tenants, CPU boost): measuring each side
    once, one after the other, would fold that drift into the ratio. Each round runs the three
    back to back, in a rotating order, and the ratio is taken within the round.
    """
    import httpx

    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "EVIDENCEKIT_LOG_LEVEL": "WARNING",
           "PYTHONPATH": str(ROOT)}
    if database != "sqlite":
        env["DATABASE_URL"] = database
    ports = {"ours": free_port(), "floor": free_port(), "peer": free_port()}
    processes = [serve(env, ports["ours"], http)]
    try:
        wait_ready(f"http://127.0.0.1:{ports['ours']}/healthz", processes[0])
        boot = json.loads(subprocess.run([PYTHON, "-m", "evidencekit", "admin", "bootstrap", "--json"], cwd=ROOT,
                                         env=env, capture_output=True, text=True, check=True).stdout)
        headers = {"Authorization": f"Bearer {boot['token']}"}
        mutation = str(uuid.uuid4())
        base = f"http://127.0.0.1:{ports['ours']}/research-api/evidence"
        httpx.post(f"{base}/retrieve", headers=headers, json={
            "workspace_id": boot["workspace_id"], "mutation_id": mutation,
            "url": "https://example.com/never-fetched", "kind": "url_text"}).raise_for_status()
        body = json.dumps({"workspace_id": boot["workspace_id"], "mutation_id": mutation})
        answer = httpx.post(f"{base}/status", headers=headers, content=body, timeout=5)
        answer.raise_for_status()
        body_file = data / "peer-body.json"
        body_file.write_bytes(answer.content)
        processes.append(asgi_app("bench_floor_app", env, http, ports["floor"]))
        processes.append(asgi_app("bench_peer_app", {**env, "BENCH_PEER_BODY": str(body_file)}, http, ports["peer"]))
        for process, side in zip(processes[1:], ("floor", "peer"), strict=True):
            wait_ready(f"http://127.0.0.1:{ports[side]}/", process)
        rates: dict[str, list[float]] = {side: [] for side in ports}
        order = list(ports)
        each = max(2, round(seconds / rounds))
        for turn in range(rounds):
            for side in order[turn % 3:] + order[:turn % 3]:
                url = f"http://127.0.0.1:{ports[side]}/research-api/evidence/status"
                rates[side].append(wrk(url, body, boot["token"], each))
        return StatusRates(rates["ours"], rates["floor"], rates["peer"], answer.text)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


async def pg_database(create: bool, name: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_ADMIN)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"' if create else f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


def shown_ratio(ratio: tuple[float, float, float]) -> str:
    median, low, high = ratio
    return f"{median:.2f} ({low:.2f}-{high:.2f})"


def run_status(seconds: int, rounds: int, rows: list[Row], bodies: list[str]) -> list[float]:
    """Both sides on the same uvicorn settings, for each HTTP parser: httptools (what `serve` uses)
    makes the bare peer ~2.5x faster and this service ~1.5x, so the ratio is lower there."""
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
                    rates = status_bench(database, seconds, rounds, Path(tmp), http)
                ours, floor, peer = (statistics.median(side) for side in (rates.ours, rates.floor, rates.peer))
                rows.append((f"status read, {shown}, {label} (req/s, 32 conns)", f"{ours:.0f}",
                             f"{peer:.0f} bare Starlette", shown_ratio(rates.ratio(rates.ours)), ">= 0.5"))
                rows.append((f"  floor: the same steps with no framework, {shown}, {http}", f"{floor:.0f}",
                             f"{peer:.0f} bare Starlette", shown_ratio(rates.ratio(rates.floor)),
                             "(bound on the row above)"))
                bodies.append(rates.body)
                request_seconds.append(1 / ours)  # one process serves them all: its time per request
    finally:
        if postgres is not None:
            asyncio.run(pg_database(False, name))
    return request_seconds


def run_validation(body: str, request_seconds: float, rows: list[Row]) -> None:
    sys.path.insert(0, str(ROOT))
    from contracts.validation import validator_for

    payload = json.loads(body)
    validator = validator_for("sosoapi_research_evidence_status")
    assert validator.output_errors(payload) == []
    rounds = 2000
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(rounds):
            validator.output_errors(payload)
        samples.append((time.perf_counter() - started) / rounds)
    per_call = statistics.median(samples)
    share = per_call / request_seconds
    rows.append(("response validation (per status response)", f"{per_call * 1e6:.0f} µs",
                 f"{request_seconds * 1e3:.2f} ms server time per request (SQLite)", f"{share:.1%} of the request",
                 "<= 10%"))


def timed(command: list[str], cwd: Path = ROOT) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def run_codegen(rows: list[Row]) -> None:
    schemas = sorted((ROOT / "contracts").glob("*/mcp.*.schema.json"))
    with tempfile.TemporaryDirectory() as tmp:
        generate = min(timed([PYTHON, "-m", "codegen", "generate", "--out", tmp]) for _ in range(3))
        check = min(timed([PYTHON, "-m", "codegen", "check"]) for _ in range(3))
        tool = str(Path(PYTHON).with_name("datamodel-codegen"))
        alone = min(sum(timed([tool, "--input", str(s), "--input-file-type", "jsonschema", "--output",
                               f"{tmp}/{i}.py", "--disable-timestamp"]) for i, s in enumerate(schemas))
                    for _ in range(3))
    rows.append(("codegen generate, all contracts (s)", f"{generate:.2f}", f"{alone:.2f} datamodel-codegen x{len(schemas)}",
                 f"{generate / alone:.2f}", ""))
    rows.append(("codegen check, all contracts (s)", f"{check:.2f}", f"{alone:.2f} datamodel-codegen x{len(schemas)}",
                 f"{check / alone:.2f}", "check < 2 s"))


def descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            found += [int(child), *descendants(int(child))]
    return found


def peak_rss_mb(pid: int) -> list[float]:
    """Peak RSS (MB) of a process, then of each descendant (the parse processes); their sum is an
    upper bound of the whole, as the peaks need not coincide."""
    peaks = []
    for member in [pid, *descendants(pid)]:
        for line in Path(f"/proc/{member}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return peaks


_CONTENT_LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")


class LeanClient:
    """Keep-alive HTTP/1.1 JSON POSTs over raw asyncio streams: the harness's load generator.

    httpx costs ~5 ms of CPU per call on these machines; 1,000 submits and their status reads
    through it took ~13 s of CPU from the two cores the server under test needs."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.head = f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, payload: dict[str, str]) -> tuple[int, dict]:  # type: ignore[type-arg]
        body = json.dumps(payload).encode()
        request = f"POST {path} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n".encode() + body
        reader, writer = self.idle.pop() if self.idle else await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = _CONTENT_LENGTH.search(head)
        assert length is not None, head
        data = await reader.readexactly(int(length.group(1)))
        self.idle.append((reader, writer))
        return int(head.split(b" ", 2)[1]), json.loads(data)

    def close(self) -> None:
        for _, writer in self.idle:
            writer.close()


async def submit_and_settle(port: int, token: str, workspace: str, urls: list[str], in_flight: int) -> None:
    client = LeanClient(port, token)
    gate = asyncio.Semaphore(in_flight)

    async def submit(url: str) -> str:
        mutation = str(uuid.uuid4())
        async with gate:
            status, answer = await client.post("/research-api/evidence/retrieve", {
                "workspace_id": workspace, "mutation_id": mutation, "url": url, "kind": "url_text"})
        assert status == 200, answer
        return mutation

    try:
        mutations = await asyncio.gather(*(submit(url) for url in urls))
        # Wait the way `evidencekit retrieve --from-file` does: receipts in submission order, polling
        # only the oldest unsettled one (workers claim oldest first), so the harness adds about one
        # status call per receipt instead of re-polling every pending receipt on every round.
        for mutation in mutations:
            while True:
                status, answer = await client.post("/research-api/evidence/status",
                                                   {"workspace_id": workspace, "mutation_id": mutation})
                assert status == 200, answer
                if answer["retrieval"]["state"] not in ("pending", "running"):
                    break
                await asyncio.sleep(0.2)
    finally:
        client.close()


async def plain_fetch_and_parse(urls: list[str], ca_file: str, in_flight: int) -> None:
    import ssl

    import httpx

    from server.parse import parse_html

    gate = asyncio.Semaphore(in_flight)
    context = ssl.create_default_context(cafile=ca_file)
    async with httpx.AsyncClient(verify=context, timeout=60) as http:
        async def one(url: str) -> None:
            async with gate:
                response = await http.get(url)
            parse_html(response.content, http_charset=response.charset_encoding)

        await asyncio.gather(*(one(url) for url in urls))


def service_run(folder: Path, name: str, origin_port: int, urls: list[str]) -> tuple[float, list[float]]:
    """`evidencekit serve` on a fresh data folder: seconds until every URL's receipt settled, and
    the peak RSS of the server and of each of its child processes."""
    data = folder / name
    data.mkdir()
    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "EVIDENCEKIT_LOG_LEVEL": "WARNING",
           "PYTHONPATH": str(ROOT), "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": f"127.0.0.1:{origin_port}",
           "EVIDENCEKIT_CA_BUNDLE": str(folder / "ca.pem"), "EVIDENCEKIT_WORKER_CONCURRENCY": "50",
           "EVIDENCEKIT_POLL_SECONDS": "0.05", "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "1000000"}
    port = free_port()
    service = subprocess.Popen([PYTHON, "-m", "evidencekit", "serve", "--port", str(port)], cwd=ROOT,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}/healthz", service)
        boot = json.loads(subprocess.run([PYTHON, "-m", "evidencekit", "admin", "bootstrap", "--json"],
                                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout)
        started = time.perf_counter()
        asyncio.run(submit_and_settle(port, boot["token"], boot["workspace_id"], urls, 50))
        return time.perf_counter() - started, peak_rss_mb(service.pid)
    finally:
        service.terminate()
        service.wait(timeout=60)


def run_retrieve(rows: list[Row], count: int, big: int, rounds: int) -> None:
    """The service and the plain script in `rounds` rounds, alternating which goes first; the ratio
    is taken within each round (a shared machine's drift moved a single pair from 1.3x to 1.6x)."""
    import trustme

    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        cert.private_key_and_cert_chain_pem.write_to_path(str(folder / "origin.pem"))
        ca.cert_pem.write_to_path(str(folder / "ca.pem"))
        origin_port = free_port()
        origin = subprocess.Popen([PYTHON, "-m", "uvicorn", "bench_origin_app:app", "--host", "127.0.0.1", "--port",
                                   str(origin_port), "--ssl-keyfile", str(folder / "origin.pem"), "--ssl-certfile",
                                   str(folder / "origin.pem"), "--log-level", "warning", "--no-access-log"],
                                  cwd=ROOT / "scripts")
        try:
            wait_ready(f"https://127.0.0.1:{origin_port}/page/1", origin, verify=str(folder / "ca.pem"))
            pages = [f"https://127.0.0.1:{origin_port}/page/{n}" for n in range(count)]
            ours: list[float] = []
            peers: list[float] = []
            for turn in range(rounds):
                def peer() -> None:
                    started = time.perf_counter()
                    asyncio.run(plain_fetch_and_parse(pages, str(folder / "ca.pem"), 50))
                    peers.append(time.perf_counter() - started)

                if turn % 2:
                    peer()
                ours.append(service_run(folder, f"pages-{turn}", origin_port, pages)[0])
                if not turn % 2:
                    peer()
            bigs = [f"https://127.0.0.1:{origin_port}/big/{n}" for n in range(big)]
            _, peaks = service_run(folder, "big", origin_port, bigs)
        finally:
            origin.terminate()
            origin.wait(timeout=30)
    ratios = [mine / theirs for mine, theirs in zip(ours, peers, strict=True)]
    rows.append((f"retrieve end to end, {count} x 200 KB, 50 in flight (s)", f"{statistics.median(ours):.1f}",
                 f"{statistics.median(peers):.1f} plain httpx + parse_html",
                 f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})", "<= 1.5x"))
    parts = " + ".join(f"{peak:.0f}" for peak in peaks)
    rows.append((f"memory, {big} x 20 MB pages (peak RSS, server + parse processes)", f"{sum(peaks):.0f} MB",
                 f"({parts} MB)", "—", "< 300 MB"))


METHOD = """## How each row is measured

- **status read**: `wrk -t2 -c32` POSTs one status body with a bearer token. The service, its
  floor and the peer are all up at once and measured in `--rounds` interleaved rounds (each side
  `--seconds` in all, the order rotating each round); the ratio is taken within each round and
  shown as the median (lowest-highest), and the req/s columns are medians. Measured one after the
  other, once each, a shared machine's drift went into the ratio: one such run put the PostgreSQL
  service above its own floor. The receipt is pending, so every request reads it from the database; only token -> principal and
  (user, workspace) -> role are cached (EVIDENCEKIT_AUTH_CACHE_SECONDS). The peer is a bare
  Starlette endpoint returning the same bytes. Both run on the same uvicorn settings, once with
  httptools (what `evidencekit serve` uses) and once with the pure-Python h11 parser: the faster
  the HTTP layer, the larger the share of the service's own per-request work, so the ratio drops
  while both absolute rates rise. The **floor** rows run the status call's own steps (bearer
  lookup, JSON, every input and output variant, the typed models, role check, database read) in a
  bare ASGI function with no framework (scripts/bench_floor_app.py), on the same database and
  settings: no amount of framework work can take the service past its floor.
- **response validation**: one status response checked against every published output variant
  (jsonschema-rs verdict), as a share of the server time per request of the first status row.
- **retrieve end to end**: a local HTTPS origin (trustme CA) serves distinct ~200 KB pages.
  `evidencekit serve` runs its in-process worker (EVIDENCEKIT_WORKER_CONCURRENCY=50, which the
  engine caps at 8 retrievals at once) and its parse processes; the harness submits every URL (50 requests in flight) over keep-alive connections, then waits as
  `evidencekit retrieve --from-file` does: receipts in submission order, polling only the oldest
  unsettled one every 0.2 s. The peer fetches the same URLs with one httpx.AsyncClient, 50 in
  flight, and calls parse_html on each body, in one process. Both run in `--rounds` rounds,
  alternating which goes first, the service on a fresh data folder each time; the ratio is taken
  within each round and shown as the median (lowest-highest).
- **memory**: the same service and harness on 20 MB pages (10x the 2 MB byte cap); the peak RSS
  of the server and each of its child processes (parse processes, multiprocessing's resource
  tracker), summed: an upper bound, as the peaks need not coincide.
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmarks", nargs="*", default=["status", "validation", "codegen", "retrieve", "parse"])
    parser.add_argument("--seconds", type=int, default=10, help="status: wrk seconds per side, over all rounds")
    parser.add_argument("--rounds", type=int, default=3,
                        help="status and retrieve: interleaved rounds (ratio: median, range)")
    parser.add_argument("--pages", type=int, default=1000, help="retrieve: pages of ~200 KB")
    parser.add_argument("--big", type=int, default=200, help="retrieve: 20 MB pages for the memory check")
    args = parser.parse_args()
    rows: list[Row] = []
    bodies: list[str] = []
    request_seconds: list[float] = []
    if "status" in args.benchmarks or "validation" in args.benchmarks:
        request_seconds = run_status(args.seconds, args.rounds, rows, bodies)
    if "validation" in args.benchmarks:
        run_validation(bodies[0], request_seconds[0], rows)
    if "codegen" in args.benchmarks:
        run_codegen(rows)
    if "retrieve" in args.benchmarks:
        run_retrieve(rows, args.pages, args.big, args.rounds)
    extra = ""
    if "parse" in args.benchmarks:
        extra = subprocess.run([PYTHON, str(ROOT / "scripts" / "bench_parse.py")], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout
    table = "| benchmark | ours | peer | ratio | target |\n|---|---:|---:|---:|---|\n" + "\n".join(
        f"| {' | '.join(row)} |" for row in rows)
    command = ("python scripts/bench.py " + " ".join(args.benchmarks)
               + f" --seconds {args.seconds} --rounds {args.rounds}")
    machine = f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    report = (f"# Benchmarks\n\nCommand: `{command}`  \nMachine: {machine}  \n"
              f"Date: {datetime.date.today().isoformat()}\n\n"
              "Ratios come from the same run; absolute numbers on a shared 2-core machine are noise.\n\n"
              f"{table}\n\n" + (f"## Parse\n\n```\n{extra.strip()}\n```\n\n" if extra else "") + METHOD)
    print(report)
    (ROOT / "docs" / "benchmarks.md").write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
