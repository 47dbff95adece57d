"""The hand-written half of the generated client: one POST of a contract payload, sync or async."""

from __future__ import annotations

import ssl
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from evidencekit.client.runtime._errors import (
    ClientError,
    ConnectFailed,
    ContractMismatch,
    ContractMismatchWarning,
    MalformedAnswer,
    NewerContractWarning,
    RequestNotSent,
    TransportError,
    error_for,
)
from evidencekit.contracts._notes import NOTE_HEADER, from_header
from evidencekit.contracts._query import to_query
from evidencekit.contracts._wire import parse

CONTRACT_HASH_HEADER = "X-Contract-Hash"
CONTRACT_NEWER_HEADER = "X-Contract-Newer"
_newer_seen: set[tuple[str, str]] = set()  # (operation, newer hash) already warned about in this process
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


def _input(operation: OperationRef, body: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """How a call carries its input: a GET's in the query string (contracts._query), else a JSON body."""
    data = _payload(body)
    if operation.method == "GET":
        return {"params": to_query(data)}
    return {"json": data}


def valid_token(token: str) -> bool:
    """A bearer credential as RFC 6750 spells one: visible ASCII, no spaces."""
    return token.isascii() and token.isprintable() and " " not in token


def _checked_token(token: str | None) -> str | None:
    if token and not valid_token(token):
        raise ValueError("the token must be printable ASCII with no spaces or line breaks")  # never echoed
    return token


def _headers(operation: OperationRef, token: str | None, strict: bool) -> dict[str, str]:
    """Strict (on_contract_mismatch="raise") clients send their contract hash, and a server serving
    another one refuses the call (412) before doing anything."""
    headers = {"User-Agent": USER_AGENT}
    if strict:
        headers[CONTRACT_HASH_HEADER] = operation.contract_hash
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _transport_error(operation: OperationRef, exc: httpx.TransportError) -> RequestNotSent | TransportError:
    """httpx's error as ours: RequestNotSent when nothing could reach the wire (httpx's text for a
    bad header repeats the header's value, which is the token, so it is not passed on)."""
    if isinstance(exc, httpx.LocalProtocolError):
        return RequestNotSent(f"{operation.name}: the request could not be formed (a malformed header)")
    if isinstance(exc, httpx.UnsupportedProtocol):
        return RequestNotSent(f"{operation.name}: {exc}")
    if isinstance(exc, httpx.ConnectError):
        causes = _causes(exc)
        return ConnectFailed(f"{operation.name}: {exc}", tls=any(isinstance(c, ssl.SSLError) for c in causes),
                             refused=any(isinstance(c, ConnectionRefusedError) for c in causes))
    return TransportError(f"{operation.name}: {exc}")


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what caused it, through httpx's and httpcore's wrappers."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


M = TypeVar("M", bound=BaseModel)


def answer(model: type[M], operation: OperationRef, raw: bytes) -> M:
    """A successful answer's body read as the contract's output; MalformedAnswer when it is not one."""
    try:
        return parse(model, raw)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.error_count() else {"loc": (), "msg": "not JSON"}
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        raise MalformedAnswer(f"{operation.name}: the server's answer does not match contract "
                              f"{operation.contract_hash} ({where}: {first['msg']})") from None


def _answer(operation: OperationRef, response: httpx.Response, on_mismatch: str = "raise") -> bytes:
    """The body of a successful answer; an error answer raises its typed error."""
    received = response.headers.get(CONTRACT_HASH_HEADER)
    if received is not None and received != operation.contract_hash:
        mismatch = ContractMismatch(operation.name, operation.contract_hash, received)
        if on_mismatch == "raise":
            raise mismatch
        warnings.warn(str(mismatch), ContractMismatchWarning, stacklevel=4)
    newer = response.headers.get(CONTRACT_NEWER_HEADER)
    if newer and (operation.name, newer) not in _newer_seen:
        _newer_seen.add((operation.name, newer))
        warnings.warn(f"{operation.name}: the server serves a newer contract ({newer[:80]}) that is compatible "
                      f"with this client's ({operation.contract_hash}); regenerate the client to use what it adds",
                      NewerContractWarning, stacklevel=4)
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise _not_an_api_error(operation, response)
        raise error_for(response.status_code, body, dict(response.headers))
    return response.content


def _notes(response: httpx.Response) -> list[str]:
    """What the server says of a successful answer beyond its JSON (RequestContext.notes)."""
    return [from_header(value) for value in response.headers.get_list(NOTE_HEADER)]


_GATEWAY_STATUSES = (502, 503, 504)  # a proxy's own page while the service restarts: worth retrying


def _not_an_api_error(operation: OperationRef, response: httpx.Response) -> ClientError:
    """An error answer that is not one of this API's JSON error bodies (an HTML page): a gateway's
    while the service is away (retried), or a server that is not this service at all (not retried)."""
    kind = response.headers.get("content-type", "").split(";")[0].strip() or "untyped"
    if response.status_code in _GATEWAY_STATUSES:
        return error_for(response.status_code, {"code": "gateway", "message": f"HTTP {response.status_code} "
                         f"with a {kind} body (a gateway or proxy in front of the service)"}, dict(response.headers))
    return MalformedAnswer(f"{operation.name}: {response.request.url.copy_with(query=None)} answered HTTP "
                           f"{response.status_code} with a {kind} body, not one of this API's errors: is the "
                           f"base URL this service's?")


class SyncTransport:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0,
                 http_client: httpx.Client | None = None, on_contract_mismatch: str = "raise") -> None:
        self.token = _checked_token(token)
        self.on_contract_mismatch = on_contract_mismatch
        self._http = http_client or httpx.Client(base_url=base_url, timeout=timeout)
        self.notes: list[str] = []  # the server's notes on the last answer (X-Note)

    def _call(self, operation: OperationRef, body: BaseModel | Mapping[str, Any],
              timeout: float | None = None) -> bytes:
        self.notes = []
        try:
            response = self._http.request(
                operation.method, operation.path, **_input(operation, body),
                headers=_headers(operation, self.token, self.on_contract_mismatch == "raise"),
                timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout)
        except httpx.TransportError as exc:
            raise _transport_error(operation, exc) from None
        answered = _answer(operation, response, self.on_contract_mismatch)
        self.notes = _notes(response)
        return answered

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SyncTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncTransport:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0,
                 http_client: httpx.AsyncClient | None = None, on_contract_mismatch: str = "raise") -> None:
        self.token = _checked_token(token)
        self.on_contract_mismatch = on_contract_mismatch
        self._http = http_client or httpx.AsyncClient(base_url=base_url, timeout=timeout)
        self.notes: list[str] = []  # the server's notes on the last answer (X-Note; calls at once share it)

    async def _call(self, operation: OperationRef, body: BaseModel | Mapping[str, Any],
                    timeout: float | None = None) -> bytes:
        try:
            response = await self._http.request(
                operation.method, operation.path, **_input(operation, body),
                headers=_headers(operation, self.token, self.on_contract_mismatch == "raise"),
                timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout)
        except httpx.TransportError as exc:
            raise _transport_error(operation, exc) from None
        answered = _answer(operation, response, self.on_contract_mismatch)
        self.notes = _notes(response)
        return answered

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
