"""The hand-written half of the generated client: one POST of a contract payload, sync or async."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel

from .errors import ContractMismatch, ContractMismatchWarning, TransportError, error_for

CONTRACT_HASH_HEADER = "X-Contract-Hash"
USER_AGENT = "evidencekit-client/0.1"


@dataclass(frozen=True)
class OperationRef:
    name: str
    method: str
    path: str
    contract_hash: str


def _payload(body: BaseModel | Mapping[str, Any]) -> Any:
    if isinstance(body, BaseModel):
        return body.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return dict(body)


def _headers(operation: OperationRef, token: str | None) -> dict[str, str]:
    headers = {CONTRACT_HASH_HEADER: operation.contract_hash, "User-Agent": USER_AGENT}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _answer(operation: OperationRef, response: httpx.Response, on_mismatch: str = "raise") -> bytes:
    """The body of a successful answer; an error answer raises its typed error."""
    received = response.headers.get(CONTRACT_HASH_HEADER)
    if received is not None and received != operation.contract_hash:
        mismatch = ContractMismatch(operation.name, operation.contract_hash, received)
        if on_mismatch == "raise":
            raise mismatch
        warnings.warn(str(mismatch), ContractMismatchWarning, stacklevel=4)
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            body = {"message": response.text[:200]}
        raise error_for(response.status_code, body if isinstance(body, dict) else {}, dict(response.headers))
    return response.content


class SyncTransport:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0,
                 http_client: httpx.Client | None = None, on_contract_mismatch: str = "raise") -> None:
        self.token = token
        self.on_contract_mismatch = on_contract_mismatch
        self._http = http_client or httpx.Client(base_url=base_url, timeout=timeout)

    def _call(self, operation: OperationRef, body: BaseModel | Mapping[str, Any]) -> bytes:
        try:
            response = self._http.request(operation.method, operation.path, json=_payload(body),
                                          headers=_headers(operation, self.token))
        except httpx.TransportError as exc:
            raise TransportError(f"{operation.name}: {exc}") from exc
        return _answer(operation, response, self.on_contract_mismatch)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SyncTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncTransport:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0,
                 http_client: httpx.AsyncClient | None = None, on_contract_mismatch: str = "raise") -> None:
        self.token = token
        self.on_contract_mismatch = on_contract_mismatch
        self._http = http_client or httpx.AsyncClient(base_url=base_url, timeout=timeout)

    async def _call(self, operation: OperationRef, body: BaseModel | Mapping[str, Any]) -> bytes:
        try:
            response = await self._http.request(operation.method, operation.path, json=_payload(body),
                                                headers=_headers(operation, self.token))
        except httpx.TransportError as exc:
            raise TransportError(f"{operation.name}: {exc}") from exc
        return _answer(operation, response, self.on_contract_mismatch)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
