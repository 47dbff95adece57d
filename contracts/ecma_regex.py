"""JSON Schema `pattern`s are ECMA-262 regular expressions; Python's `re` reads a few escapes
differently on str. Found by the engine differential test: for `[^/\\s]`, Python counts
U+001C-U+001F and U+0085 as whitespace and not U+FEFF; ECMA-262 (and jsonschema-rs) the opposite.
This rewrites the class escapes to the ECMA sets before Python compiles a pattern.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

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
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def _class(body: list[str], negated: bool, excluded: list[str], pattern: str) -> str:
    """A class whose members are `body` (already translated) less the negated escapes `excluded`
    (\\S \\D \\W inside it, which Python's `re` would read with its own sets): a positive class
    becomes an alternation, a negated one the finite set it leaves, written out."""
    inner = "".join(body)
    if not excluded:
        return f"[{'^' if negated else ''}{inner}]"
    if not negated:  # [X\S] = X or not-space
        parts = ([f"[{inner}]"] if inner else []) + [f"[^{_SETS[name]}]" for name in excluded]
        return "(?:" + "|".join(parts) + ")"
    # [^X\S] = space and not X: out of a finite set
    candidates = frozenset.intersection(*(_POINTS[name] for name in excluded))
    listed = re.compile(f"[{inner}]") if inner else None
    kept = sorted(c for c in candidates if listed is None or not listed.match(c))
    if not kept:  # ECMA-262 allows a class that matches nothing; so do both engines, spelled so
        return "[^\\x00-\\U0010ffff]"
    return "[" + "".join(_member(c) for c in kept) + "]"


def to_python(pattern: str) -> str:
    """The same pattern for Python's `re`, with \\s \\S \\d \\D \\w \\W meaning what ECMA-262 says
    (inside character classes too)."""
    out: list[str] = []
    body: list[str] = []  # the members of the class being read
    excluded: list[str] = []  # the negated escapes in it
    negated = in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        target = body if in_class else out
        if char == "\\" and index + 1 < len(pattern):
            escape = pattern[index + 1]
            index += 2
            if escape.lower() in _SETS:
                members = _SETS[escape.lower()]
                if escape.islower():
                    target.append(members if in_class else f"[{members}]")
                elif in_class:
                    excluded.append(escape.lower())
                else:
                    out.append(f"[^{members}]")
            else:
                target.append(char + escape)
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
        else:
            target.append(char)
        index += 1
    if in_class:  # unterminated: let the engine say so
        out.append("[" + ("^" if negated else "") + "".join(body))
    return "".join(out)


@lru_cache(maxsize=256)
def compile_ecma(pattern: str) -> re.Pattern[str]:
    return re.compile(to_python(pattern))


_INSTANCE_KEYWORDS = frozenset({"const", "enum", "default", "examples"})  # data, not schemas


def with_python_patterns(schema: Any) -> Any:
    """A copy of `schema` whose every `pattern` is spelled (by `to_python`) so that engines reading
    it with Python or Rust regex semantics match what ECMA-262 matches: for the generated models
    (pydantic's Rust regex counts U+0085 as `\\s`) and for hypothesis-jsonschema (Python's `re`)."""
    if isinstance(schema, dict):
        return {key: to_python(value) if key == "pattern" and isinstance(value, str)
                else value if key in _INSTANCE_KEYWORDS else with_python_patterns(value)
                for key, value in schema.items()}
    if isinstance(schema, list):
        return [with_python_patterns(item) for item in schema]
    return schema
