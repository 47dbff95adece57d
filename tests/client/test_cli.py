"""`evidencekit retrieve | status | documents` as a user runs them, against the running service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from evidencekit.client.evidence.cli import _failure, _retrieve_batch, build_parser
from evidencekit.client.runtime import _errors as errors
from tests.origin import Origin, Reply, serve_origin
from tests.support import PATIENCE, Hold, allow_origin, eventually, running_service

ROOT = Path(__file__).resolve().parents[2]
PAGE = b"<html><head><title>Notes</title></head><body><main><p>Ten samples, all stable.</p></main></body></html>"


@pytest.fixture(scope="module")
def origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server


@pytest.fixture(scope="module")
def service(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One service for the module. Its fetches wait as long as an origin holds a page (a held page
    is slow until the test releases it, not until a fetch limit ends it as a timeout), and its
    workspace takes as many new receipts as the module makes: past 60 a minute, a batch would wait
    out the rate limit while its pages load."""
    from dataclasses import replace

    from evidencekit.server.evidence.fetch.fetcher import FetchLimits

    patient = replace(FetchLimits(), read_timeout=PATIENCE * 10, deadline=PATIENCE * 10)
    with running_service(tmp_path_factory.mktemp("cli"), allow=allow_origin(origin.url), fetch_limits=patient,
                         env={"EVIDENCEKIT_RETRIEVE_PER_MINUTE": "100000"}) as running:
        yield running


def cli(service: dict[str, Any], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_URL": service["base"],
                   "SOSOAPI_ACCESS_TOKEN": service["token"], "EVIDENCEKIT_WORKSPACE": service["workspace_id"], **env}
    return subprocess.run([sys.executable, "-m", "evidencekit", *args], env=environment, capture_output=True,
                          text=True, timeout=60, check=False, cwd=str(service["data"]))


def test_retrieve_wait_prints_the_receipt(service: dict[str, Any], origin: Origin) -> None:
    done = cli(service, "retrieve", origin.reply("/cli-notes", Reply(PAGE)), "--wait")
    assert done.returncode == 0, done.stderr
    assert "state     completed" in done.stdout and "Ten samples, all stable." in done.stdout
    assert "completed" in done.stderr  # progress while waiting
    as_json = cli(service, "retrieve", origin.url + "/cli-notes", "--wait", "--json")
    retrieval = json.loads(as_json.stdout)["retrieval"]
    assert retrieval["result"]["status"] == "ready"
    status = cli(service, "status", retrieval["mutation_id"], "--json")
    assert json.loads(status.stdout)["retrieval"]["id"] == retrieval["id"]
    name = "documents/" + (origin.url + "/cli-notes").split("://", 1)[1]
    documents = cli(service, "documents", name)
    assert documents.returncode == 0 and documents.stdout.startswith("# Notes") and "Ten samples" in documents.stdout


def test_batch_mode_summarises_and_signals_failures(service: dict[str, Any], origin: Origin, tmp_path: Path) -> None:
    good = [origin.reply(f"/batch-{n}", Reply(PAGE)) for n in range(3)]
    urls = tmp_path / "urls.txt"
    urls.write_text("\n".join([*good, "  # an indented comment", origin.url + "/batch-missing"]) + "\n")
    done = cli(service, "retrieve", "--from-file", str(urls))
    assert done.returncode == 1, done.stderr
    assert "4/4 sent" in done.stderr and "4/4 settled" in done.stderr
    assert "| ready | 3 |" in done.stdout and "| unavailable | 1 |" in done.stdout and "| not_found | 1 |" in done.stdout
    assert f"| 5 | {origin.url}/batch-missing | unavailable | not_found |" in done.stdout  # which line failed


def test_a_bad_line_is_named_and_the_rest_still_runs(service: dict[str, Any], origin: Origin, tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{origin.reply('/batch-ok', Reply(PAGE))}\nnot a url\n")
    done = cli(service, "retrieve", "--from-file", str(urls), "--json")
    assert done.returncode == 2, done.stderr
    assert "line 2: not a url: refused, no receipt made: $.url is not a valid uri" in done.stderr
    first, second = json.loads(done.stdout)
    assert first["retrieval"]["result"]["status"] == "ready" and first["refused"] is None
    # no receipt was made: no mutation_id that `status` would answer "no receipt" for
    assert second == {"line": 2, "url": "not a url", "mutation_id": None, "retrieval": None,
                      "refused": "$.url is not a valid uri", "note": None}
    table = cli(service, "retrieve", "--from-file", str(urls))
    assert "| 2 | not a url | refused | $.url is not a valid uri | — (refused: no receipt) |" in table.stdout


def test_workspace_flag_after_the_command_and_status_exit_codes(service: dict[str, Any], origin: Origin) -> None:
    missing = origin.url + "/cli-missing"
    done = cli(service, "retrieve", missing, "--wait", "--json", "--workspace", service["workspace_id"],
               EVIDENCEKIT_WORKSPACE="")
    assert done.returncode == 1, done.stderr  # settled, not found
    mutation = json.loads(done.stdout)["retrieval"]["mutation_id"]
    assert cli(service, "status", mutation).returncode == 1
    for before in (["--workspace", service["workspace_id"]], [f"--workspace={service['workspace_id']}"]):
        shown = cli(service, *before, "status", mutation, "--json", EVIDENCEKIT_WORKSPACE="")
        assert shown.returncode == 1 and json.loads(shown.stdout)["retrieval"]["mutation_id"] == mutation, shown.stderr
    assert cli(service, "status", "40000000-0000-4000-8000-000000000009").returncode == 1  # no such receipt
    ok = cli(service, "retrieve", origin.reply("/cli-ok", Reply(PAGE)), "--wait", "--json")
    assert cli(service, "status", json.loads(ok.stdout)["retrieval"]["mutation_id"]).returncode == 0


def test_errors_are_one_line_with_documented_exit_codes(service: dict[str, Any]) -> None:
    bad_uuid = cli(service, "status", "nope")
    assert (bad_uuid.returncode, bad_uuid.stderr.strip()) == (2, "evidencekit: 'nope' is not a uuid")
    no_token = cli(service, "status", "40000000-0000-4000-8000-000000000001", SOSOAPI_ACCESS_TOKEN="")
    assert no_token.returncode == 2 and "SOSOAPI_ACCESS_TOKEN" in no_token.stderr
    wrong_token = cli(service, "status", "40000000-0000-4000-8000-000000000001", SOSOAPI_ACCESS_TOKEN="ek_bad")
    assert wrong_token.returncode == 3 and "401" in wrong_token.stderr
    bad_url = cli(service, "retrieve", "not a url")
    assert (bad_url.returncode, bad_url.stderr.strip()) == (
        2, "evidencekit: request does not match the contract: $.url is not a valid uri")
    down = cli(service, "status", "40000000-0000-4000-8000-000000000001", EVIDENCEKIT_URL="http://127.0.0.1:9")
    assert down.returncode == 4 and errors_said(down)[0].startswith("evidencekit: cannot reach http://127.0.0.1:9")
    assert all("trying again in" in line for line in down.stderr.strip().splitlines()[:-1])  # the retries said
    for result in (bad_uuid, no_token, wrong_token, bad_url, down):
        assert "Traceback" not in result.stderr and len(errors_said(result)) == 1


def errors_said(result: subprocess.CompletedProcess[str]) -> list[str]:
    """stderr less the notices of a retry's pause (said when it is long enough to look like a hang)."""
    return [line for line in result.stderr.splitlines() if line.strip() and "trying again in" not in line]


class RateLimitedClient:
    """Stands in for EvidenceClient in the one case a live server cannot show quickly: the workspace's
    per-minute limit running out mid-batch (the real one resets only at the next minute)."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.refused = 0

    def retrieve(self, url: str, kind: str, language: str | None, *, mutation_id: str) -> None:
        if len(self.started) == 2 and not self.refused:
            self.refused += 1
            raise errors.RateLimited(429, {"code": "rate_limited", "message": "too many"}, {"Retry-After": "7"})
        self.started.append(url)

    def status(self, mutation_id: str) -> Any:
        retrieval = {"state": "completed", "evidence": {"evidence_id": mutation_id, "revision": 1},
                     "result": {"status": "ready", "reason": None}}
        return SimpleNamespace(model_dump=lambda mode: {"retrieval": retrieval})


def test_a_batch_waits_out_the_rate_limit_instead_of_failing(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(f"https://example.com/{n}\n" for n in range(4)))
    client, pauses = RateLimitedClient(), []
    args = build_parser().parse_args(["retrieve", "--from-file", str(urls)])
    assert _retrieve_batch(client, args, sleep=pauses.append) == 0  # type: ignore[arg-type]
    assert client.started == [f"https://example.com/{n}" for n in range(4)] and pauses == [7]
    err = capsys.readouterr().err
    assert "workspace rate limit reached after 2/4; waiting 7s" in err and "4/4 sent" in err


def test_wait_gives_up_after_its_timeout_with_exit_5(service: dict[str, Any], origin: Origin) -> None:
    held = Hold()  # the page loads once the first wait has given up
    slow = origin.reply("/cli-slow", Reply(PAGE, hold=held))
    mutation = "40000000-0000-4000-8000-00000000c11e"
    try:
        done = cli(service, "retrieve", slow, "--wait", "--timeout", "0.5", "--mutation-id", mutation)
    finally:
        held.release()
    assert done.returncode == 5, done.stderr
    assert "Traceback" not in done.stderr and f"`research-evidence status {mutation}`" in done.stderr  # how to go on
    again = cli(service, "retrieve", slow, "--wait", "--mutation-id", mutation, "--json")  # resumes, no second fetch
    assert again.returncode == 0 and json.loads(again.stdout)["retrieval"]["mutation_id"] == mutation, again.stderr
    assert origin.hits.count("/cli-slow") == 1


def test_a_token_pasted_with_a_newline_works_and_a_malformed_one_is_never_printed(service: dict[str, Any]) -> None:
    missing = "40000000-0000-4000-8000-000000000002"
    pasted = cli(service, "status", missing, SOSOAPI_ACCESS_TOKEN=service["token"] + "\n")
    assert pasted.returncode == 1 and "no receipt" in pasted.stderr and pasted.stdout == "", pasted.stderr
    for bad in (service["token"][:8] + " " + service["token"][8:], service["token"] + "é"):
        done = cli(service, "status", missing, SOSOAPI_ACCESS_TOKEN=bad)
        assert done.returncode == 2 and "not a token" in done.stderr
        assert service["token"][8:] not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    for url in ("http://[::1", "127.0.0.1:8000", "ftp://127.0.0.1"):
        done = cli(service, "status", missing, EVIDENCEKIT_URL=url)
        assert done.returncode == 2 and "EVIDENCEKIT_URL" in done.stderr and "Traceback" not in done.stderr, url


def test_a_batch_reads_a_bom_refuses_undecodable_files_and_names_any_refused_line(
        service: dict[str, Any], origin: Origin, tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    huge = origin.url + "/" + "x" * 70_000  # the request body passes the server's 64 KiB limit: 413
    urls.write_text(f"{origin.reply('/bom-ok', Reply(PAGE))}\n{huge}\n{origin.url}/bom-ok\n", encoding="utf-8-sig")
    done = cli(service, "retrieve", "--from-file", str(urls), "--json")
    assert done.returncode == 2, done.stderr
    first, second, third = json.loads(done.stdout)
    assert first["retrieval"]["result"]["status"] == "ready" and third["retrieval"]["result"]["status"] == "ready"
    assert second["refused"].startswith("413 payload_too_large") and second["retrieval"] is None
    urls.write_bytes(b"https://example.com/\xff\n")
    undecodable = cli(service, "retrieve", "--from-file", str(urls))
    assert undecodable.returncode == 2 and "is not UTF-8 text" in undecodable.stderr
    assert "Traceback" not in undecodable.stderr


class StoppingClient(RateLimitedClient):
    """The server goes away while the third line is sent, or the user presses Ctrl-C while waiting."""

    def __init__(self, stop: BaseException, when: str) -> None:
        super().__init__()
        self.stop, self.when = stop, when

    def retrieve(self, url: str, kind: str, language: str | None, *, mutation_id: str) -> None:
        if self.when == "sending" and len(self.started) == 2:
            raise self.stop
        self.started.append(url)

    def status(self, mutation_id: str) -> Any:
        if self.when == "waiting":
            raise self.stop
        return super().status(mutation_id)


@pytest.mark.parametrize(("stop", "when", "code", "message"), [
    (errors.TransportError("status: connection refused"), "sending", 4, "cannot reach the server"),
    (KeyboardInterrupt(), "waiting", 130, "interrupted"),
    (errors.ServerError(503, {"code": "unavailable", "message": "the database is unavailable"}, {}), "sending", 3,
     "503 unavailable"),
])
def test_a_stopped_batch_still_prints_every_mutation_id(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        stop: BaseException, when: str, code: int,
                                                        message: str) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(f"https://example.com/{n}\n" for n in range(4)))
    args = build_parser().parse_args(["retrieve", "--from-file", str(urls), "--json"])
    assert _retrieve_batch(StoppingClient(stop, when), args, sleep=lambda _: None) == code  # type: ignore[arg-type]
    out, err = capsys.readouterr()
    lines = json.loads(out)
    sent = 2 if when == "sending" else 4
    assert [line["note"] for line in lines] == ["not settled"] * sent + ["not sent"] * (4 - sent)
    assert all(line["mutation_id"] for line in lines)
    assert message in err and "`research-evidence status MUTATION_ID`" in err


def test_captions_with_a_language_from_the_command_line(service: dict[str, Any], origin: Origin) -> None:
    vtt = b"WEBVTT\n\n00:00.000 --> 00:01.000\nBonjour.\n"
    track = origin.reply("/cli-talk.vtt", Reply(vtt, content_type="text/vtt"))
    page = origin.reply("/cli-talk", Reply(f"<html><body><video><track kind='captions' srclang='fr' src='{track}'>"
                                           f"</video></body></html>".encode()))
    done = cli(service, "retrieve", page, "--kind", "published_captions", "--language", "fr", "--wait", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["retrieval"]["result"]
    assert result["segments"] == [{"start_ms": 0, "end_ms": 1000, "text": "Bonjour."}]
    assert result["provenance"]["language"] == "fr"


def test_a_url_listed_twice_is_fetched_once(service: dict[str, Any], origin: Origin, tmp_path: Path) -> None:
    page = origin.reply("/listed-twice", Reply(PAGE))
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{page}\n{page}\n")
    done = cli(service, "retrieve", "--from-file", str(urls), "--json")
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)
    assert first["mutation_id"] == second["mutation_id"] and second["retrieval"]["result"]["status"] == "ready"
    assert origin.hits.count("/listed-twice") == 1


def test_version_and_a_misspelt_command() -> None:
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)}
    shown = subprocess.run([sys.executable, "-m", "evidencekit", "--version"], env=env, capture_output=True, text=True,
                           check=False)
    assert shown.returncode == 0 and shown.stdout.startswith("evidencekit ")
    typo = subprocess.run([sys.executable, "-m", "evidencekit", "retreive"], env=env, capture_output=True, text=True,
                          check=False)
    assert typo.returncode == 2 and "did you mean 'retrieve'?" in typo.stderr


def test_a_closed_pipe_ends_the_command_quietly(service: dict[str, Any], origin: Origin) -> None:
    big = b"<html><body><article>" + b"".join(
        f"<p>Paragraph {n} of a long document, with enough words to fill a pipe quickly.</p>".encode()
        for n in range(3000)) + b"</article></body></html>"
    url = origin.reply("/cli-long", Reply(big))
    assert cli(service, "retrieve", url, "--wait").returncode == 0
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_URL": service["base"],
                   "SOSOAPI_ACCESS_TOKEN": service["token"]}
    command = [sys.executable, "-m", "evidencekit", "documents", "documents/" + url.split("://")[1]]
    with subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as reader:
        assert reader.stdout is not None and reader.stderr is not None
        assert reader.stdout.readline().startswith(b"# ")  # like `| head -1`: one line, then the pipe closes
        reader.stdout.close()
        assert reader.wait(timeout=60) == 0
        assert reader.stderr.read() == b""


def test_batch_progress_in_a_log_is_plain_lines(service: dict[str, Any], origin: Origin, tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(origin.reply(f"/log-{n}", Reply(PAGE)) + "\n" for n in range(3)))
    done = cli(service, "retrieve", "--from-file", str(urls))
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "\x1b" not in done.stderr
    assert done.stderr.splitlines() == ["1/3 sent", "2/3 sent", "3/3 sent", "1/3 settled", "2/3 settled", "3/3 settled"]


def test_documents_prints_the_ones_found_and_names_the_rest(service: dict[str, Any], origin: Origin) -> None:
    url = origin.reply("/cli-found", Reply(PAGE))
    assert cli(service, "retrieve", url, "--wait").returncode == 0
    found = "documents/" + url.split("://")[1]
    missing = "documents/" + (origin.url + "/never-retrieved").split("://")[1]
    done = cli(service, "documents", missing, found)
    assert done.returncode == 1
    assert done.stdout.startswith("# Notes") and "Ten samples" in done.stdout
    assert done.stderr.startswith(f"evidencekit: {missing}: ") and len(done.stderr.splitlines()) == 1
    as_json = json.loads(cli(service, "documents", found, missing, "--json").stdout)
    assert [d["name"] for d in as_json["documents"]] == [found] and as_json["missing"][0][0] == missing
    refused = cli(service, "documents", found, "--workspace", service["workspace_id"])
    assert refused.returncode == 2 and "--workspace does not apply" in refused.stderr


def test_search_finds_a_retrieved_page_by_a_word_and_pages_on(service: dict[str, Any], origin: Origin) -> None:
    urls = [origin.reply(f"/cli-search-{n}", Reply(PAGE.replace(b"samples", b"samples Zaunkoenigmuster")))
            for n in range(3)]
    for url in urls:
        assert cli(service, "retrieve", url, "--wait").returncode == 0
    done = cli(service, "search", "zaunkoenigmuster", "--limit", "2")
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("documents/")]
    assert len(names) == 2 and "Zaunkoenigmuster" in done.stdout
    assert done.stdout.count("match: exact") == 2
    partly = cli(service, "search", "zaunkoenigmuster", "xyzzyq", "--limit", "1")  # no page holds the second
    assert partly.returncode == 0 and "match: some (holds only: zaunkoenigmuster)" in partly.stdout
    token = done.stderr.split("--page-token ", 1)[1].split()[0]
    rest = json.loads(cli(service, "search", "Zaunkoenigmuster", "--limit", "2", "--page-token", token,
                          "--json").stdout)
    assert [result["parent"] for result in rest["results"]] != names and "next_page_token" not in rest
    assert sorted([*names, rest["results"][0]["parent"]]) == sorted("documents/" + u.split("://")[1] for u in urls)
    assert cli(service, "documents", names[0]).returncode == 0  # what search names, documents reads
    refused = cli(service, "--workspace", service["workspace_id"], "search", "zaunkoenigmuster")
    assert refused.returncode == 2 and "--workspace does not apply" in refused.stderr
    nothing = cli(service, "search", "wortdasesnichtgibt")
    assert nothing.returncode == 1 and "no stored document holds these words" in nothing.stderr


def test_running_a_batch_again_resumes_instead_of_fetching_again(service: dict[str, Any], origin: Origin,
                                                                 tmp_path: Path) -> None:
    urls = tmp_path / "resume.txt"
    urls.write_text("".join(origin.reply(f"/resume-{n}", Reply(PAGE)) + "\n" for n in range(3)))
    first = cli(service, "retrieve", "--from-file", str(urls), "--json")
    again = cli(service, "retrieve", "--from-file", str(urls), "--json")
    assert first.returncode == again.returncode == 0, again.stderr
    assert [line["mutation_id"] for line in json.loads(first.stdout)] == [
        line["mutation_id"] for line in json.loads(again.stdout)]
    assert all(origin.hits.count(f"/resume-{n}") == 1 for n in range(3))  # nothing fetched twice
    fresh = cli(service, "retrieve", "--from-file", str(urls), "--fresh", "--json")
    assert fresh.returncode == 0 and all(origin.hits.count(f"/resume-{n}") == 2 for n in range(3))


def test_urls_from_standard_input_and_no_receipt_hint_after_a_refused_token(service: dict[str, Any],
                                                                           origin: Origin) -> None:
    url = origin.reply("/from-stdin", Reply(PAGE))
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_URL": service["base"],
                   "SOSOAPI_ACCESS_TOKEN": service["token"], "EVIDENCEKIT_WORKSPACE": service["workspace_id"]}
    done = subprocess.run([sys.executable, "-m", "evidencekit", "retrieve", "--from-file", "-", "--json"],
                          input=f"{url}\n", env=environment, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["retrieval"]["result"]["status"] == "ready"
    refused = cli(service, "retrieve", url, SOSOAPI_ACCESS_TOKEN="ek_not_a_real_one")
    assert refused.returncode == 3 and "the receipt, if the server made one" not in refused.stderr


def test_a_document_whose_headline_is_its_title_shows_it_once(service: dict[str, Any], origin: Origin) -> None:
    page = b"<html><head><title>Spring flood</title></head><body><article><h1>Spring flood</h1><p>The river rose.</p>" \
           b"</article></body></html>"
    url = origin.reply("/cli-headline", Reply(page))
    assert cli(service, "retrieve", url, "--wait").returncode == 0
    shown = cli(service, "documents", "documents/" + url.split("://")[1]).stdout
    assert shown.count("# Spring flood") == 1 and "The river rose." in shown


def test_a_document_prints_one_h1_even_when_its_headline_differs_from_its_title(service: dict[str, Any],
                                                                               origin: Origin) -> None:
    page = (b"<html><head><title>Spring flood | River News</title></head><body><article><h1>Spring flood</h1>"
            b"<p>The river rose.</p><h1>Second part</h1><p>It fell again.</p><pre># not a heading</pre>"
            b"</article></body></html>")
    url = origin.reply("/cli-two-headlines", Reply(page))
    assert cli(service, "retrieve", url, "--wait").returncode == 0
    shown = cli(service, "documents", url).stdout
    h1 = [line for line in shown.splitlines() if line.startswith("# ")]
    assert h1 == ["# Spring flood | River News", "# not a heading"], shown  # the second in a code block
    assert "## Spring flood" in shown and "## Second part" in shown and "It fell again." in shown


def test_the_ids_lead_somewhere(service: dict[str, Any], origin: Origin) -> None:
    """The first line is the mutation_id `status` takes, a stored page's `documents/...` name is
    printed, and `documents` takes the page's URL too."""
    url = origin.reply("/ids-lead", Reply(PAGE))
    done = cli(service, "retrieve", url, "--wait")
    first, *rest = done.stdout.splitlines()
    mutation = first.split()[1]
    assert first.startswith(f"mutation  {mutation}  (receipt ") and cli(service, "status", mutation).returncode == 0
    name = "documents/" + url.split("://", 1)[1]
    assert f"document  {name}  (`research-evidence documents` reads it)" in rest, done.stdout
    by_url = cli(service, "documents", url)
    assert by_url.returncode == 0 and by_url.stdout.startswith("# Notes"), by_url.stderr


def test_an_unreachable_server_is_said_at_once_and_why(service: dict[str, Any]) -> None:
    """A refused connection and an https:// URL at a plain-http port are each one line, at once:
    not retried (they were, for seconds, as "the server asked to wait or did not answer")."""
    receipt = "40000000-0000-4000-8000-0000000000aa"
    refused = cli(service, "status", receipt, EVIDENCEKIT_URL="http://127.0.0.1:9")
    assert refused.returncode == 4 and "trying again" not in refused.stderr, refused.stderr
    assert refused.stderr.strip() == ("evidencekit: cannot reach http://127.0.0.1:9: the connection was refused; "
                                      "is the server running (`research-evidence serve`) at that address?")
    plain = service["base"].replace("http://", "https://")
    tls = cli(service, "status", receipt, EVIDENCEKIT_URL=plain)
    assert tls.returncode == 4 and "trying again" not in tls.stderr, tls.stderr
    assert "the TLS handshake failed" in tls.stderr and "EVIDENCEKIT_URL=http://" in tls.stderr


def test_a_batch_stopped_while_waiting_reports_what_had_settled(service: dict[str, Any], origin: Origin,
                                                                tmp_path: Path) -> None:
    """The receipts are polled together: Ctrl-C while the first line's page is still loading shows
    the lines after it that had settled as settled (they were `not settled`, waited for in turn).
    The first line's page is held until the batch has ended."""
    held = Hold()
    slow = origin.reply("/batch-slow", Reply(PAGE, hold=held))
    fast = [origin.reply(f"/batch-fast-{n}", Reply(PAGE)) for n in range(2)]
    urls = tmp_path / "interrupted.txt"
    urls.write_text("\n".join([slow, *fast]) + "\n")
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_URL": service["base"],
                   "SOSOAPI_ACCESS_TOKEN": service["token"], "EVIDENCEKIT_WORKSPACE": service["workspace_id"]}
    with subprocess.Popen([sys.executable, "-m", "evidencekit", "retrieve", "--from-file", str(urls), "--json"],
                          env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as batch:
        said: list[str] = []  # plain progress lines on a pipe: "2/3 settled" once both fast ones are in
        printed: list[str] = []
        readers = [threading.Thread(target=lines.extend, args=(stream,), daemon=True)
                   for lines, stream in ((said, batch.stderr), (printed, batch.stdout))]
        for reader in readers:
            reader.start()
        try:
            eventually(lambda: "2/3 settled\n" in said or batch.poll() is not None, what="both fast pages to settle")
            batch.send_signal(signal.SIGINT)
            batch.wait(timeout=PATIENCE)
        finally:
            held.release()
            if batch.poll() is None:  # the test failed before the batch ended
                batch.kill()
            for reader in readers:
                reader.join(timeout=PATIENCE)
    err = "".join(said)
    assert "2/3 settled\n" in said and "3/3 settled\n" not in said and batch.returncode == 130, err
    first, second, third = json.loads("".join(printed))
    assert first["note"] == "not settled"
    assert [line["retrieval"]["result"]["status"] for line in (second, third)] == ["ready", "ready"]
    assert second["note"] is None and third["note"] is None


def test_url_and_token_flags_beside_the_environment(service: dict[str, Any], origin: Origin) -> None:
    """--url and --token (before or after the command) stand in for EVIDENCEKIT_URL and
    SOSOAPI_ACCESS_TOKEN; --json is one line for a pipe."""
    receipt = str(uuid.uuid4())
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_WORKSPACE": service["workspace_id"]}
    for args in (["--url", service["base"], "--token", service["token"], "status", receipt, "--json"],
                 ["status", receipt, "--json", "--url", service["base"], "--token", service["token"]]):
        done = subprocess.run([sys.executable, "-m", "evidencekit", *args], env=environment, capture_output=True,
                              text=True, timeout=60, check=False)
        assert done.returncode == 1 and json.loads(done.stdout) == {"retrieval": None}, done.stderr
        assert done.stdout.count("\n") == 1  # not indented: stdout is a pipe
    bad = subprocess.run([sys.executable, "-m", "evidencekit", "status", receipt, "--url", service["base"],
                          "--token", "has space"], env=environment, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--token is not a token" in bad.stderr and "has space" not in bad.stderr


def test_json_is_indented_for_a_person_at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from evidencekit.client.evidence import cli as client_cli

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert client_cli._json({"retrieval": None}) == '{\n  "retrieval": null\n}'


def test_only_a_refused_connection_is_called_refused() -> None:
    """The kind of failure comes from what caused httpx's ConnectError, not from its text: a name
    that does not resolve is neither refused nor a TLS failure (and stays retried)."""
    import socket
    import ssl

    from evidencekit.client.runtime._retry import RetryPolicy, pause_before_retry
    from evidencekit.client.runtime._transport import OperationRef, _transport_error

    def failure(cause: BaseException) -> errors.ConnectFailed:
        try:
            try:
                raise cause
            except BaseException as inner:
                raise httpx.ConnectError(str(inner)) from inner
        except httpx.ConnectError as exc:
            made = _transport_error(OperationRef("status", "POST", "/s", "sha256:0"), exc)
        assert isinstance(made, errors.ConnectFailed)
        return made

    refused = failure(ConnectionRefusedError(111, "Connection refused"))
    tls = failure(ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number"))
    unresolved = failure(socket.gaierror(-2, "Name or service not known"))
    assert (refused.refused, refused.tls) == (True, False) and (tls.refused, tls.tls) == (False, True)
    assert (unresolved.refused, unresolved.tls) == (False, False)
    cli_policy = RetryPolicy(retry_refused=False)
    assert pause_before_retry(refused, 1, 0.0, cli_policy) is None
    assert pause_before_retry(tls, 1, 0.0, RetryPolicy()) is None
    assert pause_before_retry(unresolved, 1, 0.0, cli_policy) is not None
    assert "connection was refused" not in _failure(unresolved, "http://x")[0]
