"""The client runtime a generated client is built on, and the errors it raises (docs/toolkit.md,
"Public API").

    transport  SyncTransport, AsyncTransport (the generated Client and AsyncClient's bases),
               OperationRef (an operation as the client calls it), answer (a body as the output model)
    errors     ClientError and its tree: TransportError, ConnectFailed, RequestNotSent,
               MalformedAnswer, ContractMismatch, ApiError (BadRequest, Unauthorized, Forbidden,
               NotFound, Conflict, PayloadTooLarge, RateLimited, ServerError); the warnings
               ContractMismatchWarning and NewerContractWarning
    retries    RetryPolicy, call_with_retries, call_with_retries_async, retryable

Every module beneath this package is private: its names may change in any release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidencekit._exports import lazy_exports

__all__ = [
    "ApiError",
    "AsyncTransport",
    "BadRequest",
    "ClientError",
    "Conflict",
    "ConnectFailed",
    "ContractMismatch",
    "ContractMismatchWarning",
    "Forbidden",
    "MalformedAnswer",
    "NewerContractWarning",
    "NotFound",
    "OperationRef",
    "PayloadTooLarge",
    "RateLimited",
    "RequestNotSent",
    "RetryPolicy",
    "ServerError",
    "SyncTransport",
    "TransportError",
    "Unauthorized",
    "answer",
    "call_with_retries",
    "call_with_retries_async",
    "retryable",
]

if TYPE_CHECKING:
    from evidencekit.client.runtime._errors import (
        ApiError,
        BadRequest,
        ClientError,
        Conflict,
        ConnectFailed,
        ContractMismatch,
        ContractMismatchWarning,
        Forbidden,
        MalformedAnswer,
        NewerContractWarning,
        NotFound,
        PayloadTooLarge,
        RateLimited,
        RequestNotSent,
        ServerError,
        TransportError,
        Unauthorized,
    )
    from evidencekit.client.runtime._retry import (
        RetryPolicy,
        call_with_retries,
        call_with_retries_async,
        retryable,
    )
    from evidencekit.client.runtime._transport import (
        AsyncTransport,
        OperationRef,
        SyncTransport,
        answer,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        **dict.fromkeys(["ApiError", "BadRequest", "ClientError", "Conflict", "ConnectFailed", "ContractMismatch",
                         "ContractMismatchWarning", "Forbidden", "MalformedAnswer", "NewerContractWarning",
                         "NotFound", "PayloadTooLarge", "RateLimited", "RequestNotSent", "ServerError",
                         "TransportError", "Unauthorized"], "_errors"),
        **dict.fromkeys(["RetryPolicy", "call_with_retries", "call_with_retries_async", "retryable"], "_retry"),
        **dict.fromkeys(["AsyncTransport", "OperationRef", "SyncTransport", "answer"], "_transport"),
    })
