"""The conformance gate against the real service, as CI runs it (.ci/run): REST and MCP over
Streamable HTTP and over stdio conform, with the toolkit-protocol checks on; the credential never
shows in what it prints or writes. No worker runs over HTTP; the stdio process's worker is given a
URL at a closed loopback port, so nothing leaves the machine."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from evidencekit.cli import main as evidencekit
from tests.support import CONTRACTS_DIR, REPO, running_service

NOWHERE = "http://127.0.0.1:9/nowhere"
XSD = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("junit.xsd"))))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_service(tmp_path_factory.mktemp("gate"), worker=False,
                         env={"EVIDENCEKIT_RETRIEVE_PER_MINUTE": "100000"}) as running:
        yield running


def aimed(service: dict[str, Any]) -> list[str]:
    return ["--contracts", str(CONTRACTS_DIR), "--set", f"workspace_id={service['workspace_id']}",
            "--set", f"url={NOWHERE}", "--max-examples", "6", "--seed", "7", "--strict"]


def test_rest_and_mcp_over_http_conform(service: dict[str, Any], capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATE_TOKEN", service["token"])
    report = tmp_path / "junit.xml"
    code = evidencekit(["conformance", *aimed(service), "--url", service["base"], "--mcp-url", service["mcp"],
                        "--header", "Authorization: Bearer ${GATE_TOKEN}", "--junit", str(report)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "conforms: 0 violations (rest 0, mcp-http 0)" in out
    assert out.count("  ok    ") == 8 and "FAIL" not in out  # 4 operations, 2 surfaces
    assert "successes" in out and ", 0 successes" in out  # get_documents: no stored document has a generated name
    assert "no valid input got a success answer" in out
    tree = etree.parse(str(report))
    XSD.assertValid(tree)
    assert tree.getroot().get("failures") == "0" and int(tree.getroot().get("tests", "0")) >= 45
    for shown in (out, err, report.read_text()):
        assert service["token"] not in shown


def test_mcp_over_stdio_conforms(service: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{sys.executable} -m evidencekit mcp"
    code = evidencekit(["conformance", *aimed(service), "--mcp-stdio", command,
                        "--env", f"EVIDENCEKIT_DATA_DIR={service['data']}",
                        "--env", f"SOSOAPI_ACCESS_TOKEN={service['token']}",
                        "--env", "SOSOAPI_OUTPUT_SCHEMAS=1", "--env", f"PYTHONPATH={REPO}"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "conforms: 0 violations (mcp-stdio 0)" in out
    assert "10/10 checks passed" in out  # outputSchema listed (SOSOAPI_OUTPUT_SCHEMAS=1) and equal
    assert service["token"] not in out + err
