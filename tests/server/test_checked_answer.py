"""Answers checked when their data was written (runtime/_checked_answer.py): sent as they are under the
contract they were checked against, checked again under any other; over REST and MCP alike."""

from __future__ import annotations

import copy
import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evidencekit.server.generated.models import StatusInput
from evidencekit.server.generated.operations import STATUS
from evidencekit.server.runtime._checked_answer import CheckedAnswer, checked_answer, checked_frame
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._pipeline import OperationPipeline
from tests.support import AllowAll, ExampleHandlers, example_output, live_server, skeleton_app

ASK = {"workspace_id": "11111111-1111-4111-8111-111111111111", "mutation_id": "40000000-0000-4000-8000-000000000001"}


def settled() -> dict[str, Any]:
    data = example_output("sosoapi_research_evidence_status")
    data["retrieval"]["result"]["text"] = "A page of retrieved text, ünïcode and all. " * 20
    return data


def violating() -> dict[str, Any]:
    data = settled()
    data["retrieval"]["state"] = "finished"  # no such state
    return data


class StoredAnswers(ExampleHandlers):
    """Answers status with the CheckedAnswer set on it."""

    answer: CheckedAnswer

    async def status(self, payload: StatusInput, context: RequestContext) -> CheckedAnswer:  # type: ignore[override]
        return self.answer


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, StoredAnswers]]:
    handlers = StoredAnswers()
    with live_server(skeleton_app(handlers)) as url:
        yield url, handlers


def ask(url: str) -> httpx.Response:
    return httpx.post(url + STATUS.rest_path, json=ASK, timeout=10)


def test_a_frame_put_around_the_stored_member_is_the_checked_answer() -> None:
    data = settled()
    kept = copy.deepcopy(data)
    frame = checked_frame(STATUS, data, ("retrieval", "result"))
    assert frame is not None and frame.contract_hash == STATUS.contract_hash
    assert data == kept  # the answer given is left as it was
    member = data["retrieval"]["result"]
    assert member["text"] not in frame.head + frame.tail  # the member is not stored twice
    written_ways = (json.dumps(member), json.dumps(member, ensure_ascii=False, indent=2))
    for written in (*written_ways, *(text.encode() for text in written_ways)):  # text, or UTF-8 as read
        answer = frame.around(written)
        assert answer.contract_hash == STATUS.contract_hash
        assert json.loads(answer.body) == data


def test_a_stand_in_that_shows_elsewhere_in_the_answer_is_not_taken_for_the_members_place(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = settled()
    first, second = uuid.UUID(int=1), uuid.UUID(int=2)
    data["retrieval"]["result"]["title"] = f"evidencekit-member-{first.hex}"  # the first stand-in's text
    drawn = iter([first, second])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(drawn))
    frame = checked_frame(STATUS, data, ("retrieval", "result", "text"))
    assert frame is not None
    assert next(drawn, None) is None  # the first stand-in was refused, the second taken
    assert json.loads(frame.around(json.dumps(data["retrieval"]["result"]["text"])).body) == data


def test_an_answer_that_violates_the_contract_is_not_kept_as_checked(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="evidencekit.checked"):
        assert checked_frame(STATUS, violating(), ("retrieval", "result")) is None
        assert checked_answer(STATUS, violating()) is None
    assert "$.retrieval.state" in caplog.text
    lone = settled()
    lone["retrieval"]["result"]["text"] = "\ud800"  # no JSON text carries it: the read would refuse it too
    assert checked_answer(STATUS, lone) is None


def test_a_checked_answer_of_this_contract_is_sent_byte_for_byte(served: tuple[str, StoredAnswers]) -> None:
    url, handlers = served
    checked = checked_answer(STATUS, settled())
    assert checked is not None
    # Written another way than the runtime writes (indented): sent as it is, not written again
    body = json.dumps(settled(), indent=1).encode()
    handlers.answer = CheckedAnswer(body, checked.contract_hash)
    response = ask(url)
    assert response.status_code == 200
    assert response.content == body
    assert response.headers["x-contract-hash"] == STATUS.contract_hash


def test_a_checked_answer_of_another_contract_is_checked_again(served: tuple[str, StoredAnswers]) -> None:
    url, handlers = served
    handlers.answer = CheckedAnswer(json.dumps(settled(), indent=1).encode(), "sha256:0000000000000000")
    response = ask(url)
    assert response.status_code == 200
    assert response.json() == settled()
    assert b"\n" not in response.content  # parsed, checked and written by the runtime

    handlers.answer = CheckedAnswer(json.dumps(violating()).encode(), "sha256:0000000000000000")
    refused = ask(url)
    assert refused.status_code == 500
    assert refused.json()["code"] == "contract_violation"


@pytest.mark.anyio
async def test_the_mcp_surface_gets_a_checked_answer_as_data() -> None:
    handlers = StoredAnswers()
    pipeline = OperationPipeline(STATUS, handlers.status, AllowAll())
    checked = checked_answer(STATUS, settled())
    assert checked is not None
    handlers.answer = checked
    caller = AllowAll.Caller()
    assert await pipeline.run(ASK, json.dumps(ASK), RequestContext("r1", "mcp", principal=caller)) == settled()
    # REST sends the answer's own bytes (test_a_checked_answer_of_this_contract_is_sent_byte_for_byte)
    assert await pipeline.checked(ASK, json.dumps(ASK), RequestContext("r2", "rest", principal=caller)) is checked
