"""A corpus of real-world JSON Schemas, each taken through the generator as a contract of its own.

Sources (none written for evidencekit, except the constructs file):
* SchemaStore schemas vendored by check-jsonschema (a pinned dev dependency; their licenses ship
  with it): CI configurations, compose, renovate, dependabot, citation files, ...
* tests/codegen/corpus/mcp_tools.json: inputSchema and outputSchema of every tool of seven MCP
  reference servers (MIT), as their tools/list answered.
* tests/codegen/corpus/constructs.json: hand-written, one schema per construct real contracts use.

For each schema: the loader and the hash accept it, the model is generated (through
codegen._models.render_model, as `generate` does), the OpenAPI document validates, and the model
agrees with the contract on generated instances (evidencekit.testing._model_agreement).
`scripts/model_corpus.py` prints the per-construct table.
"""

from __future__ import annotations

import importlib.resources
import json
import signal
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evidencekit.codegen._config import load_config
from evidencekit.codegen._models import ModelNote, render_model
from evidencekit.codegen._openapi import openapi_document
from evidencekit.contracts._loader import ContractError, Operation, load_operation
from evidencekit.testing import inputs, mutations
from evidencekit.testing._model_agreement import Agreement, agreement, constructs, examples

CORPUS = Path(__file__).resolve().parent / "corpus"
REPO = CORPUS.parents[2]


@dataclass(frozen=True)
class Case:
    source: str  # "schemastore", "mcp", "constructs"
    name: str
    schema: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.source}:{self.name}"


def schemastore() -> Iterator[Case]:
    vendor = importlib.resources.files("check_jsonschema") / "builtin_schemas" / "vendor"
    for entry in sorted(vendor.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".json"):
            yield Case("schemastore", entry.name.removesuffix(".json"), json.loads(entry.read_text(encoding="utf-8")))


def mcp_tools() -> Iterator[Case]:
    document = json.loads((CORPUS / "mcp_tools.json").read_text(encoding="utf-8"))
    for server in document["servers"]:
        for tool in server["tools"]:
            for key in ("inputSchema", "outputSchema"):
                if key in tool:
                    yield Case("mcp", f"{server['server']}/{tool['name']}/{key}", tool[key])


def hand_written() -> Iterator[Case]:
    document = json.loads((CORPUS / "constructs.json").read_text(encoding="utf-8"))
    for name, schema in document["schemas"].items():
        yield Case("constructs", name, schema)


def cases() -> list[Case]:
    return [*schemastore(), *mcp_tools(), *hand_written()]


def contract_for(case: Case, folder: Path) -> Operation:
    """The schema as one operation's contract (its request and its response), as a team would publish it."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "operation": "corpus_case", "python_name": "corpus_case",
        "title": {"en": case.id}, "description": {"en": f"{case.id}, taken through the generator"},
        "variants": {"rest": {"input": "rest.input.schema.json", "output": "rest.output.schema.json"}},
        "model_variant": "rest", "rest": {"method": "POST", "path": "/case", "variant": "rest"},
    }
    for name, value in (("manifest.json", manifest), ("rest.input.schema.json", case.schema),
                        ("rest.output.schema.json", case.schema)):
        (folder / name).write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return load_operation(folder)


_loaded = 0


def generated_model(operation: Operation) -> tuple[type[BaseModel], list[ModelNote]]:
    """The input model `generate` writes for the operation, imported from its source."""
    global _loaded
    source, notes = render_model(operation, "input", "corpus_case_input.py")
    _loaded += 1
    module = types.ModuleType(f"evidencekit_corpus_model_{_loaded}")
    sys.modules[module.__name__] = module  # pydantic resolves the postponed annotations through it
    try:
        exec(compile(source, module.__name__, "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    model = getattr(module, operation.class_prefix + "Input")
    return model, notes


def openapi_problems(operation: Operation, contracts: Path) -> list[str]:
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    document = openapi_document([operation], {}, replace(load_config(REPO), contracts=contracts))
    try:
        validate(document)
    except OpenAPIValidationError as exc:
        return [str(exc).splitlines()[0]]
    return []


@dataclass
class Result:
    case: Case
    agreement: Agreement
    notes: list[ModelNote]
    openapi: list[str]
    skipped: str = ""  # why no instances could be generated (hypothesis-jsonschema's limits)
    refused: str = ""  # why the loader refused the schema as a contract (naming the construct)


class DrawTimeout(BaseException):
    """Raised by the alarm through hypothesis (which would keep an Exception as a test failure)."""


def _draw(schema: dict[str, Any], count: int, seconds: int) -> list[Any]:
    if not seconds:
        return examples(inputs(schema), count)

    def expire(signum: int, frame: Any) -> None:
        raise DrawTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        return examples(inputs(schema), count)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check(case: Case, scratch: Path, count: int, draw_seconds: int = 0) -> Result:
    try:
        operation = contract_for(case, scratch / "corpus_case")
    except ContractError as exc:
        return Result(case, Agreement(), [], [], refused=exc.message)
    model, notes = generated_model(operation)
    problems = openapi_problems(operation, scratch)
    if count == 0:
        return Result(case, Agreement(), notes, problems)
    try:
        drawn = _draw(case.schema, count, draw_seconds)
    except DrawTimeout:
        return Result(case, Agreement(), notes, problems, f"hypothesis-jsonschema drew nothing in {draw_seconds} s")
    except Exception as exc:  # hypothesis-jsonschema cannot draw from every schema
        return Result(case, Agreement(), notes, problems, f"{type(exc).__name__}: {str(exc)[:120]}")
    return Result(case, agreement(case.schema, model, drawn, mutations), notes, problems)


def table(results: list[Result]) -> str:
    """The per-construct agreement table, markdown."""
    per: dict[str, tuple[set[str], Agreement]] = {}
    for result in results:
        for construct in constructs(result.case.schema):
            names, total = per.setdefault(construct, (set(), Agreement()))
            names.add(result.case.id)
            total.add(result.agreement)
    lines = ["| construct | schemas | valid instances | model agrees | invalid mutations | model refuses too |",
             "|---|---|---|---|---|---|"]
    for construct in sorted(per):
        names, total = per[construct]
        lines.append(f"| `{construct}` | {len(names)} | {total.valid} | {total.agreed} | {total.invalid} | "
                     f"{total.refused} |")
    return "\n".join(lines)
