"""The origin of the retrieve benchmarks: /page/N is a ~200 KB article; /slow/MS/N the same article
answered after MS milliseconds (a distant origin); /big/N is 20 MB."""

import asyncio
import random

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

WORDS = ["evidence", "sample", "river", "stable", "measure", "result", "method", "report", "field", "season", "study", "note"]


def article(seed: int, size: int = 200_000) -> bytes:
    rng = random.Random(seed)
    parts = [f"<html lang='en'><head><title>Report {seed}</title></head><body><nav><a href='/'>Home</a></nav>"
             "<article><h1>Report</h1>"]
    total = 0
    while total < size:
        paragraph = " ".join(rng.choices(WORDS, k=80))  # one call per paragraph: the origin stays cheap
        parts.append(f"<p>{paragraph}.</p>")
        total += len(paragraph) + 8
    parts.append("</article><footer>footer</footer></body></html>")
    return "".join(parts).encode()


async def page(request: Request) -> Response:
    return Response(article(int(request.path_params["n"])), media_type="text/html")


async def slow(request: Request) -> Response:
    await asyncio.sleep(int(request.path_params["ms"]) / 1000)
    return Response(article(int(request.path_params["n"])), media_type="text/html")


async def big(request: Request) -> StreamingResponse:
    chunk = b"<p>" + b"lorem ipsum " * 5000 + b"</p>"

    async def body():  # type: ignore[no-untyped-def]
        yield b"<html><body>"
        for _ in range(20_000_000 // len(chunk)):
            yield chunk

    return StreamingResponse(body(), media_type="text/html")


app = Starlette(routes=[Route("/page/{n:int}", page), Route("/slow/{ms:int}/{n:int}", slow),
                        Route("/big/{n:int}", big)])
