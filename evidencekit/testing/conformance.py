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

The inputs (`evidencekit.testing.strategies`), the answer checks and reproductions
(`evidencekit.testing.answers`) and the contracts with their lock (`evidencekit.testing.contracts`)
are those of the conformance gate, `evidencekit conformance` (`evidencekit.testing.gate`), which
checks a deployed server the same way from the command line.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, note, seed, settings

from evidencekit.codegen.config import load_config
from evidencekit.testing.answers import (
    as_carried,
    curl,
    error_body_problem,
    fields_problem,
    jsonrpc_call,
    output_problem,
    request_input,
)
from evidencekit.testing.contracts import Contract, load_contracts
from evidencekit.testing.strategies import inputs, mutations
from evidencekit.testing.target import Target

__all__ = ["Target", "inputs", "mutations", "test_mcp_conformance", "test_rest_conformance"]

Prepare = Callable[[str, dict[str, Any]], dict[str, Any]]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("conformance_max_examples", "generated inputs per operation and test", default="25")
    parser.addini("conformance_seed", "the seed the inputs are generated from (the same inputs, and verdict, "
                  "on every run and machine); `random` for new inputs each run", default="0")
    parser.addini("conformance_no_success", "operations no generated input can succeed on (a lookup of "
                  "names the target does not hold): they are not required to answer one valid call "
                  "with success", type="args", default=[])


@cache
def _contracts(root: Path) -> dict[str, Contract]:
    return load_contracts(load_config(root).contracts)


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


def conformance_seed(config: pytest.Config) -> int | None:
    """The configured seed; None for `random`."""
    value = str(config.getini("conformance_seed")).strip()
    if value == "random":
        return None
    try:
        return int(value)
    except ValueError:
        raise pytest.UsageError(f"conformance_seed must be a whole number or `random`, not {value!r}") from None


def pytest_report_header(config: pytest.Config) -> str:
    chosen = conformance_seed(config)
    return ("conformance: inputs from seed " + (f"{chosen} (conformance_seed; `random` for new ones each run)"
                                                if chosen is not None else "random (conformance_seed = random)"))


def _settings(config: pytest.Config) -> Callable[[Any], Any]:
    """The generated tests' settings, and the configured seed: the same inputs on every run, with or
    without a hypothesis folder from an earlier one."""
    configured = settings(max_examples=int(str(config.getini("conformance_max_examples"))), deadline=None,
                          database=None, suppress_health_check=list(HealthCheck))
    chosen = conformance_seed(config)

    def apply(test: Any) -> Any:
        test = configured(test)
        return seed(chosen)(test) if chosen is not None else test

    return apply


def _reproduce(target: Target, method: str, url: str, body: Any) -> str:
    return "reproduce: " + curl(method, url, body, secret=target.headers)


def _check_error_body(body: Any, where: str) -> None:
    problem = error_body_problem(body)
    assert problem is None, f"{where}: {problem}"


def _check_refusal(body: Any, where: str) -> None:
    _check_error_body(body, where)
    problem = fields_problem(body)
    assert body["code"] == "validation_failed" and problem is None, f"{where}: {problem or body}"


def _check_output(contract: Contract, data: Any) -> None:
    problem = output_problem(contract.validator, data)
    assert problem is None, problem


def _check_pinned(contract: Contract) -> None:
    assert contract.stale is None, contract.stale


def test_rest_conformance(conformance_operation: str, conformance_target: Target,
                          conformance_prepare: Prepare, pytestconfig: pytest.Config) -> None:
    contract = _contracts(Path(str(pytestconfig.rootpath)))[conformance_operation]
    op, target = contract.operation, conformance_target
    _check_pinned(contract)
    rest, variant = op.rest or {}, op.rest_variant
    assert variant is not None
    url = target.base_url.rstrip("/") + rest["path"]
    schema = variant.input_schema

    with httpx.Client(headers={**target.headers, "Content-Type": "application/json"}, timeout=30) as http:

        def post(body: Any) -> httpx.Response:
            note(_reproduce(target, rest["method"], url, body))
            response = http.request(rest["method"], url, **request_input(rest["method"], body))
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
                _check_output(contract, response.json())
            else:
                _check_error_body(response.json(), f"{response.status_code} to a valid input")

        @_settings(pytestconfig)
        @given(payload=inputs(schema))
        def invalid_inputs(payload: Any) -> None:
            payload = conformance_prepare(op.name, payload)
            for bad in mutations(copy.deepcopy(payload), schema):
                if not contract.validator.input_errors(as_carried(rest["method"], bad, schema), variant.name):
                    continue  # the "mutation" is still valid for this schema
                response = post(bad)
                assert response.status_code == 400, f"{response.status_code} to an invalid input: {response.text}"
                _check_refusal(response.json(), "400")

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


def _error_text(result: Any) -> Any:
    return json.loads(result.content[0].text) if result.content else None


def test_mcp_conformance(conformance_operation: str, conformance_target: Target,
                         conformance_prepare: Prepare, pytestconfig: pytest.Config) -> None:
    from anyio.from_thread import start_blocking_portal

    from evidencekit.testing.mcp_client import call_tool_unchecked, http_session

    contract = _contracts(Path(str(pytestconfig.rootpath)))[conformance_operation]
    op, target = contract.operation, conformance_target
    mcp, variant = op.mcp or {}, op.mcp_variant
    assert variant is not None
    _check_pinned(contract)
    if target.mcp_path is None:
        pytest.skip("the target serves no MCP (Target.mcp_path is None)")
    url = target.base_url.rstrip("/") + target.mcp_path
    tool = mcp["tool_name"]
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
            http_session(url, target.headers)) as session:
        listed = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
                  for t in portal.call(session.list_tools).tools}
        assert tool in listed, f"tools/list lacks {tool} (listed: {sorted(listed)})"
        assert listed[tool]["inputSchema"] == variant.input_schema, f"{tool}: inputSchema differs from the contract"
        assert listed[tool].get("annotations", {}) == mcp.get("annotations", {}), f"{tool}: annotations differ"
        if "outputSchema" in listed[tool]:
            assert listed[tool]["outputSchema"] == variant.output_schema, f"{tool}: outputSchema differs"

        def call(arguments: Any) -> Any:
            note("reproduce: " + jsonrpc_call(tool, arguments))
            return portal.call(call_tool_unchecked, session, tool, arguments)

        succeeded: list[Any] = []

        @_settings(pytestconfig)
        @given(arguments=inputs(variant.input_schema))
        def valid_arguments(arguments: Any) -> None:
            result = call(conformance_prepare(op.name, arguments))
            if result.is_error:
                _check_error_body(_error_text(result), "isError result")
            else:
                succeeded.append(arguments)
                _check_output(contract, result.structured_content)

        @_settings(pytestconfig)
        @given(arguments=inputs(variant.input_schema))
        def invalid_arguments(arguments: Any) -> None:
            arguments = conformance_prepare(op.name, arguments)
            for bad in mutations(copy.deepcopy(arguments), variant.input_schema):
                if not isinstance(bad, dict) or not contract.validator.input_errors(bad, variant.name):
                    continue
                result = call(bad)
                assert result.is_error, f"an invalid call was answered: {result.structured_content}"
                _check_refusal(_error_text(result), "isError result")

        valid_arguments()
        _require_success(op.name, succeeded, pytestconfig)
        invalid_arguments()
