"""Which hosts the app answers to (DNS rebinding protection), decided in one place for every route.

A page on another site whose name an attacker points at 127.0.0.1 (or at a server on a private
network) can make a browser send requests there with the attacker's name in `Host`. The app answers
only loopback (127.0.0.1, localhost, [::1]) and the project's `allowed_hosts`
(`[tool.evidencekit.codegen]`, generated into `<package>.app.ALLOWED_HOSTS`; or
`create_app(..., hosts=HostPolicy([...]))`), any port. Any other Host gets a JSON 421
`host_not_allowed` that names the host and how to allow it, on every route (REST, /mcp,
/openapi.json, /docs, a team's own routes and mounts) but the health check: load balancers and
orchestrators probe an instance by its address (`Host: 10.0.3.7:8000`), not by a name a browser
could be tricked into.

/mcp also checks `Origin` (the MCP spec asks servers to; mcp_hosts.McpHosts): a browser's request
from a page of another origin is refused there. REST leaves `Origin` to the team's CORS middleware.
"""

from __future__ import annotations

from collections.abc import Iterable

from evidencekit.server.runtime._errors import ApiError, Forbidden, MisdirectedRequest

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_KEPT_HOSTS = 1024  # Host values whose verdict is kept (a few, mostly; any value can be sent)
HOW_TO_ALLOW = ("allow it with `allowed_hosts` in [tool.evidencekit.codegen] and regenerate, or build the app "
                "with `create_app(..., hosts=HostPolicy([...]))`")


class HostPolicy:
    """Loopback and `names` (hostnames without a port: any port is taken), whatever their case.
    `how_to_allow`: the refusal's next step (a service names its own setting)."""

    def __init__(self, names: Iterable[str] = (), how_to_allow: str = HOW_TO_ALLOW) -> None:
        self.names = tuple(names)
        self.how_to_allow = how_to_allow
        self._names = frozenset(name.lower() for name in (*LOOPBACK, *self.names))
        self._verdicts: dict[str, bool] = {}  # Host values seen, and the verdict (a few, mostly)

    def __repr__(self) -> str:
        return f"HostPolicy({self.names!r})"

    def allows_host(self, host: str | None) -> bool:
        """`host` (a Host header's value: a name, with a port or not) is one the app answers to
        (the verdict kept for the values seen: a request's Host, an Origin's host)."""
        if not host:
            return False
        verdict = self._verdicts.get(host)
        if verdict is None:
            name, port = _split(host.lower())
            verdict = name in self._names and (port is None or port.isdigit())
            if len(self._verdicts) >= _KEPT_HOSTS:  # any value can be sent: kept no more than this many
                self._verdicts.clear()
            self._verdicts[host] = verdict
        return verdict

    def allows_origin(self, origin: str) -> bool:
        """`origin` (an Origin header's value) is a page of one of these hosts, http or https."""
        scheme, sep, rest = origin.lower().partition("://")
        return bool(sep) and scheme in ("http", "https") and "/" not in rest and self.allows_host(rest)

    def host_refusal(self, host: str | None, where: str = "") -> ApiError | None:
        """A 421 (MisdirectedRequest) naming the next step, or None when the host is allowed."""
        if self.allows_host(host):
            return None
        return MisdirectedRequest(f"this server does not answer to the host {host!r}{where}: {self.how_to_allow}")

    def origin_refusal(self, origin: str | None, where: str = "") -> Forbidden | None:
        if not origin or self.allows_origin(origin):
            return None
        return Forbidden(f"requests from the origin {origin!r} are not taken{where}: {self.how_to_allow}",
                         code="origin_not_allowed")


def _split(host: str) -> tuple[str, str | None]:
    """(name, port or None) of a Host value; an IPv6 literal keeps its brackets."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return host, None
        rest = host[end + 1:]
        return host[:end + 1], (rest[1:] if rest.startswith(":") else None if not rest else "")
    name, sep, port = host.partition(":")
    return name, port if sep else None
