"""Retries for the client: exponential backoff with full jitter, bounded in attempts and total time.

Retried: connection errors, 429 (waiting at least its Retry-After) and 5xx. Never retried: other
4xx, contract mismatches, and a TLS handshake that failed (the same URL fails the same way); a
refused connection only while `retry_refused` (a command line wants to say at once that nothing
listens). Retry only calls that are safe to repeat (idempotent by contract).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from evidencekit.client.runtime._errors import (
    ClientError,
    ConnectFailed,
    RateLimited,
    ServerError,
    TransportError,
)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 8.0
    total_time: float = 60.0
    retry_refused: bool = True  # a connection refused is tried again

    def delay(self, attempt: int, error: ClientError) -> float:
        backoff = random.uniform(0, min(self.max_delay, self.base_delay * 2 ** attempt))
        if isinstance(error, RateLimited) and error.retry_after:
            return max(float(error.retry_after), backoff)
        return backoff


def retryable(error: ClientError) -> bool:
    return isinstance(error, TransportError | RateLimited | ServerError)


def pause_before_retry(error: ClientError, attempt: int, elapsed: float, policy: RetryPolicy) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None when `error` should be raised now."""
    if not retryable(error) or attempt >= policy.max_attempts:
        return None
    if isinstance(error, ConnectFailed) and (error.tls or (error.refused and not policy.retry_refused)):
        return None
    pause = policy.delay(attempt - 1, error)
    return None if elapsed + pause > policy.total_time else pause


def call_with_retries(action: Callable[[], T], policy: RetryPolicy,
                      sleep: Callable[[float], None] = time.sleep,
                      clock: Callable[[], float] = time.monotonic) -> T:
    started, attempt = clock(), 0
    while True:
        try:
            return action()
        except ClientError as error:
            attempt += 1
            pause = pause_before_retry(error, attempt, clock() - started, policy)
            if pause is None:
                raise
            sleep(pause)


async def call_with_retries_async(action: Callable[[], Awaitable[T]], policy: RetryPolicy,
                                  sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                                  clock: Callable[[], float] = time.monotonic) -> T:
    started, attempt = clock(), 0
    while True:
        try:
            return await action()
        except ClientError as error:
            attempt += 1
            pause = pause_before_retry(error, attempt, clock() - started, policy)
            if pause is None:
                raise
            await sleep(pause)


__all__ = ["RetryPolicy", "call_with_retries", "call_with_retries_async", "retryable"]
