"""`evidencekit conformance`: the conformance gate on the command line (docs/conformance.md).

Exit codes: 0 the target conforms, 1 violations (or a check the gate could not run), 2 bad usage
(flags, the contracts folder, a stale or missing lock), 3 a target could not be reached (and
nothing was found wrong on the others).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import random
import re
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_MAX_EXAMPLES = 50
DEFAULT_TIMEOUT = 10.0

DESCRIPTION = """\
Check a running server against the contracts and their lock: valid and invalid inputs generated
from each operation's published schemas (hypothesis-jsonschema) go to the target over REST, MCP
Streamable HTTP or MCP stdio, and every answer is checked. A failure is shrunk to a minimal input
and printed with a one-line reproduction (curl, or the JSON-RPC message).

Contract checks (always on): a success answer to a valid input satisfies every published output
variant; an invalid input is refused (REST 4xx; MCP isError or a JSON-RPC error); no 5xx, no
JSON-RPC internal error and no isError result saying the server failed (internal_error, say); MCP
tools/list names, inputSchema, the manifest's annotations and any listed outputSchema equal the
contract; X-Contract-Hash, when sent, is the lock's hash.
Toolkit-protocol checks (on when the REST answers carry X-Contract-Hash, or with --strict): the
hash on every answer, error bodies {error, message, code, request_id}, `fields` when an invalid
input is refused. Without them a missing header is a note, not a violation."""

EPILOG = """\
exit codes: 0 conforms, 1 violations, 2 usage, 3 unreachable (1 wins when both happen)

examples:
  evidencekit conformance --url http://127.0.0.1:8000 --header 'Authorization: Bearer ${TOKEN}'
  evidencekit conformance --mcp-url https://staging.example/mcp --read-only --junit conformance.xml
  evidencekit conformance --mcp-stdio "python -m my_api.serve stdio" --env API_TOKEN=s3cret"""


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments (also what shell completion reads)."""
    p = argparse.ArgumentParser(prog="evidencekit conformance", description=DESCRIPTION,
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--contracts", metavar="DIR", type=Path,
                   help="the contracts folder (<operation>/manifest.json and contracts.lock.json); "
                        "default: the one [tool.evidencekit.codegen] names in the pyproject.toml "
                        "here or above")
    where = p.add_argument_group("targets (one or more)")
    where.add_argument("--url", metavar="BASE",
                       help="REST: the base URL the operations' paths are under")
    where.add_argument("--mcp-url", metavar="URL",
                       help="MCP over Streamable HTTP: the endpoint's URL")
    where.add_argument("--mcp-stdio", metavar="COMMAND",
                       help="MCP over stdio: the server's command line, split as a shell would "
                            '("python -m my_api.serve stdio")')
    p.add_argument("--header", metavar="'NAME: VALUE'", action="append", default=[],
                   help="send this header on every HTTP request (repeatable); ${VAR} in the value "
                        "is read from the environment, so the secret stays off the command line; "
                        "reproductions show every such header as a placeholder ($TOKEN)")
    p.add_argument("--env", metavar="NAME=VALUE", action="append", default=[],
                   help="an environment variable for the --mcp-stdio process, beside this one's "
                        "(repeatable; ${VAR} is read from the environment)")
    p.add_argument("--set", metavar="[OPERATION:]NAME=VALUE", action="append", default=[],
                   dest="pins",
                   help="pin a top-level input property in every generated input that has it "
                        "(repeatable): ids the target holds, a URL that leads nowhere; VALUE is "
                        "JSON, or text")
    p.add_argument("--operation", metavar="NAME", action="append", default=[],
                   help="check only this operation (repeatable; default: every one)")
    p.add_argument("--read-only", action="store_true",
                   help="call only operations whose manifest annotates readOnlyHint: true (for "
                        "production): no valid or invalid input reaches any other operation")
    p.add_argument("--strict", action="store_true",
                   help="apply the toolkit-protocol checks even when the answers carry no "
                        "X-Contract-Hash (MCP carries none: use it for a toolkit server's MCP)")
    p.add_argument("--require-success", action="store_true",
                   help="fail an operation when no valid input got a success answer (default: a "
                        "note: an answer never given was never checked)")
    p.add_argument("--seed", type=int,
                   help="the random seed, to repeat a run (default: a new one, printed)")
    p.add_argument("--max-examples", type=int, default=DEFAULT_MAX_EXAMPLES, metavar="N",
                   help="valid and invalid inputs each, per operation (default "
                        f"{DEFAULT_MAX_EXAMPLES}); shrinking a failure makes more calls")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"per call and for connecting (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--junit", metavar="FILE", type=Path, help="also write the results as JUnit XML")
    return p


class Usage(Exception):
    """Bad usage: the message names the problem (exit 2)."""


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(text: str, option: str) -> str:
    def value(match: re.Match[str]) -> str:
        if match[1] not in os.environ:
            raise Usage(f"{option} names ${{{match[1]}}}, which is not set in the environment")
        return os.environ[match[1]]

    return _VARIABLE.sub(value, text)


def headers_of(given: list[str]) -> dict[str, str]:
    headers = {}
    for text in given:
        name, sep, value = text.partition(":")
        if not sep or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name.strip()):
            raise Usage(f"--header {text.split(':')[0]!r}...: expected 'NAME: VALUE'")
        headers[name.strip()] = expand(value.strip(), "--header")
    return headers


def environment_of(given: list[str]) -> dict[str, str]:
    env = dict(os.environ)
    for text in given:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise Usage(f"--env {text!r}: expected NAME=VALUE")
        env[name] = expand(value, "--env")
    return env


def contracts_folder(given: Path | None) -> Path:
    if given is not None:
        if not given.is_dir():
            raise Usage(f"--contracts {given}: no such folder")
        return given
    from evidencekit.codegen._config import ConfigError, load_config

    try:
        return load_config().contracts
    except ConfigError as exc:
        raise Usage(f"--contracts DIR is needed: {exc.message}") from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # exits 2 on a bad flag
    missing = [name for name in ("hypothesis", "hypothesis_jsonschema")
               if importlib.util.find_spec(name) is None]
    if missing:
        print(f"evidencekit conformance: needs {', '.join(missing)}, in the testing extra: "
              "pip install 'evidencekit[testing]'", file=sys.stderr)
        return 2
    try:
        with _hypothesis_storage():
            return _run(args)
    except Usage as exc:
        print(f"evidencekit conformance: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evidencekit conformance: interrupted", file=sys.stderr)
        return 130


@contextlib.contextmanager
def _hypothesis_storage() -> Iterator[None]:
    """Hypothesis's caches in the user's cache folder, not a `.hypothesis/` in the working directory
    (unless HYPOTHESIS_STORAGE_DIRECTORY says where); as they were after the run."""
    from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    import platformdirs

    before = storage_directory(intent_to_write=False).home_directory
    set_hypothesis_home_dir(Path(platformdirs.user_cache_dir("evidencekit")) / "hypothesis")
    try:
        yield
    finally:
        set_hypothesis_home_dir(before)


def _run(args: argparse.Namespace) -> int:
    from evidencekit.contracts._loader import ContractError
    from evidencekit.testing._contracts import load_contracts
    from evidencekit.testing._gate.inputs import Pin, PinError, check_pins
    from evidencekit.testing._gate.runner import Options, chosen

    if not (args.url or args.mcp_url or args.mcp_stdio):
        raise Usage("name a target: --url BASE, --mcp-url URL or --mcp-stdio COMMAND (see --help)")
    if args.max_examples < 1 or args.timeout <= 0:
        raise Usage("--max-examples must be at least 1 and --timeout more than 0")
    folder = contracts_folder(args.contracts)
    try:
        contracts = load_contracts(folder)
    except ContractError as exc:
        raise Usage(f"the contracts cannot be read: {exc}") from None
    stale = [contract.stale for contract in contracts.values() if contract.stale]
    if stale:
        raise Usage("the lock does not pin these contracts:\n  "
                    + "\n  ".join(s for s in stale if s))
    unknown = sorted(set(args.operation) - set(contracts))
    if unknown:
        raise Usage(f"--operation {', '.join(unknown)}: no such operation in {folder}")
    targets = _targets(args)
    options = Options(max_examples=args.max_examples, seed=args.seed if args.seed is not None
                      else random.randrange(2**32), read_only=args.read_only, strict=args.strict,
                      require_success=args.require_success, operations=args.operation)
    for target in targets:
        if not any(variant for _, variant, _ in chosen(target, contracts, options)):
            raise Usage(f"{target.surface}: no chosen operation of {folder} is published there")
    try:
        pins = [Pin.parse(text) for text in args.pins]
        check_pins(pins, [(contract, variant) for target in targets
                          for contract, variant, _ in chosen(target, contracts, options) if variant],
                   known=list(contracts))
    except PinError as exc:
        raise Usage(str(exc)) from None
    return _gate(targets, contracts, options, pins, folder, args.junit)


def _targets(args: argparse.Namespace) -> list[Any]:
    """The targets named, in the order REST, MCP over HTTP, MCP over stdio (the MCP SDK is imported
    only when one is named: it takes a second)."""
    headers = headers_of(args.header)
    targets: list[Any] = []
    if args.url:
        from evidencekit.testing._gate.rest import RestTarget

        targets.append(RestTarget(args.url, headers, args.timeout))
    if args.mcp_url:
        from evidencekit.testing._gate.mcp import http_target

        targets.append(http_target(args.mcp_url, headers, args.timeout))
    if args.mcp_stdio:
        from evidencekit.testing._gate.mcp import stdio_target

        argv = shlex.split(args.mcp_stdio)
        if not argv:
            raise Usage("--mcp-stdio: an empty command")
        targets.append(stdio_target(argv, environment_of(args.env), args.timeout))
    return targets


def _gate(targets: list[Any], contracts: dict[str, Any], options: Any, pins: list[Any],
          folder: Path, junit: Path | None) -> int:
    from dataclasses import replace

    from evidencekit.testing._gate import report as shown
    from evidencekit.testing._gate.junit import write_junit
    from evidencekit.testing._gate.results import RunReport, SurfaceReport
    from evidencekit.testing._gate.runner import run_surface
    from evidencekit.testing._gate.targets import Unreachable

    started = time.monotonic()
    display = shown.Display()
    options = replace(options, pins=pins, progress=display.progress)
    run = RunReport(str(folder), options.seed, options.max_examples)
    display.say(shown.header(run, len(options.operations or contracts)))
    try:
        for target in targets:
            try:
                surface = run_surface(target, contracts, options)
            except Unreachable as exc:
                surface = SurfaceReport(target.surface, target.shown, unreachable=str(exc))
                print(f"evidencekit conformance: {target.surface} unreachable: {exc}",
                      file=sys.stderr)
            run.surfaces.append(surface)
            display.surface(surface)
        run.seconds = time.monotonic() - started
        for line in shown.failure_lines(run):
            display.say(line)
        if junit is not None:
            write_junit(run, junit)
        display.say(shown.closing_line(run, str(junit) if junit else None))
    finally:
        display.close()
    return run.exit_code
