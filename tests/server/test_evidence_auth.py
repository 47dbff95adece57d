"""The service's role check fails closed: a payload that names no workspace holds no role."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from evidencekit.server.evidence.auth import EvidenceAuth
from evidencekit.server.evidence.store.access import Principal
from evidencekit.server.generated.models import GetDocumentsInput
from evidencekit.server.runtime._errors import Forbidden

pytestmark = pytest.mark.anyio
CALLER = Principal(uuid.uuid4(), uuid.uuid4(), "personal_access_token", frozenset({"agent:research"}))


@pytest.mark.parametrize("workspace_id", [None, "3f1c0a44-0000-4000-8000-000000000000", 7])
async def test_a_payload_without_a_uuid_workspace_is_refused(workspace_id: object) -> None:
    with pytest.raises(Forbidden) as refused:
        await EvidenceAuth().check_role(CALLER, "viewer", SimpleNamespace(workspace_id=workspace_id))
    assert refused.value.code == "no_workspace"


async def test_get_documents_is_scoped_by_its_own_query() -> None:
    payload = GetDocumentsInput.model_validate({"names": ["documents/example.com/a"]})
    assert await EvidenceAuth().check_role(CALLER, "viewer", payload) is None
