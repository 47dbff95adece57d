"""The generated MCP tool descriptors match the published pages (read straight from the seeds)."""

from __future__ import annotations

import re

from evidencekit.server.evidence.page_import import json_objects
from evidencekit.server.generated.mcp_tools import TOOLS_BY_NAME
from tests.conftest import SEED_DE_GET_DOCUMENTS, SEED_DE_RETRIEVE, SEED_FR_STATUS, SEED_ZH_RETRIEVE


def published(page):  # annotations, input schema, output schema, as printed on the page
    annotations, input_schema, output_schema = json_objects(page.read_text())[:3]
    return annotations, input_schema, output_schema


def test_retrieve_and_status_descriptors_are_the_published_ones() -> None:
    for page, name in [(SEED_DE_RETRIEVE, "sosoapi_research_evidence_retrieve"),
                       (SEED_ZH_RETRIEVE, "sosoapi_research_evidence_retrieve"),
                       (SEED_FR_STATUS, "sosoapi_research_evidence_status")]:
        annotations, input_schema, output_schema = published(page)
        tool = TOOLS_BY_NAME[name]
        assert tool["annotations"] == annotations
        assert list(tool["annotations"]) == list(annotations)  # published order kept
        assert tool["inputSchema"] == input_schema
        assert tool["outputSchema"] == output_schema
        assert tool["profiles"] == ["full"]
        assert tool["description"].endswith("Requires agent:research.")


def test_status_is_read_only_and_retrieve_is_not() -> None:
    assert TOOLS_BY_NAME["sosoapi_research_evidence_status"]["annotations"]["readOnlyHint"] is True
    assert TOOLS_BY_NAME["sosoapi_research_evidence_retrieve"]["annotations"]["readOnlyHint"] is False


def test_get_documents_follows_its_page() -> None:
    text = SEED_DE_GET_DOCUMENTS.read_text()
    hints = dict(re.findall(r"(Destruktiver|Idempotenter|Lesezugriff|Open-World)[- ]Hinweis: (✅|❌)", text))
    expected = {"destructiveHint": hints["Destruktiver"] == "✅", "idempotentHint": hints["Idempotenter"] == "✅",
                "readOnlyHint": hints["Lesezugriff"] == "✅", "openWorldHint": hints["Open-World"] == "✅"}
    tool = TOOLS_BY_NAME["get_documents"]
    assert tool["annotations"] == expected
    names = tool["inputSchema"]["properties"]["names"]
    assert tool["inputSchema"]["required"] == ["names"]
    assert (names["minItems"], names["maxItems"]) == (1, 20)
    document = tool["outputSchema"]["properties"]["documents"]["items"]
    assert set(document["properties"]) == {"name", "uri", "content", "description", "title"}
    assert "documents/{uri_without_scheme}" in names["description"]
