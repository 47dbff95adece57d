"""What the runtime reads of anyio that anyio does not publish: the only module that touches its
private names (`anyio._backends._asyncio._task_states`, its TaskState's `cancel_scope`, and a
CancelScope's `_parent_scope`).

anyio has no public way to ask whether *another* task is inside a shielded cancel scope (its
`current_effective_deadline` answers for the current task only). mcp_streams' idle timer asks it of
the request's task from a loop callback, so that a section the app shields (`anyio.to_thread.run_sync`,
and so Starlette's `run_in_threadpool`, waits for its thread in one) is not cut.

tests/server/test_anyio_adapter.py holds `shielded` to anyio's behaviour (a shield of the task's own
scopes, nested or in a thread wait, counts; an unshielded scope, another task's shield, a scope left
or a finished task does not), on the lowest and highest anyio the pin in pyproject.toml allows:
4.10.0 and 4.16.0 tested (the last release of each minor between passed too). A release that moves
these names makes `shielded` always False (the timer then cuts shielded sections), which those
tests fail on.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

try:
    from anyio._backends._asyncio import _task_states
except ImportError:  # pragma: no cover - an anyio without it: nothing is seen as shielded
    _task_states = weakref.WeakKeyDictionary()


def shielded(task: asyncio.Task[Any]) -> bool:
    """Whether `task` is now inside an anyio cancel scope that shields it from cancellation (the
    innermost scope or any scope around it, up to the task's first)."""
    state = _task_states.get(task)
    scope = state.cancel_scope if state is not None else None
    while scope is not None:
        if scope.shield:
            return True
        scope = getattr(scope, "_parent_scope", None)
    return False
