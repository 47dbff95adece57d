"""The coverage cases of an input schema: a deterministic list of inputs, each one valid instance
changed in exactly one place, that breaks one keyword there (enum, const, type, bounds, lengths,
counts, pattern, format, required, a closed object, uniqueItems) or puts a value exactly on one
of its bounds, at every depth (nested objects and array items, local $refs followed to a bounded
depth). Every case is checked against the schema before it is kept: a violation must be refused
by the validator, a boundary value accepted. The conformance gate sends them before its random
inputs (_gate/coverage.py), so each constraint is tried whatever `--max-examples` says."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from evidencekit.contracts._loader import resolve_pointer
from evidencekit.contracts._validation import compile_schema

_MAX_DEPTH = 6  # nesting of objects and arrays walked
_MAX_REFS = 3  # a recursive $ref followed this many times
_UNKNOWN = "unexpected_property"
# A malformed value of each format the validator checks (Python's jsonschema as the toolkit installs
# it: hostname, iri, duration and json-pointer need packages it does not have, so no value of theirs
# is refused and those cases are dropped; docs/conformance.md lists these)
_MALFORMED = {"uuid": "not-a-uuid", "date-time": "2024-13-45T25:61:00", "date": "2024-02-30",
              "time": "25:61:00", "email": "no-at-sign", "idn-email": "no-at-sign", "uri": "not a uri",
              "uri-reference": "\\\\not a reference", "idn-hostname": "-bad-.host-",
              "ipv4": "256.1.1.1", "ipv6": "::g", "regex": "(unclosed"}
_OF_TYPE: dict[str, Any] = {"string": "text", "integer": 7, "number": 7.5, "boolean": True, "null": None,
                            "object": {}, "array": []}
_SAMPLE = {"uuid": "00000000-0000-4000-8000-000000000000", "date-time": "2024-01-02T03:04:05Z",
           "date": "2024-01-02", "time": "03:04:05Z", "email": "someone@example.com",
           "uri": "https://example.com/", "iri": "https://example.com/", "uri-reference": "/a",
           "hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1"}


@dataclass(frozen=True)
class Case:
    keyword: str  # the keyword broken, or whose bound the value sits on
    path: str  # where, as a JSON path: "$.box.size"
    payload: Any
    valid: bool  # a boundary value the schema accepts; else a violation it refuses

    @property
    def label(self) -> str:
        side = "on its bound" if self.valid else "broken"
        return f"{self.keyword} {side} at {self.path}"


Step = str | int


def json_path(path: tuple[Step, ...]) -> str:
    return "$" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)


class _Walk:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.defs = {key: root[key] for key in ("$schema", "$defs", "definitions") if key in root}
        self.compiled: dict[str, Any] = {}

    def accepts(self, schema: Any, value: Any) -> bool:
        if isinstance(schema, bool):
            return schema
        key = json.dumps(schema, sort_keys=True)
        if key not in self.compiled:
            self.compiled[key] = compile_schema({**self.defs, **schema})
        return bool(self.compiled[key].is_valid(value))

    def resolved(self, schema: Any, refs: int) -> tuple[Any, int]:
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
            if refs >= _MAX_REFS:
                return None, refs
            rest = {key: value for key, value in schema.items() if key != "$ref"}
            schema, refs = {**resolve_pointer(self.root, schema["$ref"]), **rest}, refs + 1
        return schema, refs

    # -- a valid instance of a subschema, or None --------------------------------------------

    def instance(self, schema: Any, refs: int = 0, depth: int = 0) -> Any:
        schema, refs = self.resolved(schema, refs)
        if schema is None or schema is False or depth > _MAX_DEPTH:
            return None
        if schema is True or not schema:
            return "text"
        for candidate in self._candidates(schema, refs, depth):
            if self.accepts(schema, candidate):
                return candidate
        return None

    def _candidates(self, schema: dict[str, Any], refs: int, depth: int) -> Iterator[Any]:
        if "const" in schema:
            yield schema["const"]
        yield from schema.get("enum") or ()
        examples = schema.get("examples")
        yield from examples if isinstance(examples, list) else ()
        if "default" in schema:
            yield schema["default"]
        for combinator in ("allOf", "anyOf", "oneOf"):
            for branch in schema.get(combinator) or ():
                merged = {key: value for key, value in schema.items() if key not in ("allOf", "anyOf", "oneOf")}
                branch, branch_refs = self.resolved(branch, refs)
                if isinstance(branch, dict):
                    yield from self._candidates(_merged(merged, branch), branch_refs, depth)
        for kind in _types(schema):
            yield from self._of_type(kind, schema, refs, depth)

    def _of_type(self, kind: str, schema: dict[str, Any], refs: int, depth: int) -> Iterator[Any]:
        if kind == "object":
            properties = schema.get("properties") or {}
            required = [name for name in schema.get("required") or () if isinstance(name, str)]
            full = {name: self.instance(sub, refs, depth + 1) for name, sub in properties.items()}
            yield {name: value for name, value in full.items() if value is not None or name in required}
            yield {name: full.get(name) for name in required}
        elif kind == "array":
            item = self.instance(_item_schema(schema, 0), refs, depth + 1)
            count = max(_int(schema.get("minItems"), 1), 1)
            yield [_distinct(item, index) for index in range(count)]
            yield [item] * count
            yield []
        elif kind == "string":
            yield from _strings(schema)
        elif kind in ("integer", "number"):
            yield from _numbers(schema, kind)
        else:
            yield _OF_TYPE[kind]

    # -- the cases ------------------------------------------------------------------------------

    def cases(self, schema: Any, value: Any, path: tuple[Step, ...], refs: int = 0,
              depth: int = 0) -> Iterator[tuple[str, tuple[Step, ...], Any, bool]]:
        """(keyword, path of the change, this place's value changed there, valid), for the place
        `path` that holds `value` of `schema`."""
        schema, refs = self.resolved(schema, refs)
        if not isinstance(schema, dict) or depth > _MAX_DEPTH:
            return
        for keyword, changed, valid in _here(schema, value):
            yield keyword, path, changed, valid
        for branch in schema.get("allOf") or ():
            yield from self.cases(branch, value, path, refs, depth)
        for combinator in ("anyOf", "oneOf"):  # the branches the value is an instance of
            for branch in schema.get(combinator) or ():
                if self.accepts(self.resolved(branch, refs)[0] or False, value):
                    yield from self.cases(branch, value, path, refs, depth)
        if isinstance(value, dict):
            yield from self._object(schema, value, path, refs, depth)
        elif isinstance(value, list):
            yield from self._array(schema, value, path, refs, depth)

    def _object(self, schema: dict[str, Any], value: dict[str, Any], path: tuple[Step, ...], refs: int,
                depth: int) -> Iterator[tuple[str, tuple[Step, ...], Any, bool]]:
        for name in schema.get("required") or ():
            if name in value:
                yield "required", path, {key: item for key, item in value.items() if key != name}, False
        if schema.get("additionalProperties") is False and _UNKNOWN not in value:
            yield "additionalProperties", path, {**value, _UNKNOWN: True}, False
        for name, sub in (schema.get("properties") or {}).items():
            here = value[name] if name in value else self.instance(sub, refs, depth + 1)
            if name not in value and here is None:
                continue
            for keyword, where, changed, valid in self.cases(sub, here, (*path, name), refs, depth + 1):
                yield keyword, where, {**value, name: changed}, valid

    def _array(self, schema: dict[str, Any], value: list[Any], path: tuple[Step, ...], refs: int,
               depth: int) -> Iterator[tuple[str, tuple[Step, ...], Any, bool]]:
        prefix = schema.get("prefixItems") or (schema["items"] if isinstance(schema.get("items"), list) else [])
        for index in range(max(len(prefix), 1)):
            sub = _item_schema(schema, index)
            if sub is None:
                continue
            here = value[index] if index < len(value) else self.instance(sub, refs, depth + 1)
            if index > len(value) or (index == len(value) and here is None):
                break
            for keyword, where, changed, valid in self.cases(sub, here, (*path, index), refs, depth + 1):
                yield keyword, where, [*value[:index], changed, *value[index + 1:]], valid


def _merged(schema: dict[str, Any], branch: dict[str, Any]) -> dict[str, Any]:
    merged = {**schema, **branch}
    if "properties" in schema and "properties" in branch:
        merged["properties"] = {**schema["properties"], **branch["properties"]}
    if "required" in schema and "required" in branch:
        merged["required"] = [*schema["required"], *branch["required"]]
    return merged


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared] if declared in _OF_TYPE else []
    if isinstance(declared, list):
        kinds = [kind for kind in declared if kind in _OF_TYPE]
        return sorted(kinds, key=lambda kind: kind == "null")
    if "properties" in schema or "required" in schema:
        return ["object"]
    if "items" in schema or "prefixItems" in schema:
        return ["array"]
    if {"minLength", "maxLength", "pattern", "format"} & set(schema):
        return ["string"]
    if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} & set(schema):
        return ["number"]
    return ["string", "integer", "boolean", "object"]


def _item_schema(schema: dict[str, Any], index: int) -> Any:
    prefix = schema.get("prefixItems") or (schema["items"] if isinstance(schema.get("items"), list) else [])
    if index < len(prefix):
        return prefix[index]
    rest = schema.get("items") if not isinstance(schema.get("items"), list) else schema.get("additionalItems")
    return {} if rest is None else rest


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _distinct(item: Any, index: int) -> Any:
    """An item like `item` and, past the first, unlike the others (for uniqueItems)."""
    if index == 0:
        return item
    if isinstance(item, str):
        return f"{item}{index}"
    if _number(item):
        return item + index
    if isinstance(item, dict):
        return {**item, **{key: _distinct(value, index) for key, value in list(item.items())[:1]}}
    return item


def _strings(schema: dict[str, Any]) -> Iterator[str]:
    low, high = _int(schema.get("minLength"), 0), _int(schema.get("maxLength"), 10**6)
    fmt = schema.get("format")
    if fmt in _SAMPLE:
        yield _SAMPLE[fmt]
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        yield from _matching(pattern, low, high)
    size = min(max(low, 4), high)
    yield ("text" * (size // 4 + 1))[:size]


def _matching(pattern: str, low: int, high: int) -> Iterator[str]:
    """The simplest string of the pattern (ECMA-262) within the lengths, drawn deterministically."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample

    from evidencekit.contracts._ecma_regex import to_python

    try:
        yield find(st.from_regex(to_python(pattern), fullmatch=False), lambda text: low <= len(text) <= high,
                   settings=settings(database=None, derandomize=True, max_examples=100, phases=[Phase.generate],
                                     suppress_health_check=list(HealthCheck)))
    except (NoSuchExample, Exception):  # a pattern hypothesis cannot draw from: no sample
        return


def _numbers(schema: dict[str, Any], kind: str) -> Iterator[float | int]:
    low = schema.get("minimum")
    if _number(schema.get("exclusiveMinimum")):
        low = schema["exclusiveMinimum"] + (1 if kind == "integer" else 0.5)
    high = schema.get("maximum")
    if _number(schema.get("exclusiveMaximum")):
        high = schema["exclusiveMaximum"] - (1 if kind == "integer" else 0.5)
    step = schema.get("multipleOf")
    start = low if _number(low) else (high if _number(high) and high < 1 else 1)
    if _number(step) and step > 0:
        start = step * math.ceil(start / step)
    yield math.ceil(start) if kind == "integer" else start


def _here(schema: dict[str, Any], value: Any) -> Iterator[tuple[str, Any, bool]]:
    """(keyword, value, valid): this place's own keywords broken, or met on a bound."""
    if isinstance(schema.get("enum"), list):
        options = schema["enum"]
        yield "enum", next(_outside(options, value)), False
    if "const" in schema:
        yield "const", next(_outside([schema["const"]], value)), False
    declared = schema.get("type")
    if declared is not None:
        kinds = {declared} if isinstance(declared, str) else set(declared)
        if "number" in kinds:
            kinds.add("integer")
        for other, sample in _OF_TYPE.items():
            if other not in kinds and not (other == "number" and "integer" in kinds and sample % 1 == 0):
                yield "type", sample, False
    if _number(value):
        yield from _bounds(schema, value)
    if isinstance(value, str):
        yield from _lengths(schema, value)
    if isinstance(value, list):
        yield from _counts(schema, value)


def _outside(options: list[Any], value: Any) -> Iterator[Any]:
    """A value of the same type as `value` that is none of `options`."""
    if isinstance(value, str) or all(isinstance(option, str) for option in options):
        base = value if isinstance(value, str) else "value"
        yield from (text for text in (f"{base}-not-listed", f"not-listed-{len(options)}") if text not in options)
    if _number(value):
        yield from (number for number in (value + 1, value - 1, 987654321) if number not in options)
    yield from (other for other in ("not-listed", 987654321, None) if other not in options)


def _bounds(schema: dict[str, Any], value: float) -> Iterator[tuple[str, Any, bool]]:
    integral = isinstance(value, int)
    nudge = 1 if integral else 0.5
    for keyword, sign in (("minimum", -1), ("maximum", 1)):
        bound = schema.get(keyword)
        if _number(bound) and not isinstance(schema.get(f"exclusive{keyword.title()}"), bool):
            yield keyword, bound, True
            yield keyword, bound + sign * nudge, False
        elif _number(bound) and schema.get(f"exclusive{keyword.title()}") is True:  # draft-04 style
            yield f"exclusive{keyword.title()}", bound, False
    for keyword, sign in (("exclusiveMinimum", -1), ("exclusiveMaximum", 1)):
        bound = schema.get(keyword)
        if _number(bound):
            yield keyword, bound, False
            yield keyword, bound - sign * nudge, True
    step = schema.get("multipleOf")
    if _number(step) and step > 0:
        yield "multipleOf", value + step / 2, False


def _lengths(schema: dict[str, Any], value: str) -> Iterator[tuple[str, Any, bool]]:
    filler = value or "x"

    def sized(size: int) -> str:
        return (filler * (size // len(filler) + 1))[:size]

    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and low > 0:
        yield "minLength", sized(low), True
        yield "minLength", sized(low - 1), False
    if isinstance(high, int):
        yield "maxLength", sized(high), True
        yield "maxLength", sized(high + 1), False
    if isinstance(schema.get("pattern"), str):
        for broken in ("", value + "!", "!" + value, value.swapcase(), " " * max(len(value), 1)):
            yield "pattern", broken, False
    if isinstance(schema.get("format"), str):
        fmt = schema["format"]
        for broken in (_MALFORMED.get(fmt, f"not-a-{fmt}"), value[:-1], value + " x"):
            yield "format", broken, False


def _counts(schema: dict[str, Any], value: list[Any]) -> Iterator[tuple[str, Any, bool]]:
    def sized(size: int) -> list[Any]:
        if not value:
            return [None] * size if size else []
        return [value[index] if index < len(value) else _distinct(value[-1], index) for index in range(size)]

    low, high = schema.get("minItems"), schema.get("maxItems")
    if isinstance(low, int) and low > 0:
        yield "minItems", sized(low), True
        yield "minItems", sized(low - 1), False
    if isinstance(high, int) and high < 1000:
        yield "maxItems", sized(high), True
        yield "maxItems", sized(high + 1), False
    if schema.get("uniqueItems") is True and value:
        yield "uniqueItems", [*value, value[0]], False


def derive(schema: Mapping[str, Any], base: Any, keep: Callable[[tuple[Step, ...]], bool] = lambda path: True,
           ) -> list[Case]:
    """Every case of `schema` derived from `base` (an instance it accepts), the shallowest places
    first, each confirmed by the validator; `keep` says which places may be changed (pins are not)."""
    walk = _Walk(schema)
    exact = compile_schema(dict(schema))
    cases: list[tuple[int, Case]] = []
    seen: set[str] = set()
    for keyword, path, payload, valid in walk.cases(dict(schema), base, ()):
        if not keep(path):
            continue
        key = json.dumps([keyword, valid, payload], sort_keys=True, default=str)
        if key in seen or payload == base:
            continue
        seen.add(key)
        if exact.is_valid(payload) == valid:
            cases.append((len(path), Case(keyword, json_path(path), payload, valid)))
    return _one_per_place([case for _, case in sorted(cases, key=lambda pair: pair[0])])  # shallowest first


def _one_per_place(cases: list[Case]) -> list[Case]:
    """The first case of each (keyword, path, valid), and of each other type: one malformed value
    of a format is enough."""
    first: dict[tuple[str, str, bool, str], Case] = {}
    for case in cases:
        kind = json.dumps(case.payload, sort_keys=True) if case.keyword == "type" else ""
        first.setdefault((case.keyword, case.path, case.valid, kind), case)
    return list(first.values())


def base_instance(schema: Mapping[str, Any], example: Any = None) -> Any:
    """A valid instance to change: the published example when the schema accepts it, else one
    built from the schema (every property it declares), else None."""
    exact = compile_schema(dict(schema))
    if example is not None and exact.is_valid(example):
        return example
    built = _Walk(schema).instance(dict(schema))
    return built if built is not None and exact.is_valid(built) else None
