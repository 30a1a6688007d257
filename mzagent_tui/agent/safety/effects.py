"""What a deny rule means beyond its program: the effect it names.

A user who denies `rm` means "nothing deletes files", not "the program called rm does not run";
one who denies `git push` means "nothing publishes to a remote". So a deny rule for the bare
program of an effect also denies the other programs with that effect (`unlink`, `git send-pack`)
and the options that have it (`find -delete`, `rsync --delete`, `git clean`). A longer rule
(`rm -rf`) names a use of the program, not the effect, and covers no more than it says.

What is listed here is what is covered; the docs list the rest (a script, a Makefile, a test
suite, an unlisted program that deletes or publishes) as beyond what a deny rule can see.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DELETES, PUBLISHES = "deletes files", "publishes to a remote"


def _find_deletes(args: list[str]) -> bool:
    return "-delete" in args


def _rsync_deletes(args: list[str]) -> bool:
    """`--delete`, `--delete-after`, `--del`, `--remove-source-files` (and its old name)."""
    return any(word.split("=")[0] in ("--del", "--remove-source-files", "--remove-sent-files") or word.startswith("--delete") for word in args)


def _letters(word: str, valued: str) -> str:
    """The option letters of a short cluster up to the first one that takes the rest as its value."""
    letters = ""
    for letter in word:
        letters += letter
        if letter in valued:
            break
    return letters


_TAR_VALUED = "bCfFgHIKLNTVX"
_ZIP_VALUED = "bnPtZOs"


def _tar_deletes(args: list[str]) -> bool:
    """`--remove-files` (and the GNU abbreviations that can only be it), `--recursive-unlink`,
    `--unlink-first` and its `-U`, also old-style (`tar xUf a.tar`)."""
    for index, word in enumerate(args):
        name = word.split("=")[0]
        if name.startswith("--") and len(name) > 4 and any(full.startswith(name) for full in ("--remove-files", "--recursive-unlink", "--unlink-first")):
            return True
        if word.startswith("-") and not word.startswith("--") and "U" in _letters(word[1:], _TAR_VALUED):
            return True
        if index == 0 and not word.startswith("-") and "U" in word:
            return True
    return False


def _zip_deletes(args: list[str]) -> bool:
    """`-m` / `--move` deletes what it put in the archive; the letter also in a cluster (`-rm`)."""
    for word in args:
        if word == "--":
            return False
        if word.startswith("--"):
            if len(word) > 3 and "--move".startswith(word.split("=")[0]):
                return True
        elif word.startswith("-") and "m" in _letters(word[1:], _ZIP_VALUED):
            return True
    return False


def _7z_deletes(args: list[str]) -> bool:
    """`-sdel`: 7-Zip deletes the files it put in the archive (its switches in any case)."""
    for word in args:
        if word == "--":
            return False
        if word.lower() == "-sdel":
            return True
    return False


CMAKE_REMOVES = frozenset({"rm", "remove", "remove_directory"})


def _cmake_deletes(args: list[str]) -> bool:
    """`cmake -E rm|remove|remove_directory`: its portable command mode deletes files and folders."""
    return len(args) >= 2 and args[0] == "-E" and args[1] in CMAKE_REMOVES


_PATCH_VALUED = "BDFVYdioprz"


def _patch_deletes(args: list[str]) -> bool:
    """`-E` / `--remove-empty-files` (and the GNU abbreviations that can only be it; the letter
    also in a cluster, `-Ep1`): a file the patch leaves empty is deleted."""
    for word in args:
        if word == "--":
            return False
        name = word.split("=")[0]
        if name.startswith("--"):
            if len(name) >= 5 and "--remove-empty-files".startswith(name):
                return True
        elif word.startswith("-") and "E" in _letters(word[1:], _PATCH_VALUED):
            return True
    return False


def _git_subcommand(args: list[str]) -> str:
    """The first word that is no option: the subcommand of `git worktree`, `git submodule`
    (`git submodule --quiet deinit`) and `git sparse-checkout`, none of which takes a valued
    option before it."""
    return next((word for word in args if not word.startswith("-")), "")


def _worktree_deletes(args: list[str]) -> bool:
    """`git worktree remove`: the linked worktree's folder goes, its changes too with `--force`."""
    return _git_subcommand(args) == "remove"


def _submodule_deletes(args: list[str]) -> bool:
    """`git submodule deinit`: the submodule's work tree is emptied."""
    return _git_subcommand(args) == "deinit"


def _sparse_checkout_deletes(args: list[str]) -> bool:
    """`git sparse-checkout set`/`add`/`reapply`/`init`: files outside the patterns leave the work tree."""
    return _git_subcommand(args) in ("set", "add", "reapply", "init")


_STASH_VALUED = "m"


def _stash_deletes(args: list[str]) -> bool:
    """`git stash [push|save]` with `-u`/`--include-untracked` or `-a`/`--all` (the letters also
    in a cluster, the long names abbreviated as git allows): untracked files leave the work tree
    for the stash, as `trash-put` moves them to the trash."""
    if args and args[0] in ("push", "save"):
        args = args[1:]
    elif args and not args[0].startswith("-"):
        return False  # list, show, apply, pop, drop, …: none takes these options
    for word in args:
        if word == "--":
            return False
        name = word.split("=")[0]
        if name.startswith("--"):
            if len(name) > 2 and any(full.startswith(name) for full in ("--all", "--include-untracked")):
                return True
        elif word.startswith("-") and set(_letters(word[1:], _STASH_VALUED)) & {"u", "a"}:
            return True
    return False


GIT_COMMANDS = frozenset(
    """add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore check-mailmap
    check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph commit-tree
    config count-objects credential credential-cache credential-store daemon describe diagnose diff diff-files diff-index
    diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo
    format-patch fsck fsck-objects gc get-tar-commit-id grep gui hash-object help hook http-backend http-fetch http-push
    imap-send index-pack init init-db instaweb interpret-trailers lfs log ls-files ls-remote ls-tree mailinfo mailsplit
    maintenance merge merge-base merge-file merge-index merge-octopus merge-one-file merge-ours merge-recursive
    merge-recursive-ours merge-recursive-theirs merge-resolve merge-subtree merge-tree mergetool mktag mktree
    multi-pack-index mv name-rev notes p4 pack-objects pack-redundant pack-refs patch-id pickaxe prune prune-packed pull
    push quiltimport range-diff read-tree rebase receive-pack reflog remote remote-ext remote-fd remote-ftp remote-ftps
    remote-http remote-https repack replace request-pull rerere reset restore rev-list rev-parse revert rm send-email
    send-pack shell shortlog show show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule
    subtree svn switch symbolic-ref tag unpack-file unpack-objects update-index update-ref update-server-info
    upload-archive upload-pack var verify-commit verify-pack verify-tag version whatchanged worktree write-tree""".split()
)
"""git's own commands (git 2.39's `--list-cmds=main`, and lfs, svn, p4, gui): any other word
after `git` is an alias or a `git-NAME` program on the PATH, either of which may push."""


@dataclass(frozen=True)
class Effect:
    name: str
    rules: tuple[tuple[str, ...], ...]
    """The deny rules that name it: any one of them denies all the rest."""
    programs: tuple[tuple[str, ...], ...]
    """Rule words of other programs (or subcommands) that have it."""
    options: tuple[tuple[tuple[str, ...], Callable[[list[str]], bool]], ...] = ()
    """Rule words and a test of the arguments after them: the options that have it."""


EFFECTS = (
    Effect(
        DELETES,
        rules=(("rm",), ("rmdir",), ("unlink",), ("shred",)),
        programs=(("rm",), ("rmdir",), ("unlink",), ("shred",), ("srm",), ("wipe",), ("trash",), ("trash-put",), ("gio", "remove"),
                  ("gio", "trash"), ("git", "clean"), ("git", "rm")),
        options=((("find",), _find_deletes), (("rsync",), _rsync_deletes), (("tar",), _tar_deletes), (("zip",), _zip_deletes),
                 *(((program,), _7z_deletes) for program in ("7z", "7za", "7zr", "7zz")), (("cmake",), _cmake_deletes), (("patch",), _patch_deletes),
                 (("git", "worktree"), _worktree_deletes), (("git", "submodule"), _submodule_deletes),
                 (("git", "sparse-checkout"), _sparse_checkout_deletes), (("git", "stash"), _stash_deletes)),
    ),
    Effect(
        PUBLISHES,
        rules=(("git", "push"),),
        programs=(("git", "push"), ("git", "send-pack"), ("git", "http-push"), ("git", "imap-send"), ("git", "send-email"), ("git", "subtree", "push"), ("git", "lfs", "push"),
                  ("git", "svn", "dcommit"), ("git", "p4", "submit"), *(("git", f"remote-{helper}") for helper in ("http", "https", "ftp", "ftps", "ext", "fd"))),
    ),
)


@dataclass(frozen=True)
class Denied:
    """A prefix of rule words denied by a user's rule through its effect."""

    prefix: list[str]
    rule: str
    effect: str


def denied_programs(deny: list[list[str]]) -> list[Denied]:
    """The programs each effect-naming deny rule denies besides its own words."""
    found: list[Denied] = []
    for effect in EFFECTS:
        rule = next((" ".join(words) for words in deny if tuple(words) in effect.rules), None)
        if rule is not None:
            found.extend(Denied(list(prefix), rule, effect.name) for prefix in effect.programs if " ".join(prefix) != rule)
    return found


def denied_option(deny: list[list[str]], rule_words: list[str]) -> Denied | None:
    """The effect-naming deny rule an argv breaks by its options (`find . -delete` under `rm`)."""
    for effect in EFFECTS:
        rule = next((" ".join(words) for words in deny if tuple(words) in effect.rules), None)
        if rule is None:
            continue
        for prefix, test in effect.options:
            if rule_words[: len(prefix)] == list(prefix) and test(rule_words[len(prefix):]):
                return Denied(list(prefix), rule, effect.name)
    return None


def hidden_git_command(deny: list[list[str]], rule_words: list[str]) -> str | None:
    """Why a git argv asks when a deny rule names git, or an effect git commands have (`rm`:
    `git clean`): its subcommand is no git command, so it is an alias (`git p` for push, `git c`
    for clean), another program, or a typo git corrects to a command (`help.autocorrect`),
    which the rule cannot be checked against."""
    if not _names_git(deny) or rule_words[:1] != ["git"] or len(rule_words) < 2:
        return None
    command = rule_words[1]
    if command in GIT_COMMANDS or command.startswith("-"):
        return None
    return f"git {command} is not a git command: an alias or a git-{command} program, which a deny rule cannot be checked against"


def _names_git(deny: list[list[str]]) -> bool:
    """A deny rule names git, or an effect some git commands have."""
    if any(words[0] == "git" for words in deny):
        return True
    for effect in EFFECTS:
        if any(tuple(words) in effect.rules for words in deny):
            prefixes = [*effect.programs, *(prefix for prefix, _ in effect.options)]
            if any(prefix[0] == "git" for prefix in prefixes):
                return True
    return False
