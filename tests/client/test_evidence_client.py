"""The hand-written client layer: one mutation_id per logical retrieve, bounded retries, wait."""

from __future__ import annotations

import contextlib
import socket
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from evidencekit.client.evidence import EvidenceClient, WaitTimeout
from evidencekit.client.runtime import _errors as errors
from evidencekit.client.runtime._retry import RetryPolicy
from evidencekit.server.generated.operations import RETRIEVE, STATUS
from tests.support import Hold, example_output, live_server

WORKSPACE = "11111111-1111-4111-8111-111111111111"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Script:
    """A stand-in server answering from a script of (status, headers) steps, then the example."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, dict[str, str]]] = []
        self.bodies: list[dict[str, Any]] = []
        self.state = "completed"
        self.hash = RETRIEVE.contract_hash
        self.sent_hashes: list[str | None] = []
        self.hang: Hold | None = None  # status answers once it is released
        self.html = False  # answer 200 with a page instead of the contract's JSON

    async def endpoint(self, request: Request) -> Response:
        self.bodies.append(await request.json())
        self.sent_hashes.append(request.headers.get("x-contract-hash"))
        hash_header = self.hash if request.url.path.endswith("retrieve") else STATUS.contract_hash
        if self.html:
            return Response("<html><body>Sign in</body></html>", media_type="text/html",
                            headers={"X-Contract-Hash": hash_header})
        if self.hang is not None and request.url.path.endswith("status"):
            await self.hang.wait()
        if self.steps:
            status, headers = self.steps.pop(0)
            return JSONResponse({"error": "x", "message": "scripted", "code": "scripted", "request_id": "r"},
                                status, headers={**headers, "X-Contract-Hash": hash_header})
        data = example_output("sosoapi_research_evidence_retrieve")
        data["retrieval"]["state"] = self.state
        return JSONResponse(data, headers={"X-Contract-Hash": hash_header})


@pytest.fixture
def script() -> Iterator[tuple[Script, str]]:
    scripted = Script()
    app = Starlette(routes=[Route(RETRIEVE.rest_path, scripted.endpoint, methods=["POST"]),  # type: ignore[arg-type]
                            Route(STATUS.rest_path, scripted.endpoint, methods=["POST"])])  # type: ignore[arg-type]
    with live_server(app) as url:
        try:
            yield scripted, url
        finally:
            if scripted.hang is not None:
                scripted.hang.release()


def client(url: str, sleeps: list[float], **kwargs: Any) -> EvidenceClient:
    return EvidenceClient(url, "ek_x", WORKSPACE, sleep=sleeps.append,
                          retry=RetryPolicy(max_attempts=4, base_delay=0.1, max_delay=1, total_time=30), **kwargs)


def test_retries_reuse_the_same_mutation_id(script: tuple[Script, str]) -> None:
    scripted, url = script
    scripted.steps = [(503, {}), (429, {"Retry-After": "2"}), (502, {})]
    sleeps: list[float] = []
    with client(url, sleeps) as evidence:
        answer = evidence.retrieve("https://example.com/a")
    assert answer.retrieval.state == "completed"
    assert len(scripted.bodies) == 4 and len({body["mutation_id"] for body in scripted.bodies}) == 1
    assert len(sleeps) == 3 and sleeps[1] >= 2  # Retry-After honoured
    with client(url, []) as evidence:
        evidence.retrieve("https://example.com/a")
    assert scripted.bodies[-1]["mutation_id"] != scripted.bodies[0]["mutation_id"]  # a new logical retrieve


def test_retries_are_bounded_and_client_errors_are_not_retried(script: tuple[Script, str]) -> None:
    scripted, url = script
    scripted.steps = [(503, {})] * 10
    sleeps: list[float] = []
    with client(url, sleeps) as evidence, pytest.raises(errors.ServerError):
        evidence.retrieve("https://example.com/a")
    assert len(sleeps) == 3
    scripted.steps = [(403, {})]
    sleeps.clear()
    with client(url, sleeps) as evidence, pytest.raises(errors.Forbidden):
        evidence.retrieve("https://example.com/a")
    assert sleeps == []


def test_connection_errors_are_retried_then_raised() -> None:
    sleeps: list[float] = []
    with client("http://127.0.0.1:9", sleeps, timeout=1) as evidence, pytest.raises(errors.TransportError):
        evidence.status("40000000-0000-4000-8000-000000000001")
    assert len(sleeps) == 3


def test_wait_polls_until_settled_or_times_out(script: tuple[Script, str]) -> None:
    scripted, url = script
    seen: list[str] = []
    with client(url, []) as evidence:
        final = evidence.wait("m", on_poll=lambda s: seen.append(s.retrieval.state if s.retrieval else "none"))
    assert final.retrieval is not None and final.retrieval.state == "completed" and seen == ["completed"]
    scripted.state = "running"
    with client(url, []) as evidence, pytest.raises(WaitTimeout, match="has not settled"):
        evidence.wait("m", timeout=0.2, interval=0.1)


def test_a_contract_mismatch_can_warn_instead_of_raise(script: tuple[Script, str]) -> None:
    scripted, url = script
    scripted.hash = "sha256:0000000000000000"
    with client(url, []) as evidence, pytest.raises(errors.ContractMismatch):
        evidence.retrieve("https://example.com/a")
    with client(url, [], on_contract_mismatch="warn") as evidence, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evidence.retrieve("https://example.com/a")
    assert any(issubclass(w.category, errors.ContractMismatchWarning) for w in caught)
    assert len(scripted.bodies) == 2 and scripted.bodies[-1]["url"] == "https://example.com/a"  # and went out
    # A strict client states its contract (a server of another one refuses before acting); one told
    # to warn does not, or the server would refuse what it agreed to risk.
    assert scripted.sent_hashes == [RETRIEVE.contract_hash, None]


def test_wait_ends_at_its_timeout_when_the_server_stops_answering(script: tuple[Script, str]) -> None:
    """Each poll, and its retries, get only the time left: the status call hangs past the deadline,
    and the wait ends as a timeout instead of taking the request's own 30 s timeout and retries."""
    scripted, url = script
    scripted.hang = Hold()  # never answers while the test runs
    with client(url, []) as evidence, pytest.raises(WaitTimeout) as caught:
        evidence.wait("40000000-0000-4000-8000-000000000001", timeout=0.5)
    assert caught.value.last is None and "state unknown" in str(caught.value)
    assert isinstance(caught.value.__cause__, errors.TransportError)


def test_an_answer_outside_the_contract_is_a_client_error(script: tuple[Script, str]) -> None:
    scripted, url = script
    scripted.html = True
    with client(url, []) as evidence, pytest.raises(errors.MalformedAnswer) as caught:
        evidence.status("40000000-0000-4000-8000-000000000001")
    assert STATUS.contract_hash in str(caught.value) and "Sign in" not in str(caught.value)


def test_a_malformed_token_is_refused_without_being_repeated(script: tuple[Script, str]) -> None:
    _, url = script
    for token in ("ek_secret value", "ek_secret\n", "ek_sécret"):
        with pytest.raises(ValueError) as caught:
            EvidenceClient(url, token, WORKSPACE)
        assert "secret" not in str(caught.value) and "sécret" not in str(caught.value)


@pytest.mark.anyio
async def test_the_async_layer_retries_with_one_mutation_id_and_waits(script: tuple[Script, str]) -> None:
    from evidencekit.client.evidence import AsyncEvidenceClient

    scripted, url = script
    scripted.steps = [(503, {}), (429, {"Retry-After": "3"})]
    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    async with AsyncEvidenceClient(url, "ek_x", WORKSPACE, sleep=record,
                                   retry=RetryPolicy(max_attempts=4, base_delay=0.1, max_delay=1)) as evidence:
        answer = await evidence.retrieve("https://example.com/a")
        final = await evidence.wait(str(answer.retrieval.mutation_id))
    assert len({body["mutation_id"] for body in scripted.bodies[:3]}) == 1 and len(sleeps) == 2 and sleeps[1] >= 3
    assert final.retrieval is not None and final.retrieval.state == "completed"
    scripted.steps = [(400, {})]
    async with AsyncEvidenceClient(url, "ek_x", WORKSPACE, sleep=record) as evidence:
        with pytest.raises(errors.BadRequest):
            await evidence.status("m")


def test_wait_rides_out_a_server_restart(script: tuple[Script, str]) -> None:
    """Refused connections while the server restarts are retried for as long as the wait may last,
    not only the policy's few attempts (4 here): the receipt is read once the server is back."""
    scripted, _ = script
    port = free_port()
    app = Starlette(routes=[Route(STATUS.rest_path, scripted.endpoint, methods=["POST"])])  # type: ignore[arg-type]
    sleeps: list[float] = []
    back: list[contextlib.ExitStack] = []

    def sleep_then_restart(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 6:  # the server comes back after six refused attempts
            stack = contextlib.ExitStack()
            stack.enter_context(live_server(app, port=port))
            back.append(stack)

    try:
        with client(f"http://127.0.0.1:{port}", []) as evidence:
            evidence.retry_sleep = sleep_then_restart
            final = evidence.wait("40000000-0000-4000-8000-000000000001", timeout=60)
        assert final.retrieval is not None and final.retrieval.state == "completed" and len(sleeps) == 6
    finally:
        for stack in back:
            stack.close()


def test_wait_ends_as_a_timeout_when_the_server_stays_away_past_the_retry_budget() -> None:
    """The wait's own timeout, not the retry policy's shorter time budget, decides when to give up."""
    evidence = EvidenceClient(f"http://127.0.0.1:{free_port()}", "ek_x", WORKSPACE,
                              retry=RetryPolicy(max_attempts=3, base_delay=0.05, max_delay=0.2, total_time=0.3))
    with evidence, pytest.raises(WaitTimeout) as caught:
        evidence.wait("40000000-0000-4000-8000-000000000001", timeout=1.5)
    assert isinstance(caught.value.__cause__, errors.TransportError)


def test_polling_pauses_are_not_retry_pauses(script: tuple[Script, str]) -> None:
    scripted, url = script
    scripted.state = "running"
    polls: list[float] = []
    retries: list[float] = []
    with EvidenceClient(url, "ek_x", WORKSPACE, sleep=polls.append, retry_sleep=retries.append) as evidence, \
            pytest.raises(WaitTimeout):
        evidence.wait("m", timeout=0.3, interval=0.1)
    assert polls and retries == []  # the CLI says "trying again" only for the second kind


def test_ids_from_an_answer_can_be_passed_back_as_they_are(script: tuple[Script, str]) -> None:
    import uuid

    scripted, url = script
    with client(url, []) as evidence:
        answer = evidence.retrieve("https://example.com/a", mutation_id=uuid.UUID("40000000-0000-4000-8000-0000000000aa"))
        assert answer.retrieval is not None and isinstance(answer.retrieval.mutation_id, uuid.UUID)
        final = evidence.wait(answer.retrieval.mutation_id, workspace_id=uuid.UUID(WORKSPACE))  # was a TypeError
        evidence.status(answer.retrieval.mutation_id)
    assert final.retrieval is not None and final.retrieval.state == "completed"
    assert scripted.bodies[0]["mutation_id"] == "40000000-0000-4000-8000-0000000000aa"
    assert all(isinstance(body["mutation_id"], str) and body["workspace_id"] == WORKSPACE for body in scripted.bodies)


@pytest.mark.anyio
async def test_the_async_wait_reports_each_poll(script: tuple[Script, str]) -> None:
    from evidencekit.client.evidence import AsyncEvidenceClient

    _, url = script
    seen: list[str] = []
    async with AsyncEvidenceClient(url, "ek_x", WORKSPACE) as evidence:
        await evidence.wait("m", on_poll=lambda s: seen.append(s.retrieval.state if s.retrieval else "none"))
    assert seen == ["completed"]


def test_a_server_that_is_not_the_service_is_named_once_and_not_retried() -> None:
    calls: list[str] = []

    async def not_ours(request: Request) -> Response:
        calls.append(request.url.path)
        status = 502 if request.url.path.endswith("status") else 501
        return Response("<!DOCTYPE HTML><html><body><h1>Unsupported method</h1></body></html>", status,
                        media_type="text/html")

    app = Starlette(routes=[Route(RETRIEVE.rest_path, not_ours, methods=["POST"]),
                            Route(STATUS.rest_path, not_ours, methods=["POST"])])
    sleeps: list[float] = []
    with live_server(app) as url, client(url, sleeps) as evidence:
        with pytest.raises(errors.MalformedAnswer) as refused:
            evidence.retrieve("https://example.com/a")
        assert calls == [RETRIEVE.rest_path] and sleeps == []  # a 501 page: not retried
        message = str(refused.value)
        assert "answered HTTP 501 with a text/html body, not one of this API's errors" in message
        assert "DOCTYPE" not in message and "(request" not in message
        with pytest.raises(errors.ServerError, match="502 gateway: HTTP 502 with a text/html body"):
            evidence.status("m")
        assert len(sleeps) == 3  # a gateway's page while the service restarts: retried


def test_answers_hold_plain_values_a_user_can_print_and_pass_back() -> None:
    """A nullable constrained string is `str | None` in the models, not a RootModel wrapper
    (`Title(root='...')`), so `print(result.title)` prints the title."""
    from evidencekit.client.generated.models import StatusOutput

    data = example_output("sosoapi_research_evidence_status")
    data["retrieval"]["state"] = "completed"
    data["retrieval"]["result"] = {
        "kind": "url_text", "status": "ready", "text": "Notes.", "title": "Field notes", "description": "About.",
        "segments": [], "reason": None, "warnings": [], "retry_after_seconds": None,
        "provenance": {"source_url": "https://example.com/notes", "retrieved_at": "2026-01-01T00:00:00Z",
                       "mime_type": "text/html", "parser_version": "research-public-retrieval/v1",
                       "content_kind": "document_text", "caption_format": None, "language": "en",
                       "language_source": "publisher_declared", "platform_native_verified": False}}
    data["retrieval"]["settled_at"] = "2026-01-01T00:00:01Z"
    result = StatusOutput.model_validate(data).retrieval.result  # type: ignore[union-attr]
    assert result is not None
    assert (result.title, result.description, result.provenance.source_url, result.provenance.language) == (
        "Field notes", "About.", "https://example.com/notes", "en")
    assert all(type(value) is str for value in (result.title, result.provenance.source_url))
