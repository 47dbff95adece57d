"""Which connections a server keeps when it is full: the address holding the most gives up its
oldest connection not in a request; past that, a reserve for health checks; then refusals."""

from __future__ import annotations

from evidencekit.server.runtime._connection_budget import Admission, ConnectionBudget


class Conn:
    def __init__(self, name: str, busy: bool = False) -> None:
        self.name, self.busy = name, busy

    def __repr__(self) -> str:
        return self.name


def idle(connection: Conn) -> bool:
    return not connection.busy


def test_under_the_budget_everyone_is_admitted_up_to_the_per_client_share() -> None:
    budget: ConnectionBudget[Conn] = ConnectionBudget(limit=10, per_client=2, reserve=1)
    assert budget.admit("a", Conn("a1"), idle) == (Admission.ADMITTED, None)
    assert budget.admit("a", Conn("a2"), idle) == (Admission.ADMITTED, None)
    assert budget.admit("a", Conn("a3"), idle) == (Admission.CLIENT_FULL, None)
    assert budget.total == 2 and budget.held_by("a") == 2


def test_a_full_budget_displaces_the_oldest_idle_connection_of_the_largest_holder() -> None:
    budget: ConnectionBudget[Conn] = ConnectionBudget(limit=6, per_client=10, reserve=0)
    flood = [Conn(f"x{n}") for n in range(4)] + [Conn(f"y{n}") for n in range(2)]
    for connection in flood:
        budget.admit(connection.name[0], connection, idle)
    newcomer = Conn("calm")
    assert budget.admit("calm", newcomer, idle) == (Admission.ADMITTED, flood[0])  # x held the most
    assert budget.total == 6 and budget.held_by("x") == 3
    flood[1].busy = True  # a request in progress is never displaced
    assert budget.admit("calm", Conn("calm2"), idle) == (Admission.ADMITTED, flood[2])
    budget.release("x", flood[2])  # its close, later: already let go, nothing changes
    assert budget.total == 6


def test_when_every_connection_is_in_a_request_only_the_reserve_remains_then_refusal() -> None:
    budget: ConnectionBudget[Conn] = ConnectionBudget(limit=2, per_client=10, reserve=1)
    for name in ("a", "b"):
        budget.admit(name, Conn(name, busy=True), idle)
    probe = Conn("probe", busy=True)
    assert budget.admit("probe", probe, idle) == (Admission.RESERVED, None)
    assert budget.admit("probe", Conn("probe2"), idle) == (Admission.FULL, None)
    assert budget.total == 3
    probe.busy = False  # answered, and waiting: a newcomer takes its reserved place, reserved too
    assert budget.admit("other", Conn("other"), idle) == (Admission.RESERVED, probe)


def test_many_addresses_flooding_never_keep_out_a_client_with_few_connections() -> None:
    """Nine addresses keep opening connections that send nothing; a tenth opens one now and then:
    it always gets in, and the flood never holds more than the budget."""
    budget: ConnectionBudget[Conn] = ConnectionBudget(limit=100, per_client=50, reserve=4)
    held: list[tuple[str, Conn]] = []
    for round_ in range(30):
        for n in range(9):
            for _ in range(20):
                connection = Conn(f"{n}")
                verdict, displaced = budget.admit(f"10.0.0.{n}", connection, idle)
                if verdict in (Admission.ADMITTED, Admission.RESERVED):
                    held.append((f"10.0.0.{n}", connection))
        calm = Conn(f"calm{round_}", busy=True)  # it sends its request at once
        assert budget.admit("192.0.2.1", calm, idle)[0] is Admission.ADMITTED
        assert budget.total <= 100
    assert budget.held_by("192.0.2.1") == 30  # none of the calm client's requests was displaced
