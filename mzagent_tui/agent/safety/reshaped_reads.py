"""Reads whose output a command reshapes past the output scan: what they read must be known to
be free of credentials before the command runs.

A command's output is scanned for credentials, and a file it names is scanned before it runs,
but only in its first FILE_SCAN_BYTES; what git holds is checked by file name (and a file named
at a revision by content), and a folder a command walks (`grep -r`) by the names of its files.
The output scan covers the rest while the output is the read text as it is. `rev`, `base64`,
`xxd`, `tr`, `sort`, `cut` and every
program not on a short list print it in a shape no rule reads back: `git show HEAD | rev`
prints a committed key reversed. So when a part of a command reads such content and the part
itself, or a part after it in a pipe, is not on the list of programs that print what they read
line by line as it is (`KEEPS_LINES`), the content is scanned first, whole, up to
DEEP_SCAN_BYTES: a credential asks, and so does content past the bound (what is not scanned is
not known to be free of credentials). A large file is read in pieces; what a git command
prints (a patch, a file at a revision, a commit message) is made by running the same command
ourselves (hardened, confined, read-only, without external diff or text conversion); a
folder's files are read one by one, as the walk that checks their names finds them.

Not covered: a line filter on the list that leaves out the first and last lines of a private
key (`grep -v -- -----`) prints its body, which no rule knows without them; a folder walk's
files under `.git` (but its config), `node_modules` and `__pycache__`, which the walk that
checks names does not enter either.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.ground.textfiles import read_regular_chunks
from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.credentials import credential_in_pieces
from mzagent_tui.agent.safety.folder_reads import FolderRead, files_read_below
from mzagent_tui.agent.safety.git_config import GitUnanswered, find_repository
from mzagent_tui.agent.safety.safe_git import SUBCOMMANDS

DEEP_SCAN_BYTES = 8 << 20
"""What of one read is scanned before a command that reshapes it runs: 0.1 s a megabyte of logs,
up to 1 s a megabyte of source full of secret words under load (bench/reshaped_reads.py), and
this check stands before a command runs; past it, the command asks."""
GIT_SCAN_TIMEOUT = 10.0
"""Seconds our copy of a git command may take to print what the command would print."""
_PIECE = 1 << 20

KEEPS_LINES: dict[str, frozenset[str]] = {
    "cat": frozenset("-A -E -T -v -e -t --show-all --show-ends --show-tabs --show-nonprinting".split()),
    "head": frozenset("-c --bytes".split()),
    "tail": frozenset("-c --bytes -r".split()),
    "grep": frozenset("-o --only-matching".split()),
    "egrep": frozenset("-o --only-matching".split()),
    "fgrep": frozenset("-o --only-matching".split()),
    "rg": frozenset("-o --only-matching -r --replace --json -E --encoding".split()),
    "uniq": frozenset(),
    "nl": frozenset(),
    "diff": frozenset("-y --side-by-side -W --width --left-column".split()),
}
"""Programs that print what they read line by line as it is (or only counts), with the options
that make them print it otherwise (`cat -A` writes a tab as `^I`, `head -c` cuts inside a line,
`grep -o` prints a piece of a line, `rg -r` replaces it). They may leave lines out; what they
print, the output scan reads."""
PRINTS_NO_CONTENT = frozenset(
    "ls stat du file tree find realpath readlink basename dirname test wc pwd true false "
    "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum".split()
)
"""Programs that print about files, not what they hold (names, sizes, counts, a digest): what
they read reaches nobody."""
ANSWERS: dict[str, frozenset[str]] = {
    "grep": frozenset("-l -L -c -q -v --files-with-matches --files-without-match --count --quiet --silent --invert-match".split()),
    "rg": frozenset("-l -c -q -v -M --files-with-matches --files-without-match --count --count-matches --quiet --invert-match "
                    "--max-columns".split()),
}
"""Options with which a search prints an answer about what it reads rather than the lines it
matched: file names (`-l`, `-L`), counts (`-c`), nothing but its exit code (`-q`), every line
but the matches (`-v`), a line replaced by a note that it matched (`rg -M`). The answer holds no
credential, yet tells whether a pattern the model chose matches: a key guessed a character at a
time. So what such a search reads is scanned before it runs, whatever the pattern: a question
that came only for the right guess would be the answer again."""
ANSWERS["egrep"] = ANSWERS["fgrep"] = ANSWERS["grep"]
_GIT_ANSWERS = {
    "grep": frozenset("-l -L -c -q -v --files-with-matches --files-without-match --count --quiet --invert-match --name-only".split()),
    "log": frozenset("-S -G --grep".split()),
}
"""Git's searches that answer rather than print: `git grep` with the options above, and a log
that keeps the commits whose changes (`-S`, `-G`: the pickaxe) or message (`--grep`) match."""
_GIT_ANSWERS["show"] = _GIT_ANSWERS["whatchanged"] = _GIT_ANSWERS["diff"] = _GIT_ANSWERS["log"]
_GIT_VALUED_LONG = frozenset(
    "--grep --author --committer --since --until --after --before --max-count --skip --exclude --decorate-refs "
    "--decorate-refs-exclude --min-parents --max-parents".split()
)
"""Long options of git's log that take the next word as their value when written without `=`."""
_GIT_GREP_KEEPS = frozenset(
    "-i -E -F -P -G -I -a --ignore-case --extended-regexp --fixed-strings --perl-regexp --basic-regexp --text --untracked "
    "--no-index --cached --no-exclude-standard --exclude-standard --recurse-submodules --max-depth --threads".split()
)
"""`git grep` options kept in the scan of what it searches: those that choose what it reads."""
_GIT_LOG_DROPS = frozenset(
    "-S -G --grep --pickaxe-all --pickaxe-regex --invert-grep --all-match --regexp-ignore-case -i --basic-regexp "
    "--extended-regexp -E --fixed-strings -F --perl-regexp --format --pretty --oneline -s --no-patch -p -u --patch "
    "--name-only --name-status --stat --numstat --shortstat --raw --summary --compact-summary --dirstat --check -z "
    "--quiet --exit-code --count --graph -n --max-count --skip --word-diff --word-diff-regex --color-words --binary "
    "--color --no-color --patch-with-stat --patch-with-raw --line-prefix --src-prefix --dst-prefix --no-prefix "
    "--output-indicator-new --output-indicator-old --output-indicator-context --log-size -N".split()
)
"""Options of a log-like search left out of the scan of what it searches: the search itself and
what shapes or limits the output (the scan prints every commit's message and patch)."""

_GIT_RESHAPES = {"--word-diff", "--word-diff-regex", "--color-words", "--binary"}
"""Git options that print changes word by word, or binary files as base85 (and `--color`,
below, which for git means always)."""
_GIT_RESHAPES_GREP = {"-o", "--only-matching"}
_ANSI = re.compile(rb"\x1b\[[0-9;]*[mK]")
"""Colour codes (`--color=always`), taken out before the scan."""


def reshapes(words: list[str], options: list[tuple[str, str]], understood: bool) -> str:
    """Why a part's output is not what it reads as it is ("" when it is): `words` as rules see
    them, `options` as the safe list read them (`understood`: all of them)."""
    program = words[0] if words else ""
    if program == "git":
        return _git_reshapes(words)
    if program in PRINTS_NO_CONTENT:
        return ""
    if program not in KEEPS_LINES:
        return f"{program} does not print what it reads as it is" if program else ""
    if not understood:
        return f"{program}: its options are not all understood"
    answer = next((name for name, _ in options if name in ANSWERS.get(program, ())), None)
    if answer:
        return f"{program} {answer} prints whether what it reads matches a pattern, not what it holds"
    changing = next((name for name, value in options if name in KEEPS_LINES[program] or _colours(name, value)), None)
    return f"{program} {changing} does not print what it reads as it is" if changing else ""


def _colours(name: str, value: str) -> bool:
    """`grep --color=always` puts colour codes inside a line, around what matched."""
    return name in ("--color", "--colour") and value == "always"


SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
"""Programs whose output depends on a pattern the command gives them."""


def searches(words: list[str]) -> bool:
    """Whether the part prints what matches a pattern it is given (`grep`, `rg`, `git grep`)."""
    return bool(words) and (words[0] in SEARCHES or words[:2] == ["git", "grep"])


def answered_by(search: list[str], dropped: bool, later: list[list[str]]) -> str:
    """Why a search's lines reach nobody but its answer does ("" when its lines are printed): its
    output dropped (only its exit status answers: `grep -r X . > /dev/null && echo yes`), or
    piped into a part that prints a count or a digest (`| wc -l`, `| sha256sum`). A guess of a key
    is then answered yes or no, as `grep -l` answers it."""
    if not searches(search):
        return ""
    if dropped:
        return f"{search[0]}'s output is dropped: its exit status says whether the pattern matched"
    counter = next((words[0] for words in later if words and not passes_on(words)), None)
    return f"{counter} prints a count or a digest of what {search[0]} finds, not what it holds" if counter else ""


def passes_on(words: list[str]) -> bool:
    """Whether a part prints any of what it reads (`ls big.log` and `sha256sum` do not)."""
    return not words or words[0] not in PRINTS_NO_CONTENT


def _git_reshapes(words: list[str]) -> str:
    """Git prints a file's lines as they are, but word by word, coloured inside a line or in
    base85 with some options."""
    if len(words) < 2:
        return ""
    answer = _git_answer(words)
    if answer:
        return f"git {words[1]} {answer} prints whether what it searches matches a pattern, not what it holds"
    for word in words[2:]:
        if word == "--":
            break
        name = word.split("=", 1)[0]
        only_matching = words[1] == "grep" and (name in _GIT_RESHAPES_GREP or _cluster_has(word, "o"))
        if name in _GIT_RESHAPES or word in ("--color", "--color=always") or only_matching:
            return f"git {words[1]} {name} does not print the lines as they are"
    return ""


def _git_answer(words: list[str]) -> str:
    """The option that makes a git command a search that answers (`git grep -l`, `git log -S`), or ""."""
    answers = _GIT_ANSWERS.get(words[1], frozenset())
    return next((name for kind, names, _ in _git_words(words) if kind == "option" for name in names if name in answers), "")


def _git_words(words: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """A git command's arguments read with its options' table: ("option", the names a word
    holds (`-lc` holds -l and -c), the words it takes with its value), ("operand", [], [word]),
    and ("--", [], the rest)."""
    spec = SUBCOMMANDS.get(words[1])
    valued = (spec.valued | spec.path_valued) if spec else frozenset()
    read: list[tuple[str, list[str], list[str]]] = []
    args, index = words[2:], 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            read.append(("--", [], args[index - 1:]))
            break
        if not word.startswith("-") or word == "-":
            read.append(("operand", [], [word]))
        elif word[1:].isdigit():
            read.append(("option", ["-N"], [word]))
        elif word.startswith("--"):
            name, equals, _ = word.partition("=")
            takes = not equals and (name in valued or name in _GIT_VALUED_LONG) and index < len(args)
            read.append(("option", [name], args[index - 1:index + takes]))
            index += takes
        else:
            names: list[str] = []
            taken = [word]
            for position, letter in enumerate(word[1:]):
                names.append("-" + letter)
                if "-" + letter in valued:
                    if position == len(word) - 2 and index < len(args):
                        taken.append(args[index])
                        index += 1
                    break
            read.append(("option", names, taken))
    return read


def _git_search_scan(words: list[str]) -> list[str]:
    """What to run to read all a git search searches, whatever its pattern: `git grep` for every
    line (`-e ''`) of what it searches, a log-like search for every message and patch of the
    commits it looks at."""
    sub = words[1]
    read = _git_words(words)
    kept: list[str] = []
    if sub == "grep":
        pattern_given = any(name in ("-e", "-f") for kind, names, _ in read for name in names)
        operands: list[str] = []
        binary = False
        for kind, names, taken in read:
            if kind == "operand":
                if pattern_given:
                    operands.extend(taken)
                pattern_given = True  # the first operand was the pattern
            elif kind == "--":
                operands.extend(taken)
            elif all(name in _GIT_GREP_KEEPS for name in names):
                kept.extend(taken)
                binary = binary or any(name in ("-I", "-a", "--text") for name in names)
        return ["grep", "--no-textconv", "--no-color", "-h", *([] if binary else ["-a"]), *kept, "-e", "", *operands]
    for kind, names, taken in read:
        if kind != "option" or not any(name in _GIT_LOG_DROPS for name in names):
            kept.extend(taken)
    fixed = ["-p", "--no-color", "--no-ext-diff", "--no-textconv"]
    return [sub, *fixed, *(["--format=medium"] if sub != "diff" else []), *kept]


def _cluster_has(word: str, letter: str) -> bool:
    return word.startswith("-") and not word.startswith("--") and letter in word[1:]


@dataclass(frozen=True)
class LargeFile:
    """A file a part reads that is larger than the scan before a command runs."""

    shown: str
    path: Path

    def concern(self, why: str) -> str | None:
        try:
            size = self.path.stat().st_size
        except OSError:
            return None
        if size > DEEP_SCAN_BYTES:
            return (f"reads {self.shown} ({_megabytes(size)}), of which only the first {_megabytes(DEEP_SCAN_BYTES)} can be "
                    f"checked for credentials, and {why}: the output scan would not read them")
        found = credential_in_pieces(read_regular_chunks(self.path, DEEP_SCAN_BYTES, _PIECE))
        if found:
            return f"reads {self.shown}, which looks like it holds a credential ({found}), and {why}: the output scan would not read it"
        return None


@dataclass(frozen=True)
class GitOutput:
    """A read-only git command run in `cwd`: what it prints is what the repository holds (`git
    show`, `git log -p`, `git grep`, `git blame REV`, a commit message), known to git only."""

    words: list[str]
    cwd: Path

    def concern(self, why: str) -> str | None:
        shown = " ".join(self.words[:2])
        if len(self.words) < 2:
            return None
        try:
            repository = find_repository(self.cwd)
        except GitUnanswered as exc:
            return f"{shown}: {exc}"
        if repository is None:
            return None
        top = repository.work_tree or repository.git_dir
        words = _scan_words(self.words)
        if words is None:
            return f"{shown} prints what the repository holds in a shape the scan cannot read, and {why}"
        try:
            printed, code = own_programs.git_head(
                *words, cwd=self.cwd, limit=DEEP_SCAN_BYTES, timeout=GIT_SCAN_TIMEOUT,
                readable=[top, repository.git_dir, repository.common_dir],
            )
        except OSError as exc:
            return f"{shown}: what it prints could not be checked for credentials (git: {exc.strerror}), and {why}"
        if code is None:
            return (f"{shown} prints more than {_megabytes(DEEP_SCAN_BYTES)} (or takes more than {GIT_SCAN_TIMEOUT:.0f} s), "
                    f"which is not checked for credentials, and {why}: the output scan would not read it")
        if code > 1:  # 1 is an answer (`git diff --exit-code`, `git grep` without a match)
            return f"{shown}: what it prints could not be checked for credentials (git ended with {code}), and {why}"
        found = credential_in_pieces(_pieces(_ANSI.sub(b"", printed)))
        if found:
            return f"{shown} prints what looks like a credential ({found} of what it prints), and {why}: the output scan would not read it"
        return None


@dataclass(frozen=True)
class FolderWalk:
    """A folder a part reads every file of (`grep -r`, `rg`, `diff -r`)."""

    shown: str
    folder: Path
    reads: FolderRead

    def concern(self, why: str) -> str | None:
        budget = DEEP_SCAN_BYTES
        for path in files_read_below(self.folder, self.reads):
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size > budget:
                return (f"reads every file below {self.shown}, more than the {_megabytes(DEEP_SCAN_BYTES)} that can be checked "
                        f"for credentials, and {why}: the output scan would not read them")
            budget -= size
            found = credential_in_pieces(read_regular_chunks(path, size, _PIECE))
            if found:
                shown = os.path.relpath(path, self.folder)
                return (f"reads every file below {self.shown}, and {shown} looks like it holds a credential ({found}), "
                        f"and {why}: the output scan would not read it")
        return None


UnscannedRead = LargeFile | GitOutput | FolderWalk
"""Content a part reads that was not scanned for credentials before the command runs."""


def _scan_words(words: list[str]) -> list[str] | None:
    """The git command to run for the scan: the part's own, with no external diff or text
    conversion (the repository names those programs), and printing lines as they are where
    it asked for words (`--word-diff`, `--color-words`, `git grep -o`: the same content).
    None where that cannot be undone: `--binary` (base85), `-o` among other letters."""
    if _git_answer(words):
        return _git_search_scan(words)
    sub, args = words[1], words[2:]
    safe = ["--no-ext-diff", "--no-textconv"] if sub in ("show", "log", "diff", "whatchanged") else ["--no-textconv"] if sub == "grep" else []
    kept: list[str] = []
    for index, word in enumerate(args):
        if word == "--":
            kept.extend(args[index:])
            break
        name = word.split("=", 1)[0]
        if name in ("--word-diff", "--word-diff-regex", "--color-words") or (sub == "grep" and word in _GIT_RESHAPES_GREP):
            continue
        if name == "--binary" or (sub == "grep" and _cluster_has(word, "o")):
            return None
        kept.append(word)
    return [sub, *safe, *kept]


def _pieces(data: bytes) -> list[bytes]:
    return [data[start:start + _PIECE] for start in range(0, len(data), _PIECE)]


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):.0f} MB" if size >= 1 << 20 else f"{size // 1024} KB"
