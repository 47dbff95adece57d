"""Test support for a project built with the toolkit (docs/toolkit.md, "Public API"): the conformance
plugin is the module `evidencekit.testing.conformance` (`pytest_plugins = [...]`); from here:

    Target       where the app under test answers, and the headers every call sends
    serve_app    an ASGI app served on a free loopback port for the length of a `with` block
    Prepare      what a `conformance_prepare` fixture returns: (operation, input) -> input to send
    inputs, mutations    hypothesis strategies of a schema's valid inputs, and invalid variants of one
    agreement, Agreement do generated models agree with their contract (a differential check)

Every other module beneath this package (the conformance gate `evidencekit conformance` among them)
is private: its names may change in any release. Importing this package does not import the plugin,
so a conftest may import `Target` before pytest loads the plugin (whose asserts pytest rewrites).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidencekit._exports import lazy_exports

__all__ = ["Agreement", "Prepare", "Target", "agreement", "inputs", "mutations", "serve_app"]

if TYPE_CHECKING:
    from evidencekit.testing._gate.inputs import Prepare
    from evidencekit.testing._model_agreement import Agreement, agreement
    from evidencekit.testing._serve import serve_app
    from evidencekit.testing._strategies import inputs, mutations
    from evidencekit.testing._target import Target
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "Prepare": "_gate.inputs",
        **dict.fromkeys(["Agreement", "agreement"], "_model_agreement"),
        "serve_app": "_serve",
        **dict.fromkeys(["inputs", "mutations"], "_strategies"),
        "Target": "_target",
    })
