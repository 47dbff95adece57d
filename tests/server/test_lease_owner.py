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
