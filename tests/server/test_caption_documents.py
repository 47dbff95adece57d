"""Caption tracks are documents: retrieved from a loopback origin through the running service (a
WebVTT track a talk's page publishes, a SubRip file), a word spoken in them is found by
search_documents and get_documents reads the transcript back as markdown with the cue timestamps,
over REST (the generated client) and MCP (the official SDK client, Streamable HTTP)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from evidencekit.client.generated.client import Client
from tests.origin import Origin, Reply, serve_origin
from tests.support import (
    allow_origin,
    eventually,
    running_service,
    settled_over_mcp,
    validator_named,
)


@pytest.fixture(scope="module")
def origin() -> Iterator[Origin]:
    with serve_origin() as server:
        yield server


@pytest.fixture(scope="module")
def service(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_service(tmp_path_factory.mktemp("captions"), allow=allow_origin(origin.url)) as running:
        yield running


def talk(origin: Origin, fmt: str, word: str) -> tuple[str, str]:
    """A caption source on the origin whose second cue speaks `word`: the URL to retrieve and the
    title its document has ("" when only a caption file is retrieved)."""
    if fmt == "vtt":  # a talk's page publishing a WebVTT track
        origin.reply(f"/{word}/talk.vtt", Reply(
            (f"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nGood evening, and welcome.\n\n"
             f"00:01:02.500 --> 00:01:06.000\n<v Ana>Tonight we saw a {word}\non the north shore.\n\n"
             "01:02:03.000 --> 01:02:05.000\nThank you.\n").encode(), content_type="text/vtt"))
        page = origin.reply(f"/{word}/talk", Reply(
            b"<html lang='en'><head><title>Birds at dusk</title></head><body><main><h1>Birds at dusk</h1>"
            b"<video src='talk.mp4'><track kind='captions' srclang='en' src='talk.vtt'></video></main></body></html>"))
        return page, "Birds at dusk"
    return origin.reply(f"/{word}/talk.srt", Reply(
        (f"1\n00:00:01,000 --> 00:00:04,000\nGood evening, and welcome.\n\n"
         f"2\n00:01:02,500 --> 00:01:06,000\nTonight we saw a {word}\non the north shore.\n\n"
         "3\n01:02:03,000 --> 01:02:05,000\nThank you.\n").encode(), content_type="application/x-subrip")), ""


def expect_found(results: list[dict[str, Any]], url: str, title: str, word: str) -> str:
    assert [(result["parent"], result["uri"]) for result in results] == [("documents/" + url.split("://", 1)[1], url)]
    assert word in results[0]["snippet"] and "00:01" not in results[0]["snippet"]  # the cue text
    assert results[0]["title"] == title
    return str(results[0]["parent"])


def expect_transcript(document: dict[str, Any], url: str, title: str, word: str) -> None:
    assert document["uri"] == url and document["title"] == title
    lines = document["content"].split("\n")
    assert lines[0] == (f"# {title}" if title else f"# Transcript of {url}")
    assert lines[2:] == ["[00:00:01] Good evening, and welcome.",
                         f"[00:01:02] Tonight we saw a {word} on the north shore.",
                         "[01:02:03] Thank you."]


def retrieved(client: Client, workspace: str, url: str) -> Any:
    """The result of retrieving `url`'s captions, once settled."""
    ids = {"workspace_id": workspace, "mutation_id": str(uuid.uuid4())}
    client.retrieve({**ids, "url": url, "kind": "published_captions"})

    def settled() -> Any:
        status = client.status(ids)
        return None if status.retrieval is not None and status.retrieval.state in ("pending", "running") else status

    status = eventually(settled, what=f"{url} to settle", every=0.05)
    assert status.retrieval is not None and status.retrieval.result is not None, status
    return status.retrieval.result


@pytest.mark.parametrize("fmt", ["vtt", "srt"])
def test_a_word_spoken_in_retrieved_captions_is_found_and_read_over_rest(
        service: dict[str, Any], origin: Origin, fmt: str) -> None:
    word = f"kingfisher{fmt}rest"
    url, title = talk(origin, fmt, word)
    with Client(service["base"], token=service["token"]) as client:
        result = retrieved(client, service["workspace_id"], url)
        assert result.status == "ready", result
        found = client.search_documents({"query": word}).model_dump(mode="json")
        assert validator_named("search_documents").output_errors(found) == []
        name = expect_found(found["results"], url, title, word)
        read = client.get_documents({"names": [name]}).model_dump(mode="json")
    assert validator_named("get_documents").output_errors(read) == []
    expect_transcript(read["documents"][0], url, title, word)


def answer(name: str, result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert validator_named(name).output_errors(result.structured_content) == []
    return result.structured_content  # type: ignore[no-any-return]


@pytest.mark.anyio
@pytest.mark.parametrize("fmt", ["vtt", "srt"])
async def test_a_word_spoken_in_retrieved_captions_is_found_and_read_over_mcp(
        service: dict[str, Any], origin: Origin, fmt: str) -> None:
    word = f"kingfisher{fmt}mcp"
    url, title = talk(origin, fmt, word)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {service['token']}"}) as http, \
            streamable_http_client(service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            return answer(tool, await session.call_tool(tool, arguments))

        retrieval = await settled_over_mcp(call, service["workspace_id"], url, "published_captions")
        assert retrieval["result"]["status"] == "ready", retrieval
        found = answer("search_documents", await session.call_tool("search_documents", {"query": word}))
        name = expect_found(found["results"], url, title, word)
        documents = answer("get_documents", await session.call_tool("get_documents", {"names": [name]}))
    expect_transcript(documents["documents"][0], url, title, word)


def test_a_word_spoken_late_in_a_long_talk_is_found(service: dict[str, Any], origin: Origin) -> None:
    """The contract's text stops at 20,000 characters; the document holds every cue (up to the
    transcript's 100,000 characters), so a word said an hour in is found and read back."""
    cues = "".join(f"{n // 60:02d}:{n % 60:02d}.000 --> {n // 60:02d}:{n % 60:02d}.900\n"
                   f"Cue number {n} goes on about the weather for a while longer.\n\n" for n in range(1, 600))
    url = origin.reply("/long/talk.vtt", Reply(
        f"WEBVTT\n\n{cues}01:00:00.000 --> 01:00:02.000\nAnd finally, the bittern.\n".encode(),
        content_type="text/vtt"))
    with Client(service["base"], token=service["token"]) as client:
        result = retrieved(client, service["workspace_id"], url)
        assert result.reason == "text_limited" and "bittern" not in result.text
        [hit] = client.search_documents({"query": "bittern"}).model_dump(mode="json")["results"]
        assert "And finally, the bittern." in hit["snippet"]
        [document] = client.get_documents({"names": [hit["parent"]]}).documents
    assert document.content.endswith("\n[01:00:00] And finally, the bittern.")
