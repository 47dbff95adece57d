"""The service's `Auth` for the toolkit's runtime: its own tokens and OAuth JWTs authenticate,
workspace membership decides roles.

The runtime checks each operation's declared credential kinds and capability itself; a role is
the service's to check, in the workspace the payload names (`workspace_id`). An operation without
a workspace (get_documents, search_documents) reads only what the caller's memberships reach, in its own
query.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from evidencekit.server.evidence.oauth import OAuthSettings, OAuthVerifier
from evidencekit.server.evidence.store.access import (
    Principal,
    authenticate_bearer,
    cached_role,
    role_in,
    role_refusal,
    workspaces_of,
    workspaces_text,
)
from evidencekit.server.evidence.store.outage import is_store_outage
from evidencekit.server.generated.models import GetDocumentsInput, SearchDocumentsInput
from evidencekit.server.runtime import Forbidden, ServiceHooks

if TYPE_CHECKING:
    from evidencekit.server.evidence.settings import EvidenceSettings

METADATA_PATH = "/.well-known/oauth-protected-resource"
STORE_OUTAGE = "the database is unavailable; retry later (every operation is safe to repeat)"


class EvidenceAuth:
    """`oauth`: the OAuth settings (settings.EvidenceSettings.oauth), None when OAuth is off."""

    def __init__(self, oauth: OAuthSettings | None = None) -> None:
        self.oauth = oauth
        self.verifier = OAuthVerifier(oauth) if oauth is not None else None

    async def authenticate(self, credential: str) -> Principal | None:
        return await authenticate_bearer(credential, self.verifier)

    async def check_role(self, principal: Any, minimum_role: str, payload: Any) -> None:
        workspace_id = getattr(payload, "workspace_id", None)
        if not isinstance(workspace_id, uuid.UUID):
            if isinstance(payload, GetDocumentsInput | SearchDocumentsInput):  # each reads only what the
                # caller's memberships reach, in its own query
                return
            raise Forbidden(f"this operation names no workspace to hold the {minimum_role} role in",
                            code="no_workspace")  # fails closed: a contract change must not open it
        role = cached_role(principal, workspace_id) or await role_in(principal, workspace_id)
        denied = role_refusal(role, minimum_role)
        if denied is not None and denied.code == "not_a_member":  # say which ones to use instead
            mine = workspaces_text(await workspaces_of(principal.user_id))
            raise Forbidden(f"{denied.message}; {mine}", code=denied.code)
        if denied is not None:
            raise Forbidden(denied.message, code=denied.code)

    def challenge(self, base_url: str) -> str:
        """With OAuth configured, the 401 names the protected resource metadata (RFC 9728): how a
        remote MCP client finds the authorization server. Its URL comes from the configured audience:
        built from the request's Host, a forged Host would send clients elsewhere."""
        return "Bearer" if self.oauth is None else f'Bearer resource_metadata="{self.oauth.metadata_url}"'


def evidence_hooks(settings: EvidenceSettings | None = None) -> ServiceHooks:
    """The service's hooks; `settings` (the OAuth configuration) from where the app starts."""
    return ServiceHooks(auth=EvidenceAuth(settings.oauth if settings is not None else None), is_outage=is_store_outage,
                        outage_message=STORE_OUTAGE, outage_log="database unavailable")
