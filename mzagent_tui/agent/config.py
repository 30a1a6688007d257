"""Settings and where each one came from.

Sources, lowest to highest: built-in defaults, the user config file (TOML in the platform's
config folder), `.env` in the project folder, `.env` in the current folder, the environment,
command-line flags. `.env` files never override real environment variables.

A project is untrusted (a cloned repository writes its own `.env`): from a `.env` only the
endpoint settings are read (provider, base URL, key, model, and the providers' key variables).
Tools, passed variables, timeouts and everything else a `.env` sets is ignored and reported.
Where the key goes is the user's choice: when a `.env` picked where requests go (the base URL,
or the provider whose preset URL is used) and the key did not come from that same file, the key
is withheld (`key_withheld` says why); a provider's own key variable still goes to that
provider's preset URL, the one place its name sends it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from dotenv import dotenv_values

from mzagent_tui.agent.ground.app_name import APP_NAME
from mzagent_tui.agent.ground.providers import AUTO_DETECT_ORDER, LOCAL_CONTEXT_TOKENS, PROVIDERS, setup_hint
from mzagent_tui.agent.ground.textfiles import atomic_write

SANDBOX_MODES = ("workspace", "off")
GRAMMAR_MODES = ("auto", "on", "off")
NOTIFY_MODES = ("bell", "osc", "off")
PROTOCOLS = ("auto", "xml", "native")
PROFILES = ("", "small", "full")
SMALL_MODEL = re.compile(r"(?<![\w.])(?:0\.5|1\.5|1\.8|1|2|3)b\b", re.IGNORECASE)
"""A size of 3B or less in a model's name, where the name gives one."""


class ConfigError(Exception):
    """A configuration problem, reported as one actionable line (exit code 2)."""


@dataclass
class Settings:
    """Effective settings. `sources` maps a field name to where its value came from."""

    provider: str = ""
    """Preset name (see PROVIDERS); empty means detect from the keys present."""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    model: str = ""
    temperature: float = 0.0
    seed: int = -1
    """Sampling seed of a session's first request (OpenAI, llama.cpp, vLLM and Ollama take `seed`);
    each later request sends the next number, so a run at a temperature above 0, or with the
    varied reply after a repeat, can be repeated exactly, while two varied replies in a row are
    still sampled differently. -1: none sent. The benchmarks set it: without it one held-out run
    differed from the next in two HumanEval problems with nothing changed."""
    max_tokens: int = 4096
    """Maximum tokens per reply."""
    max_steps: int = 30
    max_format_errors: int = 3
    """Replies in a row that cannot be used (no action, a broken call) before the run stops."""
    stuck_repeats: int = 3
    """The same call with the same result this many times (within twice as many steps) is
    "stuck": the model is asked for its final answer (the `stuck` aid)."""
    compact_at: float = 0.8
    """How full the context window may get (0.5 to 0.95 of it) before the older steps are compacted."""
    command_timeout: float = 120.0
    lang: str = "en"
    """Prompt language: en or zh."""
    tools: list[str] = field(default_factory=list)
    """Custom tools as `module:function` entries."""
    stop_sequence: bool = True
    """Send `<observation>` as a stop sequence (the parser does not need it)."""
    connect_timeout: float = 10.0
    idle_timeout: float = 120.0
    """Seconds without a streamed chunk before the request is abandoned."""
    max_retries: int = 4
    retry_base_delay: float = 1.0
    max_retry_wait: float = 60.0
    """The longest Retry-After honoured; a longer one is reported at once."""
    max_step_wait: float = 0.0
    """The longest a stalled or failing endpoint may hold one step, retries included, in seconds
    (0: 180, or 600 for the bundled model and the local-server presets (ollama, lmstudio,
    llamacpp), whose first reply to a long prompt is slow)."""
    pass_env: list[str] = field(default_factory=list)
    """Environment variables commands see beyond the built-in allow-list (secrets.INHERITED),
    secret-looking or not; the password of a URL in them is still removed."""
    home_allow: list[str] = field(default_factory=list)
    """Dot-entries of the home (`.npmrc`, `.config/mytool`) confined commands may read beyond the
    built-in allow-list (sensitive.HOME_ALLOWED); the secret folders (`.ssh`, …) never."""
    disable_aids: list[str] = field(default_factory=list)
    """Aids switched off by name (aids/seam.py's catalogue; `mzagent config` lists them)."""
    profile: str = ""
    """What the model gets, by the model: "small" (the bundled model's treatment: no edit_file, no
    update_plan), "full", or "" to choose by the model (the bundled one, or a name with a size of
    3B or less, however it is served)."""
    price_in: float = 0.0
    """Dollars per million prompt tokens; with price_out it turns tokens into a cost."""
    price_out: float = 0.0
    """Dollars per million completion tokens."""
    max_cost: float = 0.0
    """Stop a run once it has cost this many dollars (0: no limit; needs prices)."""
    context_window: int = 0
    """The model's context window in tokens, to show how full it is (0: unknown)."""
    theme: str = "textual-dark"
    """The app's colours: one of Textual's themes by name (`/theme` chooses one and saves it here).
    The app checks the name (the themes are Textual's, which this layer does not import): an
    unknown one is reported there and the default is used."""
    notify: str = "bell"
    """How the app gets attention when a dialog opens or a run ends: bell, osc (desktop notification), off."""
    grammar: str = "auto"
    """auto: constrain replies with a grammar where the server is llama.cpp; on: always try; off: never.
    On the held-out half of bench/suite the bundled model solved 8 of 16 HumanEval problems with
    it and 1 without (bench/history.md)."""
    sandbox: str = "workspace"
    """workspace: commands write only in the project and reach no network (Landlock); off: no sandbox."""
    protocol: str = "auto"
    """How the model calls tools. xml: the <thought>/<action> text format; native: the API's
    `tools` and streamed `tool_calls`; auto: native for the hosted presets trained for it, xml
    for local, llama.cpp and unknown endpoints (small local models do worse with JSON calls)."""
    allowed_domains: list[str] = field(default_factory=list)
    """Hosts web_fetch reads, and commands given the network reach through mzagent's proxy,
    without a question (a name allows its subdomains); others are asked about. From the user
    config or environment only, like every setting but the endpoint's."""
    discover: str = "auto"
    """auto: with no key and no base URL, an Ollama or LM Studio server already running on this
    machine with a coding model is used before the bundled model; off: the bundled model."""
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    ignored: list[str] = field(default_factory=list, repr=False, compare=False)
    """Settings a project's `.env` tried to set, which only the user may set ("FILE: VAR")."""
    key_withheld: str = field(default="", compare=False)
    """Why the key is not sent (a project file chose where requests go and the key is not that
    file's); empty: the key goes with every request."""

    def endpoint(self) -> tuple[str, str, str]:
        """Return (base_url, model, api_key) or raise ConfigError with the fix."""
        if not self.provider:
            raise ConfigError(
                "no model endpoint configured: set a key such as DEEPSEEK_API_KEY or OPENAI_API_KEY, "
                "or MZAGENT_BASE_URL for a local server (see `mzagent config`)"
            )
        preset = PROVIDERS.get(self.provider)
        if preset is None:
            raise ConfigError(
                f"unknown provider '{self.provider}'; choose one of: {', '.join(PROVIDERS)}"
            )
        if self.provider == "local" and not self.base_url:
            raise ConfigError(setup_hint())
        if not self.base_url:
            raise ConfigError(f"provider '{self.provider}' needs a base URL: set MZAGENT_BASE_URL or --base-url")
        if not self.model:
            raise ConfigError(f"no model set for {self.base_url}: set MZAGENT_MODEL or --model")
        if preset.needs_key and self.key_withheld:
            raise ConfigError(f"no API key for provider '{self.provider}': {self.key_withheld}")
        if preset.needs_key and not self.api_key:
            raise ConfigError(
                f"no API key for provider '{self.provider}': set {preset.key_var} "
                f"(or MZAGENT_API_KEY) in the environment or a .env file, or pass --api-key"
            )
        key = "" if self.key_withheld else self.api_key
        return self.base_url, self.model, key or "not-needed"

    def native_tools(self) -> bool:
        """Whether tool calls go through the API's `tools` (see `protocol`)."""
        if self.protocol != "auto":
            return self.protocol == "native"
        preset = PROVIDERS.get(self.provider)
        return preset is not None and preset.native_tools

    def step_wait_limit(self) -> float:
        """Servers on this machine read a long prompt at CPU speed: they get longer."""
        return self.max_step_wait or (600.0 if self.provider in ("local", "ollama", "lmstudio", "llamacpp") else 180.0)

    def small_model(self) -> bool:
        """The "small" profile: set, or the bundled model, or a model whose name gives a size of
        3B or less (`qwen2.5-coder:1.5b` in Ollama, `Qwen2.5-Coder-1.5B-Instruct` in llama.cpp):
        the same model gets the same treatment however it is served."""
        if self.profile:
            return self.profile == "small"
        return self.provider == "local" or SMALL_MODEL.search(self.model) is not None

    def offers_edit_file(self) -> bool:
        """edit_file is offered to every model but a small one: with it in the tool list, the
        bundled 1.5B model solved 25 of the 50 held-out suite tasks, without it 30
        (bench/history.md, seventh session)."""
        return not self.small_model()

    def offers_update_plan(self) -> bool:
        """update_plan (the task list) is offered to every model but a small one: what a tool more
        in the list costs the bundled 1.5B model has not been measured on the held-out half of the
        suite yet, and edit_file, measured, cost it five of fifty tasks."""
        return not self.small_model()

    def offers_web_fetch(self) -> bool:
        """web_fetch is offered to every model but a small one (a tool more in its list has cost
        the bundled model tasks before: see offers_edit_file)."""
        return not self.small_model()

    def offers_background(self) -> bool:
        """start_background_command, background_output and stop_background are offered to every
        model but a small one (three tools more in its list; see offers_edit_file)."""
        return not self.small_model()

    def window(self) -> int:
        """The context window to measure against: configured, or known for the bundled model."""
        if self.context_window:
            return self.context_window
        return LOCAL_CONTEXT_TOKENS if self.provider == "local" else 0


_FIELDS = {f.name: f for f in dataclasses.fields(Settings) if f.name not in ("sources", "ignored", "key_withheld")}
_ENV_PREFIX = "MZAGENT_"
PROJECT_SETTABLE = {"provider", "base_url", "api_key", "model"}
"""What a `.env` in the project (or the current folder) may set: which endpoint, which key."""


def user_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def save_user_setting(name: str, value: str, path: Path | None = None) -> Path:
    """Set a top-level `name = "value"` in the user config, keeping its comments and layout: a
    choice made in the app (the theme) lasts. Only the user's own file is written, never a project's."""
    import tomlkit  # only needed when the user saves a choice
    from tomlkit.exceptions import TOMLKitError

    if name not in _FIELDS:
        raise ConfigError(f"no setting named {name!r}")
    path = path or user_config_path()
    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8") if path.is_file() else "")
        document[name] = value
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, tomlkit.dumps(document).encode("utf-8"))
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise ConfigError(f"cannot update {path}: {exc}") from None
    return path


def check_project(project: Path) -> None:
    """The project must be a folder: say which of "missing" and "not a folder" it is."""
    if project.is_dir():
        return
    if project.exists():
        raise ConfigError(f"the project {project} is not a folder (give the folder that holds it)")
    raise ConfigError(f"the project folder {project} does not exist")


def app_folders() -> tuple[Path, ...]:
    """The app's own config and state (sessions, snapshots): commands never read these."""
    return (Path(platformdirs.user_config_dir(APP_NAME)), Path(platformdirs.user_state_dir(APP_NAME)))


def redact_key(key: str) -> str:
    """Show just enough of a key to recognise it: `sk-…abcd`."""
    if not key:
        return ""
    if len(key) < 12:
        return "…"
    return f"{key[:3]}…{key[-4:]}"


def load_settings(
    project: Path | None = None,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Merge every source into one Settings; raise ConfigError on a bad value."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}

    config_path = user_config_path()
    for name, value in _read_toml(config_path).items():
        _assign(values, sources, name, value, str(config_path))

    env_layers: list[tuple[str, Mapping[str, str]]] = []
    seen: set[Path] = set()
    for folder in (project, cwd or Path.cwd()):
        if folder is None:
            continue
        dotenv = (folder / ".env").resolve()
        if dotenv in seen or not dotenv.is_file():
            continue
        seen.add(dotenv)
        loaded = {k: v for k, v in dotenv_values(dotenv, interpolate=False).items() if v is not None and k not in environ}
        env_layers.append((str(dotenv), loaded))
    env_layers.append(("environment", environ))

    key_vars: dict[str, tuple[str, str]] = {}
    ignored: list[str] = []
    for label, layer in env_layers:
        from_project = label != "environment"
        for name in _FIELDS:
            var = _ENV_PREFIX + name.upper()
            if var in layer and layer[var] != "":
                if from_project and name not in PROJECT_SETTABLE:
                    ignored.append(f"{label}: {var}")
                    continue
                _assign(values, sources, name, layer[var], f"{label} ({var})")
        for preset in PROVIDERS.values():
            if preset.key_var and layer.get(preset.key_var):
                key_vars[preset.name] = (layer[preset.key_var], f"{label} ({preset.key_var})")

    for name, value in (flags or {}).items():
        if value is not None:
            _assign(values, sources, name, value, "command line")

    settings = Settings(**values)
    settings.sources = sources
    settings.ignored = ignored
    _check_ranges(settings)
    _resolve_provider(settings, key_vars)
    _withhold_key(settings, {label for label, _ in env_layers if label != "environment"}, key_vars)
    return settings


def _withhold_key(settings: Settings, dotenv_files: set[str], key_vars: dict[str, tuple[str, str]]) -> None:
    """Withhold the key from a destination a project file chose: a cloned project's `.env` must
    not send the user's key (from the environment, the user config or a flag) to a server it
    picked, by its base URL or by a provider whose preset URL is a port on this machine."""
    if not settings.api_key:
        return
    chooser = _url_chooser(settings, key_vars)
    chosen_by = _project_file(chooser, dotenv_files)
    key_from = settings.sources.get("api_key", "")
    if not chosen_by or _project_file(key_from, dotenv_files) == chosen_by or _key_names_preset(settings):
        return
    settings.key_withheld = (
        f"{chooser} chose where requests go ({settings.base_url or 'the provider ' + settings.provider}) and the "
        f"API key comes from {key_from}, so the key is not sent: mzagent does not send your key to a destination "
        "a project file picked. Set the provider or base URL in your environment, user config or with --provider/"
        "--base-url, or put the key in that .env too"
    )


def _url_chooser(settings: Settings, key_vars: dict[str, tuple[str, str]]) -> str:
    """The source that picked where requests go: the base URL's, or for a preset's URL the
    provider's (for a detected provider, the key variable that picked it)."""
    src = settings.sources
    if not src.get("base_url", "").startswith("preset "):
        return src.get("base_url", "")
    if src.get("provider", "").startswith("detected (") and settings.provider in key_vars:
        return key_vars[settings.provider][1]
    return src.get("provider", "")


def _project_file(source: str, dotenv_files: set[str]) -> str:
    """The `.env` file a source label names ("FILE (VAR)"), or "" for the user's own sources."""
    return next((name for name in dotenv_files if source.startswith(f"{name} (")), "")


def _key_names_preset(settings: Settings) -> bool:
    """The key is the provider's own variable (OPENAI_API_KEY) and goes to that provider's preset
    URL: its name picked that destination, whoever picked the provider."""
    preset = PROVIDERS.get(settings.provider)
    return (
        preset is not None
        and preset.key_var is not None
        and settings.sources.get("base_url") == f"preset {preset.name}"
        and settings.sources.get("api_key", "").endswith(f"({preset.key_var})")
    )


def _check_ranges(settings: Settings) -> None:
    problems = []
    if settings.lang not in ("en", "zh"):
        problems.append(f"lang must be en or zh, got {settings.lang!r}")
    if settings.max_steps < 1:
        problems.append("max_steps must be at least 1")
    if settings.max_format_errors < 1 or settings.stuck_repeats < 2:
        problems.append("max_format_errors must be at least 1 and stuck_repeats at least 2")
    if not 0.5 <= settings.compact_at <= 0.95:
        problems.append("compact_at must be between 0.5 and 0.95")
    if settings.max_tokens < 16:
        problems.append("max_tokens must be at least 16")
    if not 0 < settings.command_timeout <= 3600:
        problems.append("command_timeout must be between 0 and 3600 seconds")
    if not 0 <= settings.temperature <= 2:
        problems.append("temperature must be between 0 and 2")
    if settings.seed < -1:
        problems.append("seed must be 0 or more, or -1 for none")
    if settings.max_retries < 0 or settings.idle_timeout <= 0 or settings.connect_timeout <= 0 or settings.max_step_wait < 0:
        problems.append("timeouts must be positive and max_retries at least 0")
    if min(settings.price_in, settings.price_out, settings.max_cost, settings.context_window) < 0:
        problems.append("price_in, price_out, max_cost and context_window cannot be negative")
    if settings.notify not in NOTIFY_MODES:
        problems.append(f"notify must be {', '.join(NOTIFY_MODES)}, got {settings.notify!r}")
    if settings.grammar not in GRAMMAR_MODES:
        problems.append(f"grammar must be {', '.join(GRAMMAR_MODES)}, got {settings.grammar!r}")
    if settings.discover not in ("auto", "off"):
        problems.append(f"discover must be auto or off, got {settings.discover!r}")
    if settings.protocol not in PROTOCOLS:
        problems.append(f"protocol must be {', '.join(PROTOCOLS)}, got {settings.protocol!r}")
    if settings.profile not in PROFILES:
        problems.append(f"profile must be small or full (or empty, to choose by the model), got {settings.profile!r}")
    if settings.sandbox not in SANDBOX_MODES:
        problems.append(f"sandbox must be {' or '.join(SANDBOX_MODES)}, got {settings.sandbox!r}")
    if settings.max_cost and not (settings.price_in or settings.price_out):
        problems.append("max_cost needs prices: set price_in and price_out (dollars per million tokens)")
    if problems:
        where = ", ".join(f"{settings.sources.get(p.split()[0], 'default')}" for p in problems)
        raise ConfigError(f"{'; '.join(problems)} (from {where})")


def _resolve_provider(settings: Settings, key_vars: dict[str, tuple[str, str]]) -> None:
    """Fill provider, base URL, model and key from the preset where the user set none."""
    src = settings.sources
    if not settings.provider:
        if settings.base_url:
            settings.provider, src["provider"] = "custom", "detected (base URL set)"
        else:
            found = next((name for name in AUTO_DETECT_ORDER if name in key_vars), None)
            if found:
                settings.provider, src["provider"] = found, f"detected ({PROVIDERS[found].key_var} set)"
            else:
                settings.provider, src["provider"] = "local", "default (no key or base URL set)"
    preset = PROVIDERS.get(settings.provider)
    if preset is None:
        return
    if not settings.base_url and preset.base_url:
        settings.base_url, src["base_url"] = preset.base_url, f"preset {preset.name}"
    if not settings.model and preset.model:
        settings.model, src["model"] = preset.model, f"preset {preset.name}"
    if not settings.api_key and preset.name in key_vars:
        settings.api_key, src["api_key"] = key_vars[preset.name]


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    aids = data.get("aids")
    if isinstance(aids, dict) and "disable" in aids:
        data["disable_aids"] = aids["disable"]  # `[aids] disable = [...]`, the table form
    return {k: v for k, v in data.items() if k in _FIELDS}


def _assign(values: dict[str, Any], sources: dict[str, str], name: str, raw: Any, source: str) -> None:
    values[name] = _convert(name, raw, source)
    sources[name] = source


def _convert(name: str, raw: Any, source: str) -> Any:
    default = _FIELDS[name].default
    if _FIELDS[name].default_factory is not dataclasses.MISSING:  # list fields
        if isinstance(raw, str):
            return [part.strip() for part in raw.split(",") if part.strip()]
        if isinstance(raw, (list, tuple)):
            return [str(part) for part in raw]
        raise ConfigError(f"{name} from {source} must be a list, got {raw!r}")
    try:
        if isinstance(default, bool):
            if isinstance(raw, str):
                lowered = raw.strip().lower()
                if lowered not in {"1", "0", "true", "false", "yes", "no", "on", "off"}:
                    raise ValueError(raw)
                return lowered in {"1", "true", "yes", "on"}
            return bool(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        return str(raw).strip()
    except (TypeError, ValueError):
        raise ConfigError(f"{name} from {source} has a bad value {raw!r}") from None


def describe(settings: Settings) -> list[tuple[str, str, str]]:
    """Rows of (setting, value, source) for `mzagent config`, with the key redacted."""
    rows = []
    for name in _FIELDS:
        value = getattr(settings, name)
        shown = redact_key(value) if name == "api_key" else (", ".join(value) if isinstance(value, list) else str(value))
        source = settings.sources.get(name, "default")
        if name == "api_key" and settings.key_withheld:
            shown, source = f"{shown} (withheld)", settings.key_withheld
        rows.append((name, shown, source))
    for entry in settings.ignored:
        where, _, var = entry.rpartition(": ")
        rows.append((var, "(ignored)", f"{where}: a project file may set only the endpoint, model and key"))
    return rows


def ignored_notice(settings: Settings) -> str:
    """One line for the transcript or stderr about what a project's `.env` was not allowed to set."""
    if not settings.ignored:
        return ""
    return (
        "Ignored from a project .env (only the endpoint, model and key may come from the project; "
        f"set the rest in your environment or user config): {', '.join(settings.ignored)}"
    )


def withheld_notice(settings: Settings) -> str:
    """One line for the transcript or stderr when the key is not sent, and why."""
    return f"API key withheld: {settings.key_withheld}." if settings.key_withheld else ""


def discovered_notice(settings: Settings) -> str:
    """One line when the model is a local server's, found running instead of the bundled one."""
    source = settings.sources.get("provider", "")
    if not source.startswith("detected: "):
        return ""
    return (
        f"Using {source.removeprefix('detected: ')}: with no key set, a model running on this machine "
        'comes before the bundled one (discover = "off" in the user config, or /model local, for the bundled one).'
    )
