"""The conformance gate: `evidencekit conformance` checks a deployed server (REST, MCP over
Streamable HTTP or stdio) against the contracts and the lock, as CI runs it.

    inputs.py   what is sent: the shared strategies, aimed by --set pins
    rest.py     the REST target (httpx), mcp.py the MCP targets (official SDK client)
    checks.py   what an answer must be (contract checks; toolkit-protocol checks)
    runner.py   hypothesis driven outside pytest: every distinct failure shrunk, with its input
    results.py  what a run found; report.py the human summary; junit.py the JUnit XML
    cli.py      the command line and its exit codes
"""
