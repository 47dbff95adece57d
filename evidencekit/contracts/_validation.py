"""Validate payloads against the raw published schemas (format checking on).

The pydantic models are conveniences; these validators are the contract. A response must satisfy
every published variant of its operation. Validators are compiled once per operation.

Two engines: jsonschema-rs answers "valid?" (the hot path, ~60x faster here), and the Python
`jsonschema` package, only when that answer is no, says what is wrong, field by field. A
differential test (tests/contracts/test_validator_engines.py) holds them to identical verdicts.

jsonschema-rs checks `uuid` and `date-time` by calling back into Python (the Python engine's
semantics, which its own formats do not share). A status answer carries ten such values, and the
calls were half of its check (~2.5 of 5 us). So each schema is compiled once more with those
formats written as patterns that accept only a part of what the formats accept (canonical uuids;
RFC 3339 with no leap second, no Feb 29, uppercase T and Z): what that quick check passes, the
exact one passes too (tests/contracts/test_quick_formats.py), and what it refuses goes to the exact
check, so every verdict is the one the exact check gives.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Protocol

import jsonschema
import jsonschema_rs
from jsonschema.exceptions import ValidationError, best_match
from jsonschema.protocols import Validator
from rfc3339_validator import validate_rfc3339

from evidencekit.contracts._ecma_regex import check_schema, compile_ecma
from evidencekit.contracts._loader import Operation
from evidencekit.contracts._schema_walk import each_subschema
from evidencekit.contracts._spec import OperationSpec

_FORMAT_CHECKER = jsonschema.FormatChecker()
_MAX_MESSAGE = 200


@dataclass(frozen=True)
class FieldError:
    path: str  # "$.retrieval.result.title"
    message: str
    keyword: str
    variant: str = ""

    def to_json(self) -> dict[str, str]:
        return {"field": self.path, "message": self.message, "keyword": self.keyword}


_CANONICAL_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


_SEEN_UUIDS: set[str] = set()  # canonical uuids already checked: every status answer repeats its ids
_SEEN_LIMIT = 100_000


def is_uuid(value: object) -> bool:
    """The `uuid` format as the Python engine checks it (draft-07 has no uuid format built in).

    The canonical form answers at once; anything else takes the engine's own test, which also
    accepts oddities (a 'urn:' inside, '_' between digits) that a stricter check would refuse.
    """
    if not isinstance(value, str):
        return True
    if value in _SEEN_UUIDS:
        return True
    if _CANONICAL_UUID.fullmatch(value):
        if len(_SEEN_UUIDS) >= _SEEN_LIMIT:
            _SEEN_UUIDS.clear()
        _SEEN_UUIDS.add(value)
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return all(value[position] == "-" for position in (8, 13, 18, 23))


def is_date_time(value: object) -> bool:
    """RFC 3339 as the Python engine checks it (the engines disagree on leap seconds otherwise)."""
    return not isinstance(value, str) or _is_rfc3339(value)


@lru_cache(maxsize=4096)
def _is_rfc3339(value: str) -> bool:
    # Remembered: a polled resource shows the same timestamps on every read, and the check
    # (a regex, then the calendar) costs ~10x a cache hit.
    return bool(validate_rfc3339(value.upper()))


# OpenAPI's integer formats, checked as the ranges they name (neither engine knows them: an answer
# with an id of 2^70 under `format: int64` passed the contract check)
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _in_range(low: int, high: int) -> Any:
    def check(value: object) -> bool:
        return isinstance(value, bool) or not isinstance(value, int | float) or low <= value <= high
    return check


for _name, (_low, _high) in INT_RANGES.items():
    _FORMAT_CHECKER.checks(_name)(_in_range(_low, _high))


def _int_formats_as_ranges(node: Any) -> Any:
    """`format: int32|int64` as the range it names, for jsonschema-rs, whose formats see strings only."""
    if isinstance(node, list):
        return [_int_formats_as_ranges(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = each_subschema(node, _int_formats_as_ranges)
    fmt = out.get("format")
    if isinstance(fmt, str) and fmt in INT_RANGES:
        low, high = INT_RANGES[fmt]
        del out["format"]
        out["allOf"] = [*out.get("allOf", []), {"minimum": low, "maximum": high}]
    return out


def compile_fast(schema: dict[str, Any]) -> Any:
    # A format neither engine knows ("simple-template" in a published CI schema) is an annotation,
    # as the Python engine and the JSON Schema specification treat it
    return jsonschema_rs.validator_for(_int_formats_as_ranges(schema), validate_formats=True,
                                       ignore_unknown_formats=True,
                                       formats={"uuid": is_uuid, "date-time": is_date_time})


# Stricter than the formats they stand for ([0-9], not \d: Rust's \d matches every script's digits)
QUICK_PATTERNS = {
    "uuid": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "date-time": "^(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-"
                 "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
                 "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
                 "T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$",
}


def _formats_as_patterns(node: Any, native: frozenset[str] = frozenset()) -> Any:
    """`node` with the formats of QUICK_PATTERNS as those patterns, but for those in `native`."""
    if isinstance(node, list):
        return [_formats_as_patterns(item, native) for item in node]
    if not isinstance(node, dict):
        return node
    out = each_subschema(node, lambda sub: _formats_as_patterns(sub, native))
    fmt = out.get("format")
    if isinstance(fmt, str) and fmt in QUICK_PATTERNS and fmt not in native:
        del out["format"]
        out["allOf"] = [*out.get("allOf", []), {"pattern": QUICK_PATTERNS[fmt]}]
    return out


# Dialects whose `uuid` format jsonschema-rs checks itself (it ignores it under drafts 4-7, which do
# not define it): canonical forms only, a part of what is_uuid accepts (tests/contracts/
# test_quick_formats.py), and as cheap as no check (the pattern took 3 of the 18 us a 50-book answer's check cost)
_NATIVE_UUID_DIALECTS = frozenset({"https://json-schema.org/draft/2020-12/schema",
                                   "https://json-schema.org/draft/2019-09/schema"})


def _one_dialect(node: Any, root: bool = True) -> bool:
    """Whether no schema inside `node` names a dialect of its own."""
    if isinstance(node, list):
        return all(_one_dialect(item, False) for item in node)
    if not isinstance(node, dict):
        return True
    return (root or "$schema" not in node) and all(_one_dialect(value, False) for value in node.values())


def compile_quick(schema: dict[str, Any]) -> Any:
    """A jsonschema-rs validator whose "valid" implies compile_fast's, with no call into Python
    for `uuid` and `date-time` (their QUICK_PATTERNS instead, or jsonschema-rs's own uuid check
    under the dialects that define it); its "invalid" proves nothing."""
    native = frozenset({"uuid"}) if schema.get("$schema") in _NATIVE_UUID_DIALECTS and _one_dialect(schema) \
        else frozenset()
    return jsonschema_rs.validator_for(_int_formats_as_ranges(_formats_as_patterns(schema, native)),
                                       validate_formats=True, ignore_unknown_formats=True)


def engine_problems(operation: Operation) -> list[str]:
    """Why the serving validator (jsonschema-rs) cannot compile a schema of `operation` (a pattern
    feature it lacks, such as the backreference `\\k<name>`); empty when it compiles them all."""
    problems = []
    for variant in operation.variants.values():
        for name, schema in ((variant.input_file, variant.input_schema), (variant.output_file, variant.output_schema)):
            try:
                compile_fast(schema)
            except ValueError as exc:
                problems.append(f"{operation.name}/{name}: the serving validator cannot compile it: "
                                f"{' '.join(str(exc).split())[:200]}")
    return problems


def _ecma_pattern(validator: Validator, pattern: str, instance: object, schema: dict[str, Any]) -> Iterable[ValidationError]:
    if isinstance(instance, str) and not compile_ecma(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _with_ecma_patterns(cls: type[Validator]) -> type[Validator]:
    return jsonschema.validators.extend(cls, {"pattern": _ecma_pattern})  # type: ignore[no-untyped-call,no-any-return]


def compile_schema(schema: dict[str, Any], *, formats: bool = True) -> Validator:
    """`formats=False`: `format` an annotation, as JSON Schema has it by default."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    check_schema(schema)
    return _with_ecma_patterns(cls)(schema, format_checker=_FORMAT_CHECKER if formats else None)


def _join(base: str, name: str) -> str:
    return f"{base}.{name}" if name.isidentifier() else f"{base}[{name!r}]"


def _leaves(error: ValidationError) -> list[ValidationError]:
    """For anyOf/oneOf failures, every error of the branch that says most about what is wrong."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return [error]
    by_branch: dict[Any, list[ValidationError]] = {}
    for sub in error.context:
        by_branch.setdefault(sub.relative_schema_path[0], []).append(sub)
    # A branch that fails on the instance's own type is the wrong branch, not the reason.
    plausible = {
        branch: subs for branch, subs in by_branch.items()
        if not any(sub.validator == "type" and not sub.relative_path for sub in subs)
    }
    pool = plausible or by_branch
    chosen = best_match(sub for subs in pool.values() for sub in subs).relative_schema_path[0]
    return [leaf for sub in pool[chosen] for leaf in _leaves(sub)]


UUID_EXAMPLE = "3f2c9a4e-8b1d-4c6e-9f0a-1b2c3d4e5f60"
UUID_MESSAGE = f"must be a UUID such as {UUID_EXAMPLE}"
_UUID_SHAPE = re.compile(r"\{8\}-.*-.*-.*\{12\}", re.S)


@lru_cache(maxsize=256)
def _is_uuid_pattern(pattern: str) -> bool:
    """Whether `pattern` spells UUIDs (hex groups from 8 digits to 12 with three hyphens between, as pydantic's and most
    generators' uuid patterns do) and accepts UUID_EXAMPLE: its refusal of a value that is no UUID
    at all reads as UUID_MESSAGE instead of the pattern (only the wording changes, not the verdict)."""
    if not _UUID_SHAPE.search(pattern):
        return False
    try:
        return compile_ecma(pattern).search(UUID_EXAMPLE) is not None
    except Exception:  # a pattern the engine refuses is reported as it is
        return False


def _not_a_uuid(error: ValidationError) -> bool:
    """A string refused by the uuid format, or by a UUID pattern while not even shaped as a UUID
    (a UUID refused only by a pattern's version digits keeps the pattern, which says why)."""
    value, instance = error.validator_value, error.instance
    if not isinstance(instance, str):
        return False
    if error.validator == "format":
        return value == "uuid"
    return error.validator == "pattern" and isinstance(value, str) and _is_uuid_pattern(value) \
        and _CANONICAL_UUID.fullmatch(instance) is None


def _message(error: ValidationError) -> str:
    """A short message that does not echo large instances back."""
    if _not_a_uuid(error):
        return UUID_MESSAGE
    value = error.validator_value
    concise = {
        "type": f"must be of type {value}",
        "enum": f"must be one of {value}",
        "const": f"must be {value!r}",
        "pattern": f"does not match the pattern {value}",
        "format": f"is outside the {value} range" if isinstance(value, str) and value in INT_RANGES
                  else f"is not a valid {value}",
        "maxLength": f"is longer than {value} characters",
        "minLength": f"is shorter than {value} characters",
        "maxItems": f"has more than {value} items",
        "minItems": f"has fewer than {value} items",
        "maximum": f"must be at most {value}",
        "minimum": f"must be at least {value}",
        "exclusiveMaximum": f"must be less than {value}",
        "exclusiveMinimum": f"must be greater than {value}",
        "required": "is required",
        "additionalProperties": "is not allowed here",
    }
    message = concise.get(str(error.validator), str(error.message))
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


def _field_errors(errors: Iterable[ValidationError], variant: str) -> list[FieldError]:
    found: dict[tuple[str, str], FieldError] = {}
    for error in (leaf for raw in errors for leaf in _leaves(raw)):
        path = error.json_path
        keyword = str(error.validator)
        instance, schema, expected = error.instance, error.schema, error.validator_value
        names: list[str] = []
        if keyword == "required" and isinstance(instance, dict) and isinstance(expected, list):
            names = [name for name in expected if name not in instance]
        elif keyword == "additionalProperties" and isinstance(instance, dict) and isinstance(schema, dict):
            known = set(schema.get("properties", {}))
            names = sorted(name for name in instance if name not in known)
        message = _message(error)
        for target in [_join(path, name) for name in names] or [path]:
            found.setdefault((target, keyword), FieldError(target, message, keyword, variant))
    return sorted(found.values(), key=lambda e: (e.path, e.keyword))


class _HasSchemas(Protocol):
    @property
    def input_schema(self) -> Mapping[str, Any]: ...

    @property
    def output_schema(self) -> Mapping[str, Any]: ...


class OperationValidator:
    """Every published variant of one operation, compiled: from the generated spec
    (`validator_for`) or from the contracts folder (`OperationValidator.of(operation)`)."""

    def __init__(self, name: str, variants: Mapping[str, _HasSchemas]) -> None:
        self.name = name
        self._input = {name: compile_schema(dict(v.input_schema)) for name, v in variants.items()}
        self._output = {name: compile_schema(dict(v.output_schema)) for name, v in variants.items()}
        # the verdict "valid under every variant" asks each distinct schema once: variants often
        # publish the same output (REST and MCP), and a large answer's check is most of its cost
        inputs = _compiled_once({name: dict(v.input_schema) for name, v in variants.items()})
        self._fast_input = {name: fast for name, (fast, _) in inputs.items()}
        self._quick_input = {name: quick for name, (_, quick) in inputs.items()}
        self._every_fast_input, self._every_quick_input = _each_once(inputs.values())
        outputs = _compiled_once({name: dict(v.output_schema) for name, v in variants.items()})
        self._fast_output, self._quick_output = _each_once(outputs.values())

    @classmethod
    def of(cls, operation: Operation) -> OperationValidator:
        return cls(operation.name, operation.variants)

    def input_errors(self, payload: Any, variant: str | None = None) -> list[FieldError]:
        """Violations of one input variant, or (variant None) of any of them.

        The surfaces check all variants: a response must satisfy every published variant, and the
        variants disagree (the REST output requires uuid versions 1-8 on ids the MCP input accepts
        in any version), so an input only one variant accepts could never get a conforming answer.
        """
        if variant is None:
            if _all_valid(self._every_quick_input, payload) or _all_valid(self._every_fast_input, payload):
                return []
        elif self._quick_input[variant].is_valid(payload) or self._fast_input[variant].is_valid(payload):
            return []
        found: dict[tuple[str, str], FieldError] = {}
        for name in [variant] if variant is not None else list(self._input):
            for error in _field_errors(self._input[name].iter_errors(payload), name):
                found.setdefault((error.path, error.keyword), error)
        return sorted(found.values(), key=lambda e: (e.path, e.keyword))

    def output_errors(self, payload: Any) -> list[FieldError]:
        """Violations of any published output variant; empty when the payload satisfies all."""
        if _all_valid(self._quick_output, payload) or _all_valid(self._fast_output, payload):
            return []
        errors: list[FieldError] = []
        for name, validator in self._output.items():
            errors += _field_errors(validator.iter_errors(payload), name)
        return errors


def _all_valid(validators: list[Any], payload: Any) -> bool:
    for validator in validators:  # noqa: SIM110 (all() over a generator: a frame more, every request)
        if not validator.is_valid(payload):
            return False
    return True


def _compiled_once(schemas: Mapping[str, dict[str, Any]]) -> dict[str, tuple[Any, Any]]:
    """Each variant's (compile_fast, compile_quick) validators, the same ones for equal schemas."""
    by_text: dict[str, tuple[Any, Any]] = {}
    compiled = {}
    for name, schema in schemas.items():
        text = json.dumps(schema, sort_keys=True)  # as JSON: 1, 1.0 and true are three values
        if text not in by_text:
            by_text[text] = (compile_fast(schema), compile_quick(schema))
        compiled[name] = by_text[text]
    return compiled


def _each_once(pairs: Iterable[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
    distinct = list({id(pair[0]): pair for pair in pairs}.values())
    return [fast for fast, _ in distinct], [quick for _, quick in distinct]


_COMPILED: dict[tuple[str, str], OperationValidator] = {}


def validator_for(spec: OperationSpec) -> OperationValidator:
    """The compiled validators of a generated operation spec, compiled once per contract hash."""
    key = (spec.name, spec.contract_hash)
    found = _COMPILED.get(key)
    if found is None:
        found = _COMPILED[key] = OperationValidator(spec.name, spec.schemas)
    return found
