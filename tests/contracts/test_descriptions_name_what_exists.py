"""Every tool, field or value a tool's description names exists: an agent told to use a tool or a
field that this server does not have cannot follow the guidance (get_documents once named
answer_query's references field, a tool of another vendor)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from evidencekit.server.evidence.mcp_server import INSTRUCTIONS
from evidencekit.server.generated.mcp_tools import TOOLS_BY_NAME

IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")  # snake_case: how tools and fields are named
# not things to call: a word of the format names are written in, an error code a refusal carries
OTHER_WORDS = {"uri_without_scheme", "not_a_member"}


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def existing() -> set[str]:
    names = set(TOOLS_BY_NAME) | OTHER_WORDS
    for tool in TOOLS_BY_NAME.values():
        for key, value in walk(tool):
            if key == "properties" and isinstance(value, dict):
                names |= set(value)
            if key == "enum" and isinstance(value, list):
                names |= {str(item) for item in value}
    return names


def described() -> Iterator[tuple[str, str]]:
    for name, tool in TOOLS_BY_NAME.items():
        yield name, tool.get("description", "")
        for key, value in walk(tool):
            if key == "description" and isinstance(value, str):
                yield name, value
    yield "instructions", INSTRUCTIONS


def test_descriptions_name_only_tools_and_fields_that_exist() -> None:
    known = existing()
    unknown = {(where, word) for where, text in described() for word in IDENTIFIER.findall(text) if word not in known}
    assert unknown == set()


def test_get_documents_points_to_the_tool_that_answers_names() -> None:
    description = TOOLS_BY_NAME["get_documents"]["description"]
    names = TOOLS_BY_NAME["get_documents"]["inputSchema"]["properties"]["names"]["description"]
    assert "search_documents" in description and "search_documents" in names
    assert "google" not in names and "answer_query" not in description + names
