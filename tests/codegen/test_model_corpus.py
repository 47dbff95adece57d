"""The generator over real-world schemas (tests/codegen/model_corpus.py): every schema is accepted by
the loader and the hash, its model agrees with the contract on generated instances (accepts each
and dumps it back unchanged), and its OpenAPI document validates.

`scripts/model_corpus.py` runs the same checks with more instances and prints the per-construct table.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.codegen.model_corpus import Case, cases, check

# hypothesis-jsonschema needs 7 s to minutes to draw from these large schemas (measured with 10
# instances: github-workflows 79 s, woodpecker-ci 64 s, circle-ci, dependabot, gitlab-ci, renovate and
# github-issue-forms over 120 s): here their model and OpenAPI document are checked without
# instances; scripts/model_corpus.py draws instances from them too.
NO_INSTANCES_HERE = {
    f"schemastore:{name}" for name in (
        "circle-ci", "dependabot", "github-issue-forms", "gitlab-ci", "renovate", "github-workflows",
        "woodpecker-ci", "travis", "citation-file-format", "mergify", "buildkite", "taskfile")
}
# datamodel-code-generator itself takes ~30 s on it (5.5 MB of models): only scripts/model_corpus.py takes it
NOT_HERE = {"schemastore:azure-pipelines"}
# Refused as contracts, by a message naming the construct: a contract must be self-contained.
REFUSED = {"schemastore:drone-ci": "$ref 'kubernetes-definitions.json#/definitions/io.k8s"}
CASES = [case for case in cases() if case.id not in NOT_HERE]


def test_the_corpus_is_what_it_says() -> None:
    sources = {case.source for case in CASES}
    assert sources == {"schemastore", "mcp", "constructs"}
    assert sum(case.source == "schemastore" for case in CASES) >= 25
    assert sum(case.source == "mcp" for case in CASES) >= 50  # input and output schemas of 52 tools
    assert {case.id for case in CASES} >= NO_INSTANCES_HERE and {case.id for case in cases()} >= NOT_HERE


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_model_agrees_and_openapi_validates(case: Case, tmp_path: Path) -> None:
    result = check(case, tmp_path, 0 if case.id in NO_INSTANCES_HERE else 4)
    if case.id in REFUSED:
        assert REFUSED[case.id] in result.refused
        return
    assert not result.refused, result.refused
    assert result.openapi == [], result.openapi
    assert not result.skipped, result.skipped
    done = result.agreement
    assert done.disagreements == [] and done.agreed == done.valid
    if case.id not in NO_INSTANCES_HERE:
        assert done.valid > 0, "no instance the contract accepts was drawn"


def test_open_objects_keep_unknown_properties_and_loosenings_are_named(tmp_path: Path) -> None:
    by_id = {case.id: case for case in CASES}
    result = check(by_id["constructs:pattern-properties-closed"], tmp_path / "a", 8)
    assert [str(note.message) for note in result.notes] == [
        "patternProperties at #: the model accepts any extra property; the contract check enforces it"]
    assert result.agreement.valid and result.agreement.agreed == result.agreement.valid
    conditional = check(by_id["constructs:if-then-else"], tmp_path / "b", 8)
    assert {str(note.message).split(" at ")[0] for note in conditional.notes} == {"if", "then", "else"}
    assert conditional.agreement.agreed == conditional.agreement.valid > 0


def test_generated_models_pass_mypy_strict(tmp_path: Path) -> None:
    """The models of every corpus schema but the largest (formatted as `generate` writes them)
    type-check under mypy --strict with pydantic's plugin."""
    from evidencekit.codegen._formatting import format_python
    from evidencekit.codegen._models import render_model
    from tests.codegen.model_corpus import contract_for

    sources: dict[str, str] = {}
    for number, case in enumerate(CASES):
        if case.id in REFUSED or case.id in NO_INSTANCES_HERE:
            continue
        operation = contract_for(case, tmp_path / "contracts" / str(number) / "corpus_case")
        sources[f"model_{number}.py"] = render_model(operation, "input", f"model_{number}.py")[0]
    package = tmp_path / "corpus_models"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, source in format_python(sources).items():
        (package / name).write_text(source)
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\nplugins = pydantic.mypy\ncache_dir = .mypy_cache\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "corpus_models"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"no issues found in {len(sources) + 1} source files" in done.stdout


def test_every_corpus_schema_compiles_for_serving() -> None:
    """`codegen lock` refuses a schema the serving validator (jsonschema-rs) cannot compile; every
    schema of the corpus the loader takes compiles (the refused one's remote $ref is never fetched)."""
    from evidencekit.contracts._validation import compile_fast

    failing = []
    for case in cases():
        if case.id in REFUSED:
            continue
        try:
            compile_fast(case.schema)
        except ValueError as exc:
            failing.append(f"{case.id}: {exc}")
    assert failing == []
