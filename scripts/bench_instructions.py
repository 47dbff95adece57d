"""Instructions a REST request costs the server, ours against FastAPI's, counted by cachegrind.

    python scripts/bench_instructions.py [--only rest_get] [--keep DIR]

On a shared 2-core machine bench_servers.py's rates move +-30% between runs; the instructions a
request costs move far less. Each side of bench_servers.py (`--serve ours`: the library example
served the documented way, access log off; `--serve ours_logged`: the same at INFO, its access
lines written by the log thread, whose instructions count too; `--serve fastapi`: its FastAPI peer
on `uvicorn.run`) runs under `valgrind --tool=cachegrind`, three times per load, each answering requests from a client
in this process over one keep-alive connection, one request at a time, then stopped (SIGINT) so
cachegrind writes its count: N_LOW requests, N_HIGH requests, and N_LOW requests followed by
IDLE_SECONDS of waiting. What a server does to start, warm up and stop is the same in each; its
timers (uvicorn's tick every 0.1 s, the protocol's sweep, the access log's lookups) cost it per
second, and under valgrind on a busy machine the seconds vary (1,000 requests took 20-60 s): the idle
run measures that cost a second, which is taken out (`per_request`). What is left is what one
request costs the server: the HTTP parser, the app and the socket writes, in Python and C, not in
the kernel (ours writes a response with one system call, uvicorn's own protocol with two). The
ratio peer / ours stands in for bench_servers' rate ratio ours / peer: a server bound by its CPU
answers in inverse proportion to what a request costs it.

The access log's row is an upper bound of what a line costs: the log thread writes a batch 0.2 s
after its first line, and under valgrind a request comes every 20-50 ms, so each write carries a
handful of lines and its fixed cost (waking, a clock read, a system call) is paid by few; at wrk's
rates a write carries a thousand or more (scripts/bench_servers.py measures the rate).

Runs two servers at once (the machine's two cores: instruction counts do not mind sharing).
`--keep DIR` keeps each run's cachegrind.out for `cg_annotate` (which sees CPython's C functions,
not the Python ones).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_common import PYTHON, ROOT, free_port
from bench_servers import HEADERS, PATHS, bodies, books, build_example

N_LOW, N_HIGH = 200, 1200
IDLE_SECONDS = 20.0
LOADS = ("rest_get", "rest_search")
SIDES = ("ours", "ours_logged", "fastapi")
_IREFS = re.compile(rb"I\s+refs:\s+([\d,]+)")


def request_bytes(load: str, body: str) -> bytes:
    head = "".join(f"{name}: {value}\r\n" for name, value in HEADERS[load].items())
    encoded = body.encode()
    return (f"POST {PATHS[load]} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(encoded)}\r\n\r\n"
            .encode() + encoded)


def read_answer(sock: socket.socket, pending: bytearray) -> tuple[int, bytes]:
    """One HTTP/1.1 answer with a Content-Length from `sock` (what follows stays in `pending`)."""
    while b"\r\n\r\n" not in pending:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        pending += chunk
    head, _, _ = bytes(pending).partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = int(re.search(rb"(?im)^content-length:\s*(\d+)", head).group(1))  # type: ignore[union-attr]
    end = len(head) + 4 + length
    while len(pending) < end:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        pending += chunk
    body = bytes(pending[len(head) + 4:end])
    del pending[:end]
    return status, body


def connect(port: int, process: subprocess.Popen[bytes], timeout: float = 300) -> socket.socket:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited with {process.returncode}")
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=60)
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server on port {port} did not come up")


def count(side: str, load: str, requests: int, idle: float, project: Path, books_file: Path,
          folder: Path) -> tuple[int, float, object]:
    """cachegrind's instruction count of `side`'s server answering `requests` of `load` and then
    left idle `idle` seconds, the seconds it served from its first answer to its stop, and the JSON
    data of its first answer."""
    port = free_port()
    out = folder / f"cachegrind.out.{side}.{load}.{requests}.{idle:g}"
    env = {**os.environ, "BENCH_LIBRARY_BOOKS": str(books_file), "LIBRARY_API_TOKEN": "bench-librarian",
           "BENCH_FASTMCP_JSON": "0", "PYTHONHASHSEED": "0"}
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
               PYTHON, str(ROOT / "scripts" / "bench_servers.py"), "--serve", side, "--port", str(port),
               "--project", str(project)]
    # cachegrind's summary and the access lines go to one file, read once the server stopped (a pipe
    # nobody reads while the server runs would hold its log writer)
    errors_file = folder / f"stderr.{side}.{load}.{requests}.{idle:g}"
    with errors_file.open("wb") as stderr:
        process = subprocess.Popen(command, cwd=ROOT / "scripts", env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        with connect(port, process) as sock:
            cycle = [request_bytes(load, body) for body in bodies(load, json.loads(books_file.read_text()))]
            pending = bytearray()
            first: object = None
            since = 0.0
            for turn in range(requests):
                sock.sendall(cycle[turn % len(cycle)])
                status, body = read_answer(sock, pending)
                if status != 200:
                    raise SystemExit(f"{side} {load}: answered {status} {body[:200]!r}")
                if turn == 0:
                    first, since = json.loads(body), time.monotonic()
            time.sleep(idle)  # what the server's timers cost while it waits (see `per_request`)
        served = time.monotonic() - since
        process.send_signal(signal.SIGINT)
        process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    errors = errors_file.read_bytes()
    found = _IREFS.search(errors)
    if found is None:
        raise SystemExit(f"{side} {load}: no instruction count from cachegrind:\n{errors.decode()[-2000:]}")
    return int(found.group(1).replace(b",", b"")), served, first


def per_request(low: tuple[int, float], high: tuple[int, float], idle: tuple[int, float]) -> tuple[float, float]:
    """(instructions a request, instructions a second of the server's timers) from three runs, each
    (instructions, seconds served): N_LOW requests, N_HIGH, and N_LOW then IDLE_SECONDS of waiting.
    A run's count is its start and stop, plus a cost per request, plus its timers' cost per second
    served (uvicorn's tick, every 0.1 s; the access log's and the protocol's lookups): a slower
    run (a busier machine) has more ticks, which the idle run measures and takes out."""
    per_second = (idle[0] - low[0]) / (idle[1] - low[1])
    return ((high[0] - low[0]) - per_second * (high[1] - low[1])) / (N_HIGH - N_LOW), per_second


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=LOADS, action="append", help="count only these loads")
    parser.add_argument("--side", choices=SIDES, action="append", help="count only these sides")
    parser.add_argument("--keep", type=Path, help="keep the cachegrind.out files here")
    args = parser.parse_args()
    loads, sides = args.only or list(LOADS), args.side or list(SIDES)
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as temporary:
        folder = Path(temporary)
        keep = args.keep or folder
        keep.mkdir(parents=True, exist_ok=True)
        print("building the library example (lock, generate)", flush=True)
        project = build_example(folder)
        data = books()
        books_file = folder / "books.json"
        books_file.write_text(json.dumps(data))
        runs = [(side, load, n, idle) for load in loads for side in sides
                for n, idle in ((N_LOW, 0.0), (N_HIGH, 0.0), (N_LOW, IDLE_SECONDS))]
        with ThreadPoolExecutor(2) as pool:
            results = dict(zip(runs, pool.map(lambda run: count(*run, project, books_file, keep), runs), strict=True))
    for load in loads:  # as bench_servers checks: every side answers the same data
        if len({json.dumps(results[run][2], sort_keys=True) for run in runs if run[1] == load}) != 1:
            raise SystemExit(f"{load}: the sides answer different data")
    print(f"\ninstructions a request (cachegrind: {N_HIGH} requests against {N_LOW}, the timers' cost a second "
          f"measured over {IDLE_SECONDS:g} s idle and taken out)")
    for load in loads:
        per = {side: per_request(*(results[side, load, n, idle][:2]
                                   for n, idle in ((N_LOW, 0.0), (N_HIGH, 0.0), (N_LOW, IDLE_SECONDS))))
               for side in sides}
        shown = "  ".join(f"{side} {value / 1000:8.1f}k" for side, (value, _) in per.items())
        ratio = f"  peer / ours {per['fastapi'][0] / per['ours'][0]:.2f}x" if {"fastapi", "ours"} <= per.keys() else ""
        if {"ours", "ours_logged"} <= per.keys():
            ratio += f"  access log {1 - per['ours'][0] / per['ours_logged'][0]:.1%} of a logged request"
        timers = ", ".join(f"{side} {second / 1e6:.1f}M" for side, (_, second) in per.items())
        print(f"  {load:12} {shown}{ratio}   (timers a second: {timers})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
