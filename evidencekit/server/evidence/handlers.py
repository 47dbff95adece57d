"""The hand-written implementation of the generated `Handlers` interface (both surfaces use it).

The runtime has checked each call's input against the contract and the caller against the
operation's declared requirement (credential kind, capability, workspace role) before a handler
runs. The answers are JSON data (`<Prefix>OutputData`) read from the store: their states and kinds
are the database's strings, which no static type can vouch for; each answer is checked against
every published output variant before it is sent, or when the receipt settled (status_answer).
"""

from __future__ import annotations

import uuid
from typing import cast
from urllib.parse import urlsplit

from evidencekit.contracts import FieldError
from evidencekit.server.evidence.documents import NOT_FOUND, UnknownDocument, get_documents
from evidencekit.server.evidence.fetch.policy import egress_cause, unsafe_cause
from evidencekit.server.evidence.search_documents import (
    NOT_OURS_TOKEN,
    BadPageToken,
    search_documents,
)
from evidencekit.server.evidence.search_share import SearchShare, TooManySearches
from evidencekit.server.evidence.service import EvidenceService
from evidencekit.server.evidence.service import RateLimited as ServiceRateLimited
from evidencekit.server.evidence.settings import EvidenceSettings
from evidencekit.server.evidence.store.access import Principal
from evidencekit.server.evidence.store.receipts import MutationConflict
from evidencekit.server.generated.models import (
    GetDocumentsInput,
    GetDocumentsOutputData,
    RetrieveInput,
    RetrieveOutputData,
    SearchDocumentsInput,
    SearchDocumentsOutputData,
    StatusInput,
    StatusOutputData,
)
from evidencekit.server.runtime import (
    BadRequest,
    CheckedAnswer,
    Conflict,
    NotFound,
    RateLimited,
    RequestContext,
    Unauthorized,
    answer_data,
)


def fetchable(url: str) -> bool:
    """An http(s) URL with a host: anything else (another scheme, no host, unparsable) cannot become
    a fetch. What a fetchable URL may reach (public hosts, https) is the fetch guard's to judge, as a
    receipt that settles blocked/unsafe_url."""
    try:
        parts = urlsplit(url)
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:  # an unbalanced [ in the host
        return False


_EXPLAINED = ("unsafe_url", "egress_unavailable")  # the reasons a note explains (the result has no field for why)


def _explained_reason(answer: object) -> str | None:
    """The reason a retrieve or status answer settled with, when a note explains it (_EXPLAINED)."""
    if isinstance(answer, CheckedAnswer):
        if not any(f'"{reason}"'.encode() in answer.body for reason in _EXPLAINED):  # most answers: no parse
            return None
        answer = answer_data(answer)
    retrieval = answer.get("retrieval") if isinstance(answer, dict) else None
    result = retrieval.get("result") if isinstance(retrieval, dict) else None
    reason = result.get("reason") if isinstance(result, dict) else None
    return reason if reason in _EXPLAINED else None


BLANK_QUERY = ("The query holds only whitespace: there is no word to find, so nothing was searched. Give at least "
               "one word of the documents you are looking for.")


def principal_of(context: RequestContext) -> Principal:
    principal = context.principal
    if not isinstance(principal, Principal):
        raise Unauthorized("a valid bearer token is required")
    return principal


class EvidenceHandlers:
    def __init__(self, service: EvidenceService | None = None, settings: EvidenceSettings | None = None) -> None:
        """`settings`: where the app starts (create_app, `research-evidence mcp`); the defaults else."""
        settings = settings or EvidenceSettings()
        self.service = service or EvidenceService(settings.service)
        self.searches = SearchShare(settings.searches_per_credential)
        self.egress = settings.egress  # what the notes on an unsafe or unreachable URL say of it

    async def retrieve(self, payload: RetrieveInput, context: RequestContext) -> RetrieveOutputData:
        if not fetchable(payload.url):  # refused before a receipt exists: it would only ever settle blocked
            raise BadRequest("url must be an http(s) URL with a host", code="unsupported_url",
                             fields=[FieldError("$.url", "must be an http(s) URL with a host", "format")])
        language = payload.language if isinstance(payload.language, str) else None
        try:
            data = await self.service.retrieve(payload.workspace_id, payload.mutation_id, payload.url,
                                               payload.kind, language)
        except MutationConflict as conflict:
            raise Conflict(str(conflict), code="mutation_conflict") from None
        except ServiceRateLimited as limited:
            raise RateLimited(str(limited), retry_after=limited.retry_after) from None
        await self._explain(context, data, payload.workspace_id, payload.mutation_id)
        return cast(RetrieveOutputData, data)

    async def _explain(self, context: RequestContext, answer: object, workspace_id: uuid.UUID,
                       mutation_id: uuid.UUID) -> None:
        """Why the receipt's URL was not read, when the result's reason does not say it all: a note
        (MCP text after the JSON, a REST X-Note header)."""
        reason = _explained_reason(answer)
        if reason is None:
            return
        found = await self.service.receipt_failure(workspace_id, mutation_id)
        if found is None:
            return
        url, failure = found
        policy = self.egress
        note = unsafe_cause(url, policy) if reason == "unsafe_url" else egress_cause(url, failure, policy)
        if note is not None:
            context.notes.append(note)

    async def status(self, payload: StatusInput, context: RequestContext) -> StatusOutputData | CheckedAnswer:
        answer = await self.service.status(payload.workspace_id, payload.mutation_id)
        await self._explain(context, answer, payload.workspace_id, payload.mutation_id)
        if isinstance(answer, CheckedAnswer):
            return answer
        if answer.get("retrieval") is None:
            mutation = await self.service.mutation_of_receipt(payload.workspace_id, payload.mutation_id)
            if mutation is not None:
                ask = "call sosoapi_research_evidence_status" if context.surface == "mcp" else "ask for its status"
                context.notes.append(
                    f"{payload.mutation_id} is the id of a receipt of this workspace (retrieval.id), not its "
                    f"mutation_id: {ask} with mutation_id {mutation} to read it.")
        return cast(StatusOutputData, answer)

    async def get_documents(self, payload: GetDocumentsInput, context: RequestContext) -> GetDocumentsOutputData:
        try:
            data = await get_documents(principal_of(context), [name.root for name in payload.names])
        except UnknownDocument as unknown:
            fields = [FieldError(f"$.names[{index}]", why, "not_found") for index, _, why in unknown.places]
            if unknown.malformed:  # a name that cannot be one: the request is wrong
                raise BadRequest(str(unknown), code="invalid_document_name", fields=fields) from None
            if not unknown.found:
                raise NotFound(str(unknown), code="unknown_document", fields=fields) from None
            # the documents found, and the names that found none in a note (the contract's answer
            # has no place for them): MCP text after the JSON, an X-Note header over REST
            context.notes.append(f"Not returned: {'; '.join(unknown.names)}: {NOT_FOUND}. The documents of the "
                                 "other names are returned, in request order; search_documents answers the names "
                                 "of stored documents (parent).")
            return cast(GetDocumentsOutputData, {"documents": unknown.found})
        return cast(GetDocumentsOutputData, data)

    async def search_documents(self, payload: SearchDocumentsInput,
                               context: RequestContext) -> SearchDocumentsOutputData:
        principal = principal_of(context)
        token = payload.page_token if isinstance(payload.page_token, str) else None  # MISSING: absent
        if not payload.query.strip():
            if token is not None:  # no page token is ever issued for a blank query: refused as any unknown one
                raise _unknown_page_token(BadPageToken(NOT_OURS_TOKEN))
            # Valid under the contract (minLength counts spaces), so answered as one (no result) rather
            # than refused (a valid input refused fails conformance checks); the note says why.
            context.notes.append(BLANK_QUERY)
            return cast(SearchDocumentsOutputData, {"results": []})
        try:
            async with self.searches.turn(principal.token_id):
                data = await search_documents(principal, payload.query, payload.page_size, token)
        except TooManySearches as busy:
            raise RateLimited(str(busy), retry_after=1, code="too_many_searches") from None
        except BadPageToken as bad:
            raise _unknown_page_token(bad) from None
        return cast(SearchDocumentsOutputData, data)


def _unknown_page_token(bad: BadPageToken) -> NotFound:
    """A well-formed value that names no page this service issued: not found, as a name would be."""
    return NotFound(str(bad), code="unknown_page_token", fields=[FieldError("$.page_token", str(bad), "not_found")])
