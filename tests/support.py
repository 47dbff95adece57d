"""Test helpers: a real uvicorn server on 127.0.0.1 in a background thread, and sample handlers."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencekit.contracts.spec import OperationSpec
from evidencekit.contracts.validation import OperationValidator, validator_for
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
from evidencekit.server.runtime.context import RequestContext

REPO = Path(__file__).resolve().parents[1]
# Schemathesis's `st`, from its own environment (scripts/_venv.sh makes it from
# scripts/tools/schemathesis.txt): it pins a jsonschema-rs older than the toolkit's
SCHEMATHESIS = REPO / "var" / "tools" / "schemathesis" / "bin" / "st"
CONTRACTS_DIR = REPO / "contracts"  # the service's published contracts


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
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
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
    from evidencekit.server.runtime.pipeline import OperationPipeline

    body = json.loads(json.dumps(arguments, default=str))  # as the JSON of a request carries it
    context = RequestContext("test-request", "rest", principal=principal)
    try:
        await OperationPipeline(spec, _reached, auth).run(body, json.dumps(body), context)
    except HandlerReached:
        return
    raise AssertionError("the handler was neither reached nor refused")


@contextmanager
def running_service(data: Any, *, allow: str | None = None, worker: bool = True,
                    env: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    """The real app (store + optional in-process worker) on loopback, over a SQLite file in `data`,
    bootstrapped; yields base URL, MCP URL, token, workspace_id and the data folder."""
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
        app = create_app(url, in_process_worker=worker, worker_settings=WorkerSettings(poll_interval=0.05))
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
                           kind: str = "url_text", timeout: float = 30) -> dict[str, Any]:
    """Retrieve `url` through `call` (an MCP tools/call answering the result's structured content)
    and read its status until the receipt settles: the settled retrieval."""
    import uuid

    ids = {"workspace_id": workspace, "mutation_id": str(uuid.uuid4())}
    await call("sosoapi_research_evidence_retrieve", {**ids, "url": url, "kind": kind})
    deadline = time.monotonic() + timeout
    while (retrieval := (await call("sosoapi_research_evidence_status", ids))["retrieval"])["state"] in (
            "pending", "running"):
        assert time.monotonic() < deadline, retrieval
        await asyncio.sleep(0.05)
    return retrieval  # type: ignore[no-any-return]
