"""Direction-aware comparison of two versions of a JSON Schema (draft-07 or 2020-12).

The question is always "do existing clients break?"; the answer depends on the data flow:
* ``request``: the schema validates what clients *send*.  A change is breaking when some
  payload that was valid before becomes invalid (tightening: fewer payloads accepted).
* ``response``: the schema validates what the server *returns*.  A change is breaking when
  the server may now return something it could not before (loosening: more payloads), or
  stops returning something clients relied upon (a removed property).

The same change (an enum value added, say) is harmless one way and breaking the other.  When
the relation between an old and a new constraint cannot be decided (a changed
``pattern``, ``format`` or ``const``, a changed keyword this module does not model), it counts
as breaking both ways: ``constraint_tightened`` for requests, ``constraint_loosened`` for
responses.  Local ``$ref`` pointers (``#/$defs/...``, ``#/definitions/...``) are followed through
every keyword that holds a subschema (properties, patternProperties, additionalProperties,
dependentSchemas, items, prefixItems, contains, propertyNames, unevaluated*, if/then/else, not,
anyOf/oneOf/allOf); keywords this module does not model are compared with their $refs expanded.

Every breaking change says why, for the side it breaks (``Change.why``): old clients' requests
the server now refuses, or answers the old clients' schema refuses.

A property one side declares and the other does not is compared with what the other side admits
under that name (its matching ``patternProperties``, else ``additionalProperties``, else
``unevaluatedProperties``, else anything). Two policies (``Policy``) read that differently:

* ``semantic`` (the default) is sound: a change is compatible only if every request valid before
  stays valid, and every answer valid now was valid before. A typed property added to an open
  request object is breaking (``{"bar": null}`` was valid), a property dropped from an answer is
  compatible when what the new schema admits there was admitted before.
* ``lenient`` assumes clients send only the properties their schema declares and read the ones it
  declares: a property added to a request is compatible, and one dropped from an answer is
  breaking. Every verdict the assumption decides says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import jsonschema_rs

from evidencekit.contracts._ecma_regex import compile_ecma
from evidencekit.contracts._loader import resolve_pointer

Direction = Literal["request", "response"]
Policy = Literal["semantic", "lenient"]
POLICIES: tuple[str, ...] = ("semantic", "lenient")
Schema = dict[str, Any]
Types = frozenset[str] | None  # None: any type
Seen = frozenset[tuple[tuple[str, ...], tuple[str, ...]]]  # $ref targets being compared
Pairing = tuple[list[tuple[int, int]], list[int], list[int]]  # pairs, unpaired old, unpaired new

# kind -> (breaking for requests, breaking for responses).  property_added, property_removed
# and type_changed depend on more than the direction and are decided where they are found.
_RULES: dict[str, tuple[bool, bool]] = {
    "property_removed": (False, True), "property_added": (False, False),
    "required_added": (True, False), "required_removed": (False, True),
    "enum_value_added": (False, True), "enum_value_removed": (True, False),
    "type_changed": (True, True),
    "nullable_added": (False, True), "nullable_removed": (True, False),
    "constraint_tightened": (True, False), "constraint_loosened": (False, True),
    "additional_properties_tightened": (True, False),
    "additional_properties_loosened": (False, True),
    "schema_dialect_changed": (False, False), "annotation_changed": (False, False),
}
KINDS: tuple[str, ...] = tuple(_RULES)
# what a change inside `not` does to the schema around it
_INVERSE = {
    "constraint_tightened": "constraint_loosened", "constraint_loosened": "constraint_tightened",
    "enum_value_added": "constraint_tightened", "enum_value_removed": "constraint_loosened",
    "nullable_added": "constraint_tightened", "nullable_removed": "constraint_loosened",
    "required_added": "constraint_loosened", "required_removed": "constraint_tightened",
    "additional_properties_tightened": "constraint_loosened",
    "additional_properties_loosened": "constraint_tightened",
}

_ANNOTATIONS = frozenset({"title", "description", "examples", "default", "$comment", "deprecated",
                          "readOnly", "writeOnly", "contentMediaType", "contentEncoding"})
_STRUCTURAL = frozenset({"$id", "$anchor", "$dynamicAnchor", "$defs", "definitions", "$vocabulary"})
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_PRESENCE = ("pattern", "format", "const")  # added: tighter; removed: looser; changed: unknown
_COMBINATORS = ("anyOf", "oneOf", "allOf")
# one subschema each, where absent means the same as {} (no constraint)
_OPTIONAL_SUBSCHEMAS = ("propertyNames", "then", "else")
_HANDLED = frozenset({"type", "enum", "multipleOf", "uniqueItems", "properties", "required",
                      "additionalProperties", "unevaluatedProperties", "items", "prefixItems",
                      "unevaluatedItems", "minContains", "maxContains",
                      "additionalItems", "contains", "not", "if", "dependentRequired", "dependencies",
                      *_OPTIONAL_SUBSCHEMAS, "patternProperties", "dependentSchemas", *_UPPER, *_LOWER, *_COMBINATORS})
_EXPAND_DEPTH = 16  # $ref levels expanded when comparing keywords not modelled here


@dataclass(frozen=True)
class Change:
    path: str  # location in the instance: "$.a.b", "$.list[]", "$.x<anyOf 1>", "$.map.*"
    kind: str  # one of KINDS
    breaking: bool
    detail: str  # one human sentence: what changed, old -> new
    why: str = ""  # for a breaking change: whom it breaks and how

    def line(self) -> str:
        """`BREAKING  kind  path: detail; why`, one line."""
        text = f"{'BREAKING' if self.breaking else 'ok':<10}{self.kind}  {self.path}: {self.detail}"
        return f"{text}; {self.why}" if self.why else text


_REQUEST_WHY = "breaks old clients: a request valid under the old schema may now be refused"
_RESPONSE_WHY = "breaks old clients: an answer may now hold what the old schema refuses"
_RESPONSE_GONE_WHY = "breaks old clients: answers may no longer carry what they read"
_ADDED_WHY = ("breaks old clients: their schema refuses some values of it (unknown properties rejected, or "
              "held to additionalProperties or patternProperties), so an answer carrying one fails their validation")


def _why(kind: str, request: bool) -> str:
    if request:
        return _REQUEST_WHY
    if kind in ("property_removed", "required_removed"):
        return _RESPONSE_GONE_WHY
    if kind in ("property_added", "required_added"):
        return _ADDED_WHY
    return _RESPONSE_WHY


_LENIENT_SENT = "lenient: assumes old clients send only the properties their schema declares"
_LENIENT_READ = "lenient: assumes old clients read the properties their schema declares"


def diff_schemas(old: Schema, new: Schema, direction: Direction, policy: Policy = "semantic") -> list[Change]:
    """List every change from ``old`` to ``new``, classified for the given data direction."""
    if direction not in ("request", "response"):
        raise ValueError(f"direction must be 'request' or 'response', not {direction!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    differ = _Differ(old, new, direction, policy)
    differ.compare(old, new, "$", frozenset())
    return differ.changes


def format_changes(changes: list[Change]) -> str:
    """One line per change, then a summary line ("no changes" when the list is empty)."""
    if not changes:
        return "no changes"
    lines = [change.line() for change in changes]
    total, breaking = len(changes), sum(c.breaking for c in changes)
    lines.append(f"{total} change{'' if total == 1 else 's'}, {breaking} breaking")
    return "\n".join(lines)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _show(value: Any) -> str:
    text = _key(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(key: str, old: Schema, new: Schema) -> str:
    """'maxLength 10 -> 5', with '(absent)' for a missing keyword."""
    old_text, new_text = (_show(s[key]) if key in s else "(absent)" for s in (old, new))
    return f"{key} {old_text} -> {new_text}"


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if name.isidentifier() else f"{path}[{json.dumps(name)}]"


def _is_null_schema(schema: Any) -> bool:
    return isinstance(schema, dict) and (schema.get("type") in ("null", ["null"])
                                         or schema.get("enum") == [None]
                                         or ("const" in schema and schema["const"] is None))


_APPLIES_TO = {
    "string": ("minLength", "maxLength", "pattern", "format", "contentMediaType", "contentEncoding"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": ("items", "prefixItems", "additionalItems", "contains", "minContains", "maxContains", "minItems",
              "maxItems", "uniqueItems", "unevaluatedItems"),
    "object": ("properties", "patternProperties", "additionalProperties", "required", "minProperties",
               "maxProperties", "dependentRequired", "dependentSchemas", "dependencies", "propertyNames",
               "unevaluatedProperties"),
}


def _applicable(schema: Schema) -> Schema:
    """`schema` without the keywords that only apply to instances its "type" excludes (maxLength
    beside "type": "integer" says nothing)."""
    declared = schema.get("type")
    if not isinstance(declared, (str, list)):
        return schema
    types = {declared} if isinstance(declared, str) else set(declared)
    if "integer" in types:
        types.add("number")
    idle = {key for kind, keys in _APPLIES_TO.items() if kind not in types for key in keys}
    if not idle & set(schema):
        return schema
    return {key: value for key, value in schema.items() if key not in idle}


def _only_null(schema: Any) -> bool:
    """A schema that admits null and nothing else."""
    if not isinstance(schema, dict):
        return False
    meaning = set(schema) - _ANNOTATIONS - {"$schema"}
    return _is_null_schema(schema) and meaning <= {"type", "enum", "const"}


# Keywords that read one another within a schema object: a group's keywords may only come from one
# side of a merge (additionalProperties in one allOf branch does not see another's properties).
_GROUPS = (frozenset({"properties", "patternProperties", "additionalProperties"}),
           frozenset({"prefixItems", "items", "additionalItems"}),
           frozenset({"contains", "minContains", "maxContains"}), frozenset({"if", "then", "else"}))
_UNMERGEABLE = frozenset({"unevaluatedProperties", "unevaluatedItems", "$ref", "$dynamicRef", "$id",
                          "$defs", "definitions", "$anchor", "$dynamicAnchor"})


def _mergeable(into: Schema, branch: Schema) -> bool:
    """Whether `{**into, **branch}` means what `into` with `allOf: [branch]` means."""
    meaning = set(branch) - _ANNOTATIONS - {"$schema"}
    if meaning & set(into) or (meaning | set(into)) & _UNMERGEABLE:
        return False
    return all(not (group & meaning and group & set(into)) for group in _GROUPS)


def _is_trivial(schema: Any) -> bool:
    """A branch that says nothing but its type (a type comparison covers it)."""
    return isinstance(schema, dict) and "type" in schema and set(schema) - _ANNOTATIONS == {"type"}


def _closed(schema: Schema) -> bool:
    """Unknown properties refused (unevaluatedProperties only counts where additionalProperties,
    which evaluates every other property, is absent)."""
    if "additionalProperties" in schema:
        return schema["additionalProperties"] is False
    return schema.get("unevaluatedProperties") is False


def _unevaluated(schema: Schema) -> Any:
    """The unevaluatedProperties that governs any property here: none where additionalProperties
    (which evaluates every property the others leave) is present beside it."""
    return None if "additionalProperties" in schema else schema.get("unevaluatedProperties")


def _matches(pattern: str, name: str) -> bool | None:
    """Whether an ECMA-262 `pattern` matches a property name; None when it cannot be read."""
    try:
        return compile_ecma(pattern).search(name) is not None
    except (re.error, ValueError):
        return None


def _alternatives(pattern: str) -> frozenset[str] | None:
    """The top-level alternatives of an ECMA-262 `pattern` (`a|b` -> {a, b}), or None where they
    cannot stand for it: unbalanced, or with a backreference (adding or removing an alternative
    renumbers the groups one refers to). A string one alternative matches somewhere, the pattern
    matches (JSON Schema's patterns search), so a pattern whose alternatives include every one of
    another's admits every string the other admits."""
    if re.search(r"\\(?:[1-9]|k<)", pattern):
        return None
    parts, start, depth, in_class, escaped = [], 0, 0, False, False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        elif char == "|" and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
    if depth or in_class or escaped:
        return None
    return frozenset([*parts, pattern[start:]])


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "object")


def _meet(one: Types, other: Types) -> Types:
    """The types both admit (None: any)."""
    if one is None or other is None:
        return other if one is None else one
    return frozenset({t for t in one if t in other or (t == "integer" and "number" in other)}
                     | {t for t in other if t == "integer" and "number" in one})


def _within(inner: Types, outer: Types) -> bool:
    """True when every value of a type in ``inner`` also has a type in ``outer``."""
    if outer is None or inner is None:
        return outer is None
    return all(t in outer or (t == "integer" and "number" in outer) for t in inner)


def _array_parts(schema: Schema) -> tuple[list[Any], Any]:
    """(positional item schemas, schema of the remaining items), in either dialect. Past
    `prefixItems`, without `items`, `unevaluatedItems` governs the items (an item `contains`
    matches is evaluated, so exempt from it)."""
    items = schema.get("items")
    if isinstance(items, list):
        return items, schema.get("additionalItems", {})
    prefix = list(schema.get("prefixItems", []))
    if items is not None:
        return prefix, items
    if "unevaluatedItems" not in schema:
        return prefix, {}
    rest = schema["unevaluatedItems"]
    if "contains" in schema and rest is not True and rest != {}:
        rest = {"anyOf": [rest, schema["contains"]]}
    return prefix, rest


class _Differ:
    def __init__(self, old_root: Schema, new_root: Schema, direction: Direction,
                 policy: Policy = "semantic") -> None:
        self.roots = (old_root, new_root)
        self.request = direction == "request"
        self.policy = policy
        self.changes: list[Change] = []

    def emit(self, path: str, kind: str, detail: str, breaking: bool | None = None, why: str = "") -> None:
        if breaking is None:
            breaking = _RULES[kind][0 if self.request else 1]
        self.changes.append(Change(path, kind, breaking, detail, (why or _why(kind, self.request)) if breaking else ""))

    def emit_constraint(self, path: str, tighter: bool, detail: str) -> None:
        self.emit(path, "constraint_tightened" if tighter else "constraint_loosened", detail)

    def emit_undecidable(self, path: str, detail: str) -> None:
        self.emit_constraint(path, self.request, f"{detail} (relation undecidable: breaking)")

    def emit_type(self, path: str, widened: bool, narrowed: bool, detail: str) -> None:
        self.emit(path, "type_changed", detail, not (widened if self.request else narrowed))

    def resolve(self, schema: Any, side: int) -> tuple[Any, tuple[str, ...]]:
        """Follow local $refs (siblings of a $ref override the target's keywords)."""
        refs: tuple[str, ...] = ()
        while isinstance(schema, dict) and str(schema.get("$ref", "")).startswith("#"):
            ref = schema["$ref"]
            if ref in refs:
                raise ValueError(f"$ref cycle without content at {ref!r}")
            refs += (ref,)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**resolve_pointer(self.roots[side], ref), **siblings}
        return schema, refs

    def split_null(self, schema: Schema, side: int) -> tuple[bool, Any]:
        """(null allowed?, the schema with null taken out) for the three ways of saying null."""
        nullable, core = False, dict(schema)
        types, enum = core.get("type"), core.get("enum")
        if isinstance(types, list) and "null" in types and len(types) > 1:
            rest = [t for t in types if t != "null"]
            core["type"], nullable = rest[0] if len(rest) == 1 else rest, True
        if isinstance(enum, list) and None in enum and len(enum) > 1:
            core["enum"], nullable = [v for v in enum if v is not None], True
        for key in ("anyOf", "oneOf"):
            branches = core.get(key)
            if not isinstance(branches, list):
                continue
            rest = [b for b in branches if not _only_null(self.simplify(self.resolve(b, side)[0], side))]
            if key == "oneOf" and (len(branches) - len(rest) != 1 or any(
                    self.admits(self.resolve(b, side)[0], side, None) is not False for b in rest)):
                continue  # null matches no branch, or two: it is refused (oneOf wants exactly one)
            if rest and len(rest) < len(branches):
                nullable, core[key] = True, rest
                beside = {k: v for k, v in core.items() if k != key}
                if len(rest) == 1 and not set(beside) - _ANNOTATIONS - {"$schema"}:
                    return nullable, rest[0]  # may hold a $ref: normalise() follows it
                if len(rest) == 1 and isinstance(rest[0], dict) and "$ref" not in rest[0] \
                        and _mergeable(beside, rest[0]):
                    core = {**beside, **rest[0]}
        return nullable, core

    def normalise(self, schema: Any, side: int) -> tuple[bool, Any, tuple[str, ...]]:
        """(null allowed?, schema without null and local $refs, the $refs followed). A schema that
        admits null alone is (True, False)."""
        nullable: bool = False
        refs: tuple[str, ...] = ()
        for _ in range(32):  # bounded, for a nullable anyOf that refers to itself
            schema, more = self.resolve(schema, side)
            refs += more
            if not isinstance(schema, dict):
                break
            simpler = self.simplify(schema, side)
            if not isinstance(simpler, dict):
                schema = simpler
                break
            found, core = self.split_null(simpler, side)
            nullable |= found
            if _only_null(core):
                return True, False, refs
            settled = not found and not more and simpler is schema
            schema = core
            if settled:
                break
        return nullable, schema, refs

    def admits(self, schema: Any, side: int, value: Any) -> bool | None:
        """Whether `schema` (of that side, read in its root's dialect, its local $refs against its
        root's definitions) admits `value`; None when that cannot be told (a $ref to the root, say)."""
        if not isinstance(schema, dict):
            return bool(schema)
        root = self.roots[side]
        scoped = {**{key: root[key] for key in ("$schema", "$defs", "definitions")
                     if isinstance(root, dict) and key in root}, **schema}
        try:
            return bool(jsonschema_rs.validator_for(scoped).is_valid(value))
        except Exception:  # noqa: BLE001 - a $ref the scoped copy cannot follow, or what the engine does not take
            return None

    def simplify(self, schema: Any, side: int, depth: int = 0) -> Any:
        """The same schema with its combinators read where that is exact: a single-branch anyOf,
        oneOf or allOf, and allOf branches whose keywords do not meet the schema's, merged into it;
        a repeated allOf or anyOf branch dropped; keywords the declared type makes inapplicable
        dropped."""
        if not isinstance(schema, dict) or depth > 16:  # a recursive schema is read so far, no further
            return schema
        schema = _applicable(schema)
        for key in _COMBINATORS:
            branches = schema.get(key)
            if not isinstance(branches, list) or not branches:
                continue
            if key != "oneOf":
                unique = list({_key(branch): branch for branch in branches}.values())
                if len(unique) < len(branches):
                    schema = {**schema, key: unique}
                    branches = unique
            rest = {k: v for k, v in schema.items() if k != key}
            resolved_branches = [self.resolve(branch, side)[0] for branch in branches]
            if key == "anyOf" and any(branch is True or branch == {} for branch in resolved_branches):
                return self.simplify(rest, side, depth + 1)  # one branch admits anything: so does anyOf
            if key == "allOf" and any(branch is False for branch in resolved_branches):
                return False
            if key != "oneOf" and all(branch is False for branch in resolved_branches):
                return False
            if len(branches) == 1 and not set(rest) - _ANNOTATIONS - {"$schema"}:
                only = branches[0]  # a $ref in it is followed by normalise(), which records it
                return self.simplify(only, side, depth + 1) if isinstance(only, dict) else only
            if len(branches) != 1 and key != "allOf":
                continue
            kept: list[Any] = []
            for branch, resolved in zip(branches, resolved_branches, strict=True):
                if resolved is True or resolved == {}:
                    continue
                said = {k: v for k, v in branch.items() if k not in _ANNOTATIONS} if isinstance(branch, dict) else {}
                if said and all(k in rest and _key(rest[k]) == _key(v) for k, v in said.items()):
                    continue  # it says nothing the schema does not say already
                if isinstance(branch, dict) and "$ref" not in branch and _mergeable(rest, branch):
                    rest = {**rest, **branch}
                else:
                    kept.append(branch)
            if len(kept) < len(branches):
                return self.simplify({**rest, key: kept} if kept else rest, side, depth + 1)
        return schema

    def types(self, schema: Schema, side: int, depth: int = 0) -> Types:
        """Types the schema admits: its "type", narrowed by what its anyOf/oneOf branches (any of
        them) and allOf branches (each of them) admit."""
        declared = schema.get("type")
        found: Types = None
        if isinstance(declared, (str, list)):
            found = frozenset([declared] if isinstance(declared, str) else declared)
        listed = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(listed, list):
            found = _meet(found, frozenset(_json_type(value) for value in listed))
        if depth >= 8:
            return found
        for key in ("anyOf", "oneOf", "allOf"):
            branches = [self.resolve(b, side)[0] for b in schema.get(key) or []]
            if not branches:
                continue
            if any(b is False for b in branches) and key == "allOf":
                return frozenset()
            kinds = [self.types(b, side, depth + 1) if isinstance(b, dict) else (None if b else frozenset())
                     for b in branches]
            if key == "allOf":
                for kind in kinds:
                    found = _meet(found, kind)
            elif all(kind is not None for kind in kinds):
                found = _meet(found, frozenset(t for kind in kinds if kind for t in kind))
        return found

    def compare(self, old: Any, new: Any, path: str, seen: Seen) -> None:
        old_null, old, old_refs = self.normalise(old, 0)
        new_null, new, new_refs = self.normalise(new, 1)
        if old_refs or new_refs:
            targets = (old_refs[-1:], new_refs[-1:])
            if targets in seen:
                return  # recursive schema: this pair is already being compared further up
            seen = seen | {targets}
        # a side without the null branch may admit null all the same (a `not`, an open schema): no change
        if old_null != new_null and self.admits((new, old)[new_null], 1 - new_null, None) is not True:
            kind = "nullable_added" if new_null else "nullable_removed"
            self.emit(path, kind, "null is now allowed" if new_null else "null no longer allowed")
        if old is False or new is False:
            if old is not new:
                self.emit_constraint(path, new is False, f"schema {_show(old)} -> {_show(new)}"
                                     + (" (null aside)" if old_null or new_null else ""))
            return
        old, new = (s if isinstance(s, dict) else {} for s in (old, new))
        self.compare_keywords(old, new, path)
        self.compare_types(old, new, path)
        self.compare_enum(old, new, path)
        self.compare_bounds(old, new, path)
        self.compare_objects(old, new, path, seen)
        self.compare_arrays(old, new, path, seen)
        self.compare_subschemas(old, new, path, seen)
        for key in _COMBINATORS:
            self.compare_branches(old, new, key, path, seen)

    def compare_keywords(self, old: Schema, new: Schema, path: str) -> None:
        """$schema, annotations, pattern/format/const, and keywords not modelled here."""
        for key in sorted((set(old) | set(new)) - _HANDLED - _STRUCTURAL):
            if (key in old) == (key in new) and self.same(old.get(key), new.get(key)):
                continue
            change = _describe(key, old, new)
            if (key in old) == (key in new) and _key(old[key]) == _key(new[key]):
                change = f"{key} (as its $refs now resolve) {_describe(key, *self.expanded(key, old, new))}"
            if key == "$schema":
                self.emit(path, "schema_dialect_changed", f"dialect {change}")
            elif key in _ANNOTATIONS or key.startswith("x-"):
                self.emit(path, "annotation_changed", change)
            elif key in _PRESENCE and (key not in old or key not in new):
                self.emit_constraint(path, key in new, change)
            elif key == "pattern" and (wider := self.pattern_widened(old[key], new[key])) is not None:
                self.emit_constraint(path, not wider, change)
            else:
                self.emit_undecidable(path, change)

    @staticmethod
    def pattern_widened(old: Any, new: Any) -> bool | None:
        """True when the new pattern holds every alternative of the old (it admits more), False when
        the old holds every one of the new's (fewer), None when neither can be told."""
        if not (isinstance(old, str) and isinstance(new, str)):
            return None
        old_parts, new_parts = _alternatives(old), _alternatives(new)
        if old_parts is None or new_parts is None or old_parts == new_parts:
            return None
        return True if old_parts < new_parts else False if new_parts < old_parts else None

    def compare_types(self, old: Schema, new: Schema, path: str) -> None:
        per_branch = any(key in old and key in new for key in ("anyOf", "oneOf"))
        if per_branch and "type" not in old and "type" not in new:
            return  # both sides give their types per branch: compare_branches reports them
        old_types, new_types = self.types(old, 0), self.types(new, 1)
        widened, narrowed = _within(old_types, new_types), _within(new_types, old_types)
        if not (widened and narrowed):
            how = "widened" if widened else "narrowed" if narrowed else "changed"
            old_name, new_name = ("|".join(sorted(t)) if t else "any" for t in (old_types, new_types))
            self.emit_type(path, widened, narrowed, f"type {how}: {old_name} -> {new_name}")

    def compare_enum(self, old: Schema, new: Schema, path: str) -> None:
        old_enum, new_enum = old.get("enum"), new.get("enum")
        if old_enum is None or new_enum is None:
            if old_enum is not None or new_enum is not None:
                self.emit_constraint(path, new_enum is not None, _describe("enum", old, new))
            return
        old_keys, new_keys = {_key(v) for v in old_enum}, {_key(v) for v in new_enum}
        added = [v for v in new_enum if _key(v) not in old_keys]
        removed = [v for v in old_enum if _key(v) not in new_keys]
        if added:
            self.emit(path, "enum_value_added", f"enum values added: {_show(added)[1:-1]}")
        if removed:
            self.emit(path, "enum_value_removed", f"enum values removed: {_show(removed)[1:-1]}")

    def compare_bounds(self, old: Schema, new: Schema, path: str) -> None:
        for key in (*_UPPER, *_LOWER, "multipleOf", "uniqueItems", "minContains", "maxContains"):
            o, n = old.get(key), new.get(key)
            if key == "uniqueItems":
                o, n = o or None, n or None  # false says the same as absent
            if key == "minContains":  # with contains, absent means 1; without, nothing
                o, n = (s.get(key, 1) if "contains" in s else None for s in (old, new))
                if o is None or n is None:
                    continue  # contains itself came or went: compared with it
            if key == "maxContains" and not ("contains" in old and "contains" in new):
                if o != n and (o is not None or n is not None):
                    self.emit_undecidable(path, _describe(key, old, new))
                continue
            if o == n:
                continue
            detail = _describe(key, old, new) if key in old or key in new else f"{key} {o} -> {n}"
            if o is None or n is None:
                self.emit_constraint(path, o is None, detail)
            elif not all(type(v) in (int, float) for v in (o, n)):  # bool is no number here
                self.emit_undecidable(path, detail)
            elif key == "multipleOf":
                ratio = Fraction(str(n)) / Fraction(str(o))
                if 1 in (ratio.numerator, ratio.denominator):
                    self.emit_constraint(path, ratio.denominator == 1, detail)
                else:
                    self.emit_undecidable(path, detail)
            else:
                self.emit_constraint(path, n < o if key in (*_UPPER, "maxContains") else n > o, detail)

    def compare_objects(self, old: Schema, new: Schema, path: str, seen: Seen) -> None:
        old_props, new_props = old.get("properties") or {}, new.get("properties") or {}
        old_req, new_req = set(old.get("required") or []), set(new.get("required") or [])
        was_closed, is_closed = _closed(old), _closed(new)
        if was_closed != is_closed:
            kind = "additional_properties_" + ("tightened" if is_closed else "loosened")
            self.emit(path, kind, "unknown properties " + ("rejected" if is_closed else "allowed"))
        for name in old_props:
            if name not in new_props:
                self.property_removed(old, new, name, old_props[name], path, seen)
        for name in new_props:
            if name in old_props:
                self.compare(old_props[name], new_props[name], _child(path, name), seen)
            else:
                self.property_added(old, name, new_props[name], name in new_req - old_req, path, seen)
        for name in sorted(new_req - old_req):
            if name in old_props or name not in new_props:  # new properties were reported above
                self.emit(_child(path, name), "required_added", "property became required")
        for name in sorted(old_req - new_req):
            if name in new_props or name not in old_props:  # removed ones were reported above
                self.emit(_child(path, name), "required_removed", "property no longer required")
        extra = [s.get("additionalProperties") for s in (old, new)]
        if False not in extra and any(isinstance(e, dict) for e in extra):
            old_extra, new_extra = (e if isinstance(e, dict) else {} for e in extra)
            self.compare(old_extra, new_extra, f"{path}.*", seen)

    def admitted(self, schema: Schema, name: str) -> Any:
        """What `schema` admits as the value of property `name` when it does not declare it: its
        matching patternProperties (all of them), else additionalProperties, else
        unevaluatedProperties, else anything (True). None when a pattern cannot be read."""
        matching = []
        for pattern, subschema in (schema.get("patternProperties") or {}).items():
            matches = _matches(pattern, name)
            if matches is None:
                return None
            if matches:
                matching.append(subschema)
        if matching:
            return matching[0] if len(matching) == 1 else {"allOf": matching}
        for key in ("additionalProperties", "unevaluatedProperties"):
            if key in schema:
                return schema[key]
        return True

    def beside(self, old: Any, new: Any, path: str, seen: Seen) -> list[Change]:
        """The breaking changes from `old` to `new` (a property and what the other side admits in
        its place), found by a differ of their own."""
        if old is None or new is None:
            return [Change(path, "constraint_tightened", True, "a patternProperties pattern cannot be read")]
        inner = _Differ(*self.roots, "request" if self.request else "response", self.policy)
        inner.compare(old, new, path, seen)
        return [change for change in inner.changes if change.breaking]

    def equivalent(self, old: Any, new: Any, path: str, seen: Seen) -> bool:
        """Whether the two schemas admit the same instances, as far as the differ tells: no breaking
        change either way."""
        for direction in ("request", "response"):
            inner = _Differ(*self.roots, direction, self.policy)
            inner.compare(old, new, path, seen)
            if any(change.breaking for change in inner.changes):
                return False
        return True

    def property_removed(self, old: Schema, new: Schema, name: str, schema: Any, path: str, seen: Seen) -> None:
        where = _child(path, name)
        required = name in (old.get("required") or []) and name not in (new.get("required") or [])
        admitted = self.admitted(new, name)
        breaks = self.beside(schema, admitted, where, seen)
        detail = "property removed" + (" (was required)" if name in (old.get("required") or []) else "")
        breaking = bool(breaks) or (required and not self.request)
        if breaks:
            if admitted is not True and admitted != {}:
                detail += f"; the new schema admits {_show(admitted)} under its name"
            detail += f" ({breaks[0].kind}: {breaks[0].detail})"
        why = _REQUEST_WHY if self.request else _RESPONSE_WHY if breaks else _RESPONSE_GONE_WHY
        if not self.request and self.policy == "lenient":
            breaking, detail, why = True, f"{detail} ({_LENIENT_READ})", _RESPONSE_GONE_WHY
        self.emit(where, "property_removed", detail, breaking, why)

    def property_added(self, old: Schema, name: str, schema: Any, required: bool, path: str, seen: Seen) -> None:
        where = _child(path, name)
        admitted = self.admitted(old, name)
        breaks = self.beside(admitted, schema, where, seen)
        kind = "required_added" if required else "property_added"
        detail = "new required property" if required else "optional property added"
        breaking = bool(breaks) or (required and self.request)
        if breaks and not (required and self.request):  # a new required property breaks requests anyway
            if admitted is not True and admitted != {}:
                detail += f"; the old schema admitted {_show(admitted)} under its name"
            detail += f" ({breaks[0].kind}: {breaks[0].detail})"
        if self.request and breaking and not required and self.policy == "lenient":
            breaking, detail = False, f"{detail} ({_LENIENT_SENT})"
        self.emit(where, kind, detail, breaking)

    def compare_arrays(self, old: Schema, new: Schema, path: str, seen: Seen) -> None:
        (old_tuple, old_rest), (new_tuple, new_rest) = _array_parts(old), _array_parts(new)
        for i in range(max(len(old_tuple), len(new_tuple))):
            old_item = old_tuple[i] if i < len(old_tuple) else old_rest
            new_item = new_tuple[i] if i < len(new_tuple) else new_rest
            self.compare(old_item, new_item, f"{path}[{i}]", seen)
        if old_rest != {} or new_rest != {}:
            self.compare(old_rest, new_rest, f"{path}[]", seen)

    def same(self, old: Any, new: Any) -> bool:
        """Whether two keyword values are equal once the local $refs in them are expanded."""
        return _key(self.expand(old, 0, _EXPAND_DEPTH)) == _key(self.expand(new, 1, _EXPAND_DEPTH))

    def expanded(self, key: str, old: Schema, new: Schema) -> tuple[Schema, Schema]:
        return ({key: self.expand(old[key], 0, _EXPAND_DEPTH)}, {key: self.expand(new[key], 1, _EXPAND_DEPTH)})

    def expand(self, value: Any, side: int, depth: int) -> Any:
        if isinstance(value, list):
            return [self.expand(item, side, depth) for item in value]
        if not isinstance(value, dict):
            return value
        if depth > 0 and str(value.get("$ref", "")).startswith("#"):
            try:
                value = self.resolve(value, side)[0]
            except (ValueError, LookupError):
                return value
            depth -= 1
        return {key: self.expand(item, side, depth) for key, item in value.items()}

    def compare_subschemas(self, old: Schema, new: Schema, path: str, seen: Seen) -> None:
        """The keywords that hold a subschema, besides properties, items and the combinators."""
        for key in _OPTIONAL_SUBSCHEMAS:
            if key in old or key in new:
                self.compare(old.get(key, {}), new.get(key, {}), f"{path}<{key}>", seen)
        unevaluated = (_unevaluated(old), _unevaluated(new))
        if any(isinstance(value, dict) for value in unevaluated) and False not in unevaluated:
            self.compare(unevaluated[0] if unevaluated[0] is not None else {},
                         unevaluated[1] if unevaluated[1] is not None else {}, f"{path}<unevaluatedProperties>", seen)
        if ("if" in old or "if" in new) and not self.same(old.get("if"), new.get("if")):
            self.emit_undecidable(f"{path}<if>", _describe("if", old, new))
        counted = "maxContains" in old or "maxContains" in new
        if counted and "contains" in old and "contains" in new and not self.equivalent(
                old["contains"], new["contains"], f"{path}<contains>", seen):
            # under maxContains, an item schema that admits more can refuse more arrays: either way
            self.emit_undecidable(f"{path}<contains>", _describe("contains", old, new) + " under maxContains")
        elif "contains" in old and "contains" in new:
            self.compare(old["contains"], new["contains"], f"{path}<contains>", seen)
        elif "contains" in old or "contains" in new:
            self.emit_constraint(path, "contains" in new, _describe("contains", old, new))
        if "not" in old and "not" in new:
            self.compare_negated(old["not"], new["not"], f"{path}<not>", seen)
        elif "not" in old or "not" in new:
            self.emit_constraint(path, "not" in new, _describe("not", old, new))
        self.compare_patterns(old, new, path, seen)
        self.compare_schema_map(old.get("dependentSchemas") or {}, new.get("dependentSchemas") or {},
                                "dependentSchemas", path, seen, loosens_when_added=False)
        self.compare_dependencies(old, new, path, seen)

    def compare_patterns(self, old: Schema, new: Schema, path: str, seen: Seen) -> None:
        """patternProperties, by pattern. A pattern on one side only moves the names it matches from
        what the other side admits for undeclared names (additionalProperties, ...) to its schema,
        and holds the declared properties it matches to it too."""
        old_map, new_map = old.get("patternProperties") or {}, new.get("patternProperties") or {}
        for pattern in sorted(set(old_map) | set(new_map)):
            where = f"{path}<patternProperties {json.dumps(pattern, ensure_ascii=False)}>"
            if pattern in old_map and pattern in new_map:
                self.compare(old_map[pattern], new_map[pattern], where, seen)
                continue
            added = pattern in new_map
            other, other_map = (old, old_map) if added else (new, new_map)
            rest: Any = None if other_map else self.admitted(other, "")
            before, after = (rest, new_map[pattern]) if added else (old_map[pattern], rest)
            breaks = self.beside(before, after, where, seen)
            detail = f"patternProperties entry {'added' if added else 'removed'}"
            if other_map:
                detail += " beside other patterns (relation undecidable: breaking)"
            elif breaks:
                detail += f" ({breaks[0].kind}: {breaks[0].detail})"
            self.emit_constraint(where, self.request == bool(breaks), detail)
            declared = [name for name in (new if added else old).get("properties") or {}
                        if _matches(pattern, name) is not False]  # unreadable: counted, to be safe
            if declared:
                self.emit_constraint(where, added, f"declared properties {', '.join(declared)} "
                                                   f"{'now' if added else 'no longer'} held to it too")

    def compare_negated(self, old: Any, new: Any, path: str, seen: Seen) -> None:
        """`not`: what the inner schema now accepts more, the schema accepts less, so the inner
        schema is compared for the other direction and each change is reported turned around."""
        inner = _Differ(*self.roots, "response" if self.request else "request", self.policy)
        inner.compare(old, new, path, seen)
        for change in inner.changes:
            kind = _INVERSE.get(change.kind, change.kind)
            self.changes.append(Change(change.path, kind, change.breaking, f"inside not: {change.detail}",
                                       _why(kind, self.request) if change.breaking else ""))

    def compare_schema_map(self, old: dict[str, Any], new: dict[str, Any], key: str, path: str, seen: Seen,
                           loosens_when_added: bool) -> None:
        """patternProperties or dependentSchemas: entries compared by name; a new entry constrains
        more (except a pattern that opens a closed object to the names it matches)."""
        for name in sorted(set(old) | set(new)):
            where = f"{path}<{key} {json.dumps(name, ensure_ascii=False)}>"
            if name in old and name in new:
                self.compare(old[name], new[name], where, seen)
            else:
                added = name in new
                self.emit_constraint(where, added != loosens_when_added,
                                     f"{key} entry {'added' if added else 'removed'}")

    def compare_dependencies(self, old: Schema, new: Schema, path: str, seen: Seen) -> None:
        """dependentRequired (and draft-07 `dependencies`, a list or a schema per property)."""
        def required_lists(schema: Schema) -> dict[str, set[str]]:
            found = {name: set(value) for name, value in (schema.get("dependentRequired") or {}).items()}
            for name, value in (schema.get("dependencies") or {}).items():
                if isinstance(value, list):
                    found[name] = found.get(name, set()) | set(value)
            return found

        def schemas(schema: Schema) -> dict[str, Any]:
            return {name: value for name, value in (schema.get("dependencies") or {}).items()
                    if not isinstance(value, list)}

        was, now = required_lists(old), required_lists(new)
        for name in sorted(set(was) | set(now)):
            before, after = was.get(name, set()), now.get(name, set())
            if before == after:
                continue
            where, detail = f"{path}<dependentRequired {json.dumps(name)}>", f"{sorted(before)} -> {sorted(after)}"
            if before <= after or after <= before:
                self.emit_constraint(where, before <= after, f"required with it: {detail}")
            else:
                self.emit_undecidable(where, f"required with it: {detail}")
        self.compare_schema_map(schemas(old), schemas(new), "dependencies", path, seen, loosens_when_added=False)

    def compare_branches(self, old: Schema, new: Schema, key: str, path: str, seen: Seen) -> None:
        old_branches: list[Any] | None = old.get(key)
        new_branches: list[Any] | None = new.get(key)
        if old_branches is None or new_branches is None:
            present = old_branches or new_branches or []
            trivial = all(_is_trivial(self.resolve(b, 0 if old_branches else 1)[0])
                          for b in present)
            if present and not (trivial and key != "allOf"):  # types were compared already
                state = "added" if old_branches is None else "removed"
                self.emit_constraint(path, old_branches is None, f"{key} {state}: {_show(present)}")
            return
        pairs, removed, added = self.pair_branches(old_branches, new_branches)
        for i, j in pairs:
            self.compare(old_branches[i], new_branches[j], f"{path}<{key} {j}>", seen)
        for side, indexes, branches in ((0, removed, old_branches), (1, added, new_branches)):
            for i in indexes:
                branch, where = self.resolve(branches[i], side)[0], f"{path}<{key} {i}>"
                detail = f"{key} branch {'added' if side else 'removed'}: {_show(branch)}"
                if key == "allOf":
                    self.emit_constraint(where, side == 1, detail)
                elif _is_trivial(branch):
                    self.emit_type(where, side == 1, side == 0, detail)
                else:
                    self.emit_constraint(where, side == 0, detail)

    def type_key(self, branch: Any, side: int) -> str:
        branch = self.resolve(branch, side)[0]
        return _key(branch.get("type") if isinstance(branch, dict) else branch)

    def pair_branches(self, old: list[Any], new: list[Any]) -> Pairing:
        """Pair identical branches first (a reordering changes nothing), then branches of equal
        "type", then what is left by position when as many remain on both sides; return the leftovers."""
        pairs: list[tuple[int, int]] = []
        unmatched_old, unmatched_new = list(range(len(old))), list(range(len(new)))
        def identical(i: int, j: int) -> bool:
            return _key(old[i]) == _key(new[j])

        def same_type(i: int, j: int) -> bool:
            return self.type_key(old[i], 0) == self.type_key(new[j], 1)

        for same in (identical, same_type):
            for i in list(unmatched_old):
                match = next((j for j in unmatched_new if same(i, j)), None)
                if match is not None:
                    pairs.append((i, match))
                    unmatched_old.remove(i)
                    unmatched_new.remove(match)
        if len(unmatched_old) == len(unmatched_new):
            pairs += zip(unmatched_old, unmatched_new, strict=True)
            unmatched_old, unmatched_new = [], []
        return sorted(pairs), unmatched_old, unmatched_new
