"""Conformance tests for any project's contracts, as a pytest plugin.

Turn it on in the project's `tests/conftest.py`:

    from evidencekit.testing import Target, serve_app   # not from the plugin module: see _target.py

    pytest_plugins = ["evidencekit.testing.conformance"]

    @pytest.fixture(scope="session")
    def conformance_target():
        with serve_app(create_app(MyHandlers())) as base_url:
            yield Target(base_url, headers={"Authorization": "Bearer ..."})

and collect the tests in one module: `from evidencekit.testing.conformance import
test_mcp_conformance, test_rest_conformance  # noqa: F401`.

For every operation of the contracts folder that `[tool.evidencekit.codegen]` names (found from
the pytest root), one test per surface runs the conformance gate's checks on it (`evidencekit
conformance`, `evidencekit.testing._gate`: the same targets, inputs, checks and shrinking, with the
toolkit-protocol checks on, as `--strict` sets them): every answer carries the contract hash the
lock pins (read from the lock, never from generated code), a valid input gets an answer that
satisfies every published output variant or an error in the error shape (never a 5xx), a mutated
input is refused (a 400 or an isError result naming its `fields`), MCP `tools/list` describes each
tool as its contract does, and some valid input succeeds. A failure is shrunk by hypothesis and
reported with a command that reproduces it. Optional fixture `conformance_prepare(operation,
payload) -> payload` adapts generated inputs (an id the target knows, say).
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest

from evidencekit.codegen._config import load_config
from evidencekit.testing._contracts import Contract, load_contracts
from evidencekit.testing._gate.inputs import Prepare
from evidencekit.testing._gate.report import finding_lines
from evidencekit.testing._gate.results import CHECKS, OperationReport
from evidencekit.testing._gate.runner import Options, run_surface
from evidencekit.testing._gate.targets import Target as SurfaceTarget
from evidencekit.testing._gate.targets import Unreachable
from evidencekit.testing._target import Target

# The plugin's public names: the two tests a project collects (Target, Prepare and the strategies are
# evidencekit.testing's)
__all__ = ["test_mcp_conformance", "test_rest_conformance"]

NO_SUCCESS = ("no generated valid input got a successful answer, so no answer was checked against the "
              "contract; give the target a credential that may call it, or adapt the inputs with a "
              "`conformance_prepare` fixture (or list the operation in the `conformance_no_success` "
              "ini option)")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("conformance_max_examples", "generated inputs per operation and test", default="25")
    parser.addini("conformance_seed", "the seed the inputs are generated from (the same inputs, and verdict, "
                  "on every run and machine); `random` for new inputs each run", default="0")
    parser.addini("conformance_timeout", "seconds a call may take before it counts as unanswered", default="30")
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


def _ini_number(config: pytest.Config, name: str) -> float:
    value = str(config.getini(name)).strip()
    try:
        number = float(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise pytest.UsageError(f"{name} must be a number above 0, not {value!r}")
    return number


def _check(target: SurfaceTarget, operation: str, prepare: Prepare, config: pytest.Config) -> None:
    """The gate's run of one operation on one surface, as a test: failed with every finding (its
    shrunk input and reproduction), skipped when the surface does not publish the operation."""
    contract = _contracts(Path(str(config.rootpath)))[operation]
    if contract.stale is not None:
        pytest.fail(contract.stale, pytrace=False)
    chosen = conformance_seed(config)
    options = Options(max_examples=int(_ini_number(config, "conformance_max_examples")),
                      seed=chosen if chosen is not None else random.randrange(2**32),
                      strict=True, operations=(operation,), prepare=prepare, no_success=NO_SUCCESS,
                      require_success=operation not in config.getini("conformance_no_success"))
    try:
        surface = run_surface(target, {operation: contract}, options)
    except Unreachable as exc:
        pytest.fail(f"{target.surface}: {exc}", pytrace=False)
    report = surface.operations[0]
    if report.skipped and not report.checks:
        pytest.skip(report.skipped)
    if report.findings or report.errors:
        pytest.fail(_failure(report, options.seed), pytrace=False)


def _failure(report: OperationReport, seed: int) -> str:
    lines = [f"{report.surface} {report.operation}: {len(report.findings)} of {len(report.checks)} "
             f"checks failed ({report.calls} calls, {report.successes} successes, seed {seed})"]
    for check in CHECKS:
        finding = report.findings.get(check)
        if finding is not None:
            lines += ["", f"{check}:", *finding_lines(finding, "  ")]
    lines += [f"gate error: {error}" for error in report.errors]
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def test_rest_conformance(conformance_operation: str, conformance_target: Target,
                          conformance_prepare: Prepare, pytestconfig: pytest.Config) -> None:
    from evidencekit.testing._gate.rest import RestTarget

    target = RestTarget(conformance_target.base_url, conformance_target.headers,
                        _ini_number(pytestconfig, "conformance_timeout"))
    _check(target, conformance_operation, conformance_prepare, pytestconfig)


def test_mcp_conformance(conformance_operation: str, conformance_target: Target,
                         conformance_prepare: Prepare, pytestconfig: pytest.Config) -> None:
    if conformance_target.mcp_path is None:
        pytest.skip("the target serves no MCP (Target.mcp_path is None)")
    from evidencekit.testing._gate.mcp import http_target

    url = conformance_target.base_url.rstrip("/") + conformance_target.mcp_path
    target = http_target(url, conformance_target.headers, _ini_number(pytestconfig, "conformance_timeout"))
    _check(target, conformance_operation, conformance_prepare, pytestconfig)
