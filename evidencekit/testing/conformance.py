"""Conformance tests for any project's contracts, as a pytest plugin.

Turn it on in the project's `tests/conftest.py`:

    pytest_plugins = ["evidencekit.testing.conformance"]

    from evidencekit.testing.target import Target   # not from the plugin module: see target.py

    @pytest.fixture(scope="session")
    def conformance_target():
        with serve_app(create_app(MyHandlers())) as base_url:   # evidencekit.testing.serve
            yield Target(base_url, headers={"Authorization": "Bearer ..."})

and collect the tests in one module: `from evidencekit.testing.conformance import
test_mcp_conformance, test_rest_conformance  # noqa: F401`.

For every operation of the contracts folder that `[tool.evidencekit.codegen]` names (found from
the pytest root), hypothesis-jsonschema generates valid inputs and mutations of them. Every answer
must carry the contract hash the lock pins (read from the lock, never from generated code), a valid
input must get an answer that satisfies every published output variant or an error in the error
shape (never a 5xx), a mutated input must be refused as `validation_failed` with its fields, and
MCP `tools/list` must describe each tool as its contract does. A failure is shrunk by hypothesis
and reported with a command that reproduces it. Optional fixture `conformance_prepare(operation,
payload) -> payload` adapts generated inputs (an id the target knows, say).
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from evidencekit.codegen.config import load_config
from evidencekit.contracts.ecma_regex import with_python_patterns
from evidencekit.contracts.loader import (
    LOCK_NAME,
    Operation,
    load_operations,
    read_json,
    resolve_pointer,
)
from evidencekit.contracts.schema_walk import each_subschema
from evidencekit.contracts.validation import OperationValidator
from evidencekit.testing.target import Target

__all__ = ["Target", "test_mcp_conformance", "test_rest_conformance"]

Prepare = Callable[[str, dict[str, Any]], dict[str, Any]]
ERROR_KEYS = {"error", "message", "code", "request_id"}
_MAX_REF_DEPTH = 3


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("conformance_max_examples", "generated inputs per operation and test", default="25")
    parser.addini("conformance_no_success", "operations no generated input can succeed on (a lookup of "
                  "names the target does not hold): they are not required to answer one valid call "
                  "with success", type="args", default=[])


@dataclass(frozen=True)
class Contract:
    operation: Operation
    locked_hash: str
    validator: OperationValidator


@cache
def _contracts(root: Path) -> dict[str, Contract]:
    config = load_config(root)
    lock = read_json(config.contracts / LOCK_NAME)
    pinned = {name: entry["contract_hash"] for name, entry in lock.get("operations", {}).items()}
    return {op.name: Contract(op, pinned.get(op.name, ""), OperationValidator.of(op))
            for op in load_operations(config.contracts)}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_operation" not in metafunc.fixturenames:
        return
    surface = "rest" if metafunc.function.__name__ == "test_rest_conformance" else "mcp"
    contracts = _contracts(Path(str(metafunc.config.rootpath)))
    names = sorted(name for name, c in contracts.items() if getattr(c.operation, surface))
    metafunc.parametrize("conformance_operation", names or [
        pytest.param("", marks=pytest.mark.skip(reason=f"no operation of these contracts is served over {surface}"))])


@pytest.fixture
def conformance_prepare() -> Prepare:
    return lambda operation, payload: payload


# Keywords that say nothing of validity; a published schema may spell one wrong (`examples: "3.15"`)
_ANNOTATIONS = frozenset({"examples", "example", "$comment", "description", "title", "deprecated", "readOnly",
                          "writeOnly"})


def _bounded(schema: Any, root: Mapping[str, Any], cut: list[str], depth: int = 0) -> Any:
    """`schema` with its local $refs inlined and its annotations left out, recursion cut at
    _MAX_REF_DEPTH (the cut branch accepts anything, and each cut $ref is added to `cut`)."""
    if isinstance(schema, list):
        return [_bounded(item, root, cut, depth) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
        if depth >= _MAX_REF_DEPTH:
            cut.append(schema["$ref"])
            return {}
        target = _bounded(resolve_pointer(root, schema["$ref"]), root, cut, depth + 1)
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        return {"allOf": [target, _bounded(rest, root, cut, depth)]} if rest else target
    kept = {key: value for key, value in schema.items() if key not in _ANNOTATIONS}
    return each_subschema(kept, lambda value: _bounded(value, root, cut, depth))


def inputs(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Valid inputs of `schema`; a recursive schema through a bounded copy, filtered by the real one."""
    from hypothesis_jsonschema import from_schema  # imported late: it reads hypothesis's storage

    cut: list[str] = []
    bounded = _bounded(dict(schema), schema, cut)
    bounded.pop("$defs", None)
    bounded.pop("definitions", None)
    # patterns are ECMA-262: spelled for Python's `re`, which hypothesis-jsonschema draws strings with
    strategy = from_schema(with_python_patterns(bounded), custom_formats={"uuid": st.uuids(version=4).map(str)})
    if not cut:  # inlining is exact: only a cut branch accepts more than the schema
        return strategy
    from evidencekit.contracts.validation import compile_schema

    exact = compile_schema(dict(schema))
    return strategy.filter(exact.is_valid)


def mutations(payload: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """Inputs that differ from a valid one in one way the schema forbids (the caller checks)."""
    if not isinstance(payload, dict):
        yield {"not": "the declared type"}
        return
    for name in schema.get("required", []):
        yield {key: value for key, value in payload.items() if key != name}
    if schema.get("additionalProperties") is False:
        yield {**payload, "unexpected_property": True}
    for name in schema.get("properties", {}):
        yield {**payload, name: {"unexpected": ["structure"]}}


def _settings(config: pytest.Config) -> settings:
    return settings(max_examples=int(str(config.getini("conformance_max_examples"))), deadline=None,
                    database=None, suppress_health_check=list(HealthCheck))


def _curl(url: str, headers: Mapping[str, str], body: Any) -> str:
    shown = {k: ("<credential>" if k.lower() == "authorization" else v) for k, v in headers.items()}
    parts = ["curl", "-sS", "-X", "POST", url, *(arg for k, v in shown.items() for arg in ("-H", f"{k}: {v}")),
             "-H", "Content-Type: application/json", "--data", json.dumps(body, ensure_ascii=False)]
    return "reproduce: " + " ".join(shlex.quote(part) for part in parts)


def _check_error_body(body: Any, where: str) -> None:
    assert isinstance(body, dict) and set(body) >= ERROR_KEYS, f"{where}: error body lacks {ERROR_KEYS}: {body}"


def test_rest_conformance(conformance_operation: str, conformance_target: Target,
                          conformance_prepare: Prepare, pytestconfig: pytest.Config) -> None:
    contract = _contracts(Path(str(pytestconfig.rootpath)))[conformance_operation]
    op, target = contract.operation, conformance_target
    assert op.contract_hash == contract.locked_hash, (
        f"{op.name}: the contract is {op.contract_hash}, the lock pins {contract.locked_hash or 'nothing'}: "
        "run `evidencekit codegen lock` after review")
    rest, variant = op.rest or {}, op.rest_variant
    assert variant is not None
    url = target.base_url.rstrip("/") + rest["path"]
    schema = variant.input_schema

    with httpx.Client(headers={**target.headers, "Content-Type": "application/json"}, timeout=30) as http:

        def post(body: Any) -> httpx.Response:
            note(_curl(url, target.headers, body))
            response = http.request(rest["method"], url, content=json.dumps(body))
            hash_header = response.headers.get("x-contract-hash")
            assert hash_header == contract.locked_hash, (
                f"X-Contract-Hash {hash_header!r}, the lock pins {contract.locked_hash}")
            assert response.status_code < 500, f"{response.status_code}: {response.text[:500]}"
            return response

        succeeded: list[Any] = []

        @_settings(pytestconfig)
        @given(payload=inputs(schema))
        def valid_inputs(payload: Any) -> None:
            payload = conformance_prepare(op.name, payload)
            response = post(payload)
            if response.status_code == 200:
                succeeded.append(payload)
                violations = contract.validator.output_errors(response.json())
                assert violations == [], "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations)
            else:
                _check_error_body(response.json(), f"{response.status_code} to a valid input")

        @_settings(pytestconfig)
        @given(payload=inputs(schema))
        def invalid_inputs(payload: Any) -> None:
            payload = conformance_prepare(op.name, payload)
            for bad in mutations(copy.deepcopy(payload), schema):
                if not contract.validator.input_errors(bad, variant.name):
                    continue  # the "mutation" is still valid for this schema
                response = post(bad)
                assert response.status_code == 400, f"{response.status_code} to an invalid input: {response.text}"
                body = response.json()
                _check_error_body(body, "400")
                assert body["code"] == "validation_failed" and body.get("fields"), body

        valid_inputs()
        _require_success(op.name, succeeded, pytestconfig)
        invalid_inputs()


def _require_success(operation: str, succeeded: list[Any], config: pytest.Config) -> None:
    """A target that refuses every valid call (a credential without the capability, ids it does not
    know) would pass every other check without ever showing an answer: one success is required."""
    if succeeded or operation in config.getini("conformance_no_success"):
        return
    pytest.fail(f"{operation}: no generated valid input got a successful answer, so no answer was checked "
                "against the contract; give the target a credential that may call it, or adapt the inputs "
                "with a `conformance_prepare` fixture (or list the operation in the `conformance_no_success` "
                "ini option)", pytrace=False)


def test_mcp_conformance(conformance_operation: str, conformance_target: Target,
                         conformance_prepare: Prepare, pytestconfig: pytest.Config) -> None:
    from anyio.from_thread import start_blocking_portal

    contract = _contracts(Path(str(pytestconfig.rootpath)))[conformance_operation]
    op, target = contract.operation, conformance_target
    mcp, variant = op.mcp or {}, op.mcp_variant
    assert variant is not None
    assert op.contract_hash == contract.locked_hash, (
        f"{op.name}: the contract is {op.contract_hash}, the lock pins {contract.locked_hash or 'nothing'}: "
        "run `evidencekit codegen lock` after review")
    if target.mcp_path is None:
        pytest.skip("the target serves no MCP (Target.mcp_path is None)")
    url = target.base_url.rstrip("/") + target.mcp_path
    tool = mcp["tool_name"]
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
            _mcp_session(url, dict(target.headers))) as session:
        listed = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
                  for t in portal.call(session.list_tools).tools}
        assert tool in listed, f"tools/list lacks {tool} (listed: {sorted(listed)})"
        assert listed[tool]["inputSchema"] == variant.input_schema, f"{tool}: inputSchema differs from the contract"
        assert listed[tool].get("annotations", {}) == mcp.get("annotations", {}), f"{tool}: annotations differ"
        if "outputSchema" in listed[tool]:
            assert listed[tool]["outputSchema"] == variant.output_schema, f"{tool}: outputSchema differs"

        def call(arguments: Any) -> Any:
            note("reproduce: " + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": tool, "arguments": arguments}}))
            return portal.call(session.call_tool, tool, arguments)

        succeeded: list[Any] = []

        @_settings(pytestconfig)
        @given(arguments=inputs(variant.input_schema))
        def valid_arguments(arguments: Any) -> None:
            result = call(conformance_prepare(op.name, arguments))
            if result.is_error:
                _check_error_body(json.loads(result.content[0].text), "isError result")
            else:
                succeeded.append(arguments)
                violations = contract.validator.output_errors(result.structured_content)
                assert violations == [], "; ".join(f"[{v.variant}] {v.path} {v.message}" for v in violations)

        @_settings(pytestconfig)
        @given(arguments=inputs(variant.input_schema))
        def invalid_arguments(arguments: Any) -> None:
            arguments = conformance_prepare(op.name, arguments)
            for bad in mutations(copy.deepcopy(arguments), variant.input_schema):
                if not isinstance(bad, dict) or not contract.validator.input_errors(bad, variant.name):
                    continue
                result = call(bad)
                assert result.is_error, f"an invalid call was answered: {result.structured_content}"
                body = json.loads(result.content[0].text)
                _check_error_body(body, "isError result")
                assert body["code"] == "validation_failed" and body.get("fields"), body

        valid_arguments()
        _require_success(op.name, succeeded, pytestconfig)
        invalid_arguments()


def _mcp_session(url: str, headers: dict[str, str]) -> Any:
    import contextlib

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    @contextlib.asynccontextmanager
    async def session() -> Any:
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http, \
                streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as opened:
            await opened.initialize()
            yield opened

    return session()
