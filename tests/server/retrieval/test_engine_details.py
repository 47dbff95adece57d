"""Engine behaviour beyond the status table: failures before any answer, and hostile bodies."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidencekit.server.evidence.fetch.fetcher import Fetcher
from evidencekit.server.evidence.fetch.policy import EgressPolicy, parse_allowlist
from evidencekit.server.evidence.retrieval.engine import Draft, RetrievalEngine
from tests.origin import Origin, Reply
from tests.server.conftest import fake_resolver
from tests.server.retrieval.conftest import contract_errors
from tests.server.retrieval.test_engine import ARTICLE, SRT, VTT

pytestmark = pytest.mark.anyio


async def test_unreachable_origin_is_egress_unavailable() -> None:
    fetcher = Fetcher(EgressPolicy(parse_allowlist("127.0.0.1:9")), resolver=fake_resolver)
    try:
        result = (await RetrievalEngine(fetcher).retrieve("http://127.0.0.1:9/", "url_text")).result
    finally:
        await fetcher.aclose()
    assert (result["status"], result["reason"]) == ("unavailable", "egress_unavailable")
    assert result["provenance"]["source_url"] is None
    assert contract_errors(result) == []


async def test_long_title_and_description_are_cut_cleanly(engine: RetrievalEngine, site: Origin) -> None:
    title = "Ünïcödé " * 40 + "e\u0301" * 50
    description = "d\u0301" * 3000
    page = f"<html><head><title>{title}</title><meta name='description' content='{description}'></head>" \
           f"<body><p>Body text.</p></body></html>"
    result = (await engine.retrieve(site.reply("/long-meta", Reply(page.encode())), "url_text")).result
    assert 0 < len(result["title"]) <= 200 and 0 < len(result["description"]) <= 2000
    assert not result["description"].startswith("\u0301") and result["description"].endswith("\u0301")
    assert contract_errors(result) == []


_counter = itertools.count()
CONTENT_TYPES = [None, "text/html", "text/html; charset=shift_jis", "application/xhtml+xml", "text/plain",
                 "text/vtt", "application/x-subrip", "text/plain; charset=utf-16", "image/png"]


def mutated(seed: bytes) -> st.SearchStrategy[bytes]:
    def mutate(data: tuple[int, int, bytes]) -> bytes:
        start, length, junk = data
        start %= len(seed) + 1
        return seed[:start] + junk + seed[start + length:]
    return st.tuples(st.integers(0, 10_000), st.integers(0, 50), st.binary(max_size=40)).map(mutate)


BODIES = st.one_of(st.binary(max_size=2000), mutated(ARTICLE), mutated(VTT), mutated(SRT))


CONTENT_LANGUAGES = [None, "de", "en_US", "de-DE, en", "x", "12", "en-", "zh-Hant-TW", "a" * 40, " fr ", "ç"]


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES, content_type=st.sampled_from(CONTENT_TYPES),
       kind=st.sampled_from(["url_text", "published_captions"]),
       language=st.sampled_from([None, "de", "en-US"]), content_language=st.sampled_from(CONTENT_LANGUAGES))
async def test_any_body_gives_a_contract_valid_result(engine: RetrievalEngine, site: Origin, body: bytes,
                                                      content_type: str | None, kind: str,
                                                      language: str | None, content_language: str | None) -> None:
    headers = {} if content_language is None else {"content-language": content_language}
    url = site.reply(f"/fuzz-{next(_counter)}", Reply(body, content_type=content_type, headers=headers))
    result = (await engine.retrieve(url, kind, language)).result
    assert contract_errors(result) == []


@pytest.mark.parametrize(("header", "expected"), [
    ("en_US", "en-US"), ("de-DE, en", "de-DE"), ("not a tag!", None), ("x", None)])
@pytest.mark.parametrize(("body", "content_type", "kind"), [
    (b"Plain notes.", "text/plain", "url_text"), (VTT.replace(b"Language: de\n", b""), "text/vtt", "published_captions"),
    (SRT, "application/x-subrip", "published_captions")], ids=["text", "vtt", "srt"])
async def test_content_language_is_read_as_a_language_tag(engine: RetrievalEngine, site: Origin, header: str,
                                                           expected: str | None, body: bytes, content_type: str,
                                                           kind: str) -> None:
    """A publisher's Content-Language is normalised like <html lang>, or dropped when it is no tag:
    stored as sent, "en_US" broke the contract's language pattern and every later read of the receipt."""
    url = site.reply(f"/lang-{next(_counter)}", Reply(body, content_type=content_type,
                                                       headers={"content-language": header}))
    result = (await engine.retrieve(url, kind)).result
    assert result["status"] == "ready"
    assert (result["provenance"]["language"], result["provenance"]["language_source"]) == (
        expected, "publisher_declared" if expected else "unknown")
    assert contract_errors(result) == []


async def test_a_result_that_breaks_the_contract_is_stored_as_unavailable(engine: RetrievalEngine,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    draft = Draft("url_text", None)
    draft.text, draft.language, draft.source_url = "Some text.", "en_US", "https://example.com/a"
    result = engine.finish(draft).result
    assert (result["status"], result["reason"], result["text"]) == ("unavailable", "unavailable", "")
    assert contract_errors(result) == []
    assert "breaks the contract" in caplog.text and "language" in caplog.text


async def test_requests_identify_themselves_and_ask_for_the_kind(engine: RetrievalEngine, site: Origin) -> None:
    await engine.retrieve(site.reply("/ua-text", Reply(ARTICLE)), "url_text")
    await engine.retrieve(site.reply("/ua-captions", Reply(VTT, content_type="text/vtt")), "published_captions")
    text, captions = site.headers["/ua-text"], site.headers["/ua-captions"]
    assert text["user-agent"].startswith("evidencekit/") and "research-public-retrieval/v1" in text["user-agent"]
    assert text["accept"].startswith("text/html") and captions["accept"].startswith("text/vtt")
    assert text["accept-encoding"] == "gzip, deflate"
