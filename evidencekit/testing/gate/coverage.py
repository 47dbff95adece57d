"""The coverage phase of an operation, before its random inputs: one valid input (the contract's
example when its schema accepts it, else one built from the schema; pinned and prepared as every
valid input is), then each of its coverage cases (evidencekit.testing.coverage): every keyword of
the input schema broken once, at every depth, and every bound met exactly. So each constraint is
tried in every run, whatever `--max-examples` says; the same cases in the same order each time.

A violation must be refused as any invalid input is (`invalid_refused`). A value on a bound is a
valid input, judged as one, and must not be refused as invalid (`boundary_accepted`) unless the
valid input it was derived from was refused so too: a server that refuses every input (the
credential, another schema) raises no false alarm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from evidencekit.contracts.examples import example_payloads
from evidencekit.contracts.loader import Variant
from evidencekit.testing.answers import shown
from evidencekit.testing.contracts import Contract
from evidencekit.testing.coverage import Case, base_instance, derive
from evidencekit.testing.gate.checks import Answer, Verdict
from evidencekit.testing.gate.inputs import Pin, Prepare, aimed
from evidencekit.testing.gate.results import Finding, OperationReport
from evidencekit.testing.gate.targets import Target

MAX_CASES = 150  # per operation and surface; the shallowest places come first
# The checks a case fails because of its keyword: every case failing one is listed; of any other
# check the first is enough (every refusal without `fields` is the same bug)
PER_CASE = ("invalid_refused", "boundary_accepted")


class Send(Protocol):
    def __call__(self, payload: Any, *, valid: bool, because: str = "") -> tuple[Answer, Verdict] | None: ...


def refused_as_invalid(answer: Answer) -> bool:
    """A refusal that says the input does not match (REST 400/422, MCP validation_failed or -32602)."""
    if answer.outcome != "refused":
        return False
    if answer.rest:
        return answer.status in (400, 422)
    if answer.rpc_error:
        return "-32602" in answer.said
    return isinstance(answer.data, dict) and answer.data.get("code") == "validation_failed"


def coverage_cases(contract: Contract, variant: Variant, pins: Sequence[Pin],
                   prepare: Prepare | None) -> tuple[Any, list[Case]] | None:
    """The valid input to derive from and every case of it (pinned properties left as pinned), or
    None when no valid input can be had."""
    schema = variant.input_schema
    example = example_payloads(contract.operation, variant.name).get("input")
    built = base_instance(schema, example)
    if built is None:
        return None
    base = aimed(contract, variant, pins, prepare)(built)
    if contract.validator.input_errors(base, variant.name):
        return None
    pinned = {pin.name for pin in pins if pin.applies(contract.operation.name, schema)}
    return base, derive(schema, base, keep=lambda path: not (path and path[0] in pinned))


def run_coverage(target: Target, contract: Contract, variant: Variant, pins: Sequence[Pin],
                 prepare: Prepare | None, report: OperationReport, send: Send) -> tuple[bool, set[str]]:
    """Send the base input and its cases, and report each check failed (once, with every case that
    fails it). Returns whether the target stopped answering, and the checks invalid cases failed:
    the random invalid inputs need not look for those again (other checks they still do, and a
    shrunk input of theirs replaces the one found here)."""
    derived = coverage_cases(contract, variant, pins, prepare)
    if derived is None:
        report.note("coverage phase skipped: no valid input could be built from the input schema")
        return False, set()
    base, cases = derived
    report.coverage_derived = len(cases)
    cases = cases[:MAX_CASES]
    if report.coverage_derived > MAX_CASES:
        report.note(f"coverage phase: the first {MAX_CASES} of {report.coverage_derived} derived inputs sent")
    failed: dict[str, list[Finding]] = {}
    by_invalid: set[str] = set()

    def fail(check: str, message: str, payload: Any) -> None:
        failed.setdefault(check, []).append(Finding(check, message, payload, target.reproduction(contract, payload),
                                                    shrunk=False, coverage=True))

    sent = send(base, valid=True)
    if sent is None or sent[0].outcome == "no_answer":
        return sent is not None, set()
    report.coverage += 1
    for check, message in sent[1].failures.items():
        fail(check, message, base)
    base_refused = refused_as_invalid(sent[0])
    if any(case.valid for case in cases):
        report.ran("boundary_accepted")
    gone = False
    for case in cases:
        sent = send(case.payload, valid=case.valid, because=_because(contract, variant, case))
        if sent is None:
            continue
        answer, verdict = sent
        if answer.outcome == "no_answer":
            gone = True
            break
        report.coverage += 1
        for check, message in verdict.failures.items():
            fail(check, message if not case.valid else f"{case.label}: {message}", case.payload)
            by_invalid |= set() if case.valid or check not in PER_CASE else {check}
        if case.valid and refused_as_invalid(answer) and not base_refused:
            fail("boundary_accepted", f"{case.label}, a valid input, was refused as invalid with {answer.said}: "
                                      f"{shown(answer.data, 160)}", case.payload)
    for check, findings in failed.items():
        if findings:
            first, *more = findings if check in PER_CASE else findings[:1]
            report.found(Finding(check, first.message, first.input, first.reproduction, shrunk=False,
                                 coverage=True, more=more))
    return gone, by_invalid


def _because(contract: Contract, variant: Variant, case: Case) -> str:
    if case.valid:
        return ""
    errors = contract.validator.input_errors(case.payload, variant.name)
    return f"{case.label}: " + "; ".join(f"{error.path} {error.message}" for error in errors[:2])

