"""What an adopting service plugs into the runtime besides its handlers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from evidencekit.server.runtime._auth import Auth, NoAuth


def never(exc: BaseException) -> bool:
    return False


@dataclass(frozen=True)
class ServiceHooks:
    auth: Auth = field(default_factory=NoAuth)
    # Whether an unexpected exception means a dependency (a database) is down: answered 503 with
    # `outage_message` and logged in one line (`outage_log`), instead of a 500 with a traceback.
    is_outage: Callable[[BaseException], bool] = never
    outage_message: str = "a service this server needs is unavailable; retry later"
    outage_log: str = "dependency unavailable"  # how the log line names it
