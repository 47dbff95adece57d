"""What a gate run found: per surface and operation, each check's outcome, every distinct failure
with its (shrunk) input and reproduction, and the notes that are not failures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONTRACT, PROTOCOL = "contract", "toolkit protocol"

# Every check, in report order: (kind, what must hold). Contract checks derive from what the
# contracts publish and always apply; toolkit-protocol checks apply when the target speaks the
# toolkit's protocol (its answers carry X-Contract-Hash) or with --strict.
CHECKS: dict[str, tuple[str, str]] = {
    "listed": (CONTRACT, "tools/list lists the contract's tool"),
    "input_schema": (CONTRACT, "the listed inputSchema equals the contract's input schema"),
    "annotations": (CONTRACT, "the listed annotations hold every annotation the manifest declares"),
    "output_schema": (CONTRACT, "a listed outputSchema equals the contract's output schema"),
    "valid_answers": (CONTRACT, "a success answer to a valid input satisfies every published "
                                "output variant"),
    "invalid_refused": (CONTRACT, "an invalid input is refused (REST: 4xx; MCP: an isError result "
                                  "or a JSON-RPC error)"),
    "no_server_error": (CONTRACT, "no input gets a 5xx (REST), a JSON-RPC internal error or an "
                                  "isError result saying the server failed (MCP)"),
    "answered": (CONTRACT, "every call is answered within --timeout"),
    "success_seen": (CONTRACT, "some valid input gets a success answer (--require-success)"),
    "boundary_accepted": (CONTRACT, "a valid input with a value exactly on a bound (the coverage phase) "
                                    "is not refused as invalid when the input it was derived from is not"),
    "contract_hash": (PROTOCOL, "X-Contract-Hash equals the hash the lock pins (another hash fails "
                                "in any mode: the server serves another contract version)"),
    "error_body": (PROTOCOL, "an error answer is {error, message, code, request_id}"),
    "validation_fields": (PROTOCOL, "the refusal of an invalid input names its `fields`"),
}
DESCRIPTOR_CHECKS = ("listed", "input_schema", "annotations", "output_schema")
NO_INPUT = object()  # a finding that no single input shows (a tool descriptor)


@dataclass
class Finding:
    """One distinct failure: an operation's check, with the smallest input that shows it."""

    check: str
    message: str
    input: Any = NO_INPUT
    reproduction: str | None = None
    shrunk: bool = True
    flaky: bool = False
    coverage: bool = False  # an input of the coverage phase (derived, not shrunk)
    more: list[Finding] = field(default_factory=list)  # further inputs of the coverage phase that fail it


@dataclass
class OperationReport:
    surface: str
    operation: str
    checks: list[str] = field(default_factory=list)  # the checks that ran, in CHECKS order
    findings: dict[str, Finding] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what the gate itself could not run
    skipped: str | None = None  # why the operation was not called at all
    calls: int = 0
    successes: int = 0
    invalid_refusals: int = 0  # valid inputs refused as not matching the input schema
    refused_as: str = ""  # how the first of them was refused ("HTTP 400")
    valid_calls: int = 0  # calls with a valid input
    coverage: int = 0  # inputs the coverage phase sent
    coverage_derived: int = 0  # inputs it derived (more than it sent when the cap cut them)
    seconds: float = 0.0

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def ran(self, *checks: str) -> None:
        self.checks = [name for name in CHECKS if name in (*self.checks, *checks)]

    def found(self, finding: Finding) -> None:
        """Keep the smaller input of two failures of one check (a shrunk one before any other)."""
        self.ran(finding.check)
        known = self.findings.get(finding.check)
        if known is None or _rank(finding) < _rank(known):
            self.findings[finding.check] = finding


def _rank(finding: Finding) -> tuple[int, int]:
    return (0 if finding.shrunk else 1, len(repr(finding.input)))


@dataclass
class SurfaceReport:
    surface: str  # "rest", "mcp-http", "mcp-stdio"
    target: str  # the URL or the command, as shown
    protocol: bool = False  # the toolkit-protocol checks applied
    protocol_reason: str = ""
    operations: list[OperationReport] = field(default_factory=list)
    unreachable: str | None = None  # why nothing was checked
    seconds: float = 0.0


@dataclass
class RunReport:
    contracts: str
    seed: int
    max_examples: int
    surfaces: list[SurfaceReport] = field(default_factory=list)
    seconds: float = 0.0

    def operations(self) -> list[OperationReport]:
        return [op for surface in self.surfaces for op in surface.operations]

    @property
    def violations(self) -> int:
        return sum(len(op.findings) for op in self.operations())

    @property
    def errors(self) -> int:
        return sum(len(op.errors) for op in self.operations())

    @property
    def unreachable(self) -> list[SurfaceReport]:
        return [surface for surface in self.surfaces if surface.unreachable]

    @property
    def exit_code(self) -> int:
        """0 conforms, 1 violations (or the gate could not run a check), 3 a target was unreachable
        and nothing was found wrong elsewhere."""
        if self.violations or self.errors:
            return 1
        return 3 if self.unreachable else 0
