"""Allow `python -m mzagent_tui`."""

from mzagent_tui.cli import main

raise SystemExit(main())
