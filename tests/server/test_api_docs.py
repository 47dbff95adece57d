"""`/docs`: the served OpenAPI document as an interactive page, its assets from the package (no
CDN), driven in a real browser (Debian's chromium through Playwright): a try-it-out call of
sosoapi_research_evidence_status answers 200, and the screenshot stays in var/artifacts/."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import running_service

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


def test_try_it_out_in_a_browser(service: dict[str, Any]) -> None:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            outside: list[str] = []
            page.on("request", lambda request: outside.append(request.url)
                    if not request.url.startswith(service["base"]) and not request.url.startswith("data:") else None)
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
        finally:
            browser.close()


def test_a_teams_generated_app_gets_the_same_page(tmp_path: Path) -> None:
    from evidencekit.testing.serve import serve_app
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
