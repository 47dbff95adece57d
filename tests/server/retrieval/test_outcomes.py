from __future__ import annotations

from evidencekit.contracts._loader import load_operation
from evidencekit.server.evidence.retrieval.outcomes import OUTCOMES, markdown_table
from tests.support import CONTRACTS_DIR
from tests.support import REPO as PROJECT_ROOT

RESULT = load_operation(CONTRACTS_DIR / "sosoapi_research_evidence_retrieve").variants["mcp"].output_schema[
    "properties"]["retrieval"]["properties"]["result"]["anyOf"][0]["properties"]


def test_the_docs_show_the_table_the_code_uses() -> None:
    assert markdown_table() in (PROJECT_ROOT / "docs" / "result-mapping.md").read_text()


def test_every_row_is_a_contract_status_and_reason() -> None:
    statuses = set(RESULT["status"]["enum"])
    reasons = set(RESULT["reason"]["anyOf"][0]["enum"])
    assert {o.status for o in OUTCOMES} <= statuses
    assert {o.reason for o in OUTCOMES} - {None} <= reasons
    assert len({(o.status, o.reason) for o in OUTCOMES}) == len(OUTCOMES)
