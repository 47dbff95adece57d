"""The walkthrough of examples/library/README.md, as a new project would run it: the toolkit installed
from its wheel into a fresh virtual environment (no repository on the path), the example's
contracts locked, code generated and checked, then the example's own tests (its REST and MCP
tests and the conformance plugin's) run with that environment's pytest.

Slow (a wheel build and a `pip install` from the package index: a minute or two).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from evidencekit.codegen._handler_check import MYPY_MISSING

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "library"
# Not in the snapshot the wheel is built from: the top-level folders of environments, caches,
# earlier builds and everything that is not packaged; bytecode anywhere.
SNAPSHOT_SKIP = {".git", ".venv", "venv", "build", "dist", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                 ".hypothesis", "var", "examples", "tests"}
# What the walkthrough writes itself, and what a developer's run of it leaves (examples/library/.gitignore).
EXAMPLE_IGNORE = shutil.ignore_patterns(
    "generated", "contracts.lock.json", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache",
    ".mypy_cache")
REPOSITORY_FOLDERS = ("contracts", "server", "client", "codegen")
GENERATED = "library_api/generated"


def snapshot_ignore(folder: str, names: list[str]) -> set[str]:
    top = Path(folder) == ROOT
    return {name for name in names if name == "__pycache__" or name.endswith(".egg-info")
            or (top and name in SNAPSHOT_SKIP)}


def clean_env(venv: Path | None = None) -> dict[str, str]:
    """The environment a new shell would have: nothing of this test run's Python setup."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
           and not key.startswith(("PYTEST_", "COV_"))}
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


def run(command: list[str | Path], cwd: Path, timeout: float, env: dict[str, str]) -> str:
    """Run one step; on failure the assertion shows the command, its exit status and its output."""
    args = [str(part) for part in command]
    try:
        done = subprocess.run(args, cwd=cwd, env=env, check=False, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"timed out after {timeout} s: {' '.join(args)}\n"
                             f"--- stdout\n{exc.stdout!r}\n--- stderr\n{exc.stderr!r}") from None
    assert done.returncode == 0, (f"exit {done.returncode}: {' '.join(args)} (in {cwd})\n"
                                  f"--- stdout\n{done.stdout[-20000:]}\n--- stderr\n{done.stderr[-20000:]}")
    return done.stdout


def tree_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` but bytecode caches: size and modification time."""
    state = {}
    for path in folder.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            stat = path.stat()
            state[path.relative_to(folder).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return state


def test_the_library_walkthrough_from_the_wheel(tmp_path: Path) -> None:
    # 1. The toolkit's wheel, built from a snapshot of the working tree (nothing is written into it).
    source, wheels = tmp_path / "evidencekit-src", tmp_path / "wheels"
    shutil.copytree(ROOT, source, symlinks=True, ignore=snapshot_ignore)
    run([sys.executable, "-m", "build", "--wheel", "--outdir", wheels, source], tmp_path, 900, clean_env())
    [wheel] = wheels.glob("evidencekit-*.whl")

    # 2. A fresh virtual environment with the wheel and the extras the walkthrough uses.
    venv = tmp_path / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    run([base_python, "-m", "venv", venv], tmp_path, 300, clean_env())
    env = clean_env(venv)
    python, evidencekit = venv / "bin" / "python", venv / "bin" / "evidencekit"
    run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         f"{wheel}[codegen,testing]"], tmp_path, 1200, env)
    [site_packages] = (venv / "lib").glob("python*/site-packages")
    assert not [name for name in REPOSITORY_FOLDERS if (site_packages / name).exists()], \
        sorted(path.name for path in site_packages.iterdir())
    installed = run([python, "-c", "import evidencekit; print(evidencekit.__file__)"], tmp_path, 60, env)
    assert Path(installed.strip()).is_relative_to(site_packages), installed
    # The toolkit alone: none of the research service's store or parsers, and its commands say so.
    found = run([python, "-c", "import importlib.util as u; print([m for m in ('tortoise', 'lxml', 'parsel', "
                 "'pysrt', 'charset_normalizer', 'uuid_utils') if u.find_spec(m)])"], tmp_path, 60, env)
    assert found.strip() == "[]", found
    packages = run([python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"], tmp_path, 120, env)
    print(f"a toolkit install ([codegen,testing]): {len(packages.split())} packages")
    # The service's commands are apart (`research-evidence`) and not offered here: help and `serve` are the
    # toolkit's; a service command names the extra it needs.
    shown = run([evidencekit, "--help"], tmp_path, 60, env)
    assert "SOSOAPI" not in shown and "retrieve" not in shown and "serve MODULE:NAME" in shown, shown
    bare = subprocess.run([evidencekit, "serve"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert bare.returncode == 2 and "app" in bare.stderr and "tortoise" not in bare.stderr, bare.stderr
    for command in ([evidencekit, "retrieve", "https://example.org/"], [venv / "bin" / "research-evidence", "serve"]):
        refused = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and "pip install 'evidencekit[service]'" in refused.stderr, refused.stderr
    completion = run([evidencekit, "completion", "bash"], tmp_path, 60, env)
    assert "codegen" in completion and "conformance" in completion

    # A new project from this install alone: init, serve, the gate on REST, MCP over HTTP and stdio.
    run([evidencekit, "init", "demo"], tmp_path, 300, env)
    with subprocess.Popen([evidencekit, "serve", "demo.app:create", "--port", "0"], cwd=tmp_path / "demo", env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as demo:
        try:
            assert demo.stdout is not None
            banner = demo.stdout.readline()
            assert " at http://127.0.0.1:" in banner, banner
            base = banner.split(" at ", 1)[1].split()[0]
            gate = run([evidencekit, "conformance", "--url", base, "--mcp-url", base + "/mcp",
                        "--mcp-stdio", f"{evidencekit} mcp demo.app:create_stdio"], tmp_path / "demo", 300, env)
        finally:
            demo.terminate()
            demo.communicate(timeout=30)
    assert "conforms: 0 violations (rest 0, mcp-http 0, mcp-stdio 0)" in gate, gate

    # 3. The example project, as its repository holds it (no lock, no generated code).
    project = tmp_path / "library"
    shutil.copytree(EXAMPLE, project, ignore=EXAMPLE_IGNORE)
    assert not (project / GENERATED).exists() and not (project / "contracts" / "contracts.lock.json").exists()
    before = tree_state(site_packages)

    # 4. lock, generate, check.
    locked = run([evidencekit, "codegen", "lock"], project, 300, env)
    assert "lock updated" in locked and "add_book" in locked and "search_books" in locked, locked
    assert (project / "contracts" / "contracts.lock.json").is_file()
    generated = run([evidencekit, "codegen", "generate"], project, 300, env)
    assert f"wrote {GENERATED}/app.py" in generated and "from 3 contracts" in generated, generated
    for module in ("app.py", "client.py", "handlers.py", "mcp_tools.py", "rest.py", "openapi.json"):
        assert (project / GENERATED / module).is_file(), module
    checked = run([evidencekit, "codegen", "check"], project, 300, env)
    *notes, verdict = checked.strip().splitlines()
    assert verdict.startswith("ok: 3 contracts match the lock, generated code is current"), checked
    # the toolkit's extras bring no mypy: the handlers' type check says it was skipped, and how not to
    assert notes == [MYPY_MISSING], checked
    assert tree_state(site_packages) == before, "codegen wrote into site-packages"

    # 5. The example's tests: REST and MCP through the generated client and the SDK, then conformance.
    report = tmp_path / "pytest-report.xml"
    tested = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"],
                 project, 1200, env)
    print(locked, generated, checked, tested, sep="\n")  # shown with -s, and with a failure
    summary = tested.strip().splitlines()[-1]
    assert " passed" in summary, tested
    for bad in ("failed", "error", "skipped", "xfailed", "xpassed", "deselected", "no tests ran"):
        assert bad not in summary, tested
    names = {case.get("name", "").split("[")[0] for case in ElementTree.parse(report).iter("testcase")}
    assert {"test_mcp_conformance", "test_rest_conformance", "test_mcp_over_streamable_http",
            "test_a_book_added_is_found_by_search_and_by_id"} <= names, (names, tested)
