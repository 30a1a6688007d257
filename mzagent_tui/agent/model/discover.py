"""A stronger model when the machine has one: an Ollama or LM Studio server already running here.

With no key and no base URL the bundled 1.5B model is the fallback. Before it is started, the
two local servers people run are asked, at their usual addresses on this machine only, which
models they have; a coding model found there is used instead. Nothing is ever sent to them but
these questions (no key: the presets need none), the addresses come from constants and the
user's own `OLLAMA_HOST` (never a project's files: `.env` is not the process's environment),
and an address that is not this machine is not asked.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

OLLAMA_PORT = 11434
LMSTUDIO_PORT = 1234
PROBE_TIMEOUT = 0.5
"""Seconds per question: a refused connection answers at once, a silent port costs this."""

CODING_MODEL = re.compile(r"code|coder|devstral", re.IGNORECASE)
"""Names of coding models (qwen2.5-coder, deepseek-coder, codellama, codestral, starcoder2,
codegemma, granite-code, devstral)."""
NOT_CHAT = re.compile(r"embed|rerank|whisper", re.IGNORECASE)
SIZE_IN_NAME = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)b\b", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """A server to ask: its preset's name and the address it answers on."""

    provider: str
    label: str
    root: str
    """scheme://host:port, no path."""


@dataclass(frozen=True)
class FoundModel:
    provider: str
    base_url: str
    model: str
    why: str
    """What `mzagent config` and the app say about the choice."""


@dataclass
class Discovery:
    found: FoundModel | None = None
    notes: list[str] = field(default_factory=list)
    """Servers that answered but were not used, and why."""


def candidates(environ: Mapping[str, str]) -> list[Candidate]:
    """Ollama where the user's `OLLAMA_HOST` says (its default otherwise), then LM Studio."""
    ollama = _root_from_host(environ.get("OLLAMA_HOST", ""), OLLAMA_PORT)
    found = [Candidate("lmstudio", "LM Studio", f"http://127.0.0.1:{LMSTUDIO_PORT}")]
    if ollama is not None:
        found.insert(0, Candidate("ollama", "Ollama", ollama))
    return found


def discover(servers: list[Candidate], timeout: float = PROBE_TIMEOUT) -> Discovery:
    """The first server with a coding model, and that model; notes on the others that answered."""
    result = Discovery()
    for server in servers:
        models = _ollama_models(server, timeout) if server.provider == "ollama" else _openai_models(server, timeout)
        if models is None:
            continue
        coding = [m for m in models if CODING_MODEL.search(m.name) and not NOT_CHAT.search(m.name)]
        if not coding:
            listed = ", ".join(m.name for m in models[:5]) or "none"
            result.notes.append(f"{server.label} at {server.root} is running but has no coding model (models: {listed})")
            continue
        best = max(coding, key=lambda m: (m.loaded, m.size))
        reason = "loaded" if best.loaded else "the largest coding model there" if len(coding) > 1 else "its coding model"
        why = f"{best.name} on {server.label} at {server.root} ({reason})"
        result.found = FoundModel(server.provider, f"{server.root}/v1", best.name, why)
        return result
    return result


@dataclass(frozen=True)
class _Model:
    name: str
    size: float
    """Parameters in billions where known (else from the name, else 0)."""
    loaded: bool = False


def _ollama_models(server: Candidate, timeout: float) -> list[_Model] | None:
    """Ollama's own list (`/api/tags`: sizes) and what it has in memory (`/api/ps`)."""
    tags = _get_json(server.root, "/api/tags", timeout)
    if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
        return None
    running = _get_json(server.root, "/api/ps", timeout)
    loaded = {m.get("name") for m in running.get("models", []) if isinstance(m, dict)} if isinstance(running, dict) else set()
    models = []
    for entry in tags["models"]:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            details = entry.get("details")
            stated = str(details.get("parameter_size", "")) if isinstance(details, dict) else ""
            size = _billions(stated) or _billions(entry["name"])
            models.append(_Model(entry["name"], size, entry["name"] in loaded))
    return models


def _openai_models(server: Candidate, timeout: float) -> list[_Model] | None:
    """LM Studio's richer list (`/api/v0/models`: type and state) or the OpenAI one."""
    rich = _get_json(server.root, "/api/v0/models", timeout)
    if isinstance(rich, dict) and isinstance(rich.get("data"), list):
        return [
            _Model(m["id"], _billions(m["id"]), m.get("state") == "loaded")
            for m in rich["data"]
            if isinstance(m, dict) and isinstance(m.get("id"), str) and m.get("type", "llm") in ("llm", "vlm")
        ]
    plain = _get_json(server.root, "/v1/models", timeout)
    if not isinstance(plain, dict) or not isinstance(plain.get("data"), list):
        return None
    return [_Model(m["id"], _billions(m["id"])) for m in plain["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _billions(text: str) -> float:
    match = SIZE_IN_NAME.search(text)
    return float(match.group(1)) if match else 0.0


def _get_json(root: str, path: str, timeout: float) -> Any:
    """GET a JSON document; None for anything else (refused, silent, not JSON, not 200)."""
    import http.client  # only when a server is looked for: 30 ms of the app's start-up otherwise

    parts = urlsplit(root)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Accept": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            return None
        return json.loads(response.read(1_000_000))
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()


def _root_from_host(value: str, default_port: int) -> str | None:
    """`OLLAMA_HOST` as Ollama reads it (`host`, `host:port`, `http://host:port`; `0.0.0.0` is
    where it listens, so here); None when it names another machine."""
    value = value.strip()
    if not value:
        return f"http://127.0.0.1:{default_port}"
    parts = urlsplit(value if "://" in value else f"http://{value}")
    try:
        host, port = parts.hostname or "127.0.0.1", parts.port or default_port
    except ValueError:
        return None
    if parts.scheme != "http" or not _this_machine(host):
        return None
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"


def _this_machine(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified

