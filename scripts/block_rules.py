"""Measure rules for the block judge (evidencekit/server/evidence/parse/blocks.py) on the development sets.

The sets are the ones docs/benchmarks.md scores ("Main-text quality"), laid out by
scripts/devsets.py (CleanEval dev and final, CleanPortalEval, Dragnet, Google News, newspaper)
plus Mozilla Readability's test pages (test/test-pages); all public, none shipped here:

    .venv/bin/python scripts/devsets.py --merged /tmp/merged --newspaper /tmp/newspaper --out /tmp/devsets
    ln -s /tmp/readability/test/test-pages /tmp/devsets/readability
    .venv/bin/python scripts/block_rules.py dump /tmp/devsets --out /tmp/blocks.pickle
    .venv/bin/python scripts/block_rules.py rules /tmp/blocks.pickle
    .venv/bin/python scripts/block_rules.py model /tmp/blocks.pickle

`dump` runs the extractor on every page as parse_html does (without the judge) and keeps, for each
block it would look at, the features of FEATURES and the block's words, with the page's words and
the reference's. `rules` prints, for each set, the mean token F1 of the pages with the blocks each
hand-set rule of HAND_RULES leaves out taken out of their text, against the F1 without (a quick
stand-in for scripts/eval_extract.py, which has the last word). `model` tries a learned judge
instead: a logistic regression over all the features (weighted by the block's words, L2, Newton
steps: deterministic), a block labelled "leave out" when under half of its word 3-grams are in the
reference, its threshold the one with the best F1 on the training sets; it prints each set's F1
with the weights fitted on the other six (cross-validation by set).
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval_extract import _TOKEN, _reference, f1, reference_text, tokens  # noqa: E402

from evidencekit.server.evidence.parse import blocks  # noqa: E402
from evidencekit.server.evidence.parse.boilerplate import class_weight  # noqa: E402
from evidencekit.server.evidence.parse.content import Measure, prune_furniture  # noqa: E402
from evidencekit.server.evidence.parse.encoding import decode_html  # noqa: E402
from evidencekit.server.evidence.parse.html_extract import find_content  # noqa: E402
from evidencekit.server.evidence.parse.html_tree import Element, limit_nodes, load_tree  # noqa: E402
from evidencekit.server.evidence.parse.json_ld import declared_body  # noqa: E402
from evidencekit.server.evidence.parse.render import render  # noqa: E402

_SHORT_CONTENT = 150  # html_extract's: below it the whole page is rendered, and nothing is judged
_L2 = 1.0
_STEPS = 6
_THRESHOLDS = [t / 100 for t in range(50, 100, 2)]

Page = dict[str, Any]


_PROSE, _PROSE_LINKS = 150, 0.3  # a paragraph of prose: this long, with under this share of link text
_PHOTOS = ("img", "picture", "video", "figure")
_CONTROLS = ("button", "input", "select", "form", "textarea")
_SENTENCE_ENDS = frozenset(".!?。！？…\"'”’»)")
_JUDGED_MAX = 600  # longer blocks are the article's own text: not looked at

FEATURES = (
    "length",  # log of the characters
    "short",  # under 80 characters
    "links",  # share of link text
    "sentence",  # ends as a sentence does
    "commas",  # commas, up to 3, over 3
    "digits",  # share of digits among the characters
    "heading",
    "list",
    "paragraph",  # a <p>
    "in_flow",  # the parent is _flow: the one that holds most of the content's text
    "prose_before",  # a paragraph of prose stands before it in the content
    "prose_after",
    "prose_around",  # prose right before and right after (a block inside the article's run)
    "photo",  # a photo in it, just before it, or in its small box (blocks.box)
    "controls",  # a button, input or form in it or its small box
    "linked_heading",  # a heading that links away in it or its small box
    "time",  # a <time> in it
    "named_down",  # class or id of it or a box up to the content node named like furniture
    "named_up",  # ...or like content
    "alike",  # its box has two siblings or more of its tag and class (a card among cards)
    "upper",  # written in capitals ("ADVERTISEMENT", "RELATED")
    "trailing_aside",  # after the last prose paragraph, and out of the flow
    "leading_aside",  # before the first prose paragraph, and out of the flow
    "photo_aside",  # by a photo, and out of the flow
    "fields",  # a field a reader fills in, or a choice, in its small box (blocks.has_field)
    "half",  # its parent holds half of the content's text or more (a short page's text)
)


def features(found: Measure, chosen: list[Element], units: list[Element]) -> list[tuple[Element, list[float]]]:
    """The blocks short enough to look at, each with its features (FEATURES, in order)."""
    info = found.info
    sizes = [info[b][0] for b in units]
    prose = [size >= _PROSE and info[b][1] < _PROSE_LINKS * size for b, size in zip(units, sizes, strict=True)]
    run = _flow(found, units)
    half = sum(info[node][0] for node in chosen) / 2
    first_prose = prose.index(True) if any(prose) else len(units)
    last_prose = len(prose) - 1 - prose[::-1].index(True) if any(prose) else -1
    tops = set(chosen)
    shapes: dict[Element, dict[tuple[str, str], int]] = {}
    out = []
    for index, block in enumerate(units):
        size = sizes[index]
        if size > _JUDGED_MAX or block.tag == "h1":
            continue
        text = " ".join("".join(block.itertext()).split())
        box = blocks.box(found, block, tops)
        down, up = _naming(block, tops)
        in_flow = block.getparent() is run
        photo = blocks.has(box, _PHOTOS) or _photo_before(block)
        letters = [c for c in text if c.isalpha()]
        out.append((block, [
            math.log1p(size),
            1.0 if size < 80 else 0.0,
            info[block][1] / size,
            1.0 if text and text[-1] in _SENTENCE_ENDS else 0.0,
            min(text.count(","), 3) / 3,
            sum(c.isdigit() for c in text) / max(1, len(text)),
            1.0 if block.tag in blocks.HEADINGS else 0.0,
            1.0 if block.tag in ("ul", "ol", "dl", "dir") else 0.0,
            1.0 if block.tag == "p" else 0.0,
            1.0 if in_flow else 0.0,
            1.0 if first_prose < index else 0.0,
            1.0 if last_prose > index else 0.0,
            1.0 if 0 < index < len(units) - 1 and prose[index - 1] and prose[index + 1] else 0.0,
            1.0 if photo else 0.0,
            1.0 if blocks.has(box, _CONTROLS) else 0.0,
            1.0 if _linked_heading(found, box) else 0.0,
            1.0 if blocks.has(block, ("time",)) else 0.0,
            down,
            up,
            1.0 if _alike(box, shapes) else 0.0,
            1.0 if len(letters) >= 3 and sum(c.isupper() for c in letters) > 0.7 * len(letters) else 0.0,
            1.0 if last_prose < index and not in_flow else 0.0,
            1.0 if first_prose > index and not in_flow else 0.0,
            1.0 if photo and not in_flow else 0.0,
            1.0 if blocks.has_field(box) else 0.0,
            1.0 if info.get(block.getparent(), (0,))[0] >= half else 0.0,
        ]))
    return out


def _flow(found: Measure, blocks: list[Element]) -> Element | None:
    """The parent that holds most of the blocks' text: the run of the article's paragraphs."""
    held: dict[Element, int] = {}
    for block in blocks:
        parent = block.getparent()
        held[parent] = held.get(parent, 0) + found.info[block][0]
    return max(held, key=held.__getitem__) if held else None


def _alike(box: Element, shapes: dict[Element, dict[tuple[str, str], int]]) -> bool:
    name = box.get("class")
    parent = box.getparent()
    if not name or parent is None:
        return False
    counts = shapes.get(parent)
    if counts is None:
        counts = shapes[parent] = {}
        for child in parent:
            key = (child.tag, child.get("class"))
            counts[key] = counts.get(key, 0) + 1
    return counts.get((box.tag, name), 0) >= 3


def _photo_before(block: Element) -> bool:
    previous = block.getprevious()
    while previous is not None and previous.tag.__class__ is not str:
        previous = previous.getprevious()
    return previous is not None and (previous.tag in _PHOTOS or blocks.has(previous, _PHOTOS))


def _linked_heading(found: Measure, box: Element) -> bool:
    for heading in box.iter(*blocks.HEADINGS):
        measured = found.info.get(heading)
        if measured and measured[1] >= 0.8 * measured[0] > 0:
            return True
    return False


def _naming(block: Element, tops: set[Element]) -> tuple[float, float]:
    down = up = 0.0
    node = block
    for _ in range(6):
        if node is None:
            break
        for key in ("class", "id"):
            value = node.get(key)
            if value:
                weight = class_weight(value)
                if weight < 0:
                    down = 1.0
                elif weight > 0:
                    up = 1.0
        if node in tops:
            break
        node = node.getparent()
    return down, up


def dump_page(raw: bytes) -> tuple[str, list[tuple[list[float], list[str]]]] | None:
    """The page's text and its judged blocks (features, words), as parse_html reads it; None when
    parse_html would not render the chosen content (a short page, or the JSON-LD body instead)."""
    root = load_tree(decode_html(raw))
    declared = declared_body(root)
    limit_nodes(root, 50_000, prune=prune_furniture)
    found, chosen, leave_out = find_content(root)
    text, _ = render(found, chosen, leave_out=leave_out)
    if len(text) < _SHORT_CONTENT or (declared is not None and len(text) < 0.5 * len(declared)):
        return None
    judged = []
    for block, vector in features(found, chosen, blocks.units(found, chosen, leave_out)):
        words = tokens(render(found, [block], leave_out=leave_out)[0])
        if words:
            judged.append((vector, words))
    return text, judged


def dump(sets: Path, out: Path) -> None:
    pages: list[Page] = []
    for folder in sorted(p for p in sets.iterdir() if p.is_dir()):
        count = 0
        for page in sorted(p for p in folder.iterdir() if (p / "source.html").exists() and _reference(p).exists()):
            read = dump_page((page / "source.html").read_bytes())
            if read is None:
                continue
            text, judged = read
            reference = reference_text(_reference(page))
            gold = tokens(reference)  # cut as the scoring cuts it
            pages.append({"set": folder.name, "name": page.name, "words": tokens(text), "gold": gold, "blocks": judged,
                          "reference": _all_tokens(reference)})
            count += 1
        print(f"{folder.name}: {count} pages", flush=True)
    out.write_bytes(pickle.dumps(pages))


def _all_tokens(text: str) -> list[str]:
    """The reference's words, not cut: a block far down a long page is labelled by the whole of it."""
    return [t.lower() for t in _TOKEN.findall(text)]


def label(words: list[str], gold_grams: set[tuple[str, ...]]) -> int:
    """1 (leave out) when under half of the block's word 3-grams (its words, if fewer) are in the reference."""
    n = min(3, len(words))
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return 1 if sum(g in gold_grams for g in grams) < 0.5 * len(grams) else 0


def samples(pages: list[Page]) -> list[tuple[list[float], int, float]]:
    out = []
    for page in pages:
        gold = page["reference"]
        grams = {tuple(gold[i : i + n]) for n in (1, 2, 3) for i in range(len(gold) - n + 1)}
        for vector, words in page["blocks"]:
            out.append((vector, label(words, grams), float(len(words))))
    return out


def fit(data: list[tuple[list[float], int, float]]) -> tuple[float, list[float]]:
    """Weighted logistic regression by Newton steps from zero (deterministic); features scaled by
    their spread while fitting, the weights returned for the raw features."""
    width = len(data[0][0])
    means = [sum(v[j] * w for v, _, w in data) / sum(w for _, _, w in data) for j in range(width)]
    spreads = [
        math.sqrt(sum(w * (v[j] - means[j]) ** 2 for v, _, w in data) / sum(w for _, _, w in data)) or 1.0
        for j in range(width)
    ]
    rows = [([1.0] + [(v[j] - means[j]) / spreads[j] for j in range(width)], y, w) for v, y, w in data]
    size = width + 1
    beta = [0.0] * size
    total = sum(w for _, _, w in rows)
    for _ in range(_STEPS):
        gradient = [0.0] * size
        hessian = [[0.0] * size for _ in range(size)]
        for x, y, w in rows:
            z = sum(b * xi for b, xi in zip(beta, x, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            g = w * (p - y) / total
            h = w * p * (1 - p) / total
            for i in range(size):
                gradient[i] += g * x[i]
                hx = h * x[i]
                row = hessian[i]
                for j in range(i, size):
                    row[j] += hx * x[j]
        for i in range(size):
            for j in range(i):
                hessian[i][j] = hessian[j][i]
            if i:
                gradient[i] += _L2 * beta[i] / total
                hessian[i][i] += _L2 / total
        step = _solve(hessian, gradient)
        beta = [b - s for b, s in zip(beta, step, strict=True)]
    weights = [beta[j + 1] / spreads[j] for j in range(width)]
    bias = beta[0] - sum(weights[j] * means[j] for j in range(width))
    return bias, weights


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting."""
    n = len(vector)
    a = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            factor = a[r][col] / a[col][col]
            for c in range(col, n + 1):
                a[r][c] -= factor * a[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def probability(bias: float, weights: list[float], vector: list[float]) -> float:
    z = bias + sum(w * x for w, x in zip(weights, vector, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def mean_f1(pages: list[Page], odds: list[list[float]], threshold: float) -> float:
    """Mean token F1 over the pages with the blocks whose probability (odds: per page, per block)
    is over threshold taken out of each text."""
    total = 0.0
    for page, page_odds in zip(pages, odds, strict=True):
        found = Counter(page["words"])
        for (_, words), p in zip(page["blocks"], page_odds, strict=True):
            if p > threshold:
                found.subtract(words)
        total += f1(+found, page["gold_counts"])[2]
    return total / max(1, len(pages))


def page_odds(pages: list[Page], bias: float, weights: list[float]) -> list[list[float]]:
    return [[probability(bias, weights, vector) for vector, _ in page["blocks"]] for page in pages]


def best_threshold(pages: list[Page], bias: float, weights: list[float]) -> tuple[float, float]:
    odds = page_odds(pages, bias, weights)
    best = (1.0, mean_f1(pages, odds, 1.0))
    for threshold in _THRESHOLDS:
        score = mean_f1(pages, odds, threshold)
        if score > best[1] + 1e-9:
            best = (threshold, score)
    return best


def model(path: Path) -> None:
    pages: list[Page] = pickle.loads(path.read_bytes())
    for page in pages:
        page["gold_counts"] = Counter(page["gold"])
    names = sorted({page["set"] for page in pages})
    print(f"{'held-out set':<18} {'pages':>6} {'F1 without':>11} {'F1 judged':>10} {'threshold':>10}")
    for held_out in names:
        train_pages = [p for p in pages if p["set"] != held_out]
        test_pages = [p for p in pages if p["set"] == held_out]
        bias, weights = fit(samples(train_pages))
        threshold, _ = best_threshold(train_pages, bias, weights)
        odds = page_odds(test_pages, bias, weights)
        before, after = mean_f1(test_pages, odds, 1.0), mean_f1(test_pages, odds, threshold)
        print(f"{held_out:<18} {len(test_pages):>6} {before:11.4f} {after:10.4f} {threshold:10.2f}", flush=True)
    bias, weights = fit(samples(pages))
    threshold, score = best_threshold(pages, bias, weights)
    print(f"all sets: threshold {threshold:.2f}, F1 {score:.4f}")
    for name, weight in zip(FEATURES, weights, strict=True):
        print(f"  {name:<16} {weight:+.3f}")



# Hand-set rules over the same features, scored the same way (what a model must beat)
HAND_RULES = {
    # blocks.form_prompts' rule: a form's prompt
    "form prompt: a field in its small box, under 300, not a heading": lambda f: (
        f["fields"] and f["length"] < math.log1p(300) and not f["half"] and not f["heading"]
    ),
    "...the same, out of the flow instead": lambda f: (
        f["fields"] and f["length"] < math.log1p(300) and not f["in_flow"] and not f["heading"]
    ),
    # measured and left out: each costs a set more than it gains elsewhere
    "caption: by a photo, out of the flow, under 80 characters": lambda f: f["photo_aside"] and f["short"],
    "widget: a button or field in its small box, under 300": lambda f: f["controls"] and f["length"] < math.log1p(300),
    "teaser: a heading that links away in its box, out of the flow": lambda f: f["linked_heading"] and not f["in_flow"],
    "trailing, out of the flow, named like furniture": lambda f: f["trailing_aside"] and f["named_down"],
    "trailing, out of the flow, not a sentence": lambda f: f["trailing_aside"] and not f["sentence"],
    "leading, out of the flow, not a sentence": lambda f: f["leading_aside"] and not f["sentence"],
    "a card among cards, out of the flow": lambda f: f["alike"] and not f["in_flow"],
    "a <time> in a short line that is no sentence": lambda f: f["time"] and f["short"] and not f["sentence"],
    "capitals, short": lambda f: f["upper"] and f["short"],
}


def rules(path: Path) -> None:
    pages: list[Page] = pickle.loads(path.read_bytes())
    for page in pages:
        page["gold_counts"] = Counter(page["gold"])
    names = sorted({page["set"] for page in pages})
    by_set = {name: [p for p in pages if p["set"] == name] for name in names}
    print(f"{'rule':<64}" + "".join(f"{name[:12]:>13}" for name in names))
    base = {name: mean_f1(group, [[0.0] * len(p["blocks"]) for p in group], 0.5) for name, group in by_set.items()}
    print(f"{'(none)':<64}" + "".join(f"{base[name]:13.4f}" for name in names))
    for title, rule in HAND_RULES.items():
        row = []
        for name, group in by_set.items():
            odds = [[1.0 if rule(dict(zip(FEATURES, v, strict=True))) else 0.0 for v, _ in p["blocks"]] for p in group]
            row.append(mean_f1(group, odds, 0.5) - base[name])
        print(f"{title[:63]:<64}" + "".join(f"{d:+13.4f}" for d in row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump")
    dumping.add_argument("sets", type=Path, help="a folder of development sets (SET/NAME/source.html + reference)")
    dumping.add_argument("--out", type=Path, required=True)
    training = commands.add_parser("model", help="a learned judge, cross-validated by set")
    training.add_argument("blocks", type=Path, help="what dump wrote")
    ruling = commands.add_parser("rules", help="score each hand-set rule alone, by set")
    ruling.add_argument("blocks", type=Path, help="what dump wrote")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.command == "dump":
        dump(args.sets, args.out)
    elif args.command == "rules":
        rules(args.blocks)
    else:
        model(args.blocks)


if __name__ == "__main__":
    main()
