"""Commands another installed distribution adds to `evidencekit` (entry points in the
`evidencekit.commands` group), as a team's package would add them: a real dist-info on the path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEAM_MODULE = '''
import sys
from evidencekit.commands import Command

def _report(argv):
    print("report for", *argv)
    return 7

report = Command("make the weekly report", _report, "[WEEK]", section="team commands")
codegen = Command("a codegen of our own", _report)
needs = Command("a command whose dependency is absent", _report, missing=lambda: ["absent_module"],
                install="pip install 'team[extra]'")
'''
ENTRY_POINTS = """[evidencekit.commands]
report = team_commands:report
codegen = team_commands:codegen
needs = team_commands:needs
broken = team_commands:no_such_name
"""


@pytest.fixture(scope="module")
def team_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    (site / "team_commands.py").write_text(TEAM_MODULE)
    info = site / "team_commands-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-commands\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def evidencekit(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "evidencekit", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def test_an_installed_command_runs_and_is_listed(team_path: Path) -> None:
    ran = evidencekit(team_path, "report", "week-48")
    assert (ran.returncode, ran.stdout) == (7, "report for week-48\n"), ran.stderr
    listed = evidencekit(team_path, "--help").stdout
    assert "team commands:\n  report [WEEK]" in listed and "make the weekly report" in listed


def test_a_command_missing_what_it_needs_is_hidden_and_says_what_to_install(team_path: Path) -> None:
    assert "needs" not in evidencekit(team_path, "--help").stdout.split("team commands:")[1]
    refused = evidencekit(team_path, "needs")
    assert refused.returncode == 2
    assert refused.stderr.strip() == ("evidencekit needs: needs absent_module, which this install lacks: "
                                      "pip install 'team[extra]'")


def test_the_toolkits_commands_are_not_replaced_and_a_broken_entry_point_breaks_nothing(team_path: Path) -> None:
    own = evidencekit(team_path, "codegen", "--help")
    assert own.returncode == 0 and "report for" not in own.stdout and "generate" in own.stdout
    broken = evidencekit(team_path, "broken")
    assert broken.returncode == 2 and broken.stderr.startswith(
        "evidencekit broken: the command's entry point (evidencekit.commands) team_commands:no_such_name cannot "
        "be loaded: AttributeError"), broken.stderr
    assert evidencekit(team_path, "report").returncode == 7  # the others still run


def test_the_service_has_a_command_of_its_own_and_is_offered_to_evidencekit() -> None:
    service = subprocess.run([Path(sys.executable).parent / "research-evidence", "--help"], capture_output=True,
                             text=True, timeout=60)
    assert service.returncode == 0 and "SOSOAPI_ACCESS_TOKEN" in service.stdout
    assert all(f"\n  {name} " in service.stdout for name in ("retrieve", "status", "documents", "serve", "admin"))
    env = {key: value for key, value in os.environ.items() if key != "SOSOAPI_ACCESS_TOKEN"}
    for command in (["research-evidence"], ["evidencekit"]):
        refused = subprocess.run([Path(sys.executable).parent / command[0], "status", "x"], capture_output=True,
                                 text=True, timeout=60, env=env)
        assert refused.returncode == 2 and "set SOSOAPI_ACCESS_TOKEN" in refused.stderr, refused.stderr
    toolkit = subprocess.run([Path(sys.executable).parent / "evidencekit", "--help"], capture_output=True,
                             text=True, timeout=60).stdout
    assert toolkit.index("toolkit (") < toolkit.index("the research-evidence service (research-evidence --help):")
