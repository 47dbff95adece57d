"""How a page's URL names its stored document: `documents/{uri_without_scheme}`, the name
get_documents takes and search_documents answers as `parent`. One function for every surface: the
CLI prints and takes these names, and get_documents (REST and MCP) takes a page's URL in their
place as the CLI does. No imports beyond the standard library: the client uses it too."""

from __future__ import annotations

PREFIX = "documents/"
URL_SCHEMES = ("https://", "http://")


def document_name(url: str) -> str:
    """The `documents/...` name a page is stored under: its URL without the scheme."""
    return PREFIX + url.split("://", 1)[1] if "://" in url else url


def as_document_name(given: str) -> str:
    """A name as given to get_documents: a page's http(s) URL becomes its `documents/...` name;
    anything else is kept as it is."""
    return document_name(given) if given.startswith(URL_SCHEMES) else given
