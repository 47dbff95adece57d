"""An ASGI app served by uvicorn on a free loopback port in a background thread, for tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import uvicorn


@contextmanager
def serve_app(app: Any, host: str = "127.0.0.1", port: int = 0, *, lifespan: Literal["auto", "on", "off"] = "on",
              startup_seconds: float = 10) -> Iterator[str]:
    """Serve `app` (its lifespan run) until the block ends; yields the base URL."""
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan=lifespan)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="evidencekit-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_seconds
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            raise RuntimeError(f"the app did not start on {host} within {startup_seconds} s")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
