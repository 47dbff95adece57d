"""Which connections a server holds: a global budget, a share per client address, and a reserve for
health checks, decided as each connection arrives.

- One address holds at most `per_client` connections; more are refused.
- Past `limit` connections in all, a new one takes the place of a connection that is not in a
  request (a head still arriving, or a keep-alive connection waiting): the oldest such connection
  of the address that holds the most. Whoever opens many connections and sends nothing (partial
  heads, reopened after each 408) only ever displaces its own, or its peers', while a client with a
  few connections gets in.
- When every connection is in a request, up to `reserve` more are let in as reserved: they may ask
  only for the reserved paths (a health check), so a load balancer's probe is answered while the
  operations are saturated. Past that, a new connection is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Generic, TypeVar

C = TypeVar("C")


class Admission(Enum):
    ADMITTED = "admitted"
    RESERVED = "reserved"  # past the budget: reserved paths only
    CLIENT_FULL = "client_full"  # refused: the address holds its share
    FULL = "full"  # refused: the budget and its reserve are in requests


class ConnectionBudget(Generic[C]):
    def __init__(self, limit: int, per_client: int, reserve: int) -> None:
        self.limit, self.per_client, self.reserve = limit, per_client, reserve
        self._by_client: dict[str, dict[C, None]] = {}  # insertion-ordered: oldest first
        self._reserved: set[C] = set()  # admitted past the limit
        self.total = 0

    def held_by(self, client: str) -> int:
        return len(self._by_client.get(client, ()))

    def admit(self, client: str, connection: C, idle: Callable[[C], bool]) -> tuple[Admission, C | None]:
        """Whether `connection` from `client` may stay, and the connection it displaces (already
        released here; the caller closes it)."""
        if self.held_by(client) >= self.per_client:
            return Admission.CLIENT_FULL, None
        verdict, victim = Admission.ADMITTED, None
        if self.total >= self.limit:
            found = self._victim(idle)
            if found is not None:
                victim = found[1]
                if victim in self._reserved:  # its place was a reserved one: so is the newcomer's
                    verdict = Admission.RESERVED
                self.release(*found)
            elif self.total >= self.limit + self.reserve:
                return Admission.FULL, None
            else:
                verdict = Admission.RESERVED
        self._by_client.setdefault(client, {})[connection] = None
        self.total += 1
        if verdict is Admission.RESERVED:
            self._reserved.add(connection)
        return verdict, victim

    def release(self, client: str, connection: C) -> None:
        """Forget `connection` of `client` (closed, or displaced); a second call does nothing."""
        held = self._by_client.get(client)
        if held is not None and connection in held:
            del held[connection]
            self._reserved.discard(connection)
            self.total -= 1
            if not held:
                del self._by_client[client]

    def _victim(self, idle: Callable[[C], bool]) -> tuple[str, C] | None:
        """The oldest connection not in a request of the address holding the most (with that address)."""
        for client, held in sorted(self._by_client.items(), key=lambda item: len(item[1]), reverse=True):
            for connection in held:
                if idle(connection):
                    return client, connection
        return None
