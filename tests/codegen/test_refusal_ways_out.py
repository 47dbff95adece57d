"""Refusals name every way out: a break the lenient policy accepts says so with the pyproject line
that chooses it, and a `--compatibility` flag that differs from pyproject says what `check` uses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.codegen.test_compatibility_policy import add_shelf, codegen, commit, git, open_input
from tests.support import edit_json, library_project

PYPROJECT_LINES = '  [tool.evidencekit.codegen]\n  compatibility = "lenient"\n'


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """The example, its get_book input open, locked and committed (the lock finds what it pinned in git)."""
    with library_project(tmp_path, open_input) as folder:
        git(folder, "init", "-q", "-b", "main")
        commit(folder, "locked")
        yield folder


def test_a_refused_break_that_lenient_accepts_names_lenient_and_the_line(project: Path) -> None:
    add_shelf(project)
    refused = codegen(project, "lock")
    assert refused.returncode == 1
    assert "`compatibility = \"lenient\"` accepts all of them (it assumes clients send only the properties their " \
           "schema declares and read only those it declares)" in refused.stderr, refused.stderr
    assert PYPROJECT_LINES in refused.stderr


def test_lenient_is_offered_for_the_breaks_it_accepts_and_only_then(project: Path) -> None:
    add_shelf(project)
    schema = project / "contracts/get_book/mcp.input.schema.json"
    schema.write_text(schema.read_text().replace('"required": [', '"required": ["floor", ', 1))
    both = codegen(project, "lock")
    assert both.returncode == 1 and "required_added" in both.stdout, both.stdout
    assert "`compatibility = \"lenient\"` accepts 1 of the 2 (" in both.stderr, both.stderr
    edit_json(schema, lambda value: value["properties"].pop("shelf"))
    required_only = codegen(project, "lock")
    assert required_only.returncode == 1 and "lenient" not in required_only.stderr, required_only.stderr


def test_a_flag_that_differs_from_pyproject_says_what_check_will_use(project: Path) -> None:
    git(project, "add", "-f", "contracts/contracts.lock.json")  # the example ignores it; a team commits it
    commit(project, "the lock")
    add_shelf(project)
    locked = codegen(project, "lock", "--compatibility", "lenient")
    assert locked.returncode == 0, locked.stdout + locked.stderr
    assert ("note: --compatibility lenient holds for this run only; pyproject.toml says compatibility = "
            "\"semantic\", and `check` (with --against) and `generate` will judge by that. To make them agree, "
            "write under [tool.evidencekit.codegen] in pyproject.toml: compatibility = \"lenient\"") in locked.stdout
    commit(project, "shelf, locked leniently")
    checked = codegen(project, "check", "--against", "HEAD~1")
    assert checked.returncode == 1
    assert "BREAKING  property_added  $.shelf" in checked.stderr and PYPROJECT_LINES in checked.stderr, checked.stderr
