"""`/docs`: interactive documentation of the served OpenAPI document (Swagger UI, which reads
OpenAPI 3.1 from version 5), its assets shipped in the package and served from here: no CDN, so a
deployment without internet access shows it as well.

The page loads `/docs/swagger-ui-bundle.js`, `/docs/swagger-ui.css` and `/docs/init.js`, reads
`/openapi.json` and sends "Try it out" calls to this server. Every response under `/docs` carries a
Content-Security-Policy that lets the page load scripts, styles, fonts and images from this origin
only (no inline script, no image from elsewhere, say one in a contract's description), cannot be
framed, and is not sniffed. The title and the document's path are escaped into the page and the
script, never run.

A bearer token entered under "Authorize" is kept (Swagger UI's `persistAuthorization`) in the
browser's localStorage for this origin, under the key `authorized`, until the user clicks "Logout"
or clears the site's data: it survives reloads and browser restarts, and any script this origin
serves can read it.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

ASSETS = Path(__file__).resolve().parent / "api_docs_assets"
DOCS_PATH = "/docs"
_TYPES = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css",
          "LICENSE": "text/plain", "NOTICE": "text/plain", "VERSION": "text/plain"}

# img-src and font-src take data: for the icons and fonts inlined in swagger-ui.css; connect-src
# 'self' is /openapi.json and "Try it out". style-src needs no 'unsafe-inline': Swagger UI sets its
# inline styles through the DOM (React style props), which CSP does not govern, and adds no <style>
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Frame-Options": "DENY",
                    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}

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
  url: {openapi},
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
  displayRequestDuration: true,
  validatorUrl: null
}});
"""


def js_string(text: str) -> str:
    """`text` as a JavaScript string literal; `<` and `>` escaped too, so no `</script>` or `<!--`
    in it ends a script element should the script ever be inlined."""
    return json.dumps(text).replace("<", "\\u003c").replace(">", "\\u003e")


def docs_routes(title: str, openapi_path: str = "/openapi.json", path: str = DOCS_PATH) -> list[BaseRoute]:
    """The page, its start script and its assets."""
    page = PAGE.format(title=html.escape(f"{title} — API docs"), path=html.escape(path))
    script = INIT.format(openapi=js_string(openapi_path))

    async def docs(_: Request) -> Response:
        return HTMLResponse(page, headers={"Cache-Control": "no-cache", **SECURITY_HEADERS})

    async def init(_: Request) -> Response:
        return PlainTextResponse(script, media_type="text/javascript",
                                 headers={"Cache-Control": "no-cache", **SECURITY_HEADERS})

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _TYPES:
            return PlainTextResponse("not found", status_code=404, headers=SECURITY_HEADERS)
        return FileResponse(ASSETS / name, media_type=_TYPES[name],
                            headers={"Cache-Control": "public, max-age=86400", **SECURITY_HEADERS})

    return [Route(path, docs, methods=["GET"]), Route(f"{path}/init.js", init, methods=["GET"]),
            Route(path + "/{name}", asset, methods=["GET"])]
