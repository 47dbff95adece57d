"""The contract-evolution drill, scripted on the library example as its own team would live it.

1. v1 is published on main: locked, generated, and a client generated from it kept aside.
2. An additive change (a new optional request property) is locked at once; the server generated
   from it still serves the v1 client, telling it a newer contract exists (a warning, once).
3. A breaking change (a new required request property) is refused by `lock`; `check --against
   main` fails and says why; `lock --accept-breaking --reason` needs a major version bump and then
   records the reason; `check --against main` passes, and fails again when the record is removed.
   The v1 client is now refused (412) before anything is done.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evidencekit.client.runtime._errors import ContractMismatch, NewerContractWarning
from evidencekit.codegen._cli import main as codegen
from tests.support import REPO, live_server

EXAMPLE = REPO / "examples" / "library"
BOOK = {"title": "Drill", "authors": [{"name": "A. Author"}], "format": "ebook", "published_on": "2026-01-01"}


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True, text=True).stdout


def _set_package(project: Path, package: str) -> None:
    path = project / "pyproject.toml"
    text = path.read_text()
    start = text.index('package = "') + len('package = "')
    path.write_text(text[:start] + package + text[text.index('"', start):])


def _edit(path: Path, change: Any) -> None:
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value, indent=2) + "\n")


def _run(project: Path, *argv: str) -> int:
    return codegen([*argv, "--project", str(project)])


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "library"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("generated", "contracts.lock.json", "__pycache__"))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "drill@example.invalid")
    _git(root, "config", "user.name", "drill")
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.split(".")[0] in ("library_api", "drill_v1")]:
            del sys.modules[name]


def test_the_contract_evolution_drill(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    get_book = project / "contracts" / "get_book"
    # 1. v1 on main, and a client generated from it (its own package: the old client in the field)
    _set_package(project, "drill_v1.generated")
    assert _run(project, "lock") == 0 and _run(project, "generate") == 0
    _set_package(project, "library_api.generated")
    assert _run(project, "generate") == 0
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "v1")
    v1_hash = json.loads((project / "contracts" / "contracts.lock.json").read_text())["operations"]["get_book"][
        "contract_hash"]
    _git(project, "checkout", "-q", "-b", "change")

    # 2. additive: a new optional request property is compatible, locked at once
    _edit(get_book / "mcp.input.schema.json", lambda s: s["properties"].update(include_cover={"type": "boolean"}))
    capsys.readouterr()
    assert _run(project, "lock") == 0
    out = capsys.readouterr().out
    assert "contracts/get_book: mcp input (request): ok        property_added  $.include_cover" in out
    lock = json.loads((project / "contracts" / "contracts.lock.json").read_text())["operations"]["get_book"]
    assert lock["compatible_with"] == [v1_hash] and lock["contract_hash"] != v1_hash
    assert _run(project, "generate") == 0 and _run(project, "check", "--against", "main") == 0
    assert "ok: no unacknowledged breaking change since" in capsys.readouterr().out

    old_client = importlib.import_module("drill_v1.generated.client")
    serve = importlib.import_module("library_api.serve")
    with live_server(serve.app("drill-token")) as base_url:
        with old_client.Client(base_url, token="drill-token") as client, warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            book = client.add_book(BOOK).book
            assert client.get_book({"id": str(book.id)}).book.title == "Drill"
            assert client.get_book({"id": str(book.id)}).book is not None  # the warning is not repeated
        newer = [w for w in seen if issubclass(w.category, NewerContractWarning)]
        assert len(newer) == 1, [str(w.message) for w in seen]
        assert "get_book: the server serves a newer contract" in str(newer[0].message)
        assert v1_hash in str(newer[0].message)
        _git(project, "add", "-A")
        _git(project, "commit", "-qm", "additive")

        # 3. breaking: a new required request property
        _edit(get_book / "mcp.input.schema.json", lambda s: (s["properties"].update(shelf={"type": "string"}),
                                                             s["required"].append("shelf")))
        capsys.readouterr()
        assert _run(project, "lock") == 1
        refused = capsys.readouterr()
        assert ("contracts/get_book: mcp input (request): BREAKING  required_added  $.shelf: new required "
                "property; breaks old clients: a request valid under the old schema may now be refused") in refused.out
        assert "refusing to lock:" in refused.err and "--accept-breaking" in refused.err
        assert _run(project, "check", "--against", "main") == 1
        failed = capsys.readouterr().err
        assert "BREAKING  required_added  $.shelf" in failed and "[NOT ACKNOWLEDGED]" in failed
        assert "1 unacknowledged breaking change since" in failed

        reason = "shelves are required from now on"
        assert _run(project, "lock", "--accept-breaking", "--reason", reason) == 1
        assert "needs a higher major version: the lock has '1', manifest.json says '1'" in capsys.readouterr().err
        _edit(get_book / "manifest.json", lambda m: m.update(version="2"))
        assert _run(project, "lock", "--accept-breaking", "--reason", reason) == 0
        lock = json.loads((project / "contracts" / "contracts.lock.json").read_text())["operations"]["get_book"]
        (accepted,) = lock["breaking_changes"]
        assert accepted["reason"] == reason and accepted["version"] == "2" and lock["compatible_with"] == []
        assert accepted["to"] == lock["contract_hash"] and accepted["from"] != v1_hash  # from the additive one
        assert _run(project, "generate") == 0
        capsys.readouterr()
        assert _run(project, "check", "--against", "main") == 0
        assert f"[acknowledged: {reason}]" in capsys.readouterr().out

        # the record removed by hand: the break is unacknowledged again
        path = project / "contracts" / "contracts.lock.json"
        _edit(path, lambda d: d["operations"]["get_book"].update(breaking_changes=[]))
        assert _run(project, "check", "--against", "main") == 1

    for name in [name for name in sys.modules if name.split(".")[0] == "library_api"]:
        del sys.modules[name]  # the server generated from the breaking change
    serve = importlib.import_module("library_api.serve")
    with live_server(serve.app("drill-token")) as base_url, old_client.Client(base_url, token="drill-token") as client:
        with pytest.raises(ContractMismatch) as refused_call:
            client.get_book({"id": str(book.id)})
        assert refused_call.value.expected == v1_hash
        answer = httpx.post(base_url + "/books/get", json={"id": str(book.id), "shelf": "A"},  # 412: nothing done
                            headers={"X-Contract-Hash": v1_hash, "Authorization": "Bearer drill-token"})
    assert answer.status_code == 412 and answer.json()["code"] == "contract_mismatch"
