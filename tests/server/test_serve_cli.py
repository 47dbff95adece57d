"""`evidencekit serve | worker | mcp` as a user starts them: clear one-line errors, a banner that works."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import httpx
import pytest

from tests.support import eventually

ROOT = Path(__file__).resolve().parents[2]


def run(data: Path, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_DATA_DIR": str(data), **env}
    return subprocess.run([sys.executable, "-m", "evidencekit", *args], env=environment, cwd=data,
                          capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("command", ["serve", "worker", "mcp"])
def test_bad_settings_are_one_line_each_and_exit_2(tmp_path: Path, command: str) -> None:
    done = run(tmp_path, command, EVIDENCEKIT_MAX_ATTEMPTS="abc", EVIDENCEKIT_LOG_LEVEL="verbose")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "evidencekit: EVIDENCEKIT_MAX_ATTEMPTS must be a whole number >= 1, not 'abc'",
        "evidencekit: EVIDENCEKIT_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, not 'verbose'"]


@pytest.mark.parametrize("command", ["serve", "worker", "mcp"])
def test_bad_fetch_settings_are_named_before_anything_starts(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "intranet-ca.pem"
    done = run(tmp_path, command, EVIDENCEKIT_ALLOW_PRIVATE_HOSTS="bogus", EVIDENCEKIT_CA_BUNDLE=str(missing))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [
        "evidencekit: EVIDENCEKIT_ALLOW_PRIVATE_HOSTS: 'bogus' is not host:port (port a number or *)",
        f"evidencekit: EVIDENCEKIT_CA_BUNDLE must be a readable PEM file of CA certificates: {missing}: "
        "No such file or directory"]
    assert not (tmp_path / "evidencekit.sqlite3").exists()


@pytest.mark.parametrize("command", ["worker", "mcp"])
def test_help_does_not_start_anything(tmp_path: Path, command: str) -> None:
    done = run(tmp_path, command, "--help", timeout=20)
    assert done.returncode == 0 and done.stdout.startswith(f"usage: research-evidence {command}")
    assert not (tmp_path / "evidencekit.sqlite3").exists()


def test_an_unreachable_database_is_one_line_without_its_password(tmp_path: Path) -> None:
    done = run(tmp_path, "serve", DATABASE_URL="postgres://ana:s3cret@127.0.0.1:9/nowhere")
    assert done.returncode == 1 and "Traceback" not in done.stderr and "s3cret" not in done.stderr
    assert done.stderr.startswith("evidencekit: cannot open the database postgres://ana:***@127.0.0.1:9/nowhere: ")


def wait_until_serving(port: int) -> None:
    def listening() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    eventually(listening, what=f"serve to listen on port {port}")


def test_a_later_start_prints_a_curl_line_that_works_when_pasted(tmp_path: Path) -> None:
    token = json.loads(run(tmp_path, "admin", "bootstrap", "--json").stdout)["token"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_DATA_DIR": str(tmp_path)}
    with subprocess.Popen([sys.executable, "-m", "evidencekit", "serve", "--port", str(port), "--no-worker"],
                          env=environment, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as server:
        try:
            assert server.stdout is not None
            banner = [server.stdout.readline() for _ in range(4)]
            wait_until_serving(port)
            set_token = banner[2].split("set it with: ", 1)[1].strip()
            try_line = banner[3].split("try: ", 1)[1].strip()
            pasted = subprocess.run(["bash", "-c", f"{set_token}\n{try_line}"], env=environment, cwd=tmp_path,
                                    capture_output=True, text=True, timeout=60, check=False)
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert token not in "".join(banner)  # a secret is shown once, on the first start only
    assert '-H "Authorization: Bearer $TOKEN"' in banner[3]  # double quotes: the shell expands it
    assert pasted.returncode == 0, pasted.stderr
    answer = json.loads(pasted.stdout)  # the two printed lines, pasted, made a receipt
    assert answer["retrieval"]["state"] == "pending" and answer["retrieval"]["kind"] == "url_text"


@pytest.mark.parametrize(("url", "shown"), [
    ("postgres://app:Zx9/Qm2pLr@db:5432/prod", "postgres://app:***@db:5432/prod"),  # a raw "/" in the password
    ("postgres://app:a?b#c@db/x", "postgres://app:***@db/x"),
    ("postgres://u:p@w@db:5432/x", "postgres://u:***@db:5432/x"),
    ("postgres://app:p%40ss@db/x?password=zz&sslmode=require", "postgres://app:***@db/x?password=***&sslmode=require"),
    ("postgres://app@db/x", "postgres://app@db/x"),
])
def test_a_database_url_is_shown_without_any_password(url: str, shown: str) -> None:
    from evidencekit.server.evidence.store.db import shown_url

    assert shown_url(url) == shown


def test_a_port_in_use_is_one_line_before_any_banner(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run(tmp_path, "serve", "--port", str(port))
    assert done.returncode == 1 and "serving" not in done.stdout and "Traceback" not in done.stderr
    assert done.stderr.strip() == (f"evidencekit: cannot listen on 127.0.0.1:{port}: Address already in use "
                                   "(another server runs there; choose another --port)")


def test_the_banner_names_the_bound_port_warns_of_private_hosts_and_pastes_as_one_session(tmp_path: Path) -> None:
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])  # `evidencekit` on the PATH
    environment = {"PATH": path, "PYTHONPATH": str(ROOT), "EVIDENCEKIT_DATA_DIR": str(tmp_path),
                   "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": "127.0.0.1:*"}
    with subprocess.Popen([sys.executable, "-m", "evidencekit", "serve", "--port", "0", "--no-worker"],
                          env=environment, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as server:
        try:
            assert server.stdout is not None and server.stderr is not None
            banner = [server.stdout.readline() for _ in range(8)]
            warning = server.stderr.readline()
            port = int(banner[0].split("http://127.0.0.1:", 1)[1].split()[0])
            wait_until_serving(port)  # announced after binding: the port is already ours
            retrieve = banner[4].split("try: ", 1)[1].strip()
            status = banner[5].split("then: ", 1)[1].strip()
            pasted = subprocess.run(["bash", "-c", f"{retrieve} >/dev/null\n{status}"], env=environment,
                                    capture_output=True, text=True, timeout=60, check=False)
            cli_lines = banner[6].split("CLI:  ", 1)[1].strip() + "\n" + banner[7].strip()
            by_cli = subprocess.run(["bash", "-c", cli_lines.replace("--wait", "--json")], env=environment,
                                    capture_output=True, text=True, timeout=60, check=False)
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert warning.startswith("evidencekit: WARNING: EVIDENCEKIT_ALLOW_PRIVATE_HOSTS=127.0.0.1:*")
    assert pasted.returncode == 0, pasted.stderr
    assert json.loads(pasted.stdout)["retrieval"]["state"] == "pending"  # the status line finds the try line's receipt
    assert by_cli.returncode == 0, by_cli.stderr  # the export line set everything the CLI needs
    assert json.loads(by_cli.stdout)["retrieval"]["kind"] == "url_text"


def test_the_data_folder_is_the_same_from_any_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(home),
                   "XDG_DATA_HOME": str(home / ".local" / "share")}
    tokens = []
    for folder in (first, second):
        done = subprocess.run([sys.executable, "-m", "evidencekit", "admin", "bootstrap", "--json"], env=environment,
                              cwd=folder, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        tokens.append(json.loads(done.stdout)["token"])
    assert tokens[0] == tokens[1]  # one workspace and token, found again from another folder
    assert (home / ".local" / "share" / "evidencekit" / "evidencekit.sqlite3").exists()
    assert not list(first.iterdir()) and not list(second.iterdir())  # nothing written where the command ran


def test_sqlite_users_need_no_postgresql_driver(tmp_path: Path) -> None:
    """asyncpg is the `postgres` extra: without it, SQLite works and PostgreSQL says what to install."""
    script = (
        "import sys; sys.modules['asyncpg'] = None  # as if the extra were not installed\n"
        "from evidencekit.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_DATA_DIR": str(tmp_path)}
    sqlite = subprocess.run([sys.executable, "-c", script, "admin", "bootstrap", "--json"], env=environment,
                            cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert sqlite.returncode == 0 and json.loads(sqlite.stdout)["token"], sqlite.stderr
    postgres = subprocess.run([sys.executable, "-c", script, "serve"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, check=False, env={**environment, "DATABASE_URL": "postgres://u@127.0.0.1/x"})
    assert postgres.returncode == 1 and "pip install 'evidencekit[postgres]'" in postgres.stderr


def test_debug_logging_shows_no_query_string_fetched_text_or_token(tmp_path: Path) -> None:
    """EVIDENCEKIT_LOG_LEVEL=DEBUG through a whole retrieval, over REST and MCP: the ORM, its SQLite
    driver and the MCP SDK printed statements with their parameters and whole messages."""
    import uuid

    import httpx

    from tests.origin import Origin, Reply
    from tests.support import live_server

    origin = Origin()
    secret, words = "query-secret-4711", "zebra-unicorn-words"
    origin.reply("/notes", Reply(f"<html><body><article><h1>Notes</h1><p>{words} in a paragraph of "
                                 "ordinary length, long enough to be the main text.</p></article></body></html>".encode()))
    with live_server(origin) as origin_url:
        port = int(origin_url.rsplit(":", 1)[1])
        environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "EVIDENCEKIT_DATA_DIR": str(tmp_path),
                       "EVIDENCEKIT_ALLOW_PRIVATE_HOSTS": f"127.0.0.1:{port}", "EVIDENCEKIT_LOG_LEVEL": "DEBUG",
                       "EVIDENCEKIT_POLL_SECONDS": "0.1"}
        with subprocess.Popen([sys.executable, "-m", "evidencekit", "serve", "--port", "0"], env=environment,
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as server:
            assert server.stdout is not None and server.stderr is not None
            stderr = server.stderr
            lines: list[str] = []  # read as it comes: a full pipe would stall the server's log writer
            reader = threading.Thread(target=lambda: lines.extend(stderr), daemon=True)
            reader.start()
            try:
                banner = [server.stdout.readline() for _ in range(4)]
                base = banner[0].split("serving ", 1)[1].split()[0]
                workspace, token = banner[1].split()[-1], banner[3].split()[-1]
                wait_until_serving(int(base.rsplit(":", 1)[1]))
                headers = {"Authorization": f"Bearer {token}"}
                with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
                    mutation = str(uuid.uuid4())
                    ids = {"workspace_id": workspace, "mutation_id": mutation}
                    sent = http.post("/research-api/evidence/retrieve",
                                     json={**ids, "url": f"{origin_url}/notes?token={secret}", "kind": "url_text"})
                    assert sent.status_code == 200, sent.text
                    eventually(lambda: http.post("/research-api/evidence/status", json=ids).json()["retrieval"]["state"]
                               not in ("pending", "running"), what="the retrieval to settle", every=0.05)
                    assert http.post("/research-api/evidence/status", json=ids).json()["retrieval"]["state"] == "completed"
                    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "sosoapi_research_evidence_status", "arguments": ids}}
                    answer = http.post("/mcp", json=call, headers={"Accept": "application/json, text/event-stream"})
                    assert answer.status_code == 200 and words in answer.text
            finally:
                server.terminate()
                server.wait(timeout=30)
                reader.join(timeout=10)
    logged = "".join(lines)
    assert "DEBUG httpcore" in logged  # DEBUG does show the HTTP client's trace
    for leak in (secret, words, token):
        assert leak not in logged, [line for line in logged.splitlines() if leak in line][:3]


def test_a_first_start_whose_port_is_taken_creates_nothing(tmp_path: Path) -> None:
    """The workspace and its token come with the first start that serves: a token shown once to a
    start that could not listen was as good as lost (the next start said `not shown again`)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run(tmp_path, "serve", "--port", str(port), "--no-worker")
    assert done.returncode == 1 and "cannot listen on 127.0.0.1:" in done.stderr, done.stderr
    assert "token" not in done.stdout and not (tmp_path / "bootstrap-token").exists()
    boot = run(tmp_path, "admin", "bootstrap")
    assert json.loads(boot.stdout)["created_token"] is True  # nothing was made before
    assert boot.stderr.strip() == f"research-evidence admin: bootstrap in {tmp_path / 'evidencekit.sqlite3'}"


def test_help_and_errors_point_at_what_is_there(tmp_path: Path) -> None:
    """`mcp --help` names docs/settings.md (README lists no settings); `import-pages` outside a
    project names its own --contracts (it has no --project, which the message suggested)."""
    helped = run(tmp_path, "mcp", "--help")
    assert "docs/settings.md" in " ".join(helped.stdout.split()) and "README" not in helped.stdout
    page = tmp_path / "page.txt"
    page.write_text("a page")
    outside = run(tmp_path, "import-pages", str(page))
    assert outside.returncode == 2 and "--contracts DIR" in outside.stderr and "--project" not in outside.stderr


def test_a_later_starts_token_line_pasted_into_a_new_shell_finds_the_servers_database(tmp_path: Path) -> None:
    """serve started with EVIDENCEKIT_DATA_DIR (here relative to its folder): the banner's
    `TOKEN=$(... admin bootstrap ...)` line carries that folder, so pasted into a shell that has no
    such setting, in another folder, it prints the token this server accepts, and does not make
    another database whose token would get 401."""
    (tmp_path / "served").mkdir()
    (tmp_path / "elsewhere").mkdir()
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(tmp_path / "home"),
                   "EVIDENCEKIT_DATA_DIR": "data dir"}  # a space: the line must quote it

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "evidencekit", "serve", "--port", "0", "--no-worker"],
                                env=environment, cwd=tmp_path / "served", stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)

    with start() as first:  # the first start creates the database and shows its token
        assert first.stdout is not None
        first.stdout.readline()
        first.terminate()
        first.wait(timeout=30)
    with start() as server:
        try:
            assert server.stdout is not None
            banner = [server.stdout.readline() for _ in range(3)]
            base = banner[0].split("serving ", 1)[1].split()[0]
            workspace = banner[1].split("workspace_id: ", 1)[1].strip()
            set_token = banner[2].split("set it with: ", 1)[1].strip()
            clean = {key: environment[key] for key in ("PATH", "PYTHONPATH", "HOME")}  # a new shell
            pasted = subprocess.run(["bash", "-c", f'{set_token}\nprintf %s "$TOKEN"'], env=clean,
                                    cwd=tmp_path / "elsewhere", capture_output=True, text=True, timeout=60,
                                    check=False)
            assert pasted.returncode == 0 and pasted.stdout, pasted.stderr
            wait_until_serving(int(base.rsplit(":", 1)[1]))
            answer = httpx.post(f"{base}/research-api/evidence/status", timeout=30,
                                headers={"Authorization": f"Bearer {pasted.stdout}"},
                                json={"workspace_id": workspace, "mutation_id": str(uuid.uuid4())})
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert answer.status_code == 200, answer.text  # the line without the folder: 401 (another database's token)
    assert "EVIDENCEKIT_DATA_DIR=" in set_token
    assert not (tmp_path / "home" / ".local").exists()  # no other database was made


def test_the_token_line_carries_the_database_url_but_never_its_password() -> None:
    from evidencekit.server.evidence.store.db import selecting_env

    assert selecting_env({"DATABASE_URL": "postgres://app@db/x?sslmode=require"}) == (
        "DATABASE_URL='postgres://app@db/x?sslmode=require' ", False)
    for url in ("postgres://app:Zx9/Qm2pLr@db:5432/prod", "postgres://app@db/x?password=Zx9/Qm2pLr"):
        chosen, hidden = selecting_env({"DATABASE_URL": url, "EVIDENCEKIT_DATA_DIR": "/srv/data dir"})
        assert (chosen, hidden) == ("EVIDENCEKIT_DATA_DIR='/srv/data dir' ", True)  # the banner names the variable
    assert selecting_env({}) == ("", False)
