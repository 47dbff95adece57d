"""`evidencekit retrieve | status | documents`: the service from a terminal.

Configuration: EVIDENCEKIT_URL (default http://127.0.0.1:8000), SOSOAPI_ACCESS_TOKEN,
EVIDENCEKIT_WORKSPACE (or --workspace).

Exit codes: 0 success (a settled ready/partial result, or an accepted request when not waiting;
for `status`, a receipt that succeeded or is still pending/running); 1 a retrieval that settled
without success (blocked, unsupported, empty, unavailable, ...), or no such receipt; 2 bad usage
or input (in a --from-file batch: some line was refused, the rest still ran); 3 the server refused
(authentication, permission, conflict, rate limit, server error); 4 the server could not be
reached; 5 --wait timed out before the receipt settled.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import errors
from .evidence import EvidenceClient, WaitTimeout

OK, UNSUCCESSFUL, USAGE, REFUSED, UNREACHABLE, TIMED_OUT = 0, 1, 2, 3, 4, 5


def _fail(message: str, code: int) -> int:
    print(f"evidencekit: {message}", file=sys.stderr)
    return code


def _receipt_lines(retrieval: dict[str, Any] | None) -> list[str]:
    if retrieval is None:
        return ["no receipt for this mutation_id in this workspace"]
    lines = [f"receipt   {retrieval['id']}  (mutation {retrieval['mutation_id']})", f"state     {retrieval['state']}"]
    result = retrieval.get("result")
    if result:
        reason = result["reason"] or "—"
        lines.append(f"result    {result['status']}  reason {reason}  kind {result['kind']}")
        if result["warnings"]:
            lines.append(f"warnings  {', '.join(result['warnings'])}")
        for label, key in (("title", "title"), ("desc", "description")):
            if result.get(key):
                lines.append(f"{label:<9} {result[key]}")
        if result["provenance"]["source_url"]:
            lines.append(f"source    {result['provenance']['source_url']}")
        if result["segments"]:
            lines.append(f"segments  {len(result['segments'])}")
        if result["text"]:
            text = " ".join(result["text"].split())
            lines.append(f"text      {text[:300]}{'…' if len(text) > 300 else ''}  (untrusted)")
    if retrieval.get("evidence"):
        lines.append(f"evidence  {retrieval['evidence']['evidence_id']} revision {retrieval['evidence']['revision']}")
    return lines


def _succeeded(retrieval: dict[str, Any] | None) -> bool:
    if retrieval is None or retrieval["state"] != "completed":
        return False
    result = retrieval.get("result") or {}
    return result.get("status") in ("ready", "partial") and retrieval.get("evidence") is not None


def _show(data: dict[str, Any], as_json: bool) -> None:
    print(json.dumps(data, ensure_ascii=False) if as_json else "\n".join(_receipt_lines(data["retrieval"])))


def _progress(label: str) -> Any:
    last: list[str] = []

    def report(status: Any) -> None:
        state = status.retrieval.state if status.retrieval else "none"
        if not last or last[-1] != state:
            print(f"{label}: {state}", file=sys.stderr, flush=True)
            last.append(state)
    return report


def _retrieve_one(client: EvidenceClient, args: argparse.Namespace) -> int:
    mutation = str(uuid.uuid4())
    answer = client.retrieve(args.url, args.kind, args.language, mutation_id=mutation).model_dump(mode="json")
    if not args.wait:
        _show(answer, args.json)
        return OK
    final = client.wait(mutation, timeout=args.timeout, on_poll=_progress(mutation)).model_dump(mode="json")
    _show(final, args.json)
    return OK if _succeeded(final["retrieval"]) else UNSUCCESSFUL


@dataclass
class _Line:
    number: int
    url: str
    mutation: str
    refused: str | None = None  # why the server refused to start it


def _read_batch(path: str) -> list[_Line]:
    lines = []
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.strip()
        if text and not text.startswith("#"):
            lines.append(_Line(number, text, str(uuid.uuid4())))
    return lines


def _bar(done: int, total: int, what: str) -> None:
    print(f"\r[{'#' * (done * 30 // total):<30}] {done}/{total} {what}", end="", file=sys.stderr, flush=True)


def _field_errors(exc: errors.ApiError) -> str:
    """The server's reasons, field by field: "$.url is not a valid uri; ..."."""
    return "; ".join(f"{f.get('field', '$')} {f.get('message', '')}".strip() for f in exc.fields)


def _submit_all(client: EvidenceClient, args: argparse.Namespace, lines: list[_Line],
                sleep: Callable[[float], None]) -> None:
    """Start every line's retrieval, pacing to the workspace's rate; a refused line is noted, not fatal."""
    for done, line in enumerate(lines, start=1):
        while True:
            try:
                client.retrieve(line.url, args.kind, args.language, mutation_id=line.mutation)
                break
            except errors.RateLimited as exc:  # the same mutation_id again later: safe, never a second fetch
                pause = exc.retry_after or 5
                print(f"\nworkspace rate limit reached after {done - 1}/{len(lines)}; waiting {pause}s",
                      file=sys.stderr, flush=True)
                sleep(pause)
            except errors.BadRequest as exc:
                line.refused = _field_errors(exc) or exc.message
                print(f"\nline {line.number}: {line.url}: {line.refused}", file=sys.stderr, flush=True)
                break
        _bar(done, len(lines), "sent")
    print(file=sys.stderr)


def _retrieve_batch(client: EvidenceClient, args: argparse.Namespace,
                    sleep: Callable[[float], None] = time.sleep) -> int:
    lines = _read_batch(args.from_file)
    if not lines:
        return _fail(f"{args.from_file} lists no URLs", USAGE)
    _submit_all(client, args, lines, sleep)
    started = [line for line in lines if line.refused is None]
    outcomes: dict[str, dict[str, Any]] = {}
    for done, line in enumerate(started, start=1):
        try:
            outcomes[line.mutation] = client.wait(line.mutation, timeout=args.timeout).model_dump(mode="json")[
                "retrieval"]
        except WaitTimeout:
            outcomes[line.mutation] = {"state": "timed out", "result": None}
        _bar(done, len(started), "settled")
    if started:
        print(file=sys.stderr)
    if args.json:
        print(json.dumps([{"line": line.number, "url": line.url, "mutation_id": line.mutation,
                           "retrieval": outcomes.get(line.mutation), "refused": line.refused} for line in lines]))
    else:
        def status_of(line: _Line) -> tuple[str, str]:
            if line.refused is not None:
                return "refused", line.refused
            retrieval = outcomes[line.mutation]
            result = retrieval["result"] or {}
            return result.get("status", retrieval["state"]), result.get("reason") or "—"
        shown = {line.number: status_of(line) for line in lines}
        counts = Counter(status for status, _ in shown.values())
        reasons = Counter(reason for status, reason in shown.values() if status != "refused")
        print("| status | count |\n|---|---:|")
        print("\n".join(f"| {status} | {n} |" for status, n in counts.most_common()))
        print("\n| reason | count |\n|---|---:|")
        print("\n".join(f"| {reason} | {n} |" for reason, n in reasons.most_common()))
        failed = [line for line in lines if line.refused is not None or not _succeeded(outcomes[line.mutation])]
        if failed:
            print("\n| line | url | status | reason |\n|---:|---|---|---|")
            print("\n".join(f"| {line.number} | {line.url} | {shown[line.number][0]} | {shown[line.number][1]} |"
                            for line in failed))
    if any(line.refused is not None for line in lines):
        return USAGE
    return OK if all(_succeeded(outcomes[line.mutation]) for line in lines) else UNSUCCESSFUL


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidencekit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    workspace_help = "workspace id (default: EVIDENCEKIT_WORKSPACE)"
    parser.add_argument("--workspace", default=os.environ.get("EVIDENCEKIT_WORKSPACE"), help=workspace_help)
    common = argparse.ArgumentParser(add_help=False)  # --workspace also after the command
    common.add_argument("--workspace", default=argparse.SUPPRESS, help=workspace_help)
    common.add_argument("--json", action="store_true", help="print the answer as JSON")
    commands = parser.add_subparsers(dest="command", required=True)
    retrieve = commands.add_parser("retrieve", parents=[common], help="retrieve a URL (or a file of URLs) as evidence")
    retrieve.add_argument("url", nargs="?", help="a public https URL")
    retrieve.add_argument("--from-file", metavar="FILE",
                          help="one URL per line (# comments); sends all, paced to the workspace's rate limit, "
                               "waits for all and prints a summary")
    retrieve.add_argument("--kind", choices=("url_text", "published_captions"), default="url_text")
    retrieve.add_argument("--language", help="wanted caption language, a tag such as en or de-DE")
    retrieve.add_argument("--wait", action="store_true", help="poll until the receipt settles")
    retrieve.add_argument("--timeout", type=_seconds, default=120.0, metavar="SECONDS",
                          help="how long to wait for one receipt to settle (default 120)")
    status = commands.add_parser("status", parents=[common], help="show a receipt")
    status.add_argument("mutation_id", help="the mutation_id the retrieval was started with")
    documents = commands.add_parser("documents", parents=[common], help="read stored documents as markdown")
    documents.add_argument("names", nargs="+", help="documents/{uri_without_scheme}, up to 20")
    return parser


def run(args: argparse.Namespace, client: EvidenceClient) -> int:
    if args.command == "retrieve":
        if bool(args.url) == bool(args.from_file):
            return _fail("retrieve takes a URL or --from-file FILE (one of them)", USAGE)
        return _retrieve_batch(client, args) if args.from_file else _retrieve_one(client, args)
    if args.command == "status":
        try:
            uuid.UUID(args.mutation_id)
        except ValueError:
            return _fail(f"{args.mutation_id!r} is not a uuid", USAGE)
        data = client.status(args.mutation_id).model_dump(mode="json")
        _show(data, args.json)
        retrieval = data["retrieval"]
        unsettled = retrieval is not None and retrieval["state"] in ("pending", "running")
        return OK if unsettled or _succeeded(retrieval) else UNSUCCESSFUL
    answer = client.documents(args.names).model_dump(mode="json")
    if args.json:
        print(json.dumps(answer, ensure_ascii=False))
    else:
        for document in answer["documents"]:
            print(f"# {document['title'] or document['name']}\n\n<{document['uri']}>\n\n{document['content']}\n")
    return OK


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    token = os.environ.get("SOSOAPI_ACCESS_TOKEN", "")
    if not token:
        return _fail("set SOSOAPI_ACCESS_TOKEN (see `evidencekit admin bootstrap`)", USAGE)
    if args.command in ("retrieve", "status") and not args.workspace:
        return _fail("set EVIDENCEKIT_WORKSPACE or pass --workspace", USAGE)
    base = os.environ.get("EVIDENCEKIT_URL", "http://127.0.0.1:8000")
    try:
        with EvidenceClient(base, token, args.workspace) as client:
            return run(args, client)
    except errors.TransportError as exc:
        return _fail(f"cannot reach {base}: {exc}", UNREACHABLE)
    except errors.BadRequest as exc:
        reasons = _field_errors(exc)
        return _fail(f"{exc.message.split(':')[0]}: {reasons}" if reasons else exc.message, USAGE)
    except (errors.ApiError, errors.ContractMismatch) as exc:
        return _fail(str(exc), REFUSED)
    except WaitTimeout as exc:
        return _fail(str(exc), TIMED_OUT)
    except OSError as exc:
        return _fail(str(exc), USAGE)
