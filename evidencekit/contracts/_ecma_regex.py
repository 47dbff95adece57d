r"""JSON Schema `pattern`s are ECMA-262 regular expressions; Python's `re` reads a few escapes
differently on str. Found by the engine differential test: for `[^/\\s]`, Python counts
U+001C-U+001F and U+0085 as whitespace and not U+FEFF; ECMA-262 (and jsonschema-rs) the opposite.
This rewrites the class escapes to the ECMA sets before Python compiles a pattern, and spells the
ECMA-262 (`u` flag) syntax Python's `re` lacks: `\p{...}` / `\P{...}` Unicode properties (general
categories, scripts, binary properties; expanded to code point ranges with the `regex` package),
`\u{1F600}`, `\cJ`, named groups `(?<name>...)` and `\k<name>`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from evidencekit.contracts._schema_walk import each_subschema

# ECMA-262 WhiteSpace and LineTerminator code points
_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_DIGIT = "0-9"
_WORD = "A-Za-z0-9_"
_SETS = {"s": _SPACE, "d": _DIGIT, "w": _WORD}
# The same sets as code points: finite, so a class that negates one of them can be written out
_POINTS = {"s": frozenset("\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
                          + "".join(chr(c) for c in range(0x2000, 0x200B))),
           "d": frozenset("0123456789"),
           "w": frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")}


def _member(char: str) -> str:
    """One code point as a class member both Python's and Rust's regex read alike."""
    if char.isascii() and (char.isalnum() or char == "_"):
        return char
    point = ord(char)
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"


@lru_cache(maxsize=1)
def _every_code_point() -> str:
    return "".join(map(chr, range(0x110000)))


@lru_cache(maxsize=128)
def _property_runs(name: str) -> tuple[tuple[str, str], ...]:
    """The code point ranges of Unicode property `name` as ECMA-262 spells it in `\\p{name}`."""
    import regex

    try:
        compiled = regex.compile(r"\p{" + name + "}+")
    except regex.error:
        raise re.error(f"unknown Unicode property \\p{{{name}}}") from None
    return tuple((run.group()[0], run.group()[-1]) for run in compiled.finditer(_every_code_point()))


def _property_members(name: str) -> str:
    return "".join(_member(first) if first == last else f"{_member(first)}-{_member(last)}"
                   for first, last in _property_runs(name))


@lru_cache(maxsize=32)
def _property_points(name: str) -> frozenset[str]:
    return frozenset(chr(point) for first, last in _property_runs(name) for point in range(ord(first), ord(last) + 1))


Excluded = tuple[str, Callable[[], frozenset[str]]]  # a negated set inside a class: its members, its points


def _class(body: list[str], negated: bool, excluded: list[Excluded], pattern: str) -> str:
    """A class whose members are `body` (already translated) less the negated escapes `excluded`
    (\\S \\D \\W inside it, which Python's `re` would read with its own sets): a positive class
    becomes an alternation, a negated one the finite set it leaves, written out."""
    inner = "".join(body)
    if not excluded:
        return f"[{'^' if negated else ''}{inner}]"
    if not negated:  # [X\S] = X or not-space
        parts = ([f"[{inner}]"] if inner else []) + [f"[^{members}]" for members, _ in excluded]
        return "(?:" + "|".join(parts) + ")"
    # [^X\S] = space and not X: out of a finite set
    candidates = frozenset.intersection(*(points() for _, points in excluded))
    listed = re.compile(f"[{inner}]") if inner else None
    kept = sorted(c for c in candidates if listed is None or not listed.match(c))
    if not kept:  # ECMA-262 allows a class that matches nothing; so do both engines, spelled so
        return "[^\\x00-\\U0010ffff]"
    return "[" + _ranges(kept) + "]"


def _ranges(chars: list[str]) -> str:
    """Sorted code points as class members, consecutive ones as a range."""
    out: list[str] = []
    start = 0
    for index in range(1, len(chars) + 1):
        if index == len(chars) or ord(chars[index]) != ord(chars[index - 1]) + 1:
            first, last = chars[start], chars[index - 1]
            out.append(_member(first) if first == last else f"{_member(first)}-{_member(last)}")
            start = index
    return "".join(out)


_BRACED = re.compile(r"\{([A-Za-z0-9_=]+)\}")
_NAMED = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)>")


def to_python(pattern: str, *, end: str = "$") -> str:
    """The same pattern for Python's `re`, with \\s \\S \\d \\D \\w \\W meaning what ECMA-262 says
    (inside character classes too). `end` spells `$`: Python's `$` also matches before a last
    newline, ECMA-262's (without the m flag) only at the end; `\\Z` says so to Python's `re`, which
    hypothesis draws strings by (a draw for `^a$|^b$` was "a\\n"), and Rust's regex, which the
    generated models read patterns with, has no `\\Z` but a `$` that means the end."""
    out: list[str] = []
    body: list[str] = []  # the members of the class being read
    excluded: list[Excluded] = []  # the negated escapes in it
    negated = in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        target = body if in_class else out
        if char == "\\" and index + 1 < len(pattern):
            escape = pattern[index + 1]
            index += 2
            braced = _BRACED.match(pattern, index)
            if escape.lower() in _SETS or (escape in "pP" and braced):
                name = escape.lower()
                if escape in "pP" and braced:
                    name, index = braced.group(1), braced.end()
                    members, points = _property_members(name), partial(_property_points, name)
                else:
                    members, points = _SETS[name], partial(_POINTS.__getitem__, name)
                if escape.islower():
                    target.append(members if in_class else f"[{members}]")
                elif in_class:
                    excluded.append((members, points))
                else:
                    out.append(f"[^{members}]")
            elif escape == "u" and braced:  # \u{1F600}
                target.append(_member(chr(int(braced.group(1), 16))))
                index = braced.end()
            elif escape == "c" and index < len(pattern) and pattern[index].isascii() and pattern[index].isalpha():
                target.append(f"\\x{ord(pattern[index]) % 32:02x}")
                index += 1
            elif escape == "k" and not in_class and (named := _NAMED.match(pattern, index)):
                out.append(f"(?P={named.group(1)})")
                index = named.end()
            else:
                target.append(char + escape)
            continue
        if char == "(" and not in_class and pattern.startswith("(?<", index) and (named := _NAMED.match(pattern, index + 2)):
            out.append(f"(?P<{named.group(1)}>")
            index = named.end()
            continue
        if char == "[" and not in_class:
            in_class, negated, body, excluded = True, False, [], []
            if pattern[index + 1:index + 2] == "^":  # a leading ^ or ] belongs to the class
                negated = True
                index += 1
            if pattern[index + 1:index + 2] == "]":
                body.append("]")
                index += 1
        elif char == "]" and in_class:
            in_class = False
            out.append(_class(body, negated, excluded, pattern))
        elif char == "$" and not in_class:
            out.append(end)
        else:
            target.append(char)
        index += 1
    if in_class:  # unterminated: let the engine say so
        out.append("[" + ("^" if negated else "") + "".join(body))
    return "".join(out)


@lru_cache(maxsize=256)
def compile_ecma(pattern: str) -> re.Pattern[str]:
    return re.compile(to_python(pattern, end=r"\Z"))


def with_python_patterns(schema: Any, *, end: str = "$") -> Any:
    """A copy of `schema` whose every `pattern` is spelled (by `to_python`) so that engines reading
    it with Python or Rust regex semantics match what ECMA-262 matches: for the generated models
    (pydantic's Rust regex counts U+0085 as `\\s`) and, with `end="\\Z"`, for hypothesis-jsonschema
    (Python's `re`)."""
    if isinstance(schema, dict):
        copied = each_subschema(schema, lambda sub: with_python_patterns(sub, end=end))
        if isinstance(schema.get("pattern"), str):
            copied["pattern"] = to_python(schema["pattern"], end=end)
        return copied
    if isinstance(schema, list):
        return [with_python_patterns(item, end=end) for item in schema]
    return schema


def _is_ecma_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compile_ecma(instance)  # re.error: not a pattern this translation (so ECMA-262) accepts
    return True


@lru_cache(maxsize=1)
def _schema_formats() -> Any:
    import jsonschema

    checker = jsonschema.FormatChecker()
    checker.checks("regex", raises=re.error)(_is_ecma_regex)
    return checker


def check_schema(schema: Any) -> None:
    """jsonschema's `check_schema` for the schema's dialect (draft-07 by default), with every
    `pattern` checked as an ECMA-262 regex rather than by Python's `re` (which refuses `\\p{L}`).
    Raises jsonschema.SchemaError."""
    import jsonschema
    from jsonschema.exceptions import best_match

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    error = best_match(cls(cls.META_SCHEMA, format_checker=_schema_formats()).iter_errors(schema))
    if error is not None:
        raise jsonschema.SchemaError.create_from(error)
