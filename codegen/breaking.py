"""Whether a change of one operation's contract breaks its clients: every finding, one line each.

`diff` prints these for two folders, `lock` before it accepts a change (refusing a breaking one
unless acknowledged), and `check --against REF` for every operation changed since REF.

A break is acknowledged by a reason recorded in the lock and a higher major `version` in the
operation's manifest (a manifest without `version` is version 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidencekit.codegen.manifest_diff import manifest_changes
from evidencekit.codegen.schema_diff import diff_schemas
from evidencekit.contracts.loader import Operation


@dataclass(frozen=True)
class Finding:
    where: str  # "manifest", "mcp input (request)", "operation", "variant rest"
    line: str  # "BREAKING  kind  $.path: detail; why" or "ok  ..."
    breaking: bool

    def __str__(self) -> str:
        return f"{self.where}: {self.line}"


def _line(breaking: bool, text: str) -> str:
    return f"{'BREAKING' if breaking else 'ok':<10}{text}"


def operation_findings(before: Operation, after: Operation) -> list[Finding]:
    """Every change from `before` to `after` clients could notice, classified (schemas by direction)."""
    findings: list[Finding] = []
    if before.name != after.name:
        findings.append(Finding("operation", _line(True, f"renamed {before.name!r} -> {after.name!r}; "
                                                         "breaks old clients: they call it by its name"), True))
    for bad, what in manifest_changes(before.manifest, after.manifest):
        why = "; breaks old clients: they call the operation by it" if bad else ""
        findings.append(Finding("manifest", _line(bad, what + why), bad))
    for name in sorted(set(before.variants) | set(after.variants)):
        if name not in after.variants:
            findings.append(Finding(f"variant {name}", _line(True, "removed; breaks old clients of this variant"), True))
            continue
        if name not in before.variants:
            findings.append(Finding(f"variant {name}", _line(False, "added"), False))
            continue
        was, now = before.variants[name], after.variants[name]
        for label, old, new, direction in ((f"{name} input (request)", was.input_schema, now.input_schema, "request"),
                                           (f"{name} output (response)", was.output_schema, now.output_schema,
                                            "response")):
            for change in diff_schemas(old, new, direction):  # type: ignore[arg-type]
                findings.append(Finding(label, change.line(), change.breaking))
    return findings


_MAJOR = re.compile(r"\s*v?(\d+)")


def declared_version(operation: Operation) -> str:
    return str(operation.manifest.get("version", "1"))


def major(version: str) -> int:
    """The leading number of a version ("2.1" -> 2); 1 when there is none."""
    found = _MAJOR.match(version)
    return int(found.group(1)) if found else 1
