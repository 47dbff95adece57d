"""Migration 0017 on a store written before source_urls named sources: the same page stored under
tracking parameters becomes one document, found by its old names too; a secret stored in a name, a
result's source URL or a markdown link is gone, and the document is still served by the name
spelled with it."""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from typing import Any

import pytest
from tortoise.connection import get_connection

from evidencekit.server.evidence import source_urls
from evidencekit.server.evidence.documents import get_documents
from evidencekit.server.evidence.search_documents import search_documents
from evidencekit.server.evidence.service import EvidenceService
from evidencekit.server.evidence.store import jobs, receipts
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.models import Workspace
from evidencekit.server.evidence.store.receipts import RetrieveRequest
from evidencekit.server.runtime._checked_answer import CheckedAnswer, answer_data
from tests.server.store.test_receipts import RESULT
from tests.server.store.test_service import principal_in

pytestmark = pytest.mark.anyio
SECRET = "SECRET123"
PAGE = "https://example.com/heron"
VAULT = f"https://example.com/vault?api_key={SECRET}&lang=de"


async def settle_as_before(workspace: Workspace, url: str, text: str, markdown: str) -> uuid.UUID:
    """A retrieval settled as the code before 0017 settled it: its key the URL as given, its
    result's and revision's source URL that too (these URLs are normalized already otherwise)."""
    mutation = uuid.uuid4()
    receipt, _ = await receipts.submit(RetrieveRequest(workspace.id, mutation, url, "url_text"))
    claimed = await jobs.claim("worker-1", timedelta(minutes=1), max_attempts=3)
    assert claimed is not None and claimed.id == receipt.id
    result = {**RESULT, "text": text, "provenance": {**RESULT["provenance"], "source_url": url}}  # type: ignore[dict-item]
    content = Content(hashlib.sha256(text.encode()).hexdigest(), url, "T", "D", text, markdown, [])
    await jobs.settle(claimed, "worker-1", result, content)
    return mutation


@pytest.mark.parametrize("tracked_first", [True, False])
async def test_names_stored_before_are_renamed_and_still_served(database_url: str, monkeypatch: pytest.MonkeyPatch,
                                                                tracked_first: bool) -> None:
    urls = [f"{PAGE}?utm_source=news", PAGE]
    async with open_store(database_url):
        lab = await Workspace.create(name="lab")
        with monkeypatch.context() as before:
            before.setattr(source_urls, "source_key", lambda url, key, named=False: url)
            for url, version in zip(urls if tracked_first else urls[::-1], ("erste", "zweite"), strict=True):
                await settle_as_before(lab, url, f"Reiherzählung, {version} Fassung", f"# {version}")
            vault = await settle_as_before(lab, VAULT, "Eisvogelbestand", f"[Tabelle]({VAULT}#tabelle)")
        await get_connection("default").execute_query(  # tortoise runs only what follows the last applied
            "DELETE FROM tortoise_migrations WHERE name >= '0017_source_names'")
    async with open_store(database_url):  # the upgrade
        reader = await principal_in(await Workspace.get(id=lab.id), "reader", "viewer")
        [hit] = (await search_documents(reader, "reiherzählung"))["results"]
        assert (hit["parent"], hit["uri"]) == ("documents/example.com/heron", PAGE)
        [old_name] = (await get_documents(reader, ["documents/example.com/heron?utm_source=news"]))["documents"]
        assert (old_name["name"], old_name["content"]) == ("documents/example.com/heron", "# zweite")  # the latest

        [found] = (await search_documents(reader, "eisvogelbestand"))["results"]
        [document] = (await get_documents(reader, ["documents/" + VAULT.split("://", 1)[1]]))["documents"]
        assert document["uri"] == found["uri"] and found["parent"] == document["name"]
        assert document["content"] == "[Tabelle](https://example.com/vault?api_key=redacted&lang=de#tabelle)"
        status: Any = await EvidenceService().status(lab.id, vault)
        answer = answer_data(status) if isinstance(status, CheckedAnswer) else status
        assert answer["retrieval"]["result"]["provenance"]["source_url"] == (
            "https://example.com/vault?api_key=redacted&lang=de")
        for shown in (str(found), str(document), str(answer)):
            assert SECRET not in shown
