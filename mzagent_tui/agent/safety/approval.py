"""How the core asks the user: the `Approver` interface, and a policy that explains itself.

Every command is split into parts (`commands.analyse`); each part gets a verdict from the
user's rules (deny wins over ask over allow), the mode (`ask`, `auto-safe`, `plan`, `yolo`) and
its risks. The whole command runs without asking only when every part is allowed; a denied part
rejects it; otherwise the front-end's approver asks, showing each part with its verdict.
In `plan` mode nothing asks: what auto-safe would run runs, every other command and every write
is refused with a note for the model (reads of secret files still ask, as they do in every mode).
Rules come from the user config and "always allow" answers, never from the project folder.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import shlex
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, assert_never

from mzagent_tui.agent.config import ConfigError, user_config_path
from mzagent_tui.agent.events import ApprovalAsked, EventSink, Notice
from mzagent_tui.agent.ground.textfiles import atomic_write
from mzagent_tui.agent.safety.approval_requests import (
    ApprovalRequest,
    CommandApproval,
    GitEntryApproval,
    PartVerdict,
    PlantedFileApproval,
    SecretReadApproval,
    ToolCallApproval,
    WriteApproval,
)
from mzagent_tui.agent.safety.effects import denied_option, denied_programs, hidden_git_command

if TYPE_CHECKING:
    from mzagent_tui.agent.safety.commands import Analysis, Part

MODES = ("ask", "auto-safe", "plan", "yolo")
MODE_DESCRIPTIONS = {
    "ask": "Every command asks first (the default)",
    "auto-safe": "Read-only commands on the safe list run without asking; the rest ask",
    "plan": "The agent reads and runs only read-only commands, changes nothing, and answers with a plan",
    "yolo": "No command asks, for this session (the sandbox still confines them)",
}
"""What each approval mode means, in every front-end's words (the palette, the ACP mode menu)."""
WRITE_MODES = ("auto", "ask")
PLAN_COMMAND_NOTE = (
    "plan mode is on: only read-only commands on the safe list run while planning, and this one is not on it. "
    "Read what you need with read_file or a read-only command, then give your plan as the final answer"
)
PLAN_WRITE_NOTE = (
    "plan mode is on: nothing is written while planning. Put this change in your plan, "
    "which you give as the final answer; the user runs the plan after approving it"
)
PLAN_TOOL_NOTE = "plan mode is on: only tools their server marks read-only run while planning. Give your plan as the final answer"
ALLOW, ASK, DENY = "allow", "ask", "deny"


def analysis_of(request: CommandApproval) -> Analysis:
    """The request's command, read: the tool's reading when it is of this very command."""
    if request.analysis is not None and request.analysis.command == request.command:
        return request.analysis
    from mzagent_tui.agent.safety.commands import analyse  # tree-sitter loads with the first command, not at start-up

    return analyse(request.command, Path(request.cwd))


@dataclass(frozen=True)
class ApprovalDecision:
    approved: bool
    command: str | None = None
    """The command to run when the user edited it; None runs the one asked for."""
    note: str = ""
    """The user's reason (sent to the model on rejection) or what allowed it."""
    always_prefix: str | None = None
    """Allow commands starting with this prefix for the rest of the session."""
    save_rule: bool = False
    """Also add `always_prefix` to the user config's allow list, for every later session."""
    network: bool = False
    """Run this command in the sandbox but with network."""
    outside_sandbox: bool = False
    """Run this command outside the sandbox (only the user can choose this)."""
    content: str | None = None
    """The content to write instead, when the user edited a write."""
    allow_writes: str | None = None
    """Allow writes to paths matching this glob ("*": every path) for the rest of the session."""
    cancelled: bool = False
    """The run was cancelled while asking: no one answered. A tool about to act raises
    `Cancelled` (the model reads that it was interrupted, not refused); a question about what a
    command already did keeps its safe answer (not approved)."""
    by_policy: bool = False
    """Allowed by the mode or a rule, with no question to a person: a command's output that
    looks like it holds a credential is then shown masked (tools/shell.py)."""


class Approver(Protocol):
    def approve(self, request: ApprovalRequest) -> ApprovalDecision: ...


class StaticApprover:
    """Approves or rejects everything: `--yes`, `--no`, and runs without a terminal."""

    def __init__(self, approved: bool, note: str = "") -> None:
        self._decision = ApprovalDecision(approved, note=note)

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return self._decision


TWO_WORD_PROGRAMS = {"git", "npm", "pnpm", "yarn", "cargo", "go", "uv", "poetry", "make", "docker", "kubectl", "pip", "pip3"}
"""Tools whose first argument is a subcommand: "always allow" offers `git status`, never `git`."""
PYTHONS = {"python", "python3"}
SCRIPT_RUNNERS = {*PYTHONS, "bash", "sh", "zsh", "dash", "node", "deno", "bun", "perl", "ruby", "php", "Rscript", "pwsh", "npx"}
"""Programs whose first operand is the script or program they run: "always allow" for `bash
release.sh` offers `bash release.sh`, never `bash`, which would run any script the model writes."""
COMMAND_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("npm", "exec"), ("pnpm", "exec"), ("pnpm", "dlx"),
                   ("yarn", "dlx"), ("yarn", "exec"), ("bundle", "exec"), ("conda", "run")}
"""Subcommands that run the command after them: `uv run pytest` offers `uv run pytest`, never `uv run`."""


def suggested_prefix(analysis: Analysis) -> str:
    """The prefix offered for "always allow": the program of the first part that does the work
    (`cd` and `bash -c` wrappers skipped, git's global options dropped) with its subcommand
    (`git status`, `npm test`), module (`python -m pytest`) or script (`bash release.sh`), and
    after a runner (`uv run`) the prefix of what it runs. The app and the terminal offer the
    same, and never a bare `git`, `python` or `uv run`: "" when there is nothing narrower."""
    for part in analysis.parts:
        words = part.rule_words
        if not words or part.wrapper or part.program == "cd":
            continue
        return " ".join(_prefix_of(words))
    return ""


def _prefix_of(words: list[str]) -> list[str]:
    if tuple(words[:2]) in COMMAND_RUNNERS:
        rest = _prefix_of(words[2:]) if len(words) > 2 and not words[2].startswith("-") else []
        return [*words[:2], *rest] if rest else []
    if words[0] in PYTHONS and words[1:2] == ["-m"] and len(words) > 2:
        return words[:3]
    if words[0] in SCRIPT_RUNNERS:
        script = next((n for n, word in enumerate(words[1:], 1) if not word.startswith("-")), None)
        return words[: script + 1] if script is not None else []
    if words[0] in TWO_WORD_PROGRAMS and len(words) > 1 and not words[1].startswith("-"):
        return words[:2]
    return words[:1]


def offered_rule(request: ApprovalRequest) -> str:
    """What "always allow" offers for a request, in every front-end: the command's prefix, the
    tool's name, or every path for a write ("" when there is nothing to offer)."""
    match request:
        case CommandApproval():
            return suggested_prefix(analysis_of(request))
        case ToolCallApproval():
            return request.tool
        case WriteApproval():
            return "*"
        case PlantedFileApproval() | GitEntryApproval() | SecretReadApproval():
            return ""
        case _:
            assert_never(request)


def prefix_words(prefix: str) -> list[str] | None:
    try:
        words = shlex.split(prefix)
    except ValueError:
        return None
    return words or None


_SHELL_SPLIT = re.compile(r"[\s;&|()<>{}`$=!]+")
_QUOTES = str.maketrans("", "", "'\"\\")
_WILDCARDS = re.compile(r"[*?\[\]!]")


def _in_order(wanted: list[str], words: list[str]) -> bool:
    """Whether `wanted` appear in `words` in this order, others between them allowed."""
    remaining = iter(words)
    return all(any(_could_be(word, w) for word in remaining) for w in wanted)


def _could_be(word: str, wanted: str) -> bool:
    """Whether a token of a part's arguments may be the word `wanted`: the same, or a glob it
    matches (`/bin/r?`, `pu?h`) that has a letter of its own, so that `ls *` runs nothing."""
    if word == wanted:
        return True
    return bool(_WILDCARDS.search(word)) and bool(_WILDCARDS.sub("", word)) and fnmatch.fnmatchcase(wanted, word)


def _covers(prefix: list[str], words: list[str], patterns: set[str]) -> bool:
    """Whether `words` start with `prefix`. A word in `patterns` is a glob bash expands: it
    stands for one or more of the prefix's words that it matches (`git pu?h`, `*`)."""
    if not prefix:
        return True
    if not words:
        return False
    word = words[0]
    if word == prefix[0] and _covers(prefix[1:], words[1:], patterns):
        return True
    if word not in patterns:
        return False
    for count in range(1, len(prefix) + 1):
        if not fnmatch.fnmatchcase(prefix[count - 1], word):
            return False
        if _covers(prefix[count:], words[1:], patterns):
            return True
    return False


@dataclass
class Rules:
    """Word-prefix rules: `git status` matches `git status --short`, not `git stash`."""

    allow: list[list[str]] = field(default_factory=list)
    ask: list[list[str]] = field(default_factory=list)
    deny: list[list[str]] = field(default_factory=list)
    network: list[list[str]] = field(default_factory=list)
    """Allow rules that also grant the network in the sandbox (and cover the network risk)."""

    def add(self, kind: str, prefix: str, network: bool = False) -> bool:
        words = prefix_words(prefix)
        if words is None:
            return False
        bucket = getattr(self, kind)
        if words not in bucket:
            bucket.append(words)
        if network and kind == ALLOW and words not in self.network:
            self.network.append(words)
        return True

    def grants_network(self, part: Part) -> bool:
        return not part.by_path and self._match(self.network, part.rule_words) is not None

    @staticmethod
    def _match(bucket: list[list[str]], words: list[str]) -> str | None:
        for prefix in bucket:
            if words[: len(prefix)] == prefix:
                return " ".join(prefix)
        return None

    def deny_run_inside(self, part: Part) -> str | None:
        """A deny rule whose program appears among the part's arguments, followed by the rule's
        other words (`flock x rm f`, `xvfb-run git -C . push`, `script -c 'rm f'`): a program
        that runs another may run the denied one, so the part asks; so does one naming a use
        the rule's effect denies (`flock x find . -delete`, `xvfb-run git worktree remove d`
        under a deny for `rm`). Arguments are split at spaces and shell operators, with quotes
        and backslashes removed. A part on the safe list (`echo rm`, `cd s*`, `ls s*`) runs
        nothing, whatever its arguments name."""
        if not self.deny or part.safe:
            return None
        denied = [*self.deny, *(found.prefix for found in denied_programs(self.deny))]
        tokens = [
            piece.translate(_QUOTES)
            for word in part.words[1:]
            for piece in _SHELL_SPLIT.split(word)
            if piece.translate(_QUOTES)
        ]
        for prefix in denied:
            for index, token in enumerate(tokens):
                name = token if "/" in prefix[0] else os.path.basename(token)
                if _could_be(name, prefix[0]) and _in_order(prefix[1:], tokens[index + 1:]):
                    return " ".join(prefix)
        for index, token in enumerate(tokens):
            option = denied_option(self.deny, [os.path.basename(token), *tokens[index + 1:]])
            if option is not None:
                return " ".join(option.prefix)
        return None

    def verdict(self, part: Part) -> tuple[str, str] | None:
        """Deny and ask rules match the program by its base name (`/bin/rm` is `rm`), and a glob
        by what it could expand to (`/bin/r?`, `git pu?h`); an allow rule matches the words
        exactly, and one for a bare name does not cover a program run by its path (`./pytest`)."""
        if not part.rule_words:
            return None
        for kind in (DENY, ASK, ALLOW):
            for prefix in getattr(self, kind):
                if _matches(prefix, part, kind):
                    return kind, " ".join(prefix)
        return None

    def denied_effect(self, part: Part) -> str | None:
        """Why a deny rule that names an effect denies this part: another program with the effect
        (`unlink` under `rm`, `git send-pack` under `git push`) or an option that has it
        (`find -delete`, `rsync --delete`); see safety/effects.py."""
        if not self.deny or not part.rule_words:
            return None
        for found in denied_programs(self.deny):
            if _matches(found.prefix, part, DENY):
                return f"denied by the rule '{found.rule}': {' '.join(found.prefix)} {found.effect} too"
        option = denied_option(self.deny, part.rule_words)
        if option is not None:
            return f"denied by the rule '{option.rule}': this {' '.join(option.prefix)} command {option.effect} too"
        return None

    def hidden_from_deny(self, part: Part) -> str | None:
        """Why a deny rule cannot be checked against this part (a git alias)."""
        return hidden_git_command(self.deny, part.rule_words) if part.rule_words else None


def _matches(prefix: list[str], part: Part, kind: str) -> bool:
    """Deny and ask rules match the program by its base name and a glob by what it could expand
    to; an allow rule matches the words exactly, and not a program run by its path unless it names one."""
    words = part.rule_words
    if kind == ALLOW and part.by_path and "/" not in prefix[0]:
        return False
    patterns = part.glob_words | ({words[0]} if part.words[0] in part.glob_words else set())
    candidate = [part.words[0], *words[1:]] if "/" in prefix[0] else words
    return candidate[: len(prefix)] == prefix or (kind != ALLOW and _covers(prefix, candidate, patterns))


class Policy:
    """Mode and rules, shared by the UI (which changes them) and the worker (which reads them)."""

    def __init__(self, mode: str = "ask", rules: Rules | None = None, writes: str = "auto") -> None:
        if mode not in MODES:
            raise ConfigError(f"approval mode must be one of {', '.join(MODES)}, got {mode!r}")
        if writes not in WRITE_MODES:
            raise ConfigError(f"writes must be one of {', '.join(WRITE_MODES)}, got {writes!r}")
        self._lock = threading.Lock()
        self._mode = mode
        self.rules = rules or Rules()
        self.writes = writes
        """auto: writes happen without asking (shown as diffs); ask: each write opens the dialog."""
        self._write_globs: list[str] = []

    def allow_writes(self, glob: str) -> None:
        with self._lock:
            self._write_globs.append(glob)

    def write_allowed(self, path: str) -> str | None:
        """Why a write to `path` needs no question (None: ask)."""
        if self.writes == "auto":
            return "writes are not gated (writes = auto)"
        with self._lock:
            glob = next((g for g in self._write_globs if fnmatch.fnmatchcase(path, g)), None)
        return f"writes to '{glob}' allowed for this session" if glob else None

    @property
    def mode(self) -> str:
        with self._lock:
            return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in MODES:
            raise ValueError(value)
        with self._lock:
            self._mode = value

    def allow_prefix(self, prefix: str) -> bool:
        with self._lock:
            return self.rules.add(ALLOW, prefix)

    def tool_verdict(self, name: str, read_only: bool) -> tuple[str, str]:
        """A tool server's tool: rules name it (`mcp__fs__read`, or a glob `mcp__fs__*`), deny
        first; then yolo allows all, auto-safe the ones the server marks read-only."""
        with self._lock:
            mode, rules = self._mode, self.rules
            for kind in (DENY, ASK, ALLOW):
                for prefix in getattr(rules, kind):
                    if len(prefix) == 1 and fnmatch.fnmatchcase(name, prefix[0]):
                        return kind, f"{'denied' if kind == DENY else 'asked' if kind == ASK else 'allowed'} by the rule '{prefix[0]}'"
        if mode == "yolo":
            return ALLOW, "yolo mode"
        if mode in ("auto-safe", "plan") and read_only:
            return ALLOW, "the server marks it read-only"
        return ASK, "needs approval" + ("" if read_only else " (not marked read-only)")

    def evaluate(self, command: str, root: Path) -> tuple[str, list[PartVerdict]]:
        """The overall verdict and one verdict per part."""
        from mzagent_tui.agent.safety.commands import analyse

        return self.judge(analyse(command, root))

    def judge(self, analysis: Analysis) -> tuple[str, list[PartVerdict]]:
        """`evaluate` for a command already read."""
        command = analysis.command
        with self._lock:
            mode, rules = self._mode, self.rules
            verdicts = [_part_verdict(part, mode, rules, analysis) for part in analysis.parts]
        if analysis.problems:
            verdicts.append(PartVerdict(command[:80], ASK, "not understood: " + "; ".join(analysis.problems)))
            if mode == "yolo" and not rules.deny:
                verdicts[-1] = PartVerdict(command[:80], ALLOW, "yolo mode (not understood: " + "; ".join(analysis.problems) + ")")
        kinds = {v.verdict for v in verdicts}
        overall = DENY if DENY in kinds else ASK if ASK in kinds else ALLOW
        return overall, verdicts


def _part_verdict(part: Part, mode: str, rules: Rules, analysis: Analysis) -> PartVerdict:
    from mzagent_tui.agent.safety.commands import NETWORK  # loaded by then: the analysis came from there

    risks = tuple(part.risks)
    rule = rules.verdict(part)
    if rule is not None and rule[0] == DENY:
        return PartVerdict(part.text, DENY, f"denied by the rule '{rule[1]}'", risks)
    effect = rules.denied_effect(part)
    if effect is not None:
        return PartVerdict(part.text, DENY, effect, risks)
    inside = rules.deny_run_inside(part)
    if inside is not None:
        return PartVerdict(part.text, ASK, f"{part.program} may run '{inside}', which a deny rule forbids", risks)
    hidden = rules.hidden_from_deny(part)
    if hidden is not None:
        return PartVerdict(part.text, ASK, hidden, risks)
    if mode == "yolo":
        if part.problems and rules.deny:
            return PartVerdict(part.text, ASK, "not understood, so deny rules cannot be checked: " + "; ".join(part.problems), risks)
        return PartVerdict(part.text, ALLOW, "yolo mode", risks)
    if part.problems:
        return PartVerdict(part.text, ASK, "not understood: " + "; ".join(part.problems), risks)
    if rule is not None and rule[0] == ALLOW and risks == (NETWORK,) and not part.concerns and rules.grants_network(part):
        return PartVerdict(part.text, ALLOW, f"allowed with network by the rule '{rule[1]}'", risks, network=True)
    if risks or part.concerns:
        return PartVerdict(part.text, ASK, "; ".join(part.concerns) or "risky", risks)
    if rule is not None and rule[0] == ASK:
        return PartVerdict(part.text, ASK, f"the rule '{rule[1]}' asks", risks)
    if part.wrapper:
        return PartVerdict(part.text, ALLOW, "runs the script whose parts follow", risks)
    if rule is not None:
        return PartVerdict(part.text, ALLOW, f"allowed by the rule '{rule[1]}'", risks, network=rules.grants_network(part))
    if not part.words and part.safe:
        return PartVerdict(part.text, ALLOW, "sets a harmless variable", risks)
    if part.program == "cd" and part.safe:
        return PartVerdict(part.text, ALLOW, "moves to a folder inside the project", risks)
    if mode in ("auto-safe", "plan") and part.safe:
        return PartVerdict(part.text, ALLOW, "read-only (safe list)", risks)
    if mode in ("auto-safe", "plan") and part.not_safe:
        return PartVerdict(part.text, ASK, f"needs approval ({part.not_safe})", risks)
    return PartVerdict(part.text, ASK, "needs approval", risks)


def load_policy(mode: str | None = None, path: Path | None = None, writes: str | None = None) -> Policy:
    """The `[approval]` table of the user config: mode, writes and allow/ask/deny prefix lists.

    Read only from the user's own config file, never from the project or its `.env`, so a
    project cannot switch on auto-approval or trust its own commands.
    """
    path = path or user_config_path()
    table: dict[str, object] = {}
    if path.is_file():
        try:
            with path.open("rb") as handle:
                table = tomllib.load(handle).get("approval", {})
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from None
    rules = Rules()
    for kind in (ALLOW, ASK, DENY):
        entries = table.get(kind, [])
        if not isinstance(entries, list):
            raise ConfigError(f"[approval] {kind} in {path} must be a list of command prefixes")
        for entry in entries:
            prefix, network = _rule_entry(entry, kind, path)
            if not rules.add(kind, prefix, network):
                raise ConfigError(f"[approval] {kind} in {path} has an unreadable prefix: {prefix!r}")
    chosen = mode or str(table.get("mode", "ask"))
    return Policy(chosen, rules, writes or str(table.get("writes", "auto")))


def _rule_entry(entry: object, kind: str, path: Path) -> tuple[str, bool]:
    """`"pytest"` or, in allow, `{ prefix = "pip install", network = true }`."""
    if isinstance(entry, str):
        return entry, False
    if kind == ALLOW and isinstance(entry, dict) and isinstance(entry.get("prefix"), str) and isinstance(entry.get("network", False), bool) and set(entry) <= {"prefix", "network"}:
        return entry["prefix"], bool(entry.get("network", False))
    raise ConfigError(f"[approval] {kind} in {path}: {entry!r} must be a command prefix (or, in allow, {{ prefix = \"…\", network = true }})")


class PolicyApprover:
    """The policy first, then the front-end's approver; remembers "always allow" answers."""

    def __init__(self, ask: Approver, policy: Policy | None = None, emit: EventSink | None = None) -> None:
        self.ask = ask
        self.policy = policy or Policy()
        self._emit = emit

    def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        planning = self.policy.mode == "plan"
        match request:
            case CommandApproval():
                overall, parts = self.policy.judge(analysis_of(request))
                if overall == DENY:
                    reason = next(p.reason for p in parts if p.verdict == DENY)
                    return ApprovalDecision(False, note=f"{reason} (the user's configuration)")
                if overall == ALLOW and not request.ask_even_if_allowed and not (request.ask_unless_yolo and self.policy.mode != "yolo"):
                    return ApprovalDecision(True, note="; ".join(sorted({p.reason for p in parts})), network=any(p.network for p in parts), by_policy=True)
                if planning:
                    return ApprovalDecision(False, note=PLAN_COMMAND_NOTE)
                request = dataclasses.replace(request, parts=tuple(parts))
            case ToolCallApproval():
                verdict, reason = self.policy.tool_verdict(request.tool, request.read_only)
                if verdict == DENY:
                    return ApprovalDecision(False, note=f"{reason} (the user's configuration)")
                if verdict == ALLOW and not request.ask_even_if_allowed:
                    return ApprovalDecision(True, note=reason, by_policy=True)
                if planning:
                    return ApprovalDecision(False, note=PLAN_TOOL_NOTE)
                request = dataclasses.replace(request, parts=(PartVerdict(request.tool, ASK, reason),))
            case WriteApproval() | PlantedFileApproval() | GitEntryApproval() if planning:
                return ApprovalDecision(False, note=PLAN_WRITE_NOTE)
            case GitEntryApproval() | SecretReadApproval(ask_even_if_allowed=True) | PlantedFileApproval(ask_even_if_allowed=True):
                pass  # asked in every mode, yolo too
            case _ if self.policy.mode == "yolo":
                return ApprovalDecision(True, note="yolo mode", by_policy=True)
            case WriteApproval() if (allowed := self.policy.write_allowed(request.path)):
                return ApprovalDecision(True, note=allowed, by_policy=True)
        if self._emit is not None:
            self._emit(ApprovalAsked(request.summary, request.cwd, request.reason))
        decision = self.ask.approve(request)
        if decision.approved and decision.allow_writes:
            self.policy.allow_writes(decision.allow_writes)
        if decision.approved and decision.always_prefix:
            self.policy.allow_prefix(decision.always_prefix)
            if decision.save_rule:
                self._save(decision.always_prefix)
        return decision

    def _save(self, prefix: str) -> None:
        try:
            where = save_allow_rule(prefix)
            text = f"commands starting with '{prefix}' are now allowed in every session ({where})"
        except ConfigError as exc:
            text = f"'{prefix}' is allowed for this session only; saving it failed: {exc}"
        if self._emit is not None:
            self._emit(Notice(text))


def save_allow_rule(prefix: str, path: Path | None = None) -> Path:
    """Add `prefix` to `[approval] allow` in the user config, keeping its comments and layout."""
    import tomlkit  # only needed when the user saves a rule
    from tomlkit.exceptions import TOMLKitError


    path = path or user_config_path()
    if prefix_words(prefix) is None:
        raise ConfigError(f"the prefix {prefix!r} cannot be read as a command")
    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8") if path.is_file() else "")
        table = document.setdefault("approval", tomlkit.table())
        allow = table.setdefault(ALLOW, tomlkit.array())
        if not isinstance(allow, list):
            raise ConfigError(f"[approval] allow in {path} is not a list")
        if prefix not in allow:
            allow.append(prefix)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, tomlkit.dumps(document).encode("utf-8"))
    except (OSError, TOMLKitError) as exc:
        raise ConfigError(f"cannot update {path}: {exc}") from None
    return path
