"""The catalogue: an in-memory implementation of the generated `Handlers` interface.

The runtime has already checked every payload against its contract (and the caller's capability)
before a method runs, and checks every answer against the output schema before it is sent.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from evidencekit.server.runtime.context import RequestContext

from library_api.generated.models import (
    AddBookInput,
    AddBookOutput,
    GetBookInput,
    GetBookOutput,
    SearchBooksInput,
    SearchBooksOutput,
)

DEFAULT_LIMIT = 20


class Catalogue:
    """Books as the contracts' `Book` JSON, by id, in the order they were added."""

    def __init__(self, books: Iterable[dict[str, Any]] = ()) -> None:
        self.books: dict[uuid.UUID, dict[str, Any]] = {}
        for book in books:
            self.add(book)

    def add(self, given: dict[str, Any]) -> dict[str, Any]:
        book = {
            "id": str(uuid.uuid4()),
            "title": given["title"],
            "subtitle": given.get("subtitle"),
            "authors": [{"name": author["name"], "born": author.get("born")} for author in given["authors"]],
            "format": given["format"],
            "published_on": given["published_on"],
            "cover_url": given.get("cover_url"),
        }
        self.books[uuid.UUID(book["id"])] = book
        return book

    # The generated Handlers protocol: one method per operation.

    async def add_book(self, payload: AddBookInput, context: RequestContext) -> AddBookOutput:
        # JSON data of the payload; optional fields that were not sent are left out.
        return AddBookOutput.model_validate({"book": self.add(payload.model_dump(mode="json"))})

    async def get_book(self, payload: GetBookInput, context: RequestContext) -> GetBookOutput:
        return GetBookOutput.model_validate({"book": self.books.get(payload.id)})

    async def search_books(self, payload: SearchBooksInput, context: RequestContext) -> SearchBooksOutput:
        wanted = payload.model_dump(mode="json")  # without the optional fields that were not sent
        needle, of_format = payload.query.casefold(), wanted.get("format")
        found = [book for book in self.books.values()
                 if of_format in (None, book["format"]) and _matches(book, needle)]
        limit = wanted.get("limit", DEFAULT_LIMIT)
        return SearchBooksOutput.model_validate({"books": found[:limit], "total": len(found)})


def _matches(book: dict[str, Any], needle: str) -> bool:
    texts = [book["title"], book["subtitle"] or "", *(author["name"] for author in book["authors"])]
    return any(needle in text.casefold() for text in texts)


SAMPLE_BOOKS: list[dict[str, Any]] = [
    {"title": "The Left Hand of Darkness", "authors": [{"name": "Ursula K. Le Guin", "born": 1929}],
     "format": "paperback", "published_on": "1969-03-01"},
    {"title": "Middlemarch", "subtitle": "A Study of Provincial Life", "authors": [{"name": "George Eliot"}],
     "format": "hardcover", "published_on": "1871-12-01",
     "cover_url": "https://covers.example.org/middlemarch.jpg"},
]
