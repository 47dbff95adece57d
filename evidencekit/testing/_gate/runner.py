"""A gate run on one target: every chosen operation with valid inputs, then with invalid ones,
each answer judged (checks.py), hypothesis driven outside pytest.

Every call that fails checks raises one exception group holding one exception type per failed
check: hypothesis tells failures apart by their exception types, so each distinct set of failed
checks is shrunk on its own (`report_multiple_bugs`), and each check is reported once per
operation with the smallest input that shows it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis.errors import Flaky, Unsatisfiable

from evidencekit.contracts._loader import Variant
from evidencekit.testing._answers import as_carried, shown
from evidencekit.testing._contracts import Contract
from evidencekit.testing._gate.checks import Answer, Verdict, applied, judge
from evidencekit.testing._gate.coverage import refused_as_invalid, run_coverage, unasserted_format
from evidencekit.testing._gate.inputs import Pin, Prepare, invalid_inputs, valid_inputs
from evidencekit.testing._gate.results import CHECKS, Finding, OperationReport, SurfaceReport
from evidencekit.testing._gate.targets import Target

Progress = Callable[[str, str, str, int], None]  # surface, operation, phase, calls so far

NO_SUCCESS = ("no valid input got a success answer, so no answer was checked against the output "
              "schemas: give a credential that may call it (--header), or ids the target holds "
              "(--set NAME=VALUE)")


@dataclass(frozen=True)
class Options:
    max_examples: int
    seed: int
    pins: Sequence[Pin] = ()
    read_only: bool = False
    strict: bool = False
    require_success: bool = False
    operations: Sequence[str] = ()  # empty: every operation
    progress: Progress = field(default=lambda surface, operation, phase, calls: None)
    prepare: Prepare | None = None  # adapts every generated valid input (after the pins)
    no_success: str = NO_SUCCESS  # what to do when no valid input succeeded, in the front end's terms


class CheckFailed(Exception):
    check: ClassVar[str] = ""

    def __init__(self, message: str, payload: Any, reproduction: str) -> None:
        super().__init__(f"{self.check}: {message}")
        self.message, self.payload, self.reproduction = message, payload, reproduction


@cache
def _failure(check: str) -> type[CheckFailed]:
    """One exception type per check: what hypothesis tells failures apart by."""
    return type(f"Failed_{check}", (CheckFailed,), {"check": check})


def chosen(target: Target, contracts: dict[str, Contract],
           options: Options) -> list[tuple[Contract, Variant | None, str]]:
    """The operations chosen (sorted by name), each with the variant the target's surface
    publishes, or None and why it is not called."""
    found = []
    for name in sorted(contracts):
        if options.operations and name not in options.operations:
            continue
        contract = contracts[name]
        variant, reason = target.variant(contract)
        found.append((contract, variant, reason))
    return found


def run_surface(target: Target, contracts: dict[str, Contract], options: Options) -> SurfaceReport:
    """Connect (targets.Unreachable when it cannot), then check every chosen operation."""
    started = time.monotonic()
    operations = chosen(target, contracts, options)
    try:
        served = [contract for contract, variant, _ in operations if variant]
        # the probe (a GET) goes to a read-only operation first: nothing but those is touched
        protocol, why = target.open(sorted(served, key=lambda contract: not contract.read_only))
        if options.strict and not protocol:
            protocol, why = True, "--strict"
        surface = SurfaceReport(target.surface, target.shown, protocol, why)
        for contract, variant, reason in operations:
            report = OperationReport(target.surface, contract.operation.name)
            surface.operations.append(report)
            begun = time.monotonic()
            if variant is None:
                report.skipped = reason
            elif target.describe(contract, report):
                if options.read_only and not contract.read_only:
                    report.skipped = ("not called: --read-only calls only operations whose manifest "
                                      "annotates readOnlyHint: true")
                else:
                    _operation(target, contract, variant, protocol, options, report)
            report.seconds = time.monotonic() - begun
    finally:
        target.close()
    surface.seconds = time.monotonic() - started
    return surface


INVALID_ALL = ("every valid input was refused as invalid ({said}), so no answer was checked against the "
               "output schemas: the server validates against something else than the published input schema")


def _operation(target: Target, contract: Contract, variant: Variant, protocol: bool,
               options: Options, report: OperationReport) -> None:
    if options.require_success:
        report.ran("success_seen")  # a check of every run, failed or not (a JUnit case either way)
    report.ran(*applied(rest=target.rest, valid=True, protocol=protocol))
    report.ran(*applied(rest=target.rest, valid=False, protocol=protocol))

    def send(payload: Any, *, valid: bool, because: str = "") -> tuple[Answer, Verdict] | None:
        return _send(target, contract, variant, payload, valid, protocol, options, report, "coverage", because)

    gone, known = run_coverage(target, contract, variant, options.pins, options.prepare, report, send)
    if gone:
        return
    gone = _phase(target, contract, variant, True, protocol, options, report)
    if not gone and not report.errors and report.successes == 0:
        message = options.no_success
        if report.valid_calls and report.invalid_refusals == report.valid_calls:
            message = INVALID_ALL.format(said=report.refused_as or "refused")
        if options.require_success:
            report.found(Finding("success_seen", message, shrunk=False))
        else:
            report.note(message)
    if not gone:
        _phase(target, contract, variant, False, protocol, options, report, known)


def _send(target: Target, contract: Contract, variant: Variant, payload: Any, valid: bool, protocol: bool,
          options: Options, report: OperationReport, phase: str, because: str = "") -> tuple[Answer, Verdict] | None:
    """One call, counted and judged (`because`: what the contract refuses in an invalid input, by
    default its validator's errors); None when it is not sent. A call that got no answer is
    reported as such, with an empty verdict."""
    method = (contract.operation.rest or {}).get("method", "POST") if target.rest else "POST"
    carried = as_carried(method, payload, variant.input_schema)
    if not valid and not contract.validator.input_errors(carried, variant.name):
        return None  # invalid as generated, valid as a GET's query carries it: no refusal to expect
    if not valid and not target.rest and not isinstance(payload, dict):
        return None  # MCP arguments are an object by the protocol: not a contract's refusal to check
    answer = target.call(contract, payload)
    report.calls += 1
    options.progress(target.surface, contract.operation.name, phase, report.calls)
    if answer.outcome == "no_answer":
        report.found(Finding("answered", answer.said, payload,
                             target.reproduction(contract, payload), shrunk=False))
        report.note(f"calls stopped after {answer.said}")
        return answer, Verdict()
    because = because or ("" if valid else "; ".join(
        f"{error.path} {error.message}" for error in contract.validator.input_errors(payload, variant.name)))
    verdict = judge(contract, answer, valid=valid, protocol=protocol, invalid_because=shown(because, 160))
    if not valid and not protocol and "invalid_refused" in verdict.failures:
        malformed = unasserted_format(variant.input_schema, carried)
        if malformed is not None:  # format an annotation: only the toolkit's protocol asserts it
            del verdict.failures["invalid_refused"]
            verdict.notes.append(f"format not asserted: {malformed} was accepted ({answer.said}); format "
                                 "is an annotation unless the contract asserts it, as a toolkit server does")
    for note in verdict.notes:
        report.note(note)
    report.valid_calls += valid
    if valid and answer.outcome == "success":
        report.successes += 1
    if valid and refused_as_invalid(answer):
        report.invalid_refusals += 1
        report.refused_as = report.refused_as or answer.said
    return answer, verdict


def _phase(target: Target, contract: Contract, variant: Variant, valid: bool, protocol: bool,
           options: Options, report: OperationReport, known: set[str] | None = None) -> bool:
    """One kind of input; whether the target stopped answering (then nothing more is sent).

    Hypothesis stops generating soon after a first failure, to shrink it. So a run that found
    failures is followed by another in which the checks already found no longer fail the call,
    until one generates its whole budget finding nothing new: a failure of one check cannot hide
    a failure of another, met on other inputs."""
    make = valid_inputs if valid else invalid_inputs
    strategy = make(contract, variant, options.pins, options.prepare)
    report.ran(*applied(rest=target.rest, valid=valid, protocol=protocol))
    phase = "valid" if valid else "invalid"
    gone = False
    found: set[str] = set(known or ())  # the checks whose failures are reported already

    def attempt(payload: Any) -> None:
        nonlocal gone
        if gone:
            return
        sent = _send(target, contract, variant, payload, valid, protocol, options, report, phase)
        if sent is None:
            return
        answer, verdict = sent
        if answer.outcome == "no_answer":
            gone = True  # shrinking against a target that does not answer would take for ever
            return
        new = sorted((check, message) for check, message in verdict.failures.items()
                     if check not in found)
        if new:
            reproduction = target.reproduction(contract, payload)
            raise ExceptionGroup(f"{len(new)} checks failed", [
                _failure(check)(message, payload, reproduction) for check, message in new])

    test = settings(max_examples=options.max_examples, deadline=None, database=None,
                    phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=True,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    print_blob=False)(given(strategy)(attempt))
    for run in range(len(CHECKS)):
        before = set(report.findings)
        try:
            seed(options.seed + run)(test)()
        except Unsatisfiable:
            if valid:
                report.errors.append("no valid input could be generated from the contract's "
                                     "input schema")
            else:
                report.note("no invalid input: every mutation of a valid input is still valid")
        except Exception as exc:
            for leaf, flaky in _failures(exc):
                if isinstance(leaf, CheckFailed):
                    report.found(Finding(leaf.check, leaf.message, leaf.payload, leaf.reproduction,
                                         shrunk=not flaky, flaky=flaky))
                    found.add(leaf.check)
                else:
                    report.errors.append(f"{phase} inputs: {type(leaf).__name__}: {leaf}")
        if gone or report.errors or set(report.findings) == before:
            break
    return gone


def _failures(exc: BaseException, flaky: bool = False) -> list[tuple[BaseException, bool]]:
    """The exceptions inside what hypothesis raised, each with whether it did not repeat on replay."""
    flaky = flaky or isinstance(exc, Flaky)
    if isinstance(exc, BaseExceptionGroup):
        return [found for inner in exc.exceptions for found in _failures(inner, flaky)]
    return [(exc, flaky)]
