"""What the runner asks of a target, whichever its surface (rest.py, mcp.py)."""

from __future__ import annotations

from typing import Any, Protocol

from evidencekit.contracts._loader import Variant
from evidencekit.testing._contracts import Contract
from evidencekit.testing._gate.checks import Answer
from evidencekit.testing._gate.results import OperationReport


class Unreachable(Exception):
    """The target could not be reached, or would not start a session: one line says why."""


class Target(Protocol):
    surface: str  # "rest", "mcp-http", "mcp-stdio"
    shown: str  # where it is: a URL, or the command
    rest: bool

    def open(self, contracts: list[Contract]) -> tuple[bool, str]:
        """Connect (Unreachable when it cannot); whether the target speaks the toolkit's
        protocol, and why."""
        ...

    def variant(self, contract: Contract) -> tuple[Variant | None, str]:
        """The variant this surface publishes for the operation, or None and why it is not served."""
        ...

    def describe(self, contract: Contract, report: OperationReport) -> bool:
        """Check what the target says of the operation before any call (MCP: tools/list); whether
        it may be called."""
        ...

    def call(self, contract: Contract, payload: Any) -> Answer: ...

    def reproduction(self, contract: Contract, payload: Any) -> str: ...

    def close(self) -> None: ...


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or `exc` itself."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]
