"""One function from any error to its HTTP answer (http_errors.error_answer): status, headers, body."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.exceptions import HTTPException

from evidencekit.contracts._validation import FieldError
from evidencekit.server.runtime._errors import (
    ApiError,
    BadRequest,
    PayloadTooLarge,
    RateLimited,
    Unauthorized,
)
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._http_errors import error_answer

RUNTIME = Path(__file__).resolve().parents[2] / "server" / "runtime"


def scope(path: str = "/books/get", method: str = "POST", request_id: bytes | None = b"r-1") -> dict[str, Any]:
    headers = [(b"x-request-id", request_id)] if request_id is not None else []
    return {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "headers": headers}


def parts(answer: Any) -> tuple[int, dict[str, str], dict[str, Any]]:
    headers = {name.decode(): value.decode() for name, value in answer.raw_headers}
    assert len(headers) == len(answer.raw_headers), answer.raw_headers  # no header twice
    assert headers.pop("content-type") == "application/json"
    assert headers.pop("content-length") == str(len(answer.body))
    return answer.status_code, headers, json.loads(answer.body)


def test_the_error_trees_errors_with_their_own_headers() -> None:
    fields = [FieldError("$.id", "'x' is not a 'uuid'", "format")]
    assert parts(error_answer(BadRequest("no", code="validation_failed", fields=fields), scope())) == (
        400, {"x-request-id": "r-1"}, {"error": "bad_request", "message": "no", "code": "validation_failed",
                                       "request_id": "r-1", "fields": [field.to_json() for field in fields]})
    challenge = 'Bearer resource_metadata="https://api.example.org/.well-known/oauth-protected-resource"'
    assert parts(error_answer(Unauthorized("who?", challenge=challenge), scope()))[:2] == (
        401, {"x-request-id": "r-1", "www-authenticate": challenge})
    assert parts(error_answer(Unauthorized("who?"), scope()))[1]["www-authenticate"] == "Bearer"
    status, headers, body = parts(error_answer(RateLimited("slow down", retry_after=7), scope()))
    assert (status, headers["retry-after"], body["retry_after_seconds"]) == (429, "7", 7)
    status, headers, body = parts(error_answer(PayloadTooLarge("too big"), scope(), request_id="given",
                                               headers=[(b"x-contract-hash", b"sha256:0123456789abcdef")]))
    assert (status, headers, body["request_id"]) == (
        413, {"x-request-id": "given", "x-contract-hash": "sha256:0123456789abcdef"}, "given")


def test_what_starlette_raises_by_its_status() -> None:
    status, headers, body = parts(error_answer(HTTPException(404), scope("/nowhere", "GET")))
    assert (status, body["code"]) == (404, "not_found") and "/nowhere" in body["message"]
    status, headers, body = parts(error_answer(HTTPException(405, headers={"Allow": "POST"}), scope(method="GET")))
    assert (status, headers["allow"], body["code"]) == (405, "POST", "method_not_allowed")
    assert body["message"] == "GET is not allowed on /books/get; allowed: POST"
    status, headers, body = parts(error_answer(HTTPException(418, "short and stout", headers={"X-Why": "tea"}), scope()))
    assert (status, headers["x-why"], body) == (418, "tea", {"error": "im_a_teapot", "message": "short and stout",
                                                             "code": "im_a_teapot", "request_id": "r-1"})
    assert parts(error_answer(HTTPException(400, "bad"), scope()))[2]["code"] == "invalid_request"  # the tree's own


def test_any_other_exception_is_a_logged_500_or_an_outage(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    status, _, body = parts(error_answer(KeyError("boom"), scope(), where="the test"))
    assert (status, body["code"], body["message"]) == (500, "internal_error", "internal server error")
    assert "unhandled error in the test" in caplog.text and "KeyError" in caplog.text
    outage = ServiceHooks(is_outage=lambda exc: isinstance(exc, ConnectionError), outage_message="db down")
    status, _, body = parts(error_answer(ConnectionRefusedError("refused"), scope(), hooks=outage))
    assert (status, body["code"], body["message"]) == (503, "unavailable", "db down")
    assert "dependency unavailable in POST /books/get: ConnectionRefusedError: refused" in caplog.text


def test_the_request_id_is_the_callers_a_new_one_or_none_before_a_request() -> None:
    made = parts(error_answer(ApiError("x"), scope(request_id=None)))
    assert re.fullmatch(r"[0-9a-f]{32}", made[1]["x-request-id"]) and made[2]["request_id"] == made[1]["x-request-id"]
    assert parts(error_answer(ApiError("x"), scope(request_id=b"bad id\x01")))[1]["x-request-id"] != "bad id\x01"
    status, headers, body = parts(error_answer(ApiError("refused before any request was read")))
    assert (status, headers, body["request_id"]) == (500, {}, "-")


def test_only_error_answer_writes_an_errors_json() -> None:
    """The error JSON was written in five places that drifted (the REST endpoint, the HTTP error
    handlers, the bearer check's 401, the serving protocol's refusals and its busy answer). Over HTTP
    only error_answer writes it now; MCP writes it into isError results (mcp.py)."""
    writers = sorted(path.name for path in RUNTIME.glob("*.py") if ".to_json(" in path.read_text())
    assert writers == ["_errors.py", "_http_errors.py", "_mcp.py"]  # _errors.py: ApiError.to_json itself
