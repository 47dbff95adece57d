"""The coverage phase: with 10 examples, a server that accepts one forbidden value (an out-of-enum
colour, a too-long item, an unknown property of a closed object two levels down) fails
`invalid_refused` over REST and MCP, the keyword and the JSON path named; one that refuses a value
on a bound fails `boundary_accepted`; the same server with every constraint as published conforms."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidencekit.cli import main as evidencekit
from evidencekit.contracts._validation import compile_schema
from evidencekit.testing._contracts import load_contracts
from evidencekit.testing._coverage import _MALFORMED
from evidencekit.testing._gate.coverage import names_place
from evidencekit.testing._serve import serve_app
from tests.testing.coverage_servers import planted_app, publish

PLANTED = {"enum": ("enum broken at $.colour", "colour"),
           "maxLength": ("maxLength broken at $.item", "item"),
           "closed": ("additionalProperties broken at $.box.size", "box")}


@pytest.fixture(scope="module")
def contracts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return publish(tmp_path_factory.mktemp("orders") / "project")


@pytest.fixture(params=sorted(PLANTED))
def planted(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with serve_app(planted_app(request.param)) as base:
        yield request.param, base


def gate(capsys: pytest.CaptureFixture[str], contracts: Path, base: str) -> tuple[int, str]:
    code = evidencekit(["conformance", "--contracts", str(contracts), "--url", base, "--mcp-url", f"{base}/mcp",
                        "--max-examples", "10", "--seed", "1"])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_forbidden_value_is_found_with_ten_examples(planted: tuple[str, str], contracts: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    constraint, base = planted
    label, where = PLANTED[constraint]
    code, out = gate(capsys, contracts, base)
    assert code == 1, out
    assert "2 violations (rest 1, mcp-http 1)" in out, out
    for surface in ("rest", "mcp-http"):
        block = out.split(f") {surface} place_order: invalid_refused\n", 1)[1].split("\n\n", 1)[0]
        lines = [line.strip() for line in block.splitlines()]
        assert lines[0].startswith(f"an invalid input ({label}: "), block
        sent = json.loads(lines[1].removeprefix("input (coverage phase): "))
        assert where in sent, block
        assert lines[2].startswith("reproduce: curl -s -X POST" if surface == "rest" else 'reproduce: {"jsonrpc"')
    assert "coverage inputs" in out


def test_the_same_server_enforcing_every_constraint_conforms(contracts: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Every boundary value the coverage phase sends (a length, a count, a minimum met exactly) is
    accepted; every violation refused: no false alarm."""
    with serve_app(planted_app(None)) as base:
        code, out = gate(capsys, contracts, base)
    assert code == 0, out
    assert "conforms: 0 violations (rest 0, mcp-http 0)" in out


def test_a_value_on_its_bound_refused_as_invalid_is_found(contracts: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Over REST its 422 says "invalid"; its MCP isError text says nothing a gate can read as such
    (no `validation_failed` code, no -32602), so MCP raises no alarm."""
    with serve_app(planted_app("tight")) as base:
        code, out = gate(capsys, contracts, base)
    assert code == 1, out
    assert "1 violation (rest 1, mcp-http 0)" in out, out
    assert "1) rest place_order: boundary_accepted\n   maximum on its bound at $.box.size.width, a valid input, " \
           "was refused as invalid with HTTP 422" in out, out
    assert '"size": {"width": 50}' in out


def test_a_server_holding_format_as_an_annotation_conforms(contracts: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A server from elsewhere validating with `Draft202012Validator(schema)` and no format checker
    (format an annotation, as 2020-12 has it by default) accepts a malformed uuid and date-time:
    not a violation, a note."""
    with serve_app(planted_app(None, formats=False)) as base:
        code, out = gate(capsys, contracts, base)
    assert code == 0, out
    assert "conforms: 0 violations (rest 0, mcp-http 0)" in out, out
    assert "note: format not asserted: a malformed uuid at $.ref was accepted (HTTP 200)" in out, out
    assert "note: format not asserted: a malformed date-time at $.due was accepted" in out, out


def test_a_toolkit_server_accepting_a_malformed_format_is_found(contracts: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Its REST answers carry X-Contract-Hash: the toolkit's runtime asserts formats, so one that
    accepts a malformed uuid or date-time fails `invalid_refused` there; its MCP surface speaks no
    protocol (no --strict), where the same acceptance is a note."""
    locked = load_contracts(contracts)["place_order"].locked_hash
    with serve_app(planted_app(None, formats=False, speaks_toolkit=locked)) as base:
        code, out = gate(capsys, contracts, base)
    assert code == 1, out
    assert "1 violation (rest 1, mcp-http 0)" in out, out
    block = out.split(") rest place_order: invalid_refused\n", 1)[1].split("\n\n", 1)[0]
    assert "format broken at $.ref" in block and "format broken at $.due" in block, block
    assert "note: format not asserted: a malformed uuid at $.ref was accepted" in out, out


def test_a_business_refusal_of_a_value_on_its_bound_is_a_note(contracts: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A 422 for 50 boxes' width that names no field (out of stock) is not a refusal of the input's
    shape: a note, not `boundary_accepted`."""
    def out_of_stock(payload: Any) -> str | None:
        width = payload.get("box", {}).get("size", {}).get("width")
        return "that size is out of stock" if width == 50 else None

    with serve_app(planted_app(None, refuse=out_of_stock)) as base:
        code, out = gate(capsys, contracts, base)
    assert code == 0, out
    assert "note: maximum on its bound at $.box.size.width, a valid input, was refused with HTTP 422 " \
           "naming no field of it" in out, out


@pytest.mark.parametrize("fmt", sorted(_MALFORMED))
def test_each_format_tried_has_a_value_the_validator_refuses(fmt: str) -> None:
    """docs/conformance.md lists these formats as tried: a malformed value the check accepts
    would drop the case."""
    schema = {"type": "object", "properties": {"at": {"type": "string", "format": fmt}}}
    assert not compile_schema(schema).is_valid({"at": _MALFORMED[fmt]})


@pytest.mark.parametrize(("body", "named"), [
    ({"error": "bad_request", "fields": [{"path": "$.box.size.width", "message": "too big"}]}, True),
    ({"error": "bad_request", "fields": [{"path": "$.item", "message": "too long"}]}, False),
    ({"detail": [{"loc": ["body", "box", "size", "width"], "msg": "too big"}]}, True),
    ({"detail": "box.size.width must be at most 49"}, True),
    ({"detail": "/box/size/width: too big"}, True),
    ({"detail": "that size is out of stock"}, False),
    ({"detail": "$.box.size.widths is unknown"}, False),
])
def test_a_refusal_names_the_place_of_a_value(body: Any, named: bool) -> None:
    assert names_place(body, "$.box.size.width") is named
