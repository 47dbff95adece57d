"""Search cannot stall the service: one tenant's snippet-heavy and long-CJK searches run at once
while another tenant reads a receipt, retrieves a calm page, and /healthz is probed.

    .venv/bin/python scripts/bench_hostile_search.py [--seconds 20] [--postgres URL]

Serves a local origin (plain http on 127.0.0.1, allowed through EVIDENCEKIT_ALLOW_PRIVATE_HOSTS) and
`research-evidence serve` on a fresh SQLite folder (then, with --postgres, on a fresh database of
that server). Tenant A stores 51 German pages of 20,000 characters whose word is only in their
titles (every search of it cuts 50 snippets from text that does not hold it, with `ß` in it), ten
pages of one CJK character repeated and ten of an alternating pair. Then, for --seconds, eight
threads search the title word (50 results a page) and five search 500-character CJK runs (one
character, an alternating pair), each as fast as it is answered, with two of A's tokens (eight and
five searches at once: within each credential's share). Meanwhile tenant B (a workspace of its
own) reads its receipt every 50 ms and retrieves a calm page, and /healthz is probed every 50 ms.
Prints each search kind's median and slowest answer and how many were refused, the slowest
/healthz and status read (target < 0.5 s), and the seconds B's calm page took to settle (target
< 5 s). Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import uvicorn
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_common import database_url_beside, pg_database  # noqa: E402
from bench_hostile import Prober, free_port, send, start_serve, wait  # noqa: E402
from bench_hostile import serve_origin as hostile_origin  # noqa: E402

GERMAN = ("Die Straße am Fluss führt über die Brücke zur Mühle, wo die Bürger seit Jahrhunderten Getreide "
          "mahlen und Brot backen. ")
PAGES = 51
RUNS = 10


def german(request: Request) -> Response:
    n = request.path_params["n"]
    paragraphs = "".join(f"<p>{GERMAN * 6} Absatz {n}-{k}.</p>" for k in range(40))
    return Response(f"<html lang='de'><head><title>Zielwort {n}</title></head><body><article><h1>Seite {n}</h1>"
                    f"{paragraphs}</article></body></html>", media_type="text/html")


def run(request: Request) -> Response:
    kind, n = request.path_params["kind"], request.path_params["n"]
    text = ("字" * 20_000) if kind == "one" else ("字文" * 10_000)
    return Response(f"<html lang='zh'><head><title>{kind} {n}</title></head><body><article><p>{text}</p>"
                    "</article></body></html>", media_type="text/html")


def calm(_: Request) -> Response:
    return Response(b"<html lang='en'><head><title>Calm</title></head><body><article><h1>Calm</h1>"
                    + b"<p>An ordinary page with ordinary words in it.</p>" * 50 + b"</article></body></html>",
                    media_type="text/html")


def serve_origin(port: int) -> uvicorn.Server:
    return hostile_origin(port, [Route("/de/{n}", german), Route("/run/{kind}/{n}", run), Route("/calm/{n}", calm)])


def tenants(url: str, workspace_a: str) -> dict[str, str]:
    """Two more tokens of tenant A (viewers of its workspace) and tenant B's workspace and token."""
    from evidencekit.server.evidence.store import access
    from evidencekit.server.evidence.store.db import open_store
    from evidencekit.server.evidence.store.models import User, Workspace

    async def make() -> dict[str, str]:
        async with open_store(url):
            made: dict[str, str] = {}
            a = await Workspace.get(id=workspace_a)
            for name in ("snippets", "cjk"):
                user = await User.create(name=f"attacker-{name}-{uuid.uuid4().hex[:6]}")
                await access.add_member(a, user, "viewer")
                made[name] = (await access.create_token(user))[1]
            b = await Workspace.create(name="tenant-b")
            user = await User.create(name=f"tenant-b-{uuid.uuid4().hex[:6]}")
            await access.add_member(b, user, "editor")
            made["b"], made["b_workspace"] = (await access.create_token(user))[1], str(b.id)
            return made

    return asyncio.run(make())


class Searcher:
    """Threads searching as fast as they are answered, each on a connection of its own."""

    def __init__(self, base: str, token: str, query: str, threads: int) -> None:
        self.base, self.token, self.query = base, token, query
        self.stop = threading.Event()
        self.times: list[float] = []
        self.refused = 0
        self.failed = 0
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def start(self) -> Searcher:
        for thread in self.threads:
            thread.start()
        return self

    def join(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)

    def _run(self) -> None:
        with httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.token}"}, timeout=120) as http:
            while not self.stop.is_set():
                started = time.monotonic()
                answer = http.post("/research-api/documents/search", json={"query": self.query, "page_size": 50})
                self.times.append(time.monotonic() - started)
                self.refused += answer.status_code == 429
                self.failed += answer.status_code not in (200, 429)

    def summary(self) -> str:
        ordered = sorted(self.times) or [0.0]
        return (f"{len(self.times)} searches, median {ordered[len(ordered) // 2] * 1000:.0f} ms, slowest "
                f"{ordered[-1] * 1000:.0f} ms, {self.refused} refused (429), {self.failed} failed")


class StatusReader(Prober):
    """Tenant B reading its receipt every 50 ms, each read timed."""

    def __init__(self, base: str, token: str, workspace: str, mutation: str) -> None:
        super().__init__(base)
        self.token, self.body = token, {"workspace_id": workspace, "mutation_id": mutation}

    def _run(self) -> None:
        with httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.token}"}, timeout=30) as http:
            while not self.stop.is_set():
                started = time.monotonic()
                ok = http.post("/research-api/evidence/status", json=self.body).status_code == 200
                self.times.append(time.monotonic() - started)
                self.failures += not ok
                time.sleep(0.05)


def round_on(label: str, env: dict[str, str], origin_base: str, seconds: float) -> bool:
    port = free_port()
    server, workspace, token = start_serve(env, port)
    base = f"http://127.0.0.1:{port}"
    try:
        os.environ.update({key: env[key] for key in ("EVIDENCEKIT_DATA_DIR",)})
        if "DATABASE_URL" in env:
            os.environ["DATABASE_URL"] = env["DATABASE_URL"]
        from evidencekit.server.evidence.store.db import database_url

        made = tenants(database_url(), workspace)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            stored = [send(http, workspace, f"{origin_base}/de/{n}", "url_text") for n in range(PAGES)]
            stored += [send(http, workspace, f"{origin_base}/run/{kind}/{n}", "url_text")
                       for kind in ("one", "pair") for n in range(RUNS)]
            outcomes = [wait(http, workspace, mutation, 300) for mutation in stored]
        ready = sum(outcome.startswith("completed ready") or outcome.startswith("completed partial")
                    for outcome in outcomes)
        print(f"{label}: tenant A stored {ready} of {len(stored)} pages", flush=True)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {made['b']}"}, timeout=60) as http_b:
            first = send(http_b, made["b_workspace"], f"{origin_base}/calm/0", "url_text")
            wait(http_b, made["b_workspace"], first, 60)
            quiet = Prober(base).start()
            time.sleep(3)
            quiet.stop.set()
            quiet.thread.join(timeout=10)
            health = Prober(base).start()
            status = StatusReader(base, made["b"], made["b_workspace"], first).start()
            attackers = [Searcher(base, made["snippets"], "Zielwort", 8).start(),
                         Searcher(base, made["cjk"], "字" * 500, 3).start(),
                         Searcher(base, made["cjk"], "字文" * 250, 2).start()]
            time.sleep(min(3.0, seconds / 4))  # the searches are under way
            calm_sent = time.monotonic()
            calm_id = send(http_b, made["b_workspace"], f"{origin_base}/calm/1", "url_text")
            calm_outcome = wait(http_b, made["b_workspace"], calm_id, 120)
            calm_seconds = time.monotonic() - calm_sent
            time.sleep(max(0.0, seconds - (time.monotonic() - calm_sent) - min(3.0, seconds / 4)))
            for attacker in attackers:
                attacker.join()
            for prober in (health, status):
                prober.stop.set()
                prober.thread.join(timeout=10)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{label}: title-word searches (8 at once, 50 snippets each): {attackers[0].summary()}")
    print(f"{label}: 500-character CJK searches (5 at once): {attackers[1].summary()}; {attackers[2].summary()}")
    print(f"{label}: /healthz for 3 s before the searches: {quiet.summary()}")
    print(f"{label}: /healthz meanwhile: {health.summary()} (target: slowest < 500 ms)")
    print(f"{label}: tenant B's status reads meanwhile: {status.summary()} (target: slowest < 500 ms)")
    print(f"{label}: tenant B's calm page settled in {calm_seconds:.2f} s, {calm_outcome} (target < 5)", flush=True)
    answered = all(attacker.times and not attacker.failed for attacker in attackers)
    return (health.slowest < 0.5 and health.failures == 0 and status.slowest < 0.5 and status.failures == 0
            and calm_seconds < 5 and calm_outcome.startswith("completed") and answered)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20, help="how long the searches run")
    parser.add_argument("--postgres", default=os.environ.get("EVIDENCEKIT_BENCH_POSTGRES", ""),
                        help="a PostgreSQL server URL (a database of its own is made there) for a second round")
    args = parser.parse_args()
    origin_port = free_port()
    origin = serve_origin(origin_port)
    origin_base = f"http://127.0.0.1:{origin_port}"
    data = Path(tempfile.mkdtemp(prefix="evidencekit-hostile-search-"))
    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(data), "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": f"127.0.0.1:{origin_port}",
           "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "1000", "EVIDENCEKIT_LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    held = round_on("SQLite", env, origin_base, args.seconds)
    if args.postgres:
        name = f"bench_hostile_search_{uuid.uuid4().hex[:8]}"
        asyncio.run(pg_database(True, name))
        try:
            held = round_on("PostgreSQL", {**env, "EVIDENCEKIT_DATA_DIR": str(data / "pg"),
                                           "DATABASE_URL": database_url_beside(args.postgres, name)},
                            origin_base, args.seconds) and held
        finally:
            asyncio.run(pg_database(False, name))
    else:
        print("PostgreSQL: skipped (no --postgres URL)")
    origin.should_exit = True
    print("targets held" if held else "a target was missed")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())

