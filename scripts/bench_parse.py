"""Benchmark evidencekit.server.evidence.parse against its peers, in one process, on generated inputs.

HTML: parse_html vs trafilatura.extract() (default settings, text output) on generated pages
(articles, docs, news, forum threads, product pages; 20-200 KB; seeded, so runs repeat).
Captions: parse_webvtt vs webvtt-py, parse_subrip vs pysrt, on 10,000-cue files.
--quality: token-level F1 of each extractor's text against the main text the generator wrote.
--instructions: the HTML row also in CPU instructions a pass over the pages, counted by valgrind's
callgrind for each extractor in the same run (three passes less one, so start-up and imports drop
out): repeatable on one machine whatever its neighbours do, where wall-clock rates on a shared
machine move by a tenth from run to run, and less moved by the processor's kind (a rate ratio
read 3.5x on an AMD EPYC and 4.5x on a Xeon for the same code). A few minutes; needs valgrind.

    .venv/bin/python scripts/bench_parse.py [--pages 60] [--rounds 3] [--quality] [--instructions] [--seed 7]
"""

from __future__ import annotations

import argparse
import html
import io
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidencekit.server.evidence.parse import parse_html, parse_subrip, parse_webvtt  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Text generation

_SYLLABLES = [
    "ka", "lo", "mi", "ne", "ta", "ri", "so", "ve", "du", "pa", "len", "tor", "mar", "sil", "ven",
    "dra", "col", "bin", "fer", "gus", "hal", "ith",
]  # fmt: skip
_STOPWORDS = [
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "with", "was", "on",
    "be", "by", "this", "are", "from", "at", "or", "an",
]  # fmt: skip


class Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = sorted(
            {"".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(900)}
        )

    def word(self) -> str:
        if self.rng.random() < 0.35:
            return self.rng.choice(_STOPWORDS)
        return self.rng.choice(self.words)

    def sentence(self, low: int = 6, high: int = 22) -> str:
        words = [self.word() for _ in range(self.rng.randint(low, high))]
        if len(words) > 8 and self.rng.random() < 0.5:
            words[self.rng.randint(3, len(words) - 3)] += ","
        return " ".join(words).capitalize() + self.rng.choice([".", ".", ".", "?", "!"])

    def paragraph(self, low: int = 2, high: int = 6) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(low, high)))

    def title(self, low: int = 3, high: int = 8) -> str:
        return " ".join(self.word() for _ in range(self.rng.randint(low, high))).title()

    def link_text(self) -> str:
        return self.title(1, 4)


def esc(text: str) -> str:
    return html.escape(text, quote=False)


# ---------------------------------------------------------------------------------------------
# Page furniture (never part of the main text)


def padding(w: Writer, size: int) -> str:
    """Inline scripts and styles as real pages carry them (analytics, JSON state, CSS)."""
    rng = w.rng
    state = ",".join(f'"{w.word()}{i}":"{w.sentence(2, 5)}"' for i in range(size // 140))
    css = "\n".join(
        f".{w.word()}-{i} {{ margin: {rng.randint(0, 20)}px; color: #{rng.randint(0, 0xFFFFFF):06x}; }}"
        for i in range(size // 100)
    )
    return (
        f"<style>{css}</style>\n<script>window.__STATE__ = {{{state}}};</script>\n"
        '<script async src="https://example.invalid/analytics.js"></script>'
    )


def menu(w: Writer, count: int, css: str = "menu") -> str:
    items = "".join(f'<li class="{css}-item"><a href="/{w.word()}">{esc(w.link_text())}</a></li>' for _ in range(count))
    return f'<ul class="{css}">{items}</ul>'


def site_header(w: Writer, semantic: bool) -> str:
    inner = f'<a class="logo" href="/">{esc(w.title(1, 2))}</a>{menu(w, w.rng.randint(5, 12))}'
    search = '<form class="search" action="/s"><input type="search" name="q"><button>Search</button></form>'
    if semantic:
        return f'<header class="site-header"><nav aria-label="Main">{inner}</nav>{search}</header>'
    return f'<div id="header"><div class="navbar">{inner}</div>{search}</div>'


def cookie_banner(w: Writer) -> str:
    return (
        f'<div class="cookie-banner" role="dialog"><p>{esc(w.paragraph(1, 2))}</p>'
        "<button>Accept all</button><button>Settings</button></div>"
    )


def site_footer(w: Writer, semantic: bool) -> str:
    cols = "".join(f'<div class="footer-col"><h4>{esc(w.title(1, 2))}</h4>{menu(w, 5, "links")}</div>' for _ in range(3))
    legal = f"<p>&copy; 2024 {esc(w.title(1, 2))}. {esc(w.sentence())}</p>"
    if semantic:
        return f'<footer class="site-footer">{cols}{legal}</footer>'
    return f'<div id="footer" class="footer">{cols}{legal}</div>'


def sidebar(w: Writer, marked: bool) -> str:
    widgets = []
    for _ in range(w.rng.randint(2, 4)):
        items = "".join(
            f'<li><a href="/{w.word()}">{esc(w.title(3, 7))}</a> <span class="date">2024</span></li>'
            for _ in range(w.rng.randint(4, 8))
        )
        widgets.append(f'<div class="widget"><h3>{esc(w.title(1, 3))}</h3><ul>{items}</ul></div>')
    about = f'<div class="widget"><h3>About</h3><p>{esc(w.sentence())}</p></div>'
    if marked:
        return f'<aside class="sidebar" role="complementary">{"".join(widgets)}{about}</aside>'
    # An unmarked column: only its link density gives it away.
    return f'<div class="col-md-4">{"".join(widgets)}</div>'


def related(w: Writer) -> str:
    cards = "".join(
        f'<div class="card"><a href="/{w.word()}"><h3>{esc(w.title(4, 9))}</h3></a></div>'
        for _ in range(w.rng.randint(3, 6))
    )
    return f'<section class="related-posts"><h2>You might also like</h2>{cards}</section>'


def comments(w: Writer) -> str:
    if w.rng.random() < 0.3:
        # Named so that no class rule recognises it: only its place outside the post can tell.
        replies = "".join(
            f'<div class="response"><b>{esc(w.title(1, 2))}</b><p>{esc(w.paragraph(1, 2))}</p></div>'
            for _ in range(w.rng.randint(2, 5))
        )
        return f'<div class="responses"><h2>Responses</h2>{replies}</div>'
    items = "".join(
        f'<li class="comment"><div class="comment-author">{esc(w.title(1, 2))}</div>'
        f'<div class="comment-body"><p>{esc(w.paragraph(1, 3))}</p></div>'
        '<a class="reply" href="#">Reply</a></li>'
        for _ in range(w.rng.randint(2, 8))
    )
    form = '<form class="comment-form"><textarea name="c"></textarea><input type="submit" value="Post"></form>'
    return f'<div id="comments" class="comments-area"><h2>Comments</h2><ol class="comment-list">{items}</ol>{form}</div>'


def share_bar() -> str:
    return (
        '<div class="share-buttons"><a href="#">Facebook</a> <a href="#">Twitter</a> '
        '<a href="#">LinkedIn</a> <a href="#">Email</a></div>'
    )


def newsletter(w: Writer) -> str:
    return (
        f'<div class="newsletter-signup"><h3>Subscribe</h3><p>{esc(w.sentence())}</p>'
        '<form><input type="email"><button>Sign up</button></form></div>'
    )


# ---------------------------------------------------------------------------------------------
# Main content (each builder returns its HTML and its plain text, the truth)


class Content:
    def __init__(self) -> None:
        self.html: list[str] = []
        self.text: list[str] = []

    def add(self, markup: str, text: str) -> None:
        self.html.append(markup)
        self.text.append(text)

    def headline(self, markup: str) -> None:
        """The page's h1: its title, which the main text leaves out (both extractors do)."""
        self.html.append(markup)


def body_flow(w: Writer, content: Content, paragraphs: int, code: bool = False) -> None:
    rng = w.rng
    for i in range(paragraphs):
        if i and i % rng.randint(3, 6) == 0:
            heading = w.title()
            content.add(f"<h2>{esc(heading)}</h2>", heading)
        roll = rng.random()
        if roll < 0.08:
            items = [w.sentence(3, 10) for _ in range(rng.randint(3, 6))]
            tag = rng.choice(["ul", "ol"])
            content.add(f"<{tag}>" + "".join(f"<li>{esc(t)}</li>" for t in items) + f"</{tag}>", "\n".join(items))
        elif roll < 0.12:
            quote = w.paragraph(1, 2)
            content.add(f"<blockquote><p>{esc(quote)}</p></blockquote>", quote)
        elif code and roll < 0.3:
            lines = [f"{w.word()} = {w.word()}({w.word()}, {rng.randint(0, 99)})" for _ in range(rng.randint(3, 12))]
            content.add('<pre><code class="language-python">' + esc("\n".join(lines)) + "</code></pre>", "\n".join(lines))
        elif code and roll < 0.36:
            head = [w.word().title() for _ in range(3)]
            rows = [[w.word() for _ in range(3)] for _ in range(rng.randint(2, 6))]
            markup = "<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"
            markup += "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
            content.add(markup + "</tbody></table>", "\n".join(" ".join(r) for r in [head, *rows]))
        else:
            sentences = [w.sentence() for _ in range(rng.randint(2, 6))]
            parts = []
            for sentence in sentences:
                if rng.random() < 0.25:
                    words = sentence.split(" ")
                    at = rng.randint(0, len(words) - 2)
                    linked = " ".join(words[at : at + 2])
                    words[at : at + 2] = [f'<a href="/{w.word()}">{esc(linked)}</a>']
                    parts.append(" ".join(w_ if w_.startswith("<a ") else esc(w_) for w_ in words))
                else:
                    parts.append(esc(sentence))
            content.add(f"<p>{' '.join(parts)}</p>", " ".join(sentences))


def page(w: Writer, title: str, body: str, lang: str = "en") -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<meta name="description" content="{esc(w.sentence())}">'
        f'<meta name="viewport" content="width=device-width">{padding(w, int(w.rng.triangular(5_000, 300_000, 40_000)))}</head>'
        f"<body>{body}{padding(w, w.rng.randint(1_000, 20_000))}</body></html>"
    )


def article_page(w: Writer) -> tuple[str, str]:
    rng = w.rng
    semantic = rng.random() < 0.6
    content = Content()
    title = w.title()
    content.headline(f'<h1 class="entry-title">{esc(title)}</h1>')
    body_flow(w, content, rng.randint(6, 40))
    byline = f'<div class="byline">By {esc(w.title(2, 2))} &middot; 3 min read</div>'
    parts = content.html[1:]
    if rng.random() < 0.3 and len(parts) > 4:
        # The body split around an advertisement, as some CMSs do.
        half = len(parts) // 2
        ad = '<div class="ad-break"><span>Advertisement</span></div>'
        body_html = f'<div class="entry-content">{"".join(parts[:half])}</div>{ad}<div class="entry-content">{"".join(parts[half:])}</div>'
    else:
        body_html = f'<div class="entry-content">{"".join(parts)}</div>'
    inner = content.html[0] + byline + share_bar() + body_html
    tags = '<div class="post-tags">' + "".join(f'<a href="/t/{w.word()}">{w.word()}</a> ' for _ in range(5)) + "</div>"
    if semantic:
        main = f'<main id="main"><article class="post">{inner}{tags}</article>{related(w)}{comments(w)}</main>'
        layout = f'{main}{sidebar(w, True)}'
    else:
        main = f'<div class="post">{inner}{tags}</div>{related(w)}{comments(w)}'
        layout = f'<div class="row"><div class="col-md-8">{main}</div>{sidebar(w, False)}</div>'
    body = cookie_banner(w) + site_header(w, semantic) + f'<div id="page">{layout}</div>' + site_footer(w, semantic)
    return page(w, title + " | Blog", body), "\n".join(content.text)


def docs_page(w: Writer) -> tuple[str, str]:
    rng = w.rng
    content = Content()
    title = w.title(2, 5)
    content.headline(f"<h1>{esc(title)}</h1>")
    body_flow(w, content, rng.randint(8, 45), code=True)
    toc = "".join(
        f'<li><a href="/docs/{w.word()}">{esc(w.title(1, 4))}</a>{menu(w, rng.randint(0, 4), "toc")}</li>' for _ in range(rng.randint(10, 40))
    )
    left = f'<nav class="docs-sidebar"><ul class="toc">{toc}</ul></nav>'
    pager = (
        f'<div class="prev-next"><a rel="prev" href="/a">&larr; {esc(w.title(2, 4))}</a>'
        f'<a rel="next" href="/b">{esc(w.title(2, 4))} &rarr;</a></div>'
    )
    crumbs = f'<ol class="breadcrumb"><li><a href="/">Docs</a></li><li>{esc(title)}</li></ol>'
    edit = '<div class="edit-page"><a href="/edit">Edit this page</a></div>'
    if rng.random() < 0.5:
        main = f'<div class="document" role="main">{crumbs}<div class="body">{"".join(content.html)}</div>{edit}{pager}</div>'
    else:
        main = f'<main class="content">{crumbs}<article class="markdown">{"".join(content.html)}</article>{pager}</main>'
    body = site_header(w, True) + f'<div class="wrapper">{left}{main}</div>' + site_footer(w, True)
    return page(w, title + " - Docs", body), "\n".join(content.text)


def news_page(w: Writer) -> tuple[str, str]:
    rng = w.rng
    content = Content()
    title = w.title(5, 12)
    lead = w.paragraph(1, 2)
    content.headline(f"<h1>{esc(title)}</h1>")
    content.add(f'<p class="lead">{esc(lead)}</p>', lead)
    body_flow(w, content, rng.randint(5, 25))
    paragraphs = content.html[2:]
    for at in sorted(rng.sample(range(len(paragraphs) + 1), k=min(2, len(paragraphs) + 1)), reverse=True):
        paragraphs.insert(at, f'<div class="ad-slot"><span>Advertisement</span><div id="ad-{at}"></div></div>')
    read_also = f'<div class="read-also"><a href="/x">{esc(w.title(5, 9))}</a></div>'
    paragraphs.insert(len(paragraphs) // 2, read_also)
    ticker = '<div class="breaking-ticker">' + menu(w, 6, "ticker") + "</div>"
    most_read = '<div class="most-read"><h2>Most read</h2>' + menu(w, 8, "list") + "</div>"
    cards = "".join(
        f'<div class="card"><h3><a href="/n/{w.word()}">{esc(w.title(4, 8))}</a></h3><p>{esc(w.sentence(10, 20))}</p></div>'
        for _ in range(rng.randint(3, 8))
    )
    most_read += f'<section class="stream"><h2>{esc(w.title(1, 3))}</h2>{cards}</section>'  # teasers with excerpts
    article = (
        f'<article class="story">{content.html[0]}<div class="meta"><time>2024-05-01</time> '
        f'{esc(w.title(2, 2))}</div>{content.html[1]}<figure><img src="a.jpg" alt=""><figcaption class="caption">'
        f'Photo: Agency</figcaption></figure><div class="story-body">{"".join(paragraphs)}</div>{share_bar()}</article>'
    )
    body = site_header(w, rng.random() < 0.5) + ticker + f'<div class="container">{article}{newsletter(w)}{most_read}</div>' + site_footer(w, True)
    return page(w, title, body), "\n".join(content.text)


def forum_page(w: Writer) -> tuple[str, str]:
    rng = w.rng
    title = w.title(4, 10)
    truth: list[str] = []  # the h1 thread title is the page title, not main text
    posts = []
    for i in range(rng.randint(3, 15)):
        paragraphs = [w.paragraph(1, 4) for _ in range(rng.randint(1, 3))]
        truth.extend(paragraphs)
        posts.append(
            f'<div class="post" id="p{i}"><div class="post-author"><a href="/u/{w.word()}">{esc(w.title(1, 1))}</a>'
            f'<span class="rank">Member</span><span class="posts">Posts: {rng.randint(1, 900)}</span></div>'
            f'<div class="post-content">{"".join(f"<p>{esc(p)}</p>" for p in paragraphs)}</div>'
            f'<div class="post-signature">{esc(w.sentence(3, 6))}</div>'
            '<div class="post-actions"><a href="#">Quote</a> <a href="#">Report</a></div></div>'
        )
    crumbs = '<div class="breadcrumbs"><a href="/">Forum</a> &gt; <a href="/f/1">General</a></div>'
    pages = '<div class="pagination"><a href="?p=1">1</a> <a href="?p=2">2</a> <a href="?p=3">Next</a></div>'
    reply = '<form class="reply"><textarea name="m"></textarea><button>Reply</button></form>'
    body = (
        site_header(w, False)
        + f'<div id="content">{crumbs}<h1 class="thread-title">{esc(title)}</h1>{pages}'
        + f'<div class="thread">{"".join(posts)}</div>{pages}{reply}</div>'
        + site_footer(w, False)
    )
    return page(w, title + " - Forum", body), "\n".join(truth)


def product_page(w: Writer) -> tuple[str, str]:
    rng = w.rng
    title = w.title(2, 6)
    description = [w.paragraph(2, 5) for _ in range(rng.randint(2, 6))]
    specs = [(w.word().title(), w.title(1, 3)) for _ in range(rng.randint(4, 12))]
    truth = [*description, *(f"{k} {v}" for k, v in specs)]
    spec_rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in specs)
    reviews = "".join(
        f'<div class="review"><div class="rating">{rng.randint(1, 5)} stars</div><p>{esc(w.paragraph(1, 2))}</p></div>'
        for _ in range(rng.randint(0, 6))
    )
    carousel = '<div class="recommendations"><h2>Customers also bought</h2>' + "".join(
        f'<div class="tile"><a href="/p/{w.word()}">{esc(w.title(2, 4))}</a><span class="price">$9</span></div>'
        for _ in range(8)
    ) + "</div>"
    body = (
        site_header(w, True)
        + '<main><div class="product">'
        + f'<ol class="breadcrumb"><li><a href="/">Shop</a></li><li><a href="/c">{esc(w.title(1, 2))}</a></li></ol>'
        + f'<h1 class="product-title">{esc(title)}</h1><div class="price-box"><span class="price">$49.90</span>'
        + '<form class="add-to-cart"><input type="number" value="1"><button>Add to cart</button></form></div>'
        + '<div class="product-description">' + "".join(f"<p>{esc(p)}</p>" for p in description) + "</div>"
        + f'<table class="specs">{spec_rows}</table>'
        + f'<div class="reviews"><h2>Reviews</h2>{reviews}</div></div>{carousel}</main>'
        + site_footer(w, True)
    )
    return page(w, title + " | Shop", body), "\n".join(truth)


BUILDERS: dict[str, Callable[[Writer], tuple[str, str]]] = {
    "article": article_page,
    "docs": docs_page,
    "news": news_page,
    "forum": forum_page,
    "product": product_page,
}


def build_pages(count: int, seed: int) -> list[tuple[str, bytes, str]]:
    """(kind, html bytes, truth) for count pages between ~20 and ~200 KB."""
    rng = random.Random(seed)
    writer = Writer(rng)
    kinds = list(BUILDERS)
    pages: list[tuple[str, bytes, str]] = []
    while len(pages) < count:
        kind = kinds[len(pages) % len(kinds)]
        markup, truth = BUILDERS[kind](writer)
        data = markup.encode("utf-8")
        if 20_000 <= len(data) <= 200_000:
            pages.append((kind, data, truth))
    return pages


# ---------------------------------------------------------------------------------------------
# Captions


def caption_files(cues: int, seed: int) -> tuple[bytes, bytes]:
    rng = random.Random(seed)
    writer = Writer(rng)
    vtt = ["WEBVTT", "Kind: captions", "Language: en", ""]
    srt = []
    at = 0
    for i in range(1, cues + 1):
        start, end = at, at + rng.randint(800, 4000)
        at = end + rng.randint(0, 500)
        lines = [writer.sentence(3, 8) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.2:
            lines[0] = f"<v {writer.title(1, 1)}>{lines[0]}"
        vtt += [str(i), f"{_ts(start, '.')} --> {_ts(end, '.')} line:90%", *lines, ""]
        srt_lines = [f"<i>{line}</i>" if rng.random() < 0.1 else line for line in lines]
        srt += [str(i), f"{_ts(start, ',')} --> {_ts(end, ',')}", *[re.sub(r"<v [^>]*>", "", s) for s in srt_lines], ""]
    return "\n".join(vtt).encode("utf-8"), "\n".join(srt).encode("utf-8")


def _ts(ms: int, sep: str) -> str:
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"


# ---------------------------------------------------------------------------------------------
# Measuring


def compare(ours: Callable[[], object], peer: Callable[[], object], items: int, rounds: int) -> tuple[float, float]:
    """Items per second of each, after a warm-up run; rounds alternate so that drift in the
    machine's speed touches both alike."""
    ours()
    peer()
    spent = [0.0, 0.0]
    for _ in range(rounds):
        for at, function in enumerate((ours, peer)):
            started = time.perf_counter()
            function()
            spent[at] += time.perf_counter() - started
    return items * rounds / spent[0], items * rounds / spent[1]


def tokens(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower()))


def f1(predicted: str, truth: str) -> float:
    got, want = tokens(predicted), tokens(truth)
    overlap = sum((got & want).values())
    if not overlap:
        return 0.0
    precision = overlap / sum(got.values())
    recall = overlap / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _passes(extractor: str, passes: int, count: int, seed: int) -> None:
    """The child callgrind counts: `passes` passes of one extractor over the generated pages."""
    warnings.simplefilter("ignore")
    bodies = [data for _, data, _ in build_pages(count, seed)]
    if extractor == "trafilatura":
        import trafilatura

        def extract(body: bytes) -> object:
            return trafilatura.extract(body)
    else:
        extract = parse_html
    for _ in range(passes):
        for body in bodies:
            extract(body)


def instructions_a_pass(extractor: str, count: int, seed: int) -> int:
    """CPU instructions one pass of `extractor` over the pages takes (callgrind: three passes less
    one, halved)."""
    totals = []
    for passes in (1, 3):
        child = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
             "--passes-of", extractor, str(passes), "--pages", str(count), "--seed", str(seed)],
            capture_output=True, text=True, check=True)
        found = re.search(r"Collected : (\d+)", child.stderr)
        if found is None:
            raise SystemExit(f"callgrind printed no count:\n{child.stderr[-2000:]}")
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) // 2


def main() -> None:
    if sys.argv[1:2] == ["--passes-of"]:
        extractor, passes = sys.argv[2], int(sys.argv[3])
        rest = argparse.ArgumentParser()
        rest.add_argument("--pages", type=int, default=60)
        rest.add_argument("--seed", type=int, default=7)
        known = rest.parse_args(sys.argv[4:])
        _passes(extractor, passes, known.pages, known.seed)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cues", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quality", action="store_true", help="also report token F1 against the generated truth")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each HTML extractor's instructions a pass (callgrind; needs valgrind)")
    args = parser.parse_args()

    warnings.simplefilter("ignore")  # peers' deprecation noise is not what is measured
    import pysrt  # type: ignore[import-untyped]
    import trafilatura
    import webvtt

    pages = build_pages(args.pages, args.seed)
    bodies = [data for _, data, _ in pages]
    size = sum(map(len, bodies)) / len(bodies) / 1024
    print(f"command: {' '.join([os.path.basename(sys.executable), *sys.argv])}")
    print(f"python {platform.python_version()} on {platform.platform()}; CPU: {cpu_name()} ({os.cpu_count()} cores)")
    sizes = sorted(len(b) // 1024 for b in bodies)
    print(
        f"{len(pages)} generated pages, {sizes[0]}-{sizes[-1]} KB (mean {size:.0f} KB); "
        f"{args.rounds} rounds; {args.cues} cues\n"
    )

    results = [
        (
            "HTML pages/s: parse_html vs trafilatura.extract",
            *compare(
                lambda: [parse_html(b) for b in bodies],
                lambda: [trafilatura.extract(b) for b in bodies],
                len(bodies),
                args.rounds,
            ),
        )
    ]

    vtt, srt = caption_files(args.cues, args.seed)
    srt_text = srt.decode("utf-8")

    def webvtt_py() -> None:
        for caption in webvtt.from_buffer(io.BytesIO(vtt)).captions:
            _ = (caption.start_in_seconds, caption.end_in_seconds, caption.text)

    def pysrt_direct() -> None:
        for item in pysrt.from_string(srt_text):
            _ = (item.start.ordinal, item.end.ordinal, item.text)

    webvtt_rates = compare(lambda: parse_webvtt(vtt), webvtt_py, args.cues, args.rounds)
    subrip_rates = compare(lambda: parse_subrip(srt), pysrt_direct, args.cues, args.rounds)
    results.append(("WebVTT cues/s: parse_webvtt vs webvtt-py", *webvtt_rates))
    results.append(("SubRip cues/s: parse_subrip vs pysrt", *subrip_rates))

    print("| benchmark | ours | peer | ratio |")
    print("|---|---:|---:|---:|")
    for name, mine, theirs in results:
        print(f"| {name} | {mine:,.1f} | {theirs:,.1f} | {mine / theirs:.2f}x |")

    if args.instructions:
        if shutil.which("valgrind") is None:
            raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
        mine = instructions_a_pass("parse_html", args.pages, args.seed)
        theirs = instructions_a_pass("trafilatura", args.pages, args.seed)
        print("\n| benchmark | ours | peer | ratio |")
        print("|---|---:|---:|---:|")
        print(f"| HTML: CPU instructions a pass over the {args.pages} pages (callgrind), parse_html vs "
              f"trafilatura.extract | {mine / 1e6:,.1f}M | {theirs / 1e6:,.1f}M | {theirs / mine:.2f}x |")

    if args.quality:
        print("\n| page kind | pages | F1 parse_html | F1 trafilatura |")
        print("|---|---:|---:|---:|")
        scores: dict[str, list[tuple[float, float]]] = {}
        for kind, data, truth in pages:
            peer_text = trafilatura.extract(data) or ""
            scores.setdefault(kind, []).append((f1(parse_html(data).text, truth), f1(peer_text, truth)))
        everything = [pair for pairs in scores.values() for pair in pairs]
        for kind, pairs in [*scores.items(), ("all", everything)]:
            mine = sum(p[0] for p in pairs) / len(pairs)
            theirs = sum(p[1] for p in pairs) / len(pairs)
            print(f"| {kind} | {len(pairs)} | {mine:.3f} | {theirs:.3f} |")


if __name__ == "__main__":
    main()
