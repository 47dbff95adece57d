"""`/docs`: the served OpenAPI document as an interactive page, its assets from the package (no
CDN), driven in a real browser (Debian's chromium through Playwright): a try-it-out call of
sosoapi_research_evidence_status answers 200 with no Content-Security-Policy violation, and the
screenshot stays in var/artifacts/. A title or path holding markup stays text, every response
carries the security headers, and an image from another origin in a description is not loaded."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from evidencekit.server.runtime._api_docs import docs_routes
from tests.support import live_server, running_service

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "var" / "artifacts"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_service(tmp_path_factory.mktemp("docs"), worker=False) as running:
        yield running


def test_the_page_and_its_assets_come_from_this_server(service: dict[str, Any]) -> None:
    base = service["base"]
    page = httpx.get(base + "/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(source.startswith("/docs/") for source in sources), sources  # nothing from elsewhere
    for source in sources:
        asset = httpx.get(base + source)
        assert asset.status_code == 200 and asset.content, source
    assert "/openapi.json" in httpx.get(base + "/docs/init.js").text
    assert httpx.get(base + "/docs/../pyproject.toml").status_code == 404
    assert httpx.get(base + "/docs/api_docs.py").status_code == 404


def chromium() -> str:
    found = os.environ.get("EVIDENCEKIT_CHROMIUM") or shutil.which("chromium")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (.ci/run installs Debian's package)")
    pytest.skip("chromium is not installed: `apt-get install chromium` (CI installs it; this test then runs)")


@contextmanager
def browser_page() -> Iterator[Page]:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 1600})
        finally:
            browser.close()


def test_try_it_out_in_a_browser(service: dict[str, Any]) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with browser_page() as page:
        outside: list[str] = []
        page.on("request", lambda request: outside.append(request.url)
                if not request.url.startswith(service["base"]) and not request.url.startswith("data:") else None)
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        page.goto(service["base"] + "/docs")
        page.wait_for_selector("#operations-default-sosoapi_research_evidence_status")
        page.click("button.authorize")  # the bearer token, as a user enters it
        page.fill(".auth-container input", service["token"])
        page.click(".auth-btn-wrapper button.authorize")
        page.click("button.btn-done")
        page.click("#operations-default-sosoapi_research_evidence_status .opblock-summary")
        page.click("#operations-default-sosoapi_research_evidence_status button.try-out__btn")
        body = page.locator("#operations-default-sosoapi_research_evidence_status textarea.body-param__text")
        body.fill(json.dumps({"workspace_id": service["workspace_id"],
                              "mutation_id": "40000000-0000-4000-8000-00000000d0c5"}))
        page.click("#operations-default-sosoapi_research_evidence_status button.execute")
        status = page.locator("#operations-default-sosoapi_research_evidence_status "
                              ".live-responses-table tbody .response-col_status").first
        status.wait_for()
        page.screenshot(path=str(ARTIFACTS / "api-docs-try-it-out.png"), full_page=True)
        assert status.inner_text().strip().startswith("200"), status.inner_text()
        assert outside == [], outside  # no CDN, no other host
        assert [text for text in console if "Content Security Policy" in text] == []


def test_every_docs_response_carries_the_security_headers(service: dict[str, Any]) -> None:
    for path in ("/docs", "/docs/init.js", "/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/docs/nothing"):
        headers = httpx.get(service["base"] + path).headers
        directives = [directive.split() for directive in headers.get("content-security-policy", "").split(";")]
        policy = {words[0]: words[1:] for words in directives if words}
        assert policy.get("default-src") == ["'none'"] and policy.get("script-src") == ["'self'"], (path, policy)
        assert policy.get("img-src") == ["'self'", "data:"] and policy.get("connect-src") == ["'self'"], (path, policy)
        assert policy.get("frame-ancestors") == ["'none'"] and policy.get("base-uri") == ["'none'"], (path, policy)
        assert headers.get("x-frame-options") == "DENY" and headers.get("x-content-type-options") == "nosniff", path
        assert headers.get("referrer-policy") == "no-referrer", path


def probe_document(description: str = "") -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "Probe", "version": "1", "description": description},
            "paths": {"/ping": {"get": {"operationId": "ping", "summary": "Ping", "description": description,
                                        "responses": {"200": {"description": "pong"}}}}}}


def docs_app(title: str, document: dict[str, Any], openapi_path: str = "/openapi.json") -> Starlette:
    async def openapi(_: Request) -> Response:
        return JSONResponse(document)

    return Starlette(routes=[Route("/openapi.json", openapi), *docs_routes(title, openapi_path)])


def test_a_title_with_markup_stays_text() -> None:
    title = "</title><script>window.__pwned=1</script>"
    with live_server(docs_app(title, probe_document())) as base, browser_page() as page:
        page.goto(base + "/docs")
        page.wait_for_selector("#operations-default-ping")
        assert page.evaluate("window.__pwned") is None
        assert page.title() == f"{title} — API docs"


def test_the_openapi_path_is_a_javascript_string() -> None:
    # a quote, a script end tag and a character Python's repr writes as \U000e0041 (no escape in JS)
    openapi_path = "/openapi.json?v='\"</script>\U000e0041"
    with live_server(docs_app("Probe", probe_document(), openapi_path)) as base, browser_page() as page:
        page.goto(base + "/docs")
        page.wait_for_selector("#operations-default-ping")
        assert page.evaluate("window.ui.specSelectors.url()") == openapi_path


def test_an_image_from_elsewhere_in_a_description_is_not_loaded() -> None:
    hits: list[str] = []

    async def image(request: Request) -> Response:
        hits.append(request.url.path)
        return Response(b"", media_type="image/png")

    with live_server(Starlette(routes=[Route("/{name}", image)])) as elsewhere:
        description = f'Look: <img src="{elsewhere}/tag.png"> ![markdown]({elsewhere}/markdown.png)'
        with live_server(docs_app("Probe", probe_document(description))) as base, browser_page() as page:
            page.goto(base + "/docs")
            page.click("#operations-default-ping .opblock-summary")
            # both images, in the info and in the opened operation, each loaded or refused (complete
            # either way) before the hits are read
            page.wait_for_function(f"""() => {{
                const images = [...document.querySelectorAll('img[src^="{elsewhere}/"]')];
                return images.length == 4 && images.every(image => image.complete);
            }}""")
            assert page.locator("#operations-default-ping .opblock-summary-path").inner_text() == "/ping"
    assert hits == []


def test_a_teams_generated_app_gets_the_same_page(tmp_path: Path) -> None:
    from evidencekit.testing._serve import serve_app
    from tests.support import library_project

    with library_project(tmp_path) as _:
        from library_api.generated.app import create_app
        from library_api.handlers import SAMPLE_BOOKS, Catalogue

        with serve_app(create_app(Catalogue(SAMPLE_BOOKS))) as base:
            page = httpx.get(base + "/docs")
            script = httpx.get(base + "/docs/swagger-ui-bundle.js")
        with serve_app(create_app(Catalogue(SAMPLE_BOOKS), docs=False)) as base:  # a team may serve none
            none = httpx.get(base + "/docs")
    assert page.status_code == 200 and "<title>Library catalogue API — API docs</title>" in page.text
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert none.status_code == 404
