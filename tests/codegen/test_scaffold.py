"""`evidencekit init` then at most four commands: a served project that passes the conformance gate
on REST, MCP over HTTP and MCP over stdio, and its own test suite, with nothing written by hand."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from tests.public_api import private_uses
from tests.support import eventually

ROOT = Path(__file__).resolve().parents[2]


def evidencekit(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evidencekit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_init_then_serve_and_the_gate_on_every_surface(tmp_path: Path) -> None:
    made = evidencekit("init", "demo", cwd=tmp_path)  # 1
    assert made.returncode == 0, made.stderr
    project = tmp_path / "demo"
    assert "evidencekit serve demo.app:create" in made.stdout and "evidencekit conformance" in made.stdout
    for written in ("pyproject.toml", "contracts/greet/manifest.json", "contracts/contracts.lock.json",
                    "demo/generated/app.py", "demo/handlers.py", "demo/app.py", "tests/test_conformance.py"):
        assert (project / written).is_file(), written
    server = subprocess.Popen([sys.executable, "-m", "evidencekit", "serve", "demo.app:create", "--port", "0"],  # 2
                              cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        banner = server.stdout.readline()
        base = re.search(r"at (http://\S+)", banner)
        assert base is not None, banner + (server.stderr.read() if server.stderr else "")
        url = base[1]
        def greet() -> httpx.Response | None:
            try:
                return httpx.post(url + "/greet", json={"name": "Ada"})
            except httpx.TransportError:  # not listening yet
                return None

        greeted = eventually(greet, what="the scaffolded server to answer")
        assert greeted.status_code == 200 and greeted.json() == {"greeting": "Hello, Ada!"}
        checked = evidencekit("conformance", "--url", url, "--mcp-url", url + "/mcp",  # 3
                              "--mcp-stdio", f"{sys.executable} -m evidencekit mcp demo.app:create_stdio", cwd=project)
    finally:
        server.terminate()
        server.communicate(timeout=30)  # waits, and closes its pipes
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "conforms: 0 violations (rest 0, mcp-http 0, mcp-stdio 0)" in checked.stdout
    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,  # 4
                            capture_output=True, text=True, timeout=300, check=False,
                            env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")})
    assert tested.returncode == 0 and "2 passed" in tested.stdout, tested.stdout[-2000:]
    checked_code = evidencekit("codegen", "check", cwd=project)
    assert checked_code.returncode == 0, checked_code.stderr


def test_init_from_contracts_already_written_gives_a_stub_per_operation(tmp_path: Path) -> None:
    made = evidencekit("init", "library", "--contracts", str(ROOT / "examples" / "library" / "contracts"), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    handlers = (tmp_path / "library" / "library" / "handlers.py").read_text()
    for operation in ("add_book", "get_book", "search_books"):
        assert f"async def {operation}(self, payload:" in handlers
    assert handlers.count("raise NotImplementedError") == 3
    written = sorted((tmp_path / "library").rglob("*.py"))  # what init wrote, its generated code included
    assert len(written) > 10
    assert [use for path in written for use in private_uses(path.read_text(), str(path.relative_to(tmp_path)))] == []
    again = evidencekit("init", "library", cwd=tmp_path)
    assert again.returncode == 2 and "init starts a new project" in again.stderr  # nothing is overwritten
