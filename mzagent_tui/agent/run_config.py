"""What a run runs with, read once at start and owned by the front-end.

The settings, the approval policy, the hooks, the tool servers and the command-line flags as
given are read here once and handed down. A model switch (`with_model`) reads the settings again
with the same flags and keeps everything else: what the user chose at start (`--max-steps`,
`--tool`, `--profile`, `--disable-aid`, `--writes`, …) must not vanish when they change models.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mzagent_tui.agent.aids.seam import NAMES as AID_NAMES
from mzagent_tui.agent.config import ConfigError, Settings, load_settings
from mzagent_tui.agent.hooks.config import HookSpec, load_hooks
from mzagent_tui.agent.mcp.config import McpServerConfig, load_mcp_servers
from mzagent_tui.agent.model.discover import candidates, discover
from mzagent_tui.agent.safety.approval import Policy, load_policy

ENDPOINT_FLAGS = ("base_url", "api_key")
"""Flags that belong to one provider: a switch to another provider drops them, so a key given
for one endpoint is never sent to another."""


@dataclass(frozen=True)
class RunConfig:
    settings: Settings
    project: Path
    """The folder whose `.env` the settings were read with (read again by `with_model`)."""
    policy: Policy = field(default_factory=Policy)
    """Shared with the front-end, which changes its mode in place; a model switch keeps it."""
    hooks: tuple[HookSpec, ...] = ()
    mcp_servers: tuple[McpServerConfig, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)
    """The command-line flags as given (None: not given)."""
    environ: Mapping[str, str] | None = None
    """The environment the settings were read from (None: the process's)."""
    cwd: Path | None = None
    """The current folder whose `.env` is read too (None: the process's)."""

    @classmethod
    def load(
        cls,
        project: Path,
        flags: Mapping[str, Any] | None = None,
        approval: str | None = None,
        writes: str | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> RunConfig:
        """Every source, read once; ConfigError on the first bad one (a bad hook stops the start)."""
        given = dict(flags or {})
        settings = _with_server_found(_known_aids(load_settings(project=project, flags=given, environ=environ, cwd=cwd)), environ)
        policy = load_policy(approval, writes=writes)
        return cls(settings, project, policy, tuple(load_hooks()), tuple(load_mcp_servers()), given, environ, cwd)

    def with_model(self, provider: str, model: str) -> RunConfig:
        """The same run with another provider and model (empty: the provider's default); the
        settings are read again from the same sources and flags. ConfigError on a bad one."""
        flags = {**self.flags, "provider": provider, "model": model or None}
        if provider != self.settings.provider:
            flags.update(dict.fromkeys(ENDPOINT_FLAGS))
        settings = _known_aids(load_settings(project=self.project, flags=flags, environ=self.environ, cwd=self.cwd))
        return dataclasses.replace(self, settings=settings, flags=flags)

    def with_servers(self, servers: Sequence[McpServerConfig]) -> RunConfig:
        """The user's tool servers and, after them, those a client names (ACP's `mcpServers`)."""
        return dataclasses.replace(self, mcp_servers=(*self.mcp_servers, *servers))

    def with_settings(self, settings: Settings) -> RunConfig:
        """The same run with settings changed by the front-end (the bundled model's address)."""
        return dataclasses.replace(self, settings=settings)


def _known_aids(settings: Settings) -> Settings:
    """Every name in `disable_aids` is an aid of the catalogue: a misspelt one is an error at start,
    not a switch that does nothing. Checked here, where the settings meet the aids: the settings
    are on a floor below the aids and do not know their names."""
    unknown = sorted(set(settings.disable_aids) - AID_NAMES)
    if unknown:
        where = settings.sources.get("disable_aids", "default")
        raise ConfigError(f"disable_aids names no aid called {', '.join(unknown)} (`mzagent config` lists them) (from {where})")
    return settings


def _with_server_found(settings: Settings, environ: Mapping[str, str] | None) -> Settings:
    """Where the bundled model is the default (no key, no base URL, no provider named), a coding
    model on a local Ollama or LM Studio server comes first; the sources say which and why."""
    defaulted = settings.provider == "local" and not settings.base_url and settings.sources.get("provider", "").startswith("default")
    if not defaulted or settings.discover != "auto":
        return settings
    found = discover(candidates(os.environ if environ is None else environ))
    sources = dict(settings.sources)
    if found.found is None:
        if found.notes:
            sources["provider"] += f"; {'; '.join(found.notes)}"
        return dataclasses.replace(settings, sources=sources)
    server = found.found
    sources.update(provider=f"detected: {server.why}", base_url=f"detected ({server.provider})", model=f"detected ({server.provider})")
    return dataclasses.replace(settings, provider=server.provider, base_url=server.base_url, model=server.model, sources=sources)
