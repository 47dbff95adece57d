"""pydantic v2 models from the contracts, through datamodel-code-generator (pinned; every option spelled out).

The models are typed conveniences for handlers and clients; they are not the contract
(datamodel-code-generator drops `pattern` on date-time fields). Requests and responses are
validated against the raw published schemas with jsonschema first. The generator reads the
contract as codegen._model_schema loosens it: a model accepts at least what the contract accepts
and keeps unknown properties of open objects.

Each output also gets a TypedDict (`<Prefix>OutputData`): the answer as the JSON data it is sent
as. A handler may return it instead of the model: it is checked against the contract all the same,
and a handler on a hot path skips building a model only to dump it again.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from evidencekit.codegen._headers import python_header
from evidencekit.codegen._model_schema import model_schema
from evidencekit.contracts._ecma_regex import with_python_patterns
from evidencekit.contracts._loader import ContractError, Operation


@dataclass(frozen=True)
class ModelNote:
    """Something the model leaves to the contract check: a construct loosened (codegen._model_schema)
    or a warning of the model generator."""

    module: str
    message: str


def _datamodel_options(class_name: str, header: str) -> dict[str, Any]:
    # Public names of the pinned generator; it re-exports them without __all__, hence the ignore.
    from datamodel_code_generator import (  # type: ignore[attr-defined]
        DataModelType,
        InputFileType,
        PythonVersion,
    )

    return {
        "input_file_type": InputFileType.JsonSchema,
        "output_model_type": DataModelType.PydanticV2BaseModel,
        "target_python_version": PythonVersion.PY_311,
        "class_name": class_name,
        "custom_file_header": header,
        "disable_timestamp": True,
        "use_annotated": True,
        "field_constraints": True,
        "use_standard_collections": True,
        "use_union_operator": True,
        "collapse_root_models": True,
        "enum_field_as_literal": "all",
        "use_double_quotes": True,
        "use_schema_description": True,
        "use_field_description": True,
        # An optional property that is not nullable must reject an explicit null, as the schema does.
        "use_missing_sentinel": True,
        # A property with a default takes no null unless its schema does (else `int | None = 10`).
        "strict_nullable": True,
        "import_overrides": {"MISSING": "pydantic"},
        # A URI stays the string the client sent: pydantic's AnyUrl would normalize it.
        "type_mappings": ["string+uri=string"],
        # One formatter pass over every generated file happens later (codegen._formatting).
        "formatters": [],
    }


def _typed_dict_options(class_name: str, header: str) -> dict[str, Any]:
    from datamodel_code_generator import DataModelType  # type: ignore[attr-defined]

    options = _datamodel_options(class_name, header)
    # Constraints and the MISSING sentinel are pydantic's; a TypedDict states keys and types only.
    for pydantic_only in ("use_annotated", "field_constraints", "use_missing_sentinel", "import_overrides"):
        del options[pydantic_only]
    return {**options, "output_model_type": DataModelType.TypingTypedDict}


def render_model(operation: Operation, direction: str, module: str) -> tuple[str, list[ModelNote]]:
    """Source of the module holding `<Prefix>Input`, `<Prefix>Output` (direction "output") or
    `<Prefix>OutputData` (direction "output_data"), and what it leaves out."""
    import datamodel_code_generator

    variant = operation.model_variant
    # Loosened where a model cannot state the contract exactly (codegen._model_schema); patterns are
    # ECMA-262, and pydantic's regex engine reads \s and \S otherwise (U+0085, U+FEFF).
    loosened, loosenings = model_schema(variant.input_schema if direction == "input" else variant.output_schema)
    schema = with_python_patterns(loosened)
    class_name = operation.class_prefix + "".join(word.capitalize() for word in direction.split("_"))
    header = python_header([operation]).rstrip("\n")
    options = (_typed_dict_options if direction == "output_data" else _datamodel_options)(class_name, header)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            source = datamodel_code_generator.generate(schema, **options)
        except Exception as exc:  # the pinned generator's own errors: refuse, naming the schema and why
            where = operation.folder / (variant.input_file if direction == "input" else variant.output_file)
            reason = " ".join(str(exc).split())[:300]
            raise ContractError(where, f"the model generator cannot read this schema: {reason}") from None
    notes = [ModelNote(module, str(item)) for item in loosenings]
    notes += [ModelNote(module, str(w.message)) for w in caught if issubclass(w.category, UserWarning)]
    assert isinstance(source, str)
    return source, notes
