"""Runtime policy a team sets in its contracts and its config, served as declared on REST and MCP,
and passing the gate: a project from another domain (examples/library), changed as a team would
change it, locked and generated from scratch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import SCHEMATHESIS, edit_json, library_project, live_server

TOKEN = "librarian-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOOK = {"title": "Policy", "authors": [{"name": "A. Writer"}], "format": "ebook", "published_on": "2020-02-02"}


def gate(project: Path, *target: str) -> subprocess.CompletedProcess[str]:
    """`evidencekit conformance` against a served project (exit 0: it conforms)."""
    return subprocess.run([sys.executable, "-m", "evidencekit", "conformance", "--contracts", str(project / "contracts"),
                           *target, "--header", f"Authorization: Bearer {TOKEN}", "--max-examples", "10"],
                          capture_output=True, text=True, timeout=600, check=False, cwd=project)


def mcp_call(base: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    answer = httpx.post(base + "/mcp", json=call, headers={**AUTH, "Accept": "application/json, text/event-stream"},
                        timeout=30)
    assert answer.status_code == 200, answer.text
    return message_of(answer)


def test_a_declared_success_status_is_the_status_answers_are_sent_with(tmp_path: Path) -> None:
    """`rest.success_statuses: [201]` was accepted by the manifest schema and required by the gate,
    but the runtime always answered 200: a generated server failed its own gate."""
    def created(project: Path) -> None:
        edit_json(project / "contracts" / "add_book" / "manifest.json",
                  lambda manifest: manifest["rest"].update(success_statuses=[201]))
        text = (project / "pyproject.toml").read_text()
        (project / "pyproject.toml").write_text(text.replace('version = "0.1.0"\n\n[tool.pytest',
                                                             'version = "0.1.0"\ndocs = "docs/reference"\n\n[tool.pytest'))

    with library_project(tmp_path, created) as project:
        # the reference page says the status too (it said 200 whatever the manifest declared)
        assert "with a JSON body; success status 201." in (project / "docs" / "reference" / "add_book.md").read_text()
        assert "success status 200." in (project / "docs" / "reference" / "get_book.md").read_text()
        from library_api.serve import app  # type: ignore[import-not-found]

        with live_server(app(TOKEN), lifespan="on") as base:
            added = httpx.post(base + "/books/add", json=BOOK, headers=AUTH)
            assert added.status_code == 201 and added.json()["book"]["title"] == "Policy", added.text
            found = httpx.post(base + "/books/get", json={"id": added.json()["book"]["id"]}, headers=AUTH)
            assert found.status_code == 200  # the others keep theirs
            document = httpx.get(base + "/openapi.json").json()
            assert "201" in document["paths"]["/books/add"]["post"]["responses"]
            assert "200" not in document["paths"]["/books/add"]["post"]["responses"]
            assert mcp_call(base, "add_book", BOOK)["result"]["structuredContent"]["book"]["title"] == "Policy"
            checked = gate(project, "--url", base)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]


def test_a_success_status_without_a_body_is_refused_by_lock_generate_and_check(tmp_path: Path) -> None:
    import shutil

    from tests.support import LIBRARY_EXAMPLE

    project = tmp_path / "library"
    shutil.copytree(LIBRARY_EXAMPLE, project, ignore=shutil.ignore_patterns("generated", "__pycache__"))
    edit_json(project / "contracts" / "add_book" / "manifest.json",
              lambda manifest: manifest["rest"].update(success_statuses=[204]))
    for command in ("lock", "generate", "check"):  # nothing records or generates what cannot be served
        done = subprocess.run([sys.executable, "-m", "evidencekit", "codegen", command], cwd=project,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 2, command + ": " + done.stdout + done.stderr
        assert "rest.success_statuses [204]" in done.stderr and "not 204 or 205" in done.stderr, command
    assert not (project / "contracts" / "contracts.lock.json").exists()  # the refused lock wrote nothing


def anonymous_mcp(base: str, tool: str, arguments: dict[str, Any]) -> httpx.Response:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    return httpx.post(base + "/mcp", json=call, headers={"Accept": "application/json, text/event-stream"}, timeout=30)


def message_of(answer: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of an /mcp answer: its JSON body, or its event stream's last message."""
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[len("data: "):] for line in answer.text.splitlines() if line.startswith("data: ")]
        return json.loads(data[-1])  # type: ignore[no-any-return]
    return answer.json()  # type: ignore[no-any-return]


def result_of(answer: httpx.Response) -> dict[str, Any]:
    return message_of(answer)["result"]  # type: ignore[no-any-return]


def test_a_public_tool_beside_protected_ones_is_callable_without_a_credential(tmp_path: Path) -> None:
    """The example's get_book and search_books are public, add_book needs catalog:write: anonymous
    over REST they answered, over MCP every call got 401 because one tool declared `auth`."""
    with library_project(tmp_path) as project:
        from library_api.serve import app

        with live_server(app(TOKEN), lifespan="on") as base:
            found = anonymous_mcp(base, "search_books", {"query": "the"})
            assert found.status_code == 200 and result_of(found).get("isError") is not True, found.text
            refused = result_of(anonymous_mcp(base, "add_book", BOOK))
            assert refused["isError"] is True
            error = json.loads(refused["content"][0]["text"])
            assert (error["code"], error["error"]) == ("unauthenticated", "unauthorized")
            assert "bearer token" in error["message"]
            assert mcp_call(base, "add_book", BOOK)["result"]["structuredContent"]["book"]["title"] == "Policy"
            bad = httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                             headers={"Authorization": "Bearer wrong", "Accept": "application/json, text/event-stream"})
            assert bad.status_code == 401  # a credential that is sent is checked
            rest = httpx.post(base + "/books/add", json=BOOK)
            assert rest.status_code == 401 and rest.headers["www-authenticate"].startswith("Bearer")
            checked = gate(project, "--url", base, "--mcp-url", base + "/mcp")
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]


class Tagging:
    """A team's own middleware (CORS, metrics, tracing): it marks every answer and counts paths."""

    seen: list[str] = []

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        Tagging.seen.append(scope["path"])

        async def tagged(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-team", b"yes")]
            await send(message)

        await self.app(scope, receive, tagged)


def test_a_teams_middleware_wraps_every_route_the_operations_included(tmp_path: Path) -> None:
    """Operation calls were served before Starlette's middleware: a team's CORS, metrics or tracing
    never saw them."""
    from starlette.middleware import Middleware

    with library_project(tmp_path):
        from library_api.generated.app import create_app  # type: ignore[import-not-found]
        from library_api.handlers import SAMPLE_BOOKS, Catalogue  # type: ignore[import-not-found]
        from library_api.serve import hooks_for  # type: ignore[import-not-found]

        given = create_app(Catalogue(SAMPLE_BOOKS), hooks_for(TOKEN), middleware=[Middleware(Tagging)])
        added = create_app(Catalogue(SAMPLE_BOOKS), hooks_for(TOKEN))
        added.add_middleware(Tagging)
        for app in (given, added):
            Tagging.seen = []
            with live_server(app, lifespan="on") as base:
                answers = [httpx.post(base + "/books/search", json={"query": "the"}, headers=AUTH),
                           httpx.post(base + "/books/add", json=BOOK, headers=AUTH),
                           httpx.post(base + "/books/add", json=BOOK),  # refused by the bearer check: still seen
                           httpx.get(base + "/openapi.json"),
                           httpx.post(base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                      headers={**AUTH, "Accept": "application/json, text/event-stream"})]
            assert [answer.headers.get("x-team") for answer in answers] == ["yes"] * 5, [a.status_code for a in answers]
            assert [answer.status_code for answer in answers] == [200, 200, 401, 200, 200]
            assert Tagging.seen == ["/books/search", "/books/add", "/books/add", "/openapi.json", "/mcp"]


def test_request_size_is_the_projects_and_an_operation_may_take_more(tmp_path: Path) -> None:
    """A 65,536-character field (a real API's maximum) got 413 on REST and /mcp: the limit was a
    module constant. The project sets it (`max_request_bytes`), and an operation's manifest its own."""
    def sizes(project: Path) -> None:
        text = (project / "pyproject.toml").read_text()
        (project / "pyproject.toml").write_text(text.replace('version = "0.1.0"\n\n[tool.pytest',
                                                             'version = "0.1.0"\nmax_request_bytes = 32768\n\n[tool.pytest'))
        edit_json(project / "contracts" / "search_books" / "manifest.json",
                  lambda manifest: manifest.update(max_request_bytes=1_048_576))
        edit_json(project / "contracts" / "search_books" / "mcp.input.schema.json",
                  lambda schema: schema["properties"]["query"].pop("maxLength", None))

    long_query = {"query": "q" * 600_000}
    with library_project(tmp_path, sizes) as project:
        from library_api.serve import app

        with live_server(app(TOKEN), lifespan="on") as base:
            found = httpx.post(base + "/books/search", json=long_query, headers=AUTH, timeout=30)
            assert found.status_code == 200, found.text[:300]  # 600 KB: this operation takes up to 1 MiB
            too_long = httpx.post(base + "/books/search", json={"query": "q" * 1_100_000}, headers=AUTH, timeout=30)
            assert too_long.status_code == 413 and "1048576 bytes" in too_long.json()["message"]
            book = {**BOOK, "title": "t" * 290, "subtitle": "s" * 290}
            padded = json.dumps(book) + " " * 40_000  # 40 KB of whitespace: past the project's 32 KiB
            refused = httpx.post(base + "/books/add", content=padded, headers={**AUTH, "Content-Type": "application/json"})
            assert refused.status_code == 413 and "32768 bytes" in refused.json()["message"]
            assert mcp_call(base, "search_books", long_query)["result"].get("isError") is not True
            over = mcp_call(base, "add_book", {**book, "authors": [{"name": "n" * 150}] * 10,
                                               "cover_url": "https://example.com/" + "c" * 2000} | {"x": "y" * 40_000})
            assert over["result"]["isError"] is True and '"payload_too_large"' in over["result"]["content"][0]["text"]
            assert "32768 bytes" in over["result"]["content"][0]["text"]  # add_book's: the project's limit
            envelope = httpx.post(base + "/mcp", headers={**AUTH, "Accept": "application/json, text/event-stream"},
                                  json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                        "params": {"name": "search_books", "arguments": {"query": "q" * 1_100_000}}})
            assert envelope.status_code == 413  # past every tool's limit: refused before it is read
            checked = gate(project, "--url", base, "--mcp-url", base + "/mcp")
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]


def test_a_public_hostname_comes_from_the_config_and_a_refused_host_is_told_how(tmp_path: Path) -> None:
    """/mcp answered any non-loopback Host with a plain-text `421 Invalid Host header`; the way to
    allow a public hostname was found only in the source."""
    def public(project: Path) -> None:
        text = (project / "pyproject.toml").read_text()
        (project / "pyproject.toml").write_text(text.replace(
            'version = "0.1.0"\n\n[tool.pytest', 'version = "0.1.0"\nallowed_hosts = ["library.example.org"]\n\n[tool.pytest'))

    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {**AUTH, "Accept": "application/json, text/event-stream"}
    with library_project(tmp_path, public):
        from library_api.serve import app

        with live_server(app(TOKEN), lifespan="on") as base:
            port = base.rsplit(":", 1)[1]
            served = httpx.post(base + "/mcp", json=listing, headers={**accept, "Host": f"library.example.org:{port}",
                                                                     "Origin": "https://library.example.org"})
            assert served.status_code == 200, served.text
            refused = httpx.post(base + "/mcp", json=listing, headers={**accept, "Host": "attacker.example"})
            assert refused.status_code == 421 and refused.headers["content-type"] == "application/json"
            body = refused.json()
            assert body["code"] == "host_not_allowed" and "'attacker.example'" in body["message"]
            assert "allowed_hosts" in body["message"] and body["request_id"] == refused.headers["x-request-id"]
            origin = httpx.post(base + "/mcp", json=listing, headers={**accept, "Origin": "https://attacker.example"})
            assert origin.status_code == 403 and origin.json()["code"] == "origin_not_allowed"
            plain = httpx.post(base + "/mcp", content=b"{}", headers={**accept, "Content-Type": "text/plain"})
            assert plain.status_code == 400 and plain.json()["code"] == "unsupported_media_type"


def test_a_get_input_is_measured_as_its_mcp_arguments_are(tmp_path: Path) -> None:
    """A GET's input was measured as json.dumps writes it (a space after each separator, every
    non-ASCII character a 6-byte escape), MCP arguments as compact UTF-8: an accented query within
    the operation's limit over MCP got 413 over REST. Both now count the same bytes."""
    def get(project: Path) -> None:
        edit_json(project / "contracts" / "search_books" / "manifest.json",
                  lambda manifest: (manifest["rest"].update(method="GET"), manifest.update(max_request_bytes=256)))

    within, over = {"query": "é" * 100}, {"query": "é" * 150}  # 214 and 314 bytes as compact UTF-8
    with library_project(tmp_path, get):
        from library_api.serve import app

        with live_server(app(TOKEN), lifespan="on") as base:
            assert mcp_call(base, "search_books", within)["result"].get("isError") is not True
            found = httpx.get(base + "/books/search", params=within)
            assert found.status_code == 200, found.text  # was 413: 614 bytes as json.dumps writes it
            refused = httpx.get(base + "/books/search", params=over)
            said = mcp_call(base, "search_books", over)["result"]
            assert refused.status_code == 413 and said["isError"] is True
            assert json.loads(said["content"][0]["text"])["message"] == refused.json()["message"]


def test_a_get_operation_takes_its_input_from_the_query_string(tmp_path: Path) -> None:
    """`rest.method: "GET"` still wanted a JSON body (`?query=hello` got 400), and the OpenAPI
    document declared a GET with a request body."""
    def get(project: Path) -> None:
        edit_json(project / "contracts" / "search_books" / "manifest.json",
                  lambda manifest: manifest["rest"].update(method="GET"))

    with library_project(tmp_path, get) as project:
        from library_api.generated.client import Client  # type: ignore[import-not-found]
        from library_api.serve import app

        with live_server(app(TOKEN), lifespan="on") as base:
            found = httpx.get(base + "/books/search", params=[("query", "the"), ("format", "ebook"), ("limit", "2")])
            assert found.status_code == 200, found.text
            assert found.json()["total"] >= len(found.json()["books"]) and len(found.json()["books"]) <= 2
            wrong = httpx.get(base + "/books/search", params={"query": "the", "limit": "two"})
            assert wrong.status_code == 400 and [f["field"] for f in wrong.json()["fields"]] == ["$.limit"]
            assert httpx.post(base + "/books/search", json={"query": "the"}).status_code == 405
            document = httpx.get(base + "/openapi.json").json()
            operation = document["paths"]["/books/search"]["get"]
            assert "requestBody" not in operation
            assert {(p["name"], p["in"], p["required"]) for p in operation["parameters"] if p["in"] == "query"} == {
                ("query", "query", True), ("format", "query", False), ("limit", "query", False)}
            with Client(base, token=TOKEN) as client:  # the generated client sends a GET's input as its query
                answered = client.search_books({"query": "the", "format": "ebook", "limit": 2})
                assert answered.model_dump(mode="json") == found.json()
            assert mcp_call(base, "search_books", {"query": "the"})["result"].get("isError") is not True
            checked = gate(project, "--url", base, "--mcp-url", base + "/mcp")
            swept = subprocess.run([str(SCHEMATHESIS), "run", base + "/openapi.json", "-H",
                                    f"Authorization: Bearer {TOKEN}", "--checks", "all", "--seed", "1", "--no-color"],
                                   capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert swept.returncode == 0, swept.stdout[-3000:]


def test_a_get_whose_input_a_query_cannot_carry_is_refused_by_lock_and_generate(tmp_path: Path) -> None:
    import shutil

    from tests.support import LIBRARY_EXAMPLE

    project = tmp_path / "library"
    shutil.copytree(LIBRARY_EXAMPLE, project, ignore=shutil.ignore_patterns("generated", "__pycache__"))
    edit_json(project / "contracts" / "search_books" / "manifest.json",
              lambda manifest: manifest["rest"].update(method="GET"))
    edit_json(project / "contracts" / "search_books" / "mcp.input.schema.json",
              lambda schema: schema["properties"].update(year={"type": ["integer", "string"]}))
    for command in ("lock", "generate"):
        done = subprocess.run([sys.executable, "-m", "evidencekit", "codegen", command], cwd=project,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 2 and "property 'year'" in done.stderr and "use POST" in done.stderr, \
            command + ": " + done.stderr


def test_every_generated_app_answers_healthz_without_a_token_unless_turned_off(tmp_path: Path) -> None:
    """A generated app answered GET /healthz with 404 (only the evidence service passed a route of
    its own there), so a load balancer probing it marked it down, though `evidencekit serve` keeps
    connections for that very path."""
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def own(_: Request) -> PlainTextResponse:
        return PlainTextResponse("mine")

    with library_project(tmp_path / "on"):
        from library_api.generated.app import create_app  # type: ignore[import-not-found]
        from library_api.handlers import SAMPLE_BOOKS, Catalogue  # type: ignore[import-not-found]
        from library_api.serve import hooks_for  # type: ignore[import-not-found]

        def app(**options: Any) -> Any:
            return create_app(Catalogue(SAMPLE_BOOKS), hooks_for(TOKEN), **options)

        with live_server(app(protected_prefixes=("/",)), lifespan="on") as base:
            health = httpx.get(base + "/healthz")
            head = httpx.head(base + "/healthz")
            guarded = httpx.post(base + "/books/search", json={"query": "the"})
        assert health.status_code == 200 and health.json() == {"status": "ok"}, health.text
        assert head.status_code == 200
        assert guarded.status_code == 401  # the prefix protects everything else
        with live_server(app(routes=[Route("/healthz", own)]), lifespan="on") as base:
            assert httpx.get(base + "/healthz").text == "mine"  # the project's own is served instead
        with live_server(app(healthz=False), lifespan="on") as base:
            assert httpx.get(base + "/healthz").status_code == 404

    def off(project: Path) -> None:
        text = (project / "pyproject.toml").read_text()
        (project / "pyproject.toml").write_text(text.replace(
            'version = "0.1.0"\n\n[tool.pytest', 'version = "0.1.0"\nhealthz = false\n\n[tool.pytest'))

    with library_project(tmp_path / "off", off):
        from library_api.serve import app as served  # type: ignore[import-not-found]

        with live_server(served(TOKEN), lifespan="on") as base:
            assert httpx.get(base + "/healthz").status_code == 404
            assert httpx.post(base + "/books/search", json={"query": "the"}).status_code == 200


@pytest.mark.parametrize("path", ["/mcp", "/docs", "/docs/books", "/openapi.json", "/healthz"])
def test_an_operation_at_a_path_the_runtime_serves_itself_is_refused(tmp_path: Path, path: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A manifest whose REST path is one of the runtime's own was generated and then shadowed by
    the runtime's route: the operation was never reached."""
    import shutil

    from evidencekit.codegen._cli import main as codegen
    from tests.support import LIBRARY_EXAMPLE

    project = tmp_path / "library"
    shutil.copytree(LIBRARY_EXAMPLE, project, ignore=shutil.ignore_patterns("generated", "__pycache__"))
    edit_json(project / "contracts" / "get_book" / "manifest.json", lambda manifest: manifest["rest"].update(path=path))
    for command in ("lock", "generate", "check"):
        assert codegen([command, "--project", str(project)]) == 2, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err
        assert f"get_book/manifest.json: rest.path '{path}' is reserved" in err, err
        assert "pick another path" in err
    assert not (project / "library_api" / "generated").exists()


GET_BOOK_WITH_TEXT = '''    async def get_book(self, payload: GetBookInput, context: RequestContext) -> GetBookOutputData:
        book = self.books.get(payload.id)
        context.text = f"{book['title']}, published {book['published_on']}." if book else "No book has that id."
        return {"book": book}
'''


def test_an_operation_chooses_its_mcp_text_content(tmp_path: Path) -> None:
    """An MCP result's text content was always the result's compact JSON, and a handler could not
    set it: a team replacing an MCP server whose clients read indented JSON (JSON.stringify(x, null,
    2)) or a sentence could not keep what they read. The manifest's `mcp.text_content` chooses, per
    operation: "json" (the default, unchanged), "pretty", or "handler" (RequestContext.text);
    structuredContent and REST are the same whichever."""
    import asyncio

    def texts(project: Path) -> None:
        edit_json(project / "contracts" / "search_books" / "manifest.json",
                  lambda manifest: manifest["mcp"].update(text_content="pretty"))
        edit_json(project / "contracts" / "get_book" / "manifest.json",
                  lambda manifest: manifest["mcp"].update(text_content="handler"))
        handlers = project / "library_api" / "handlers.py"
        source = handlers.read_text()
        old = source[source.index("    async def get_book"):source.index("    async def search_books")]
        handlers.write_text(source.replace(old, GET_BOOK_WITH_TEXT + "\n"))

    async def seen(session: Any) -> dict[str, tuple[str, Any]]:
        added = await session.call_tool("add_book", {**BOOK, "title": "Plain JSON, naïvely"})
        book_id = added.structured_content["book"]["id"]
        calls = {"add_book": added, "search_books": await session.call_tool("search_books", {"query": "darkness"}),
                 "get_book": await session.call_tool("get_book", {"id": book_id}),
                 "no book": await session.call_tool("get_book", {"id": "00000000-0000-4000-8000-000000000000"})}
        assert not any(result.is_error for result in calls.values()), calls
        return {name: (result.content[0].text, result.structured_content) for name, result in calls.items()}

    def check(answers: dict[str, tuple[str, Any]]) -> None:
        text, data = answers["add_book"]
        assert text == json.dumps(data, ensure_ascii=False, separators=(",", ":"))  # the default: compact JSON
        text, data = answers["search_books"]
        assert text == json.dumps(data, indent=2, ensure_ascii=False) and data["books"], text
        text, data = answers["get_book"]
        assert text == f"{data['book']['title']}, published 2020-02-02."
        assert answers["no book"] == ("No book has that id.", {"book": None})

    with library_project(tmp_path, texts) as project:
        from library_api.serve import app
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        async def over_http(base: str) -> dict[str, tuple[str, Any]]:
            import httpx2

            async with httpx2.AsyncClient(headers=AUTH) as http, \
                    streamable_http_client(base + "/mcp", http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return await seen(session)

        async def over_stdio() -> dict[str, tuple[str, Any]]:
            import os

            root = Path(__file__).resolve().parents[2]
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "library_api.serve", "stdio"], cwd=str(project),
                env={**os.environ, "LIBRARY_API_TOKEN": TOKEN, "PYTHONPATH": os.pathsep.join([str(project), str(root)])})
            with open(os.devnull, "w") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    return await seen(session)

        with live_server(app(TOKEN), lifespan="on") as base:
            check(asyncio.run(over_http(base)))
            found = httpx.post(base + "/books/search", json={"query": "darkness"}, headers=AUTH)
            assert found.status_code == 200 and "\n" not in found.text  # REST: the JSON, as ever
        check(asyncio.run(over_stdio()))
