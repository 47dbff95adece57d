"""Test helpers: a real uvicorn server on 127.0.0.1 in a background thread, and sample handlers."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencekit.contracts._spec import OperationSpec
from evidencekit.contracts._validation import OperationValidator, validator_for
from evidencekit.server.generated.models import (
    GetDocumentsInput,
    GetDocumentsOutput,
    RetrieveInput,
    RetrieveOutput,
    SearchDocumentsInput,
    SearchDocumentsOutput,
    StatusInput,
    StatusOutput,
)
from evidencekit.server.generated.operations import OPERATIONS_BY_NAME
from evidencekit.server.runtime._context import RequestContext

REPO = Path(__file__).resolve().parents[1]
# Schemathesis's `st`, from its own environment (scripts/_venv.sh makes it from
# scripts/tools/schemathesis.txt): it pins a jsonschema-rs older than the toolkit's
SCHEMATHESIS = REPO / "var" / "tools" / "schemathesis" / "bin" / "st"
CONTRACTS_DIR = REPO / "contracts"  # the service's published contracts


T = TypeVar("T")

# Waiting in tests: on the event, never for a fixed time. A condition another thread or process
# makes true is looked at every POLL_SECONDS until it holds; PATIENCE is how long before the test
# fails instead: generous, since a loaded 2-core machine is slow, never wrong (a test that holds a
# claim against a time, a lease say, sets that time far beyond it).
POLL_SECONDS = 0.01
PATIENCE = 60.0


def eventually(predicate: Callable[[], T], timeout: float = PATIENCE, what: str = "",
               every: float = POLL_SECONDS) -> T:
    """Wait until `predicate()` gives something true (a server listening, a line logged, a process
    gone), and return it; past `timeout` seconds, fail saying `what` was waited for."""
    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"waited {timeout:g} s in vain for {what or predicate}"
        time.sleep(every)
    return found


async def until(predicate: Callable[[], T | Awaitable[T]], timeout: float = PATIENCE, what: str = "",
                every: float = POLL_SECONDS) -> T:
    """`eventually` on an event loop: `predicate` may be a coroutine function (a database read)."""
    import inspect

    deadline = time.monotonic() + timeout
    while True:
        found = predicate()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found  # type: ignore[return-value]
        assert time.monotonic() < deadline, f"waited {timeout:g} s in vain for {what or predicate}"
        await asyncio.sleep(every)


class Hold:
    """What a fake server (an origin's page, an app's answer) waits on until the test releases it:
    slow until the test says so, not for some seconds. Released from any thread, waited for on any
    event loop, without polling; `waiting`: how many wait now."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._released = False
        self._futures: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.waiting = 0

    def release(self) -> None:
        with self._lock:
            self._released = True
            futures, self._futures = self._futures, []
        for loop, future in futures:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits there any more
                loop.call_soon_threadsafe(_resolve, future)

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._released:
                return
            future: asyncio.Future[None] = loop.create_future()
            self._futures.append((loop, future))
            self.waiting += 1
        try:
            await future
        finally:
            with self._lock:
                self.waiting -= 1


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ManualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock stands still until the test moves it (`advance`): whatever reads
    `loop.time()` or sets a timer on it (call_later, asyncio.sleep, wait_for, timeouts) lives in the
    test's time, so a deadline, a sweep or an idle limit is passed exactly, however loaded the
    machine. Nothing waits for real time on it; a thread's answer (to_thread) still comes."""

    def __init__(self) -> None:
        super().__init__()
        self._now = 1000.0

    def time(self) -> float:
        return self._now

    async def advance(self, seconds: float, step: float | None = None) -> None:
        """Move the clock on by `seconds` (in steps of `step`: a timer that sets itself again runs
        once a step), letting what comes due run after each step."""
        left = seconds
        while left > 1e-12:
            moved = min(step or left, left)
            self._now += moved
            left -= moved
            await self.idle()

    async def idle(self) -> None:
        """Let everything run that can without the clock moving (callbacks, tasks, timers due)."""
        for _ in range(100_000):
            await asyncio.sleep(0)
            due = self._scheduled and self._scheduled[0].when() <= self._now  # type: ignore[attr-defined]
            if not self._ready and not due:  # type: ignore[attr-defined]
                return
        raise AssertionError("the loop never came to rest")


def on_manual_clock(main: Callable[[ManualClockLoop], Coroutine[Any, Any, T]], timeout: float = PATIENCE) -> T:
    """Run `main(loop)` on a ManualClockLoop of its own; cancelled (the test fails) if it has not
    ended after `timeout` real seconds, as a wait that needs the clock moved would never end."""
    loop = ManualClockLoop()
    try:
        task = loop.create_task(main(loop))
        watchdog = threading.Timer(timeout, lambda: loop.call_soon_threadsafe(task.cancel))
        watchdog.start()
        try:
            return loop.run_until_complete(task)
        finally:
            watchdog.cancel()
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def validator_named(operation: str) -> OperationValidator:
    """The runtime's validators of one of the service's operations, by its name."""
    return validator_for(OPERATIONS_BY_NAME[operation])


class AllowAll:
    """An Auth for serving the generated skeleton alone: every caller may do everything."""

    @dataclass(frozen=True)
    class Caller:
        kind: str = "personal_access_token"
        capabilities: frozenset[str] = frozenset({"agent:research"})

    async def authenticate(self, credential: str) -> AllowAll.Caller:
        return self.Caller()

    async def check_role(self, principal: Any, minimum_role: str, payload: Any) -> None:
        return None

    def challenge(self, base_url: str) -> str:
        return "Bearer"


class OtherContractHash:
    """Stands for a server generated from a newer contract: it answers with another hash."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_other(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message["headers"] if k != b"x-contract-hash"]
                message["headers"] = headers + [(b"x-contract-hash", b"sha256:0000000000000000")]
            await send(message)

        await self.app(scope, receive, send_other)


def skeleton_app(handlers: Any, auth: Any = None) -> ASGIApp:
    """The generated app over `handlers`, with no store: any caller (or `auth`'s), the service's
    outage mapping."""
    from dataclasses import replace

    from evidencekit.server.evidence.auth import evidence_hooks
    from evidencekit.server.generated.app import create_app

    return create_app(handlers, replace(evidence_hooks(), auth=auth or AllowAll()))


@contextmanager
def live_server(app: ASGIApp, host: str = "127.0.0.1", port: int = 0, **options: Any) -> Iterator[str]:
    """Serve `app` on a loopback port (free unless given; HTTPS when ssl_certfile is given); yields the base URL."""
    options.setdefault("lifespan", "off")
    # At the end, requests still in flight (a reply delayed for a worker the test killed) are
    # cancelled after this long, not waited for until the join below gives up
    options.setdefault("timeout_graceful_shutdown", 1)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    eventually(lambda: server.started or not thread.is_alive(), what="uvicorn to start")
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    port = server.servers[0].sockets[0].getsockname()[1]
    scheme = "https" if options.get("ssl_certfile") else "http"
    try:
        yield f"{scheme}://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def example_output(operation: str, variant: str = "mcp") -> dict[str, Any]:
    path = CONTRACTS_DIR / operation / "examples" / f"{variant}.output.json"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


class ExampleHandlers:
    """Answers every operation with its published example, echoing the caller's ids."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, RequestContext]] = []

    async def retrieve(self, payload: RetrieveInput, context: RequestContext) -> RetrieveOutput:
        self.calls.append(("retrieve", payload, context))
        data = example_output("sosoapi_research_evidence_retrieve")
        data["retrieval"]["workspace_id"] = str(payload.workspace_id)
        data["retrieval"]["mutation_id"] = str(payload.mutation_id)
        return RetrieveOutput.model_validate(data)

    async def status(self, payload: StatusInput, context: RequestContext) -> StatusOutput:
        self.calls.append(("status", payload, context))
        if payload.mutation_id.int == 0:
            return StatusOutput.model_validate({"retrieval": None})
        return StatusOutput.model_validate(example_output("sosoapi_research_evidence_status"))

    async def get_documents(self, payload: GetDocumentsInput, context: RequestContext) -> GetDocumentsOutput:
        await asyncio.sleep(0)
        return GetDocumentsOutput.model_validate(example_output("get_documents"))

    async def search_documents(self, payload: SearchDocumentsInput, context: RequestContext) -> SearchDocumentsOutput:
        self.calls.append(("search_documents", payload, context))
        return SearchDocumentsOutput.model_validate(example_output("search_documents"))


class HandlerReached(Exception):
    """The operation's handler was called: every check the pipeline makes before it passed."""


async def _reached(payload: Any, context: RequestContext) -> Any:
    raise HandlerReached


async def admitted(spec: OperationSpec, auth: Any, principal: Any, arguments: dict[str, Any]) -> None:
    """Run `arguments` through the operation's pipeline (OperationPipeline: what REST and MCP both run)
    as `principal`: the contract, then the manifest's requirement, with `auth`'s role check. Returns
    when the handler is reached; raises the refusal (Unauthorized, Forbidden, BadRequest) otherwise."""
    from evidencekit.server.runtime._pipeline import OperationPipeline

    body = json.loads(json.dumps(arguments, default=str))  # as the JSON of a request carries it
    context = RequestContext("test-request", "rest", principal=principal)
    try:
        await OperationPipeline(spec, _reached, auth).run(body, json.dumps(body), context)
    except HandlerReached:
        return
    raise AssertionError("the handler was neither reached nor refused")


@contextmanager
def running_service(data: Any, *, allow: str | None = None, worker: bool = True,
                    env: dict[str, str] | None = None, fetch_limits: Any = None,
                    poll_interval: float = 0.05) -> Iterator[dict[str, Any]]:
    """The real app (store + optional in-process worker polling every `poll_interval` seconds, its
    fetcher with `fetch_limits` if given) on loopback, over a SQLite file in `data`, bootstrapped; yields base URL, MCP URL, token,
    workspace_id and the data folder."""
    import pytest

    from evidencekit.server.evidence.admin import bootstrap
    from evidencekit.server.evidence.app import create_app
    from evidencekit.server.evidence.store.db import open_store
    from evidencekit.server.evidence.worker import WorkerSettings

    url = f"sqlite://{data / 'evidencekit.sqlite3'}?busy_timeout=10000"
    patch = pytest.MonkeyPatch()
    patch.setenv("EVIDENCEKIT_DATA_DIR", str(data))
    if allow:
        patch.setenv("EVIDENCEKIT_ALLOW_PRIVATE_HOSTS", allow)
    for key, value in (env or {}).items():
        patch.setenv(key, value)

    async def boot() -> dict[str, Any]:
        async with open_store(url):
            return await bootstrap()

    try:
        who = asyncio.run(boot())
        app = create_app(url, in_process_worker=worker, worker_settings=WorkerSettings(poll_interval=poll_interval),
                         fetch_limits=fetch_limits)
        with live_server(app, lifespan="on") as base:
            yield {"base": base, "mcp": base + "/mcp", "token": who["token"],
                   "workspace_id": who["workspace_id"], "data": data, "url": url}
    finally:
        patch.undo()


def allow_origin(origin_url: str) -> str:
    return f"127.0.0.1:{origin_url.rsplit(':', 1)[1]}"


def alternating_cpu_seconds(function: Callable[[Any], object], small: Any, large: Any, rounds: int = 5) -> tuple[float, float]:
    """The best CPU time of `function` on `small` and on `large`, measured in alternation: on a
    shared 2-core machine the other core's load changes a thread's speed by up to ~2x over
    seconds, and two sizes measured one after the other would each get a different share of it."""
    best = [float("inf"), float("inf")]
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            for index, argument in enumerate((small, large)):
                started = time.thread_time()
                function(argument)
                best[index] = min(best[index], time.thread_time() - started)
    finally:
        gc.enable()
    return best[0], best[1]


class ManualClock:
    """A clock a test moves by hand (`advance`) instead of sleeping: both its monotonic time and its
    Unix time move together (ttl_cache.Clock)."""

    def __init__(self) -> None:
        import time

        self._monotonic, self._time = time.monotonic(), time.time()

    def monotonic(self) -> float:
        return self._monotonic

    def time(self) -> float:
        return self._time

    def advance(self, seconds: float) -> None:
        self._monotonic += seconds
        self._time += seconds


LIBRARY_EXAMPLE = REPO / "examples" / "library"


@contextmanager
def library_project(folder: Path, edit: Callable[[Path], None] | None = None) -> Iterator[Path]:
    """The example project (another domain's contracts) copied into `folder`, changed by `edit`,
    then locked and generated as a team would, its package importable while the context lasts."""
    import shutil
    import subprocess
    import sys

    project = folder / "library"
    shutil.copytree(LIBRARY_EXAMPLE, project,
                    ignore=shutil.ignore_patterns("generated", "__pycache__", "contracts.lock.json"))
    if edit is not None:
        edit(project)
    for command in ("lock", "generate"):
        done = subprocess.run([sys.executable, "-m", "evidencekit", "codegen", command], cwd=project,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(project))
    try:
        yield project
    finally:
        sys.path.remove(str(project))
        for name in [name for name in sys.modules if name == "library_api" or name.startswith("library_api.")]:
            del sys.modules[name]


def edit_json(path: Path, change: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


async def settled_over_mcp(call: Callable[[str, dict[str, Any]], Any], workspace: str, url: str,
                           kind: str = "url_text", timeout: float = PATIENCE) -> dict[str, Any]:
    """Retrieve `url` through `call` (an MCP tools/call answering the result's structured content)
    and read its status until the receipt settles: the settled retrieval."""
    import uuid

    ids = {"workspace_id": workspace, "mutation_id": str(uuid.uuid4())}
    await call("sosoapi_research_evidence_retrieve", {**ids, "url": url, "kind": kind})

    async def settled() -> dict[str, Any] | None:
        retrieval: dict[str, Any] = (await call("sosoapi_research_evidence_status", ids))["retrieval"]
        return None if retrieval["state"] in ("pending", "running") else retrieval

    return await until(settled, timeout, f"{url} to settle", every=0.05)
