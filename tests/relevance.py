"""The relevance set (tests/data/relevance): known-item queries over pages of our own writing, in
German, Hebrew, Chinese, French and English, and what search_documents ranks for them.

Shared by tests/server/store/test_relevance.py and scripts/bench_relevance.py (which adds a BM25
baseline). The pages are stored the way a retrieval stores them, without the network: each is
rendered as an HTML page of its site (header, nav, article, footer), answered by PageFetcher in
place of the origin, read by the service's RetrievalEngine (its HTML parser: the text and title
kept are the service's own), and settled through the store's jobs as the worker settles them.
The queries then go to search_documents as a member of the workspace asks them, 10 results a page.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import unicodedata
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "relevance"
LANGUAGES = ("de", "he", "zh", "fr", "en")
# How a query's words stand to the target page's: `exact` (each word is on the page as typed, case
# and accents aside), `inflection` (another grammatical form: plural, case, verb form), `compound`
# (a part of a compound the page writes, or a compound whose parts the page writes apart),
# `prefix` (Hebrew: with or without the prefix letters ב ה ו ל מ ש כ the page has), `spelling` (the
# page's word spelt otherwise: ue for ü, ss for ß, Hebrew plene for defective or back), `cjk-pieces`
# (Chinese: a phrase typed without spaces whose parts stand apart on the page)
FORMS = ("exact", "inflection", "compound", "prefix", "spelling", "cjk-pieces")
FORM_LANGUAGE = {"prefix": "he", "cjk-pieces": "zh"}  # forms of one language's queries only
TOP = 10
MIN_PAGES, MIN_QUERIES = 25, 20
WORDS = (150, 600)  # a page's length in words; Chinese in characters, CJK_CHARS
CJK_CHARS = (250, 1000)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True)
class Site:
    language: str
    host: str
    name: str
    nav: tuple[str, ...]
    footer: str


@dataclass(frozen=True)
class Page:
    language: str
    slug: str
    title: str
    blocks: tuple[str, ...]  # paragraphs; a block starting "## " is a subheading
    url: str

    @property
    def parent(self) -> str:
        """The name search_documents answers for it: documents/{uri_without_scheme}."""
        return "documents/" + self.url.split("://", 1)[1]

    @property
    def plain(self) -> str:
        return "\n".join((self.title, *(block.removeprefix("## ") for block in self.blocks)))


@dataclass(frozen=True)
class Query:
    language: str
    text: str
    target: str  # the page's slug
    form: str
    page_form: str | None  # for a query not in the page's form: the form the page has
    parent: str  # the target's name in search_documents' answer


def _site(language: str, data: dict[str, Any]) -> Site:
    site = data["site"]
    return Site(language, site["host"], site["name"], tuple(site["nav"]), site["footer"])


def read_pages(language: str, site: Site) -> list[Page]:
    """`<language>.pages.txt`: pages, each `=== slug`, then `# title`, then blocks apart by blank lines."""
    text = (DATA / f"{language}.pages.txt").read_text(encoding="utf-8")
    pages = []
    joiner = "" if language == "zh" else " "
    for chunk in re.split(r"(?m)^=== ", text)[1:]:
        head, _, body = chunk.partition("\n")
        lines = body.strip().split("\n")
        assert lines[0].startswith("# "), f"{language}/{head}: the first line is the title"
        blocks = [joiner.join(line.strip() for line in block.split("\n"))
                  for block in re.split(r"\n\s*\n", "\n".join(lines[1:]).strip()) if block.strip()]
        slug = head.strip()
        pages.append(Page(language, slug, lines[0][2:].strip(), tuple(blocks), f"https://{site.host}/{slug}"))
    return pages


def load(languages: Iterable[str] = LANGUAGES) -> tuple[dict[str, Site], list[Page], list[Query]]:
    sites, pages, queries = {}, [], []
    for language in languages:
        data = json.loads((DATA / f"{language}.json").read_text(encoding="utf-8"))
        sites[language] = site = _site(language, data)
        mine = read_pages(language, site)
        pages += mine
        by_slug = {page.slug: page for page in mine}
        for item in data["queries"]:
            target = by_slug.get(item["target"])
            parent = target.parent if target else f"documents/{site.host}/{item['target']}"
            queries.append(Query(language, item["query"], item["target"], item["form"], item.get("page_form"),
                                 parent))
    return sites, pages, queries


def render(page: Page, site: Site) -> bytes:
    """The page as its site serves it: the article with the site's header, nav and footer around."""
    e = html.escape
    nav = "".join(f'<li><a href="/{e(item.lower())}">{e(item)}</a></li>' for item in site.nav)
    body = "".join(f"<h2>{e(block[3:])}</h2>" if block.startswith("## ") else f"<p>{e(block)}</p>"
                   for block in page.blocks)
    direction = ' dir="rtl"' if page.language == "he" else ""
    return (f'<!doctype html>\n<html lang="{page.language}"{direction}><head><meta charset="utf-8">'
            f"<title>{e(page.title)} – {e(site.name)}</title></head>\n<body><header>"
            f'<a href="/">{e(site.name)}</a><nav><ul>{nav}</ul></nav></header>\n'
            f"<main><article><h1>{e(page.title)}</h1>\n{body}\n</article></main>\n"
            f"<footer><p>© {e(site.name)} · {e(site.footer)}</p></footer></body></html>\n").encode()


# -- the set's own checks ------------------------------------------------------------------------

def fold(text: str) -> str:
    """Case and accents (and Hebrew points) aside: what `exact` disregards (ß stays ß: ss is a `spelling`)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", fold(text)))


def length(page: Page) -> int:
    """Words (Chinese: characters) of the page's text."""
    text = " ".join(page.blocks)
    return len(_CJK.findall(text)) if page.language == "zh" else len(re.findall(r"\w+", text))


def problems(pages: Sequence[Page], queries: Sequence[Query]) -> list[str]:
    """What keeps the set from being what tests/data/relevance/README.md says it is."""
    found: list[str] = []
    by_key = {(page.language, page.slug): page for page in pages}
    for language in sorted({page.language for page in pages}):
        mine = [page for page in pages if page.language == language]
        asked = [query for query in queries if query.language == language]
        if len(mine) < MIN_PAGES:
            found.append(f"{language}: {len(mine)} pages, fewer than {MIN_PAGES}")
        if len(asked) < MIN_QUERIES:
            found.append(f"{language}: {len(asked)} queries, fewer than {MIN_QUERIES}")
        other = sum(query.form != "exact" for query in asked)
        if 3 * other < len(asked):
            found.append(f"{language}: {other} of {len(asked)} queries in another form than the page's, "
                         "less than a third")
        if len({page.slug for page in mine}) != len(mine):
            found.append(f"{language}: a slug is used twice")
    for page in pages:
        low, high = CJK_CHARS if page.language == "zh" else WORDS
        if not low <= length(page) <= high:
            found.append(f"{page.language}/{page.slug}: {length(page)} "
                         f"{'characters' if page.language == 'zh' else 'words'}, not {low}-{high}")
    for query in queries:
        where = f"{query.language} {query.text!r}"
        page = by_key.get((query.language, query.target))
        if page is None:
            found.append(f"{where}: no page {query.target!r}")
            continue
        if query.form not in FORMS:
            found.append(f"{where}: form {query.form!r} is none of {FORMS}")
        if not 1 <= len(query.text.split()) <= 3:
            found.append(f"{where}: not 1-3 words")
        on_page = fold(page.plain)
        if query.language == "zh":  # no spaces: a phrase is on the page as typed when it is there whole
            as_typed = fold(query.text) in on_page
        else:
            on_page_words = _words(page.plain)
            as_typed = all(word in on_page_words for word in re.findall(r"\w+", fold(query.text)))
        if query.form in FORM_LANGUAGE and query.language != FORM_LANGUAGE[query.form]:
            found.append(f"{where}: `{query.form}` is a form of {FORM_LANGUAGE[query.form]} queries")
        if query.form == "exact" and not as_typed:
            found.append(f"{where}: `exact`, but not on {query.target} as typed")
        if query.form != "exact":
            if as_typed:
                found.append(f"{where}: `{query.form}`, but on {query.target} as typed")
            if not query.page_form:
                found.append(f"{where}: `{query.form}` without the page_form it stands for")
            elif any(fold(form) not in on_page for form in query.page_form.split(" / ")):
                found.append(f"{where}: page_form {query.page_form!r} is not on {query.target}")
    return found


# -- storing the pages as a retrieval does ---------------------------------------------------------

class PageFetcher:
    """In place of the network: answers each page's URL with its rendered HTML."""

    def __init__(self, bodies: dict[str, bytes]) -> None:
        from evidencekit.server.evidence.fetch.fetcher import FetchLimits

        self.bodies = bodies
        self.limits = FetchLimits()

    def budget(self) -> Any:
        from evidencekit.server.evidence.fetch.fetcher import FetchBudget

        return FetchBudget(asyncio.get_running_loop().time() + self.limits.deadline, self.limits.max_redirects)

    async def fetch(self, url: str, accept: str, wants_body: Any = None, budget: Any = None) -> Any:
        from evidencekit.server.evidence.fetch.fetcher import FetchResponse

        body = self.bodies.get(url)
        if body is None:
            return FetchResponse(url, 404, "text/html", "utf-8", None, None, b"")
        return FetchResponse(url, 200, "text/html", "utf-8", None, None, body)


@dataclass(frozen=True)
class Stored:
    """What the service kept of a page: its title and text, as a search would meet them."""

    title: str
    text: str


async def store_pages(sites: dict[str, Site], pages: Sequence[Page]) -> tuple[Any, dict[str, Stored]]:
    """Store every page in one new workspace, in an open store; a reader of that workspace and,
    by parent, the title and text the service kept of each page."""
    from evidencekit.server.evidence.retrieval.engine import RetrievalEngine
    from evidencekit.server.evidence.store import access, jobs, receipts
    from evidencekit.server.evidence.store.models import User, Workspace
    from evidencekit.server.evidence.worker import content_of

    workspace = await Workspace.create(name="relevance")
    user = await User.create(name="reader")
    await access.add_member(workspace, user, "viewer")
    _, secret = await access.create_token(user)
    reader = await access.authenticate(secret)
    assert reader is not None
    for page in pages:
        await receipts.submit(receipts.RetrieveRequest(workspace.id, uuid.uuid4(), page.url, "url_text"))
    engine = RetrievalEngine(PageFetcher({page.url: render(page, sites[page.language]) for page in pages}))  # type: ignore[arg-type]
    stored: dict[str, Stored] = {}
    while claimed := await jobs.claim_many("relevance", timedelta(minutes=5), max_attempts=1, limit=50):
        settles = []
        for receipt in claimed:
            retrieved = await engine.retrieve(receipt.url, receipt.kind, receipt.language)
            content = content_of(retrieved)
            assert content is not None, (receipt.url, retrieved.result)
            stored["documents/" + receipt.url.split("://", 1)[1]] = Stored(content.title or "", content.text)
            settles.append(jobs.Settle(receipt, retrieved.result, content))
        await jobs.settle_many("relevance", settles)
    assert len(stored) == len(pages), f"{len(stored)} of {len(pages)} pages stored"
    return reader, stored


async def rankings(reader: Any, queries: Sequence[Query]) -> list[list[str]]:
    """search_documents' first page (TOP results) for each query, as the parents it names."""
    from evidencekit.server.evidence.search_documents import search_documents

    ranked = []
    for query in queries:
        answer = await search_documents(reader, query.text, TOP)
        ranked.append([result["parent"] for result in answer["results"]])
    return ranked


async def ranked_on(url: str, languages: Iterable[str] = LANGUAGES) -> tuple[list[Query], list[list[str]]]:
    """Open a fresh store at `url`, store the set and rank its queries: the queries and their rankings."""
    from evidencekit.server.evidence.store.db import open_store

    sites, pages, queries = load(languages)
    async with open_store(url):
        reader, _ = await store_pages(sites, pages)
        return queries, await rankings(reader, queries)


# -- measures ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Score:
    mrr: float  # MRR@10: the mean of 1/rank of the target, 0 past the 10th
    recall: float  # recall@10: the share of queries whose target is in the first 10
    count: int


def score(queries: Sequence[Query], ranked: Sequence[Sequence[str]]) -> Score:
    reciprocal = []
    for query, parents in zip(queries, ranked, strict=True):
        top = list(parents[:TOP])
        reciprocal.append(1 / (top.index(query.parent) + 1) if query.parent in top else 0.0)
    if not reciprocal:
        return Score(0.0, 0.0, 0)
    return Score(sum(reciprocal) / len(reciprocal), sum(r > 0 for r in reciprocal) / len(reciprocal), len(reciprocal))


def scores_by(queries: Sequence[Query], ranked: Sequence[Sequence[str]], key: str) -> dict[str, Score]:
    """The score of each group of queries (by `language` or `form`), and of all under "all"."""
    groups: dict[str, list[int]] = {}
    for n, query in enumerate(queries):
        groups.setdefault(getattr(query, key), []).append(n)
    found = {name: score([queries[n] for n in group], [ranked[n] for n in group]) for name, group in groups.items()}
    found["all"] = score(queries, ranked)
    return found
