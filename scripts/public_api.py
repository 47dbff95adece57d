#!/usr/bin/env python3
"""The toolkit's public API (every name its public modules export, with its signature) as text:
printed, or written to tests/public_api.txt with --update when a change of the API is intended
(tests/test_public_api.py fails until the snapshot and the code agree; say what changed in CHANGELOG.md).

    PYTHONPATH=. .venv/bin/python scripts/public_api.py [--update]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.public_api import SNAPSHOT, snapshot  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help=f"write {SNAPSHOT.name} instead of printing")
    args = parser.parse_args()
    text = snapshot()
    if args.update:
        SNAPSHOT.write_text(text, encoding="utf-8")
        print(f"wrote {SNAPSHOT}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
