"""Schemathesis, every check, against the served OpenAPI document of the real service: what the
document declares is what the server answers (statuses, bodies, headers, valid and invalid data)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ST = Path(sys.executable).with_name("st")
CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_the_served_openapi_document_holds_under_schemathesis(server: dict[str, Any]) -> None:
    done = subprocess.run(
        [str(ST), "--config-file", str(CONFIG), "run", server["base"] + "/openapi.json", "-H", f"Authorization: Bearer {server['token']}",
         "--checks", "all", "--max-examples", "25", "--seed", "1", "--no-color"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    counted = re.search(r"(\d+) generated, (\d+) passed", done.stdout)
    assert counted is not None and int(counted[1]) == int(counted[2]) > 100, done.stdout[-2000:]
