from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def admin(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "EVIDENCEKIT_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "evidencekit", "admin", *args], env=env, cwd=data_dir,
                          capture_output=True, text=True, timeout=60, check=False)


def test_bootstrap_is_idempotent_and_prints_workspace_and_token(tmp_path: Path) -> None:
    first = admin(tmp_path, "bootstrap", "--json")
    second = admin(tmp_path, "bootstrap", "--json")
    assert first.returncode == 0, first.stderr
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert set(one) == {"workspace_id", "token"} and one == two
    assert (tmp_path / "evidencekit.sqlite3").exists()
    assert oct((tmp_path / "bootstrap-token").stat().st_mode & 0o777) == "0o600"


def test_admin_commands_and_clear_errors(tmp_path: Path) -> None:
    workspace = json.loads(admin(tmp_path, "workspace", "lab").stdout)["workspace_id"]
    assert admin(tmp_path, "user", "ana").returncode == 0
    member = admin(tmp_path, "member", workspace, "ana", "--role", "viewer")
    assert json.loads(member.stdout)["role"] == "viewer"
    token = json.loads(admin(tmp_path, "token", "ana").stdout)
    assert token["token"].startswith("ek_") and token["capabilities"] == ["agent:research"]
    listed = admin(tmp_path, "tokens", "ana")
    assert token["token"] not in listed.stdout and token["token_id"] in listed.stdout
    assert json.loads(admin(tmp_path, "revoke", token["token_id"]).stdout)["revoked"] is True
    missing = admin(tmp_path, "member", workspace, "nobody")
    assert missing.returncode == 1 and missing.stderr.startswith("evidencekit admin:")
    assert "Traceback" not in missing.stderr
