"""`evidencekit codegen generate | check | lock | diff` (also `python -m evidencekit.codegen ...`).

Run from the adopting project's root (or below it): the configuration is its pyproject.toml's
`[tool.evidencekit.codegen]` table (see evidencekit.codegen._config)."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from evidencekit.codegen._breaking import Compatibility
from evidencekit.codegen._config import TABLE, CodegenConfig, load_config
from evidencekit.codegen._gate import ACCEPT_HINT, LockDecision, against, decide
from evidencekit.codegen._handler_check import DriftReport, handlers_drift
from evidencekit.codegen._lock import lock_problems, write_lock
from evidencekit.codegen._locked import merge_base
from evidencekit.codegen._schema_diff import POLICIES
from evidencekit.codegen._views import query_input_problems, success_status
from evidencekit.codegen._ways_out import flag_mismatch, lenient_alternative, lenient_hint
from evidencekit.contracts._examples import example_problems
from evidencekit.contracts._loader import (
    ContractError,
    Operation,
    load_operation,
    load_operations,
    read_json,
)
from evidencekit.contracts._policy import DEFAULT_MAX_REQUEST_BYTES, request_limit
from evidencekit.contracts._validation import engine_problems


def _config(args: argparse.Namespace) -> CodegenConfig:
    config = load_config(args.project)
    if args.contracts is not None:
        config = replace(config, contracts=args.contracts.resolve())
    return config


def _contracts(args: argparse.Namespace) -> Path:
    """The contracts folder: --contracts, else the configured one."""
    return args.contracts.resolve() if args.contracts is not None else load_config(args.project).contracts


def _project(args: argparse.Namespace) -> CodegenConfig | None:
    """The project's configuration; None when there is none (diff of two folders, say)."""
    with contextlib.suppress(ContractError):
        return load_config(getattr(args, "project", None))
    return None


def _default_limit(args: argparse.Namespace) -> int:
    """The project's `max_request_bytes` (the lock records each operation's limit)."""
    project = _project(args)
    return project.max_request_bytes if project is not None else DEFAULT_MAX_REQUEST_BYTES


def _compatibility(args: argparse.Namespace) -> Compatibility:
    """The flags, else the project's `compatibility` and `compatibility_mode`, else the defaults."""
    project = _project(args)
    configured = project.compatibility if project is not None else Compatibility()
    try:
        return Compatibility.parse(args.compatibility or configured.policy,
                                   args.compatibility_mode or configured.mode_name)
    except ValueError as exc:
        raise ContractError(Path("--compatibility-mode"), str(exc)) from None


def _load(contracts: Path) -> list[Operation]:
    """The operations, refused when one cannot be served as its manifest says (a GET input a query
    string cannot carry, a success status without a body), when the serving validator cannot
    compile a schema, or when a published example breaks its own schemas: what `generate` refuses,
    `lock` and `check` refuse too."""
    operations = load_operations(contracts)
    for op in operations:
        query_input_problems(op)
        success_status(op)
    unservable = [problem for op in operations for problem in engine_problems(op)]
    if unservable:
        raise ContractError(contracts, "schemas the server could not validate with:\n  " + "\n  ".join(unservable))
    problems = [problem for op in operations for problem in example_problems(op)]
    if problems:
        raise ContractError(contracts, "published examples that their own schemas refuse:\n  " + "\n  ".join(problems))
    return operations


def _say(*lines: str) -> None:
    for line in lines:
        print(line)


def _err(*lines: str) -> None:
    for line in lines:
        print(line, file=sys.stderr)


MISMATCH_NOTE = ("clients of the locked contract stay served after a compatible change (the lock records "
                 "their hash as compatible); after a breaking one the server refuses them (412 contract_mismatch) "
                 "and they raise ContractMismatch: regenerate both")


def _report(decision: LockDecision) -> list[str]:
    """The changes since the lock, a line each, and how many break clients (nothing when none)."""
    if not decision.lines:
        return []
    breaking = decision.breaking
    return ["changes since the lock:", *(f"  {line}" for line in decision.lines),
            f"{breaking} breaking change{'' if breaking == 1 else 's'} in all"]


def _lenient_hint(operations: list[Operation], root: Path, decision: LockDecision,
                  compatibility: Compatibility, default_limit: int) -> list[str]:
    """How many of the decision's breaks the lenient policy accepts, and the line that chooses it."""
    lenient = lenient_alternative(compatibility)
    if lenient is None or not decision.breaking:
        return []
    return lenient_hint(decision.breaking, decide(operations, root, None, lenient, default_limit).breaking)


def _changes_since_lock(operations: list[Operation], root: Path,
                        compatibility: Compatibility | None = None,
                        default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> list[str]:
    """What changed since the lock, and the step that accepts it: a breaking change needs its
    version raised and `lock --accept-breaking` (a plain `lock` refuses it), or the lenient policy
    when it accepts the change."""
    decision = decide(operations, root, None, compatibility, default_limit)
    report = _report(decision)
    if decision.breaking or decision.refused:
        step = f"after review, {ACCEPT_HINT}"
    else:
        step = "after review, accept the change with `evidencekit codegen lock`"
    hint = _lenient_hint(operations, root, decision, compatibility or Compatibility(), default_limit)
    return [*report, f"note: {MISMATCH_NOTE}", step, *hint] if report else [step]


def cmd_generate(args: argparse.Namespace) -> int:
    from evidencekit.codegen._generate import plan, write

    started = time.perf_counter()
    config = _config(args)
    operations = _load(config.contracts)
    problems = lock_problems(operations, config.contracts, config.max_request_bytes)
    if problems:
        _err("refusing to generate from contracts that differ from the lock:", *(f"  {p}" for p in problems),
             *_changes_since_lock(operations, config.contracts, config.compatibility, config.max_request_bytes))
        return 1
    result = plan(config)
    changed = write(result, args.out or config.root)
    for note in result.notes:
        _say(f"note: {note.module}: {note.message}")
    _say(*(f"wrote {rel}" for rel in changed))
    drift = handlers_drift(config, operations, append=True) if args.out is None else DriftReport()
    _say(*drift.notes)
    _err(*drift.problems)
    _say(f"{len(result.files)} files from {len(operations)} contracts, {len(changed)} changed, "
         f"{time.perf_counter() - started:.2f}s")
    return 1 if drift.problems else 0


def cmd_check(args: argparse.Namespace) -> int:
    from evidencekit.codegen._generate import plan, stale

    started = time.perf_counter()
    config = _config(args)
    operations = _load(config.contracts)
    problems = lock_problems(operations, config.contracts, config.max_request_bytes)
    _err(*flag_mismatch(args.compatibility, args.compatibility_mode, config.compatibility))
    diffs = stale(plan(config), args.out or config.root)
    for diff in diffs:
        sys.stdout.write(diff if diff.endswith("\n") else diff + "\n")
    if problems:
        _err("lock out of date:", *(f"  {p}" for p in problems),
             *_changes_since_lock(operations, config.contracts, _compatibility(args), config.max_request_bytes),
             "then run `evidencekit codegen generate` and commit the result")
    elif diffs:
        _err(f"{len(diffs)} generated files are stale: run `evidencekit codegen generate` and commit the result")
    # the handlers against the protocol on disk: once it is current (against a stale one, regenerate first)
    drift = (handlers_drift(config, operations, append=False) if not (problems or diffs) and args.out is None
             else DriftReport())
    _say(*drift.notes)
    _err(*drift.problems)
    breaks = (_check_against(args.against, operations, config.contracts, _compatibility(args),
                             config.max_request_bytes)
              if args.against is not None else 0)
    if problems or diffs or breaks or drift.problems:
        return 1
    _say(f"ok: {len(operations)} contracts match the lock, generated code is current "
         f"({time.perf_counter() - started:.2f}s)")
    return 0


def _check_against(ref: str, operations: list[Operation], contracts: Path, compatibility: Compatibility,
                   default_limit: int = DEFAULT_MAX_REQUEST_BYTES) -> int:
    """Print every break since `ref` ("" for the merge base with main); the count not acknowledged."""
    if not ref:
        base = merge_base(contracts)
        if base is None:
            raise ContractError(contracts, "no main branch to compare with: pass --against REF")
        ref = base
    verdict = against(operations, contracts, ref, compatibility, default_limit)
    if verdict is None:
        raise ContractError(contracts, f"--against {ref!r} is not a commit of this repository")
    if verdict.lines:
        (_err if verdict.unacknowledged else _say)(f"breaking changes since {ref[:12]}:",
                                                   *(f"  {line}" for line in verdict.lines))
    if verdict.unacknowledged:
        _err(f"{verdict.unacknowledged} unacknowledged breaking change{'s' if verdict.unacknowledged > 1 else ''} "
             f"since {ref[:12]}; {ACCEPT_HINT}")
        lenient = lenient_alternative(compatibility)
        under_lenient = against(operations, contracts, ref, lenient, default_limit) if lenient else None
        if under_lenient is not None:
            _err(*lenient_hint(verdict.unacknowledged, under_lenient.unacknowledged))
    else:
        _say(f"ok: no unacknowledged breaking change since {ref[:12]} ({verdict.compared} operations changed, "
             f"{verdict.acknowledged} acknowledged breaks)")
    return verdict.unacknowledged


def cmd_lock(args: argparse.Namespace) -> int:
    if args.accept_breaking != (args.reason is not None):
        _err("--accept-breaking and --reason go together: say why clients must move")
        return 2
    if args.reason is not None and not args.reason.strip():
        _err("--reason must say why the break is accepted")
        return 2
    contracts = _contracts(args)
    operations = _load(contracts)
    compatibility, project, limit = _compatibility(args), _project(args), _default_limit(args)
    _say(f"compatibility: {compatibility}")
    if project is not None:
        _say(*flag_mismatch(args.compatibility, args.compatibility_mode, project.compatibility))
    decision = decide(operations, contracts, args.reason.strip() if args.reason else None, compatibility, limit)
    _say(*_report(decision))
    if decision.refused:
        _err("refusing to lock:", *(f"  {why}" for why in decision.refused),
             ACCEPT_HINT if not args.accept_breaking else "raise the major `version`, then lock again",
             *_lenient_hint(operations, contracts, decision, compatibility, limit))
        return 1
    changed = write_lock(operations, contracts, decision.history, decision.retired, limit)
    for op in operations:
        _say(f"{op.contract_hash}  {op.name}")
    _say("lock updated" if changed else "lock already current")
    return 0


def _direction_of(path: Path, given: str | None) -> str:
    if given:
        return given
    if "input" in path.name or "request" in path.name:
        return "request"
    if "output" in path.name or "response" in path.name:
        return "response"
    raise ContractError(path, "cannot tell request from response by the name: pass --direction")


def cmd_diff(args: argparse.Namespace) -> int:
    from evidencekit.codegen._breaking import operation_findings, schema_findings

    old, new = Path(args.old), Path(args.new)
    compatibility = _compatibility(args)
    pairs: list[tuple[str, dict[str, Any], dict[str, Any], str]] = []
    if old.is_dir() and new.is_dir():
        # compared by the operation they hold, whatever their folders are called
        # the old side may predate a manifest key the schema no longer knows: still comparable
        before = load_operation(old, named_by_folder=False, strict=False)
        after = load_operation(new, named_by_folder=False)
        limit = _default_limit(args)  # the project's, where a manifest sets none
        findings = operation_findings(before, after, compatibility,
                                      (request_limit(before.manifest, limit), request_limit(after.manifest, limit)))
        for where in dict.fromkeys(finding.where for finding in findings):
            _say(f"== {where}", *(finding.line for finding in findings if finding.where == where))
        breaking = sum(finding.breaking for finding in findings)
        _say(f"{len(findings)} change{'' if len(findings) == 1 else 's'}, {breaking} breaking" if findings
             else "no changes")
        return 1 if breaking else 0
    elif old.is_file() and new.is_file():
        pairs.append((f"{old.name} -> {new.name}", read_json(old), read_json(new), _direction_of(new, args.direction)))
    else:
        _err("diff takes two schema files or two operation folders")
        return 2
    breaking = 0
    for label, old_schema, new_schema, direction in pairs:
        findings = schema_findings(label, old_schema, new_schema, direction, compatibility)  # type: ignore[arg-type]
        breaking += sum(finding.breaking for finding in findings)
        for where in dict.fromkeys(finding.where for finding in findings):
            _say(f"== {where}", *(finding.line for finding in findings if finding.where == where))
        _say(f"{len(findings)} change{'' if len(findings) == 1 else 's'}, "
             f"{sum(f.breaking for f in findings)} breaking" if findings else "no changes")
    return 1 if breaking else 0


def build_parser(prog: str = "evidencekit codegen") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help_text: str, *, out: bool = False, project: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if project:
            sub.add_argument("--project", type=Path, default=None,
                             help=f"the project's root, whose pyproject.toml has {TABLE} "
                                  "(default: found from the working directory upwards)")
            sub.add_argument("--contracts", type=Path, default=None, help="contracts folder (default: the configured one)")
        if out:
            sub.add_argument("--out", type=Path, default=None,
                             help="root the generated tree is written under (default: the project's root)")
        return sub

    def compatibility_flags(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--compatibility", choices=POLICIES, default=None,
                         help="semantic (sound: judged by every possible instance) or lenient (clients send "
                              "and read only declared properties); default: the project's "
                              "`compatibility`, else semantic")
        sub.add_argument("--compatibility-mode", default=None, metavar="MODE",
                         help="backward (old clients, new server), forward (new clients, old servers) or "
                              "full, each optionally _transitive; default: the project's "
                              "`compatibility_mode`, else backward")

    add("generate", "write models, server skeleton, client, MCP descriptors, OpenAPI and docs", out=True)
    check = add("check", "fail with a diff when generated files are stale or the lock is out of date", out=True)
    check.add_argument("--against", nargs="?", const="", default=None, metavar="REF",
                       help="also fail on a breaking change since git REF that the lock does not acknowledge "
                            "(REF default: the merge base with main)")
    lock = add("lock", "pin the current contract hashes in contracts.lock.json; refuses a breaking change "
                       "unless acknowledged")
    lock.add_argument("--accept-breaking", action="store_true",
                      help="accept breaking changes (needs --reason and a higher major `version` in the manifest)")
    lock.add_argument("--reason", default=None, help="why clients must move; recorded in the lock")
    compatibility_flags(check)
    compatibility_flags(lock)
    diff = add("diff", "list changes between two versions of a contract, breaking or not; exit 1 if any is breaking",
               project=False)
    diff.add_argument("old")
    diff.add_argument("new")
    diff.add_argument("--direction", choices=("request", "response"), help="for two schema files")
    compatibility_flags(diff)
    return parser


HANDLERS = {"generate": cmd_generate, "check": cmd_check, "lock": cmd_lock, "diff": cmd_diff}


# What generate and check need beyond the toolkit's runtime: the `codegen` extra
CODEGEN_MODULES = ("jinja2", "datamodel_code_generator", "ruff")


def main(argv: list[str] | None = None, prog: str = "evidencekit codegen") -> int:
    args = build_parser(prog).parse_args(argv)
    missing = [name for name in CODEGEN_MODULES if importlib.util.find_spec(name) is None]
    if args.command in ("generate", "check") and missing:
        _err(f"{prog} {args.command}: needs {', '.join(missing)}, in the codegen extra: "
             "pip install 'evidencekit[codegen]'")
        return 2
    try:
        return HANDLERS[args.command](args)
    except (ContractError, ValueError) as exc:  # ValueError: a schema the differ cannot read (say, a bad $ref)
        _err(f"error: {exc}")
        return 2
    except OSError as exc:  # a page or folder that is not there or not readable
        _err(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
        return 2
