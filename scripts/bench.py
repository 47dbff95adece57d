"""One entry point for the benchmarks; each compares against a named peer measured in the same run.

    .venv/bin/python scripts/bench.py [status] [validation] [codegen] [retrieve] [parse] [store] [drain]
                                      [scale] [search] [relevance] [--seconds 10] [--rounds 3]

status      requests/s of POST /research-api/evidence/status through the full stack (auth, database
            read, contract validation) with 32 connections (wrk), SQLite and PostgreSQL, against a bare
            Starlette endpoint returning the same bytes on the same uvicorn settings
validation  time to validate one status response against every published variant, as a share of
            the full request's time measured by `status`
codegen     `evidencekit codegen generate` and `check` (all contracts) against datamodel-codegen alone
            on the same six schemas
retrieve    N retrievals of ~200 KB pages from a local HTTPS origin, 50 in flight, until all settle,
            against a plain script doing the same fetches with httpx and the same parse calls; and the
            server's peak RSS over 200 retrievals of 20 MB pages (over the byte cap)
parse       scripts/bench_parse.py (HTML extraction vs trafilatura, captions vs webvtt-py / pysrt)
store       scripts/bench_store.py: claims and settles per second with a stub retrieval (not by default)
drain       scripts/bench_drain.py: a batch of 1,000 pages of one workspace, receipts settled/s with the
            worker's defaults against the same pages fetched and parsed 4 at once (not by default)
scale       scripts/bench_scale.py: cost per store operation at 10^4, 10^5 and 10^6 receipts (not by
            default: it fills databases of several GB and takes a quarter of an hour)
search      scripts/bench_search.py: search_documents' latency at 10^5 documents, SQLite and PostgreSQL,
            against a substring scan (not by default: a few minutes)
relevance   scripts/bench_relevance.py: search_documents' MRR@10 and recall@10 on the relevance set
            (tests/data/relevance), SQLite and PostgreSQL, against a tantivy BM25 baseline with a
            stemmer per language (not by default)

Only 127.0.0.1 is used. Results are printed and written to docs/benchmarks.md, each benchmark's
section between its markers (the rest of the page is left as it is).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import nullcontext
from pathlib import Path

from bench_common import PG_ADMIN, PYTHON, ROOT, DatabaseCpu, LeanClient, Row, free_port, wait_ready
from bench_status import run_status


def run_validation(body: str, request_seconds: float, rows: list[Row]) -> None:
    sys.path.insert(0, str(ROOT))
    from evidencekit.contracts._validation import validator_for
    from evidencekit.server.generated.operations import STATUS

    payload = json.loads(body)
    validator = validator_for(STATUS)
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
        # Wait the way `research-evidence retrieve --from-file` does: receipts in submission order, polling
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

    from evidencekit.server.evidence.parse import parse_html

    gate = asyncio.Semaphore(in_flight)
    context = ssl.create_default_context(cafile=ca_file)
    async with httpx.AsyncClient(verify=context, timeout=60) as http:
        async def one(url: str) -> None:
            async with gate:
                response = await http.get(url)
            parse_html(response.content, http_charset=response.charset_encoding)

        await asyncio.gather(*(one(url) for url in urls))


def service_run(folder: Path, name: str, origin_port: int, urls: list[str]) -> tuple[float, list[float]]:
    """`research-evidence serve` on a fresh data folder: seconds until every URL's receipt settled, and
    the peak RSS of the server and of each of its child processes."""
    data = folder / name
    data.mkdir()
    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "EVIDENCEKIT_LOG_LEVEL": "WARNING",
           "PYTHONPATH": str(ROOT), "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": f"127.0.0.1:{origin_port}",
           "EVIDENCEKIT_CA_BUNDLE": str(folder / "ca.pem"), "EVIDENCEKIT_WORKER_CONCURRENCY": "50",
           "EVIDENCEKIT_POLL_SECONDS": "0.05", "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "1000000"}
    return served_settle(env, urls)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) a process and its living descendants have used so far."""
    ticks = 0
    for member in [pid, *descendants(pid)]:
        fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def served_settle(env: dict[str, str], urls: list[str], cpu: list[float] | None = None,
                  database_cpu: list[float] | None = None) -> tuple[float, list[float]]:
    """`research-evidence serve` with `env`: seconds from the first submit until every URL's receipt
    settled (50 in flight), and the peak RSS of the server and of each of its child processes.
    `cpu`: given, the CPU seconds the server and its parse processes spent meanwhile go there;
    `database_cpu`: given, those its PostgreSQL backends spent (env's DATABASE_URL; 0 on SQLite,
    whose work is the server's own)."""
    port = free_port()
    service = subprocess.Popen([PYTHON, "-m", "evidencekit", "serve", "--port", str(port)], cwd=ROOT,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}/healthz", service)
        boot = json.loads(subprocess.run([PYTHON, "-m", "evidencekit", "admin", "bootstrap", "--json"],
                                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout)
        url = env.get("DATABASE_URL", "")
        with DatabaseCpu(url) if url.startswith("postgres") else nullcontext() as backends:
            started, used = time.perf_counter(), cpu_seconds(service.pid)
            asyncio.run(submit_and_settle(port, boot["token"], boot["workspace_id"], urls, 50))
            seconds = time.perf_counter() - started
            if cpu is not None:
                cpu.append(cpu_seconds(service.pid) - used)
        if database_cpu is not None:
            database_cpu.append(backends.seconds if backends is not None else 0.0)
        return seconds, peak_rss_mb(service.pid)
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

- **status read**: `wrk -t2 -c32` POSTs status bodies with a bearer token, cycling through
  1,000 distinct pending receipts (the service answers the reads of one event-loop turn with
  one statement; one receipt polled over and over would let that read answer 32 requests at once).
  Every request reads its receipt from the database; only token -> principal and (user,
  workspace) -> role are cached (EVIDENCEKIT_AUTH_CACHE_SECONDS). Every answer sent was checked
  against the contract: a completed receipt's when it settled, a waiting one's at its first read,
  kept while its row reads the same (store/status_answer.py; each of the 1,000 is polled again and
  again, as an agent polls its receipt until it settles). The peer is a bare Starlette endpoint returning the same bytes, run by uvicorn with
  the same HTTP parser and event loop. The service, its floor and the peers are all up at once and
  measured in `--rounds` interleaved rounds (each side `--seconds` in all, the order rotating each
  round); the ratio is taken within each round and shown as the median (lowest-highest), and the
  req/s columns are medians: measured one after the other, once each, a shared machine's drift went
  into the ratio. Each setting is measured with httptools (what `research-evidence serve` uses) and with
  the pure-Python h11 parser: the faster the HTTP layer, the larger the share of the service's own
  work, so the ratio drops while both absolute rates rise. `research-evidence serve` settles its heap
  before serving (server/runtime/_heap.py: `gc.freeze()` and a higher young-generation threshold); the
  **settled peer** row compares with the same peer given the same settling. The **floor** rows run
  the status call's own steps (bearer lookup, JSON, every input variant, the typed input, role
  check, the batched database read, the answer or the one checked already) in a bare ASGI
  function (scripts/bench_floor_app.py, heap settled), on the same database and settings: no
  amount of plumbing work can take the service past its floor. With httptools two more loads and
  sides: receipts **settled with text** (1,000 receipts settled in the store with 6,000
  characters of text each, the answer ~7 KB; the peer returns one of them), and the **access log
  on both sides**: the service at its default log level (one access line per request, written to a
  file by its log thread) against the peer with uvicorn's own access log (to a file); "what
  logging costs" is the logged service over the quiet one in the same round.
- **response validation**: one status response checked against every published output variant
  (jsonschema-rs verdict), as a share of the server time per request of the first status row.
- **retrieve end to end**: a local HTTPS origin (trustme CA) serves distinct ~200 KB pages.
  `research-evidence serve` runs its in-process worker (EVIDENCEKIT_WORKER_CONCURRENCY=50, which the
  engine caps at 8 retrievals at once) and its parse processes; the harness submits every URL (50 requests in flight) over keep-alive connections, then waits as
  `research-evidence retrieve --from-file` does: receipts in submission order, polling only the oldest
  unsettled one every 0.2 s. The peer fetches the same URLs with one httpx.AsyncClient, 50 in
  flight, and calls parse_html on each body, in one process. Both run in `--rounds` rounds,
  alternating which goes first, the service on a fresh data folder each time; the ratio is taken
  within each round and shown as the median (lowest-highest).
- **memory**: the same service and harness on 20 MB pages (10x the 2 MB byte cap); the peak RSS
  of the server and each of its child processes (parse processes, multiprocessing's resource
  tracker), summed: an upper bound, as the peaks need not coincide.
"""


SECTIONS = {"scale": ("bench_scale.py", "Cost as the store grows (scripts/bench scale)"),
            "store": ("bench_store.py", "Claim and settle throughput (scripts/bench store)"),
            "drain": ("bench_drain.py", "One workspace's batch drains at the fetch and parse rate (scripts/bench drain)"),
            "search": ("bench_search.py", "search_documents at 10^5 documents (scripts/bench search)"),
            "relevance": ("bench_relevance.py", "search_documents' ranking on the relevance set (scripts/bench relevance)")}
ARGUMENTS = {"relevance": ["--postgres", PG_ADMIN]}
MAIN = ("status", "validation", "codegen", "retrieve", "parse")


def write_section(name: str, text: str) -> None:
    """Put `text` in docs/benchmarks.md between this section's markers, leaving the rest as it is."""
    path = ROOT / "docs" / "benchmarks.md"
    page = path.read_text() if path.exists() else "# Benchmarks\n"
    begin, end = f"<!-- begin: scripts/bench.py {name} -->", f"<!-- end: scripts/bench.py {name} -->"
    block = f"{begin}\n{text.strip()}\n{end}"
    if begin in page and end in page:
        page = page[:page.index(begin)] + block + page[page.index(end) + len(end):]
    else:
        page = page.rstrip() + "\n\n" + block + "\n"
    path.write_text(page)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmarks", nargs="*", default=list(MAIN),
                        help=f"any of {', '.join(MAIN)} (the default), and {', '.join(SECTIONS)}")
    parser.add_argument("--seconds", type=int, default=10, help="status: wrk seconds per side, over all rounds")
    parser.add_argument("--rounds", type=int, default=3,
                        help="status and retrieve: interleaved rounds (ratio: median, range)")
    parser.add_argument("--pages", type=int, default=1000, help="retrieve: pages of ~200 KB")
    parser.add_argument("--big", type=int, default=200, help="retrieve: 20 MB pages for the memory check")
    args = parser.parse_args()
    unknown = set(args.benchmarks) - set(MAIN) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown benchmark: {', '.join(sorted(unknown))}")
    machine = f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    for name in args.benchmarks:
        if name in SECTIONS:
            script, title = SECTIONS[name]
            out = subprocess.run([PYTHON, str(ROOT / "scripts" / script), *ARGUMENTS.get(name, [])], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout
            text = f"## {title}\n\nMachine: {machine}  \nDate: {datetime.date.today().isoformat()}\n\n{out}"
            print(text)
            write_section(name, text)
    if not set(args.benchmarks) & set(MAIN):
        return 0
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
    ran = [name for name in args.benchmarks if name in MAIN]
    command = "python scripts/bench.py " + " ".join(ran) + f" --seconds {args.seconds} --rounds {args.rounds}"
    report = (f"Command: `{command}`  \nMachine: {machine}  \nDate: {datetime.date.today().isoformat()}\n\n"
              "Ratios come from the same run; absolute numbers on a shared 2-core machine are noise.\n\n"
              f"{table}\n\n" + (f"## Parse\n\n```\n{extra.strip()}\n```\n\n" if extra else "") + METHOD)
    print(report)
    write_section("main", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
