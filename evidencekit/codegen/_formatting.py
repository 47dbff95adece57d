"""One formatter pass (ruff, pinned) over every generated Python file, isolated from any local config."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path


class FormatterError(RuntimeError):
    pass


def _ruff() -> str:
    from ruff.__main__ import find_ruff_bin

    return str(find_ruff_bin())


def format_python(sources: dict[str, str]) -> dict[str, str]:
    """Format {relative path: source} in one ruff run; returns the formatted sources."""
    if not sources:
        return {}
    with tempfile.TemporaryDirectory(prefix="evidencekit-fmt-") as tmp:
        root = Path(tmp)
        for rel, text in sources.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        command = [_ruff(), "format", "--isolated", "--no-cache", "--line-length", "100",
                   "--target-version", "py311", "--quiet", str(root)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise FormatterError(f"ruff format failed on generated code:\n{done.stderr}")
        return {rel: (root / rel).read_text(encoding="utf-8") for rel in sources}
