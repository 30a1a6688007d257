"""Read a shell command the way the policy needs it: parts, programs, risks, and what is not understood.

A hand-written tokenizer that fails closed: anything it does not fully understand (command or
process substitution, `${...}`, subshells, brace groups, here-docs, line continuations, control
characters, unbalanced quotes, very long commands, redirection into files) is recorded as a
problem, and a part with a problem is never allowed without asking. Wrappers (`sudo`, `env`,
`timeout`, `nice`, `nohup`, `bash -c`, …) are unwrapped so a rule for `ls` never covers
`sudo ls` or `bash -c 'ls; rm -rf ~'`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_COMMAND_CHARS = 2000
MAX_UNWRAP_DEPTH = 4
SEPARATORS = ("&&", "||", "|&", ";", "|", "&", "\n")
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish"}
INTERPRETERS = {"python", "python3", "perl", "ruby", "node", "php", "lua", "Rscript"}
# Variables that change which code runs: `LD_PRELOAD=x ls` is not `ls`.
DANGEROUS_VARIABLES = {
    "PATH", "BASH_ENV", "ENV", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB",
    "RUBYOPT", "NODE_OPTIONS", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL", "PROMPT_COMMAND",
    "IFS", "SHELLOPTS", "PS4",
}
SHELL_KEYWORDS = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "function", "select", "{", "}", "[[", "]]", "!", "coproc"}

# Risk marks shown in the dialog; a part with any of them is never auto-allowed (except yolo).
DELETE, PRIVILEGE, NETWORK, PIPE_TO_SHELL, OUTSIDE, PERMISSIONS = (
    "deletes files", "runs with privileges", "network or download", "pipes into a shell",
    "writes outside the project", "changes permissions",
)

_DELETE_PROGRAMS = {"rm", "rmdir", "unlink", "shred", "truncate", "dd", "srm", "wipe"}
_PRIVILEGE_PROGRAMS = {"sudo", "su", "doas", "pkexec", "runuser"}
_NETWORK_PROGRAMS = {"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "socat", "aria2c", "http", "xh"}
_PERMISSION_PROGRAMS = {"chmod", "chown", "chgrp", "setfacl", "chattr"}
_WRITING_PROGRAMS = {"cp", "mv", "ln", "tee", "touch", "mkdir", "rm", "rmdir", "install", "rsync", "dd", "truncate", "chmod", "chown"}
_INSTALLERS = {"pip", "pip3", "npm", "yarn", "pnpm", "apt", "apt-get", "brew", "dnf", "yum", "pacman", "gem", "cargo", "go", "uv", "conda", "poetry"}
_INSTALL_VERBS = {"install", "add", "i", "publish", "get", "update", "upgrade", "sync"}
_GIT_NETWORK = {"push", "pull", "fetch", "clone", "remote", "submodule", "ls-remote"}
_GIT_DELETE = {"clean", "rm"}

# Read-only programs the `auto-safe` mode may run without asking.
SAFE_PROGRAMS = {
    "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag",
    "tree", "file", "stat", "du", "df", "which", "whoami", "date", "uname", "basename", "dirname",
    "realpath", "readlink", "diff", "cmp", "sort", "uniq", "cut", "tr", "true", "false", "test", "nl",
    "md5sum", "sha1sum", "sha256sum", "id", "hostname", "column", "jq", "seq", "comm", "paste", "fold",
    "expand", "rev", "tac", "strings", "od", "hexdump", "xxd", "less", "more", "find", "git",
}
SAFE_GIT = {"status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog", "branch", "tag", "grep"}
_FIND_UNSAFE = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
_GIT_UNSAFE_OPTIONS = ("-c", "--exec-path", "--config-env", "--upload-pack", "--receive-pack", "-x", "--ext-diff", "--output")
_BRANCH_UNSAFE = {"-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force", "--set-upstream-to", "-u"}


@dataclass
class Part:
    """One simple command of a chain or pipeline."""

    text: str
    words: list[str] = field(default_factory=list)
    """The words after unquoting, assignments and wrappers removed."""
    problems: list[str] = field(default_factory=list)
    risks: list[str] = field(default_factory=list)
    piped_into: bool = False
    """It reads the output of the previous part (`a | b`)."""
    writes: list[str] = field(default_factory=list)
    """Files its output is redirected into (`> out.txt`)."""

    @property
    def program(self) -> str:
        return os.path.basename(self.words[0]) if self.words else ""

    @property
    def safe(self) -> bool:
        """Read-only by the safe list; never true for programs that run code from their arguments."""
        return not self.problems and not self.risks and is_safe(self.words)


@dataclass
class Analysis:
    command: str
    parts: list[Part]
    problems: list[str]
    """Problems of the whole command (length, quotes, control characters)."""


def analyse(command: str, root: Path) -> Analysis:
    problems: list[str] = []
    if len(command) > MAX_COMMAND_CHARS:
        problems.append(f"longer than {MAX_COMMAND_CHARS} characters")
    if any((ord(c) < 32 and c not in "\t\n") or ord(c) == 127 for c in command):
        problems.append("contains control characters")
    raw_parts, split_problems = _split(command)
    problems.extend(split_problems)
    parts: list[Part] = []
    for raw in raw_parts:
        parts.extend(_finish_part(raw, root, depth=0))
    if not parts:
        parts.append(Part(command, problems=["empty command"]))
    return Analysis(command, parts, problems)


def is_safe(words: list[str]) -> bool:
    if not words:
        return False
    program = os.path.basename(words[0])
    if program not in SAFE_PROGRAMS:
        return False
    if program == "find":
        return not any(w in _FIND_UNSAFE for w in words)
    if program == "git":
        return _git_safe(words[1:])
    return True


def _git_safe(args: list[str]) -> bool:
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option.startswith(_GIT_UNSAFE_OPTIONS):
            return False
        if option in ("-C", "--git-dir", "--work-tree") and rest:
            rest.pop(0)
    if not rest or rest[0] not in SAFE_GIT:
        return False
    sub, options = rest[0], rest[1:]
    if any(o.startswith(_GIT_UNSAFE_OPTIONS) for o in options):
        return False
    if sub == "branch" and any(o in _BRANCH_UNSAFE for o in options):
        return False
    if sub == "tag" and options:
        return False
    return True


# Tokenizing ------------------------------------------------------------------------------


@dataclass
class _RawPart:
    """A part as the tokenizer leaves it, before assignments and wrappers are removed."""

    text: str
    tokens: list[str]
    problems: list[str]
    piped: bool
    writes: list[str]


def _split(command: str) -> tuple[list[_RawPart], list[str]]:
    """Split into parts on separators, outside quotes; collect tokens and problems per part."""
    parts: list[_RawPart] = []
    problems: list[str] = []
    tokens: list[str] = []
    part_problems: list[str] = []
    writes: list[str] = []
    word: list[str] = []
    in_word = False
    start = 0
    piped = False
    i = 0
    n = len(command)

    def end_word() -> None:
        nonlocal word, in_word
        if in_word:
            tokens.append("".join(word))
        word, in_word = [], False

    def end_part(stop: int, next_piped: bool) -> None:
        nonlocal tokens, part_problems, writes, start, piped
        end_word()
        text = command[start:stop].strip()
        if text or tokens:
            parts.append(_RawPart(text, tokens, part_problems, piped, writes))
        elif stop < n:
            problems.append("an empty part between separators")
        tokens, part_problems, writes = [], [], []
        start = stop
        piped = next_piped

    while i < n:
        char = command[i]
        if char == "'":
            close = command.find("'", i + 1)
            if close < 0:
                problems.append("unbalanced quotes")
                word.append(command[i + 1:])
                in_word = True
                break
            word.append(command[i + 1: close])
            in_word = True
            i = close + 1
            continue
        if char == '"':
            j = i + 1
            chunk: list[str] = []
            while j < n and command[j] != '"':
                if command[j] == "\\" and j + 1 < n:
                    if command[j + 1] == "\n":
                        part_problems.append("a line continuation")
                    chunk.append(command[j + 1])
                    j += 2
                    continue
                if command[j] == "`" or command.startswith("$(", j) or command.startswith("${", j):
                    part_problems.append("command substitution or expansion inside quotes")
                chunk.append(command[j])
                j += 1
            if j >= n:
                problems.append("unbalanced quotes")
                word.extend(chunk)
                in_word = True
                break
            word.extend(chunk)
            in_word = True
            i = j + 1
            continue
        if char == "\\":
            if i + 1 < n and command[i + 1] == "\n":
                part_problems.append("a line continuation")
                i += 2
                continue
            if i + 1 < n:
                word.append(command[i + 1])
                in_word = True
            i += 2
            continue
        if char == "`":
            part_problems.append("command substitution (backticks)")
            word.append(char)
            in_word = True
            i += 1
            continue
        if char == "$" and i + 1 < n and command[i + 1] in "({[":
            part_problems.append("command substitution or expansion ($( ), ${ })")
            word.append(char)
            in_word = True
            i += 1
            continue
        if char == "#" and not in_word:
            newline = command.find("\n", i)
            i = n if newline < 0 else newline
            continue
        separator = next((s for s in SEPARATORS if command.startswith(s, i)), None)
        if separator is not None and not (separator == "&" and _is_redirect_amp(command, i)):
            end_part(i, separator in ("|", "|&"))
            i += len(separator)
            start = i
            continue
        if char in "()":
            part_problems.append("a subshell or grouping ( )")
            i += 1
            continue
        if char in "<>":
            i = _redirection(command, i, word, in_word, tokens, part_problems, writes)
            word, in_word = [], False
            continue
        if char in " \t":
            end_word()
            i += 1
            continue
        word.append(char)
        in_word = True
        i += 1
    end_part(n, False)
    return parts, problems


def _is_redirect_amp(command: str, i: int) -> bool:
    """`&>` and `>&` are redirections, not background separators."""
    return command.startswith("&>", i) or (i > 0 and command[i - 1] == ">")


def _redirection(command: str, i: int, word: list[str], in_word: bool, tokens: list[str], problems: list[str], writes: list[str]) -> int:
    """Read a redirection operator and its target; record what is not harmless."""
    prefix = "".join(word) if in_word else ""
    if in_word and not prefix.isdigit() and prefix != "&":
        tokens.append(prefix)
    if command.startswith("<<", i):
        problems.append("a here-document or here-string (<<)")
        return i + 2
    if command.startswith("<(", i) or command.startswith(">(", i):
        problems.append("process substitution <( ) or >( )")
        return i + 2
    op_end = i + 1
    while op_end < len(command) and command[op_end] in ">&|":
        op_end += 1
    operator = command[i:op_end]
    j = op_end
    while j < len(command) and command[j] in " \t":
        j += 1
    k = j
    while k < len(command) and command[k] not in " \t;&|<>()\n":
        k += 1
    target = command[j:k].strip("'\"")
    if operator.endswith("&") and target.isdigit():
        return k  # 2>&1: duplicate a descriptor
    if target in HARMLESS_TARGETS:
        return k
    if not target:
        problems.append("a redirection without a target")
    elif operator.startswith("<"):
        problems.append(f"reads {target} through a redirection")
    else:
        problems.append(f"redirects output into a file ({target})")
        writes.append(target)
    return k


# Parts -----------------------------------------------------------------------------------


def _finish_part(raw: _RawPart, root: Path, depth: int) -> list[Part]:
    words = list(raw.tokens)
    part = Part(raw.text, problems=list(raw.problems), piped_into=raw.piped, writes=raw.writes)
    words = _drop_assignments(words, part)
    extra: list[Part] = []
    for _ in range(MAX_UNWRAP_DEPTH + 1):
        if not words:
            break
        program = os.path.basename(words[0])
        if program.startswith("$"):
            part.problems.append("the program name is a variable")
            break
        if program in SHELL_KEYWORDS:
            part.problems.append(f"shell control flow or grouping ({program})")
            break
        if program in _PRIVILEGE_PROGRAMS:
            part.risks.append(PRIVILEGE)
            words = _skip_options(words[1:], takes_value={"-u", "-g", "-C", "-p"})
            continue
        if program == "env":
            words = _drop_assignments(_skip_options(words[1:], takes_value={"-u", "-C", "-S"}), part)
            continue
        if program == "timeout":
            words = _skip_options(words[1:], takes_value={"-s", "-k", "--signal", "--kill-after"})
            words = words[1:]  # the duration
            continue
        if program == "nice":
            words = _skip_options(words[1:], takes_value={"-n"})
            continue
        if program in ("nohup", "time", "exec", "command", "builtin", "stdbuf", "ionice"):
            words = _skip_options(words[1:], takes_value={"-o", "-e", "-i", "-c", "-n"})
            continue
        if program in ("xargs", "parallel", "watch"):
            part.problems.append(f"{program} runs other commands")
            break
        if program in SHELLS and "-c" in words[1:]:
            index = words.index("-c")
            if depth >= MAX_UNWRAP_DEPTH or index + 1 >= len(words):
                part.problems.append("nested shells too deep or without a command")
                break
            inner = analyse_inner(words[index + 1], root, depth + 1)
            for item in inner:
                item.text = f"{program} -c: {item.text}"
            extra.extend(inner)
            words = []
            break
        break
    part.words = words
    if words:
        part.risks.extend(_risks(part, root))
    elif not extra and not part.problems:
        part.problems.append("no command")
    return ([part] if words or not extra else []) + extra


def analyse_inner(command: str, root: Path, depth: int) -> list[Part]:
    raw_parts, problems = _split(command)
    parts: list[Part] = []
    for raw in raw_parts:
        raw.problems.extend(problems)
        parts.extend(_finish_part(raw, root, depth))
    return parts or [Part(command, problems=["empty command"])]


def _drop_assignments(words: list[str], part: Part) -> list[str]:
    """`VAR=x cmd` counts as `cmd`, unless VAR changes which code runs."""
    rest = list(words)
    while rest and _is_assignment(rest[0]):
        name = rest.pop(0).partition("=")[0]
        if name in DANGEROUS_VARIABLES or name.startswith(("LD_", "DYLD_")):
            part.problems.append(f"sets {name}, which changes what runs")
    return rest


def _is_assignment(word: str) -> bool:
    name, sep, _ = word.partition("=")
    return bool(sep) and name.isidentifier()


def _skip_options(words: list[str], takes_value: set[str]) -> list[str]:
    rest = list(words)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option == "--":
            break
        if option in takes_value and rest:
            rest.pop(0)
    return rest


def _risks(part: Part, root: Path) -> list[str]:
    words, program = part.words, part.program
    args = words[1:]
    risks: list[str] = []
    if program in _DELETE_PROGRAMS:
        risks.append(DELETE)
    if program == "find" and "-delete" in args:
        risks.append(DELETE)
    if program == "git":
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub in _GIT_DELETE or (sub == "reset" and "--hard" in args) or (sub == "checkout" and "--" in args):
            risks.append(DELETE)
        if sub in _GIT_NETWORK:
            risks.append(NETWORK)
    if program in _NETWORK_PROGRAMS:
        risks.append(NETWORK)
    if program in _INSTALLERS and any(a in _INSTALL_VERBS for a in args[:3]):
        risks.append(NETWORK)
    if program in INTERPRETERS and args[:2] == ["-m", "pip"]:
        risks.append(NETWORK)
    if program in _PERMISSION_PROGRAMS:
        risks.append(PERMISSIONS)
    if part.piped_into and (program in SHELLS or program in INTERPRETERS):
        risks.append(PIPE_TO_SHELL)
    if program in INTERPRETERS and any(a in ("-c", "-e", "--eval") for a in args):
        part.problems.append(f"{program} runs code from its arguments")
    written = [a for a in args if not a.startswith("-")] if program in _WRITING_PROGRAMS else []
    if any(_outside(target, root) for target in written + part.writes):
        risks.append(OUTSIDE)
    return risks


def _outside(arg: str, root: Path) -> bool:
    if arg.startswith("~"):
        return True
    path = Path(arg)
    if not path.is_absolute():
        path = root / path
    try:
        return not path.resolve().is_relative_to(root)
    except (OSError, RuntimeError, ValueError):
        return True
