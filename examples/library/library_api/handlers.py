"""The catalogue: an in-memory implementation of the generated `Handlers` interface.

The runtime has already checked every payload against its contract (and the caller's capability)
before a method runs, and checks every answer against the output schema before it is sent. The
handlers answer with the contracts' JSON data (the generated `<Op>OutputData` types): no output
model is built only to be turned back into JSON.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from evidencekit.server.runtime import MISSING, RequestContext

from library_api.generated.models import (
    AddBookInput,
    AddBookOutputData,
    GetBookInput,
    GetBookOutputData,
    SearchBooksInput,
    SearchBooksOutputData,
)
from library_api.generated.models.search_books_output_data import Book

DEFAULT_LIMIT = 20


class Catalogue:
    """Books as the contracts' `Book` JSON, by id, in the order they were added."""

    def __init__(self, books: Iterable[Mapping[str, Any]] = ()) -> None:
        self.books: dict[uuid.UUID, Book] = {}
        self.texts: dict[str, list[str]] = {}  # by id: what a query is matched against, casefolded
        for book in books:
            self.add(book)

    def add(self, given: Mapping[str, Any]) -> Book:
        """A book from an add_book payload's JSON data (optional fields may be left out)."""
        book: Book = {
            "id": str(uuid.uuid4()),
            "title": given["title"],
            "subtitle": given.get("subtitle"),
            "authors": [{"name": author["name"], "born": author.get("born")} for author in given["authors"]],
            "format": given["format"],
            "published_on": given["published_on"],
            "cover_url": given.get("cover_url"),
        }
        return self.keep(book)

    def keep(self, book: Book) -> Book:
        """Hold a book (with its id) and what a query is matched against."""
        self.books[uuid.UUID(book["id"])] = book
        texts = (book["title"], book["subtitle"] or "", *(author["name"] for author in book["authors"]))
        self.texts[book["id"]] = [text.casefold() for text in texts]
        return book

    # The generated Handlers protocol: one method per operation.

    async def add_book(self, payload: AddBookInput, context: RequestContext) -> AddBookOutputData:
        # JSON data of the payload; optional fields that were not sent are left out.
        return {"book": self.add(payload.model_dump(mode="json"))}

    async def get_book(self, payload: GetBookInput, context: RequestContext) -> GetBookOutputData:
        return {"book": self.books.get(payload.id)}

    async def search_books(self, payload: SearchBooksInput, context: RequestContext) -> SearchBooksOutputData:
        needle, of_format, texts = payload.query.casefold(), payload.format, self.texts
        found = [book for book in self.books.values()
                 if (of_format is MISSING or book["format"] == of_format)
                 and _holds(texts[book["id"]], needle)]
        limit = DEFAULT_LIMIT if payload.limit is MISSING else payload.limit
        return {"books": found[:limit], "total": len(found)}


def _holds(texts: list[str], needle: str) -> bool:
    for text in texts:  # noqa: SIM110 (any() over a generator costs ~3x: this runs for every book)
        if needle in text:
            return True
    return False


SAMPLE_BOOKS: list[dict[str, Any]] = [
    {"title": "The Left Hand of Darkness", "authors": [{"name": "Ursula K. Le Guin", "born": 1929}],
     "format": "paperback", "published_on": "1969-03-01"},
    {"title": "Middlemarch", "subtitle": "A Study of Provincial Life", "authors": [{"name": "George Eliot"}],
     "format": "hardcover", "published_on": "1871-12-01",
     "cover_url": "https://covers.example.org/middlemarch.jpg"},
]
