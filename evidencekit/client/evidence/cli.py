"""`research-evidence retrieve | status | documents | search`: the service from a terminal.

Configuration: EVIDENCEKIT_URL (default http://127.0.0.1:8000), SOSOAPI_ACCESS_TOKEN,
EVIDENCEKIT_WORKSPACE (or --workspace).

Exit codes: 0 success (a settled ready/partial result, or an accepted request when not waiting;
for `status`, a receipt that succeeded or is still pending/running); 1 a retrieval that settled
without success (blocked, unsupported, empty, unavailable, ...), or no such receipt, or a search
that found nothing; 2 bad usage
or input (in a --from-file batch: some line was refused, the rest still ran); 3 the server refused
(authentication, permission, conflict, rate limit, server error); 4 the server could not be
reached; 5 --wait timed out before the receipt settled (in a batch: some receipt did); 130
interrupted (Ctrl-C). A batch stopped early still prints its summary, with every mutation_id.
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

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evidencekit.client.evidence import SETTLED, EvidenceClient, WaitTimeout
from evidencekit.client.runtime import RetryPolicy
from evidencekit.client.runtime import _errors as errors
from evidencekit.client.runtime._transport import valid_token
from evidencekit.server.evidence.document_names import as_document_name, document_name

OK, UNSUCCESSFUL, USAGE, REFUSED, UNREACHABLE, TIMED_OUT, INTERRUPTED = 0, 1, 2, 3, 4, 5, 130


def _fail(message: str, code: int) -> int:
    print(f"evidencekit: {message}", file=sys.stderr)
    return code


def _receipt_lines(retrieval: dict[str, Any] | None) -> list[str]:
    if retrieval is None:
        return ["no receipt for this mutation_id in this workspace"]
    # the mutation_id first: it is what `status` takes
    lines = [f"mutation  {retrieval['mutation_id']}  (receipt {retrieval['id']})", f"state     {retrieval['state']}"]
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
    source = (result or {}).get("provenance", {}).get("source_url")
    if _succeeded(retrieval) and (result or {}).get("kind") == "url_text" and source:
        lines.append(f"document  {document_name(source)}  (`research-evidence documents` reads it)")
    return lines


def _succeeded(retrieval: dict[str, Any] | None) -> bool:
    if retrieval is None or retrieval["state"] != "completed":
        return False
    result = retrieval.get("result") or {}
    return result.get("status") in ("ready", "partial") and retrieval.get("evidence") is not None


def _json(data: Any) -> str:
    """JSON of an answer: indented for a person at a terminal, one line for a pipe or a file."""
    return json.dumps(data, ensure_ascii=False, indent=2 if sys.stdout.isatty() else None)


def _show(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(_json(data))
    elif data["retrieval"] is None:  # an answer, but no result to print: said on stderr, exit 1
        print(f"evidencekit: {_receipt_lines(None)[0]}", file=sys.stderr)
    else:
        print("\n".join(_receipt_lines(data["retrieval"])))


def _say_notes(client: EvidenceClient) -> None:
    """What the server said of its last answer beyond the JSON (why a URL was blocked, the mutation_id
    of a receipt whose id was given), on stderr: stdout keeps the answer alone."""
    for note in client.notes:
        print(f"evidencekit: {note}", file=sys.stderr)


def _progress(label: str) -> Any:
    last: list[str] = []

    def report(status: Any) -> None:
        state = status.retrieval.state if status.retrieval else "none"
        if not last or last[-1] != state:
            print(f"{label}: {state}", file=sys.stderr, flush=True)
            last.append(state)
    return report


def _resume_hint(mutation: str) -> str:
    return f"the receipt, if the server made one, is mutation {mutation}: `research-evidence status {mutation}`"


def _retrieve_one(client: EvidenceClient, args: argparse.Namespace) -> int:
    mutation = args.mutation_id or str(uuid.uuid4())
    try:
        answer = client.retrieve(args.url, args.kind, args.language, mutation_id=mutation).model_dump(mode="json")
        if not args.wait:
            _show(answer, args.json)
            _say_notes(client)
            return OK
        final = client.wait(mutation, timeout=args.timeout, on_poll=_progress(mutation)).model_dump(mode="json")
    except (errors.ClientError, KeyboardInterrupt) as stopped:
        no_receipt = (errors.BadRequest, errors.Conflict, errors.RequestNotSent, errors.Unauthorized, errors.Forbidden,
                      errors.MalformedAnswer)
        if not isinstance(stopped, no_receipt):
            print(f"evidencekit: {_resume_hint(mutation)}", file=sys.stderr)  # nothing is lost: ask again later
        raise
    _show(final, args.json)
    _say_notes(client)
    return OK if _succeeded(final["retrieval"]) else UNSUCCESSFUL


@dataclass
class _Line:
    number: int
    url: str
    mutation: str
    refused: str | None = None  # why the server refused to start it
    receipt_possible: bool = True  # False once refused before any receipt could exist under `mutation`
    sent: bool = False
    retrieval: dict[str, Any] | None = None  # the last answer about its receipt
    note: str | None = None  # "timed out", "not sent", "not settled": why `retrieval` is not final

    def outcome(self) -> tuple[str, str]:
        """(status, reason) for the summary."""
        if self.refused is not None:
            return "refused", self.refused
        if self.note is not None and (self.retrieval is None or self.retrieval["state"] not in SETTLED):
            return self.note, "—"
        if self.retrieval is None:
            return "no receipt", "—"
        result = self.retrieval["result"] or {}
        return result.get("status", self.retrieval["state"]), result.get("reason") or "—"


_BATCH_IDS = uuid.UUID("5b0e8a52-6f2d-4c3e-9a51-0d7c1f3e2a90")  # the namespace of batch mutation ids


def _read_batch(path: str, args: argparse.Namespace) -> list[_Line]:
    """The file's URLs, each with its mutation_id. The id is derived from the workspace, the file,
    the kind, the language and the URL, so a second run of the same file (after a stop, a timeout, a
    crash) finds the same receipts instead of fetching again; `--fresh` makes new ones."""
    try:
        if path == "-":  # the URLs on standard input
            raw = sys.stdin.buffer.read()
            text = raw.decode("utf-8-sig")
        else:
            text = Path(path).read_text(encoding="utf-8-sig")  # utf-8-sig: a BOM is not part of line 1's URL
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    source = "-" if path == "-" else str(Path(path).resolve())
    salt = str(uuid.uuid4()) if getattr(args, "fresh", False) else source
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            # a URL listed twice is one receipt: the repeat is free, never a second fetch
            name = "\n".join([str(args.workspace), salt, args.kind, args.language or "", stripped])
            lines.append(_Line(number, stripped, str(uuid.uuid5(_BATCH_IDS, name))))
    return lines


class _Progress:
    """A batch's progress on stderr: a live bar (rich) on a terminal, and plain lines ("3/40 sent")
    otherwise, so that a log (`2>log`) holds no carriage returns or escape codes."""

    def __init__(self, total: int, what: str) -> None:
        self.total, self.what, self.done = total, what, 0
        self.live: Progress | None = None
        if sys.stderr.isatty() and os.environ.get("TERM") != "dumb":
            self.live = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(stderr=True), transient=False)
            self.task = self.live.add_task(what, total=total)
            self.live.start()

    def advance(self) -> None:
        self.done += 1
        if self.live is not None:
            self.live.update(self.task, completed=self.done)
        else:
            print(f"{self.done}/{self.total} {self.what}", file=sys.stderr, flush=True)

    def say(self, message: str) -> None:
        if self.live is not None:
            self.live.console.print(message, markup=False, highlight=False)
        else:
            print(message, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def _field_errors(exc: errors.ApiError) -> str:
    """The server's reasons, field by field: "$.url is not a valid uri; ..."."""
    return "; ".join(f"{f.get('field', '$')} {f.get('message', '')}".strip() for f in exc.fields)


# Refusals about one line; anything else (authentication, permission, contract, the server gone or
# its database unavailable: 503) would refuse every line, so it stops the batch.
_LINE_REFUSALS = (errors.BadRequest, errors.Conflict, errors.PayloadTooLarge, errors.ServerError)


def _refuses_every_line(exc: errors.ApiError) -> bool:
    return exc.status == 503


def _submit_all(client: EvidenceClient, args: argparse.Namespace, lines: list[_Line],
                sleep: Callable[[float], None]) -> None:
    """Start every line's retrieval, pacing to the workspace's rate; a refused line is noted, not fatal."""
    progress = _Progress(len(lines), "sent")
    try:
        for done, line in enumerate(lines, start=1):
            while True:
                try:
                    client.retrieve(line.url, args.kind, args.language, mutation_id=line.mutation)
                    line.sent = True
                    break
                except errors.RateLimited as exc:  # the same mutation_id again later: safe, never a second fetch
                    pause = exc.retry_after or 5
                    progress.say(f"workspace rate limit reached after {done - 1}/{len(lines)}; "
                                 f"waiting {pause}s (the server is up: this is the workspace's quota)")
                    sleep(pause)
                except _LINE_REFUSALS as exc:
                    if _refuses_every_line(exc):
                        raise
                    line.refused = _field_errors(exc) or f"{exc.status} {exc.code}: {exc.message}"
                    # a refused input, or one whose mutation_id holds another input's receipt (409):
                    # no receipt of this line; after a server error one may exist
                    line.receipt_possible = isinstance(exc, errors.ServerError)
                    progress.say(f"line {line.number}: {line.url}: refused, no receipt made: {line.refused}"
                                 if not line.receipt_possible else f"line {line.number}: {line.url}: {line.refused}")
                    break
            progress.advance()
    finally:
        progress.close()


def _settle_all(client: EvidenceClient, args: argparse.Namespace, lines: list[_Line],
                sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
    """Poll every unsettled receipt, round after round, until all have settled or --timeout (for the
    whole batch) runs out. Each line keeps the last state read, so a batch stopped early (Ctrl-C)
    reports what had settled by then, whatever its place in the file."""
    waiting = [line for line in lines if line.sent]
    progress = _Progress(len(waiting), "settled")
    deadline, pause = clock() + args.timeout, 0.25
    try:
        while waiting:
            for line in list(waiting):
                line.retrieval = client.status(line.mutation).model_dump(mode="json")["retrieval"]
                if line.retrieval is None or line.retrieval["state"] in SETTLED:
                    waiting.remove(line)
                    progress.advance()
            if waiting and clock() >= deadline:
                for line in waiting:
                    line.note = "timed out"
                break
            if waiting:
                sleep(min(pause, max(deadline - clock(), 0.0)))
                pause = min(pause * 1.5, 2.0)
    finally:
        progress.close()


def _print_summary(lines: list[_Line], as_json: bool) -> None:
    if as_json:
        print(_json([{"line": line.number, "url": line.url,
                      "mutation_id": line.mutation if line.receipt_possible else None,
                      "retrieval": line.retrieval, "refused": line.refused, "note": line.note}
                     for line in lines]))
        return
    shown = {line.number: line.outcome() for line in lines}
    counts = Counter(status for status, _ in shown.values())
    reasons = Counter(reason for status, reason in shown.values() if status != "refused")
    print("| status | count |\n|---|---:|")
    print("\n".join(f"| {status} | {n} |" for status, n in counts.most_common()))
    print("\n| reason | count |\n|---|---:|")
    print("\n".join(f"| {reason} | {n} |" for reason, n in reasons.most_common()))
    failed = [line for line in lines if not _succeeded(line.retrieval)]
    if failed:
        print("\n| line | url | status | reason | mutation_id |\n|---:|---|---|---|---|")
        print("\n".join(f"| {line.number} | {line.url} | {shown[line.number][0]} | {shown[line.number][1]} "
                        f"| {line.mutation if line.receipt_possible else '— (refused: no receipt)'} |"
                        for line in failed))


def _retrieve_batch(client: EvidenceClient, args: argparse.Namespace,
                    sleep: Callable[[float], None] = time.sleep) -> int:
    """Send every line, wait for every receipt, print a summary; stopped early (Ctrl-C, or an error
    that would refuse every line), it still prints what it knows, mutation ids included."""
    lines = _read_batch(args.from_file, args)
    if not lines:
        return _fail(f"{args.from_file} lists no URLs", USAGE)
    stopped: tuple[str, int] | None = None
    try:
        _submit_all(client, args, lines, sleep)
        _settle_all(client, args, lines, sleep)
    except (errors.ClientError, KeyboardInterrupt) as exc:
        stopped = _failure(exc)
        for line in lines:
            unsettled = line.retrieval is None or line.retrieval["state"] not in SETTLED
            if line.refused is None and line.note is None and unsettled:
                line.note = "not settled" if line.sent else "not sent"
    _print_summary(lines, args.json)
    if stopped is not None:
        message, code = stopped
        if any(line.sent for line in lines):
            message += "; receipts already started keep running: `research-evidence status MUTATION_ID`"
        return _fail(message, code)
    if any(line.refused is not None for line in lines):
        return USAGE
    if any(line.note == "timed out" for line in lines):
        return TIMED_OUT
    return OK if all(_succeeded(line.retrieval) for line in lines) else UNSUCCESSFUL


def _uuid(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a uuid") from None


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="research-evidence", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    workspace_help = "workspace id (default: EVIDENCEKIT_WORKSPACE)"
    parser.add_argument("--workspace", default=os.environ.get("EVIDENCEKIT_WORKSPACE"), help=workspace_help)
    url_help = "the server (default: EVIDENCEKIT_URL, else http://127.0.0.1:8000)"
    token_help = ("the bearer token (default: SOSOAPI_ACCESS_TOKEN; the environment keeps it out of the "
                  "process list, which other users of the machine can read)")
    parser.add_argument("--url", dest="server", default=None, help=url_help)
    parser.add_argument("--token", default=None, help=token_help)
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print the answer as JSON (indented on a terminal)")
    as_json.add_argument("--url", dest="server", default=argparse.SUPPRESS, help=url_help)  # also after the command
    as_json.add_argument("--token", default=argparse.SUPPRESS, help=token_help)
    common = argparse.ArgumentParser(add_help=False, parents=[as_json])  # --workspace also after the command
    common.add_argument("--workspace", default=argparse.SUPPRESS, help=workspace_help)
    commands = parser.add_subparsers(dest="command", required=True)
    retrieve = commands.add_parser("retrieve", parents=[common], help="retrieve a URL (or a file of URLs) as evidence")
    retrieve.add_argument("url", nargs="?", help="a public https URL")
    retrieve.add_argument("--from-file", metavar="FILE",
                          help="one URL per line (# comments; - for standard input); sends all, paced to the "
                               "workspace's rate limit, waits for all and prints a summary")
    retrieve.add_argument("--kind", choices=("url_text", "published_captions"), default="url_text",
                          help="url_text: a page or text file's main text (default); published_captions: a "
                               "caption file, or the caption track a page publishes")
    retrieve.add_argument("--language", help="wanted caption language, a tag such as en or de-DE")
    retrieve.add_argument("--fresh", action="store_true",
                          help="with --from-file: new receipts for every line (by default a second run of the "
                               "same file finds the receipts of the first and fetches nothing again)")
    retrieve.add_argument("--wait", action="store_true", help="poll until the receipt settles")
    retrieve.add_argument("--mutation-id", type=_uuid, metavar="UUID",
                          help="the receipt's mutation_id (default: a new one); repeating a retrieve with the "
                               "same one is safe and never fetches twice")
    retrieve.add_argument("--timeout", type=_seconds, default=120.0, metavar="SECONDS",
                          help="how long to wait for the receipt, or with --from-file for all of the batch's "
                               "receipts, to settle (default 120)")
    status = commands.add_parser("status", parents=[common], help="show a receipt")
    status.add_argument("mutation_id", help="the mutation_id the retrieval was started with (the first "
                                            "line of retrieve's output)")
    documents = commands.add_parser("documents", parents=[as_json], help="read stored documents as markdown "
                                    "(documents are not per workspace)")
    documents.add_argument("names", nargs="+", help="documents/{uri_without_scheme} (or the page's URL), up to "
                                                    "20; the ones found are printed even when others are not")
    search = commands.add_parser("search", parents=[as_json], help="find stored documents by words in them "
                                 "(every workspace you are a member of)")
    search.add_argument("query", nargs="+", help="the words (every one must match; when no document holds "
                                                 "them all, one holding any)")
    search.add_argument("--limit", type=_whole(1, 50), default=10, metavar="N", help="results per page, 1-50 "
                        "(default 10)")
    search.add_argument("--page-token", metavar="TOKEN", help="the next page: the token the previous page printed")
    return parser


def _whole(low: int, high: int) -> Callable[[str], int]:
    def read(text: str) -> int:
        if not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low} to {high}")
        return int(text)
    return read


def _how_matched(result: dict[str, Any]) -> str:
    match = result.get("match")
    if match == "forms":
        return "match: forms (a guess: some words only in another form)"
    if match == "some":
        return "match: some (holds only: " + ", ".join(result.get("matched_words", [])) + ")"
    return f"match: {match}"


def _search(client: EvidenceClient, args: argparse.Namespace) -> int:
    if not " ".join(args.query).strip():  # empty, or whitespace alone: no word to find
        return _fail("search takes at least one word to find (the query is empty or only whitespace)", USAGE)
    data = client.search(" ".join(args.query), page_size=args.limit,
                         page_token=args.page_token).model_dump(mode="json", exclude_unset=True)
    if args.json:
        print(_json(data))
        return OK if data["results"] else UNSUCCESSFUL
    for result in data["results"]:
        print(f"{result['parent']}  {result['title']}\n    {_how_matched(result)}\n    {result['snippet']}")
    if not data["results"]:
        print("no stored document holds these words", file=sys.stderr)
    if data.get("next_page_token"):
        print(f"more: --page-token {data['next_page_token']}", file=sys.stderr)
    return OK if data["results"] else UNSUCCESSFUL


def run(args: argparse.Namespace, client: EvidenceClient) -> int:
    if args.command == "search":
        return _search(client, args)
    if args.command == "retrieve":
        if bool(args.url) == bool(args.from_file):
            return _fail("retrieve takes a URL or --from-file FILE (one of them)", USAGE)
        if args.from_file and args.mutation_id:
            return _fail("--mutation-id names one receipt; a --from-file batch makes one per line", USAGE)
        return _retrieve_batch(client, args) if args.from_file else _retrieve_one(client, args)
    if args.command == "status":
        try:
            uuid.UUID(args.mutation_id)
        except ValueError:
            return _fail(f"{args.mutation_id!r} is not a uuid", USAGE)
        data = client.status(args.mutation_id).model_dump(mode="json")
        _show(data, args.json)
        _say_notes(client)
        retrieval = data["retrieval"]
        unsettled = retrieval is not None and retrieval["state"] in ("pending", "running")
        return OK if unsettled or _succeeded(retrieval) else UNSUCCESSFUL
    names = [as_document_name(name) for name in args.names]
    found, missing = _documents(client, names)
    if args.json:
        print(_json({"documents": found, "missing": missing}))
    else:
        for document in found:
            heading = f"# {document['title'] or document['name']}"
            content = document["content"]
            if content.startswith(heading + "\n") or content == heading:  # the page's own headline says it
                content = content[len(heading):].lstrip("\n")
            print(f"{heading}\n\n<{document['uri']}>\n\n{_below_heading(content)}\n")
    for name, why in missing:
        print(f"evidencekit: {name}: {why}", file=sys.stderr)
    return UNSUCCESSFUL if missing else OK


def _below_heading(markdown: str) -> str:
    """`markdown` under the document's one H1: its own H1s (outside code blocks) become H2s."""
    lines, fence = markdown.split("\n"), ""
    for index, line in enumerate(lines):
        marker = line.lstrip()[:3]
        if marker in ("```", "~~~") and (not fence or marker == fence):
            fence = "" if fence else marker
        elif not fence and (line.startswith("# ") or line == "#"):
            lines[index] = "#" + line
    return "\n".join(lines)


NOT_FOUND = "no stored document with that name that you may read"


def _documents(client: EvidenceClient, names: list[str]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The documents found, in the order asked, and (name, why) for each one not found: the service
    answers the ones found and names the rest in a note (a service before issue 54 refused the whole
    call, so then the known ones are asked for again alone)."""
    try:
        found = client.documents(names).model_dump(mode="json")["documents"]
        returned = {document["name"] for document in found}
        return found, [(name, NOT_FOUND) for name in dict.fromkeys(names) if name not in returned]
    except errors.NotFound as exc:
        if exc.code != "unknown_document":
            raise
        unknown: dict[int, str] = {}
        for field in exc.fields:
            index = _name_index(field.get("field", ""))
            if index is not None and index < len(names):
                unknown[index] = field.get("message") or "not found"
        if not unknown:
            raise
        rest = [name for index, name in enumerate(names) if index not in unknown]
        found = client.documents(rest).model_dump(mode="json")["documents"] if rest else []
        return found, [(names[index], why) for index, why in sorted(unknown.items())]


def _name_index(field: str) -> int | None:
    """3 for "$.names[3]"."""
    prefix = "$.names["
    if field.startswith(prefix) and field.endswith("]") and field[len(prefix):-1].isdigit():
        return int(field[len(prefix):-1])
    return None


def _sleep_saying_why(seconds: float) -> None:
    """The client's pause before a retry (a rate limit's Retry-After, a server error's backoff), said
    when it is long enough to look like a hang."""
    if seconds >= 2:
        print(f"\nthe server asked to wait or did not answer; trying again in {seconds:.0f}s", file=sys.stderr,
              flush=True)
    time.sleep(seconds)


def _failure(exc: BaseException, server: str = "the server") -> tuple[str, int]:
    """The one line, and the exit code, for an error that ends a command."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", INTERRUPTED
    if isinstance(exc, errors.ConnectFailed) and exc.tls:
        return (f"cannot reach {server}: the TLS handshake failed ({str(exc).split(': ', 1)[-1]}); is it "
                "served over plain http (EVIDENCEKIT_URL=http://...)?"), UNREACHABLE
    if isinstance(exc, errors.ConnectFailed) and exc.refused:
        return (f"cannot reach {server}: the connection was refused; is the server running "
                "(`research-evidence serve`) at that address?"), UNREACHABLE
    if isinstance(exc, errors.TransportError):
        return f"cannot reach {server}: {exc}", UNREACHABLE
    if isinstance(exc, errors.RequestNotSent):
        return str(exc), USAGE
    if isinstance(exc, errors.BadRequest):
        reasons = _field_errors(exc)
        return (f"{exc.message.split(':')[0]}: {reasons}" if reasons else exc.message), USAGE
    if isinstance(exc, WaitTimeout):
        return str(exc), TIMED_OUT
    if isinstance(exc, errors.NotFound) and exc.code == "unknown_document":  # as for "no such receipt"
        return exc.message, UNSUCCESSFUL
    return str(exc), REFUSED  # ApiError, ContractMismatch, MalformedAnswer


def _check_server_url(text: str) -> None:
    """EVIDENCEKIT_URL must be an http(s) URL with a host (ValueError otherwise)."""
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise ValueError(f"EVIDENCEKIT_URL is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"EVIDENCEKIT_URL must be an http:// or https:// URL with a host, not {text!r}")


def main(argv: list[str]) -> int:
    for command in ("documents", "search"):  # both read every workspace the token's user is in
        if command in argv and any(arg.partition("=")[0] == "--workspace" for arg in argv):
            return _fail(f"{command} reads every workspace you are a member of: --workspace does not apply",
                         USAGE)
    args = build_parser().parse_args(argv)
    # a pasted token often brings a newline
    token = (args.token if args.token is not None else os.environ.get("SOSOAPI_ACCESS_TOKEN", "")).strip()
    named = "--token" if args.token is not None else "SOSOAPI_ACCESS_TOKEN"
    if not token:
        return _fail("set SOSOAPI_ACCESS_TOKEN or pass --token (see `research-evidence admin bootstrap`)", USAGE)
    if not valid_token(token):
        return _fail(f"{named} is not a token: it holds spaces or characters outside printable ASCII", USAGE)
    if args.command in ("retrieve", "status") and not args.workspace:
        return _fail("set EVIDENCEKIT_WORKSPACE or pass --workspace", USAGE)
    base = args.server or os.environ.get("EVIDENCEKIT_URL", "http://127.0.0.1:8000")
    try:
        _check_server_url(base)
        with EvidenceClient(base, token, args.workspace, retry_sleep=_sleep_saying_why,
                            retry=RetryPolicy(retry_refused=False)) as client:
            return run(args, client)
    except (errors.ClientError, KeyboardInterrupt) as exc:
        return _fail(*_failure(exc, base))
    except BrokenPipeError:
        raise  # the reader went away (`| head`): evidencekit.cli ends quietly
    except (OSError, ValueError) as exc:
        return _fail(str(exc), USAGE)
