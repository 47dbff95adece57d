"""The contract runtime: what generated code and a project's handlers import of it (docs/toolkit.md,
"Public API").

    OperationSpec, Requirement, VariantSchemas   what the generated `operations` module knows of
                                                 each operation (hash, paths, variants, models, auth)
    FieldError                                   a field that does not match its contract (a
                                                 BadRequest's `fields`)

Every module beneath this package (loading and hashing a contracts folder, validation, wire
parsing) is private: its names may change in any release. The operation folders beside them are
the research-evidence service's own published contracts (data).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidencekit._exports import lazy_exports

__all__ = ["FieldError", "OperationSpec", "Requirement", "VariantSchemas"]

if TYPE_CHECKING:
    from evidencekit.contracts._spec import OperationSpec, Requirement, VariantSchemas
    from evidencekit.contracts._validation import FieldError
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        **dict.fromkeys(["OperationSpec", "Requirement", "VariantSchemas"], "_spec"),
        "FieldError": "_validation",
    })
