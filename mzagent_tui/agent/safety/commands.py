"""Read a shell command the way the policy needs it: parts, programs, risks, concerns, and what is
not understood.

The text is parsed with bash's grammar (`shell_parse`); each simple command becomes a `Part`.
Wrappers are unwrapped (`sudo`, `env`, `timeout`, `nice`, `exec`, `eval`, `bash -c`, …) so a rule
for `ls` never covers `sudo ls` or `bash -c 'ls; rm -rf ~'`, and the wrapper's own options,
assignments and redirections are judged too (the stricter verdict wins). A part carries three
kinds of findings:

- *problems*: something not understood (an expansion, a syntax error): asks, and in `yolo` it
  still asks when deny rules exist, because a deny rule cannot be checked against it;
- *concerns*: understood, but not read-only (writes a file, runs a program, reads outside the
  project or a secret, sets a variable that changes what runs): asks in every mode but `yolo`,
  also under an allow rule;
- *risks*: the marks shown in the dialog (deletes files, network, …): ask like concerns.
"""

from __future__ import annotations

import fnmatch
import glob
import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.safety import safe_commands, safe_git, trusted_path
from mzagent_tui.agent.safety.committed_secrets import committed_secret_concern
from mzagent_tui.agent.safety.credentials import FILE_SCAN_BYTES, credential_in_file
from mzagent_tui.agent.safety.effects import GIT_COMMANDS
from mzagent_tui.agent.safety.folder_reads import folder_read_concern, folders_read
from mzagent_tui.agent.safety.git_config import repository_config_concerns
from mzagent_tui.agent.safety.reshaped_reads import FolderWalk, GitOutput, LargeFile, UnscannedRead, answered_by, passes_on, reshapes
from mzagent_tui.agent.safety.sensitive import is_secret
from mzagent_tui.agent.safety.shell_parse import MAX_DEPTH, Redirect, Script, SimpleCommand, Word, parse

MAX_COMMAND_CHARS = 2000
GLOB_LIMIT = 1000
"""Glob matches checked one by one; a glob matching more asks."""
GLOB_DEPTH = 3
"""Folder levels with wildcards a glob may have (`/*/*/*/*/*/*/x` walks the whole disk); more asks."""
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
SHELLS = {"sh", "bash", "dash"}
OTHER_SHELLS = {"zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox"}
INTERPRETERS = {"python", "python3", "perl", "ruby", "node", "php", "lua", "Rscript", "deno", "bun", "tclsh", "osascript"}
# Interpreter options that take code as an argument: short letters (also inside a cluster such as
# `-Ic`) and long forms.
_CODE_LETTERS = {"python": "c", "python3": "c", "perl": "eE", "ruby": "e", "php": "r", "lua": "e", "Rscript": "e", "tclsh": "", "osascript": "e"}
_CODE_LONG = {"--eval", "--print", "--command"}
_VERSIONED_INTERPRETER = re.compile(r"(python|pypy|perl|ruby|node|php|lua)[0-9.]*")
_CODE_PROGRAMS = {"awk", "gawk", "mawk", "nawk", "sed", "xargs", "parallel", "watch", "source", ".", "trap", "let", "compgen"}
"""`let` evaluates arithmetic, where a variable holding `a[$(cmd)]` runs cmd; `compgen -W` expands its words."""
_DECLARATIONS = {"declare", "typeset", "local", "export", "readonly", "unset"}
"""Read by the parser as declarations (asking); reached through `builtin` or `command` they ask too."""
_SET_LETTERS, _SET_NAMES = {"a", "k"}, {"allexport", "keyword"}
"""`set -a` exports every later assignment; `set -k` sends an assignment among a command's
arguments to its environment (`git X=1 push` is `git push`)."""
# Variables a command may be given without asking: they change formatting, never what runs.
HARMLESS_VARIABLES = {
    "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES", "CI",
    "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHASHSEED", "RUST_BACKTRACE",
    "RUST_LOG", "NODE_ENV", "DEBUG", "VERBOSE", "TERM",
}
# Variables named in the dialog as changing which code runs (all non-harmless ones ask anyway).
DANGEROUS_VARIABLES = {
    "PATH", "BASH_ENV", "ENV", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT", "NODE_OPTIONS",
    "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_EXTERNAL_DIFF", "HOME", "XDG_CONFIG_HOME", "PROMPT_COMMAND", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "LESSOPEN", "EDITOR",
    # options or commands for the programs of safe_commands.CARRIERS
    "TAR_OPTIONS", "ZIPOPT", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "LESS", "LESSKEYIN", "LESSKEY", "LESSCLOSE", "MANPAGER",
    "MANOPT", "PAGER", "VISUAL", "VIMINIT", "EXINIT", "SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER",
}

# Risk marks shown in the dialog; a part with any of them is never auto-allowed (except yolo).
DELETE, PRIVILEGE, NETWORK, PIPE_TO_SHELL, OUTSIDE, PERMISSIONS = (
    "deletes files", "runs with privileges", "network or download", "pipes into a shell",
    "writes outside the project", "changes permissions",
)

_DELETE_PROGRAMS = {"rm", "rmdir", "unlink", "shred", "truncate", "dd", "srm", "wipe"}
_PRIVILEGE_PROGRAMS = {"sudo", "su", "doas", "pkexec", "runuser"}
_NETWORK_PROGRAMS = {"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "socat", "aria2c", "http", "xh"}
_PRIVILEGE_VALUED = {"-u", "-g", "-C", "-p", "-h", "-U", "-D", "-R", "-r", "-t", "-T", "-c", "--user", "--group", "--other-user",
                     "--chdir", "--chroot", "--prompt", "--host", "--close-from", "--role", "--type", "--command", "--login-class"}
_COMMAND_STRINGS = {"su": "", "runuser": "", "script": "script writes a file (the typescript)", "flock": "flock creates a lock file"}
"""Programs whose `-c`/`--command` is a shell command line (parsed like `bash -c`'s script), and
what they do besides running it (su and runuser: privileges)."""
_PERMISSION_PROGRAMS = {"chmod", "chown", "chgrp", "setfacl", "chattr"}
_WRITING_PROGRAMS = {"cp", "mv", "ln", "tee", "touch", "mkdir", "rm", "rmdir", "install", "rsync", "dd", "truncate", "chmod", "chown"}
_INSTALLERS = {"pip", "pip3", "npm", "yarn", "pnpm", "apt", "apt-get", "brew", "dnf", "yum", "pacman", "gem", "cargo", "go", "uv", "conda", "poetry"}
_INSTALL_VERBS = {"install", "add", "i", "publish", "get", "update", "upgrade", "sync"}
_GIT_NETWORK = {"push", "pull", "fetch", "clone", "remote", "submodule", "ls-remote"}
_GIT_DELETE = {"clean", "rm"}


@dataclass
class Part:
    """One simple command of a chain or pipeline (or of a script inside `bash -c` / `eval`)."""

    text: str
    words: list[str] = field(default_factory=list)
    """The argv after assignments and wrappers are removed (a non-literal word as written)."""
    problems: list[str] = field(default_factory=list)
    concerns: list[str] = field(default_factory=list)
    risks: list[str] = field(default_factory=list)
    piped_into: bool = False
    safe: bool = False
    """Read-only by the safe list, with understood options and no findings."""
    not_safe: str = ""
    """Why it is not on the safe list."""
    rule_words: list[str] = field(default_factory=list)
    """The argv as rules see it: the program's base name, git's global options dropped."""
    wrapper: bool = False
    """The outer part of `bash -c SCRIPT` or `eval`: judged on its own options, the script's parts follow."""
    glob_words: set[str] = field(default_factory=set)
    """Its words bash expands as globs: a deny rule matches what they could expand to."""
    programs: list[str] = field(default_factory=list)
    """Every program word it runs, as written: each wrapper's (`env`, `timeout`, `bash`) and the program's."""
    runs_untrusted: str = ""
    """The file PATH finds for its program when that is in a folder commands can write
    (`.venv/bin/git`): not the program its name says."""
    drops_output: bool = False
    """Its standard output goes to /dev/null: what it prints reaches nobody, its exit status does."""
    reshapes: str = ""
    """Why its output is not what it reads as it is (`rev`, `base64`, `sort`), "" when it is."""
    unscanned: list[UnscannedRead] = field(default_factory=list)
    """What it reads that was not scanned for credentials before the command runs (a file past
    its first FILE_SCAN_BYTES, what git prints, a folder's files): scanned when a part reshapes it."""

    @property
    def program(self) -> str:
        return os.path.basename(self.words[0]) if self.words else ""

    @property
    def by_path(self) -> bool:
        """Run by a path (`./pytest`, `/bin/rm`), which an allow rule for the bare name does not cover."""
        return bool(self.words) and "/" in self.words[0]


@dataclass
class Analysis:
    """A command read once, by the tool that runs it; the gate, the dialog and the aids that read
    the command take this rather than parsing the text again."""

    command: str
    parts: list[Part]
    problems: list[str]
    """Problems of the whole command (length, control characters, syntax)."""
    script: Script
    """The command's own simple commands as the shell parser read them (not unwrapped)."""


@dataclass
class _State:
    """What later parts of one command line need from earlier ones: where `cd` went."""

    root: Path
    cwds: set[Path]
    cwd_unknown: bool = False
    path: str = ""
    """The commands' PATH: the safe list judges the program it finds, not the name."""


def analyse(command: str, root: Path, path: str | None = None) -> Analysis:
    """`path`: the PATH the command runs with (default: ours, which commands inherit)."""
    problems: list[str] = []
    if len(command) > MAX_COMMAND_CHARS:
        problems.append(f"longer than {MAX_COMMAND_CHARS} characters")
    if any((ord(c) < 32 and c not in "\t\n") or ord(c) == 127 for c in command):
        problems.append("contains control characters")
    state = _State(root, {root}, path=os.environ.get("PATH", os.defpath) if path is None else path)
    script = parse(command)
    parts = _parts(script, state, depth=0)
    problems.extend(script.problems)
    if not parts:
        parts.append(Part(command, problems=["empty command"]))
    _reshaped_reads(parts, problems)
    return Analysis(command, parts, problems, script)


def _reshaped_reads(parts: list[Part], problems: list[str]) -> None:
    """A read not scanned before the command runs, reshaped past the output scan by its own
    part or a part after it in a pipe (`git show HEAD | rev`), is scanned now, whole up to a
    bound (reshaped_reads). Only for a command that would otherwise run without a question: one
    that asks anyway is not made slower."""
    if problems or any(part.problems or part.concerns or part.risks for part in parts):
        return
    for index, part in enumerate(parts):
        if not part.unscanned or not passes_on(part.rule_words):
            continue
        piped = list(itertools.takewhile(lambda later: later.piped_into, parts[index + 1:]))
        why = (
            part.reshapes or next((later.reshapes for later in piped if later.reshapes), "")
            or answered_by(part.rule_words, part.drops_output, [later.rule_words for later in piped])
        )
        if not why:
            continue
        concern = next(filter(None, (read.concern(why) for read in part.unscanned)), None)
        if concern:
            part.concerns.append(concern)
            part.safe = False
            return


def _parts(script: Script, state: _State, depth: int) -> list[Part]:
    parts: list[Part] = []
    for command in script.commands:
        parts.extend(_command(command, state, depth))
    return parts


def _command(command: SimpleCommand, state: _State, depth: int) -> list[Part]:
    part = Part(command.text, problems=list(dict.fromkeys(command.problems)), piped_into=command.piped_into)
    for name, value in command.assignments:
        _assignment(name, value, part)
    for redirect in command.redirects:
        _redirect(redirect, part, state)
    matches = _globs(command.words, part, state)
    part.glob_words = {w.text for w in command.words if w.literal and w.glob}
    nested: list[Part] = []
    words = _unwrap([w.text for w in command.words], part, state, depth, nested)
    part.words = words
    if words and words[0] in part.glob_words:
        part.problems.append(f"a glob in the program's place ({words[0]}): bash runs whatever it expands to")
    if words and not part.wrapper:
        _carried(part, state, depth, nested)
    if words:
        _judge(part, state, matches)
    else:
        part.safe = not (part.problems or part.concerns or part.risks)
    _programs_found(part, state)
    return [part, *nested]


def _programs_found(part: Part, state: _State) -> None:
    """What PATH finds for each program word, judged: one a confined command may have written
    (`.venv/bin/ls`, `./bin`, `node_modules/.bin`, `.` on PATH) is not the read-only program the
    safe list knows, and a wrapper found there (`env`, `timeout`, `bash -c`) asks in every mode."""
    if not part.programs:
        return
    if state.cwd_unknown and any(not os.path.isabs(entry) for entry in state.path.split(os.pathsep)):
        part.safe, part.not_safe = False, "PATH has a relative folder, and where this part runs is not followed"
        return
    folders = trusted_path.untrusted_folders(state.root)
    runs = part.words[0] if part.words and not part.wrapper else None
    for word in part.programs:
        found = next(filter(None, (trusted_path.found_in_untrusted(word, state.path, cwd, folders) for cwd in sorted(state.cwds))), None)
        if found is None:
            continue
        why = f"{word} runs {found}, a program in a folder commands can write"
        if word == runs:
            part.safe, part.not_safe, part.runs_untrusted = False, part.not_safe or why, found
        elif why not in part.problems:
            part.problems.append(why)
            part.safe = False


# Assignments and redirections ---------------------------------------------------------------


def _assignment(name: str, value: Word, part: Part) -> None:
    if name in HARMLESS_VARIABLES or name.startswith("LC_"):
        return
    if name in DANGEROUS_VARIABLES or name.startswith(("LD_", "DYLD_", "GIT_", "BASH_FUNC_")):
        part.problems.append(f"sets {name}, which changes what runs")
    else:
        part.concerns.append(f"sets {name} (only a few harmless variables such as LANG or TZ run without asking)")


def _redirect(redirect: Redirect, part: Part, state: _State) -> None:
    target = redirect.target.text
    if redirect.operator in (">&", "<&") and (target.isdigit() or target == "-"):
        return
    if not redirect.target.literal:
        return  # already a problem
    if target in HARMLESS_TARGETS:
        stdout = redirect.operator in ("&>", "&>>") or (redirect.operator in (">", ">>", ">|") and redirect.descriptor in ("", "1"))
        part.drops_output = part.drops_output or (target == "/dev/null" and stdout)
        return
    if redirect.operator == "<":
        _check_read(target, part, state, relative_to=state.cwds)  # as `cat target` would read it
        return
    part.concerns.append(f"writes {target} (redirection {redirect.operator})")
    if _outside(target, state):
        part.risks.append(OUTSIDE)


_BASH_ONLY_BRACKETS = re.compile(r"\[\^|\[[:.=]")
"""`[^x]`, `[[:alpha:]]`, `[[.e.]]`, `[[=e=]]`: bash matches with them, Python's glob does not."""
_GLOB_CHARS = set("*?[")


def _globs(words: list[Word], part: Part, state: _State) -> dict[str, list[str]]:
    """Expand globs as bash would, so their matches can be checked; a match that starts with `-`
    would be read as an option (a file named `-exec` in the project), so it is a problem."""
    matches: dict[str, list[str]] = {}
    for word in words:
        if not (word.literal and word.glob):
            continue
        if word.text.startswith("-"):
            part.problems.append(f"a glob in option position ({word.text})")
            continue
        if _BASH_ONLY_BRACKETS.search(word.text):
            part.problems.append(f"a glob whose brackets bash reads differently ({word.text})")
            continue
        components = word.text.split("/")
        if sum(1 for c in components[:-1] if _GLOB_CHARS & set(c)) > GLOB_DEPTH:
            part.concerns.append(f"the glob {word.text} has wildcards in more than {GLOB_DEPTH} folder levels (too many files to check)")
            continue
        if any(c.startswith(".") and _GLOB_CHARS & set(c) and fnmatch.fnmatchcase("..", c) for c in components):
            part.concerns.append(f"the glob {word.text} also matches .. in bash before 5.2 (the folder above)")
        found: list[str] = []
        for cwd in state.cwds:
            found.extend(itertools.islice(glob.iglob(word.text, root_dir=cwd), GLOB_LIMIT + 1))
        if len(found) > GLOB_LIMIT:
            part.concerns.append(f"the glob {word.text} matches more than {GLOB_LIMIT} files")
        if any(os.path.basename(m).startswith("-") for m in found):
            part.problems.append(f"the glob {word.text} matches a file whose name starts with '-'")
        matches[word.text] = found
    return matches


# Wrappers -----------------------------------------------------------------------------------


def _unwrap(words: list[str], part: Part, state: _State, depth: int, nested: list[Part]) -> list[str]:
    """Strip wrappers down to the program that does the work; scripts they carry become parts."""
    for _ in range(MAX_DEPTH + 2):
        if not words:
            return words
        part.programs.append(words[0])
        program = os.path.basename(words[0])
        script = _command_string(words) if program in _COMMAND_STRINGS else None
        if script is not None:
            if program in _PRIVILEGE_PROGRAMS:
                part.risks.append(PRIVILEGE)
            else:
                part.concerns.append(_COMMAND_STRINGS[program])
            part.wrapper = True
            _nested(script, f"{program} -c", part, state, depth, nested)
            return [program]
        if program in _PRIVILEGE_PROGRAMS:
            part.risks.append(PRIVILEGE)
            words = _skip_options(words[1:], _PRIVILEGE_VALUED, part)
        elif program == "env":
            command = _env(words, part)
            if not command:
                part.concerns.append("env without a command prints the environment, whose variables may hold secrets")
                return words[:1]
            words = command
        elif program == "timeout":
            rest = _skip_options(words[1:], {"-s", "-k", "--signal", "--kill-after"}, part)
            words = rest[1:]
        elif program == "nice":
            words = _skip_options(words[1:], {"-n", "--adjustment"}, part)
        elif program in ("nohup", "builtin"):
            words = _skip_options(words[1:], set(), part)
        elif program == "time":
            words = _time(words, part)
        elif program == "exec":
            words = _skip_options(words[1:], {"-a"}, part)
        elif program == "command" and words[1:2] not in (["-v"], ["-V"]):
            words = _skip_options(words[1:], set(), part)
        elif program == "stdbuf":
            words = _skip_options(words[1:], {"-i", "-o", "-e", "--input", "--output", "--error"}, part)
        elif program == "setsid":
            words = _skip_options(words[1:], set(), part)
        elif program == "ionice":
            words = _skip_options(words[1:], {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"}, part)
        elif program == "eval":
            part.wrapper = True
            _nested(" ".join(words[1:]), "eval", part, state, depth, nested)
            return ["eval"]
        elif program in SHELLS and _has_script(words):
            return _shell(words, part, state, depth, nested)
        elif program in OTHER_SHELLS and len(words) > 1:
            part.problems.append(f"runs a {program} script (only bash and sh scripts are analysed)")
            return words
        else:
            return words
    part.problems.append("wrappers nested too deep")
    return words


def _skip_options(words: list[str], takes_value: set[str], part: Part) -> list[str]:
    """The words after a wrapper's options. An option in `takes_value` takes the next word, also
    as the last letter of a cluster (`sudo -iu root`); `-uroot` and `--user=root` carry theirs.
    GNU also reads an abbreviation (`timeout --sig KILL`): whether it takes a value depends on
    options this list does not hold, so where its command starts is not known."""
    rest = list(words)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option == "--":
            break
        if option.startswith("--"):
            needs_value = option in takes_value
            if not needs_value and "=" not in option and any(v.startswith(option) for v in takes_value):
                part.problems.append(f"{option} abbreviates an option that takes a value: where the command starts is not known")
                needs_value = True
        else:
            letters = option[1:]
            valued = [i for i, letter in enumerate(letters) if "-" + letter in takes_value]
            needs_value = bool(valued) and valued[0] == len(letters) - 1
        if needs_value and rest:
            rest.pop(0)
    return rest


def _command_string(words: list[str]) -> str | None:
    """The shell command `su -c CMD`, `runuser --command=CMD`, `script -qc CMD`, `flock F -c CMD`
    run, wherever the option stands among the others."""
    for index, word in enumerate(words[1:], start=1):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == "--":
            return None
        if word == "--command":
            return following
        if word.startswith("--command="):
            return word.partition("=")[2]
        if word.startswith("-") and not word.startswith("--") and "c" in word:
            return word.partition("c")[2] or following
    return None


def _env(words: list[str], part: Part) -> list[str]:
    rest = words[1:]
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option == "--":
            break
        if option in ("-i", "--ignore-environment", "-0", "--null", "-v", "--debug"):
            continue
        if option in ("-u", "--unset") and rest:
            rest.pop(0)
            continue
        if option.startswith(("-u", "--unset=")):
            continue
        if option.startswith(("-S", "--split-string")) or option.startswith("-") and "S" in option.lstrip("-") and not option.startswith("--"):
            part.problems.append(f"env {option} splits a string into a command, which is not analysed")
        elif option.startswith(("-C", "--chdir")):
            part.concerns.append(f"env {option} runs the command in another folder")
            if option in ("-C", "--chdir") and rest:
                rest.pop(0)
        else:
            part.problems.append(f"env: the option {option} is not understood")
    while rest and "=" in rest[0] and rest[0].split("=", 1)[0].isidentifier():
        name, _, value = rest.pop(0).partition("=")
        _assignment(name, Word(value), part)
    return rest


def _time(words: list[str], part: Part) -> list[str]:
    rest = words[1:]
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "--":
            break
        if option in ("-o", "--output") or option.startswith("--output="):
            part.concerns.append("time -o writes a file")
            if option in ("-o", "--output") and rest:
                rest.pop(0)
        elif option in ("-f", "--format") and rest:
            rest.pop(0)
        elif option not in ("-p", "-a", "--append", "-v", "--verbose", "-q", "--quiet", "--portability") and not option.startswith("--format="):
            part.problems.append(f"time: the option {option} is not understood")
    return rest


def _has_script(words: list[str]) -> bool:
    """`bash -c`, `bash -ec`, `sh -xc`: the shell gets a script as an argument."""
    return any(w.startswith("-") and not w.startswith("--") and "c" in w for w in words[1:] if w != "--")


_SHELL_LETTERS = set("ceuxvn")


def _shell(words: list[str], part: Part, state: _State, depth: int, nested: list[Part]) -> list[str]:
    """Judge the shell's own options (start-up files run code), then the script as parts."""
    program = os.path.basename(words[0])
    index = 1
    script: str | None = None
    wants_script = False
    while index < len(words):
        word = words[index]
        index += 1
        if word in ("-o", "+o"):
            if index < len(words) and words[index] in ("pipefail", "errexit", "nounset", "xtrace", "noglob", "noclobber"):
                index += 1
                continue
            part.concerns.append(f"{program} {word} {words[index] if index < len(words) else ''}: a shell option that is not understood")
            continue
        if word.startswith("--") or word.startswith("+"):
            if word in ("--norc", "--noprofile", "--posix"):
                continue
            part.concerns.append(f"{program} {word}: runs a start-up file or changes the shell")
            if word in ("--rcfile", "--init-file") and index < len(words):
                index += 1
            continue
        if word.startswith("-"):
            letters = set(word[1:])
            if letters - _SHELL_LETTERS:
                part.concerns.append(f"{program} {word}: runs start-up files or reads commands from elsewhere")
            wants_script = wants_script or "c" in letters
            continue
        if wants_script:
            script = word
            break
    part.wrapper = True
    if script is None:
        part.problems.append(f"{program} -c without a script")
        return words[:index]
    _nested(script, f"{program} -c", part, state, depth, nested)
    return words[:index]


def _nested(script: str, label: str, part: Part, state: _State, depth: int, nested: list[Part]) -> None:
    if depth >= MAX_DEPTH:
        part.problems.append("scripts nested too deep")
        return
    parsed = parse(script)
    parts = _parts(parsed, state, depth + 1)
    part.problems.extend(f"{label}: {p}" for p in parsed.problems)
    for inner in parts:
        inner.text = f"{label}: {inner.text}"
        inner.piped_into = inner.piped_into or part.piped_into  # `… | sh -c rev`: the script's commands read the pipe
    nested.extend(parts or [Part(f"{label}: {script}", problems=["empty command"])])


def _carried(part: Part, state: _State, depth: int, nested: list[Part]) -> None:
    """What the program's option values or operands carry (`safe_commands.CARRIERS`): a command
    line is judged as a command of its own, code the gate does not read asks, and so does a
    variable name with a subscript, which bash evaluates as arithmetic (running `$(…)`)."""
    program, found = safe_commands.carried(part.words)
    for option, script in found.commands:
        _nested(script, f"{program} {option}".rstrip(), part, state, depth, nested)
    for option in found.code:
        part.problems.append(f"{program} {option} runs code that is not analysed")
    for name in found.names:
        if "[" in name:
            part.problems.append(f"{program} sets the variable {name}: bash evaluates its subscript ([…]), which can run commands")


# Judging the program -------------------------------------------------------------------------


def _judge(part: Part, state: _State, matches: dict[str, list[str]]) -> None:
    words, program = part.words, part.program
    part.rule_words = _rule_words(program, words[1:])
    if part.wrapper:
        part.safe = not (part.problems or part.concerns or part.risks)
        return
    part.risks.extend(_risks(part, state))
    interpreter = _interpreter(program)
    if interpreter and _inline_code(interpreter, words[1:]):
        part.problems.append(f"{program} runs code from its arguments")
    if program in _CODE_PROGRAMS or (program == "find" and any(a in safe_commands.FIND_RUNS for a in words[1:])):
        part.problems.append(f"{program} runs code or other commands from its arguments")
    if _reads_code_from_input(part):
        part.problems.append(f"{program} reads a program from its input, which no rule can see")
    if program in _DECLARATIONS:
        part.problems.append(f"a declaration ({program}), which can evaluate what it is given")
    if _changes_reading(program, words[1:]):
        part.problems.append(f"{' '.join(words)} changes how bash reads the commands after it")
    if program in ("cd", "pushd", "popd"):
        _change_folder(part, state, matches)
        return
    part.concerns.extend(_runner_concerns(part.rule_words, state))
    result = safe_commands.check(words)
    part.concerns.extend(result.concerns)
    part.problems.extend(result.hidden)
    part.reshapes = reshapes(part.rule_words, result.options, result.safe)
    cwds = {_join(cwd, result.folders[-1]) for cwd in state.cwds} if result.folders else state.cwds
    for folder in result.folders:
        for found in matches.get(folder, [folder]):
            _check_read(found, part, state, relative_to=state.cwds)
    paths = [found for path in result.paths for found in matches.get(path, [path])]
    for path in paths:
        _check_read(path, part, state, relative_to=cwds)
    if program == "git" and result.safe:
        for cwd in cwds:
            part.concerns.extend(c for c in repository_config_concerns(cwd) if c not in part.concerns)
        for cwd in cwds if not part.concerns else ():  # the scan runs git: never where its config runs programs
            concern = committed_secret_concern(part.rule_words, cwd)
            if concern is None:
                part.unscanned.append(GitOutput(part.rule_words, cwd))
            elif concern not in part.concerns:
                part.concerns.append(concern)
    if result.safe:
        operands = [found for path in result.operands for found in matches.get(path, [path])]
        concern = folder_read_concern(part.rule_words, operands, result.options, cwds, state.root)
        if concern:
            part.concerns.append(concern)
        else:
            part.unscanned.extend(FolderWalk(*read) for read in folders_read(part.rule_words, operands, result.options, cwds))
    part.safe = result.safe and not (part.problems or part.concerns or part.risks)
    part.not_safe = result.why


def _changes_reading(program: str, args: list[str]) -> bool:
    """`set -a`, `set -k`, and any `shopt -s`/`-u` (`nullglob` drops a glob that matches nothing,
    so the next word becomes the program; `expand_aliases` lets an alias rename one)."""
    if program == "shopt":
        return any(arg.startswith("-") and {"s", "u"} & set(arg[1:]) for arg in args)
    if program != "set":
        return False
    index = 0
    while index < len(args) and args[index][:1] in ("-", "+") and args[index] not in ("-", "--"):
        option = args[index]
        index += 1
        name = args[index] if "o" in option and index < len(args) else ""
        index += bool(name)
        if option.startswith("-") and (_SET_LETTERS & set(option[1:]) or name in _SET_NAMES):
            return True
    return False


def _interpreter(program: str) -> str | None:
    """The interpreter a program name stands for: `python3.11` and `pypy3` are python."""
    if program in INTERPRETERS:
        return program
    match = _VERSIONED_INTERPRETER.fullmatch(program)
    if match is None:
        return None
    return "python" if match.group(1) == "pypy" else match.group(1)


def _rule_words(program: str, args: list[str]) -> list[str]:
    """The argv as rules see it: git's global options dropped (`git -C . push` is `git push`), and
    git's own programs read as the git command they are (`/usr/lib/git-core/git-push` is a link
    to git that pushes)."""
    if program == "git":
        return safe_git.rule_words([program, *args])
    if program.startswith("git-") and program[4:] in GIT_COMMANDS:
        return ["git", program[4:], *args]
    return [program, *args]


def _reads_code_from_input(part: Part) -> bool:
    """Vim in Ex mode (`ex`, `vim -es`) reads Ex commands, `!cmd` among them, from its input; a
    shell, an interpreter or make piped into may read its program from the pipe (`printf
    'r\\x6d f' | sh`), whatever its options say."""
    program = part.program
    if program in safe_commands.VIM_PROGRAMS and (program == "ex" or _ex_mode(part.words[1:])):
        return True
    return part.piped_into and (program in SHELLS | OTHER_SHELLS or program == "make" or _interpreter(program) is not None)


def _ex_mode(args: list[str]) -> bool:
    """`-e`, `-E`, also in a cluster (`-es`, `-Es`), before `--`."""
    for word in args:
        if word == "--":
            return False
        if word.startswith("-") and not word.startswith("--") and set(word[1:]) & {"e", "E"}:
            return True
    return False


def _inline_code(program: str, args: list[str]) -> bool:
    """`python -c CODE`, `perl -e`, `node --eval`: options before the script or module only
    (`python -m pytest -c setup.cfg` gives `-c` to pytest)."""
    letters = _CODE_LETTERS.get(program, "ep")
    for arg in args:
        if arg in ("--", "-m") or not arg.startswith("-"):
            return False
        if arg.split("=", 1)[0] in _CODE_LONG or (not arg.startswith("--") and any(letter in arg[1:] for letter in letters)):
            return True
    return False


def _join(cwd: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else cwd / path


def _check_read(path: str, part: Part, state: _State, relative_to: set[Path]) -> None:
    if state.cwd_unknown and not os.path.isabs(path):
        part.problems.append(f"reads {path} after a change to a folder that is not known")
        return
    for cwd in relative_to:
        try:
            resolved = _join(cwd, path).resolve()
        except (OSError, RuntimeError, ValueError):
            part.concerns.append(f"reads {path}, which cannot be resolved")
            return
        if not resolved.is_relative_to(state.root):
            part.concerns.append(f"reads {path}, outside the project")
            return
        if is_secret(resolved):
            part.concerns.append(f"reads {path}, which may hold secrets")
            return
        credential = credential_in_file(resolved)
        if credential:
            part.concerns.append(f"reads {path}, which looks like it holds a credential ({credential})")
            return
        if _size(resolved) > FILE_SCAN_BYTES:
            part.unscanned.append(LargeFile(path, resolved))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _change_folder(part: Part, state: _State, matches: dict[str, list[str]]) -> None:
    """`cd DIR` moves later parts; a folder outside the project, `cd -` or `pushd` is not followed.
    `cd GLOB` goes where bash expands it (its text when nothing matches), each match followed."""
    args = part.words[1:]
    if part.program != "cd" or len(args) != 1 or args[0] == "-" or args[0].startswith("-"):
        state.cwd_unknown = True
        part.concerns.append(f"{' '.join(part.words)} moves to a folder that is not followed")
        return
    targets = {_join(cwd, target).resolve() for cwd in state.cwds for target in matches.get(args[0]) or args[:1]}
    if any(not t.is_relative_to(state.root) for t in targets):
        part.concerns.append(f"cd {args[0]} leaves the project")
        state.cwd_unknown = True
        return
    state.cwds |= targets
    part.safe = True


# Test runners under an allow rule --------------------------------------------------------------

# runner -> (options whose value is a path it writes, options that run a program, options that reach the network)
_RUNNERS: dict[str, tuple[set[str], set[str], set[str]]] = {
    "pytest": (
        {"--junitxml", "--junit-xml", "--basetemp", "--result-log", "--resultlog", "--html", "--log-file", "--debug",
         "--confcutdir", "--rootdir", "--cov-report", "-c", "--config-file"},
        set(),
        {"--pastebin"},
    ),
    "npm": ({"--prefix", "--cache", "--userconfig", "--globalconfig"}, {"--script-shell"}, {"--registry"}),
    "cargo": ({"--target-dir", "--manifest-path", "--artifact-dir"}, {"--config", "-Z"}, set()),
    "go": ({"-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-outputdir", "-modfile", "-C"},
           {"-exec", "-toolexec"}, set()),
}
_RUNNERS["py.test"] = _RUNNERS["pytest"]
_RUNNERS["yarn"] = _RUNNERS["pnpm"] = _RUNNERS["npm"]


def _runner_concerns(words: list[str], state: _State) -> list[str]:
    """Test runners an allow rule trusts still ask for options that write outside the project,
    run another program or reach the network (`pytest --basetemp=/elsewhere` empties it)."""
    program, args = words[0], words[1:]
    if program.startswith("python") and args[:2] == ["-m", "pytest"]:
        program, args = "pytest", args[2:]
    options = _RUNNERS.get(program)
    if options is None:
        return []
    writes, runs, network = options
    concerns: list[str] = []
    for index, word in enumerate(args):
        if word == "--":
            break
        if not word.startswith("-"):
            continue
        following = args[index + 1] if index + 1 < len(args) else ""
        name, has_value, value = word.partition("=")
        value = value if has_value else following
        if program == "go":
            name = "-" + name.lstrip("-")  # go takes -flag and --flag alike
        if program == "pytest" and (name == "--override-ini" or word.startswith("-o") and not word.startswith("--")):
            setting = value if name == "--override-ini" else (word[2:] or following)
            if setting.startswith("cache_dir="):
                name, value = "--basetemp", setting.partition("=")[2]
        if name in runs:
            concerns.append(f"{program} {name} runs another program")
        elif name in network:
            concerns.append(f"{program} {name} reaches the network")
        elif name in writes:
            target = value.split(":", 1)[-1] if name == "--cov-report" else value
            if target and _outside(target, state):
                concerns.append(f"{program} {name} {target}: outside the project")
    return concerns


# Risks -----------------------------------------------------------------------------------------


def _risks(part: Part, state: _State) -> list[str]:
    words, program = part.rule_words, part.program
    args = words[1:]
    risks: list[str] = []
    if program in _DELETE_PROGRAMS:
        risks.append(DELETE)
    if program == "find" and "-delete" in args:
        risks.append(DELETE)
    if program == "git":
        sub = args[0] if args else ""
        if sub in _GIT_DELETE or (sub == "reset" and "--hard" in args) or (sub == "checkout" and "--" in args):
            risks.append(DELETE)
        if sub in _GIT_NETWORK:
            risks.append(NETWORK)
    if program in _NETWORK_PROGRAMS:
        risks.append(NETWORK)
    if program in _INSTALLERS and any(a in _INSTALL_VERBS for a in args[:3]):
        risks.append(NETWORK)
    if program.startswith("python") and args[:2] == ["-m", "pip"]:
        risks.append(NETWORK)
    if program in _PERMISSION_PROGRAMS:
        risks.append(PERMISSIONS)
    if part.piped_into and (program in SHELLS | OTHER_SHELLS or _interpreter(program)):
        risks.append(PIPE_TO_SHELL)
    written = [a for a in args if not a.startswith("-")] if program in _WRITING_PROGRAMS else []
    if any(_outside(target, state) for target in written):
        risks.append(OUTSIDE)
    return risks


def _outside(arg: str, state: _State) -> bool:
    if state.cwd_unknown and not os.path.isabs(arg):
        return True
    for cwd in state.cwds:
        try:
            if not _join(cwd, arg).resolve().is_relative_to(state.root):
                return True
        except (OSError, RuntimeError, ValueError):
            return True
    return False
