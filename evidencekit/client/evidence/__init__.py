"""The client people use: one logical retrieve = one mutation_id (reused on every retry), retries
with backoff, and `wait` to poll a receipt until it settles. Built on the generated `Client`."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from evidencekit.client.generated.client import AsyncClient, Client
from evidencekit.client.generated.models import (
    GetDocumentsOutput,
    RetrieveOutput,
    SearchDocumentsOutput,
    StatusOutput,
)
from evidencekit.client.runtime import (
    ClientError,
    RetryPolicy,
    call_with_retries,
    call_with_retries_async,
    retryable,
)

SETTLED = ("completed", "cancelled", "unconfirmed", "expired")
Id = str | uuid.UUID  # ids go in as either: the answers' models hand them back as uuid.UUID


class WaitTimeout(ClientError):
    """The receipt did not settle in time; `last` is the last answer (None when none came in time)."""

    def __init__(self, mutation_id: Id, last: StatusOutput | None) -> None:
        state = last.retrieval.state if last is not None and last.retrieval else "unknown"
        super().__init__(f"receipt {mutation_id} has not settled (state {state}); ask again later")
        self.mutation_id, self.last = mutation_id, last


class _Deadline:
    """What one poll of `wait` may spend: the time left, for the request and for its retries."""

    def __init__(self, seconds: float, policy: RetryPolicy) -> None:
        self.at, self.policy = time.monotonic() + seconds, policy

    def left(self) -> float:
        return self.at - time.monotonic()

    def poll_policy(self) -> RetryPolicy:
        """All the time left, attempts bounded by that time alone: a server restarting while we wait
        (a few seconds of refused connections) is waited out, one that stays away ends the wait."""
        return dataclasses.replace(self.policy, total_time=max(0.0, self.left()),
                                   max_attempts=max(self.policy.max_attempts, 1000))


def retrieve_body(workspace_id: Id, url: str, kind: str, language: str | None,
                  mutation_id: Id | None) -> dict[str, Any]:
    """One logical retrieve: its mutation_id is chosen here, once, and reused on every retry."""
    body: dict[str, Any] = {"workspace_id": str(workspace_id), "mutation_id": str(mutation_id or uuid.uuid4()),
                            "url": url, "kind": kind}
    if language:
        body["language"] = language
    return body


def search_body(query: str, page_size: int | None, page_token: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"query": query}
    if page_size is not None:
        body["page_size"] = page_size
    if page_token:
        body["page_token"] = page_token
    return body


def settled(status: StatusOutput) -> bool:
    return status.retrieval is None or status.retrieval.state in SETTLED


def choose_workspace(given: Id | None, default: Id | None) -> str:
    chosen = given or default
    if not chosen:
        raise ValueError("a workspace_id is required (argument, or EVIDENCEKIT_WORKSPACE for the CLI)")
    return str(chosen)


class EvidenceClient:
    def __init__(self, base_url: str, token: str, workspace_id: Id | None = None, *,
                 retry: RetryPolicy | None = None, timeout: float = 30.0, on_contract_mismatch: str = "raise",
                 http_client: httpx.Client | None = None, sleep: Callable[[float], None] = time.sleep,
                 retry_sleep: Callable[[float], None] | None = None) -> None:
        """`sleep` paces `wait`'s polls and, unless `retry_sleep` is given, the pauses before retries."""
        self.workspace_id = workspace_id
        self.retry = retry or RetryPolicy()
        self.api_timeout = timeout
        self.sleep = sleep
        self.retry_sleep = retry_sleep or sleep
        self.api = Client(base_url, token=token, timeout=timeout, http_client=http_client,
                          on_contract_mismatch=on_contract_mismatch)

    def close(self) -> None:
        self.api.close()

    @property
    def notes(self) -> list[str]:
        """What the server said of the last answer beyond its JSON (its X-Note headers): why a URL
        was blocked, the mutation_id of a receipt whose id was given instead, names not found."""
        return self.api.notes

    def __enter__(self) -> EvidenceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _workspace(self, workspace_id: Id | None) -> str:
        return choose_workspace(workspace_id, self.workspace_id)

    def retrieve(self, url: str, kind: str = "url_text", language: str | None = None, *,
                 workspace_id: Id | None = None, mutation_id: Id | None = None) -> RetrieveOutput:
        """Start (or repeat) one retrieval; every retry of this call uses the same mutation_id."""
        body = retrieve_body(self._workspace(workspace_id), url, kind, language, mutation_id)
        return call_with_retries(lambda: self.api.retrieve(body), self.retry, self.retry_sleep)

    def status(self, mutation_id: Id, *, workspace_id: Id | None = None, timeout: float | None = None,
               retry: RetryPolicy | None = None) -> StatusOutput:
        body = {"workspace_id": self._workspace(workspace_id), "mutation_id": str(mutation_id)}
        return call_with_retries(lambda: self.api.status(body, timeout=timeout), retry or self.retry,
                                 self.retry_sleep)

    def documents(self, names: list[str]) -> GetDocumentsOutput:
        return call_with_retries(lambda: self.api.get_documents({"names": names}), self.retry, self.retry_sleep)

    def search(self, query: str, *, page_size: int | None = None, page_token: str | None = None
               ) -> SearchDocumentsOutput:
        """Stored documents holding the query's words, best first (`results[i].parent` names each
        for `documents`); `next_page_token` for the next page."""
        body = search_body(query, page_size, page_token)
        return call_with_retries(lambda: self.api.search_documents(body), self.retry, self.retry_sleep)

    def wait(self, mutation_id: Id, *, workspace_id: Id | None = None, timeout: float = 120.0,
             interval: float = 0.5, on_poll: Callable[[StatusOutput], None] | None = None) -> StatusOutput:
        """Poll status until the receipt settles; WaitTimeout after `timeout` seconds, also when the
        server stops answering (each poll, and its retries, get only the time left)."""
        deadline = _Deadline(timeout, self.retry)
        pause, current = interval, None
        while True:
            budget = deadline.poll_policy()
            try:
                current = self.status(mutation_id, workspace_id=workspace_id, retry=budget,
                                      timeout=max(0.1, min(self.api_timeout, deadline.left())))
            except ClientError as error:
                if retryable(error):  # still failing when the time ran out: the wait timed out
                    raise WaitTimeout(mutation_id, current) from error
                raise
            if on_poll is not None:
                on_poll(current)
            if settled(current):
                return current
            if deadline.left() < pause:
                raise WaitTimeout(mutation_id, current)
            self.sleep(pause)
            pause = min(pause * 1.5, 5.0)


class AsyncEvidenceClient:
    """The same layer over the generated `AsyncClient`."""

    def __init__(self, base_url: str, token: str, workspace_id: Id | None = None, *,
                 retry: RetryPolicy | None = None, timeout: float = 30.0, on_contract_mismatch: str = "raise",
                 http_client: httpx.AsyncClient | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.workspace_id = workspace_id
        self.retry = retry or RetryPolicy()
        self.api_timeout = timeout
        self.sleep = sleep
        self.api = AsyncClient(base_url, token=token, timeout=timeout, http_client=http_client,
                               on_contract_mismatch=on_contract_mismatch)

    async def aclose(self) -> None:
        await self.api.aclose()

    @property
    def notes(self) -> list[str]:
        """What the server said of the last answer beyond its JSON (X-Note; calls made at once share it)."""
        return self.api.notes

    async def __aenter__(self) -> AsyncEvidenceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def retrieve(self, url: str, kind: str = "url_text", language: str | None = None, *,
                       workspace_id: Id | None = None, mutation_id: Id | None = None) -> RetrieveOutput:
        body = retrieve_body(choose_workspace(workspace_id, self.workspace_id), url, kind, language, mutation_id)
        return await call_with_retries_async(lambda: self.api.retrieve(body), self.retry, self.sleep)

    async def status(self, mutation_id: Id, *, workspace_id: Id | None = None, timeout: float | None = None,
                     retry: RetryPolicy | None = None) -> StatusOutput:
        body = {"workspace_id": choose_workspace(workspace_id, self.workspace_id), "mutation_id": str(mutation_id)}
        return await call_with_retries_async(lambda: self.api.status(body, timeout=timeout), retry or self.retry,
                                             self.sleep)

    async def documents(self, names: list[str]) -> GetDocumentsOutput:
        return await call_with_retries_async(lambda: self.api.get_documents({"names": names}), self.retry,
                                             self.sleep)

    async def search(self, query: str, *, page_size: int | None = None, page_token: str | None = None
                     ) -> SearchDocumentsOutput:
        """As EvidenceClient.search."""
        body = search_body(query, page_size, page_token)
        return await call_with_retries_async(lambda: self.api.search_documents(body), self.retry, self.sleep)

    async def wait(self, mutation_id: Id, *, workspace_id: Id | None = None, timeout: float = 120.0,
                   interval: float = 0.5, on_poll: Callable[[StatusOutput], None] | None = None) -> StatusOutput:
        """As EvidenceClient.wait."""
        deadline = _Deadline(timeout, self.retry)
        pause, current = interval, None
        while True:
            budget = deadline.poll_policy()
            try:
                current = await self.status(mutation_id, workspace_id=workspace_id, retry=budget,
                                            timeout=max(0.1, min(self.api_timeout, deadline.left())))
            except ClientError as error:
                if retryable(error):  # still failing when the time ran out: the wait timed out
                    raise WaitTimeout(mutation_id, current) from error
                raise
            if on_poll is not None:
                on_poll(current)
            if settled(current):
                return current
            if deadline.left() < pause:
                raise WaitTimeout(mutation_id, current)
            await self.sleep(pause)
            pause = min(pause * 1.5, 5.0)
