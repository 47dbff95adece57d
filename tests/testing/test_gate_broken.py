"""The conformance gate against a server with violations planted (tests/testing/gate_servers.py):
every one is found, on the surface it is on, with a reproduction that reproduces it; nothing
else is reported; the JUnit file is valid; --read-only sends nothing to a write operation."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from evidencekit.cli import main as evidencekit
from evidencekit.testing._contracts import load_contracts
from tests.support import (
    CONTRACTS_DIR,
    ExampleHandlers,
    OtherContractHash,
    live_server,
    skeleton_app,
)
from tests.testing.gate_servers import RETRIEVE_PATH, Recorder, broken_app

XSD = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("junit.xsd"))))
PLANTED = {
    ("rest", "sosoapi_research_evidence_retrieve", "valid_answers"),  # an answer outside the REST variant
    ("mcp-http", "sosoapi_research_evidence_retrieve", "valid_answers"),
    ("mcp-http", "get_documents", "input_schema"),  # a descriptor that differs
    # a 400 without `fields`, on every operation's REST path
    ("rest", "get_documents", "validation_fields"),
    ("rest", "sosoapi_research_evidence_retrieve", "validation_fields"),
    ("rest", "sosoapi_research_evidence_status", "validation_fields"),
    ("rest", "search_documents", "validation_fields"),
}
HEADING = re.compile(r"^\d+\) (\S+) (\S+): (\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def broken() -> Iterator[tuple[str, Recorder]]:
    app = broken_app()
    with live_server(app, lifespan="on") as base:
        yield base, app


def gate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = evidencekit(["conformance", "--contracts", str(CONTRACTS_DIR), "--seed", "3", *args])
    out, err = capsys.readouterr()
    return code, out, err


def failures(out: str) -> dict[tuple[str, str, str], list[str]]:
    """Each reported failure's heading, and the lines under it."""
    found: dict[tuple[str, str, str], list[str]] = {}
    blocks = out.split("\n\n")
    for block in blocks:
        heading = HEADING.match(block.strip())
        if heading:
            found[(heading[1], heading[2], heading[3])] = [line.strip() for line in block.strip().splitlines()[1:]]
    return found


def test_every_planted_violation_is_reported_with_its_reproduction(
        broken: tuple[str, Recorder], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    base, _ = broken
    report = tmp_path / "conformance.xml"
    code, out, _ = gate(capsys, "--url", base, "--mcp-url", base + "/mcp", "--max-examples", "8",
                        "--junit", str(report))
    assert code == 1, out
    found = failures(out)
    assert set(found) == PLANTED, out
    answer = found[("rest", "sosoapi_research_evidence_retrieve", "valid_answers")]
    assert answer[0].startswith("HTTP 200: [rest] $.retrieval.id does not match the pattern"), answer
    assert answer[1].startswith("input (shrunk): {") and answer[2].startswith("reproduce: curl -s -X POST "), answer
    assert "[mcp]" not in answer[0]  # the MCP variant admits it: one variant is violated
    assert "$.properties.names.maxItems: listed 50, the contract 20" in found[
        ("mcp-http", "get_documents", "input_schema")][0]
    fields = found[("rest", "sosoapi_research_evidence_status", "validation_fields")]
    assert "names no `fields`" in fields[0] and fields[1].startswith("input (shrunk): "), fields
    rpc = found[("mcp-http", "sosoapi_research_evidence_retrieve", "valid_answers")][2]
    call = json.loads(rpc.removeprefix("reproduce: "))
    assert call["method"] == "tools/call" and call["params"]["name"] == "sosoapi_research_evidence_retrieve"
    assert out.rstrip().endswith("(seed 3)") and "7 violations (rest 5, mcp-http 2)" in out

    # the JUnit file: valid, one suite per surface and operation, one failure per violation
    tree = etree.parse(str(report))
    XSD.assertValid(tree)
    suites = {suite.get("name"): suite for suite in tree.getroot()}
    assert set(suites) == {f"{surface} {operation}" for surface in ("rest", "mcp-http")
                           for operation in load_contracts(CONTRACTS_DIR)}
    failed = {(case.getparent().get("name"), case.get("name")) for case in tree.iter("testcase")
              if case.find("failure") is not None}
    assert failed == {(f"{surface} {operation}", check) for surface, operation, check in PLANTED}
    assert tree.getroot().get("failures") == "7"
    failure = suites["rest sosoapi_research_evidence_retrieve"].find("testcase[@name='valid_answers']/failure")
    assert failure is not None and "reproduce: curl -s -X POST" in (failure.text or "")


def test_the_reproduction_reproduces(broken: tuple[str, Recorder], capsys: pytest.CaptureFixture[str]) -> None:
    base, _ = broken
    code, out, _ = gate(capsys, "--url", base, "--max-examples", "5", "--operation",
                        "sosoapi_research_evidence_retrieve")
    assert code == 1
    line = failures(out)[("rest", "sosoapi_research_evidence_retrieve", "valid_answers")][2]
    done = subprocess.run(shlex.split(line.removeprefix("reproduce: ")), capture_output=True, text=True,
                          timeout=30, check=True)
    answer: dict[str, Any] = json.loads(done.stdout)
    assert answer["retrieval"]["id"] == "12345678-1234-0234-8234-123456789abc"


def test_read_only_sends_nothing_to_a_write_operation(broken: tuple[str, Recorder],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    base, recorder = broken
    recorder.calls.clear()
    code, out, _ = gate(capsys, "--url", base, "--mcp-url", base + "/mcp", "--max-examples", "5", "--read-only")
    assert recorder.calls[RETRIEVE_PATH] == 0 and recorder.calls["tool sosoapi_research_evidence_retrieve"] == 0
    assert recorder.calls["/research-api/evidence/status"] > 0
    assert recorder.calls["tool sosoapi_research_evidence_status"] > 0
    assert "skipped: not called: --read-only" in out
    # what does not need a call is still checked: the write tool's descriptor, here equal
    assert {key[2] for key in failures(out) if key[1] == "sosoapi_research_evidence_retrieve"} == set()
    assert code == 1 and ("mcp-http", "get_documents", "input_schema") in failures(out)


def test_a_server_of_another_contract_version_fails(capsys: pytest.CaptureFixture[str]) -> None:
    with live_server(OtherContractHash(skeleton_app(ExampleHandlers()))) as base:
        code, out, _ = gate(capsys, "--url", base, "--max-examples", "3")
    assert code == 1
    assert {key[2] for key in failures(out)} == {"contract_hash"} and len(failures(out)) == 4  # every operation
    assert "X-Contract-Hash sha256:0000000000000000, the lock pins sha256:" in out
    assert "the server serves another version of the contract" in out
