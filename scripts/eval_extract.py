"""Main-text extraction quality on a development set, beside trafilatura in the same run.

The development set is Mozilla Readability's test pages (Apache-2.0; not shipped here): each
`test/test-pages/NAME/source.html` with `expected.html`, Readability's own output. That output is
another extractor's, so it is a good reference, not gold. Get it with

    git clone --depth 1 https://github.com/mozilla/readability /tmp/readability

and run

    .venv/bin/python scripts/eval_extract.py /tmp/readability/test/test-pages [--worst 10] [--page NAME]

More sets (CleanEval, CleanPortalEval, Dragnet, Google News, newspaper's test pages) are laid out
the same way by scripts/devsets.py; a NAME/expected.txt is read as the reference text as it is.

Per page: token F1 (bag of words) and 4-gram shingle F1 of the extracted text against the
reference text, both cut to 20,000 characters as the service does; the mean over pages is printed for
evidencekit's parse_html and for trafilatura.extract (comments off; default, favor_precision and
favor_recall), with each one's time. Tokens are words, and each CJK character is a token of its own.
evidencekit and trafilatura's default read every page in turn (paired_runs), and the ratio of
their speeds is printed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lxml import html as lxml_html  # type: ignore[import-untyped]  # noqa: E402

from evidencekit.server.evidence.parse import parse_html  # noqa: E402

CUT = 20_000
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W_]+", re.UNICODE)
_BLOCKS = ("p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "br", "pre", "blockquote", "td", "th")


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text[:CUT])]


def f1(found: Counter[str] | Counter[tuple[str, ...]], wanted: Counter[str] | Counter[tuple[str, ...]]) -> tuple[float, float, float]:
    if not found and not wanted:
        return 1.0, 1.0, 1.0
    common = sum((found & wanted).values())
    precision = common / max(1, sum(found.values()))
    recall = common / max(1, sum(wanted.values()))
    return precision, recall, (2 * precision * recall / (precision + recall) if common else 0.0)


def shingles(words: list[str], n: int = 4) -> Counter[tuple[str, ...]]:
    if len(words) < n:
        return Counter([tuple(words)]) if words else Counter()
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def reference_text(path: Path) -> str:
    if path.suffix == ".txt":
        return path.read_text(encoding="utf-8")
    tree = lxml_html.fromstring(path.read_text(encoding="utf-8"))
    for element in tree.iter(*_BLOCKS):
        element.tail = "\n" + (element.tail or "")
    return "\n".join(line.strip() for line in tree.text_content().splitlines() if line.strip())


def _reference(page: Path) -> Path:
    """NAME/expected.html (an extractor's HTML output), else NAME/expected.txt (plain text)."""
    html_reference = page / "expected.html"
    return html_reference if html_reference.exists() else page / "expected.txt"


def ours(raw: bytes) -> str:
    return parse_html(raw).text


def trafilatura_with(**options: bool) -> Callable[[bytes], str]:
    import trafilatura  # a dev dependency: the peer

    def extract(raw: bytes) -> str:
        return trafilatura.extract(raw, include_comments=False, **options) or ""

    return extract


def paired_runs(bodies: list[bytes], mine: Callable[[bytes], str], peer: Callable[[bytes], str]
                ) -> tuple[tuple[list[str], float], tuple[list[str], float]]:
    """Each one's outputs and seconds, every page read by one and then by the other (which goes
    first alternating): the machine's drift, which moves a whole run's seconds by a tenth here and
    more, touches both alike."""
    runs: tuple[tuple[list[str], list[float]], ...] = (([], [0.0]), ([], [0.0]))
    for index, raw in enumerate(bodies):
        for at in (0, 1) if index % 2 == 0 else (1, 0):
            started = time.perf_counter()
            runs[at][0].append((mine, peer)[at](raw))
            runs[at][1][0] += time.perf_counter() - started
    return (runs[0][0], runs[0][1][0]), (runs[1][0], runs[1][1][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", type=Path, help="a folder of NAME/source.html + NAME/expected.html")
    parser.add_argument("--worst", type=int, default=0, help="list the N pages where evidencekit scores lowest")
    parser.add_argument("--page", help="print evidencekit's text and the reference for one page")
    parser.add_argument("--ours-only", action="store_true", help="skip the peers (faster while developing)")
    parser.add_argument("--peer", default="trafilatura", help="the peer setting --worst compares with")
    parser.add_argument("--save", type=Path, help="write evidencekit's per-page F1 to this JSON file")
    parser.add_argument("--compare", type=Path, help="list the pages whose F1 changed since a --save")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    pages = sorted(p for p in args.pages.iterdir() if (p / "source.html").exists() and _reference(p).exists())
    if args.page:
        page = args.pages / args.page
        print(ours((page / "source.html").read_bytes()))
        print("\n======== reference ========\n")
        print(reference_text(_reference(page)))
        return
    data = [(p.name, (p / "source.html").read_bytes(), tokens(reference_text(_reference(p)))) for p in pages]
    extractors: dict[str, Callable[[bytes], str]] = {"evidencekit": ours}
    if not args.ours_only:
        extractors |= {
            "trafilatura": trafilatura_with(),
            "trafilatura precision": trafilatura_with(favor_precision=True),
            "trafilatura recall": trafilatura_with(favor_recall=True),
        }
    per_page: dict[str, list[tuple[float, float, float, float]]] = {}
    print(f"{len(data)} pages from {args.pages}")
    print(f"{'extractor':<24} {'P':>6} {'R':>6} {'F1':>6} {'4-gram F1':>10} {'seconds':>8}")
    bodies = [raw for _, raw, _ in data]
    paired: dict[str, tuple[list[str], float]] = {}
    if not args.ours_only:
        paired["evidencekit"], paired["trafilatura"] = paired_runs(bodies, ours, extractors["trafilatura"])
    for name, extract in extractors.items():
        rows = []
        if name in paired:
            outputs, seconds = paired[name]
        else:
            started = time.perf_counter()
            outputs = [extract(raw) for raw in bodies]
            seconds = time.perf_counter() - started
        for (_, _, wanted), text in zip(data, outputs, strict=True):
            found = tokens(text)
            p, r, f = f1(Counter(found), Counter(wanted))
            rows.append((p, r, f, f1(shingles(found), shingles(wanted))[2]))
        per_page[name] = rows
        mean = [sum(column) / len(rows) for column in zip(*rows, strict=True)]
        print(f"{name:<24} {mean[0]:6.3f} {mean[1]:6.3f} {mean[2]:6.3f} {mean[3]:10.3f} {seconds:8.2f}")
    if paired:
        mine, theirs = (len(bodies) / paired[name][1] for name in ("evidencekit", "trafilatura"))
        print(f"speed, each page read by both in turn: evidencekit {mine:.1f} pages/s, trafilatura {theirs:.1f}: "
              f"{mine / theirs:.2f}x")
    scores = {name: row[2] for (name, _, _), row in zip(data, per_page["evidencekit"], strict=True)}
    if args.save:
        args.save.write_text(json.dumps(scores, indent=1))
    if args.compare:
        before = json.loads(args.compare.read_text())
        changed = sorted((scores[n] - before[n], n) for n in scores if n in before and abs(scores[n] - before[n]) > 0.005)
        for delta, name in changed:
            print(f"  {name:<40} {before[name]:5.2f} -> {scores[name]:5.2f}  ({delta:+.3f})")
    if args.worst:
        print(f"\nworst {args.worst} for evidencekit against {args.peer} (P R F1; {args.peer} F1)")
        peer_rows = per_page.get(args.peer)
        if peer_rows is not None:  # where trafilatura is furthest ahead
            ranked = sorted(range(len(data)), key=lambda i: per_page["evidencekit"][i][2] - peer_rows[i][2])
        else:
            ranked = sorted(range(len(data)), key=lambda i: per_page["evidencekit"][i][2])
        for i in ranked[: args.worst]:
            p, r, f, _ = per_page["evidencekit"][i]
            peer = per_page.get(args.peer, [(0, 0, 0, 0)] * len(data))[i][2]
            print(f"  {data[i][0]:<40} {p:5.2f} {r:5.2f} {f:5.2f}   {peer:5.2f}")


if __name__ == "__main__":
    main()
