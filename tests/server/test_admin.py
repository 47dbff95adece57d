from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path

from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Membership, Receipt, Workspace

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
    assert oct((tmp_path / "evidencekit.sqlite3").stat().st_mode & 0o777) == "0o600"  # content and token hashes
    (tmp_path / "bootstrap-token").write_text("ek_stale\n")
    (tmp_path / "bootstrap-token").chmod(0o644)  # a token file left readable: rewritten owner-only
    assert admin(tmp_path, "bootstrap", "--json").returncode == 0
    assert oct((tmp_path / "bootstrap-token").stat().st_mode & 0o777) == "0o600"


def test_bootstrap_again_keeps_a_role_the_admin_changed(tmp_path: Path) -> None:
    """`serve` bootstraps on every start: it must not give the bootstrap user editor back."""
    workspace = json.loads(admin(tmp_path, "bootstrap", "--json").stdout)["workspace_id"]
    demoted = admin(tmp_path, "member", workspace, "editor", "--role", "viewer")
    assert json.loads(demoted.stdout)["role"] == "viewer", demoted.stderr
    assert admin(tmp_path, "bootstrap", "--json").returncode == 0

    async def role() -> str:
        async with open_store(f"sqlite:///{tmp_path / 'evidencekit.sqlite3'}"):
            return (await Membership.get(workspace_id=workspace, user__name="editor")).role

    assert asyncio.run(role()) == "viewer"


def test_a_workspace_rate_can_be_changed_and_reset(tmp_path: Path) -> None:
    workspace = json.loads(admin(tmp_path, "workspace", "lab", "--rate-per-minute", "5").stdout)["workspace_id"]
    changed = admin(tmp_path, "rate", workspace, "2")
    assert json.loads(changed.stdout)["retrieve_rate_per_minute"] == 2, changed.stderr

    async def rate() -> int | None:
        async with open_store(f"sqlite:///{tmp_path / 'evidencekit.sqlite3'}"):
            return (await Workspace.get(id=workspace)).retrieve_rate_per_minute

    assert asyncio.run(rate()) == 2
    assert json.loads(admin(tmp_path, "rate", workspace, "0").stdout)["retrieve_rate_per_minute"] is None
    assert asyncio.run(rate()) is None
    unknown = admin(tmp_path, "rate", "40000000-0000-4000-8000-000000000009", "3")
    assert unknown.returncode == 1 and "no workspace 40000000-0000-4000-8000-000000000009" in unknown.stderr
    assert admin(tmp_path, "rate", workspace, "-1").returncode == 2


def test_admin_commands_and_clear_errors(tmp_path: Path) -> None:
    workspace = json.loads(admin(tmp_path, "workspace", "lab").stdout)["workspace_id"]
    twice = admin(tmp_path, "workspace", "lab")
    assert twice.returncode == 1 and "a workspace named 'lab' already exists" in twice.stderr
    assert admin(tmp_path, "user", "ana").returncode == 0
    member = admin(tmp_path, "member", workspace, "ana", "--role", "viewer")
    assert json.loads(member.stdout)["role"] == "viewer"
    token = json.loads(admin(tmp_path, "token", "ana").stdout)
    assert token["token"].startswith("ek_") and token["capabilities"] == ["agent:research"]
    listed = admin(tmp_path, "tokens", "ana")
    assert token["token"] not in listed.stdout and token["token_id"] in listed.stdout
    assert json.loads(admin(tmp_path, "revoke", token["token_id"]).stdout)["revoked"] is True
    missing = admin(tmp_path, "member", workspace, "nobody")
    assert missing.returncode == 1 and missing.stderr.startswith("research-evidence admin:")
    assert "Traceback" not in missing.stderr


def test_mistakes_are_named_in_one_line(tmp_path: Path) -> None:
    assert admin(tmp_path, "user", "ana").returncode == 0
    cases = {
        ("user", "ana"): (1, "a user named 'ana' already exists"),
        ("token", "nobody"): (1, "no user named 'nobody'"),
        ("tokens", "nobody"): (1, "no user named 'nobody'"),
        ("member", "11111111-1111-4111-8111-111111111111", "ana"): (1, "no workspace 11111111-1111-4111-8111-111111111111"),
        ("revoke", "22222222-2222-4222-8222-222222222222"): (1, "no token 22222222-2222-4222-8222-222222222222"),
        ("revoke", "nope"): (2, "invalid UUID value: 'nope'"),
        ("token", "ana", "--expires-days", "-3"): (2, "must be a whole number >= 1, not -3"),
        ("workspace", "lab", "--rate-per-minute", "0"): (2, "must be a whole number >= 1, not 0"),
        ("token", "ana", "--capability", "bogus:cap"): (2, "invalid choice: 'bogus:cap'"),
    }
    for args, (code, message) in cases.items():
        done = admin(tmp_path, *args)
        assert (done.returncode, message in done.stderr) == (code, True), (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_cancel_a_pending_receipt_and_only_once(tmp_path: Path) -> None:
    workspace = json.loads(admin(tmp_path, "bootstrap", "--json").stdout)["workspace_id"]
    mutation = "40000000-0000-4000-8000-000000000042"

    async def submitted() -> None:
        from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit

        async with open_store(f"sqlite:///{tmp_path / 'evidencekit.sqlite3'}"):
            await submit(RetrieveRequest(uuid.UUID(workspace), uuid.UUID(mutation), "https://example.com/", "url_text"))

    async def state() -> tuple[str, str | None]:
        async with open_store(f"sqlite:///{tmp_path / 'evidencekit.sqlite3'}"):
            receipt = await Receipt.get(mutation_id=mutation)
            return receipt.state, (receipt.result or {}).get("status")

    asyncio.run(submitted())
    first = admin(tmp_path, "cancel", workspace, mutation)
    assert json.loads(first.stdout)["cancelled"] is True, first.stderr
    assert asyncio.run(state()) == ("cancelled", "cancelled")
    assert json.loads(admin(tmp_path, "cancel", workspace, mutation).stdout)["cancelled"] is False
    missing = admin(tmp_path, "cancel", workspace, "40000000-0000-4000-8000-000000000043")
    assert missing.returncode == 1 and "no such receipt" in missing.stderr


def test_tokens_with_a_label_and_expiry_are_listed_and_revoked(tmp_path: Path) -> None:
    assert admin(tmp_path, "user", "ana").returncode == 0
    made = json.loads(admin(tmp_path, "token", "ana", "--expires-days", "3", "--label", "ci").stdout)
    listed = json.loads(admin(tmp_path, "tokens", "ana").stdout)["tokens"]
    assert listed == [{"token_id": made["token_id"], "kind": "personal_access_token", "label": "ci", "revoked": False}]
    assert json.loads(admin(tmp_path, "revoke", made["token_id"]).stdout)["revoked"] is True
    assert json.loads(admin(tmp_path, "tokens", "ana").stdout)["tokens"][0]["revoked"] is True

    async def authenticates() -> bool:
        from evidencekit.server.evidence.store import access

        async with open_store(f"sqlite:///{tmp_path / 'evidencekit.sqlite3'}"):
            return await access.authenticate(made["token"]) is not None

    assert not asyncio.run(authenticates())


def test_a_member_can_be_removed_and_then_reads_nothing(tmp_path: Path) -> None:
    workspace = json.loads(admin(tmp_path, "workspace", "lab").stdout)["workspace_id"]
    assert admin(tmp_path, "user", "ana").returncode == 0
    assert admin(tmp_path, "member", workspace, "ana", "--role", "editor").returncode == 0
    removed = admin(tmp_path, "member", workspace, "ana", "--remove")
    assert removed.returncode == 0 and json.loads(removed.stdout)["role"] is None
    again = admin(tmp_path, "member", workspace, "ana", "--remove")
    assert again.returncode == 1 and "ana is not a member" in again.stderr

    async def memberships() -> int:
        async with open_store(f"sqlite://{tmp_path / 'evidencekit.sqlite3'}"):
            return await Membership.filter(workspace_id=workspace).count()

    assert asyncio.run(memberships()) == 0
