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


def to_python(pattern: str) -> str:
    """The same pattern for Python's `re`, with \\s \\S \\d \\D \\w \\W meaning what ECMA-262 says."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escape = pattern[index + 1]
            index += 2
            if escape.lower() in _SETS:
                members = _SETS[escape.lower()]
                if escape.islower():
                    out.append(members if in_class else f"[{members}]")
                elif in_class:
                    raise ValueError(f"pattern {pattern!r}: \\{escape} inside a character class is not supported")
                else:
                    out.append(f"[^{members}]")
            else:
                out.append(char + escape)
            continue
        if char == "[" and not in_class:
            in_class = True
            out.append(char)
            if pattern[index + 1:index + 2] == "^":  # a leading ^ or ] belongs to the class
                out.append("^")
                index += 1
            if pattern[index + 1:index + 2] == "]":
                out.append("]")
                index += 1
        elif char == "]" and in_class:
            in_class = False
            out.append(char)
        else:
            out.append(char)
        index += 1
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
