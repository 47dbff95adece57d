"""Public names a package's `__init__` exports from its private modules, each imported when first
used (PEP 562): importing one private module of the package (the conformance gate needs the error
tree, the client its transport) does not import every other one, the MCP SDK and uvicorn included.

The package lists the same names under `if TYPE_CHECKING:` as plain imports, for type checkers and
readers; tests/test_public_api.py holds that list, this table and `__all__` to one another.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: `where` maps each public name to the private module
    that holds it, relative to the package (`"_app"`), or to `"module:name"` when it is held there
    under another name."""

    def __getattr__(name: str) -> Any:
        found = where.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, held_as = found.partition(":")
        value = getattr(importlib.import_module(f"{package}.{module}"), held_as or name)
        setattr(sys.modules[package], name, value)  # found without asking from now on
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
