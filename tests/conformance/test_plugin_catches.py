"""The conformance plugin fails on a server that breaks its contract (it is not a test that cannot fail)."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest

from evidencekit.server.generated.models import StatusInput
from evidencekit.server.runtime._context import RequestContext
from evidencekit.testing import conformance
from evidencekit.testing._contracts import load_contracts
from evidencekit.testing._target import Target
from tests.support import (
    CONTRACTS_DIR,
    AllowAll,
    ExampleHandlers,
    OtherContractHash,
    live_server,
    skeleton_app,
)
from tests.testing.gate_servers import broken_app
from tests.testing.test_gate_broken import PLANTED


class WrongStatus(ExampleHandlers):
    async def status(self, payload: StatusInput, context: RequestContext) -> Any:
        return {"retrieval": {"state": "nonsense"}}


class NoCapabilities(AllowAll):
    async def authenticate(self, credential: str) -> AllowAll.Caller:
        return self.Caller(capabilities=frozenset())


def identity(operation: str, payload: dict[str, Any]) -> dict[str, Any]:
    return payload


@pytest.mark.parametrize(("app", "says"), [(skeleton_app(WrongStatus()), "500"),
                                           (OtherContractHash(skeleton_app(ExampleHandlers())), "X-Contract-Hash")],
                         ids=["answer-outside-the-contract", "another-contract-hash"])
def test_a_server_that_breaks_its_contract_fails_conformance(app: Any, says: str,
                                                             pytestconfig: pytest.Config) -> None:
    with live_server(app) as base, pytest.raises(pytest.fail.Exception) as failed:
        conformance.test_rest_conformance("sosoapi_research_evidence_status", Target(base), identity, pytestconfig)
    assert says in str(failed.value)


def test_a_target_that_refuses_every_call_fails_conformance(pytestconfig: pytest.Config) -> None:
    """Refusals have the error shape; a target whose every answer is one checks nothing, and says so."""
    with live_server(skeleton_app(WrongStatus(), NoCapabilities())) as base, \
            pytest.raises(pytest.fail.Exception) as failed:
        conformance.test_rest_conformance("sosoapi_research_evidence_status", Target(base), identity, pytestconfig)
    assert "no generated valid input got a successful answer" in str(failed.value)


def test_two_runs_send_the_same_inputs_and_give_the_same_verdict(pytestconfig: pytest.Config) -> None:
    """The inputs come from the configured seed (0 by default): a clean checkout and a warm one get
    the same calls, so the same verdict (one drew new inputs each run and failed on a clean one)."""
    sent = []
    for _ in range(2):
        handlers = ExampleHandlers()
        with live_server(skeleton_app(handlers)) as base:
            conformance.test_rest_conformance("sosoapi_research_evidence_status", Target(base), identity, pytestconfig)
        sent.append([payload.model_dump_json() for name, payload, _ in handlers.calls])
    assert sent[0] == sent[1] and len(sent[0]) > 10
    assert conformance.pytest_report_header(pytestconfig).startswith("conformance: inputs from seed 0")


def plugin_failures(run: Any) -> set[str]:
    """The checks a plugin test failed on (the `check:` headings of its message); none when it passed."""
    try:
        run()
    except pytest.fail.Exception as failed:
        return set(re.findall(r"^(\w+):$", str(failed), re.MULTILINE))
    return set()


def test_the_plugin_finds_what_the_gate_finds(pytestconfig: pytest.Config) -> None:
    """One set of checks: pointed at the server with violations planted, each plugin test fails on
    exactly the checks the gate reports for its surface and operation."""
    app = broken_app()
    found = set()
    with live_server(app, lifespan="on") as base:
        for operation in load_contracts(CONTRACTS_DIR):
            for surface, test in (("rest", conformance.test_rest_conformance),
                                  ("mcp-http", conformance.test_mcp_conformance)):
                run = functools.partial(test, operation, Target(base), identity, pytestconfig)
                found |= {(surface, operation, check) for check in plugin_failures(run)}
    assert found == PLANTED
