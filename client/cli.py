"""`evidencekit retrieve | status | documents`: the service from a terminal.

Configuration: EVIDENCEKIT_URL (default http://127.0.0.1:8000), SOSOAPI_ACCESS_TOKEN,
EVIDENCEKIT_WORKSPACE (or --workspace).

Exit codes: 0 success (a settled ready/partial result, or an accepted request when not waiting);
1 a retrieval that settled without success (blocked, unsupported, empty, unavailable, ...);
2 bad usage or input; 3 the server refused (authentication, permission, conflict, rate limit,
server error); 4 the server could not be reached; 5 --wait timed out before the receipt settled.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections import Counter
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


def _retrieve_batch(client: EvidenceClient, args: argparse.Namespace) -> int:
    urls = [line.strip() for line in Path(args.from_file).read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    if not urls:
        return _fail(f"{args.from_file} lists no URLs", USAGE)
    mutations = {str(uuid.uuid4()): url for url in urls}
    for mutation, url in mutations.items():
        client.retrieve(url, args.kind, args.language, mutation_id=mutation)
    outcomes: dict[str, dict[str, Any]] = {}
    for done, mutation in enumerate(mutations, start=1):
        try:
            outcomes[mutation] = client.wait(mutation, timeout=args.timeout).model_dump(mode="json")["retrieval"]
        except WaitTimeout:
            outcomes[mutation] = {"state": "timed out", "result": None}
        bar = "#" * (done * 30 // len(mutations))
        print(f"\r[{bar:<30}] {done}/{len(mutations)} settled", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if args.json:
        print(json.dumps([{"url": mutations[m], "mutation_id": m, "retrieval": r} for m, r in outcomes.items()]))
    else:
        counts = Counter((r["result"] or {}).get("status", r["state"]) for r in outcomes.values())
        reasons = Counter((r["result"] or {}).get("reason") or "—" for r in outcomes.values())
        print("| status | count |\n|---|---:|")
        print("\n".join(f"| {status} | {n} |" for status, n in counts.most_common()))
        print("\n| reason | count |\n|---|---:|")
        print("\n".join(f"| {reason} | {n} |" for reason, n in reasons.most_common()))
    return OK if all(_succeeded(r) for r in outcomes.values()) else UNSUCCESSFUL


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evidencekit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", default=os.environ.get("EVIDENCEKIT_WORKSPACE"))
    commands = parser.add_subparsers(dest="command", required=True)
    retrieve = commands.add_parser("retrieve", help="retrieve a URL (or a file of URLs) as evidence")
    retrieve.add_argument("url", nargs="?")
    retrieve.add_argument("--from-file", help="one URL per line; waits for all and prints a summary")
    retrieve.add_argument("--kind", choices=("url_text", "published_captions"), default="url_text")
    retrieve.add_argument("--language")
    retrieve.add_argument("--wait", action="store_true", help="poll until the receipt settles")
    retrieve.add_argument("--timeout", type=float, default=120.0)
    retrieve.add_argument("--json", action="store_true")
    status = commands.add_parser("status", help="show a receipt")
    status.add_argument("mutation_id")
    status.add_argument("--json", action="store_true")
    documents = commands.add_parser("documents", help="read stored documents as markdown")
    documents.add_argument("names", nargs="+", help="documents/{uri_without_scheme}")
    documents.add_argument("--json", action="store_true")
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
        return OK
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
        fields = ", ".join(f["field"] for f in exc.fields)
        return _fail(f"{exc.message}{f' ({fields})' if fields else ''}", USAGE)
    except (errors.ApiError, errors.ContractMismatch) as exc:
        return _fail(str(exc), REFUSED)
    except WaitTimeout as exc:
        return _fail(str(exc), TIMED_OUT)
    except OSError as exc:
        return _fail(str(exc), USAGE)
