"""A manifest against the published manifest schema (manifest.schema.json): one line per problem.

The schema is closed wherever a manifest has a fixed set of keys, so a misspelled key is refused
where it is written, naming its JSON path and the key it probably meant, instead of being ignored
(and crashing, or silently changing nothing, later). A version from git history may predate a key
the schema no longer knows: read with `strict=False`, unknown keys are tolerated there, and
everything else is still checked.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

MANIFEST_SCHEMA = Path(__file__).resolve().parent / "manifest.schema.json"
_UNKNOWN = {"additionalProperties", "unevaluatedProperties"}


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(MANIFEST_SCHEMA.read_text(encoding="utf-8")))


def _member(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"


def _unknown(error: jsonschema.ValidationError) -> Iterator[str]:
    known = sorted(error.schema.get("properties", {})) if isinstance(error.schema, dict) else []
    instance: dict[str, Any] = error.instance if isinstance(error.instance, dict) else {}
    for key in sorted(set(instance) - set(known)):
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else f"; known here: {', '.join(known)}"
        yield f"{_member(error.json_path, key)}: unknown key {key!r}{hint}"


def _missing(error: jsonschema.ValidationError) -> Iterator[str]:
    required = error.validator_value if isinstance(error.validator_value, list) else []
    for key in required:
        if isinstance(error.instance, dict) and key not in error.instance:
            yield f"{_member(error.json_path, key)}: missing required key {key!r}"


def _lines(errors: Iterable[jsonschema.ValidationError], strict: bool) -> Iterator[str]:
    for error in errors:
        if error.validator in _UNKNOWN and isinstance(error.instance, dict):
            if strict:
                yield from _unknown(error)
        elif error.validator == "required":
            yield from _missing(error)
        else:
            yield f"{error.json_path}: {error.message}"


def manifest_problems(manifest: Any, *, strict: bool = True) -> list[str]:
    """Every way `manifest` breaks the manifest schema, one line each (JSON path first); empty when
    it is valid. `strict=False` tolerates keys the schema does not know (a version from history)."""
    if not isinstance(manifest, dict):
        return ["$: a manifest must be a JSON object"]
    errors = sorted(_validator().iter_errors(manifest), key=lambda error: (error.json_path, error.validator))
    return list(dict.fromkeys(_lines(errors, strict)))
