"""A run as JUnit XML, the format CI systems render: one testsuite per surface and operation, one
testcase per check (a failure holds the message, the input and the reproduction), a skipped
testcase for an operation that was not called, an error testcase for an unreachable target or a
check the gate could not run; notes go to the suite's system-out."""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ElementTree
from datetime import UTC, datetime
from pathlib import Path

from evidencekit.testing._gate.report import finding_lines
from evidencekit.testing._gate.results import CHECKS, OperationReport, RunReport, SurfaceReport

# What XML 1.0 cannot hold (control characters, lone surrogates): a server's text may have it.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _case(suite: ElementTree.Element, classname: str, name: str,
          seconds: float = 0.0) -> ElementTree.Element:
    return ElementTree.SubElement(suite, "testcase", classname=classname, name=name,
                                  time=_seconds(seconds))


def _operation_suite(root: ElementTree.Element, surface: SurfaceReport, op: OperationReport,
                     stamp: str) -> None:
    suite = ElementTree.SubElement(root, "testsuite", name=f"{surface.surface} {op.operation}",
                                   timestamp=stamp, hostname=socket.gethostname())
    properties = ElementTree.SubElement(suite, "properties")
    for name, value in (("target", surface.target),
                        ("toolkit_protocol", str(surface.protocol).lower()),
                        ("calls", str(op.calls)), ("successes", str(op.successes))):
        ElementTree.SubElement(properties, "property", name=name, value=value)
    classname = f"{surface.surface}.{op.operation}"
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for check in op.checks:
        case = _case(suite, classname, check)
        counts["tests"] += 1
        finding = op.findings.get(check)
        if finding is not None:
            counts["failures"] += 1
            failure = ElementTree.SubElement(case, "failure", type=check,
                                             message=_text(finding.message))
            failure.text = _text("\n".join([CHECKS[check][1], *finding_lines(finding)]))
    if op.skipped:
        counts["tests"] += 1
        counts["skipped"] += 1
        skipped = _case(suite, classname, "calls")
        ElementTree.SubElement(skipped, "skipped", message=_text(op.skipped))
    for error in op.errors:
        counts["tests"] += 1
        counts["errors"] += 1
        ElementTree.SubElement(_case(suite, classname, "gate"), "error", type="gate_error",
                               message=_text(error))
    if op.notes:
        notes = "\n".join(f"note: {note}" for note in op.notes)
        ElementTree.SubElement(suite, "system-out").text = _text(notes)
    suite.attrib.update({key: str(value) for key, value in counts.items()},
                        time=_seconds(op.seconds))


def _unreachable_suite(root: ElementTree.Element, surface: SurfaceReport, stamp: str) -> None:
    suite = ElementTree.SubElement(root, "testsuite", name=surface.surface, tests="1",
                                   failures="0", errors="1", skipped="0",
                                   time=_seconds(surface.seconds), timestamp=stamp,
                                   hostname=socket.gethostname())
    case = _case(suite, surface.surface, "reachable", surface.seconds)
    ElementTree.SubElement(case, "error", type="unreachable",
                           message=_text(surface.unreachable or ""))


def junit_xml(report: RunReport) -> ElementTree.ElementTree:
    stamp = datetime.now(UTC).replace(microsecond=0).isoformat()
    root = ElementTree.Element("testsuites", name="evidencekit conformance")
    for surface in report.surfaces:
        if surface.unreachable:
            _unreachable_suite(root, surface, stamp)
        for op in surface.operations:
            _operation_suite(root, surface, op, stamp)
    totals = {key: sum(int(suite.get(key, "0")) for suite in root)
              for key in ("tests", "failures", "errors")}
    root.attrib.update({key: str(value) for key, value in totals.items()},
                       time=_seconds(report.seconds))
    tree = ElementTree.ElementTree(root)
    ElementTree.indent(tree)
    return tree


def write_junit(report: RunReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_xml(report).write(path, encoding="utf-8", xml_declaration=True)
