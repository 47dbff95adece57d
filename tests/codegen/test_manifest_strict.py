"""A manifest is checked against the closed manifest schema at `lock`, `generate` and `check`: an
unknown or missing key is one line naming the file, the key and its JSON path, exit 2, no traceback."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evidencekit.codegen._cli import main as codegen
from evidencekit.codegen._scaffold import main as init


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project as `evidencekit init` makes it (locked and generated)."""
    project = tmp_path_factory.mktemp("init") / "demo"
    assert init([str(project)]) == 0
    return project


@pytest.fixture
def project(made: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "demo"
    shutil.copytree(made, copy)
    return copy


def edit_manifest(project: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    path = project / "contracts" / "greet" / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest, indent=2))
    return path


def refused(project: Path, capsys: pytest.CaptureFixture[str], *expected: str) -> None:
    """`lock`, `generate` and `check` each: exit 2, one line on stderr naming the file and `expected`."""
    for command in ("lock", "generate", "check"):
        capsys.readouterr()
        assert codegen([command, "--project", str(project)]) == 2, command
        captured = capsys.readouterr()
        lines = captured.err.splitlines()
        assert len(lines) == 1, (command, captured.err)
        assert "Traceback" not in captured.err + captured.out
        assert str(project / "contracts" / "greet" / "manifest.json") in lines[0], lines[0]
        for text in expected:
            assert text in lines[0], (command, lines[0])


def test_a_misspelled_key_at_depth_two_names_the_key_it_meant(project: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    edit_manifest(project, lambda m: m["mcp"].__setitem__("anotations", m["mcp"].pop("annotations")))
    refused(project, capsys, "$.mcp.anotations", "unknown key 'anotations'", "did you mean 'annotations'?")


def test_a_missing_required_key_is_named_with_its_path(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_manifest(project, lambda m: m["rest"].pop("variant"))
    refused(project, capsys, "$.rest.variant", "missing required key 'variant'")


def test_an_unknown_top_level_key_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_manifest(project, lambda m: m.__setitem__("completion_rules", "done when answered"))
    refused(project, capsys, "$.completion_rules", "did you mean 'completion_rule'?")


def test_an_old_version_with_a_key_refused_now_stays_comparable(project: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`codegen diff OLD NEW`: the old side (a copy from history, say) may hold a key the schema no
    longer knows and is still compared; the same key on the new side is refused."""
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(project / "contracts" / "greet", old)
    shutil.copytree(project / "contracts" / "greet", new)
    for folder in (old, new):
        path = folder / "manifest.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "x_owner": "team a"}))
    assert codegen(["diff", str(old), str(project / "contracts" / "greet")]) == 0
    capsys.readouterr()
    assert codegen(["diff", str(project / "contracts" / "greet"), str(new)]) == 2
    assert "$.x_owner: unknown key 'x_owner'" in capsys.readouterr().err
