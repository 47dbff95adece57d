"""The service checked by the toolkit's conformance plugin, as any adopting project would use it."""

from evidencekit.testing.conformance import test_mcp_conformance, test_rest_conformance  # noqa: F401
