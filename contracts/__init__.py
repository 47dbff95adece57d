"""The published contracts (data) and the small runtime that reads and enforces them."""

from .loader import (
    CONTRACTS_DIR,
    ContractError,
    Operation,
    Variant,
    load_operation,
    load_operations,
)
from .spec import OperationSpec
from .validation import FieldError, OperationValidator, StaleContractError, validator_for

__all__ = [
    "CONTRACTS_DIR",
    "ContractError",
    "FieldError",
    "Operation",
    "OperationSpec",
    "OperationValidator",
    "StaleContractError",
    "Variant",
    "load_operation",
    "load_operations",
    "validator_for",
]
