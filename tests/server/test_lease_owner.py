"""Lease holders of this machine are told dead precisely: gone, or their pid reused."""

from __future__ import annotations

import os
import subprocess

from evidencekit.server.evidence import lease_owner


def test_a_live_process_is_not_dead_and_a_gone_one_is() -> None:
    me = lease_owner.worker_id()
    assert me.startswith(lease_owner.host_prefix()) and not lease_owner.is_dead_here(me)
    child = subprocess.Popen(["sleep", "30"])
    owner = lease_owner.worker_id(child.pid)
    assert not lease_owner.is_dead_here(owner)
    child.kill()
    child.wait()
    assert lease_owner.is_dead_here(owner)


def test_a_reused_pid_and_other_machines_are_told_apart() -> None:
    prefix = lease_owner.host_prefix()
    reused = f"{prefix}{os.getpid()}:1:abcd1234"  # this pid, another start time: another process
    assert lease_owner.is_dead_here(reused)
    assert not lease_owner.is_dead_here(f"elsewhere:{lease_owner.boot_id()}:1:1:abcd1234")  # another host
    assert not lease_owner.is_dead_here(f"{prefix[:-1]}x:1:1:abcd")  # malformed: never judged dead
    assert not lease_owner.is_dead_here("old-style-host:123:abcd1234")


def test_a_worker_id_fits_the_lease_column_whatever_the_hostname() -> None:
    """`receipt.lease_owner` holds 64 characters; with a cloud VM's hostname the id was 80 and more,
    and every claim failed on PostgreSQL (value too long)."""
    import socket

    import pytest

    patch = pytest.MonkeyPatch()
    try:
        for host in ("ek", "ip-10-0-1-23.eu-west-1.compute.internal", "x" * 63):
            patch.setattr(socket, "gethostname", lambda host=host: host)
            me = lease_owner.worker_id()
            assert len(me) <= 64, me
            assert not lease_owner.is_dead_here(me)  # still told alive by the same machine
        patch.setattr(socket, "gethostname", lambda: "ip-10-0-1-23.eu-west-1.compute.internal")
        one = lease_owner.host_prefix()
        patch.setattr(socket, "gethostname", lambda: "ip-10-0-1-24.eu-west-1.compute.internal")
        assert lease_owner.host_prefix() != one  # two machines cut to the same 9 characters differ
    finally:
        patch.undo()
