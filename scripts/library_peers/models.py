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
        path = os.environ.get("BENCH_LIBRARY_BOOKS")
        for data in json.loads(Path(path).read_text(encoding="utf-8")) if path else []:
            book = Book.model_validate(data)
            self.books[book.id] = book

    def add(self, given: AddBookInput) -> Book:
        book = Book(id=uuid4(), title=given.title, subtitle=given.subtitle,
                    authors=[Author(name=a.name, born=a.born) for a in given.authors], format=given.format,
                    published_on=given.published_on, cover_url=given.cover_url)
        self.books[book.id] = book
        return book

    def search(self, query: str, of_format: Format | None, limit: int) -> SearchBooksOutput:
        needle = query.casefold()
        found = [book for book in self.books.values()
                 if of_format in (None, book.format) and _matches(book, needle)]
        return SearchBooksOutput(books=found[:limit], total=len(found))


def _matches(book: Book, needle: str) -> bool:
    texts = [book.title, book.subtitle or "", *(author.name for author in book.authors)]
    return any(needle in text.casefold() for text in texts)


LIBRARIAN_TOKEN = os.environ.get("LIBRARY_API_TOKEN", "")
