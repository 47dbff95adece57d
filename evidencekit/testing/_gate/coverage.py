"""The coverage phase of an operation, before its random inputs: one valid input (the contract's
example when its schema accepts it, else one built from the schema; pinned and prepared as every
valid input is), then each of its coverage cases (evidencekit.testing._coverage): every keyword of
the input schema broken once, at every depth, and every bound met exactly. So each constraint is
tried in every run, whatever `--max-examples` says; the same cases in the same order each time.

A violation must be refused as any invalid input is (`invalid_refused`; one that only a `format`
refuses only where the toolkit's protocol asserts formats, runner._send). A value on a bound is a
valid input, judged as one, and must not be refused as invalid (`boundary_accepted`) by a refusal
that names its place, unless the valid input it was derived from was refused so too: a server that
refuses every input (the credential, another schema), or refuses for reasons of its own (out of
stock: a note), raises no false alarm."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from evidencekit.contracts._examples import example_payloads
from evidencekit.contracts._loader import Variant
from evidencekit.contracts._validation import compile_schema
from evidencekit.testing._answers import shown
from evidencekit.testing._contracts import Contract
from evidencekit.testing._coverage import Case, base_instance, derive
from evidencekit.testing._gate.checks import Answer, Verdict
from evidencekit.testing._gate.inputs import Pin, Prepare, aimed
from evidencekit.testing._gate.results import Finding, OperationReport
from evidencekit.testing._gate.targets import Target

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


def unasserted_format(schema: dict[str, Any], payload: Any) -> str | None:
    """What alone makes `payload` invalid when only its formats do ("a malformed uuid at $.ref"),
    or None when the schema refuses it with `format` an annotation too. JSON Schema asserts no
    format by default (2020-12 without the format-assertion vocabulary; draft-07 leaves it to the
    validator): a server from elsewhere may accept such an input and still keep its contract."""
    if not compile_schema(schema, formats=False).is_valid(payload):
        return None
    errors = [error for error in compile_schema(schema).iter_errors(payload) if error.validator == "format"]
    return ", ".join(f"a malformed {error.validator_value} at {error.json_path}" for error in errors) \
        or "a malformed format"


def names_place(body: Any, path: str) -> bool:
    """Whether a refusal names the place `path` ("$.box.size.width"): a `fields` entry of the
    toolkit's error body with that path, else the path in its text (as a JSON path, dotted or a
    JSON pointer) or a location list that ends with its steps (`["body", "box", "size", "width"]`)."""
    steps: list[str | int] = [int(index) if index else name
                              for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path)]
    fields = body.get("fields") if isinstance(body, dict) else None
    if isinstance(fields, list) and fields:
        return any(isinstance(entry, dict) and _same_place(str(entry.get("path", "")), path) for entry in fields)
    dotted = path.removeprefix("$").removeprefix(".")
    pointer = "/" + "/".join(str(step) for step in steps)
    spelled = re.compile(rf"(?<![\w.$/-])(?:{re.escape(path)}|{re.escape(dotted)}|{re.escape(pointer)})(?![\w-])")

    def found(node: Any) -> bool:
        if isinstance(node, str):
            return bool(dotted) and spelled.search(node) is not None
        if isinstance(node, list):
            if steps and len(node) >= len(steps) and node[len(node) - len(steps):] == steps:
                return True
            return any(found(item) for item in node)
        if isinstance(node, dict):
            return any(found(item) for item in node.values())
        return False

    return found(body)


def _same_place(named: str, path: str) -> bool:
    named = re.sub(r"\['([^']*)'\]", r".\1", named)  # the toolkit's $['a-b'] as $.a-b
    return named in (path, path.removeprefix("$").removeprefix("."))


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
            if names_place(answer.data, case.path):
                fail("boundary_accepted", f"{case.label}, a valid input, was refused as invalid with {answer.said}: "
                                          f"{shown(answer.data, 160)}", case.payload)
            else:  # a refusal of the business (out of stock), not of the value's shape
                report.note(f"{case.label}, a valid input, was refused with {answer.said} naming no field of it "
                            f"(not judged as a refusal of its shape): {shown(answer.data, 160)}")
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

