"""Fetched URLs are logged without their query strings, and answers without their headers: httpx
logs every request it sends at INFO (`HTTP Request: GET https://...?token=... "HTTP/1.1 200 OK"`),
httpcore every answer's headers at DEBUG (a redirect's Location with its query, Set-Cookie). A
query string may carry a secret the caller's URL was given (the access log strips them too)."""

from __future__ import annotations

import logging

import httpx


def _shown(value: object) -> object:
    if isinstance(value, httpx.URL) and (value.query or value.fragment):
        return str(value.copy_with(query=None, fragment=None))
    return value


class RedactQueries(logging.Filter):
    """httpx passes the URL as an argument of the record (never inside its format string); httpcore
    formats its trace events itself, an answer's headers after `return_value=`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(arg, httpx.URL) for arg in record.args):
            record.args = tuple(_shown(arg) for arg in record.args)
        message = record.msg
        if isinstance(message, str) and "headers" in message and " return_value=" in message:
            record.msg = message.split(" return_value=", 1)[0] + " return_value=<status and headers not logged>"
        return True


# Filters are not inherited: every logger the client logs to by name.
LOGGERS = ("httpx", "httpcore", "httpcore.connection", "httpcore.http11", "httpcore.http2", "httpcore.proxy",
           "httpcore.socks")


def install() -> None:
    """Once per process, on the loggers of the HTTP client the fetcher uses."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, RedactQueries) for existing in logger.filters):
            logger.addFilter(RedactQueries())
