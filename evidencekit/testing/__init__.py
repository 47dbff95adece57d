"""Test support for projects built with the toolkit: the conformance plugin and a local server."""
