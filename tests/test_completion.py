"""`evidencekit completion bash`: the script bash loads completes commands, sub-commands, options
and file names as a user's TAB would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evidencekit._completion import command_tree
from evidencekit.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = tmp_path_factory.mktemp("completion") / "evidencekit.bash"
    done = subprocess.run([sys.executable, "-m", "evidencekit", "completion", "bash"], capture_output=True,
                          text=True, check=True, cwd=ROOT, timeout=60)
    script.write_text(done.stdout)
    return script


def complete(script: Path, line: str, cwd: Path = ROOT) -> list[str]:
    """What bash offers for TAB at the end of `line` (its first word the program), with the script
    loaded: the function the script registered for that program, called as bash calls it."""
    words = line.split(" ")
    program = f"""
source {script}
COMP_WORDS=({" ".join(f"'{word}'" for word in words)})
COMP_CWORD={len(words) - 1}
COMP_LINE='{line}'
COMP_POINT=${{#COMP_LINE}}
$(complete -p {words[0]} | sed -E 's/.*-F ([^ ]+) .*/\\1/') {words[0]} '{words[-1]}' '{words[-2]}'
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True, cwd=cwd, timeout=30)
    return sorted(filter(None, (word.strip() for word in done.stdout.splitlines())))


def test_commands_and_their_options_complete(bash_script: Path) -> None:
    assert complete(bash_script, "evidencekit re") == ["retrieve"]
    assert set(complete(bash_script, "evidencekit ")) >= {"retrieve", "status", "documents", "serve", "mcp",
                                                            "worker", "admin", "codegen", "completion"}
    assert complete(bash_script, "evidencekit retrieve --wa") == ["--wait"]
    assert complete(bash_script, "evidencekit retrieve --kind ") == ["published_captions", "url_text"]
    assert complete(bash_script, "evidencekit admin to") == ["token", "tokens"]
    assert complete(bash_script, "evidencekit codegen check --ag") == ["--against"]
    assert complete(bash_script, "evidencekit serve --http ") == ["auto", "h11", "httptools"]


def test_file_options_complete_file_names(bash_script: Path, tmp_path: Path) -> None:
    (tmp_path / "urls.txt").write_text("https://example.com/\n")
    (tmp_path / "unrelated.md").write_text("")
    assert complete(bash_script, "evidencekit retrieve --from-file ur", cwd=tmp_path) == ["urls.txt"]


def test_every_command_of_the_dispatcher_is_in_the_tree() -> None:
    from evidencekit._argparse_adapter import subcommands
    from evidencekit.cli import COMMANDS
    from evidencekit.commands import available

    assert sorted(subcommands(command_tree())) == sorted({*COMMANDS, *available()})
    assert {"retrieve", "worker", "import-pages"} <= set(available())  # the service's, installed here


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_other_shells_get_a_script_naming_every_command(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert all(name in script for name in ("retrieve", "import-pages", "codegen", "--from-file"))


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["completion", "powershell"])
    assert exited.value.code == 2 and "invalid choice" in capsys.readouterr().err


@pytest.fixture(scope="module")
def fish_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import os
    import shutil

    if shutil.which("fish") is None:
        if os.environ.get("CI") == "true":  # .ci/run installs it: CI must not skip
            pytest.fail("fish is not installed")
        pytest.skip("fish is not installed (Debian: apt-get install fish)")
    script = tmp_path_factory.mktemp("completion") / "evidencekit.fish"
    done = subprocess.run([sys.executable, "-m", "evidencekit", "completion", "fish"], capture_output=True,
                          text=True, check=True, cwd=ROOT, timeout=60)
    script.write_text(done.stdout)
    return script


def fish_complete(script: Path, line: str, cwd: Path = ROOT) -> list[str]:
    """What fish offers for TAB at the end of `line` (`complete -C`), with the script loaded."""
    done = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
                          capture_output=True, text=True, check=True, cwd=cwd, timeout=30)
    return sorted(word.split("\t")[0] for word in done.stdout.splitlines() if word)


def test_fish_completes_commands_options_choices_and_files(fish_script: Path, tmp_path: Path) -> None:
    assert fish_complete(fish_script, "evidencekit re") == ["retrieve"]
    assert set(fish_complete(fish_script, "evidencekit ")) >= {"retrieve", "status", "documents", "serve",
                                                                "admin", "codegen", "completion"}
    assert fish_complete(fish_script, "evidencekit retrieve --wa") == ["--wait"]
    assert fish_complete(fish_script, "evidencekit retrieve --kind ") == ["published_captions", "url_text"]
    assert fish_complete(fish_script, "evidencekit admin to") == ["token", "tokens"]
    assert fish_complete(fish_script, "evidencekit codegen ") == ["check", "diff", "generate", "lock"]
    assert fish_complete(fish_script, "evidencekit codegen check --ag") == ["--against"]
    assert fish_complete(fish_script, "evidencekit completion ") == ["bash", "fish", "tcsh", "zsh"]
    (tmp_path / "urls.txt").write_text("https://example.com/\n")
    (tmp_path / "unrelated.md").write_text("")
    assert fish_complete(fish_script, "evidencekit retrieve --from-file ur", cwd=tmp_path) == ["urls.txt"]


def test_fish_script_quotes_any_help_text(fish_script: Path, tmp_path: Path) -> None:
    import argparse

    from evidencekit._fish_completion import fish_script as write

    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--path", help="a folder like C:\\data\\ or it's $HOME; \"quoted\" (end) \\")
    parser.add_argument("--mode", choices=["it's", "a\\b"], help="modes")
    script = tmp_path / "tool.fish"
    script.write_text(write(parser, "tool"))
    checked = subprocess.run(["fish", "--no-execute", str(script)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    assert fish_complete(script, "tool --mode ") == ["a\\b", "it's"]


def service_script(shell: str, folder: Path) -> Path:
    """`research-evidence completion SHELL`, as a user would save it."""
    done = subprocess.run([Path(sys.executable).parent / "research-evidence", "completion", shell],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    script = folder / f"research-evidence.{shell}"
    script.write_text(done.stdout)
    return script


def test_research_evidence_has_completion_of_its_own(tmp_path: Path) -> None:
    """`research-evidence completion bash` completes research-evidence's commands (and only those:
    codegen is the toolkit's), their options, choices and file names, as evidencekit's does."""
    script = service_script("bash", tmp_path)
    assert set(complete(script, "research-evidence ")) == {
        "retrieve", "status", "documents", "search", "serve", "mcp", "worker", "admin", "import-pages", "completion"}
    assert complete(script, "research-evidence re") == ["retrieve"]
    assert complete(script, "research-evidence retrieve --wa") == ["--wait"]
    assert complete(script, "research-evidence retrieve --kind ") == ["published_captions", "url_text"]
    assert complete(script, "research-evidence admin to") == ["token", "tokens"]
    assert complete(script, "research-evidence completion ") == ["bash", "fish", "tcsh", "zsh"]
    (tmp_path / "urls.txt").write_text("https://example.com/\n")
    assert complete(script, "research-evidence retrieve --from-file ur", cwd=tmp_path) == ["urls.txt"]
    for shell in ("zsh", "tcsh"):
        written = service_script(shell, tmp_path).read_text()
        assert "research-evidence" in written and "import-pages" in written and "codegen" not in written


def test_research_evidence_completion_for_fish(tmp_path: Path) -> None:
    import shutil

    if shutil.which("fish") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("fish is not installed")
        pytest.skip("fish is not installed (Debian: apt-get install fish)")
    script = service_script("fish", tmp_path)
    assert fish_complete(script, "research-evidence re") == ["retrieve"]
    assert fish_complete(script, "research-evidence retrieve --wa") == ["--wait"]
    assert "codegen" not in fish_complete(script, "research-evidence ")
