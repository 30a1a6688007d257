"""Start-up loads only what the first frame needs: the modules below load on first use (each was
measured at 25-100 ms of start-up, bench/README.md), and a new import of one at module level
would put that back unnoticed."""

from __future__ import annotations

import subprocess
import sys

LOADED_ON_FIRST_USE = ["markdown_it", "pygments", "tree_sitter", "yaml", "http.client", "textual.widgets._markdown", "textual.widgets._text_area"]

CODE = "import sys, mzagent_tui.app; print('\\n'.join(sorted(sys.modules)))"


def test_importing_the_app_loads_none_of_the_first_use_modules() -> None:
    loaded = set(subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout.split())
    assert "textual.app" in loaded, "the check sees the app's imports"
    early = [name for name in LOADED_ON_FIRST_USE if name in loaded or any(m.startswith(name + ".") for m in loaded)]
    assert early == []
