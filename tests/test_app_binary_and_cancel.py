"""The app's transcript says what `mzagent acp` says (issue #57): a binary file a command changed
is "binary file changed, N bytes", never a diff of NULs and U+FFFD; a run cancelled while its
question is open is not recorded, nor told to the model, as the user's rejection."""

from __future__ import annotations

import json
from pathlib import Path

from mzagent_tui.agent.loop import CALL_INTERRUPTED
from mzagent_tui.screens.approval import ApprovalScreen
from mzagent_tui.widgets.conversation import Conversation
from tests.scripted_server import Reply, answer_reply
from tests.test_app import SIZE, approval, entries, entry_texts, make_app, state, submit, wait_for


async def test_a_binary_change_is_said_with_its_size_not_diffed(server, project: Path) -> None:
    (project / "old.bin").write_bytes(b"\x00\x01\x02" * 100)
    (project / "notes.txt").write_text("a\n")
    command = "printf 'x\\377y' > old.bin && printf 'b\\n' >> notes.txt && head -c 300 /dev/zero > zeros.bin"
    server.script(Reply(f"<action>run_terminal_command({json.dumps(command)})</action>"), answer_reply())
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "t")
        await approval(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: state(app) == "done")
        shown = "\n".join(entry_texts(app, "change"))
        searchable = "\n".join(entry.plain for entry in entries(app, "change"))
    assert "changed old.bin (binary file changed, 3 bytes)" in shown
    assert "created zeros.bin (binary file created, 300 bytes)" in shown
    assert "changed notes.txt (+1 −0)" in shown, "a text file still has its diff (positive control)"
    assert "\x00" not in shown and "\ufffd" not in shown
    assert "binary file changed, 3 bytes" in searchable, "search finds what the entry says"


async def test_a_cancel_while_asking_is_not_a_rejection(server, project: Path) -> None:
    server.script(Reply('<action>run_terminal_command("touch made.txt")</action>'), answer_reply("ok"))
    app = make_app(server, project)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "make it")
        await approval(pilot)
        app.query_one(Conversation).cancel()  # what Esc outside the dialog, or SIGTERM, does
        await wait_for(pilot, lambda: state(app) == "cancelled" and not isinstance(app.screen, ApprovalScreen))
        assert not any("reject" in text.lower() for kind in ("notice", "observation") for text in entry_texts(app, kind))
        await submit(pilot, "and now?")
        await wait_for(pilot, lambda: len(entries(app, "final")) == 1)
    assert not (project / "made.txt").exists()
    conversation = server.requests[-1]["messages"][1:]  # after the system prompt
    assert CALL_INTERRUPTED in conversation[-2]["content"]
    assert "reject" not in json.dumps(conversation).lower()
