"""The `write.same` aid: a write that changed nothing is a step done, or one to redo differently.

The write tool says only that nothing was written; the aid, from what it remembers of the session
(`AidState`: the model's own writes, what was found wrong since), says which it is.
"""

from __future__ import annotations

from pathlib import Path

from mzagent_tui.agent.events import AidFired, FileChanged, Observation
from tests.conftest import make_agent
from tests.scripted_server import Reply, answer_reply, last_user, write_reply

STUB_FILE = 'FIX = """\nAdd more tests.\n"""\n\n\ndef count(s):\n    """How many vowels s has.\n\n    >>> count("abe")\n    2\n    """\n    raise NotImplementedError\n'


def observed(server, project: Path, *contents: tuple[str, str], disable: list[str] | None = None) -> tuple[list[str], list]:  # noqa: ANN001
    """The observations of a run that writes each (file, content) in turn, and its events."""
    server.script(*(write_reply(name, content) for name, content in contents), answer_reply("Done."))
    agent, rec = make_agent(server, project, disable_aids=disable or [])
    agent.run("Write the files")
    return [o.text for o in rec.of(Observation)], rec


def test_the_same_content_as_the_models_own_earlier_write_is_a_step_done(server, project: Path) -> None:
    """Told to write something different after writing its finished table again, a small model
    broke the table; content its own write put there is a step done, not a missed change."""
    said, rec = observed(server, project, ("table.md", "| a |\n"), ("table.md", "| a |\n"))
    assert said[1] == (
        "Nothing written: table.md already holds exactly this content (1 line, 6 bytes).\n"
        "Note: that content is from your earlier write, so that step is done: go on with the task, or give the final answer if nothing is left."
    )
    assert len(rec.of(FileChanged)) == 1
    assert [a.name for a in rec.of(AidFired)] == ["write.same"]


def test_a_stub_written_back_again_is_not_called_a_step_done(server, project: Path) -> None:
    """Told to implement a function, a small model copied the file back with the stub in place
    and answered that it was done: the same content again says the stub is still there."""
    stub = STUB_FILE.replace("Add more tests.", "More tests.")
    done = STUB_FILE.replace("raise NotImplementedError", "return sum(c in 'aeiou' for c in s)")
    said, _ = observed(server, project, ("vowels.py", stub), ("vowels.py", stub), ("vowels.py", done), ("vowels.py", done))
    assert said[0] == "File written: vowels.py (created, 12 lines, 138 bytes)."
    assert said[1].endswith(
        "Note: that content is from your earlier write, and count still only raises NotImplementedError: not implemented yet. "
        "Writing it again changes nothing: write different content that fixes it."
    )
    assert "NotImplementedError" not in said[3] and "that step is done" in said[3]


def test_an_abstract_method_is_not_called_unimplemented(server, project: Path) -> None:
    base = "import abc\n\n\nclass Shape(abc.ABC):\n    @abc.abstractmethod\n    def area(self):\n        raise NotImplementedError\n"
    said, _ = observed(server, project, ("shape.py", base), ("shape.py", base))
    assert "NotImplementedError" not in said[1] and "that step is done" in said[1]


def test_writing_a_broken_file_again_is_not_called_a_step_done(server, project: Path) -> None:
    """The model wrote a docstring that never closed, was told, and wrote the same again; told
    "that step is done" beside the parse warning, it answered with the file broken."""
    broken = "def half(n):\n    '''Half.\n    return n // 2\n"
    said, _ = observed(server, project, ("half.py", broken), ("half.py", broken))
    assert "Warning: half.py does not parse now" in said[1] and "that step is done" not in said[1]
    assert said[1].endswith("Note: that content is from your earlier write. Writing it again changes nothing: what is said above is still so. Write different content that fixes it.")
    assert said[1].index("Warning") < said[1].index("Note:")


def test_content_that_was_there_before_any_write_of_the_model_did_not_change(server, project: Path) -> None:
    (project / "same.txt").write_text("x\n")
    server.script(Reply('<action>read_file("same.txt")</action>'), write_reply("same.txt", "x\n"), answer_reply("Done."))
    agent, _rec = make_agent(server, project)
    agent.run("Change same.txt")
    assert last_user(server.requests[2]) == (
        "<observation>Nothing written: same.txt already holds exactly this content (1 line, 2 bytes).\n"
        "Note: the file did not change. Write something different if a change is needed.</observation>"
    )


def test_switched_off_the_write_says_only_what_happened(server, project: Path) -> None:
    said, rec = observed(server, project, ("table.md", "| a |\n"), ("table.md", "| a |\n"), disable=["write.same"])
    assert said[1] == "Nothing written: table.md already holds exactly this content (1 line, 6 bytes)."
    assert "write.same" not in [a.name for a in rec.of(AidFired)]
