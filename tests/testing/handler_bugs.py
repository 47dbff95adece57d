"""The service's generated server over handlers with two bugs planted, and two refusals that are
not bugs, for the gate's tests of handler bugs on every surface.

- search_documents raises on a query longer than three characters (REST: 500 internal_error; MCP:
  an isError result saying internal_error);
- status answers without `state`, a required output field (REST: 500 contract_violation; MCP: an
  isError result saying contract_violation);
- retrieve refuses an odd mutation_id with a 409 conflict, get_documents names of more than one
  document with a 404 not_found: declared errors, answers to valid inputs.

`python -m tests.testing.handler_bugs` (the repository on PYTHONPATH) serves it over stdio.
"""

from __future__ import annotations

from typing import Any

from evidencekit.server.generated.models import (
    GetDocumentsInput,
    RetrieveInput,
    SearchDocumentsInput,
    StatusInput,
)
from evidencekit.server.runtime._context import RequestContext
from evidencekit.server.runtime._errors import Conflict, NotFound
from tests.support import ExampleHandlers, example_output


class HandlerBugs(ExampleHandlers):
    async def search_documents(self, payload: SearchDocumentsInput, context: RequestContext) -> Any:
        if len(payload.query) > 3:
            raise RuntimeError("the planted bug: a query longer than three characters")
        return await super().search_documents(payload, context)

    async def status(self, payload: StatusInput, context: RequestContext) -> Any:
        data = example_output("sosoapi_research_evidence_status")
        del data["retrieval"]["state"]
        return data

    async def retrieve(self, payload: RetrieveInput, context: RequestContext) -> Any:
        if payload.mutation_id.int % 2:
            raise Conflict("this mutation_id was used for another retrieval", code="mutation_id_reused")
        return await super().retrieve(payload, context)

    async def get_documents(self, payload: GetDocumentsInput, context: RequestContext) -> Any:
        if len(payload.names) > 1:
            raise NotFound("no document has these names", code="document_not_found")
        return await super().get_documents(payload, context)


def stdio() -> None:
    import asyncio
    from dataclasses import replace

    from evidencekit.server.evidence.auth import evidence_hooks
    from evidencekit.server.generated.app import create_stdio_server
    from evidencekit.server.runtime._mcp import serve_stdio
    from tests.support import AllowAll

    server = create_stdio_server(HandlerBugs(), replace(evidence_hooks(), auth=AllowAll()), credential="any")
    asyncio.run(serve_stdio(server))


if __name__ == "__main__":
    stdio()
