"""Generated servers against hand-written FastAPI and FastMCP ones: requests/s, side by side.

    python scripts/bench_servers.py [--rounds 3] [--seconds 4]

Builds the library example (examples/library: lock and generate its contracts in a temporary copy,
as a team would), loads the same 50 books into it and into its peers, and measures them in
interleaved rounds with wrk (2 threads, 32 connections, loopback), each serving one process:

ours           the example's app served the documented way (`serve`, logs off the event
               loop: what `python -m library_api.serve` and `evidencekit serve` do), log level
               WARNING (no access log)
ours_logged    the same process at INFO: one access line per request, written to a file. The
               bench sets the level before each of the two sides' runs (SIGUSR1: INFO, SIGUSR2:
               WARNING) and warms up 1 s after it (the access log looks the level up every
               0.1 s), so the difference between them is the log's alone, not two processes'
fastapi        scripts/library_peers/fastapi_app.py (pydantic models, response_model) on
               `uvicorn.run`, access log off
fastmcp_json   scripts/library_peers/fastmcp_app.py (the SDK's MCPServer, stateless Streamable
               HTTP) answering JSON, on `uvicorn.run`
fastmcp_sse    the same answering with an event stream (its default)

Loads: REST get_book (a small answer, cycling through the 50 ids) and search_books (all 50 books,
~12 KB); MCP tools/call of the same two over Streamable HTTP, as a 2025 client sends them (no
session, MCP-Protocol-Version 2025-06-18); and get_book as a 2026-07-28 call (what the Python SDK's
Client sends by default: its envelope in params._meta), which the SDK answers on both sides. Before measuring, every side's answer to each load is
checked to carry the same JSON data. Ratios are medians over the rounds of ours / peer.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from bench_common import PYTHON, ROOT, free_port, ratios, shown_ratio, wait_ready
from bench_status import wrk

EXAMPLE = ROOT / "examples" / "library"
BOOKS = 50
MCP_VERSION = "2025-06-18"
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": MCP_VERSION}
REST_HEADERS = {"Content-Type": "application/json"}
# A 2026-07-28 call (what the Python SDK's Client sends by default): its envelope in params._meta
# and its routing headers
MODERN_VERSION = "2026-07-28"
MODERN_HEADERS = {**MCP_HEADERS, "MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/call",
                  "Mcp-Name": "get_book"}
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
               "io.modelcontextprotocol/clientCapabilities": {}}
SIDES = {
    "rest_get": ("ours", "ours_logged", "fastapi"),
    "rest_search": ("ours", "ours_logged", "fastapi"),
    "mcp_get": ("ours", "fastmcp_json", "fastmcp_sse"),
    "mcp_search": ("ours", "fastmcp_json", "fastmcp_sse"),
    "mcp_get_2026": ("ours", "fastmcp_json"),
}
PATHS = {"rest_get": "/books/get", "rest_search": "/books/search", "mcp_get": "/mcp", "mcp_search": "/mcp",
         "mcp_get_2026": "/mcp"}
HEADERS = {"rest_get": REST_HEADERS, "rest_search": REST_HEADERS, "mcp_get": MCP_HEADERS, "mcp_search": MCP_HEADERS,
           "mcp_get_2026": MODERN_HEADERS}
# (load, ours' side, peer side, the issue's target)
RATIOS = [
    ("REST get_book", "rest_get", "ours", "fastapi", 2.0),
    ("REST search_books (50 books)", "rest_search", "ours", "fastapi", 2.0),
    ("MCP tools/call get_book", "mcp_get", "ours", "fastmcp_json", 3.0),
    ("MCP tools/call search_books", "mcp_search", "ours", "fastmcp_json", 2.0),
    ("MCP tools/call get_book, against SSE", "mcp_get", "ours", "fastmcp_sse", None),
    ("MCP tools/call search_books, against SSE", "mcp_search", "ours", "fastmcp_sse", None),
    ("MCP tools/call get_book, 2026-07-28", "mcp_get_2026", "ours", "fastmcp_json", None),
]


def books() -> list[dict[str, object]]:
    """50 books of the contracts' Book shape, the same on every run."""
    rng = random.Random(42)
    formats = ("hardcover", "paperback", "ebook")
    made = []
    for number in range(BOOKS):
        authors = [{"name": f"Author {number}-{k} {rng.choice(['Eliot', 'Le Guin', 'Austen', 'Tolstoy'])}",
                    "born": rng.choice([None, rng.randint(1700, 2000)])} for k in range(rng.randint(1, 2))]
        made.append({
            "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "title": f"The {rng.choice(['Left Hand', 'Mill', 'Middle', 'Winter'])} of Book {number}",
            "subtitle": rng.choice([None, f"A Study of Volume {number}"]),
            "authors": authors,
            "format": formats[number % 3],
            "published_on": f"{rng.randint(1800, 2020)}-{rng.randint(1, 12):02d}-01",
            "cover_url": rng.choice([None, f"https://covers.example.org/book-{number}.jpg"]),
        })
    return made


def build_example(where: Path) -> Path:
    """A copy of the example with its contracts locked and its package generated."""
    project = where / "library"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(
        "generated", "contracts.lock.json", ".venv", "__pycache__", ".pytest_cache", ".hypothesis"))
    for step in ("lock", "generate"):
        subprocess.run([PYTHON, "-m", "evidencekit", "codegen", step], cwd=project, check=True,
                       capture_output=True)
    return project


def bodies(load: str, data: list[dict[str, object]]) -> list[str]:
    """The request bodies a load cycles through."""
    ids = [str(book["id"]) for book in data]
    if load == "rest_get":
        return [json.dumps({"id": book_id}) for book_id in ids]
    if load == "rest_search":
        return [json.dumps({"query": "", "limit": 50})]
    tool, arguments = (("get_book", [{"id": book_id} for book_id in ids]) if load.startswith("mcp_get")
                       else ("search_books", [{"query": "", "limit": 50}]))
    meta = {"_meta": MODERN_META} if load == "mcp_get_2026" else {}
    return [json.dumps({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                        "params": {"name": tool, "arguments": given, **meta}}) for n, given in enumerate(arguments)]


def wrk_script(requests: list[str], headers: dict[str, str]) -> str:
    listed = ",\n".join(json.dumps(body) for body in requests)
    head = ", ".join(f'["{name}"] = {json.dumps(value)}' for name, value in headers.items())
    return (f"local bodies = {{\n{listed}\n}}\nlocal headers = {{{head}}}\nlocal turn = 0\n"
            "request = function()\n  turn = turn + 1\n"
            '  return wrk.format("POST", nil, headers, bodies[turn % #bodies + 1])\nend\n')


def answer_data(load: str, port: int, body: str) -> object:
    """What one request's answer carries: the REST body, or the tool result's structured content
    (from a JSON answer or from the event stream's message)."""
    import httpx

    answer = httpx.post(f"http://127.0.0.1:{port}{PATHS[load]}", content=body, headers=HEADERS[load], timeout=10)
    answer.raise_for_status()
    if load.startswith("rest"):
        return answer.json()
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip())
    result = json.loads(text)["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def start(side: str, port: int, project: Path, books_file: Path, log: Path | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BENCH_LIBRARY_BOOKS": str(books_file), "LIBRARY_API_TOKEN": "bench-librarian",
           "BENCH_FASTMCP_JSON": "1" if side == "fastmcp_json" else "0"}
    command = [PYTHON, str(Path(__file__).resolve()), "--serve", side, "--port", str(port), "--project", str(project)]
    output = log.open("ab") if log else subprocess.DEVNULL
    return subprocess.Popen(command, cwd=ROOT / "scripts", env=env, stdout=output, stderr=output)


def serve(side: str, port: int, project: Path) -> None:
    """Run one side in this process (what `start` runs)."""
    if side.startswith("ours"):
        sys.path.insert(0, str(project))
        from library_api.generated.app import create_app  # type: ignore[import-not-found]
        from library_api.handlers import Catalogue  # type: ignore[import-not-found]
        from library_api.serve import hooks_for  # type: ignore[import-not-found]

        from evidencekit.server.runtime import (
            McpSettings,
            StreamLimits,
            listen,
            log_off_the_loop,
            serve,
        )

        catalogue = Catalogue()
        loaded = json.loads(Path(os.environ["BENCH_LIBRARY_BOOKS"]).read_text())
        for book in loaded:
            catalogue.keep(book)
        log_off_the_loop("INFO" if side == "ours_logged" else "WARNING")
        for number, level in ((signal.SIGUSR1, logging.INFO), (signal.SIGUSR2, logging.WARNING)):
            signal.signal(number, lambda _number, _frame, level=level: logging.getLogger().setLevel(level))
        # wrk's 32 connections are one client: /mcp's limit of calls in progress per credential
        # (McpSettings.streams, 8 by default) is set above them, as a team serving one busy client would
        settings = McpSettings(name="Library catalogue API", streams=StreamLimits(per_credential=64))
        serve(create_app(catalogue, hooks_for(os.environ["LIBRARY_API_TOKEN"]), mcp=settings),
              listen("127.0.0.1", port))
        return
    import uvicorn

    sys.path.insert(0, str(ROOT / "scripts"))
    module = "library_peers.fastapi_app" if side == "fastapi" else "library_peers.fastmcp_app"
    app = __import__(module, fromlist=["app"]).app
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=4, help="wrk seconds per side, load and round")
    parser.add_argument("--only", choices=sorted(SIDES), action="append", help="measure only these loads")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, Path(args.project))
        return 0
    loads = args.only or list(SIDES)
    sides = sorted({side for load in loads for side in SIDES[load]})
    processes: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="bench-servers-") as folder:
        data_dir = Path(folder)
        print("building the library example (lock, generate)", flush=True)
        project = build_example(data_dir)
        data = books()
        books_file = data_dir / "books.json"
        books_file.write_text(json.dumps(data))
        servers = [side for side in sides if side != "ours_logged"]  # ours_logged: ours at INFO
        ports = {side: free_port() for side in servers}
        if "ours_logged" in sides:
            ports["ours_logged"] = ports["ours"]
        log_file = data_dir / "ours.log"
        try:
            for side in servers:
                processes.append(start(side, ports[side], project, books_file, log_file if side == "ours" else None))
            by_side = dict(zip(servers, processes, strict=True))
            for side, process in by_side.items():
                wait_ready(f"http://127.0.0.1:{ports[side]}/openapi.json" if side.startswith("ours")
                           else f"http://127.0.0.1:{ports[side]}/", process)
            for load in loads:
                first = bodies(load, data)[0]
                seen = {side: answer_data(load, ports[side], first) for side in SIDES[load] if side in ports}
                if len({json.dumps(value, sort_keys=True) for value in seen.values()}) != 1:
                    raise SystemExit(f"{load}: the sides answer different data: {seen}")
                (data_dir / f"{load}.lua").write_text(wrk_script(bodies(load, data), HEADERS[load]))
            size = len(json.dumps(answer_data("rest_search", ports[SIDES["rest_search"][0]],
                                              bodies("rest_search", data)[0]))) if "rest_search" in loads else 0
            print(f"50 books; search_books answers {size:,} bytes of JSON" if size else "50 books", flush=True)
            runs = [(load, side) for load in loads for side in SIDES[load]]
            rates: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
            for turn in range(args.rounds):
                for load, side in runs[turn % len(runs):] + runs[:turn % len(runs)]:
                    url = f"http://127.0.0.1:{ports[side]}{PATHS[load]}"
                    if "ours_logged" in SIDES[load] and side.startswith("ours"):
                        by_side["ours"].send_signal(signal.SIGUSR1 if side == "ours_logged" else signal.SIGUSR2)
                        wrk(url, data_dir / f"{load}.lua", 1)
                    rates[load, side].append(wrk(url, data_dir / f"{load}.lua", args.seconds))
                print(f"round {turn + 1} of {args.rounds} done", flush=True)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=30)
        logged = sum(1 for _ in log_file.open("rb")) if log_file.exists() else 0
    print(f"\nrequests/s, median of {args.rounds} rounds (wrk -t2 -c32, {args.seconds} s each)")
    for (load, side), values in rates.items():
        print(f"  {load:12} {side:14} {statistics.median(values):9.0f}   ({', '.join(f'{v:.0f}' for v in values)})")
    print("\nratio (median round by round, lowest-highest)        target")
    failed = False
    for label, load, mine, theirs, target in RATIOS:
        if (load, mine) not in rates or (load, theirs) not in rates:
            continue
        ratio = ratios(rates[load, mine], rates[load, theirs])
        met = "" if target is None else (f">= {target:.1f}x " + ("met" if ratio[0] >= target else "NOT MET"))
        failed |= target is not None and ratio[0] < target
        print(f"  {label:42} {shown_ratio(ratio):20} {met}")
    for load in ("rest_get", "rest_search"):
        if (load, "ours_logged") in rates:
            loss = 1 - ratios(rates[load, "ours_logged"], rates[load, "ours"])[0]
            print(f"  access log on, {load}: ours loses {loss:.1%} (target <= 10%: {'met' if loss <= 0.10 else 'NOT MET'})")
            failed |= loss > 0.10
    if logged:
        print(f"  ({logged:,} access lines written)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
