"""The generated models, server skeleton and client type-check (mypy --strict) with code that uses them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import REPO as PROJECT_ROOT

USAGE = '''
from __future__ import annotations

from evidencekit.server.generated.models import GetDocumentsInput, GetDocumentsOutput, RetrieveInput, RetrieveOutput, SearchDocumentsInput, SearchDocumentsOutputData, StatusInput, StatusOutput
from evidencekit.client.generated.client import AsyncClient, Client
from evidencekit.server.runtime import RequestContext
from evidencekit.server.generated.handlers import Handlers
from evidencekit.server.generated.app import create_app


class Implementation:
    async def retrieve(self, payload: RetrieveInput, context: RequestContext) -> RetrieveOutput:
        raise NotImplementedError

    async def status(self, payload: StatusInput, context: RequestContext) -> StatusOutput:
        raise NotImplementedError

    async def get_documents(self, payload: GetDocumentsInput, context: RequestContext) -> GetDocumentsOutput:
        raise NotImplementedError

    async def search_documents(self, payload: SearchDocumentsInput,
                               context: RequestContext) -> SearchDocumentsOutputData:
        size: int = payload.page_size  # a default, never None
        return {"results": [{"parent": "documents/e.com/x", "title": "", "uri": "https://e.com/x",
                             "snippet": payload.query[:size], "match": "exact", "matched_words": [payload.query]}]}


handlers: Handlers = Implementation()
app = create_app(handlers)


def use(client: Client) -> str | None:
    result = client.status({"workspace_id": "x", "mutation_id": "y"})
    return None if result.retrieval is None else result.retrieval.state


async def use_async(client: AsyncClient) -> int:
    result = await client.retrieve({"url": "https://e.com", "kind": "url_text"})
    return 0 if result.retrieval.evidence is None else result.retrieval.evidence.revision
'''

WRONG = '''
from evidencekit.server.generated.models import StatusInput, StatusOutput
from evidencekit.server.runtime import RequestContext
from evidencekit.server.generated.handlers import Handlers


class Wrong:
    async def retrieve(self, payload: StatusInput, context: RequestContext) -> StatusOutput:
        raise NotImplementedError


handlers: Handlers = Wrong()
'''


def mypy(*targets: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(path)} if path is not None else None
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", *targets],
        cwd=PROJECT_ROOT, capture_output=True, text=True, check=False, env=env,
    )


def test_generated_code_and_its_use_type_check(tmp_path: Path) -> None:
    usage = tmp_path / "usage.py"
    usage.write_text(USAGE)
    done = mypy("evidencekit/server/generated", "evidencekit/client/generated", str(usage))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_handler_that_breaks_the_interface_does_not(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(WRONG)
    done = mypy(str(wrong))
    assert done.returncode == 1
    assert "Incompatible types in assignment" in done.stdout


def test_the_library_examples_handlers_answer_typed_json_data(tmp_path: Path) -> None:
    """The example answers with its contracts' JSON data (`<Op>OutputData`): typed all the same; it
    reads an optional field the caller may leave out as docs/toolkit.md says (`is MISSING`)."""
    project = tmp_path / "library"
    shutil.copytree(PROJECT_ROOT / "examples" / "library", project, ignore=shutil.ignore_patterns(
        "generated", "contracts.lock.json", ".venv", "__pycache__", ".pytest_cache", ".hypothesis"))
    for step in ("lock", "generate"):
        subprocess.run([sys.executable, "-m", "evidencekit", "codegen", step], cwd=project, check=True,
                       capture_output=True)
    handlers = project / "library_api" / "handlers.py"
    done = mypy(str(handlers), str(project / "library_api" / "serve.py"), path=project)
    assert done.returncode == 0, done.stdout + done.stderr
    # a handler that answers data the contract's TypedDict does not describe is refused
    handlers.write_text(handlers.read_text().replace('return {"books": found[:limit], "total": len(found)}',
                                                     'return {"books": found[:limit], "count": len(found)}'))
    wrong = mypy(str(handlers), path=project)
    assert wrong.returncode == 1 and "SearchBooksOutputData" in wrong.stdout, wrong.stdout
    # `is not None` holds for MISSING too (a 500 when the caller leaves `limit` out): refused until narrowed
    documented = "limit = DEFAULT_LIMIT if payload.limit is MISSING else payload.limit"
    assert documented in handlers.read_text()
    handlers.write_text(handlers.read_text().replace('"count": len(found)', '"total": len(found)').replace(
        documented, "limit = payload.limit if payload.limit is not None else DEFAULT_LIMIT"))
    unnarrowed = mypy(str(handlers), path=project)
    assert unnarrowed.returncode == 1 and "MISSING" in unnarrowed.stdout, unnarrowed.stdout
