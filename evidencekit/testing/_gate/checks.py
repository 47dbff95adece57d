"""What an answer must be. Each target turns what it got into an `Answer`; `judge` says which
checks it fails (results.CHECKS) and what is worth a note.

Contract checks apply to any server: they derive from what the contracts publish. The toolkit's
protocol (the contract hash in a header, the error body, `fields` on a validation failure) is
checked only when the target speaks it (`protocol`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from evidencekit.testing._answers import error_body_problem, fields_problem, output_problem, shown
from evidencekit.testing._contracts import Contract

Outcome = Literal["success", "refused", "server_error", "no_answer", "other"]


@dataclass(frozen=True)
class Answer:
    """One call's answer, as the checks see it whatever the surface."""

    outcome: Outcome
    said: str  # how it answered: "HTTP 400", "an isError result", "JSON-RPC error -32602"
    data: Any = None  # success: what the output variants check; refused: the error body (or text)
    problem: str | None = None  # success: why its data cannot be checked (not JSON, say)
    unchecked: str | None = None  # success: why its data is not checked (a note, not a failure)
    status: int | None = None  # REST: the HTTP status
    contract_hash: str | None = None  # REST: the X-Contract-Hash header, when sent
    contract_newer: str | None = None  # REST: the X-Contract-Newer header, when sent
    validation_refusal: bool = False  # a refusal that must name the fields of an invalid input
    rpc_error: bool = False  # MCP: a JSON-RPC error, not a result
    rest: bool = False


@dataclass
class Verdict:
    failures: dict[str, str] = field(default_factory=dict)  # check -> what is wrong
    notes: list[str] = field(default_factory=list)


def judge(contract: Contract, answer: Answer, *, valid: bool, protocol: bool,
          invalid_because: str = "") -> Verdict:
    """`invalid_because`: for an invalid input, what the contract refuses in it."""
    verdict = Verdict()
    failures = verdict.failures
    because = invalid_because or "the contract refuses it"
    kind = "a valid input" if valid else f"an invalid input ({because})"
    if answer.outcome == "no_answer":
        failures["answered"] = f"no answer to {kind}: {answer.said}"
        return verdict
    if answer.rest:
        _check_hash(contract, answer, protocol, verdict)
    if answer.outcome == "server_error":
        failures["no_server_error"] = f"{answer.said} to {kind}: {shown(answer.data)}"
    elif answer.outcome == "success" and not valid:
        failures["invalid_refused"] = f"{kind} was answered with {answer.said}: " + shown(answer.data)
    elif answer.outcome == "success":
        problem = answer.problem
        if problem is None and answer.unchecked is not None:
            if protocol:  # the toolkit's results always carry their data
                problem = answer.unchecked
            else:
                verdict.notes.append(answer.unchecked)
        elif problem is None:
            problem = output_problem(contract.validator, answer.data)
        if problem is not None:
            failures["valid_answers"] = f"{answer.said}: {problem}"
    elif answer.outcome == "other":  # a redirect: neither an answer nor a refusal
        verdict.notes.append(f"{answer.said} to {kind}: redirects are not followed "
                             "(is the URL the API's?)")
    elif answer.outcome == "refused" and protocol:
        _check_refusal(answer, valid, failures)
    return verdict


def _check_hash(contract: Contract, answer: Answer, protocol: bool, verdict: Verdict) -> None:
    locked, header = contract.locked_hash, answer.contract_hash
    if header is not None and header != locked:
        refused = " and refused the call" if answer.status == 412 else ""
        verdict.failures["contract_hash"] = (
            f"X-Contract-Hash {header}, the lock pins {locked}: the server serves another version "
            f"of the contract{refused}")
    elif header is None and protocol:
        verdict.failures["contract_hash"] = (f"{answer.said} without X-Contract-Hash "
                                             f"(the lock pins {locked})")
    if answer.contract_newer:
        verdict.notes.append("the server serves a newer compatible contract "
                             f"({answer.contract_newer})")


def _check_refusal(answer: Answer, valid: bool, failures: dict[str, str]) -> None:
    if answer.rpc_error:
        if not valid:
            failures["validation_fields"] = (f"refused with {answer.said}, not an isError "
                                             "result naming the fields")
        return
    problem = error_body_problem(answer.data)
    if problem is not None:
        failures["error_body"] = f"{answer.said}: {problem}"
    elif not valid and answer.validation_refusal:
        problem = fields_problem(answer.data)
        if problem is not None:
            failures["validation_fields"] = f"{answer.said}: {problem}"


def applied(*, rest: bool, valid: bool, protocol: bool) -> list[str]:
    """The checks every call of one kind is held to."""
    checks = ["valid_answers" if valid else "invalid_refused", "no_server_error", "answered"]
    if rest:
        checks.append("contract_hash")  # another hash fails in any mode; a missing one in protocol mode
    if protocol:
        checks += ["error_body"] if valid else ["error_body", "validation_fields"]
    return checks


_ABSENT = object()


def first_difference(listed: Any, contract: Any, path: str = "$") -> str | None:
    """Where two JSON values first differ ("$.properties.url.maxLength: listed 100, the contract
    2048"), or None when they are equal."""
    if isinstance(listed, dict) and isinstance(contract, dict):
        for key in [*contract, *(key for key in listed if key not in contract)]:
            found = first_difference(listed.get(key, _ABSENT), contract.get(key, _ABSENT),
                                     f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(listed, list) and isinstance(contract, list) and len(listed) == len(contract):
        for index, (mine, theirs) in enumerate(zip(listed, contract, strict=True)):
            found = first_difference(mine, theirs, f"{path}[{index}]")
            if found:
                return found
        return None
    # 1 is not true
    if listed == contract and isinstance(listed, bool) == isinstance(contract, bool):
        return None

    def show(value: Any) -> str:
        return "nothing" if value is _ABSENT else shown(value, 120)

    return f"{path}: listed {show(listed)}, the contract {show(contract)}"
