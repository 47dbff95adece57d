"""What the benchmarks share: ports, readiness, the lean HTTP client, PostgreSQL databases, ratios."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
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


def database_url_beside(admin_url: str, name: str) -> str:
    """The URL of database `name` on the server of `admin_url`, with its user."""
    return admin_url.rsplit("/", 1)[0] + "/" + name


async def pg_database(create: bool, name: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(PG_ADMIN)
    try:
        await connection.execute(f'CREATE DATABASE "{name}"' if create else f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


def backend_seconds(pids: list[int]) -> float:
    """CPU time of these processes (PostgreSQL backends on this machine), from /proc."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # a backend that ended
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


async def backend_pids(url: str) -> list[int]:
    """The PostgreSQL backends serving the database of `url` (a tortoise or asyncpg URL), this
    query's aside."""
    import asyncpg

    connection = await asyncpg.connect(url.split("?", 1)[0])
    try:
        return [row["pid"] for row in await connection.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")]
    finally:
        await connection.close()


class DatabaseCpu:
    """CPU seconds the PostgreSQL backends serving one database spend while it runs (a `with`
    block), read from /proc: the backends are listed from pg_stat_activity every `every` seconds
    in a thread, so that those a pool opens meanwhile count (all their time: they started inside)
    and those it closes count up to their last reading. Not counted: the server's shared
    processes (WAL writer, checkpointer), which other databases' work moves too."""

    def __init__(self, url: str, every: float = 0.25) -> None:
        import threading

        self.url, self.every = url.split("?", 1)[0], every
        self.seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._watch()), daemon=True)
        self._ready = threading.Event()
        self._failed: BaseException | None = None

    async def _watch(self) -> None:
        import asyncpg

        try:
            connection = await asyncpg.connect(self.url)
        except BaseException as error:
            self._failed = error
            self._ready.set()
            raise
        try:
            first: dict[int, float] = {}  # pid -> its CPU when first seen (0 for those started inside)
            last: dict[int, float] = {}
            listed = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            for pid in [row["pid"] for row in await connection.fetch(listed)]:
                first[pid] = last[pid] = backend_seconds([pid])
            self._ready.set()
            while True:
                stopping = self._stop.is_set()
                for pid in [row["pid"] for row in await connection.fetch(listed)]:
                    now = backend_seconds([pid])
                    first.setdefault(pid, 0.0)
                    last[pid] = max(now, last.get(pid, 0.0))
                if stopping:
                    break
                await asyncio.get_running_loop().run_in_executor(None, self._stop.wait, self.every)
            self.seconds = sum(last[pid] - first[pid] for pid in last)
        finally:
            await connection.close()

    def __enter__(self) -> DatabaseCpu:
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            raise self._failed
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def shown_ratio(ratio: tuple[float, float, float]) -> str:
    median, low, high = ratio
    return f"{median:.2f} ({low:.2f}-{high:.2f})"


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




def ratios(mine: list[float], theirs: list[float]) -> tuple[float, float, float]:
    """(median, lowest, highest) of mine/theirs, round by round."""
    each = [a / b for a, b in zip(mine, theirs, strict=True)]
    return statistics.median(each), min(each), max(each)
