"""The contracts a conformance run checks answers against: every operation of a contracts folder,
the hash its lock pins (read from the lock, never from generated code) and its compiled validators."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evidencekit.contracts._loader import (
    LOCK_NAME,
    ContractError,
    Operation,
    load_operations,
    read_json,
)
from evidencekit.contracts._validation import OperationValidator


@dataclass(frozen=True)
class Contract:
    operation: Operation
    locked_hash: str  # "" when the lock does not name the operation
    validator: OperationValidator

    @property
    def stale(self) -> str | None:
        """Why the lock does not pin this contract (None when it does)."""
        op = self.operation
        if op.contract_hash == self.locked_hash:
            return None
        return (f"{op.name}: the contract is {op.contract_hash}, the lock pins "
                f"{self.locked_hash or 'nothing'}: run `evidencekit codegen lock` after review")

    @property
    def read_only(self) -> bool:
        """Whether the manifest's MCP annotations say the operation changes nothing."""
        return (self.operation.mcp or {}).get("annotations", {}).get("readOnlyHint") is True


def load_contracts(folder: Path) -> dict[str, Contract]:
    """Every operation under `folder` with the hash its lock pins; ContractError when the folder or
    its lock cannot be read."""
    operations = load_operations(folder)
    lock = read_json(folder / LOCK_NAME)
    entries = lock.get("operations") if isinstance(lock, dict) else None
    if not isinstance(entries, dict):
        raise ContractError(folder / LOCK_NAME,
                            "no `operations` table: run `evidencekit codegen lock`")
    pinned = {name: str(entry.get("contract_hash", "")) for name, entry in entries.items()
              if isinstance(entry, dict)}
    return {op.name: Contract(op, pinned.get(op.name, ""), OperationValidator.of(op))
            for op in operations}
