"""Which git commands are read-only, option by option, and git's argv as rules see it.

Global options that point git elsewhere or set config (`-c`, `--git-dir`, `--exec-path`,
`--namespace`, …) are concerns; `-C DIR` is followed and DIR checked like any read. Each
read-only subcommand declares its options; listing forms of `branch` and `tag` are safe, naming
a new branch or tag is not.
"""

from __future__ import annotations

from mzagent_tui.agent.safety.option_specs import Check, Spec, check_with_spec
from mzagent_tui.agent.safety.option_specs import spec as _s

GLOBAL_FLAGS = {
    "--no-pager", "-P", "--paginate", "-p", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch", "--no-advice",
}
GLOBAL_VALUED = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path", "--super-prefix", "--attr-source"}
HIDES_PROGRAMS = {"-c", "--config-env", "--exec-path"}
GLOBAL_DANGEROUS = {
    "-c": "sets configuration, which can run programs",
    "--config-env": "sets configuration, which can run programs",
    "--exec-path": "runs git programs from another folder",
    "--git-dir": "works on another repository",
    "--work-tree": "works on another folder",
    "--namespace": "works on another namespace of refs",
    "--super-prefix": "an internal option",
    "--attr-source": "reads attributes from a tree",
    "--bare": "works on another repository",
}

_DIFF_FLAGS = (
    "-p -u -s -z -w -b -R -M -C -B -D --patch --no-patch --raw --stat --numstat --shortstat --summary --name-only "
    "--name-status --patch-with-stat --patch-with-raw --compact-summary --full-index --binary --no-color --color "
    "--color-moved --color-words --word-diff --word-diff-regex --no-renames --find-renames --find-copies --find-copies-harder "
    "--irreversible-delete --check --ignore-space-at-eol --ignore-space-change --ignore-all-space --ignore-blank-lines "
    "--ignore-cr-at-eol --ignore-submodules --minimal --patience --histogram --diff-algorithm --indent-heuristic "
    "--no-indent-heuristic --function-context -W --exit-code --quiet --text -a --no-prefix --default-prefix --relative "
    "--no-relative --abbrev --no-abbrev --dirstat --cumulative --ita-invisible-in-index --no-ext-diff --no-textconv "
    "--src-prefix --dst-prefix --line-prefix --submodule --anchored --stat-width --stat-name-width --stat-count "
    "--stat-graph-width --unified --inter-hunk-context --diff-filter --rotate-to --skip-to --ws-error-highlight "
    "--pickaxe-all --pickaxe-regex --merge-base --full-diff --cc -c -m --first-parent --remerge-diff --diff-merges --no-diff-merges"
)
_LOG_FLAGS = (
    "--oneline --graph --decorate --no-decorate --all --branches --tags --remotes --no-merges --merges --reverse "
    "--follow --date --since --until --after --before --author --committer --grep --invert-grep --all-match "
    "--regexp-ignore-case -i --basic-regexp --extended-regexp -E --fixed-strings -F --perl-regexp --max-count "
    "--skip --format --pretty --abbrev-commit --no-abbrev-commit --left-right --cherry-pick --cherry-mark --cherry "
    "--boundary --ancestry-path --simplify-by-decoration --topo-order --date-order --author-date-order --walk-reflogs "
    "-g --show-notes --no-notes --notes --relative-date --parents --children --log-size --source --use-mailmap "
    "--mailmap --no-mailmap --encoding --expand-tabs --no-expand-tabs --no-walk --do-walk --max-parents --min-parents "
    "--no-max-parents --no-min-parents --not --full-history --dense --sparse --simplify-merges --show-linear-break "
    "--count --exclude --single-worktree --ignore-missing --bisect --show-pulls -t --decorate-refs --decorate-refs-exclude --clear-decorations"
)
_DIFF_VALUED = "-U -l -n -G -S --output-indicator-new --output-indicator-old --output-indicator-context"
_DIFF_DANGEROUS = {
    "--output": "writes a file",
    "--ext-diff": "runs an external diff program",
    "--textconv": "runs text conversion programs",
    "--show-signature": "runs gpg",
}

SUBCOMMANDS: dict[str, Spec] = {
    "status": _s("-s --short -b --branch --porcelain --long -v --verbose -u -uno -uall -unormal --untracked-files --ignored "
                 "--no-renames --renames --find-renames -z --show-stash --ahead-behind --no-ahead-behind --column --no-column --ignore-submodules"),
    "diff": _s(_DIFF_FLAGS + " --cached --staged --no-index", _DIFF_VALUED, "-O", dangerous=_DIFF_DANGEROUS),
    "log": _s(_DIFF_FLAGS + " " + _LOG_FLAGS, _DIFF_VALUED, "-O", dangerous=_DIFF_DANGEROUS, numeric_option=True),
    "show": _s(_DIFF_FLAGS + " " + _LOG_FLAGS, _DIFF_VALUED, "-O", dangerous=_DIFF_DANGEROUS, numeric_option=True),
    "whatchanged": _s(_DIFF_FLAGS + " " + _LOG_FLAGS, _DIFF_VALUED, "-O", dangerous=_DIFF_DANGEROUS, numeric_option=True),
    "shortlog": _s("-n -s -e -c --numbered --summary --email --committer --all --no-merges --since --until --author --format --group -w"),
    "blame": _s("-w -M -C -e -s -l -t -b -p -n -f -c --porcelain --line-porcelain --date --show-email --show-number --root "
                "--show-name --incremental --abbrev --show-stats --reverse --first-parent --color-lines --color-by-age --progress --no-progress",
                "-L", dangerous={"--contents": "reads a file named in the option", "-S": "reads revisions from a file"}),
    "rev-parse": _s("--show-toplevel --show-prefix --show-cdup --git-dir --git-common-dir --absolute-git-dir --is-inside-work-tree "
                    "--is-inside-git-dir --is-bare-repository --is-shallow-repository --abbrev-ref --short --verify --quiet -q "
                    "--symbolic --symbolic-full-name --all --branches --tags --remotes --show-superproject-working-tree "
                    "--show-object-format --sq --not --default --prefix --path-format --local-env-vars --git-path --since --until", operands="text"),
    "ls-files": _s("-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored --stage --unmerged "
                   "--killed --directory --no-empty-directory --exclude-standard --error-unmatch --full-name --recurse-submodules "
                   "--abbrev --format --eol --sparse --deduplicate", "-x --exclude --with-tree", "-X --exclude-from --exclude-per-directory"),
    "ls-tree": _s("-d -r -t -l -z --name-only --name-status --object-only --full-name --full-tree --long --abbrev --format"),
    "describe": _s("--tags --all --long --always --abbrev --dirty --broken --match --exclude --contains --first-parent --candidates --exact-match --debug", operands="text"),
    "rev-list": _s("--all --count --max-count --skip --reverse --objects --no-merges --merges --first-parent --since --until "
                   "--author --parents --oneline --left-right --topo-order --date-order --branches --tags --remotes --not --abbrev-commit", "-n", numeric_option=True),
    "show-ref": _s("--heads --tags --head --verify --hash --abbrev --dereference -d -s -q --quiet --exists --branches", operands="text"),
    "merge-base": _s("--all --octopus --independent --is-ancestor --fork-point", operands="text"),
    "name-rev": _s("--tags --refs --exclude --all --annotate-stdin --name-only --no-undefined --always", operands="text"),
    "count-objects": _s("-v -H --verbose --human-readable", max_operands=0),
    "for-each-ref": _s("--format --sort --count --points-at --merged --no-merged --contains --no-contains --ignore-case --omit-empty --exclude", operands="text"),
    "check-ignore": _s("-q -v -n -z --quiet --verbose --non-matching --no-index"),
    "check-attr": _s("-a --all --cached -z"),
    "grep": _s("-n -i -v -w -l -L -c -h -H -E -F -P -G -o -q -z -p -W -I -a --line-number --ignore-case --invert-match --word-regexp "
               "--files-with-matches --files-without-match --count --no-filename --full-name --extended-regexp --fixed-strings "
               "--perl-regexp --basic-regexp --only-matching --quiet --null --show-function --function-context --text --untracked "
               "--no-index --cached --no-exclude-standard --exclude-standard --recurse-submodules --and --or --not --all-match "
               "--break --heading --column --no-color --color ( ) --textconv --no-textconv",
               "-e -m -A -B -C --max-depth --threads --max-count --after-context --before-context --context", "-f",
               dangerous={"-O": "opens the files in a pager program", "--open-files-in-pager": "opens the files in a pager program"},
               text_operands=1, pattern_options=frozenset({"-e", "-f"})),
    "cat-file": _s("-t -s -e -p --batch-check --batch-all-objects --follow-symlinks --unordered --buffer --allow-unknown-type -Z",
                   dangerous={"--textconv": "runs text conversion programs", "--filters": "runs filter programs",
                              "--batch": "prints the objects its input names (not checked)",
                              "--batch-command": "prints the objects its input names (not checked)"}),
}
# Subcommands safe only in one form: git SUB [ARG] where the words after SUB are exactly one of these.
LISTING_FORMS = {
    "remote": ([], ["-v"], ["--verbose"]),
    "stash": (["list"],),
    "worktree": (["list"], ["list", "--porcelain"]),
    "reflog": ([], ["show"]),
    "version": ([],),
}
_BRANCH_LIST = _s("-a -r -v -vv -l -i --list --all --remotes --verbose --show-current --color --no-color --column --no-column --ignore-case --omit-empty",
                  "--contains --no-contains --merged --no-merged --sort --format --points-at")
_TAG_LIST = _s("-l -i -n --list --ignore-case --column --no-column --color --omit-empty",
               "--contains --no-contains --merged --no-merged --sort --format --points-at")


def split_global(args: list[str]) -> tuple[list[str], list[str]]:
    """(global options with their values, the subcommand and its arguments)."""
    options: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        word = args[index]
        options.append(word)
        index += 1
        if word in GLOBAL_VALUED and index < len(args):
            options.append(args[index])
            index += 1
    return options, args[index:]


def rule_words(words: list[str]) -> list[str]:
    """`git -C . --no-pager push` is `git push` to a rule."""
    return [words[0], *split_global(words[1:])[1]]


def check_git(args: list[str]) -> Check:
    options, rest = split_global(args)
    result = Check(True)
    index = 0
    while index < len(options):
        word = options[index]
        name = word.split("=", 1)[0]
        if name in GLOBAL_DANGEROUS:
            key = options[index + 1] if name == "-c" and index + 1 < len(options) else ""
            finding = f"git {name} {key}".rstrip() + f": {GLOBAL_DANGEROUS[name]}"
            (result.hidden if name in HIDES_PROGRAMS else result.concerns).append(finding)
        elif word == "-C":
            if index + 1 < len(options):
                result.folders.append(options[index + 1])
        elif word not in GLOBAL_FLAGS:
            result.safe, result.why = False, f"git: the option {word} is not on the safe list"
            return result
        index += 2 if word in GLOBAL_VALUED else 1
    if not rest:
        result.safe, result.why = False, "git without a subcommand"
        return result
    sub, sub_args = rest[0], rest[1:]
    if sub in LISTING_FORMS:
        if sub_args not in [list(form) for form in LISTING_FORMS[sub]]:
            result.safe, result.why = False, f"git {sub} {' '.join(sub_args)} is not a listing form on the safe list".replace("  ", " ")
        return result
    if sub in ("branch", "tag"):
        return _merge(result, _listing(sub, sub_args))
    spec = SUBCOMMANDS.get(sub)
    if spec is None:
        result.safe, result.why = False, f"git {sub} is not on the safe list"
        return result
    checked = check_with_spec(f"git {sub}", spec, sub_args)
    checked.paths = [p for p in map(_path_of, checked.paths) if p]
    checked.operands = [p for p in map(_path_of, checked.operands) if p]
    return _merge(result, checked)


def _listing(sub: str, args: list[str]) -> Check:
    """`git branch`, `git branch -a`, `git branch --list 'fix*'` list; `git branch NAME` creates."""
    checked = check_with_spec(f"git {sub}", _BRANCH_LIST if sub == "branch" else _TAG_LIST, args)
    listing = any(a in ("-l", "--list") for a in args) or (sub == "branch" and any(a in ("-a", "-r", "--all", "--remotes", "-v", "-vv", "--verbose") for a in args))
    if checked.paths and not listing:
        noun = "branch" if sub == "branch" else "tag"
        checked.concerns.append(f"git {sub} {checked.paths[0]} creates a {noun}")
    checked.paths = checked.operands = []
    return checked


def _path_of(operand: str) -> str:
    """`HEAD:.env` reads `.env`, and so does `:0:.env` (the index, stage 0); `:/message` searches
    commit messages; other operands may be paths."""
    if ":" in operand:
        path = operand.split(":", 1)[1]
        if operand.startswith(":") and path[:1] in "0123" and path[1:2] == ":":
            path = path[2:]
        return "" if path.startswith("/") or not path else path
    return operand


def _merge(outer: Check, inner: Check) -> Check:
    return Check(
        outer.safe and inner.safe,
        outer.why or inner.why,
        outer.concerns + inner.concerns,
        outer.paths + inner.paths,
        outer.operands + inner.operands,
        outer.folders,
        outer.hidden + inner.hidden,
        outer.options + inner.options,
    )
