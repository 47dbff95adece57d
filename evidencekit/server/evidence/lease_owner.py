"""Who holds a lease, precisely enough to tell, on the same machine, that the holder is dead.

A worker's id names its host, the kernel's boot id and its process (pid and start time, which
together are unique within one boot). A process that starts on the same machine can then tell
that a lease holder of this boot whose process is gone (or is another process reusing its pid)
died, and take its receipts up at once instead of waiting out the lease. Holders on other
machines, or of an earlier boot here, are left to their leases' expiry.
"""

from __future__ import annotations

import hashlib
import os
import socket
import uuid
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str:
    """This boot of this machine ('' where the kernel does not say: nothing is then reclaimed early)."""
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip().replace("-", "")
    except OSError:
        return ""


def start_time(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (field 22 of /proc/PID/stat); None when there
    is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else None


def host_prefix() -> str:
    """`host:boot:`, at most 34 characters: a longer hostname is cut to 9 and a digest of it (a
    cloud VM's or a pod's name is often 30 or more), the boot id to 16 hex digits, so that a worker
    id fits the 64 characters of `receipt.lease_owner` (a longer one failed every claim on PostgreSQL)."""
    host = socket.gethostname()
    if len(host) > 16:
        host = f"{host[:9]}-{hashlib.sha256(host.encode()).hexdigest()[:6]}"
    return f"{host}:{boot_id()[:16]}:"


def worker_id(pid: int | None = None) -> str:
    """`host:boot:pid:start:random`, at most 64 characters (host_prefix)."""
    pid = os.getpid() if pid is None else pid
    return f"{host_prefix()}{pid}:{start_time(pid) or '0'}:{uuid.uuid4().hex[:8]}"


def is_dead_here(owner: str) -> bool:
    """Whether `owner` was a process of this machine's current boot that no longer runs."""
    prefix = host_prefix()
    if not boot_id() or not owner.startswith(prefix):
        return False
    parts = owner[len(prefix):].split(":")
    if len(parts) != 3 or not parts[0].isdigit():
        return False
    pid, started = int(parts[0]), parts[1]
    return start_time(pid) != started  # gone, or its pid now belongs to another process
