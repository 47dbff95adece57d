"""The catalogue's pydantic models, written from the example's contracts (examples/library/contracts)
the way a FastAPI or FastMCP project writes them: one model per input and output, shared."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Annotated, Literal
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field

Format = Literal["hardcover", "paperback", "ebook"]
DEFAULT_LIMIT = 20


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AuthorIn(Strict):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    born: Annotated[int | None, Field(ge=-3000, le=3000)] = None


class Author(Strict):
    name: str
    born: int | None


class Book(Strict):
    id: UUID
    title: str
    subtitle: str | None
    authors: list[Author]
    format: Format
    published_on: date
    cover_url: str | None


class AddBookInput(Strict):
    title: Annotated[str, Field(min_length=1, max_length=300)]
    subtitle: Annotated[str | None, Field(min_length=1, max_length=300)] = None
    authors: Annotated[list[AuthorIn], Field(min_length=1, max_length=10)]
    format: Format
    published_on: date
    cover_url: Annotated[str | None, Field(max_length=2048)] = None


class AddBookOutput(Strict):
    book: Book


class GetBookInput(Strict):
    id: UUID


class GetBookOutput(Strict):
    book: Book | None


class SearchBooksInput(Strict):
    query: Annotated[str, Field(max_length=200)]
    format: Format | None = None
    limit: Annotated[int, Field(ge=1, le=50)] = DEFAULT_LIMIT


class SearchBooksOutput(Strict):
    books: Annotated[list[Book], Field(max_length=50)]
    total: int


class Catalogue:
    """Books by id, in the order they were added (loaded from BENCH_LIBRARY_BOOKS: JSON Book data)."""

    def __init__(self) -> None:
        self.books: dict[UUID, Book] = {}
        self.texts: dict[UUID, list[str]] = {}  # by id: what a query is matched against, casefolded
        path = os.environ.get("BENCH_LIBRARY_BOOKS")
        for data in json.loads(Path(path).read_text(encoding="utf-8")) if path else []:
            self._keep(Book.model_validate(data))

    def _keep(self, book: Book) -> Book:
        self.books[book.id] = book
        self.texts[book.id] = [text.casefold() for text in (book.title, book.subtitle or "",
                                                            *(author.name for author in book.authors))]
        return book

    def add(self, given: AddBookInput) -> Book:
        book = Book(id=uuid4(), title=given.title, subtitle=given.subtitle,
                    authors=[Author(name=a.name, born=a.born) for a in given.authors], format=given.format,
                    published_on=given.published_on, cover_url=given.cover_url)
        return self._keep(book)

    def search(self, query: str, of_format: Format | None, limit: int) -> SearchBooksOutput:
        needle, texts = query.casefold(), self.texts
        found = [book for book in self.books.values()
                 if (of_format is None or book.format == of_format) and _holds(texts[book.id], needle)]
        return SearchBooksOutput(books=found[:limit], total=len(found))


def _holds(texts: list[str], needle: str) -> bool:
    for text in texts:  # noqa: SIM110 (any() over a generator costs ~3x: this runs for every book)
        if needle in text:
            return True
    return False


LIBRARIAN_TOKEN = os.environ.get("LIBRARY_API_TOKEN", "")
