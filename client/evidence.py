"""The client people use: one logical retrieve = one mutation_id (reused on every retry), retries
with backoff, and `wait` to poll a receipt until it settles. Built on the generated `Client`."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from contracts.models import GetDocumentsOutput, RetrieveOutput, StatusOutput

from .errors import ClientError
from .generated.client import Client
from .retry import RetryPolicy, call_with_retries

SETTLED = ("completed", "cancelled", "unconfirmed", "expired")


class WaitTimeout(ClientError):
    def __init__(self, mutation_id: str, last: StatusOutput) -> None:
        state = last.retrieval.state if last.retrieval else "unknown"
        super().__init__(f"receipt {mutation_id} has not settled (state {state}); ask again later")
        self.mutation_id, self.last = mutation_id, last


class EvidenceClient:
    def __init__(self, base_url: str, token: str, workspace_id: str | None = None, *,
                 retry: RetryPolicy | None = None, timeout: float = 30.0, on_contract_mismatch: str = "raise",
                 http_client: httpx.Client | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.workspace_id = workspace_id
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.api = Client(base_url, token=token, timeout=timeout, http_client=http_client,
                          on_contract_mismatch=on_contract_mismatch)

    def close(self) -> None:
        self.api.close()

    def __enter__(self) -> EvidenceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _workspace(self, workspace_id: str | None) -> str:
        chosen = workspace_id or self.workspace_id
        if not chosen:
            raise ValueError("a workspace_id is required (argument, or EVIDENCEKIT_WORKSPACE for the CLI)")
        return chosen

    def retrieve(self, url: str, kind: str = "url_text", language: str | None = None, *,
                 workspace_id: str | None = None, mutation_id: str | None = None) -> RetrieveOutput:
        """Start (or repeat) one retrieval; every retry of this call uses the same mutation_id."""
        body: dict[str, Any] = {"workspace_id": self._workspace(workspace_id),
                                "mutation_id": mutation_id or str(uuid.uuid4()), "url": url, "kind": kind}
        if language:
            body["language"] = language
        return call_with_retries(lambda: self.api.retrieve(body), self.retry, self.sleep)

    def status(self, mutation_id: str, *, workspace_id: str | None = None) -> StatusOutput:
        body = {"workspace_id": self._workspace(workspace_id), "mutation_id": mutation_id}
        return call_with_retries(lambda: self.api.status(body), self.retry, self.sleep)

    def documents(self, names: list[str]) -> GetDocumentsOutput:
        return call_with_retries(lambda: self.api.get_documents({"names": names}), self.retry, self.sleep)

    def wait(self, mutation_id: str, *, workspace_id: str | None = None, timeout: float = 120.0,
             interval: float = 0.5, on_poll: Callable[[StatusOutput], None] | None = None) -> StatusOutput:
        """Poll status until the receipt settles; WaitTimeout after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        pause = interval
        while True:
            current = self.status(mutation_id, workspace_id=workspace_id)
            if on_poll is not None:
                on_poll(current)
            if current.retrieval is None or current.retrieval.state in SETTLED:
                return current
            if time.monotonic() + pause > deadline:
                raise WaitTimeout(mutation_id, current)
            self.sleep(pause)
            pause = min(pause * 1.5, 5.0)
