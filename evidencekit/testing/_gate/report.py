"""The human side of a run: a live progress line on stderr when it is a terminal (rich; plain lines
otherwise, so a CI log holds no escape codes; NO_COLOR respected), and the summary on stdout:
one line per operation, then every failure with its input and a one-line reproduction."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from evidencekit.testing._answers import as_json
from evidencekit.testing._gate.results import (
    CHECKS,
    NO_INPUT,
    PROTOCOL,
    Finding,
    RunReport,
    SurfaceReport,
)


class Display:
    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.live: Any = None
        self.current = ""
        self.held: list[str] = []  # while the live line is drawn: printed when it is gone
        if self.err.isatty() and os.environ.get("TERM") != "dumb":
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.live = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                 console=Console(file=self.err), transient=True)
            self.task = self.live.add_task("starting", total=None)
            self.live.start()

    def progress(self, surface: str, operation: str, phase: str, calls: int) -> None:
        where = f"{surface} {operation}: {phase} inputs"
        if self.live is not None:
            self.live.update(self.task, description=f"{where}, {calls} calls")
        elif where != self.current:
            print(where, file=self.err, flush=True)
        self.current = where

    def say(self, line: str = "") -> None:
        if self.live is not None:
            self.held.append(line)
        else:
            print(line, file=self.out, flush=True)

    def surface(self, surface: SurfaceReport) -> None:
        for line in surface_lines(surface):
            self.say(line)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        for line in self.held:
            print(line, file=self.out, flush=True)
        self.held = []


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def header(report: RunReport, operations: int) -> str:
    return (f"evidencekit conformance: {plural(operations, 'operation')} of {report.contracts} (lock "
            f"current), seed {report.seed}, {report.max_examples} inputs per operation and kind")


def surface_lines(surface: SurfaceReport) -> list[str]:
    lines = ["", f"{surface.surface}  {surface.target}"]
    if surface.unreachable:
        return [*lines, f"  UNREACHABLE  {surface.unreachable}"]
    mode = "on" if surface.protocol else "off"
    lines[-1] += f"  (toolkit-protocol checks {mode}: {surface.protocol_reason})"
    width = max((len(op.operation) for op in surface.operations), default=0)
    for op in surface.operations:
        if op.errors or op.findings:
            status = "FAIL"
        elif op.skipped and not op.checks:
            status = "skip"
        else:
            status = "ok"
        passed = len(op.checks) - len(op.findings)
        parts = [f"{passed}/{len(op.checks)} checks passed"] if op.checks else []
        if op.calls:
            parts.append(f"{op.calls} calls, {op.successes} successes")
        if op.coverage:
            parts.append(f"{op.coverage} coverage inputs")
        parts.append(f"{op.seconds:.1f} s")
        lines.append(f"  {status:<4}  {op.operation:<{width}}  " + ", ".join(parts))
        lines += [f"        skipped: {op.skipped}"] if op.skipped else []
        lines += [f"        note: {note}" for note in op.notes]
        lines += [f"        gate error: {error}" for error in op.errors]
    return lines


def failure_lines(report: RunReport) -> list[str]:
    lines: list[str] = []
    number = 0
    for op in report.operations():
        for check in CHECKS:
            finding = op.findings.get(check)
            if finding is None:
                continue
            number += 1
            lines += ["", f"{number}) {op.surface} {op.operation}: {check}",
                      *finding_lines(finding, "   ")]
    return (["", "Failures:", *lines] if lines else [])


def finding_lines(finding: Finding, indent: str = "") -> list[str]:
    kind = " (a toolkit-protocol check)" if CHECKS[finding.check][0] == PROTOCOL else ""
    lines = [f"{indent}{finding.message}{kind}"]
    if finding.input is not NO_INPUT:
        how = "shrunk" if finding.shrunk else (
            "did not repeat on replay" if finding.flaky else "coverage phase" if finding.coverage
            else "not shrunk")
        lines.append(f"{indent}input ({how}): {as_json(finding.input)}")
    if finding.reproduction:
        lines.append(f"{indent}reproduce: {finding.reproduction}")
    for more in finding.more:
        lines += [f"{indent}and: {more.message}", f"{indent}input (coverage phase): {as_json(more.input)}"]
        lines += [f"{indent}reproduce: {more.reproduction}"] if more.reproduction else []
    return lines


def closing_line(report: RunReport, junit: str | None) -> str:
    counted = ", ".join(f"{surface.surface} {sum(len(op.findings) for op in surface.operations)}"
                        for surface in report.surfaces if not surface.unreachable)
    words = [plural(report.violations, "violation") + (f" ({counted})" if counted else "")]
    if report.errors:
        words.append(plural(report.errors, "gate error"))
    if report.unreachable:
        words.append(f"{len(report.unreachable)} unreachable")
    words.append(f"{report.seconds:.1f} s")
    if junit:
        words.append(f"JUnit: {junit}")
    verdict = "conforms" if report.exit_code == 0 else "does not conform"
    return f"\n{verdict}: " + ", ".join(words) + f" (seed {report.seed})"
