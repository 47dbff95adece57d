"""Take a published contract page (MCP tool page or REST operation page, any language) into contracts/.

The pages are rendered text: prose around pretty-printed or flattened JSON blocks. We find
every top-level JSON object, classify it by its keys, and read the few facts the pages state
in prose (tool name, REST path, profiles, capability, ...) with language-neutral patterns.
Importing writes the schemas and examples verbatim and merges the page's facts into the
operation's manifest; the lock is left alone so that `codegen check` shows the update until
it is reviewed (`codegen diff`) and accepted (`codegen lock`).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evidencekit.contracts._loader import MANIFEST_NAME, ContractError, check_rest_path, read_json

CREDENTIAL_KINDS = ("user_session", "delegated_oauth", "personal_access_token")
ROLES = ("viewer", "editor", "admin", "owner")
ANNOTATION_KEYS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

_LINE_OBJECT_START = re.compile(r"(?m)^\{")
_REST_LINE = re.compile(r"(?m)^(GET|POST|PUT|PATCH|DELETE) (/[\w/.-]+)\s*$")
_LINKED_REST = re.compile(r"(?m)^[}\-\s]*(/[\w/.-]+):\s*(agent:[a-z_]+)\s*·\s*(.+?)\s*$")
_TOOL_NAME = re.compile(r"\b(sosoapi_[a-z0-9_]+?)(?=[^a-z0-9_]|$|[A-Z])")
_PROFILES = re.compile(
    r"[:：]\s*((?:core|full)(?:\s*[,、]\s*(?:core|full))*)\s*·[^:：\n]*[:：]\s*"
    r"((?:stdio|http)(?:\s*[,、]\s*(?:stdio|http))*)"
)
_CONTRACT_HASH = re.compile(r"(\d{4}-\d{2}-\d{2})\s*·\s*(sha256:[0-9a-f]{16})")


class PageError(ContractError):
    """The page does not look like a contract page we can read."""


# The deepest JSON block a page may hold: published schemas nest a few levels; the schema checks,
# the differ and the writer recurse over what is taken, and must not meet Python's recursion limit
MAX_JSON_DEPTH = 100


def _depth(value: Any) -> int:
    """How deeply `value` nests (a scalar 0, `{}` 1), without recursing."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object that starts a line, in page order (works for flattened blocks too); a
    PageError when one nests deeper than MAX_JSON_DEPTH."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    consumed = 0
    for match in _LINE_OBJECT_START.finditer(text):
        if match.start() < consumed:
            continue
        try:
            value, end = decoder.raw_decode(text, match.start())
            too_deep = _depth(value) > MAX_JSON_DEPTH
        except json.JSONDecodeError:
            continue
        except RecursionError:  # the decoder recurses per level: far too deep for any contract
            too_deep = True
        if too_deep:
            line = text.count("\n", 0, match.start()) + 1
            raise PageError("<page>", f"the JSON block at line {line} nests deeper than {MAX_JSON_DEPTH} levels: "
                                      "no published contract does")
        if isinstance(value, dict):
            found.append(value)
            consumed = end
    return found


def detect_language(text: str) -> str:
    if re.search(r"[\u0590-\u05ff]", text):
        return "he"
    if re.search(r"[\u4e00-\u9fff]", text):
        return "zh"
    lowered = text.lower()
    scores = {
        "de": sum(lowered.count(w) for w in ("erforderlich", "eingabe", " und ", " der ")),
        "fr": sum(lowered.count(w) for w in ("requis", "champs", " et ", " le ")),
        "en": sum(lowered.count(w) for w in ("required", "input", " and ", " the ")),
    }
    return max(scores, key=lambda lang: scores[lang])


def _is_schema(obj: dict[str, Any]) -> bool:
    return "$schema" in obj or (obj.get("type") == "object" and "properties" in obj)


def _csv(value: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,、]", value) if part.strip()]


@dataclass
class PageFacts:
    """What one page publishes, before it is merged into a manifest."""

    language: str
    surface: str  # "mcp" or "rest"
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    tool_name: str | None = None
    rest_method: str | None = None
    rest_path: str | None = None
    annotations: dict[str, bool] | None = None
    profiles: list[str] = field(default_factory=list)
    transports: list[str] = field(default_factory=list)
    capability: str | None = None
    summary: str | None = None  # the localized line beside the linked REST path
    credential_kinds: list[str] = field(default_factory=list)
    minimum_role: str | None = None
    completion_rule: str | None = None
    published_hash: str | None = None
    published_hash_checked: str | None = None
    example_input: dict[str, Any] | None = None
    example_output: dict[str, Any] | None = None


def read_page(text: str) -> PageFacts:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 4:
        raise PageError("<page>", "too short to be a contract page")
    objects = json_objects(text)
    schemas = [obj for obj in objects if _is_schema(obj)]
    if len(schemas) < 2:
        raise PageError("<page>", f"expected an input and an output JSON Schema, found {len(schemas)}")
    rest_line = _REST_LINE.search(text)
    surface = "rest" if rest_line else "mcp"
    facts = PageFacts(
        language=detect_language(text),
        surface=surface,
        title=lines[1],
        description="",
        input_schema=schemas[0],
        output_schema=schemas[1],
    )
    if surface == "mcp":
        tool = _TOOL_NAME.match(lines[2])
        if tool is None:
            raise PageError("<page>", f"no tool name on the third line: {lines[2][:80]!r}")
        facts.tool_name = tool.group(1)
        glued = lines[2][tool.end():].strip()  # some renderings glue the description to the name
        facts.description = glued or lines[3]
    else:
        assert rest_line is not None
        facts.rest_method, facts.rest_path = rest_line.group(1), rest_line.group(2)
        facts.description = lines[2]
        tool = re.search(r"(?m)^MCP:\s*(sosoapi_[a-z0-9_]+)\s*$", text)
        facts.tool_name = tool.group(1) if tool else None
    _read_prose_facts(text, facts)
    _read_examples(objects, schemas, facts)
    return facts


def _read_prose_facts(text: str, facts: PageFacts) -> None:
    for obj in json_objects(text):
        if set(obj) == ANNOTATION_KEYS:
            facts.annotations = {key: bool(value) for key, value in obj.items()}
            break
    profiles = _PROFILES.search(text)
    if profiles:
        facts.profiles, facts.transports = _csv(profiles.group(1)), _csv(profiles.group(2))
    linked = _LINKED_REST.search(text)
    if linked:
        facts.rest_path = facts.rest_path or linked.group(1)
        facts.capability, facts.summary = linked.group(2), linked.group(3)
    published = _CONTRACT_HASH.search(text)
    if published:
        facts.published_hash_checked, facts.published_hash = published.group(1), published.group(2)
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if not sep:
            continue
        kinds = [kind for kind in CREDENTIAL_KINDS if kind in value]
        if len(kinds) >= 2 and not facts.credential_kinds:
            facts.credential_kinds = kinds
        elif facts.capability is None and re.fullmatch(r"\s*agent:[a-z_]+\s*", value):
            facts.capability = value.strip()
        elif facts.minimum_role is None and value.strip() in ROLES:
            facts.minimum_role = value.strip()
        elif facts.completion_rule is None and facts.surface == "rest" and value.strip().startswith("durable"):
            facts.completion_rule = value.strip().rstrip(".")


def _read_examples(objects: list[dict[str, Any]], schemas: list[dict[str, Any]], facts: PageFacts) -> None:
    rest = [obj for obj in objects if not _is_schema(obj) and set(obj) != ANNOTATION_KEYS]
    for obj in rest:
        if facts.surface == "mcp" and set(obj) == {"name", "arguments"} and facts.example_input is None or facts.surface == "rest" and facts.example_input is None and set(obj) <= set(
            schemas[0].get("properties", {})
        ):
            facts.example_input = obj
        elif facts.example_input is not None and facts.example_output is None:
            facts.example_output = obj


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _write(path: Path, value: Any, written: list[Path]) -> None:
    text = _dump(value)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)


def _changes_files(folder: Path, facts: PageFacts) -> bool:
    """Whether importing `facts` would rewrite any schema or example file in `folder`."""
    variant = facts.surface
    files = {f"{variant}.input.schema.json": facts.input_schema, f"{variant}.output.schema.json": facts.output_schema,
             f"examples/{variant}.input.json": facts.example_input,
             f"examples/{variant}.output.json": facts.example_output}
    for name, value in files.items():
        path = folder / name
        if value is not None and (not path.exists() or path.read_text(encoding="utf-8") != _dump(value)):
            return True
    return False


def find_operation(facts: PageFacts, root: Path) -> str:
    """The operation a page belongs to: its tool name, or the operation whose REST path it names."""
    if facts.surface == "mcp" and facts.tool_name:
        return facts.tool_name
    for manifest_path in sorted(root.glob(f"*/{MANIFEST_NAME}")):
        manifest = _manifest(manifest_path)
        rest = manifest.get("rest")
        if isinstance(rest, dict) and rest.get("path") == facts.rest_path:
            return str(manifest["operation"])
    if facts.tool_name:
        return facts.tool_name
    raise PageError("<page>", f"no operation found for REST path {facts.rest_path!r}")


def merge_manifest(manifest: dict[str, Any], facts: PageFacts, source: str) -> dict[str, Any]:
    """Fold one page's facts into the manifest; keys the pages do not publish are kept as they are."""
    variant = facts.surface
    manifest.setdefault("title", {})[facts.language] = facts.title
    manifest.setdefault("description", {})[facts.language] = facts.description
    variants = manifest.setdefault("variants", {})
    entry = variants.setdefault(variant, {})
    entry.update(
        {"input": f"{variant}.input.schema.json", "output": f"{variant}.output.schema.json"}
    )
    sources = set(filter(None, entry.get("source", "").split(", "))) | {source}
    entry["source"] = ", ".join(sorted(sources))
    manifest.setdefault("model_variant", variant)
    if variant == "mcp":
        mcp = manifest.setdefault("mcp", {})
        mcp.update({"tool_name": facts.tool_name, "variant": "mcp"})
        if facts.annotations is not None:
            mcp["annotations"] = facts.annotations
        if facts.profiles:
            mcp["profiles"], mcp["transports"] = facts.profiles, facts.transports
        if facts.summary:
            mcp.setdefault("summary", {})[facts.language] = facts.summary
    rest = manifest.get("rest") or {}
    if facts.rest_path:
        rest["path"] = facts.rest_path
        rest.setdefault("method", "POST")
        rest.setdefault("variant", variant)
    if variant == "rest":
        rest.update({"method": facts.rest_method, "variant": "rest", "success_statuses": [200]})
        if facts.published_hash:
            rest["published_contract_hash"] = facts.published_hash
            rest["published_contract_checked"] = facts.published_hash_checked
    if rest:
        manifest["rest"] = rest
    auth = manifest.setdefault("auth", {})
    if facts.capability:
        auth["capability"] = facts.capability
    if facts.credential_kinds:
        auth["credential_kinds"] = facts.credential_kinds
    if facts.minimum_role:
        auth["minimum_role"] = facts.minimum_role
    if facts.completion_rule:
        manifest["completion_rule"] = facts.completion_rule
    examples = manifest.setdefault("examples", {})
    if facts.example_input is not None:
        examples[variant] = {
            "input": f"examples/{variant}.input.json",
            "output": f"examples/{variant}.output.json",
        }
    return manifest


@dataclass
class ImportReport:
    operation: str
    surface: str
    language: str
    written: list[Path]


def _manifest(path: Path) -> dict[str, Any]:
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise ContractError(path, f"manifest must be a JSON object, not {type(manifest).__name__}")
    return manifest


def _page_text(page: Path) -> str:
    """The page's text; a PageError naming it when it is not a readable UTF-8 file."""
    try:
        return page.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PageError(page, "file not found") from None
    except IsADirectoryError:
        raise PageError(page, "is a directory, not a page") from None
    except UnicodeDecodeError as exc:
        raise PageError(page, f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except OSError as exc:
        raise PageError(page, f"cannot be read: {exc.strerror or exc}") from None


def read_page_file(page: Path, root: Path) -> tuple[PageFacts, str]:
    """The page's facts and the operation they belong to; errors name the page."""
    try:
        facts = read_page(_page_text(page))
        if facts.rest_path is not None:
            check_rest_path(facts.rest_path, "<page>")
        operation = find_operation(facts, root)
    except ContractError as exc:  # a PageError, or a reserved path: "<page>" is this page
        if exc.path != "<page>":
            raise
        raise PageError(page, exc.message) from None
    manifest = root / operation / MANIFEST_NAME
    if manifest.exists():  # the one it merges into: read now, so that a bad one stops every page
        _manifest(manifest)
    return facts, operation


def _without_sources(manifest: dict[str, Any]) -> dict[str, Any]:
    variants = {name: {k: v for k, v in entry.items() if k != "source"}
                for name, entry in manifest.get("variants", {}).items()}
    return {**manifest, "variants": variants}


def import_page(page: Path, root: Path) -> ImportReport:
    """Import one published page into the contracts folder `root`.

    A page that changes nothing else is not recorded as a new source either: the manifest is part
    of the contract's hash, and the same contract read from a differently named copy of a page
    must keep its hash."""
    facts, operation = read_page_file(page, root)
    folder = root / operation
    manifest_path = folder / MANIFEST_NAME
    manifest: dict[str, Any] = _manifest(manifest_path) if manifest_path.exists() else {
        "operation": operation,
        "python_name": operation.removeprefix("sosoapi_research_evidence_"),
    }
    before = copy.deepcopy(manifest) if manifest_path.exists() else None
    merge_manifest(manifest, facts, page.name)
    if before is not None and _without_sources(manifest) == _without_sources(before) and not _changes_files(
            folder, facts):
        manifest = before
    written: list[Path] = []
    variant = facts.surface
    _write(folder / f"{variant}.input.schema.json", facts.input_schema, written)
    _write(folder / f"{variant}.output.schema.json", facts.output_schema, written)
    if facts.example_input is not None:
        _write(folder / "examples" / f"{variant}.input.json", facts.example_input, written)
    if facts.example_output is not None:
        _write(folder / "examples" / f"{variant}.output.json", facts.example_output, written)
    _write(manifest_path, manifest, written)
    return ImportReport(operation, variant, facts.language, written)


def import_pages(pages: list[Path], contracts: Path) -> int:
    """Import every page (each is read before any is written) and print what changed."""
    from evidencekit.codegen._lock import lock_problems
    from evidencekit.codegen._schema_diff import diff_schemas, format_changes
    from evidencekit.contracts._loader import load_operations

    read = [(page, *read_page_file(page, contracts)) for page in pages]  # every page reads, or none is written
    for page, facts, operation in read:
        folder = contracts / operation
        before = {}
        for direction in ("input", "output"):
            path = folder / f"{facts.surface}.{direction}.schema.json"
            before[direction] = read_json(path) if path.exists() else None
        report = import_page(page, contracts)
        print(f"{page}: {report.operation} ({report.surface}, {report.language})",
              *(f"  wrote {p}" for p in report.written), sep="\n")
        for direction, old in before.items():
            if old is None:
                continue
            new = read_json(folder / f"{facts.surface}.{direction}.schema.json")
            changes = diff_schemas(old, new, "request" if direction == "input" else "response")
            if changes:
                print(f"  {direction} changes:", format_changes(changes), sep="\n")
    try:
        problems = lock_problems(load_operations(contracts), contracts)
    except ContractError as exc:  # e.g. a new operation whose manifest still lacks its English title
        print(f"imported; before `evidencekit codegen lock`, fix: {exc}")
        return 0
    if problems:
        print("the lock no longer matches; after review run `evidencekit codegen lock` and "
              "`evidencekit codegen generate`:", *(f"  {p}" for p in problems), sep="\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="research-evidence import-pages", description=(
        "take published contract pages (one vendor's MCP and REST pages) into the contracts folder and "
        "show what changed"))
    parser.add_argument("pages", nargs="+", type=Path, help="the published pages, as text files")
    parser.add_argument("--contracts", type=Path, default=None,
                        help="contracts folder (default: the one pyproject.toml configures)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """`research-evidence import-pages PAGE...` (scripts/import_contract): the service's page importer."""
    import sys

    from evidencekit.codegen._config import ConfigError, load_config

    args = build_parser().parse_args(argv)
    try:
        contracts = args.contracts or load_config().contracts
    except ConfigError:  # this command has no --project: say what it takes
        print("error: no pyproject.toml with [tool.evidencekit.codegen] here or above: run from the project's "
              "root, or pass --contracts DIR", file=sys.stderr)
        return 2
    try:
        return import_pages(args.pages, contracts)
    except (ContractError, ValueError) as exc:  # every page is read (and refused) before any is written
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a contracts folder that is not there or not writable
        print(f"error: {_one_line(f'{exc.filename or exc}: {exc.strerror or exc}')}", file=sys.stderr)
        return 2


def _one_line(text: str) -> str:
    """`text` on one line: a page named with a line break in it cannot add a line to the error."""
    return text.replace("\r", "\\r").replace("\n", "\\n")
