"""The peer of the status benchmark: a bare Starlette endpoint returning fixed JSON bytes (a
pending receipt's answer; under /settled, a settled receipt's)."""

import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

BODY = Path(os.environ["BENCH_PEER_BODY"]).read_bytes()
SETTLED_BODY = Path(os.environ.get("BENCH_PEER_SETTLED_BODY", os.environ["BENCH_PEER_BODY"])).read_bytes()


async def status(_: Request) -> Response:
    return Response(BODY, media_type="application/json")


async def settled(_: Request) -> Response:
    return Response(SETTLED_BODY, media_type="application/json")


app = Starlette(routes=[Route("/research-api/evidence/status", status, methods=["POST"]),
                        Route("/settled/research-api/evidence/status", settled, methods=["POST"])])
