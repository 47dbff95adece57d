"""README.md's examples run as printed (against the real service; the page URL points at a local
origin instead of example.com), so the first thing a newcomer copies keeps working."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.origin import Reply, serve_origin
from tests.support import allow_origin, running_service

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PAGE = (b"<html lang='en'><head><title>Research notes</title></head><body><main><h1>Research notes</h1>"
        b"<p>Findings from the first study, all of them stable across ten samples.</p></main></body></html>")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_the_python_client_example_runs_as_printed(tmp_path: Path) -> None:
    [example] = blocks("python")
    with serve_origin() as origin, running_service(tmp_path, allow=allow_origin(origin.url)) as service:
        page = origin.reply("/research-notes", Reply(PAGE))
        host_and_path = page.split("://", 1)[1]
        program = example.replace("https://example.com/research-notes", page).replace(
            "documents/example.com/research-notes", f"documents/{host_and_path}")
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_URL": service["base"],
               "SOSOAPI_ACCESS_TOKEN": service["token"], "EVIDENCEKIT_WORKSPACE": service["workspace_id"]}
        done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True,
                              timeout=120, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "completed ready None Research notes"
    assert lines[1].startswith("Findings from the first study")
    assert lines[2].startswith(f"{page} # Research notes")


def test_the_python_client_example_says_when_nothing_was_retrieved(tmp_path: Path) -> None:
    """A page that is not there (or a machine offline) settles without success: the example says so
    and exits 1, instead of asking for a document that was never stored (NotFound, a traceback)."""
    [example] = blocks("python")
    with serve_origin() as origin, running_service(tmp_path, allow=allow_origin(origin.url)) as service:
        gone = origin.reply("/research-notes", Reply(b"gone", 404, "text/plain"))
        program = example.replace("https://example.com/research-notes", gone)
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_URL": service["base"],
               "SOSOAPI_ACCESS_TOKEN": service["token"], "EVIDENCEKIT_WORKSPACE": service["workspace_id"]}
        done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True,
                              timeout=120, check=False, cwd=tmp_path)
    assert (done.returncode, done.stderr.strip()) == (1, "not retrieved: completed not_found"), done.stderr


def test_the_mcp_client_config_is_json_naming_both_transports() -> None:
    [config] = blocks("json")
    servers = json.loads(config)["mcpServers"]
    assert servers["evidencekit"]["args"] == ["mcp"] and "SOSOAPI_ACCESS_TOKEN" in servers["evidencekit"]["env"]
    assert servers["evidencekit-http"]["url"].endswith("/mcp")
