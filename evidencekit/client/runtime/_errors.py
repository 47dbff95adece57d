"""Errors the client raises; each carries the server's code, message and request_id.

    ClientError
    ├── TransportError             the server could not be reached
    ├── RequestNotSent             the request could not be formed (a malformed token or server URL)
    ├── MalformedAnswer            the server answered 2xx with a body its contract does not allow
    ├── ContractMismatch           the server speaks another contract version than this client
    └── ApiError                   the server answered with an error body
        ├── BadRequest (400)  ├── Unauthorized (401)  ├── Forbidden (403)  ├── NotFound (404)
        ├── Conflict (409)    ├── PayloadTooLarge (413)  ├── RateLimited (429)
        └── ServerError (5xx)
"""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    pass


class TransportError(ClientError):
    pass


class ConnectFailed(TransportError):
    """No connection: `refused` (nothing listens there), `tls` (a handshake that failed: an https://
    URL pointed at a plain-http port, say), or neither (a name that does not resolve, a network
    that cannot be reached)."""

    def __init__(self, message: str, *, tls: bool = False, refused: bool = False) -> None:
        super().__init__(message)
        self.tls, self.refused = tls, refused


class RequestNotSent(ClientError):
    """Nothing was sent, and sending it again cannot help; the message never repeats a header value."""


class MalformedAnswer(ClientError):
    pass


class ContractMismatchWarning(UserWarning):
    """The server answered with another contract hash, and the client was told to warn, not raise."""


class NewerContractWarning(UserWarning):
    """The server serves a newer contract that still serves this client (it said so with
    `X-Contract-Newer`): the calls work; regenerate the client to use what the newer one adds.
    Warned once per process for each operation and newer hash."""


class ContractMismatch(ClientError):
    def __init__(self, operation: str, expected: str, received: str) -> None:
        super().__init__(
            f"{operation}: this client was generated from contract {expected}, "
            f"the server answers with {received}; regenerate or upgrade the client"
        )
        self.operation, self.expected, self.received = operation, expected, received


class ApiError(ClientError):
    status: int = 0

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        self.status = status
        self.code = str(body.get("code", "unknown"))
        self.message = str(body.get("message", "")) or f"HTTP {status}"
        self.request_id = str(body.get("request_id", headers.get("x-request-id", "")))
        self.fields: list[dict[str, Any]] = list(body.get("fields", []))
        self.body = body
        self.headers = {key.lower(): value for key, value in headers.items()}
        request = f" (request {self.request_id})" if self.request_id else ""
        super().__init__(f"{status} {self.code}: {self.message}{request}")


class BadRequest(ApiError):
    pass


class Unauthorized(ApiError):
    pass


class Forbidden(ApiError):
    pass


class NotFound(ApiError):
    pass


class Conflict(ApiError):
    pass


class PayloadTooLarge(ApiError):
    pass


class RateLimited(ApiError):
    @property
    def retry_after(self) -> int | None:
        value = self.headers.get("retry-after", "")
        return int(value) if value.isdigit() else None


class ServerError(ApiError):
    pass


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: PayloadTooLarge, 429: RateLimited,
}


def error_for(status: int, body: dict[str, Any], headers: dict[str, str]) -> ApiError:
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, body, headers)
