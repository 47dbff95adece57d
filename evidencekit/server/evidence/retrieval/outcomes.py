"""The result mapping: every situation a retrieval can end in, its contract status and reason.

This table is the single source: the engine looks outcomes up here, and docs/result-mapping.md
is checked against it (tests/server/retrieval/test_outcomes.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    status: str
    reason: str | None
    situation: str


_TABLE = [
    Outcome("ready", None, "text (or caption cues) extracted within every limit"),
    Outcome("partial", "response_too_large", "body over the byte cap: the result comes from its first bytes"),
    Outcome("partial", "source_partial", "the origin closed the connection before the body was complete"),
    Outcome("partial", "nodes_limited", "page over the DOM node limit: the text comes from its first nodes"),
    Outcome("partial", "text_limited", "text, or a caption cue's text, cut at 20,000 characters"),
    Outcome("partial", "cues_limited", "more than 1,000 caption cues: the first 1,000 are returned"),
    Outcome("partial", "invalid_cues", "some caption cues could not be read (counted): the others are returned"),
    Outcome("blocked", "unsafe_url", "not https; credentials in the URL; a host that is or resolves to a "
            "private, loopback, link-local, metadata, CGNAT, multicast or reserved address; a redirect to such"),
    Outcome("blocked", "access_denied", "origin answered 401 or 403"),
    Outcome("blocked", "login_required", "origin answered with a login form (a 401/403 page, or a page that is "
            "only a login form)"),
    Outcome("blocked", "response_too_large", "body over the byte cap, and its first bytes give no text"),
    Outcome("unsupported", "unsupported_media", "a media type we do not read (image, PDF, audio, video, ...)"),
    Outcome("unsupported", "unsupported_content", "a content encoding we do not read, a corrupt compressed body, "
            "bytes that are not text (binary data served as HTML or plain text), or a body a reader fails on"),
    Outcome("unsupported", "unsupported_source", "published_captions asked of a resource that is neither a "
            "caption file nor a page"),
    Outcome("unsupported", "invalid_captions", "a caption file that cannot be parsed, or none of whose cues can"),
    Outcome("empty", "no_text", "a page or text file with no text, including a page that renders its text only "
            "with JavaScript (an empty app root, a `<noscript>` notice; its title and description are still returned)"),
    Outcome("empty", "metadata_only", "a page with only a title and/or a description"),
    Outcome("empty", "no_captions", "a page that publishes no caption track, or a caption file without cues"),
    Outcome("empty", "language_mismatch", "caption tracks exist, none in the requested language"),
    Outcome("unavailable", "not_found", "origin answered 404 or 410"),
    Outcome("rate_limited", "rate_limited", "origin answered 429 (Retry-After becomes retry_after_seconds)"),
    Outcome("unavailable", "timeout", "no complete answer within the connect, read or overall deadline, or a body not read within the overall deadline"),
    Outcome("unavailable", "egress_unavailable", "DNS, connection or TLS failure"),
    Outcome("unavailable", "unavailable", "origin 5xx or another error status, or more than 5 redirects"),
    Outcome("cancelled", "cancelled", "the retrieval was cancelled before it settled"),
]

OUTCOMES: tuple[Outcome, ...] = tuple(_TABLE)
_BY_KEY = {(o.status, o.reason): o for o in OUTCOMES}

# When several partial conditions hold, the first of these is the reason; the rest are warnings.
PARTIAL_PRIORITY = ("response_too_large", "source_partial", "nodes_limited", "text_limited",
                    "cues_limited", "invalid_cues")


def outcome(status: str, reason: str | None) -> Outcome:
    """The table's row for (status, reason); a pair that is not in the table is a bug."""
    return _BY_KEY[(status, reason)]


def failure_status(reason: str) -> str:
    """The status of a reason that ends a retrieval without content (every reason has one)."""
    for row in OUTCOMES:
        if row.reason == reason and row.status not in ("partial", "ready"):
            return row.status
    raise KeyError(reason)


def markdown_table() -> str:
    lines = ["| status | reason | situation |", "|---|---|---|"]
    lines += [f"| {o.status} | {o.reason or '—'} | {o.situation} |" for o in OUTCOMES]
    return "\n".join(lines) + "\n"
