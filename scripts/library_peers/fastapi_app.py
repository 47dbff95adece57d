"""The catalogue as a FastAPI app: pydantic models, `response_model`, a bearer dependency for the
operation that writes (add_book needs the librarian's token; reading needs nothing)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from library_peers.models import (
    LIBRARIAN_TOKEN,
    AddBookInput,
    AddBookOutput,
    Catalogue,
    GetBookInput,
    GetBookOutput,
    SearchBooksInput,
    SearchBooksOutput,
)

app = FastAPI(title="Library catalogue API")
catalogue = Catalogue()
bearer = HTTPBearer(auto_error=False)


def librarian(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
    if credentials is None or not LIBRARIAN_TOKEN or credentials.credentials != LIBRARIAN_TOKEN:
        raise HTTPException(401, "a bearer token granted catalog:write is needed",
                            headers={"WWW-Authenticate": "Bearer"})
    return "librarian"


@app.post("/books/add", response_model=AddBookOutput)
async def add_book(payload: AddBookInput, _: Annotated[str, Depends(librarian)]) -> AddBookOutput:
    return AddBookOutput(book=catalogue.add(payload))


@app.post("/books/get", response_model=GetBookOutput)
async def get_book(payload: GetBookInput) -> GetBookOutput:
    return GetBookOutput(book=catalogue.books.get(payload.id))


@app.post("/books/search", response_model=SearchBooksOutput)
async def search_books(payload: SearchBooksInput) -> SearchBooksOutput:
    return catalogue.search(payload.query, payload.format, payload.limit)
