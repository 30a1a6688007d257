"""Git commands that print what the repository holds: does it hold a secret?

`git diff`, `git show`, `git log -p`, `git grep` and `git cat-file -p` name no secrets file, yet
print whatever git tracks: a `.env` committed by mistake, even one removed two commits later, is
still printed by `git log -p`, and a tracked `.env` that changed is printed by `git diff`. Such a
command asks when a file in the index, or in any commit reachable from a ref or a reflog, is a
secrets file by name (the list `read_file` uses). A pickaxe (`git log -G 'KEY=a'`) counts: it
answers what the lines hold, one guess at a time. An object named by its id or by a ref that is
a blob (`git show 3f2a…`, a tag on a blob, `for-each-ref --format=%(raw)`) asks too: which file
it was is not known. A commit named by its id that no ref or reflog reaches (a dropped stash) is
looked at with its parents. A file named at a revision (`git show HEAD:journal.txt`) is read
from git and scanned for credentials by content, as a file a command names is: the working
copy the command line also names may have been overwritten since.

The answer comes from running git itself (`log --name-only`, `ls-files`) through own_programs
(hardened: a planted fsmonitor, hook or partial-clone config runs nothing, and a missing object
is not fetched), and is kept per repository until its index, refs or reflogs change.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from mzagent_tui.agent.safety import own_programs
from mzagent_tui.agent.safety.credentials import FILE_SCAN_BYTES, credential_in_pieces
from mzagent_tui.agent.safety.git_config import GitUnanswered, Repository, find_repository
from mzagent_tui.agent.safety.sensitive import is_secret

SCAN_TIMEOUT = 5.0
"""Seconds git may take to list the paths of the whole history; longer asks."""
SIGNATURE_FILES = 5000
"""Ref and reflog files looked at to tell whether a repository changed since its last scan."""
_PATCH_OPTIONS = {
    "-p", "-u", "--patch", "--patch-with-stat", "--patch-with-raw", "--binary", "--check", "-W", "--function-context",
    "--cc", "-c", "--remerge-diff", "--color-words", "--word-diff", "--word-diff-regex", "--unified",
}
"""Options that print lines of files (a patch, or `--check`'s lines with whitespace errors)."""
_PATCH_LETTERS = set("puWUc")
_NAMES_ONLY = {"--stat", "--numstat", "--shortstat", "--name-only", "--name-status", "--summary", "--raw", "-s", "--no-patch", "--quiet", "--dirstat"}
_OBJECT_CONTENT = re.compile(r"%\(\*?(raw|contents)")
"""for-each-ref atoms that print the object a ref names (`%(*raw)` the object a tag names)."""
_CAT_FILE_PRINTS = {"-p", "blob", "commit", "tree", "tag"}
_RANGE = re.compile(r"\.\.\.?")

_cache: dict[str, tuple[tuple[tuple[str, int, int], ...], str | None]] = {}


def prints_contents(words: list[str]) -> bool:
    """Whether `git SUB …` (global options dropped) prints the contents of files git tracks."""
    sub, args = words[1], words[2:]
    if sub == "grep":
        return "--no-index" not in args  # a folder read outside git, judged by folder_reads
    if sub == "cat-file":
        return any(a in _CAT_FILE_PRINTS for a in args)
    if sub == "for-each-ref":
        return any(_OBJECT_CONTENT.search(a) for a in args)
    patch = any(_prints_patch(a) or a.startswith(("-G", "-S")) for a in args)  # a pickaxe answers what lines hold
    if sub == "show":
        return True  # a blob or tag is printed whatever the diff options say
    if sub == "diff":
        return "--no-index" not in args and (patch or not any(_names_only(a) for a in args))
    return sub in ("log", "whatchanged") and patch


def _prints_patch(arg: str) -> bool:
    """`-p`, `--unified=3`, and a cluster of short options holding one (`-pw`, `-U1`)."""
    if arg.split("=", 1)[0] in _PATCH_OPTIONS:
        return True
    return arg.startswith("-") and not arg.startswith("--") and bool(_PATCH_LETTERS & set(arg[1:]))


def _names_only(arg: str) -> bool:
    return arg.split("=", 1)[0] in _NAMES_ONLY


def committed_secret_concern(words: list[str], cwd: Path) -> str | None:
    """Why a git command run in `cwd` should ask because of what the repository holds, or None.
    Call it only when the repository's config runs no programs: this runs git there."""
    if len(words) < 2 or not prints_contents(words):
        return None
    try:
        repository = find_repository(cwd)
    except GitUnanswered as exc:
        return str(exc)
    if repository is None:
        return None
    top = repository.work_tree or repository.git_dir
    into = next((a for a in words[2:] if a == "--recurse-submodules" or a.startswith("--submodule=diff")), None)
    if into and (top / ".gitmodules").exists():
        return f"git {words[1]} {into}: prints what submodules hold (not checked for secrets)"
    if words[1] == "for-each-ref":
        return _blob_ref(repository)
    named = _named_objects(words[2:], repository)
    blob = next((name for name, kind in named if kind == "blob"), None)
    if blob and words[1] in ("show", "cat-file"):
        return f"git {words[1]} {blob}: prints a file by its object id, so which file it was is not known"
    if named and named[0][1] == "unknown":
        return f"git {words[1]} {named[0][0]}: the objects it names could not be listed"
    if words[1] in ("show", "cat-file"):
        held = _credential_at_revision(words[2:], repository)
        if held:
            return held
    found = _secret_in_history(top, repository) or _secret_outside_history(top, repository, [name for name, kind in named if kind == "commit"])
    return f"the repository {found}" if found else None


def _credential_at_revision(args: list[str], repository: Repository) -> str | None:
    """Why a `REV:PATH` operand asks: the file git holds there looks like it holds a credential
    (or git could not show it, so what it holds is not known). The head of the file is scanned,
    as credential_in_file scans a file on disk."""
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") or ":" not in arg or arg.startswith(":/") or not arg.split(":", 1)[1]:
            continue
        try:
            shown = _git(repository, "cat-file", "blob", arg)
        except (OSError, subprocess.TimeoutExpired):
            return f"git could not show {arg}, so whether it holds a credential is not known"
        if shown.returncode != 0:
            continue  # not a file at that revision (a folder, a missing path): git prints no file's content
        found = credential_in_pieces([shown.stdout[:FILE_SCAN_BYTES]])
        if found:
            return f"{arg} looks like it holds a credential ({found})"
    return None


def _git(repository: Repository, *args: str, stdin: str = "") -> subprocess.CompletedProcess[bytes]:
    """Git through own_programs, in the repository's top folder: the repository may be the
    model's work, its config planted."""
    top = repository.work_tree or repository.git_dir
    return own_programs.git(*args, cwd=top, input=stdin.encode(), timeout=SCAN_TIMEOUT, readable=[repository.git_dir, repository.common_dir])


def _named_objects(args: list[str], repository: Repository) -> list[tuple[str, str]]:
    """Each revision operand with the type of object it names (`blob`, `commit`, `tree`, `tag`,
    `missing`): a range's ends are looked at one by one. `HEAD:.env` is a path, checked as one.
    [("…", "unknown")] when git could not be asked."""
    operands: list[str] = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") or (":" in arg and arg.split(":", 1)[1] and not arg.startswith(":/")):
            continue
        if arg not in _CAT_FILE_PRINTS:
            operands.extend(end.lstrip("^") for end in _RANGE.split(arg) if end.lstrip("^"))
    if not operands:
        return []
    odd = next((o for o in operands if "\n" in o or "\r" in o), None)
    if odd is not None:
        return [(odd, "unknown")]  # one line per operand is how git answers
    try:
        listed = _git(repository, "cat-file", "--batch-check=%(objecttype)", stdin="".join(f"{o}\n" for o in operands))
    except (OSError, subprocess.TimeoutExpired):
        return [(operands[0], "unknown")]
    types = [line.rsplit(" ", 1)[-1] for line in listed.stdout.decode(errors="replace").splitlines()]
    return list(zip(operands, types))


def _secret_outside_history(top: Path, repository: Repository, commits: list[str]) -> str | None:
    """A secrets file in commits named by id that no ref or reflog reaches (a dropped stash, an
    amended commit whose reflog expired): the history scan never saw them."""
    if not commits:
        return None
    try:
        listed = _git(repository, "log", "--format=", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--diff-merges=first-parent",
                      "--root", *commits, "--not", "--all", "--reflog")
    except (OSError, subprocess.TimeoutExpired):
        return f"could not be checked for secrets files in {commits[0]}"
    for path in _names(listed.stdout):
        if is_secret(top / path):
            return f"holds {path} (secrets) in {commits[0]} or its parents, which no branch, tag or reflog reaches"
    return None


def _blob_ref(repository: Repository) -> str | None:
    """`%(raw)` prints the object a ref names: a ref to a blob prints a file whose name is not known."""
    try:
        listed = _git(repository, "for-each-ref", "--format=%(refname) %(objecttype) %(*objecttype)")
    except (OSError, subprocess.TimeoutExpired):
        return "git for-each-ref: the refs could not be listed to see whether one names a file's content"
    for line in listed.stdout.decode(errors="replace").splitlines():
        name, _, types = line.partition(" ")
        if "blob" in types.split():
            return f"git for-each-ref: {name} names a file's content by its object id, so which file it was is not known"
    return None


def _secret_in_history(top: Path, repository: Repository) -> str | None:
    """'tracks .env (secrets)', 'history holds …', a reason it could not be checked, or None."""
    key = str(top.resolve())
    signature = _signature(repository)
    cached = _cache.get(key)
    if signature is not None and cached is not None and cached[0] == signature:
        return cached[1]
    found = _scan(top, repository)
    if signature is not None:
        _cache[key] = (signature, found)
    return found


def _scan(top: Path, repository: Repository) -> str | None:
    try:
        index = _git(repository, "ls-files", "-z", "--cached")
        history = _git(repository, "log", "--all", "--reflog", "--format=", "--name-only", "-z", "--no-renames", "--no-ext-diff",
                       "--diff-merges=first-parent", "--root")
    except subprocess.TimeoutExpired:
        return f"history could not be checked for secrets files in {SCAN_TIMEOUT:.0f} s"
    except OSError as exc:
        return f"could not be checked for secrets files (git: {exc.strerror})"
    if index.returncode != 0:
        return "could not be checked for secrets files (git ls-files failed)"
    for path in _names(index.stdout):
        if is_secret(top / path):
            return f"tracks {path} (secrets)"
    if history.returncode == 0:  # a repository without commits has no history to hold anything
        for path in _names(history.stdout):
            if is_secret(top / path):
                return f"history holds {path} (secrets)"
    elif _git(repository, "rev-parse", "--verify", "-q", "HEAD").returncode == 0:
        return "history could not be checked for secrets files (git log failed)"
    return None


def _names(output: bytes) -> set[str]:
    return {name for name in output.decode(errors="replace").split("\0") if name.strip()}


def _signature(repository: Repository) -> tuple[tuple[str, int, int], ...] | None:
    """Size and time of every file that changes when the index, a ref or a reflog does; None
    (scan every time) when there are more than SIGNATURE_FILES of them."""
    folders = dict.fromkeys((repository.git_dir, repository.common_dir))
    stats: list[tuple[str, int, int]] = []
    for folder in folders:
        files = [folder / name for name in ("index", "HEAD", "packed-refs")]
        for sub in ("refs", "logs"):
            for current, _dirs, names in os.walk(folder / sub):
                files.extend(Path(current) / name for name in names)
                if len(files) > SIGNATURE_FILES:
                    return None
        for path in files:
            try:
                info = path.stat()
            except OSError:
                continue
            stats.append((str(path), info.st_size, info.st_mtime_ns))
    return tuple(stats)
