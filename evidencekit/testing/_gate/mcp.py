"""The MCP targets: a server over Streamable HTTP (`--mcp-url`) or a process over stdio
(`--mcp-stdio`), through the official SDK's client session, driven from synchronous code by an
anyio portal. Calls go out without the SDK's own `structuredContent` check: a result outside the
contract is a finding here, not an exception."""

from __future__ import annotations

import contextlib
import json
import shlex
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import pydantic
from mcp import ClientSession
from mcp import types as mcp_types
from mcp.shared.exceptions import MCPError

from evidencekit.contracts._loader import Variant
from evidencekit.testing._answers import jsonrpc_call, shown
from evidencekit.testing._contracts import Contract
from evidencekit.testing._gate.checks import Answer, first_difference
from evidencekit.testing._gate.error_results import server_failure
from evidencekit.testing._gate.results import Finding, OperationReport
from evidencekit.testing._gate.targets import Unreachable, leaves
from evidencekit.testing._mcp_client import call_tool_unchecked, http_session, stdio_session

_CLOSED, _TIMEOUT, _INTERNAL = -32000, -32001, -32603  # the SDK's local codes; JSON-RPC's own
_HTTP_ERROR = "Server returned an error response"  # the SDK's stand-in for an HTTP error status


@dataclass
class _Listing:
    tools: dict[str, dict[str, Any]]
    problem: str | None = None  # tools/list failed


class McpTarget:
    rest = False

    def __init__(self, surface: str, shown_as: str, transport: str,
                 connect: Callable[[], contextlib.AbstractAsyncContextManager[ClientSession]],
                 timeout: float) -> None:
        self.surface, self.shown, self.transport = surface, shown_as, transport
        self.connect, self.timeout = connect, timeout
        self.stack = contextlib.ExitStack()
        self.listing = _Listing({})
        self.last_status: int | None = None  # HTTP: the status of the last answer from the endpoint
        self.errlog: TextIO | None = None

    def open(self, contracts: list[Contract]) -> tuple[bool, str]:
        from anyio.from_thread import start_blocking_portal

        self.portal = self.stack.enter_context(start_blocking_portal())
        try:
            opened = self.portal.wrap_async_context_manager(self.connect())
            self.session = self.stack.enter_context(opened)
        except Exception as exc:
            reason = self._why_not(exc)
            self.close()
            raise Unreachable(reason) from None
        try:
            tools = self.portal.call(self._all_tools)
            self.listing = _Listing({tool.name: tool.model_dump(mode="json", by_alias=True,
                                                                exclude_none=True) for tool in tools})
        except Exception as exc:
            self.listing = _Listing({}, f"tools/list failed: {self._said(exc)}")
        return False, "MCP carries no X-Contract-Hash; --strict turns them on"

    async def _all_tools(self) -> list[mcp_types.Tool]:
        """Every page of tools/list."""
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(1000):  # a server that always names a next page is not followed for ever
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self.session.list_tools(params=params)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _why_not(self, exc: BaseException) -> str:
        found = leaves(exc)
        if isinstance(found[0], FileNotFoundError | PermissionError):
            return f"cannot start {self.shown}: {found[0].strerror}"
        reason = "; ".join(self._said(leaf) for leaf in found)
        if self.last_status is not None and self.last_status >= 400:
            reason = f"HTTP {self.last_status}"
            if self.last_status in (401, 403):
                reason += " (a credential? --header 'Authorization: Bearer ...')"
        stderr = self._stderr_tail()
        return (f"{self.shown} did not start an MCP session: {reason}"
                + (f"; its stderr ends: {stderr}" if stderr else ""))

    def _said(self, exc: BaseException) -> str:
        if isinstance(exc, MCPError):
            return f"JSON-RPC error {exc.code}: {exc.message}"
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__

    def _stderr_tail(self) -> str:
        if self.errlog is None:
            return ""
        self.errlog.flush()
        self.errlog.seek(0)
        lines = [line.strip() for line in self.errlog.read().splitlines() if line.strip()]
        return shown(" | ".join(lines[-3:]), 400)

    def variant(self, contract: Contract) -> tuple[Variant | None, str]:
        mcp, variant = contract.operation.mcp, contract.operation.mcp_variant
        if mcp is None or variant is None:
            return None, "not published as an MCP tool"
        transports = mcp.get("transports")
        if transports and self.transport not in transports:
            return None, f"published for MCP over {', '.join(transports)} only"
        return variant, ""

    def tool(self, contract: Contract) -> str:
        return str((contract.operation.mcp or {})["tool_name"])

    def describe(self, contract: Contract, report: OperationReport) -> bool:
        """tools/list against the contract: the tool listed, its inputSchema, the annotations the
        manifest declares, and its outputSchema when it lists one."""
        tool, variant = self.tool(contract), contract.operation.mcp_variant
        assert variant is not None
        report.ran("listed")
        listed = self.listing.tools.get(tool)
        if listed is None:
            names = ", ".join(sorted(self.listing.tools)) or "none"
            problem = self.listing.problem or f"tools/list lacks {tool} (it lists: {names})"
            report.found(Finding("listed", problem))
            return False
        report.ran("input_schema", "annotations")
        differs = first_difference(listed.get("inputSchema"), variant.input_schema)
        if differs:
            report.found(Finding("input_schema", f"{tool}: the listed inputSchema differs from "
                                                 f"the contract's at {differs}"))
        declared = (contract.operation.mcp or {}).get("annotations", {})
        got = listed.get("annotations") or {}
        wrong = [f"{key}: listed {shown(got.get(key, 'nothing'))}, the manifest declares "
                 f"{shown(value)}" for key, value in declared.items()
                 if first_difference(got.get(key), value)]
        if wrong:
            report.found(Finding("annotations", f"{tool}: " + "; ".join(wrong)))
        if "outputSchema" in listed:
            report.ran("output_schema")
            differs = first_difference(listed["outputSchema"], variant.output_schema)
            if differs:
                report.found(Finding("output_schema", f"{tool}: the listed outputSchema differs "
                                                      f"from the contract's at {differs}"))
        return True

    def call(self, contract: Contract, payload: Any) -> Answer:
        tool = self.tool(contract)
        try:
            result = self.portal.call(call_tool_unchecked, self.session, tool, payload,
                                      self.timeout)
        except MCPError as exc:
            return self._error_answer(exc)
        except pydantic.ValidationError as exc:
            problem = f"not a valid CallToolResult: {shown(str(exc).splitlines()[0:3])}"
            return Answer("success", "a result", problem=problem)
        except Exception as exc:  # the connection is gone (the process ended, say)
            return Answer("no_answer", "; ".join(self._said(leaf) for leaf in leaves(exc)))
        return self._result_answer(tool, result)

    def _error_answer(self, exc: MCPError) -> Answer:
        said = self._said(exc)
        if exc.code == _CLOSED and exc.message == "Connection closed":
            return Answer("no_answer", "the connection closed" + self._tail())
        if exc.code == _TIMEOUT and "timed out" in exc.message:
            return Answer("no_answer", f"no answer within {self.timeout:g} s")
        if exc.code == _INTERNAL and exc.message == _HTTP_ERROR and self.last_status:
            status = self.last_status
            said = f"HTTP {status} from the MCP endpoint"
            if status >= 500:
                return Answer("server_error", said, rpc_error=True)
            return Answer("refused", said, rpc_error=True)
        if exc.code == _INTERNAL:
            return Answer("server_error", said, exc.data, rpc_error=True)
        return Answer("refused", said, exc.data, rpc_error=True)

    def _tail(self) -> str:
        stderr = self._stderr_tail()
        return f" (stderr ends: {stderr})" if stderr else ""

    def _result_answer(self, tool: str, result: mcp_types.CallToolResult) -> Answer:
        if result.is_error:
            text = next((block.text for block in result.content
                         if isinstance(block, mcp_types.TextContent)), None)
            try:
                body: Any = json.loads(text) if text is not None else None
            except ValueError:
                body = text
            failure = server_failure(body)
            if failure is not None:  # what REST answers with a 5xx: a handler's bug, not a refusal
                return Answer("server_error", f"an isError result ({failure})", body)
            return Answer("refused", "an isError result", body, validation_refusal=True)
        data = result.structured_content
        if data is not None:
            return Answer("success", "a result", data)
        if "outputSchema" in self.listing.tools.get(tool, {}):
            return Answer("success", "a result",
                          problem="no structuredContent, though the tool lists an outputSchema")
        return Answer("success", "a result",
                      unchecked="results carry no structuredContent and the tool lists no "
                                "outputSchema: their data was not checked")

    def reproduction(self, contract: Contract, payload: Any) -> str:
        return jsonrpc_call(self.tool(contract), payload)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stack.close()


def http_target(url: str, headers: Mapping[str, str], timeout: float) -> McpTarget:
    target: McpTarget

    def seen(response: Any) -> None:
        target.last_status = response.status_code

    def connect() -> contextlib.AbstractAsyncContextManager[ClientSession]:
        return http_session(url, headers, timeout, on_response=seen)

    target = McpTarget("mcp-http", url, "http", connect, timeout)
    return target


def stdio_target(argv: list[str], env: Mapping[str, str], timeout: float) -> McpTarget:
    errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed with the target)

    def connect() -> contextlib.AbstractAsyncContextManager[ClientSession]:
        return stdio_session(argv[0], argv[1:], env, errlog, timeout)
    target = McpTarget("mcp-stdio", shlex.join(argv), "stdio", connect, timeout)
    target.errlog = errlog
    target.stack.callback(errlog.close)
    return target
