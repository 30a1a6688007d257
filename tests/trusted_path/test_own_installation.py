"""#54: mzagent's own installation inside the project is not the model's to change.

The README's install puts a `.venv` where the user runs it; when that is the project, a command
or `write_to_file` could rewrite mzagent's own site-packages and the next start would run the
model's code as the user. Here the running mzagent is made to come from a `.venv` (and, for an
editable or `PYTHONPATH` install, a `src/mzagent_tui`) in the project: each attack writes there
by another way (a plain path, a `.pth`, `cd`, `..`, a link, moving or removing the folder) and
must leave it as it was; in the same command a write elsewhere in the project goes through (the
positive control), and so do writes to a second virtual environment and to `.VENV`, which are
not mzagent's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import mzagent_tui
from mzagent_tui.agent.safety.approval import ApprovalDecision
from mzagent_tui.agent.safety.own_install import is_own_installation, own_paths_in
from tests.attack_helpers import action, command, needs_namespaces, run
from tests.conftest import RecordingApprover, make_agent
from tests.scripted_server import answer_reply

SITE = ".venv/lib/python3.11/site-packages"
ORIGINAL = "# mzagent's own code\n"


@pytest.fixture
def installed(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """mzagent running from `<project>/.venv`, its package in that site-packages."""
    venv = project / ".venv"
    for folder in ("bin", "lib/python3.11/site-packages/mzagent_tui"):
        (venv / folder).mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "activate").write_text("# activate\n")
    (project / SITE / "mzagent_tui" / "__init__.py").write_text(ORIGINAL)
    (project / "sub").mkdir()
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "exec_prefix", str(venv))
    return venv


def untouched(project: Path) -> bool:
    site = project / SITE
    return (
        (site / "mzagent_tui" / "__init__.py").read_text() == ORIGINAL and not list(site.glob("*.pth"))
        and (project / ".venv" / "pyvenv.cfg").read_text() == "home = /usr/bin\n"
        and (project / ".venv" / "bin" / "activate").read_text() == "# activate\n"
    )


def test_the_installation_in_the_project_is_found_by_its_real_path(project: Path, installed: Path) -> None:
    assert installed in own_paths_in(project)
    for spelling in (f"{SITE}/mzagent_tui/cli.py", f"./{SITE}/x.pth", f"sub/../{SITE}/x.pth", ".venv/pyvenv.cfg", ".venv"):
        assert is_own_installation(project, spelling), spelling
    (project / "v").symlink_to(".venv")
    assert is_own_installation(project, "v/bin/activate")
    for other in (".venv2/lib/x.pth", ".VENV/pyvenv.cfg", "src/app.py", ".venvx/a"):
        assert not is_own_installation(project, other), other  # the controls: not mzagent's


def test_an_installation_outside_the_project_or_around_it_protects_nothing_in_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", str(project.parent))  # the project inside the prefix (pip install -e under venv/src)
    monkeypatch.setattr(sys, "exec_prefix", str(project.parent))
    assert own_paths_in(project) == () or all(str(p).startswith(str(project) + "/") for p in own_paths_in(project))
    assert not is_own_installation(project, "app.py")


def test_a_prefix_at_the_project_s_root_protects_its_entries_not_the_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m venv .` in the project, mzagent installed there."""
    (project / "lib").mkdir()
    (project / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setattr(sys, "prefix", str(project))
    assert is_own_installation(project, "lib/python3.11/site-packages/x.pth") and is_own_installation(project, "pyvenv.cfg")
    assert not is_own_installation(project, "app.py")


ATTACKS = {
    "package file": f"echo pwned > {SITE}/mzagent_tui/__init__.py",
    "a .pth": f"echo 'import os' > {SITE}/evil.pth",
    "cd into it": f"(cd {SITE} && echo 'import os' > evil.pth)",
    "dotdot": "echo x > sub/../.venv/pyvenv.cfg",
    "a link in the project": "ln -s .venv v && echo x > v/bin/activate",
    "append": f"echo pwned >> {SITE}/mzagent_tui/__init__.py",
    "copy over": f"cp README {SITE}/mzagent_tui/__init__.py",
    "python": f"python3 -c \"open('{SITE}/evil.pth', 'w').write('import os')\"",
}


@needs_namespaces
@pytest.mark.parametrize("attack", ATTACKS)
def test_a_command_cannot_change_the_installation(server, project: Path, installed: Path, attack: str) -> None:
    (project / "README").write_text("readme\n")
    texts, _ = run(server, project, command(f"{ATTACKS[attack]}; echo ok > control.txt"))
    assert (project / "control.txt").read_text() == "ok\n", texts  # the command ran and wrote the project
    assert untouched(project), texts


MOVES = {
    "move it away": "mv .venv .venv-old; mkdir -p .venv/lib && echo x > .venv/pyvenv.cfg",
    "remove it": "rm -rf .venv; mkdir -p .venv && echo x > .venv/pyvenv.cfg",
    "replace the package folder": f"mv {SITE}/mzagent_tui {SITE}/old; mkdir {SITE}/mzagent_tui",
}


@needs_namespaces
@pytest.mark.parametrize("attack", MOVES)
def test_a_command_cannot_move_or_remove_the_installation(server, project: Path, installed: Path, attack: str) -> None:
    texts, _ = run(server, project, command(f"{MOVES[attack]}; echo ok > control.txt"))
    assert (project / "control.txt").read_text() == "ok\n", texts
    assert untouched(project) and not (project / ".venv-old").exists(), texts


@needs_namespaces
def test_a_second_venv_and_other_spellings_stay_writable(server, project: Path, installed: Path) -> None:
    """The controls: only mzagent's own installation is read-only."""
    script = "mkdir -p .venv2/lib .VENV && echo 'import os' > .venv2/lib/x.pth && echo y > .VENV/pyvenv.cfg && echo done"
    texts, _ = run(server, project, command(script))
    assert "done" in texts[0] and (project / ".venv2/lib/x.pth").exists() and (project / ".VENV/pyvenv.cfg").exists(), texts


@needs_namespaces
def test_a_package_on_pythonpath_in_the_project_is_read_only_too(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mzagent run from the project's `src` (PYTHONPATH=src, or an editable install): its
    package folder is protected, the rest of `src` is the project's."""
    package = project / "src" / "mzagent_tui"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(ORIGINAL)
    monkeypatch.setattr(mzagent_tui, "__file__", str(package / "__init__.py"))
    texts, _ = run(server, project, command("echo pwned >> src/mzagent_tui/__init__.py; echo 'x = 1' > src/app.py; echo done"))
    assert "done" in texts[0] and (project / "src" / "app.py").exists(), texts
    assert (package / "__init__.py").read_text() == ORIGINAL, texts


@needs_namespaces
def test_a_prefix_at_the_project_s_root_keeps_the_project_writable(server, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(project))
    texts, _ = run(server, project, command("echo 'import os' > lib/python3.11/site-packages/evil.pth; echo ok > app.py"))
    assert (project / "app.py").read_text() == "ok\n", texts
    assert not (project / "lib/python3.11/site-packages/evil.pth").exists(), texts


WRITES = [f"{SITE}/mzagent_tui/cli.py", f"./{SITE}/evil.pth", f"sub/../{SITE}/evil.pth", ".venv/pyvenv.cfg", "v/bin/activate"]


@pytest.mark.parametrize("path", WRITES)
def test_write_to_file_asks_even_in_yolo_and_a_no_writes_nothing(server, project: Path, installed: Path, path: str) -> None:
    (project / "v").symlink_to(".venv")
    user = RecordingApprover(ApprovalDecision(False))
    run(server, project, f"read_file({path!r})", f"write_to_file({path!r}, 'import os\\n')", mode="yolo", approver=user)
    assert [type(r).__name__ for r in user.requests] == ["PlantedFileApproval"] and "mzagent's own installation" in user.requests[0].reason
    assert untouched(project) and not (project / SITE / "mzagent_tui" / "cli.py").exists()


def test_write_to_file_elsewhere_in_yolo_asks_nothing(server, project: Path, installed: Path) -> None:
    """The control: in yolo a second venv's `.pth` (which asks in the other modes: it plants
    code) and a plain file are written without a question."""
    user = RecordingApprover(ApprovalDecision(False))
    run(server, project, "write_to_file('.venv2/lib/x.pth', 'import os\\n')", "write_to_file('app.py', 'x = 1\\n')", mode="yolo", approver=user)
    assert user.requests == [] and (project / ".venv2/lib/x.pth").exists() and (project / "app.py").exists()


def test_headless_without_yes_refuses_the_write(server, project: Path, installed: Path) -> None:
    from mzagent_tui.agent.safety.approval import StaticApprover

    server.script(action(f"write_to_file('{SITE}/mzagent_tui/__init__.py', 'pwned')"), answer_reply())
    agent, _ = make_agent(server, project, approver=StaticApprover(False))
    try:
        agent.run("work")
    finally:
        agent.close()
    assert untouched(project)


@needs_namespaces
@pytest.mark.parametrize(("planting", "planted"), [
    ("echo 'import os' > src/openai.py", "src/openai.py"),
    ("mkdir -p src/openai && echo 'import os' > src/openai/__init__.py", "src/openai/__init__.py"),
    ("mkdir -p evil && echo 'import os' > evil/__init__.py && ln -s ../evil src/openai", "src/openai"),
    ("echo 'import os' > src/sitecustomize.py", "src/sitecustomize.py"),
], ids=["module", "package", "link-to-a-package", "start-up-hook"])
def test_a_module_shadowing_a_dependency_on_pythonpath_is_asked_about_even_in_yolo(
    server, project: Path, monkeypatch: pytest.MonkeyPatch, planting: str, planted: str,
) -> None:
    """mzagent started with PYTHONPATH=src: a command's src/openai.py would be imported in place
    of the real one at mzagent's next start, outside the sandbox. Making src read-only would stop
    the agent's work there, so the file is asked about after the command, in yolo too, and put
    back when the user says no; the command's other work stays."""
    (project / "src").mkdir()
    monkeypatch.setattr(sys, "path", [str(project / "src"), *sys.path])
    user = RecordingApprover(ApprovalDecision(False))
    texts, _ = run(server, project, command(f"{planting}; echo 'x = 1' > src/app.py; echo ok > control.txt"), approver=user)
    assert (project / "control.txt").read_text() == "ok\n" and (project / "src" / "app.py").exists(), texts
    assert not os.path.lexists(project / planted), texts
    assert [(type(r).__name__, r.path) for r in user.requests] == [("PlantedFileApproval", planted)], user.requests
    assert "next start" in user.requests[0].reason


@pytest.mark.parametrize("path", ["src/openai.py", "src/textual/__init__.py", "src/sitecustomize.py"])
def test_write_to_file_of_a_module_mzagent_imports_from_its_pythonpath_asks_in_yolo(
    server, project: Path, monkeypatch: pytest.MonkeyPatch, path: str,
) -> None:
    (project / "src").mkdir()
    monkeypatch.setattr(sys, "path", [str(project / "src"), *sys.path])
    user = RecordingApprover(ApprovalDecision(False))
    run(server, project, f"write_to_file({path!r}, 'import os\\n')", mode="yolo", approver=user)
    assert [type(r).__name__ for r in user.requests] == ["PlantedFileApproval"] and "next start" in user.requests[0].reason
    assert not (project / path).exists()


def test_a_project_folder_not_on_mzagents_path_is_the_projects_in_yolo(server, project: Path) -> None:
    """The control: without the folder on mzagent's sys.path, src/openai.py is a plain file."""
    (project / "src").mkdir()
    user = RecordingApprover(ApprovalDecision(False))
    run(server, project, "write_to_file('src/openai.py', 'import os\\n')", mode="yolo", approver=user)
    assert user.requests == [] and (project / "src" / "openai.py").exists()
