"""Every reason fetch and parse can produce, end to end against a real HTTPS origin on loopback.

Each result must also be valid against every published output schema of retrieve.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
from dataclasses import dataclass, field
from typing import Any

import pytest

from evidencekit.server.evidence.index_words import entry_words
from evidencekit.server.evidence.parse.pool import HtmlParser, ParseTimeout
from evidencekit.server.evidence.retrieval import engine as engine_module
from evidencekit.server.evidence.retrieval.engine import RetrievalEngine
from evidencekit.server.evidence.retrieval.page_words import PageRead, read_page, words_key
from tests.origin import LocalCA, Origin, Reply, gzip_bomb
from tests.server.retrieval.conftest import contract_errors
from tests.support import PATIENCE, Hold, until

pytestmark = pytest.mark.anyio

ARTICLE = (b"<!doctype html><html lang='en'><head><title>Field notes</title>"
           b"<meta name='description' content='Notes from the field.'></head><body>"
           b"<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
           b"<article><h1>Field notes</h1><p>The first observation was made at dawn near the river.</p>"
           b"<p>The second observation confirmed the first one, three days later.</p></article>"
           b"<footer>Copyright 2099</footer></body></html>")
VTT = (b"WEBVTT\nLanguage: de\n\n00:00.000 --> 00:01.500\nGuten Morgen\n\n"
       b"00:01.500 --> 00:03.000\n<v Anna>Wie geht's?</v>\n")
SRT = b"1\n00:00:01,000 --> 00:00:02,000\nHello\n\n2\n00:00:02,500 --> 00:00:04,000\n<i>World</i>\n"
LOGIN = (b"<html><head><title>Sign in</title></head><body><form action='/login' method='post'>"
         b"<input name='user'><input type='password' name='pw'><button>Sign in</button></form></body></html>")


SHELL = (b"<!doctype html><html><head><title>Dashboard</title><meta name='description' content='Your dashboard.'>"
         b"<script defer src='/static/main.js'></script></head><body>"
         b"<noscript>You need to enable JavaScript to run this app.</noscript><div id='root'></div></body></html>")
RANDOM_BYTES = bytes((n * 7919 + 13) % 251 for n in range(30_000))  # no text in any encoding


def page_with_track(*tracks: str) -> bytes:
    return ("<html><head><title>A talk</title></head><body><video src='/talk.mp4'>"
            + "".join(tracks) + "</video><p>About the talk.</p></body></html>").encode()


@dataclass
class Case:
    name: str
    replies: dict[str, Reply]
    status: str
    reason: str | None
    kind: str = "url_text"
    language: str | None = None
    path: str = "/"
    warnings: set[str] = field(default_factory=set)


def vtt_cues(count: int, *, broken: int = 0) -> bytes:
    lines = ["WEBVTT", ""]
    for i in range(count):
        lines += [f"00:{i // 60:02d}:{i % 60:02d}.000 --> 00:{i // 60:02d}:{i % 60:02d}.900", f"cue {i}", ""]
    for _ in range(broken):
        lines += ["00:00:05.000 --> 00:00:04.000", "ends before it starts", ""]
    return "\n".join(lines).encode()


CASES = [
    Case("ready", {"/": Reply(ARTICLE)}, "ready", None),
    Case("unsafe_url", {"/": Reply(status=302, headers={"location": "https://169.254.169.254/"})}, "blocked", "unsafe_url"),
    # an A-label idna refuses (it raised IDNAError out of the URL check: the receipt ran until unconfirmed)
    Case("unsafe_url_idna", {"/": Reply(status=302, headers={"location": "https://xn--localhost-/"})}, "blocked", "unsafe_url"),
    Case("access_denied", {"/": Reply(b"no", 403, "text/plain")}, "blocked", "access_denied"),
    Case("login_required_401", {"/": Reply(LOGIN, 401)}, "blocked", "login_required"),
    Case("login_required_wall", {"/": Reply(LOGIN)}, "blocked", "login_required"),
    Case("login_required_wall_with_words", {"/": Reply(LOGIN.replace(
        b"<form", b"<h1>Sign in to Example</h1><p>Welcome back. Please sign in to continue.</p>"
                  b"<p><a href='/reset'>Forgot your password?</a></p><form"))}, "blocked", "login_required"),
    Case("not_found", {"/": Reply(b"gone", 404, "text/plain")}, "unavailable", "not_found"),
    Case("gone", {"/": Reply(b"gone", 410, "text/plain")}, "unavailable", "not_found"),
    Case("rate_limited", {"/": Reply(b"", 429, "text/plain", {"retry-after": "30"})}, "rate_limited", "rate_limited"),
    Case("unavailable", {"/": Reply(b"oops", 503, "text/plain")}, "unavailable", "unavailable"),
    Case("timeout", {"/": Reply(ARTICLE, delay=5)}, "unavailable", "timeout"),
    Case("unsupported_media", {"/": Reply(b"%PDF-1.7", content_type="application/pdf")}, "unsupported", "unsupported_media"),
    Case("unsupported_content", {"/": Reply(b"\x1b", headers={"content-encoding": "br"})}, "unsupported", "unsupported_content"),
    Case("no_text", {"/": Reply(b"<html><body><script>var x=1;</script></body></html>")}, "empty", "no_text"),
    # an application shell says no_text, not metadata_only: its text exists only once JavaScript runs
    Case("no_text_script_shell", {"/": Reply(SHELL)}, "empty", "no_text"),
    Case("unsupported_content_binary_as_html", {"/": Reply(RANDOM_BYTES)}, "unsupported", "unsupported_content"),
    Case("unsupported_content_binary_as_text", {"/": Reply(RANDOM_BYTES, content_type="text/plain; charset=utf-8")}, "unsupported", "unsupported_content"),
    Case("metadata_only", {"/": Reply(b"<html><head><title>Only a title</title></head><body></body></html>")}, "empty", "metadata_only"),
    # a charset that is no text encoding (it raised in the parse: the receipt ran until unconfirmed) is ignored
    Case("charset_undefined", {"/": Reply(ARTICLE, content_type="text/html; charset=undefined")}, "ready", None),
    Case("charset_idna_meta", {"/": Reply(ARTICLE.replace(b"<head>", b"<head><meta charset='idna'>"), content_type="text/html")}, "ready", None),
    Case("charset_punycode_text", {"/": Reply(b"x-" + b"a" * 5000, content_type="text/plain; charset=punycode")}, "ready", None),
    Case("charset_undefined_captions", {"/c.vtt": Reply(VTT, content_type="text/vtt; charset=undefined")}, "ready", None, kind="published_captions", path="/c.vtt"),
    Case("unsupported_content_binary_charset_idna", {"/": Reply(RANDOM_BYTES, content_type="text/html; charset=idna")}, "unsupported", "unsupported_content"),
    Case("response_too_large", {"/": Reply(b"<html><body><p>" + b"word " * 80_000 + b"</p></body></html>")}, "partial", "response_too_large", warnings={"text_limited"}),
    Case("response_too_large_blocked", {"/": Reply(b"<html><head><script>" + b"x" * 300_000 + b"</script></head></html>")}, "blocked", "response_too_large"),
    Case("gzip_bomb", {"/": Reply(gzip_bomb(50 * 1024 * 1024), content_type="text/plain", headers={"content-encoding": "gzip"})}, "blocked", "response_too_large"),
    Case("source_partial", {"/": Reply(b"<html><body><p>" + b"half a page " * 50 + b"</p>", declared_length=100_000, chunks=3)}, "partial", "source_partial"),
    Case("text_limited", {"/": Reply(b"<html><body><p>" + b"lorem ipsum " * 3000 + b"</p></body></html>")}, "partial", "text_limited"),
    Case("nodes_limited", {"/": Reply(b"<html><body><p>Opening words.</p>" + b"<p>x" * 60_000 + b"</body></html>")}, "partial", "nodes_limited"),
    Case("language_mismatch_text", {"/": Reply(ARTICLE)}, "ready", None, language="fr", warnings={"language_mismatch"}),
    Case("plain_text", {"/": Reply(b"Just text.\nTwo lines.", content_type="text/plain")}, "ready", None),
    Case("gzip_page", {"/": Reply(gzip.compress(ARTICLE), headers={"content-encoding": "gzip"})}, "ready", None),
    Case("vtt_file", {"/c.vtt": Reply(VTT, content_type="text/vtt")}, "ready", None, kind="published_captions", path="/c.vtt"),
    Case("srt_file", {"/c.srt": Reply(SRT, content_type="application/x-subrip")}, "ready", None, kind="published_captions", path="/c.srt"),
    Case("srt_sniffed", {"/c": Reply(SRT, content_type=None)}, "ready", None, kind="published_captions", path="/c"),
    Case("cues_limited", {"/c.vtt": Reply(vtt_cues(1200), content_type="text/vtt")}, "partial", "cues_limited", kind="published_captions", path="/c.vtt"),
    Case("invalid_cues", {"/c.vtt": Reply(vtt_cues(3, broken=2), content_type="text/vtt")}, "partial", "invalid_cues", kind="published_captions", path="/c.vtt"),
    Case("invalid_captions", {"/c.vtt": Reply(vtt_cues(0, broken=3), content_type="text/vtt")}, "unsupported", "invalid_captions", kind="published_captions", path="/c.vtt"),
    Case("invalid_captions_garbage", {"/c.vtt": Reply(b"not a caption file", content_type="text/vtt")}, "unsupported", "invalid_captions", kind="published_captions", path="/c.vtt"),
    Case("no_captions_page", {"/": Reply(ARTICLE)}, "empty", "no_captions", kind="published_captions"),
    Case("no_captions_file", {"/c.vtt": Reply(b"WEBVTT\n\nNOTE nothing here\n", content_type="text/vtt")}, "empty", "no_captions", kind="published_captions", path="/c.vtt"),
    Case("unsupported_source", {"/t.txt": Reply(b"Prose, not captions.", content_type="text/plain")}, "unsupported", "unsupported_source", kind="published_captions", path="/t.txt"),
    Case("track_by_language", {"/": Reply(page_with_track("<track kind='captions' srclang='en' src='/en.vtt'>", "<track kind='subtitles' srclang='de' src='de.vtt'>")), "/de.vtt": Reply(VTT, content_type="text/vtt"), "/en.vtt": Reply(b"WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n", content_type="text/vtt")}, "ready", None, kind="published_captions", language="de"),
    Case("language_mismatch", {"/": Reply(page_with_track("<track kind='captions' srclang='en' src='/en.vtt'>"))}, "empty", "language_mismatch", kind="published_captions", language="ja"),
    Case("track_not_found", {"/": Reply(page_with_track("<track kind='captions' srclang='en' src='/missing.vtt'>"))}, "unavailable", "not_found", kind="published_captions"),
    Case("track_unsafe", {"/": Reply(page_with_track("<track kind='captions' srclang='en' src='https://127.0.0.1:1/x.vtt'>"))}, "blocked", "unsafe_url", kind="published_captions"),
]


async def run(engine: RetrievalEngine, site: Origin, case: Case) -> dict[str, Any]:
    prefix = f"/{case.name}"
    for path, reply in case.replies.items():
        if reply.headers.get("location", "").startswith("/"):
            reply.headers["location"] = prefix + reply.headers["location"]
        site.reply(prefix + path, reply)
    if case.kind == "published_captions":  # tracks are relative to the page: serve them under the prefix
        for reply in case.replies.values():
            reply.body = reply.body.replace(b"src='/", f"src='{prefix}/".encode())
    retrieved = await engine.retrieve(site.url + prefix + case.path, case.kind, case.language)
    return retrieved.result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_each_situation_maps_to_its_status_and_reason(engine: RetrievalEngine, site: Origin, case: Case) -> None:
    result = await run(engine, site, case)
    assert (result["status"], result["reason"]) == (case.status, case.reason), result["warnings"]
    assert case.warnings <= set(result["warnings"])
    assert contract_errors(result) == []


def test_every_reason_of_the_result_mapping_has_a_case() -> None:
    """A row added to the mapping table (server/retrieval/outcomes.py) needs a case above."""
    from evidencekit.server.evidence.retrieval.outcomes import OUTCOMES

    produced = {c.reason for c in CASES} | {w for c in CASES for w in c.warnings}
    elsewhere = {"egress_unavailable",  # tests/server/retrieval/test_engine_details.py (no route to a host)
                 "cancelled"}  # not the engine's: tests/server/store/test_receipts.py::test_cancel_and_purge
    missing = {o.reason for o in OUTCOMES if o.reason} - elsewhere - produced
    assert not missing, f"no case for {sorted(missing)}"


async def test_ready_article_has_text_metadata_and_provenance(engine: RetrievalEngine, site: Origin) -> None:
    retrieved = await engine.retrieve(site.reply("/article", Reply(ARTICLE)), "url_text")
    result = retrieved.result
    assert "first observation" in result["text"] and "Copyright" not in result["text"] and "About" not in result["text"]
    assert (result["title"], result["description"]) == ("Field notes", "Notes from the field.")
    provenance = result["provenance"]
    assert provenance["source_url"] == site.url + "/article"
    assert (provenance["mime_type"], provenance["content_kind"], provenance["language"]) == ("text/html", "document_text", "en")
    assert provenance["language_source"] == "publisher_declared" and provenance["platform_native_verified"] is False
    assert result["segments"] == [] and retrieved.markdown and "first observation" in retrieved.markdown
    assert retrieved.content_hash and retrieved.succeeded


async def test_captions_become_segments(engine: RetrievalEngine, site: Origin) -> None:
    result = (await engine.retrieve(site.reply("/talk.vtt", Reply(VTT, content_type="text/vtt")),
                                    "published_captions")).result
    assert result["segments"] == [{"start_ms": 0, "end_ms": 1500, "text": "Guten Morgen"},
                                  {"start_ms": 1500, "end_ms": 3000, "text": "Wie geht's?"}]
    provenance = result["provenance"]
    assert (provenance["caption_format"], provenance["content_kind"], provenance["language"]) == (
        "webvtt", "published_caption_file", "de")


async def test_rate_limit_carries_retry_after(engine: RetrievalEngine, site: Origin) -> None:
    url = site.reply("/busy", Reply(b"", 429, "text/plain", {"retry-after": "30"}))
    result = (await engine.retrieve(url, "url_text")).result
    assert result["retry_after_seconds"] == 30 and result["text"] == "" and result["title"] is None


def caption_page(track: str) -> Reply:
    return Reply(f"<html><body><video><track kind='captions' srclang='de' src='{track}'></video></body></html>".encode())


async def test_a_page_and_its_caption_track_share_one_deadline(engine: RetrievalEngine, site: Origin) -> None:
    """The fetcher's deadline (3 s here) bounds the whole retrieval, not each fetch of it: the page
    takes 2.4 s (two slow redirects and a slow answer), its track 0.8 s more."""
    track = site.reply("/slow-track.vtt", Reply(VTT, content_type="text/vtt", delay=0.8))
    page = site.reply("/slow-page", Reply(caption_page(track).body, delay=0.8))
    for hop in (2, 1):
        page = site.reply(f"/slow-hop{hop}", Reply(b"", 302, None, {"location": page}, delay=0.8))
    result = (await engine.retrieve(page, "published_captions")).result
    assert (result["status"], result["reason"]) == ("unavailable", "timeout")
    assert contract_errors(result) == []


async def test_a_page_and_its_caption_track_share_one_redirect_budget(engine: RetrievalEngine, site: Origin) -> None:
    """Five redirects in all (the fetcher's limit): three to the page and three to its track are six."""
    def chain(name: str, final: str) -> str:
        target = final
        for hop in range(3, 0, -1):
            target = site.reply(f"/{name}-hop{hop}", Reply(b"", 302, None, {"location": target}))
        return target

    track = chain("track", site.reply("/track.vtt", Reply(VTT, content_type="text/vtt")))
    page = chain("page", site.reply("/captioned", caption_page(track)))
    result = (await engine.retrieve(page, "published_captions")).result
    assert (result["status"], result["reason"]) == ("unavailable", "unavailable")
    within = chain("near", site.reply("/near.vtt", Reply(VTT, content_type="text/vtt")))
    near_page = site.reply("/near-page", caption_page(within))
    assert (await engine.retrieve(near_page, "published_captions")).result["status"] == "ready"


async def test_a_caption_file_with_an_impossible_timestamp_keeps_its_other_cues(engine: RetrievalEngine,
                                                                                 site: Origin) -> None:
    body = VTT + b"\n99999999999:00:00.000 --> 99999999999:00:01.000\nNever\n"
    result = (await engine.retrieve(site.reply("/far.vtt", Reply(body, content_type="text/vtt")),
                                    "published_captions")).result
    assert (result["status"], result["reason"], len(result["segments"])) == ("partial", "invalid_cues", 2)
    assert contract_errors(result) == []


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"


@pytest.mark.parametrize("body", [PNG, PDF, b"PK\x03\x04\x14\x00\x00\x00\x08\x00"], ids=["png", "pdf", "zip"])
async def test_a_binary_body_without_a_content_type_is_unsupported_media(engine: RetrievalEngine, site: Origin,
                                                                          body: bytes) -> None:
    for kind in ("url_text", "published_captions"):
        url = site.reply(f"/untyped-{len(body)}-{kind}", Reply(body, content_type=None))
        result = (await engine.retrieve(url, kind)).result
        assert (result["status"], result["reason"], result["text"]) == ("unsupported", "unsupported_media", "")
        assert contract_errors(result) == []


async def test_a_script_shell_keeps_its_title_and_says_no_text(engine: RetrievalEngine, site: Origin) -> None:
    result = (await engine.retrieve(site.reply("/shell", Reply(SHELL)), "url_text")).result
    assert (result["status"], result["reason"], result["text"]) == ("empty", "no_text", "")
    assert (result["title"], result["description"]) == ("Dashboard", "Your dashboard.")


async def test_relative_links_in_the_markdown_resolve_against_the_final_url(engine: RetrievalEngine,
                                                                           site: Origin) -> None:
    page = (b"<html><body><article><p>Read <a href='part-two.html'>part two</a> and <a href='/index'>the index</a>"
            b" of this guide, which has more parts.</p></article></body></html>")
    site.reply("/guide/part-one.html", Reply(page))
    start = site.reply("/old-guide", Reply(status=301, headers={"location": "/guide/part-one.html"}))
    retrieved = await engine.retrieve(start, "url_text")
    assert retrieved.markdown == (f"Read [part two]({site.url}/guide/part-two.html) and [the index]({site.url}/index)"
                                  " of this guide, which has more parts.")


async def test_text_without_a_content_type_is_still_read(engine: RetrievalEngine, site: Origin) -> None:
    for body in (b"Plain notes, tab\tand form feed\x0c kept.", "\ufeffUnicode notes.".encode("utf-16")):
        url = site.reply(f"/untyped-text-{len(body)}", Reply(body, content_type=None))
        result = (await engine.retrieve(url, "url_text")).result
        assert result["status"] == "ready" and "notes" in result["text"], result


FILLER = b"<p>" + b"filler words " * 25_000 + b"</p>"  # over the 256 KiB cap of these tests


def track_page(track: str, *, before: bytes = b"", after: bytes = b"") -> Reply:
    return Reply(b"<html><body>" + before + f"<video><track kind='captions' srclang='de' src='{track}'></video>".encode()
                 + after + b"</body></html>")


async def test_a_cue_cut_at_the_segment_limit_makes_the_result_partial(engine: RetrievalEngine, site: Origin) -> None:
    body = b"WEBVTT\n\n00:00.000 --> 00:01.000\n" + b"a" * 24_999 + b"\n"
    result = (await engine.retrieve(site.reply("/long-cue.vtt", Reply(body, content_type="text/vtt")),
                                    "published_captions")).result
    assert (result["status"], result["reason"]) == ("partial", "text_limited")
    assert len(result["segments"][0]["text"]) == 20_000 and contract_errors(result) == []


async def test_captions_past_the_byte_cap_are_not_reported_missing(engine: RetrievalEngine, site: Origin) -> None:
    """Of a page or file over the byte cap only the start is read: a track or cues may come later."""
    late_track = site.reply("/late-track", track_page("/never.vtt", before=FILLER))
    late_cues = site.reply("/late-cues.vtt", Reply(b"WEBVTT\n\nNOTE " + b"x" * 300_000 + b"\n\n00:00.000 --> "
                                                   b"00:01.000\nLate\n", content_type="text/vtt"))
    for url in (late_track, late_cues):
        result = (await engine.retrieve(url, "published_captions")).result
        assert (result["status"], result["reason"]) == ("blocked", "response_too_large"), url
        assert contract_errors(result) == []


async def test_a_complete_track_from_a_page_over_the_cap_is_ready(engine: RetrievalEngine, site: Origin) -> None:
    track = site.reply("/whole.vtt", Reply(VTT, content_type="text/vtt"))
    result = (await engine.retrieve(site.reply("/big-page", track_page(track, after=FILLER)),
                                    "published_captions")).result
    assert (result["status"], result["reason"], result["warnings"]) == ("ready", None, [])
    assert len(result["segments"]) == 2


async def test_a_track_that_is_not_a_caption_media_type_is_unsupported_media(engine: RetrievalEngine,
                                                                             site: Origin) -> None:
    track = site.reply("/poster.png", Reply(PNG, content_type="image/png"))
    result = (await engine.retrieve(site.reply("/png-track", track_page(track)), "published_captions")).result
    assert (result["status"], result["reason"]) == ("unsupported", "unsupported_media")


async def test_a_track_src_resolves_against_the_pages_base_href(engine: RetrievalEngine, site: Origin) -> None:
    site.reply("/media/captions/en.vtt", Reply(VTT, content_type="text/vtt"))
    page = site.reply("/talks/one", Reply(b"<html><head><base href='/media/'></head><body><video>"
                                          b"<track kind='captions' srclang='de' src='captions/en.vtt'></video>"
                                          b"</body></html>"))
    result = (await engine.retrieve(page, "published_captions")).result
    assert result["status"] == "ready" and result["provenance"]["source_url"].endswith("/media/captions/en.vtt")


@pytest.mark.parametrize(("requested", "chosen"), [("en-GB", "/en.vtt"), ("en", "/en.vtt"), ("en-US", "/en-us.vtt"),
                                                   ("en-AU", "/en.vtt"), ("de", None)])
async def test_the_track_is_chosen_by_language_lookup(engine: RetrievalEngine, site: Origin, requested: str,
                                                      chosen: str | None) -> None:
    tracks = "".join(f"<track kind='subtitles' srclang='{lang}' src='{site.reply(path, Reply(VTT, content_type='text/vtt'))}'>"
                     for lang, path in (("en-US", "/en-us.vtt"), ("en", "/en.vtt")))
    page = site.reply(f"/lookup-{requested}", Reply(f"<html><body><video>{tracks}</video></body></html>".encode()))
    result = (await engine.retrieve(page, "published_captions", requested)).result
    if chosen is None:
        assert (result["status"], result["reason"]) == ("empty", "language_mismatch")
    else:
        assert result["provenance"]["source_url"].endswith(chosen), result


async def test_caption_files_served_as_generic_binary_are_read(engine: RetrievalEngine, site: Origin) -> None:
    srt = site.reply("/talk.srt", Reply(SRT, content_type="application/octet-stream"))
    direct = (await engine.retrieve(srt, "published_captions")).result
    assert direct["status"] == "ready" and direct["provenance"]["caption_format"] == "subrip"
    assert contract_errors(direct) == []
    via_page = (await engine.retrieve(site.reply("/srt-page", track_page(srt)), "published_captions")).result
    assert via_page["status"] == "ready" and len(via_page["segments"]) == 2
    binary = site.reply("/poster.bin", Reply(PNG, content_type="application/octet-stream"))
    for kind in ("published_captions", "url_text"):
        result = (await engine.retrieve(binary, kind)).result
        assert (result["status"], result["reason"]) == ("unsupported", "unsupported_media")


async def test_an_engine_holds_a_bounded_number_of_bodies_at_once(site: Origin, tls: LocalCA) -> None:
    """Memory stays bounded whatever the worker's concurrency: past BODIES_IN_FLIGHT_BYTES (counted at
    the byte cap) a retrieval waits for one in flight to finish."""
    from evidencekit.server.evidence.fetch.fetcher import Fetcher, FetchLimits
    from evidencekit.server.evidence.fetch.policy import EgressPolicy, parse_allowlist
    from evidencekit.server.evidence.retrieval.engine import BODIES_IN_FLIGHT_BYTES
    from tests.server.conftest import fake_resolver

    limits = FetchLimits(max_bytes=BODIES_IN_FLIGHT_BYTES // 2, connect_timeout=2, read_timeout=PATIENCE,
                         deadline=PATIENCE)
    fetcher = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{site.url.rsplit(':', 1)[1]}")), limits,
                      ssl_context=tls.client_context(), resolver=fake_resolver)
    engine = RetrievalEngine(fetcher)
    held = Hold()
    urls = [site.reply(f"/held-{n}", Reply(ARTICLE, hold=held)) for n in range(6)]
    fetches = []
    real_fetch = fetcher.fetch

    async def counted(*args: Any, **kwargs: Any) -> Any:
        fetches.append(args[0])
        return await real_fetch(*args, **kwargs)

    fetcher.fetch = counted  # type: ignore[method-assign]
    # bodies held: retrievals between their fetch and their parse, counted in the engine (the origin
    # counts a request until its handler returns, which can be after the engine has read the body
    # and started the next one)
    holding = most_holding = 0
    real_retrieve = engine._retrieve

    async def tracked(*args: Any) -> Any:
        nonlocal holding, most_holding
        holding += 1
        most_holding = max(most_holding, holding)
        try:
            return await real_retrieve(*args)
        finally:
            holding -= 1

    engine._retrieve = tracked  # type: ignore[method-assign]
    retrieving = asyncio.gather(*(engine.retrieve(url, "url_text") for url in urls))
    try:
        await until(lambda: site.in_flight >= 2, what="two pages to be held at the origin")
        assert len(fetches) == 2  # the four others wait for one of them to finish, not at the origin
    finally:
        held.release()
    results = await retrieving
    await fetcher.aclose()
    assert all(r.result["status"] == "ready" for r in results)
    assert most_holding == 2 and len(fetches) == 6


async def test_the_markdown_kept_for_documents_is_bounded(engine: RetrievalEngine, site: Origin) -> None:
    from evidencekit.server.evidence.retrieval import limits

    links = "".join(f"<a href='/note/{n}'>note {n}</a> " for n in range(12_000))  # markdown far past the text
    retrieved = await engine.retrieve(site.reply("/many-links", Reply(f"<html><body><p>{links}</p></body></html>"
                                                                      .encode())), "url_text")
    assert retrieved.markdown is not None and len(retrieved.markdown) <= limits.MAX_MARKDOWN
    assert retrieved.markdown.startswith(f"[note 0]({site.url}/note/0) [note 1]({site.url}/note/1)")


async def test_a_body_that_cannot_be_read_in_time_settles_as_a_timeout(engine: RetrievalEngine, site: Origin) -> None:
    """The retrieval's deadline covers reading the body (in the parse processes, which are killed
    at it: tests/server/parse/test_parse_pool.py); for each reader the outcome is a timeout."""

    class OutOfTime(HtmlParser):
        async def run(self, call: Any, size: int, deadline: float | None = None) -> Any:
            assert deadline is not None  # every read is given the retrieval's deadline
            raise ParseTimeout("the body could not be read within the retrieval's deadline")

    engine.parser = OutOfTime(0)
    pages = {"/html": Reply(ARTICLE), "/text": Reply(b"plain words", content_type="text/plain"),
             "/captions.vtt": Reply(VTT, content_type="text/vtt"),
             "/denied": Reply(LOGIN, 401)}
    for path, reply in pages.items():
        url = site.reply("/out-of-time" + path, reply)
        kind = "published_captions" if path.endswith(".vtt") else "url_text"
        result = (await engine.retrieve(url, kind)).result
        assert (result["status"], result["reason"]) == ("unavailable", "timeout"), path
        assert contract_errors(result) == []


async def test_a_reader_that_fails_on_a_body_settles_it_at_once_as_unsupported_content(
        engine: RetrievalEngine, site: Origin, caplog: pytest.LogCaptureFixture) -> None:
    """A reader raising on some bytes (a codec that raised did) settles the receipt now, with the
    URL logged without its query; before, the worker retried it until it settled unconfirmed."""

    class Failing(HtmlParser):
        async def run(self, call: Any, size: int, deadline: float | None = None) -> Any:
            raise UnicodeError("decoding with 'undefined' codec failed")

    engine.parser = Failing(0)
    url = site.reply("/fails", Reply(ARTICLE)) + "?token=secret-in-the-query"
    with caplog.at_level("ERROR", logger="evidencekit.retrieval"):
        result = (await engine.retrieve(url, "url_text")).result
    assert (result["status"], result["reason"]) == ("unsupported", "unsupported_content")
    assert contract_errors(result) == []
    assert "reading the body of" in caplog.text and "secret-in-the-query" not in caplog.text


class Counted(HtmlParser):
    """Inline readers that count the trips a retrieval makes to them (a parse process each)."""

    def __init__(self) -> None:
        super().__init__(0)
        self.trips = 0

    async def run(self, call: Any, size: int, deadline: float | None = None) -> Any:
        self.trips += 1
        return await super().run(call, size, deadline)

    async def index(self, title: str | None, text: str) -> Any:
        self.trips += 1
        return entry_words(title, text)


async def test_a_page_and_its_index_words_are_read_in_one_trip_of_the_title_and_text_it_stores(
        engine: RetrievalEngine, site: Origin) -> None:
    """A page over the text and title limits: its index words are those of the clipped title and
    text the result holds, read in the same trip to a parse process as the page (a second trip per
    page was a fifth of a one-workspace drain's rate on two cores)."""
    title = "Reiherkolonie " * 40  # past MAX_TITLE
    body = (f"<html lang='de'><title>{title}</title><body><article>"
            + "".join(f"<p>Absatz {n}: Die Graureiher brüten am Teich, Wort{n}.</p>" for n in range(1500))
            + "</article></body></html>").encode()
    engine.parser = counted = Counted()
    retrieved = await engine.retrieve(site.reply("/long-page", Reply(body)), "url_text")
    result = retrieved.result
    assert (result["status"], result["reason"]) == ("partial", "text_limited")
    assert len(result["title"]) < len(title.strip())
    assert counted.trips == 1
    assert retrieved.index_words == entry_words(result["title"], result["text"])
    assert retrieved.index_words is not None and "wort1499" not in retrieved.index_words[1].split()


async def test_index_words_read_of_another_text_are_read_again(
        engine: RetrievalEngine, site: Origin, monkeypatch: pytest.MonkeyPatch) -> None:
    """Words the parse process read of a title and text the result does not hold are not stored:
    they are read again from the result's."""
    def of_another_text(body: bytes, **page: Any) -> PageRead:
        read = read_page(body, **page)
        return dataclasses.replace(read, words=entry_words("Elsewhere", "other words"),
                                   words_of=words_key("Elsewhere", "other words"))

    monkeypatch.setattr(engine_module, "read_page", of_another_text)
    engine.parser = counted = Counted()
    retrieved = await engine.retrieve(site.reply("/article", Reply(ARTICLE)), "url_text")
    assert counted.trips == 1 + 1
    assert retrieved.index_words == entry_words(retrieved.result["title"], retrieved.result["text"])
