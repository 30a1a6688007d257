"""Provider presets: a base URL, a default model and the variable that holds the key."""

from __future__ import annotations

import importlib.util
import platform
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    model: str
    key_var: str | None
    needs_key: bool
    native_tools: bool = False
    """Hosted models trained for `tools`/`tool_calls`: protocol auto uses them."""


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY", True, native_tools=True),
        Provider("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY", True, native_tools=True),
        Provider("siliconflow", "https://api.siliconflow.cn/v1", "Qwen/Qwen3-8B", "SILICONFLOW_API_KEY", True, native_tools=True),
        Provider("openrouter", "https://openrouter.ai/api/v1", "openai/gpt-4o", "OPENROUTER_API_KEY", True, native_tools=True),
        Provider("ollama", "http://localhost:11434/v1", "qwen2.5-coder:7b", None, False),
        Provider("lmstudio", "http://localhost:1234/v1", "local-model", None, False),
        Provider("llamacpp", "http://127.0.0.1:8080/v1", "local", None, False),
        Provider("custom", "", "", None, False),
        Provider("local", "", "local", None, False),
    )
}

LOCAL_CONTEXT_TOKENS = 16384
"""The context the bundled model is started with."""

# Checked in this order when no provider is named: the first key found picks the provider;
# with no key and no base URL the bundled local model is used.
AUTO_DETECT_ORDER = ("deepseek", "siliconflow", "openrouter", "openai")

INSTALL_HINT = "pip install -e '.[local]' (in the mzagent-tui checkout)"


ENGINE_PLATFORMS = {("linux", "x86_64"), ("linux", "aarch64"), ("win32", "amd64"), ("darwin", "arm64")}
"""(sys.platform, machine) for which xllamacpp publishes a prebuilt wheel; the `local` extra's
environment marker says the same, so elsewhere pip skips the engine instead of failing."""


def engine_platform() -> bool:
    """This platform gets the offline model's engine from the `local` extra."""
    return (sys.platform, platform.machine().lower()) in ENGINE_PLATFORMS


ENGINES = {"prebuilt": "xllamacpp", "compiled": "llama_cpp"}
"""The offline model's engines and the module each runs: llama.cpp's own server from xllamacpp's
prebuilt wheel (the `local` extra, seconds to install), or llama-cpp-python's server built on
this machine (the `compiled` extra: a C++ compiler and minutes of building, for a prompt read
about twice as fast on a CPU with AVX-512; bench/README.md has the figures)."""
COMPILED_HINT = "pip install -e '.[local,compiled]' (needs a C++ compiler and CMake; minutes of building)"


def installed_engines() -> list[str]:
    return [name for name, module in ENGINES.items() if importlib.util.find_spec(module) is not None]


def local_available() -> bool:
    """An engine for the offline model is installed (the `local` or the `compiled` extra)."""
    return bool(installed_engines())


def setup_hint() -> str:
    """What to do when the bundled model was chosen but is not running."""
    if not local_available() and not engine_platform():
        return (
            f"no model endpoint configured, and the offline model's engine (xllamacpp) has no prebuilt wheel for "
            f"{sys.platform} {platform.machine()}: set a key such as DEEPSEEK_API_KEY or OPENAI_API_KEY, run Ollama or "
            f"llama.cpp yourself and point MZAGENT_BASE_URL at it (see `mzagent config`), or build the engine here with {COMPILED_HINT}"
        )
    if not local_available():
        return (
            "no model endpoint configured and the offline model is not installed: install it with "
            f"{INSTALL_HINT}, or set a key such as DEEPSEEK_API_KEY or OPENAI_API_KEY, or "
            "MZAGENT_BASE_URL for your own server (see `mzagent config`)"
        )
    return "the local model server is not running yet"
