"""The name the app's own folders go by (config, state, cache): on the ground floor, so the
settings and the temp-file journal below them find the same folders."""

from __future__ import annotations

APP_NAME = "mzagent"
