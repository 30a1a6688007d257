"""Allow `python -m mzagent_tui`.

`python -m` puts the current folder first on sys.path; the current folder is usually the
project, and a project's `textual.py` or `openai.py` must not be imported in place of the real one.
"""

import os
import sys

sys.path[:] = [entry for entry in sys.path if entry not in ("", os.getcwd())]

from mzagent_tui.cli import entry  # noqa: E402 - after the path is cleaned

raise SystemExit(entry())
