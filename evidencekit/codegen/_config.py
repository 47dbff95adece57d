"""The generator's configuration: `[tool.evidencekit.codegen]` in the adopting project's pyproject.toml.

    [tool.evidencekit.codegen]
    contracts = "contracts"             # folder of <operation>/manifest.json and contracts.lock.json
    package = "myapi.generated"         # receives the models, server skeleton and OpenAPI document
    client_package = "myapi.client"     # optional: the generated client, with its own copy of the
                                        # models it sends and receives: it imports nothing of
                                        # `package` (default: `package`, the client beside the server)
    source_root = "src"                 # optional: where packages live (default: the project root)
    docs = "docs/reference"             # optional: reference pages (default: none written)
    title = "My API"                    # the OpenAPI title (default: the project's name)
    version = "1.0.0"                   # optional: the OpenAPI version (default: the contract hashes)
    max_request_bytes = 65536           # optional: the largest request body (an operation's manifest
                                        # may set its own `max_request_bytes`); 413 past it
    allowed_hosts = ["api.example.com"] # optional: hostnames the app answers to besides loopback, on
                                        # every route but /healthz (DNS rebinding protection; any
                                        # port; /mcp takes their http and https origins)
    healthz = false                     # optional: serve no GET /healthz (default true: 200
                                        # {"status": "ok"}, no token; a route of the project's own
                                        # at /healthz, given to create_app, is served instead)
    handlers = "myapi.handlers:Handlers"  # optional: the class implementing the generated Handlers
                                        # protocol (default: what `init` writes, <package less
                                        # .generated>.handlers:Handlers); generate appends stubs to it,
                                        # generate and check type-check it (codegen/_handler_check.py)
    handlers_check = false              # optional: no stubs appended, no type check (default true)

    [tool.evidencekit.codegen.errors."409"]   # optional: errors the project's handlers raise
    name = "Conflict"
    description = "The request conflicts with an earlier one."
    read_only = false                   # false: not listed on read-only operations (default: true)
    operations = ["add_book"]           # optional: listed only on these operations (default: all)

An operation's REST path may not be one the runtime serves itself: /mcp, /openapi.json, /healthz
(also with `healthz = false`), /docs and anything beneath it (contracts._loader.RESERVED_PATHS).

Every path is relative to the project root: the folder of that pyproject.toml, found from the
working directory upwards. The generator owns `package` (and `client_package`, `docs`) entirely.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evidencekit.codegen._breaking import Compatibility
from evidencekit.contracts._loader import ContractError
from evidencekit.contracts._policy import DEFAULT_MAX_REQUEST_BYTES

TABLE = "[tool.evidencekit.codegen]"
_KEYS = {"contracts", "package", "client_package", "source_root", "docs", "title", "version", "errors",
         "max_request_bytes", "allowed_hosts", "healthz", "compatibility", "compatibility_mode", "handlers",
         "handlers_check"}
_ERROR_KEYS = {"name", "description", "read_only", "operations"}


class ConfigError(ContractError):
    """The configuration is missing or malformed; the message says what to write where."""


@dataclass(frozen=True)
class ErrorResponse:
    """An error answer listed in the OpenAPI document: its component name, when it happens and
    whether read-only operations can give it."""

    name: str
    description: str
    read_only: bool = True
    operations: tuple[str, ...] = ()  # only these operations answer it (empty: every one)

    def applies_to(self, operation: str, read_only: bool) -> bool:
        return (self.read_only or not read_only) and (not self.operations or operation in self.operations)


# The errors the toolkit's runtime answers by itself, for every project.
RUNTIME_ERRORS: dict[str, ErrorResponse] = {
    "400": ErrorResponse("BadRequest", "The body is not JSON or does not match the contract (`fields` names "
                                       "every failing field), or `X-Contract-Hash` is no contract hash "
                                       "(code `invalid_contract_hash`)."),
    "401": ErrorResponse("Unauthorized", "Missing or invalid bearer token (`WWW-Authenticate: Bearer`)."),
    "403": ErrorResponse("Forbidden", "The credential lacks a permission the operation requires."),
    "405": ErrorResponse("MethodNotAllowed", "The path exists, the method does not (`Allow` lists the one "
                                             "that does)."),
    "412": ErrorResponse("ContractMismatch", "`X-Contract-Hash` names another contract than the ones served "
                                             "here (code `contract_mismatch`); nothing was done."),
    "413": ErrorResponse("PayloadTooLarge", "The request body is too large."),
    "500": ErrorResponse("InternalError", "Server error, including `contract_violation`: read the result again "
                                          "before retrying."),
    "503": ErrorResponse("Unavailable", "A service the server needs cannot be reached (code `unavailable`); "
                                        "retry later."),
}


@dataclass(frozen=True)
class CodegenConfig:
    root: Path
    contracts: Path
    package: str
    client_package: str
    source_root: Path
    title: str
    docs: Path | None = None
    version: str | None = None
    errors: Mapping[str, ErrorResponse] = field(default_factory=lambda: dict(RUNTIME_ERRORS))
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    allowed_hosts: tuple[str, ...] = ()
    healthz: bool = True
    compatibility: Compatibility = Compatibility()
    handlers: str | None = None  # "module:Class"; None: <package less .generated>.handlers:Handlers
    handlers_check: bool = True  # false: generate appends no stubs, generate and check type-check nothing

    def package_dir(self, package: str) -> Path:
        return self.source_root / package.replace(".", "/")

    @property
    def server_dir(self) -> Path:
        return self.package_dir(self.package)

    @property
    def client_dir(self) -> Path:
        return self.package_dir(self.client_package)

    def relative(self, path: Path) -> str:
        """`path` as the project shows it: relative to the root, links resolved (a folder named in
        the table may be a link, as this repository's top-level `contracts` is)."""
        return os.path.relpath(path.resolve(), self.root.resolve()).replace(os.sep, "/")

    @property
    def owned_dirs(self) -> list[Path]:
        """The folders the generator owns entirely."""
        dirs = [self.server_dir, self.client_dir] + ([self.docs] if self.docs else [])
        return list(dict.fromkeys(dirs))


def find_project(start: Path | None = None) -> Path:
    """The nearest folder from `start` (the working directory) upwards whose pyproject.toml has the
    generator's table."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "codegen" in _tool_table(candidate):
            return folder
    raise ConfigError(here, f"no pyproject.toml with {TABLE} here or above: run from your project's root, "
                            "or pass --project DIR (see docs/toolkit.md, 'Use it for your own contracts')")


def _tool_table(pyproject: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(pyproject, f"not valid TOML: {exc}") from None
    table = data.get("tool", {}).get("evidencekit", {})
    return table if isinstance(table, dict) else {}


def _text(table: Mapping[str, Any], key: str, where: Path, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(where, f"{TABLE} {key} must be a non-empty string")
    return value


def _package(table: Mapping[str, Any], key: str, where: Path, default: str | None = None) -> str:
    value = _text(table, key, where, default)
    if not all(part.isidentifier() for part in value.split(".")):
        raise ConfigError(where, f"{TABLE} {key} = {value!r} is not a dotted package name")
    return value


def _errors(table: Any, where: Path) -> dict[str, ErrorResponse]:
    errors = dict(RUNTIME_ERRORS)
    if table is None:
        return errors
    if not isinstance(table, dict):
        raise ConfigError(where, f"{TABLE} errors must be a table of HTTP statuses")
    for status, entry in table.items():
        if not (status.isdigit() and len(status) == 3 and 400 <= int(status) <= 599):
            raise ConfigError(where, f"{TABLE} errors.{status}: the key must be an HTTP error status (400-599)")
        if not isinstance(entry, dict) or set(entry) - _ERROR_KEYS or not {"name", "description"} <= set(entry):
            raise ConfigError(where, f"{TABLE} errors.\"{status}\" takes name, description, read_only and operations")
        name, description = entry["name"], entry["description"]
        read_only, operations = entry.get("read_only", True), entry.get("operations", [])
        if not (isinstance(name, str) and name.isidentifier() and isinstance(description, str)
                and isinstance(read_only, bool) and isinstance(operations, list)
                and all(isinstance(op, str) for op in operations)):
            raise ConfigError(where, f"{TABLE} errors.\"{status}\": name must be an identifier, description a "
                                     "string, read_only a boolean, operations a list of operation names")
        errors[status] = ErrorResponse(name, description, read_only, tuple(operations))
    return dict(sorted(errors.items()))


def _handlers(value: Any, where: Path) -> str | None:
    if value is None:
        return None
    module, _, cls = value.partition(":") if isinstance(value, str) else ("", "", "")
    if not (module and all(part.isidentifier() for part in module.split(".")) and (not cls or cls.isidentifier())):
        raise ConfigError(where, f"{TABLE} handlers must be \"module:Class\", such as \"myapi.handlers:Handlers\"")
    return f"{module}:{cls or 'Handlers'}"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _check_places(config: CodegenConfig, pyproject: Path) -> None:
    """The generator deletes what it does not plan in the folders it owns: each must be a folder of
    its own inside the project, apart from the contracts and from each other (the client package may
    be the package itself)."""
    root = config.root.resolve()
    contracts = config.contracts.resolve()
    named = {"package": config.server_dir, "client_package": config.client_dir, "docs": config.docs}
    places = {key: folder.resolve() for key, folder in named.items() if folder is not None}
    if not _inside(contracts, root):
        raise ConfigError(pyproject, f"{TABLE} contracts ({contracts}) must be inside the project ({root})")
    for key, folder in places.items():
        if not _inside(folder, root) or folder == root:
            raise ConfigError(pyproject, f"{TABLE} {key} ({folder}) must be a folder inside the project "
                                         f"({root}), not the project itself: the generator owns it entirely")
        if _inside(folder, contracts) or _inside(contracts, folder):
            raise ConfigError(pyproject, f"{TABLE} {key} ({folder}) overlaps the contracts ({contracts})")
    for key, folder in places.items():
        for other, there in places.items():
            if key < other and folder != there and (_inside(folder, there) or _inside(there, folder)):
                raise ConfigError(pyproject, f"{TABLE} {key} ({folder}) and {other} ({there}) overlap: "
                                             "each is the generator's own folder")


def load_config(project: Path | None = None) -> CodegenConfig:
    root = project.resolve() if project else find_project()
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        raise ConfigError(pyproject, "file not found")
    table = _tool_table(pyproject).get("codegen")
    if not isinstance(table, dict):
        raise ConfigError(pyproject, f"no {TABLE} table (see docs/toolkit.md, 'Use it for your own contracts')")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(pyproject, f"{TABLE} has unknown keys {unknown}; known: {sorted(_KEYS)}")
    package = _package(table, "package", pyproject)
    project_name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
    docs = table.get("docs")
    version = table.get("version")
    if version is not None and not isinstance(version, str):
        raise ConfigError(pyproject, f"{TABLE} version must be a string")
    max_request_bytes = table.get("max_request_bytes", DEFAULT_MAX_REQUEST_BYTES)
    if type(max_request_bytes) is not int or max_request_bytes < 1:
        raise ConfigError(pyproject, f"{TABLE} max_request_bytes must be a whole number of bytes >= 1")
    hosts = table.get("allowed_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(host, str) and host and ":" not in host and "/" not in host
                                              for host in hosts):
        raise ConfigError(pyproject, f"{TABLE} allowed_hosts must be a list of hostnames (no scheme, no port: "
                                     "every port is allowed), such as [\"api.example.com\"]")
    healthz = table.get("healthz", True)
    if not isinstance(healthz, bool):
        raise ConfigError(pyproject, f"{TABLE} healthz must be true or false (false: no GET /healthz is served)")
    handlers_check = table.get("handlers_check", True)
    if not isinstance(handlers_check, bool):
        raise ConfigError(pyproject, f"{TABLE} handlers_check must be true or false (false: the handlers are "
                                     "neither given stubs nor type-checked against the generated protocol)")
    try:
        compatibility = Compatibility.parse(str(table.get("compatibility", "semantic")),
                                            str(table.get("compatibility_mode", "backward")))
    except ValueError as exc:
        raise ConfigError(pyproject, f"{TABLE} {exc}") from None
    config = CodegenConfig(
        root=root,
        contracts=root / _text(table, "contracts", pyproject, "contracts"),
        package=package,
        client_package=_package(table, "client_package", pyproject, package),
        source_root=root / _text(table, "source_root", pyproject, "."),
        title=_text(table, "title", pyproject, project_name or package),
        docs=root / _text(table, "docs", pyproject) if docs is not None else None,
        version=version,
        errors=_errors(table.get("errors"), pyproject),
        max_request_bytes=max_request_bytes,
        allowed_hosts=tuple(hosts),
        healthz=healthz,
        compatibility=compatibility,
        handlers=_handlers(table.get("handlers"), pyproject),
        handlers_check=handlers_check,
    )
    _check_places(config, pyproject)
    return config
