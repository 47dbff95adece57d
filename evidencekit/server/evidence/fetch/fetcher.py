"""Fetch one public URL safely: checked URL, checked addresses, redirects by hand, capped body.

Every failure is a FetchError carrying the contract's reason; everything else is a FetchResponse,
whatever its HTTP status (the retrieval engine maps statuses to results).
"""

from __future__ import annotations

import asyncio
import email.utils
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpcore
import httpx

from evidencekit.server.evidence.fetch import log_redaction
from evidencekit.server.evidence.fetch.backend import (
    BlockedAddress,
    GuardedBackend,
    ResolutionFailed,
    Resolver,
    system_resolver,
)
from evidencekit.server.evidence.fetch.body import UnsupportedEncoding, read_capped
from evidencekit.server.evidence.fetch.policy import EgressPolicy, UnsafeUrl, check_url

CA_BUNDLE_ENV = "EVIDENCEKIT_CA_BUNDLE"
USER_AGENT = "evidencekit/0.1 (research-public-retrieval/v1; +bounded public fetch)"
REDIRECTS = (301, 302, 303, 307, 308)
ERROR_BODY_CAP = 64 * 1024

_NO_STREAM = httpx.ByteStream(b"")


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 2 * 1024 * 1024
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    deadline: float = 30.0
    max_redirects: int = 5


@dataclass
class FetchBudget:
    """What one retrieval may spend across its fetches (a page, then its caption track): one
    deadline, in event-loop time, and one count of redirects."""

    deadline: float
    redirects_left: int


class FetchError(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


# What the failure of a TLS handshake with a server that speaks plain HTTP starts with: OpenSSL
# reads the server's "HTTP/1.1 400 ..." as a TLS record ("wrong version number"; "record layer
# failure" in later versions; "http request" on the other side of the same mistake).
PLAIN_HTTP_HOST = "TLS handshake failed: the host answered plain HTTP, not HTTPS"
_PLAIN_HTTP_SSL = ("wrong version number", "wrong_version_number", "record layer failure", "record_layer_failure",
                   "http request", "http_request")


def _answered_plain_http(exc: BaseException) -> bool:
    """Whether `exc` (an httpx error) is a TLS handshake that read a plain-HTTP answer."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ssl.SSLError) and any(part in str(current).lower() for part in _PLAIN_HTTP_SSL):
            return True
        pending += [linked for linked in (current.__cause__, current.__context__, *current.args)
                    if isinstance(linked, BaseException)]
    return False


@dataclass(frozen=True)
class FetchResponse:
    url: str  # the final URL, after redirects
    status: int
    media_type: str | None  # lowercased, without parameters
    charset: str | None
    content_language: str | None
    retry_after: int | None
    body: bytes
    over_cap: bool = False  # body is the first max_bytes of a larger one
    cut_short: bool = False  # the origin closed the connection before the body was complete
    body_read: bool = True  # False when the caller declined the media type
    redirects: list[str] = field(default_factory=list)


def parse_retry_after(value: str | None, now: float | None = None) -> int | None:
    """Seconds to wait, from delta-seconds or an HTTP date, clamped to the contract's 1..86400."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = int(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = int(when.timestamp() - (time.time() if now is None else now))
    return min(max(seconds, 1), 86400)


def _media(headers: httpx.Headers) -> tuple[str | None, str | None]:
    value = headers.get("content-type")
    if not value:
        return None, None
    media, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset":
            charset = val.strip().strip('"') or None
    return media.strip().lower() or None, charset


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool on the guarded network backend."""

    def __init__(self, backend: GuardedBackend, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, retries=0)
        # httpx builds its pool without a way to pass a network backend; replace it, same settings.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context, max_connections=100, max_keepalive_connections=20,
            keepalive_expiry=5.0, http1=True, http2=False, retries=0, network_backend=backend,
        )


def default_ssl_context(bundle: str = "") -> ssl.SSLContext:
    """The system's roots, plus those of `bundle` (EVIDENCEKIT_CA_BUNDLE: a PEM file, e.g. an intranet CA).

    Not create_default_context(cafile=...): given a file, it loads only that file, and every public
    site would then fail to verify."""
    context = ssl.create_default_context()
    if bundle:
        context.load_verify_locations(cafile=bundle)
    return context


class Fetcher:
    def __init__(self, policy: EgressPolicy | None = None, limits: FetchLimits | None = None, *,
                 ssl_context: ssl.SSLContext | None = None, resolver: Resolver = system_resolver) -> None:
        log_redaction.install()  # httpx logs each request's URL: never its query string
        self.policy = policy or EgressPolicy()  # public HTTPS only (settings.EvidenceSettings.egress: the operator's)
        self.limits = limits or FetchLimits()
        self.backend = GuardedBackend(self.policy, resolver)
        context = ssl_context or default_ssl_context()
        timeout = httpx.Timeout(self.limits.read_timeout, connect=self.limits.connect_timeout)
        self._client = httpx.AsyncClient(
            transport=GuardedTransport(self.backend, context), timeout=timeout,
            follow_redirects=False, trust_env=False,  # no environment proxies around the guard
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"},
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def budget(self) -> FetchBudget:
        """A fresh allowance: the limits' deadline from now, and their redirects."""
        return FetchBudget(asyncio.get_running_loop().time() + self.limits.deadline, self.limits.max_redirects)

    async def fetch(self, url: str, accept: str, wants_body: Callable[[str | None], bool] = lambda media: True,
                    budget: FetchBudget | None = None) -> FetchResponse:
        """Fetch `url`, spending from `budget` (shared by one retrieval's fetches) or a fresh one."""
        budget = budget or self.budget()
        try:
            async with asyncio.timeout_at(budget.deadline):
                return await self._follow(url, accept, wants_body, budget)
        except TimeoutError:
            raise FetchError("timeout", f"no complete answer within {self.limits.deadline:g}s") from None

    async def _follow(self, url: str, accept: str, wants_body: Callable[[str | None], bool],
                      budget: FetchBudget) -> FetchResponse:
        redirects: list[str] = []
        current = url
        while True:
            try:
                target = check_url(current, self.policy)
            except UnsafeUrl as exc:
                where = " (after a redirect)" if redirects else ""
                raise FetchError("unsafe_url", f"{exc}{where}") from None
            response = await self._get(target.url, accept, wants_body, redirects)
            if response is not None:
                return response
            budget.redirects_left -= 1
            if budget.redirects_left < 0:
                raise FetchError("unavailable", f"more than {self.limits.max_redirects} redirects")
            current = redirects[-1]

    async def _get(self, url: httpx.URL, accept: str, wants_body: Callable[[str | None], bool],
                   redirects: list[str]) -> FetchResponse | None:
        request = self._client.build_request("GET", url, headers={"Accept": accept})
        try:
            response = await self._client.send(request, stream=True)
        except BlockedAddress as exc:
            raise FetchError("unsafe_url", str(exc)) from None
        except ResolutionFailed as exc:
            raise FetchError("egress_unavailable", str(exc)) from None
        except httpx.TimeoutException as exc:
            raise FetchError("timeout", f"{type(exc).__name__} for {url.host}") from None
        except httpx.HTTPError as exc:
            if url.scheme == "https" and _answered_plain_http(exc):
                raise FetchError("egress_unavailable", f"{PLAIN_HTTP_HOST} ({exc})") from None
            raise FetchError("egress_unavailable", f"{type(exc).__name__}: {exc}") from None
        except UnicodeError as exc:  # idna.IDNAError: httpx builds the redirect's URL (its Location) in send
            raise FetchError("unsafe_url", f"redirect to a host that cannot be encoded: {exc}") from None
        try:
            if response.status_code in REDIRECTS and "location" in response.headers:
                redirects.append(str(url.join(response.headers["location"])))
                return None
            return await self._read(url, response, wants_body, redirects)
        finally:
            try:
                await response.aclose()
            finally:
                # httpx's response and its stream refer to each other: left so, the connection
                # behind them (with the unread rest of a body cut at the cap in its socket buffers,
                # MBs on loopback) waits for the garbage collector. Without the stream, it goes at
                # once, also when the close itself failed or was cancelled (the fetch's deadline).
                response.stream = _NO_STREAM

    async def _read(self, url: httpx.URL, response: httpx.Response,
                    wants_body: Callable[[str | None], bool], redirects: list[str]) -> FetchResponse:
        media, charset = _media(response.headers)
        success = 200 <= response.status_code < 300
        read = wants_body(media) if success else True
        cap = self.limits.max_bytes if success else ERROR_BODY_CAP
        cut_short = False
        body = b""
        over_cap = False
        if read:
            cut: list[bool] = []

            async def chunks() -> AsyncIterator[bytes]:
                try:
                    async for chunk in response.aiter_raw():
                        yield chunk
                except (httpx.RemoteProtocolError, httpx.ReadError):
                    cut.append(True)  # keep what arrived; the result says source_partial

            try:
                result = await read_capped(chunks(), response.headers.get("content-encoding", ""), cap)
                body, over_cap, cut_short = result.data, result.over_cap, bool(cut)
            except UnsupportedEncoding as exc:
                raise FetchError("unsupported_content", str(exc)) from None
            except zlib.error as exc:
                raise FetchError("unsupported_content", f"corrupt compressed body: {exc}") from None
            except httpx.TimeoutException:
                raise FetchError("timeout", f"body of {url.host} did not arrive in time") from None
        language = response.headers.get("content-language")
        return FetchResponse(
            url=str(url), status=response.status_code, media_type=media, charset=charset,
            content_language=language.split(",")[0].strip() if language else None,
            retry_after=parse_retry_after(response.headers.get("retry-after")),
            body=body, over_cap=over_cap, cut_short=cut_short, body_read=read, redirects=redirects,
        )
