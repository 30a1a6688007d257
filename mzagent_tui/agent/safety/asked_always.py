"""The files a write or a command's change asks about in every mode, yolo included.

Yolo runs the model's work without questions, inside the session. These files are run or read by
something outside mzagent, by itself, after the session: the user's shell (a program in a project
folder on PATH), the user's git (a file a config value names as a program) and mzagent's own next
start (a `.env` that chooses where the user's key is sent). The write tool and the check after a
command both ask by this one rule.
"""

from __future__ import annotations

from mzagent_tui.agent.safety.hooks_path import PROGRAM_REASON
from mzagent_tui.agent.safety.planting import SETTINGS_REASON

ON_PATH_REASON = "it is a program in a project folder on PATH: your shell and your tools run it by name"
"""Why an executable file in a folder on PATH matters, to the write tool and the after-command scan alike."""


def asked_in_every_mode(reason: str) -> bool:
    """Whether a file with this reason is asked about in yolo too."""
    return reason in (ON_PATH_REASON, PROGRAM_REASON, SETTINGS_REASON)
