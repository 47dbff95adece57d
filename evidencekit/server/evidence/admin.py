"""`research-evidence admin ...`: workspaces (and their rate), users, memberships, tokens, cancellation, bootstrap.

Secrets are printed once, when a token is created; the store keeps only their sha256.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from evidencekit.server.evidence.retrieval.engine import cancelled_result
from evidencekit.server.evidence.store import access, receipts
from evidencekit.server.evidence.store.db import (
    data_dir,
    database_url,
    is_postgres,
    open_store,
    shown_url,
    sqlite_path,
)
from evidencekit.server.evidence.store.models import (
    ROLES,
    TOKEN_KINDS,
    Receipt,
    Token,
    User,
    Workspace,
)

BOOTSTRAP_WORKSPACE = "default"
BOOTSTRAP_USER = "editor"
BOOTSTRAP_LABEL = "bootstrap"


def _secret_file() -> Path:
    return data_dir() / "bootstrap-token"


async def bootstrap() -> dict[str, Any]:
    """Idempotent: the default workspace, an editor in it, and a research token for that editor.

    The token's secret is kept (mode 0600) in the data folder so that a second bootstrap can print
    the same token; delete that file and revoke the token to rotate it.
    """
    workspace = await Workspace.filter(name=BOOTSTRAP_WORKSPACE).first()
    user = await User.get_or_none(name=BOOTSTRAP_USER)
    if workspace is None or user is None:  # the first run; later runs leave roles as the admin set them
        workspace = workspace or await Workspace.create(name=BOOTSTRAP_WORKSPACE)
        user = user or await User.create(name=BOOTSTRAP_USER)
        await access.add_member(workspace, user, "editor")
    path = _secret_file()
    secret = path.read_text().strip() if path.exists() else ""
    principal = await access.authenticate(secret) if secret else None
    created = principal is None or principal.user_id != user.id
    if created:
        _, secret = await access.create_token(user, label=BOOTSTRAP_LABEL)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.chmod(0o600)  # touch's mode applies only to a file it creates
        path.write_text(secret + "\n")
    return {"workspace_id": str(workspace.id), "token": secret, "user_id": str(user.id), "created_token": created}


async def _user(name: str) -> User:
    user = await User.get_or_none(name=name)
    if user is None:
        raise LookupError(f"no user named {name!r} (create one with `research-evidence admin user NAME`)")
    return user


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    if args.command == "bootstrap":
        return await bootstrap()
    if args.command == "workspace":
        if await Workspace.exists(name=args.name):
            raise ValueError(f"a workspace named {args.name!r} already exists")
        workspace = await Workspace.create(name=args.name, retrieve_rate_per_minute=args.rate_per_minute)
        return {"workspace_id": str(workspace.id), "name": workspace.name}
    if args.command == "user":
        if await User.exists(name=args.name):
            raise ValueError(f"a user named {args.name!r} already exists")
        user = await User.create(name=args.name, oauth_subject=args.oauth_subject)
        return {"user_id": str(user.id), "name": user.name, "oauth_subject": user.oauth_subject}
    if args.command == "member":
        target = await Workspace.get_or_none(id=args.workspace_id)
        if target is None:
            raise LookupError(f"no workspace {args.workspace_id}")
        user = await _user(args.user)
        if args.remove:
            if not await access.remove_member(target, user):
                raise LookupError(f"{user.name} is not a member of workspace {target.id}")
            return {"workspace_id": str(target.id), "user": user.name, "role": None}
        membership = await access.add_member(target, user, args.role)
        return {"workspace_id": str(target.id), "user": user.name, "role": membership.role}
    if args.command == "token":
        user = await _user(args.user)
        expires = timedelta(days=args.expires_days) if args.expires_days else None
        token, secret = await access.create_token(user, kind=args.kind, capabilities=tuple(args.capability),
                                                  expires_in=expires, label=args.label)
        return {"token_id": str(token.id), "token": secret, "kind": token.kind,
                "capabilities": token.capabilities, "note": "shown once; only its hash is stored"}
    if args.command == "revoke":
        if not await Token.exists(id=args.token_id):
            raise LookupError(f"no token {args.token_id} (`research-evidence admin tokens USER` lists them)")
        return {"token_id": str(args.token_id), "revoked": await access.revoke_token(args.token_id)}
    if args.command == "tokens":
        await _user(args.user)
        rows = await Token.filter(owner__name=args.user).order_by("created_at")
        return {"tokens": [{"token_id": str(t.id), "kind": t.kind, "label": t.label,
                            "revoked": t.revoked_at is not None} for t in rows]}
    if args.command == "rate":
        target = await Workspace.get_or_none(id=args.workspace_id)
        if target is None:
            raise LookupError(f"no workspace {args.workspace_id}")
        target.retrieve_rate_per_minute = args.per_minute or None  # 0: the server's default again
        await target.save(update_fields=["retrieve_rate_per_minute"])
        return {"workspace_id": str(target.id), "name": target.name,
                "retrieve_rate_per_minute": target.retrieve_rate_per_minute}
    if args.command == "cancel":
        receipt = await Receipt.get_or_none(workspace_id=args.workspace_id, mutation_id=args.mutation_id)
        if receipt is None:
            raise LookupError("no such receipt")
        done = await receipts.cancel(receipt.workspace_id, receipt.mutation_id,
                                     cancelled_result(receipt.kind, receipt.language))
        return {"receipt_id": str(receipt.id), "cancelled": done}
    raise AssertionError(args.command)


def _whole_number(minimum: int) -> Callable[[str], int]:
    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}, not {text}")
        return value
    return read


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="research-evidence admin", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    boot = commands.add_parser("bootstrap", help="default workspace, editor user and research token")
    boot.add_argument("--json", action="store_true", help="print only the JSON")
    ws = commands.add_parser("workspace", help="create a workspace")
    ws.add_argument("name")
    ws.add_argument("--rate-per-minute", type=_whole_number(1), default=None,
                    help="new retrievals per minute (default: EVIDENCEKIT_RETRIEVE_PER_MINUTE)")
    rate = commands.add_parser("rate", help="change a workspace's retrieve rate (within the auth cache time)")
    rate.add_argument("workspace_id", type=uuid.UUID)
    rate.add_argument("per_minute", type=_whole_number(0),
                      help="new retrievals per minute; 0 for the default (EVIDENCEKIT_RETRIEVE_PER_MINUTE)")
    user = commands.add_parser("user", help="create a user")
    user.add_argument("name")
    user.add_argument("--oauth-subject", default=None, help="the `sub` of this user's OAuth access tokens")
    member = commands.add_parser("member", help="add a user to a workspace, change their role, or remove them")
    member.add_argument("workspace_id", type=uuid.UUID)
    member.add_argument("user")
    given = member.add_mutually_exclusive_group()
    given.add_argument("--role", choices=ROLES, default="editor")
    given.add_argument("--remove", action="store_true", help="remove the user from the workspace")
    token = commands.add_parser("token", help="create a token for a user (the secret is shown once)")
    token.add_argument("user")
    token.add_argument("--kind", choices=TOKEN_KINDS, default="personal_access_token")
    token.add_argument("--capability", action="append", default=None, choices=(access.RESEARCH,),
                       help=f"what the token may do (default {access.RESEARCH})")
    token.add_argument("--expires-days", type=_whole_number(1), default=None, help="days until it expires (default: never)")
    token.add_argument("--label", default="")
    revoke = commands.add_parser("revoke", help="revoke a token by its id")
    revoke.add_argument("token_id", type=uuid.UUID)
    tokens = commands.add_parser("tokens", help="list a user's tokens (never their secrets)")
    tokens.add_argument("user")
    cancel = commands.add_parser("cancel", help="cancel a pending or running receipt")
    cancel.add_argument("workspace_id", type=uuid.UUID)
    cancel.add_argument("mutation_id", type=uuid.UUID)
    return parser


async def _main(args: argparse.Namespace) -> dict[str, Any]:
    async with open_store():
        return await _run(args)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "capability", False) is None:
        args.capability = [access.RESEARCH]
    try:
        output = asyncio.run(_main(args))
    except (LookupError, ValueError) as exc:
        print(f"research-evidence admin: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - one clear line, not a traceback
        name = type(exc).__name__
        print(f"research-evidence admin: {name}: {exc}", file=sys.stderr)
        return 1
    if args.command == "bootstrap":  # which store it acted on (the data folder in effect), on stderr
        url = database_url()
        where = f"PostgreSQL {shown_url(url)}" if is_postgres(url) else sqlite_path(url)
        print(f"research-evidence admin: bootstrap in {where}", file=sys.stderr)
    if getattr(args, "json", False):  # the machine form: exactly what the quick start and tests read
        output = {"workspace_id": output["workspace_id"], "token": output["token"]}
    print(json.dumps(output, indent=None if getattr(args, "json", False) else 2))
    return 0
