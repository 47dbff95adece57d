"""The relevance set (tests/data/relevance, tests/relevance.py): search_documents finds each known
item among the first 10 results in every language, on SQLite and on PostgreSQL, in the same order
on both. scripts/bench_relevance.py measures the same with MRR@10 beside a BM25 baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidencekit.server.evidence.store.db import open_store
from tests.relevance import LANGUAGES, TOP, load, problems, rankings, scores_by, store_pages

pytestmark = pytest.mark.anyio

RECALL_TARGET = 0.95


def test_the_set_is_what_its_readme_says() -> None:
    """Every language: 25 pages or more of 150-600 words, 20 queries or more, a third of them or
    more in another form than the page's; each query's form is what its kind says."""
    _, pages, queries = load()
    assert {page.language for page in pages} == set(LANGUAGES)
    assert problems(pages, queries) == []


async def test_each_known_item_is_in_the_first_ten_in_every_language(store: str) -> None:
    sites, pages, queries = load()
    reader, _ = await store_pages(sites, pages)
    ranked = await rankings(reader, queries)
    missed = [f"{query.language} {query.form} {query.text!r} -> {query.target}"
              for query, parents in zip(queries, ranked, strict=True) if query.parent not in parents[:TOP]]
    recall = {language: round(found.recall, 3) for language, found in scores_by(queries, ranked, "language").items()}
    assert all(value >= RECALL_TARGET for value in recall.values()), (recall, missed)


async def test_sqlite_and_postgresql_rank_alike(tmp_path: Path, postgres_url: str) -> None:
    sites, pages, queries = load()
    answers = []
    for url in (f"sqlite:///{tmp_path / 'store.sqlite3'}", postgres_url):
        async with open_store(url):
            reader, _ = await store_pages(sites, pages)
            answers.append(await rankings(reader, queries))
    differ = [f"{query.language} {query.text!r}" for query, on_sqlite, on_postgres in zip(queries, *answers, strict=True)
              if on_sqlite != on_postgres]
    assert differ == []
