"""`/docs`: interactive documentation of the served OpenAPI document (Swagger UI, which reads
OpenAPI 3.1 from version 5), its assets shipped in the package and served from here: no CDN, so a
deployment without internet access shows it as well.

The page loads `/docs/swagger-ui-bundle.js`, `/docs/swagger-ui.css` and `/docs/init.js` (no inline
script, so a Content-Security-Policy of 'self' allows it), reads `/openapi.json`, keeps an entered
bearer token across reloads, and sends "Try it out" calls to this server.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

ASSETS = Path(__file__).resolve().parent / "api_docs_assets"
DOCS_PATH = "/docs"
_TYPES = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css",
          "LICENSE": "text/plain", "NOTICE": "text/plain", "VERSION": "text/plain"}

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title}</title>
  <link rel="stylesheet" href="{path}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="{path}/swagger-ui-bundle.js"></script>
  <script src="{path}/init.js"></script>
</body>
</html>
"""

INIT = """window.ui = SwaggerUIBundle({{
  url: {openapi!r},
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
  displayRequestDuration: true,
  validatorUrl: null
}});
"""


def docs_routes(title: str, openapi_path: str = "/openapi.json", path: str = DOCS_PATH) -> list[BaseRoute]:
    """The page, its start script and its assets."""
    page = PAGE.format(title=f"{title} — API docs", path=path)
    script = INIT.format(openapi=openapi_path)

    async def docs(_: Request) -> Response:
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    async def init(_: Request) -> Response:
        return PlainTextResponse(script, media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _TYPES:
            return PlainTextResponse("not found", status_code=404)
        return FileResponse(ASSETS / name, media_type=_TYPES[name], headers={"Cache-Control": "public, max-age=86400"})

    return [Route(path, docs, methods=["GET"]), Route(f"{path}/init.js", init, methods=["GET"]),
            Route(path + "/{name}", asset, methods=["GET"])]
