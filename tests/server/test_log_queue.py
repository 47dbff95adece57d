"""Logging off the event loop: records are written by a thread, in order and in batches, formatted
as before; a warning at once; nothing queued is lost when the process ends."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from evidencekit.server.runtime.log_queue import INTERVAL, BatchedLog

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (\w+) (\S+) (.*)$")


def test_records_are_written_in_order_in_batches_by_another_thread(tmp_path: Path) -> None:
    out = (tmp_path / "log.txt").open("w")
    handler = BatchedLog(out)
    writes: list[str] = []
    real_write = out.write

    def write(text: str) -> int:
        writes.append(threading.current_thread().name)
        return real_write(text)

    out.write = write  # type: ignore[method-assign]
    logger = logging.getLogger("evidencekit.test.queue")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        for number in range(500):
            logger.info("%s %s %.1fms", "POST", f"/path/{number}", 1.25)
        logger.debug("never written: below the level")
        time.sleep(INTERVAL * 4)
        assert writes and set(writes) == {"evidencekit-log-writer"} and len(writes) < 50
        logger.warning("written at once, after the lines before it")
        assert (tmp_path / "log.txt").read_text().splitlines()[-1].endswith("after the lines before it")
    finally:
        handler.close()
        logger.removeHandler(handler)
        out.close()
    lines = (tmp_path / "log.txt").read_text().splitlines()
    assert len(lines) == 501
    assert [LINE.match(line).groups() for line in lines[:2]] == [  # type: ignore[union-attr]
        ("INFO", "evidencekit.test.queue", "POST /path/0 1.2ms"), ("INFO", "evidencekit.test.queue", "POST /path/1 1.2ms")]
    assert lines[499].endswith("/path/499 1.2ms")


def test_what_is_queued_at_exit_is_written() -> None:
    program = ("import logging\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "configure_logging('INFO')\n"
               "log = logging.getLogger('evidencekit.access')\n"
               "for n in range(2000):\n"
               "    log.info('line %d', n)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True,
                          cwd=ROOT)
    lines = done.stderr.splitlines()
    assert len(lines) == 2000 and lines[-1].endswith("INFO evidencekit.access line 1999")


def test_lines_waiting_when_sigterm_ends_the_process_are_written() -> None:
    """What uvicorn does after a graceful shutdown: it raises SIGTERM again, whose default action
    runs no exit handler."""
    program = ("import logging, os, signal\n"
               "from evidencekit.server.evidence.env_check import configure_logging\n"
               "configure_logging('INFO')\n"
               "logging.getLogger('uvicorn.error').info('Finished server process')\n"
               "signal.raise_signal(signal.SIGTERM)\n"
               "print('not reached')\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == -15 and "not reached" not in done.stdout
    assert done.stderr.rstrip().endswith("INFO uvicorn.error Finished server process")
