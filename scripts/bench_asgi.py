"""Serve scripts/<module>.py's `app` on uvicorn as the status benchmark runs its peers:

    python scripts/bench_asgi.py MODULE PORT HTTP [--settle] [--access-log]

on 127.0.0.1 with uvicorn's own protocol for that HTTP parser, as `python -m uvicorn` runs it: no
access log, or with --access-log uvicorn's own (log level info, on stderr); --settle first
settles the heap as `research-evidence serve` does.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("module")
    parser.add_argument("port", type=int)
    parser.add_argument("http", choices=("httptools", "h11"))
    parser.add_argument("--settle", action="store_true")
    parser.add_argument("--access-log", action="store_true")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / "scripts"), str(ROOT)]
    import uvicorn

    from evidencekit.server.runtime import _heap as heap

    app = importlib.import_module(args.module).app
    if args.settle:
        heap.settle()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="info" if args.access_log else "warning",
                access_log=args.access_log, http=args.http)


if __name__ == "__main__":
    main()
