from evidencekit.testing.conformance import test_mcp_conformance, test_rest_conformance  # noqa: F401
