"""The aid `write.recipe_tabs`: a Makefile's recipe lines written with spaces get the tab make
needs, and the model is told which. The bundled model, asked to fix make's "missing separator",
wrote the file back with the same spaces until it was stuck: it cannot tell a tab from spaces."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mzagent_tui.agent.aids.before_write import is_makefile, recipe_tabs
from mzagent_tui.agent.events import AidFired
from tests.conftest import make_agent
from tests.scripted_server import answer_reply, last_user, read_reply, write_reply

SPACED = """PY ?= python3
SRC = app.py \\
      lib.py

# the default goal
build: $(SRC)
    $(PY) -m py_compile $(SRC)
    @echo built

ifeq ($(V),1)
    QUIET =
endif

define HELP
    make build
endef

clean:
\trm -rf __pycache__
        @echo cleaned
"""
TABBED = SPACED.replace("    $(PY)", "\t$(PY)").replace("    @echo built", "\t@echo built").replace("        @echo cleaned", "\t@echo cleaned")


def test_recipe_lines_get_a_tab_and_nothing_else_changes() -> None:
    fixed = recipe_tabs(SPACED)
    assert fixed.content == TABBED
    assert fixed.lines == (7, 8, 20)


@pytest.mark.parametrize("content", [
    ".RECIPEPREFIX = >\nbuild:\n    > echo hi\n",
    "VAR := a\n    b\n",
    "all: x\n\techo ok\n",
    "",
], ids=["recipe-prefix", "not-below-a-rule", "already-tabbed", "empty"])
def test_what_is_left_alone(content: str) -> None:
    assert recipe_tabs(content).content == content and recipe_tabs(content).lines == ()


def test_an_assignment_with_a_colon_is_not_a_rule() -> None:
    content = "OUT := build\n    x\nDIR ::= out\n    y\n"
    assert recipe_tabs(content).lines == ()


@pytest.mark.parametrize(("path", "is_one"), [
    ("Makefile", True), ("sub/makefile", True), ("GNUmakefile", True), ("rules.mk", True),
    ("Makefile.py", False), ("make.txt", False), ("docs/Makefile.md", False),
])
def test_which_files_are_makefiles(path: str, is_one: bool) -> None:
    assert is_makefile(path) is is_one


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_written_makefile_runs_where_the_spaced_one_did_not(server, project: Path) -> None:
    (project / "Makefile").write_text("build:\n    @echo built\n")
    assert "missing separator" in subprocess.run(["make", "-s", "build"], cwd=project, capture_output=True, text=True).stderr
    server.script(read_reply("Makefile"), write_reply("Makefile", "build:\n    @echo built\n    @echo done\n"), answer_reply("Fixed."))
    agent, rec = make_agent(server, project)
    agent.run("make build says missing separator. Fix the Makefile.")
    assert (project / "Makefile").read_text() == "build:\n\t@echo built\n\t@echo done\n"
    observation = last_user(server.requests[2])
    assert observation.startswith("<observation>File written: Makefile (overwrote")
    assert "lines 2, 3 of what you wrote for Makefile started with spaces; they were written with a tab." in observation
    assert "write.recipe_tabs" in [e.name for e in rec.of(AidFired)]
    ran = subprocess.run(["make", "-s", "build"], cwd=project, capture_output=True, text=True)
    assert ran.returncode == 0 and ran.stdout == "built\ndone\n"


def test_switched_off_the_spaces_are_written_as_given(server, project: Path) -> None:
    (project / "Makefile").write_text("build:\n    @echo built\n")
    server.script(read_reply("Makefile"), write_reply("Makefile", "build:\n    @echo built\n    @echo done\n"), answer_reply("Fixed."))
    agent, rec = make_agent(server, project, disable_aids=["write.recipe_tabs"])
    agent.run("make build says missing separator. Fix the Makefile.")
    assert (project / "Makefile").read_text() == "build:\n    @echo built\n    @echo done\n"
    assert "tab" not in last_user(server.requests[2]) and "write.recipe_tabs" not in [e.name for e in rec.of(AidFired)]


def test_other_files_keep_their_spaces(server, project: Path) -> None:
    server.script(write_reply("notes.txt", "build:\n    @echo built\n"), answer_reply("Written."))
    agent, rec = make_agent(server, project)
    agent.run("Write notes.txt.")
    assert (project / "notes.txt").read_text() == "build:\n    @echo built\n" and not rec.of(AidFired)
