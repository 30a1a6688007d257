"""The read-only programs `auto-safe` may run, each with the options it may take.

Modelled on Codex's `is_safe_command`: a program is safe only with options it declares. An
unknown option makes it "not on the safe list" (it asks in `auto-safe`); an option known to
write a file, run a program or change the system is a *concern*, which asks in every mode but
`yolo`, also under an allow rule. Operands are sorted into text (patterns, formats) and paths;
the paths are returned so the analyser can check they stay in the project and hold no secrets.

GNU programs accept any unambiguous prefix of a long option (`--compress-prog`), so a long
option that is a prefix of a dangerous one is dangerous too.
"""

from __future__ import annotations

import re

from mzagent_tui.agent.safety.option_specs import ANY, TEXT, Carried, Carrier, Check, Spec, check_with_spec, unsafe
from mzagent_tui.agent.safety.option_specs import carried as _carried
from mzagent_tui.agent.safety.option_specs import carrier as _c
from mzagent_tui.agent.safety.option_specs import spec as _s
from mzagent_tui.agent.safety.safe_git import check_git, split_global

_WRITES = "writes a file"
_RUNS = "runs a program"
_READS_LISTED = "reads the files a list names (the list is not checked)"
_SUM_FLAGS = "-b -t -z -w --binary --text --zero --tag --quiet --status --strict --warn --ignore-missing"
_SUM_CHECK = {"-c": _READS_LISTED, "--check": _READS_LISTED}
_JQ_IMPORT = re.compile(r"\b(import|include)\b")
_JQ_ENV = re.compile(r"\$ENV\b|(?<![.\w$])env\b|\$(?![A-Za-z_])")
"""`env`, `$ENV`, and a `$` with no name right after it: jq 1.6 reads `$ ENV` (a space, a tab, a
new line or a comment between) as `$ENV`."""

SPECS: dict[str, Spec] = {
    "ls": _s(
        "-a -A -l -h -R -t -S -r -1 -d -F -p -i -s -G -g -o -n -c -u -x -C -m -Q -B -v -X -U -L -H -k --all --almost-all --human-readable "
        "--recursive --reverse --directory --classify --full-time --group-directories-first --numeric-uid-gid --size --inode "
        "--si --no-group --literal --escape --quote-name --dereference --author --file-type --show-control-chars --hide-control-chars --color --colour",
        "-w -I -T --width --sort --time --time-style --format --ignore --hide --tabsize --block-size --quoting-style --indicator-style",
    ),
    "cat": _s("-n -b -s -A -E -T -v -e -t -u --number --number-nonblank --squeeze-blank --show-all --show-ends --show-tabs --show-nonprinting"),
    "head": _s("-q -v -z --quiet --silent --verbose --zero-terminated", "-n -c --lines --bytes", numeric_option=True),
    "tail": _s("-q -v -z -r --quiet --silent --verbose --zero-terminated", "-n -c --lines --bytes", numeric_option=True),
    "wc": _s("-l -w -c -m -L --lines --words --bytes --chars --max-line-length --total"),
    "pwd": _s("-L -P", max_operands=0),
    "true": _s(operands=TEXT),
    "false": _s(operands=TEXT),
    "whoami": _s(max_operands=0),
    "id": _s("-u -g -G -n -r -z --user --group --groups --name --real", operands=TEXT),
    "uname": _s("-a -s -n -r -v -m -p -i -o --all --kernel-name --kernel-release --kernel-version --machine --operating-system", max_operands=0),
    "basename": _s("-a -z --multiple --zero", "-s --suffix", operands=TEXT),
    "dirname": _s("-z --zero", operands=TEXT),
    "realpath": _s("-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical --quiet --strip --no-symlinks --zero", "", "--relative-to --relative-base"),
    "readlink": _s("-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet --silent --verbose --zero"),
    "echo": _s("-n -e -E", operands=TEXT),
    "printf": _s(operands=TEXT, dangerous={"-v": "assigns a shell variable"}),
    "grep": _s(
        "-i -v -n -c -l -L -o -q -s -r -R -w -x -E -F -G -P -H -h -a -I -z -Z -b -U -T --ignore-case --invert-match --line-number "
        "--count --files-with-matches --files-without-match --only-matching --quiet --silent --no-messages --recursive "
        "--dereference-recursive --word-regexp --line-regexp --extended-regexp --fixed-strings --basic-regexp --perl-regexp "
        "--with-filename --no-filename --text --null --null-data --byte-offset --initial-tab --no-ignore-case --color --colour",
        "-e -m -A -B -C -d -D --regexp --max-count --after-context --before-context --context --include --exclude --exclude-dir "
        "--label --binary-files --directories --devices",
        "-f --file",
        text_operands=1,
        pattern_options=frozenset({"-e", "-f", "--regexp", "--file"}),
    ),
    "rg": _s(
        "-i -S -s -w -x -F -n -N -l -c -v -o -u -uu -uuu -. -H -I -a -0 -U -P --hidden --no-ignore --files --json --type-list "
        "--ignore-case --smart-case --case-sensitive --word-regexp --line-regexp --fixed-strings --line-number --no-line-number "
        "--files-with-matches --files-without-match --count --count-matches --invert-match --only-matching --with-filename "
        "--no-filename --text --null --multiline --pcre2 --no-heading --heading --vimgrep --stats --sort-files --trim "
        "--no-ignore-vcs --no-messages --column --no-column --byte-offset --quiet -q --color",
        "-e -g -t -T -A -B -C -m -M -j -r --regexp --glob --iglob --type --type-not --after-context --before-context --context "
        "--max-count --max-columns --max-depth --max-filesize --threads --colors --sort --sortr --replace --type-add "
        "--encoding -E --path-separator",
        "-f --file --ignore-file",
        dangerous={"--pre": _RUNS, "--pre-glob": _RUNS, "--hostname-bin": _RUNS, "-z": "runs decompression programs",
                   "--search-zip": "runs decompression programs", "-L": "follows links out of the project", "--follow": "follows links out of the project"},
        text_operands=1,
        pattern_options=frozenset({"-e", "-f", "--regexp", "--file", "--files"}),  # `--files` takes no pattern
    ),
    "tree": _s(
        "-a -d -f -i -s -h -D -F -C -n -p -u -g -J -X -Q -N -r -t -v -U --noreport --gitignore --dirsfirst --du --si -x",
        "-L -I -P --charset --filelimit --sort --timefmt",
        dangerous={"-o": _WRITES, "-l": "follows links out of the project", "-R": "writes files"},
    ),
    "file": _s(
        "-b -i -L -z -Z -s -k -r -0 -N -E -h -p --brief --mime --mime-type --mime-encoding --dereference --no-dereference "
        "--uncompress --keep-going --raw --special-files --print0 --no-pad",
        "-e -F --exclude --separator",
        "-m --magic-file",
        dangerous={"-C": "compiles a magic file (writes)", "--compile": "compiles a magic file (writes)", "-f": _READS_LISTED, "--files-from": _READS_LISTED},
    ),
    "stat": _s("-L -f -t --dereference --file-system --terse", "-c --format --printf"),
    "du": _s("-s -h -a -c -k -m -b -x -L -S -0 --summarize --human-readable --all --total --apparent-size --bytes --si", "-d --max-depth --exclude -t --threshold --block-size"),
    "df": _s("-h -T -i -a -k -l -P -H --human-readable --print-type --inodes --all --local --portability --total --si", "-t -x --type --exclude-type --output"),
    "which": _s("-a", operands=TEXT),
    "type": _s("-a -t -p -P -f", operands=TEXT),
    "date": _s("-u -R --utc --universal --rfc-email", "-I -d --date --iso-8601 --rfc-3339", "-r --reference -f --file",
               dangerous={"-s": "sets the system clock", "--set": "sets the system clock"}, operands=TEXT),
    "hostname": _s("-f -s -i -I -d -A -a -y --fqdn --long --short --ip-address --all-ip-addresses --domain --alias --all-fqdns",
                   dangerous={"-F": "sets the host name", "--file": "sets the host name", "-b": "sets the host name", "--boot": "sets the host name"},
                   max_operands=0, too_many="sets the host name"),
    "diff": _s(
        "-u -q -s -r -N -w -b -B -i -y -c -a -t -T -p -d -E -Z --brief --report-identical-files --recursive --new-file --unified "
        "--ignore-all-space --ignore-space-change --ignore-blank-lines --ignore-case --side-by-side --text --expand-tabs "
        "--initial-tab --show-c-function --minimal --strip-trailing-cr --ignore-tab-expansion --ignore-trailing-space "
        "--suppress-common-lines --left-column --no-dereference --speed-large-files --normal --color",
        "-U -C -W -I -x -F --label --width --ignore-matching-lines --exclude --show-function-line --tabsize --palette",
        "--from-file --to-file -X --exclude-from",
    ),
    "cmp": _s("-b -l -s --print-bytes --verbose --quiet --silent", "-i -n --ignore-initial --bytes"),
    "sort": _s(
        "-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z --ignore-leading-blanks --dictionary-order --ignore-case "
        "--general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort "
        "--reverse --version-sort --check --merge --stable --unique --zero-terminated --debug",
        "-k -t -S --key --field-separator --buffer-size --parallel --batch-size --sort",
        "--random-source",
        dangerous={"-o": _WRITES, "--output": _WRITES, "--compress-program": _RUNS, "-T": "writes temporary files in a folder",
                   "--temporary-directory": "writes temporary files in a folder",
                   "--files0-from": _READS_LISTED},
    ),
    "uniq": _s("-c -d -D -u -i -z --count --repeated --unique --ignore-case --zero-terminated", "-f -s -w --skip-fields --skip-chars --check-chars --all-repeated --group",
               max_operands=1, too_many="writes its second operand (the output file)"),
    "cut": _s("-s -n -z --complement --only-delimited --zero-terminated", "-d -f -c -b --delimiter --fields --characters --bytes --output-delimiter"),
    "tr": _s("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1", operands=TEXT),
    "nl": _s("-p --no-renumber", "-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter --number-format --number-separator --number-width --starting-line-number --line-increment"),
    "column": _s("-t -x -n -e -J -L -R --table --fillrows --json --keep-empty-lines", "-s -o -c -N -W -H -d --separator --output-separator --output-width --table-columns --table-name"),
    "jq": _s("-r -c -S -e -n -s -j -a -M -C --raw-output --compact-output --sort-keys --exit-status --null-input --slurp --join-output --ascii-output --monochrome-output --color-output --tab --seq --stream",
             "--indent", text_operands=1),
    "seq": _s("-w --equal-width", "-s -f --separator --format", operands=TEXT),
    "comm": _s("-1 -2 -3 -z --check-order --nocheck-order --total --zero-terminated", "--output-delimiter"),
    "paste": _s("-s -z --serial --zero-terminated", "-d --delimiters"),
    "fold": _s("-b -s --bytes --spaces", "-w --width"),
    "expand": _s("-i --initial", "-t --tabs"),
    "unexpand": _s("-a --all --first-only", "-t --tabs"),
    "rev": _s(),
    "tac": _s("-b -r --before --regex", "-s --separator"),
    "strings": _s("-a -f -w -d --all --print-file-name --include-all-whitespace --data", "-n -t -e --bytes --radix --encoding -s --output-separator"),
    "od": _s("-b -c -d -f -i -l -o -s -v -x -a -h -X -D -O --output-duplicates", "-A -j -N -t -w --address-radix --skip-bytes --read-bytes --format --width --endian"),
    "hexdump": _s("-b -c -C -d -o -v -x --canonical --no-squeezing", "-n -s -e --length --skip --format", "-f --format-file"),
    "xxd": _s("-p -i -u -b -e -a -d -C -E -ps -plain -include -uppercase -bits -autoskip -capitalize", "-c -l -s -g -o -n -R -cols -len -seek -groupsize -offset -name",
              dangerous={"-r": "writes binary from a dump", "-revert": "writes binary from a dump"}, max_operands=1, too_many="writes its second operand (the output file)"),
    "md5sum": _s(_SUM_FLAGS, dangerous=_SUM_CHECK),
    "sha1sum": _s(_SUM_FLAGS, dangerous=_SUM_CHECK),
    "sha256sum": _s(_SUM_FLAGS, dangerous=_SUM_CHECK),
    "sha512sum": _s(_SUM_FLAGS, dangerous=_SUM_CHECK),
    "b2sum": _s(_SUM_FLAGS, "-l --length", dangerous=_SUM_CHECK),
    "cksum": _s("--raw --tag --untagged -z --zero", "-a --algorithm -l --length"),
    "test": _s(operands=TEXT),
}

_SSH_OPTION = r"(?i)\s*(?:proxy|local|knownhosts|remote)command\s*(?:=|\s)\s*(.*)"
"""`ssh -o ProxyCommand=CMD` (or `-o 'ProxyCommand CMD'`, any case) runs CMD here."""
_GIT_UPLOAD_PACK = _c({"--upload-pack": ANY})
_VIM_CODE = "-c --cmd -S -s -u -U --remote-send --remote-expr"
_VIM = _c(code=_VIM_CODE, valued="-T -i -W -t", plus=True)
VIM_PROGRAMS = ("vi", "vim", "view", "ex", "gvim", "vimdiff", "rvim", "rview", "evim", "gview", "nvim")
_MAPFILE = _c({"-C": ANY}, valued="-d -n -O -s -u -c", name_operands=True, getopt=True)

CARRIERS: dict[str, Carrier] = {
    # bash builtins, with their getopt letters: a name with a subscript runs what it holds
    "printf": _c(names="-v", getopt=True),
    "read": _c(names="-a", valued="-d -i -n -N -p -t -u", name_operands=True, getopt=True),
    "mapfile": _MAPFILE,
    "readarray": _MAPFILE,
    "wait": _c(names="-p", getopt=True),
    # programs that run a command an option or their operands hold
    "tar": _c({"--to-command": ANY, "--use-compress-program": ANY, "-I": ANY, "--checkpoint-action": r"exec=(.*)", "-F": ANY,
               "--info-script": ANY, "--new-volume-script": ANY, "--rsh-command": ANY, "--rmt-command": ANY},
              valued="-b -C -f -g -H -K -L -N -T -V -X", bundled=True),
    "sort": _c({"--compress-program": ANY}, valued="-k -t -S -T -o"),
    "rsync": _c({"-e": ANY, "--rsh": ANY, "--rsync-path": ANY}, valued="-B -f -M -T"),
    "ssh": _c({"-o": _SSH_OPTION}, valued="-B -b -c -D -E -e -F -I -i -J -L -l -m -O -p -Q -R -S -W -w"),
    "scp": _c({"-o": _SSH_OPTION, "-S": ANY}, valued="-c -D -F -i -J -l -P -X"),
    "sftp": _c({"-o": _SSH_OPTION, "-S": ANY, "-D": ANY}, valued="-B -b -c -F -i -J -l -P -R -X"),
    "strace": _c({"-o": r"[|!](.*)", "--output": r"[|!](.*)"}, valued="-e -p -s -u -E -a -b -I -O -S -P -X -U", runs=""),
    "man": _c({"-P": ANY, "--pager": ANY, "-H": ANY, "--html": ANY}, code="-C --config-file", optional="-H --html", valued="-M -m -S -s -e -L -p -R -T -E -r"),
    "zip": _c({"-TT": ANY, "--unzip-command": ANY}, valued="-b -n -t -tt -P -Z -O -s"),
    "tcpdump": _c({"-z": ANY}, valued="-i -w -r -c -s -C -G -W -Z -E -F -y -B -j -M -T -V"),
    "git rebase": _c({"-x": ANY, "--exec": ANY}, valued="-s -X -C --onto --strategy --strategy-option"),
    "git difftool": _c({"-x": ANY, "--extcmd": ANY}, valued="-t --tool"),
    "git fetch": _GIT_UPLOAD_PACK,
    "git pull": _GIT_UPLOAD_PACK,
    "git ls-remote": _GIT_UPLOAD_PACK,
    "git clone": _c({"-u": ANY, "--upload-pack": ANY}, code="-c --config --template", valued="-o -b --origin --branch --depth --reference -j --jobs"),
    "git push": _c({"--receive-pack": ANY, "--exec": ANY}, valued="-o --push-option --repo"),
    "git archive": _c({"--exec": ANY}, valued="-o --output --format --prefix --remote"),
    "git filter-branch": _c({f"--{name}-filter": ANY for name in ("env", "tree", "index", "parent", "msg", "commit", "tag-name")},
                            valued="-d --subdirectory-filter --original --state-branch"),
    "git send-email": _c({"--sendmail-cmd": ANY, "--smtp-server": ANY, "--to-cmd": ANY, "--cc-cmd": ANY, "--header-cmd": ANY}),
    "git grep": _c({"-O": ANY, "--open-files-in-pager": ANY}, optional="-O --open-files-in-pager",
                   valued="-e -f -m -A -B -C --max-depth --threads --max-count --after-context --before-context --context"),
    "git instaweb": _c({"-d": ANY, "--httpd": ANY, "-b": ANY, "--browser": ANY}),
    "git submodule": _c(runs="foreach"),
    "git bisect": _c(runs="run"),
    # programs whose option values are code in their own language, which can run commands
    "less": _c(code="-k --lesskey-file --lesskey-src --lesskey-content", valued="-b -h -j -o -O -p -P -t -T -x -y -z", plus=True),
    **dict.fromkeys((name for name in VIM_PROGRAMS if name != "nvim"), _VIM),
    "nvim": _c(code=_VIM_CODE + " -l", valued="-T -i -W -t", plus=True),
    "make": _c(code="--eval -E", valued="-f -C -I -o -W --file --makefile --directory --include-dir --old-file --assume-old --what-if --new-file --assume-new",
               optional="-j -l --jobs --load-average"),
    "emacs": _c(code="-eval -l -load -f -funcall -batch -script -x", valued="-L -directory -t -terminal -d -display -chdir -u -user", long_only=True),
    "emacsclient": _c(code="-e -eval", valued="-s -socket-name -f -server-file -a -alternate-editor -d -display", long_only=True),
    "gdb": _c(code="-ex -eval-command -iex -init-eval-command -x -command -ix -init-command",
              valued="-p -pid -c -core -d -directory -cd -tty -se -symbols -s -e -exec -D -data-directory", long_only=True),
}
"""What a program's option values or operands carry, read for every program: a command line is
judged as a command (so a deny rule for `rm` sees `tar --to-command='rm -rf x'`), code the gate
does not read and variable names bash evaluates ask."""

_FIND_VALUED = {
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype", "-maxdepth",
    "-mindepth", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-perm", "-user", "-group", "-uid",
    "-gid", "-printf", "-regextype", "-links", "-inum", "-used", "-newermt", "-fstype",
}
_FIND_PATH_VALUED = {"-newer", "-anewer", "-cnewer", "-samefile"}
_FIND_FLAGS = {
    "-print", "-print0", "-prune", "-not", "-a", "-o", "-and", "-or", "-empty", "-ls", "-depth", "-xdev", "-mount",
    "-readable", "-writable", "-executable", "-true", "-false", "-quit", "-nouser", "-nogroup", "-noleaf", "-daystart",
    "(", ")", "!", ",", "-P", "-H", "-O0", "-O1", "-O2", "-O3",
}
_FIND_DANGEROUS = {
    "-fprint": _WRITES, "-fprint0": _WRITES, "-fprintf": _WRITES, "-fls": _WRITES,
    "-L": "follows links out of the project", "-follow": "follows links out of the project",
}
FIND_RUNS = {"-exec", "-execdir", "-ok", "-okdir"}


def check(words: list[str]) -> Check:
    """The safe-list verdict for an argv whose program is words[0] (already unwrapped)."""
    program = words[0].rsplit("/", 1)[-1]
    if "/" in words[0]:
        return Check(False, f"{words[0]} is run by its path, not found on PATH")
    if program == "git":
        return check_git(words[1:])
    if program == "find":
        return _check_find(words[1:])
    if program == "command" and words[1:2] in (["-v"], ["-V"]):
        return Check(True)
    spec = SPECS.get(program)
    if spec is None:
        return Check(False, f"{program} is not on the safe list")
    result = check_with_spec(program, spec, words[1:])
    if program == "jq":
        result.concerns.extend(_jq_filter_concerns(words[1:]))
    if program == "test" and any("[" in word for word in words[1:]):
        # bash's `test -v 'a[$(cmd)]'` evaluates the subscript as arithmetic and runs cmd.
        result.hidden.append("test with a subscript ([…]): `test -v` evaluates it, which can run commands")
    return result


def carried(words: list[str]) -> tuple[str, Carried]:
    """(the program as the findings name it, `git rebase` for git; what its argv carries)."""
    program, args = words[0].rsplit("/", 1)[-1], words[1:]
    if program == "git":
        rest = split_global(args)[1]
        if rest:
            program, args = f"git {rest[0]}", rest[1:]
    table = CARRIERS.get(program)
    return program, _carried(table, args) if table else Carried()


def _jq_filter_concerns(args: list[str]) -> list[str]:
    """A jq filter is code: `import "/home/me/.docker/config" as $c` reads any JSON file, and
    `env` or `$ENV` (also `$ ENV`) prints the environment."""
    filter_text = ""
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--indent":
            index += 1
        elif word == "--":
            filter_text = args[index] if index < len(args) else ""
            break
        elif not word.startswith("-") or word == "-":
            filter_text = word
            break
    concerns = []
    if _JQ_IMPORT.search(filter_text):
        concerns.append("jq: the filter imports a file (import or include), which is not checked")
    if _JQ_ENV.search(filter_text):
        concerns.append("jq: the filter reads the environment (env or $ENV), whose variables may hold secrets")
    return concerns


def _check_find(args: list[str]) -> Check:
    result = Check(True)
    index = 0
    while index < len(args) and args[index] in ("-P", "-H", "-L", "-O0", "-O1", "-O2", "-O3"):
        if args[index] == "-L":
            result.concerns.append(f"find -L: {_FIND_DANGEROUS['-L']}")
        index += 1
    while index < len(args) and not (args[index].startswith("-") or args[index] in ("(", ")", "!", ",")):
        result.paths.append(args[index])
        index += 1
    while index < len(args):
        word = args[index]
        index += 1
        if word in FIND_RUNS:
            result.safe, result.why = False, f"find {word} runs other commands"
            return result
        if word == "-delete":
            result.concerns.append("find -delete deletes files")
        elif word in _FIND_DANGEROUS:
            result.concerns.append(f"find {word}: {_FIND_DANGEROUS[word]}")
            if word.startswith("-f"):
                index += 2 if word == "-fprintf" else 1
        elif word in _FIND_FLAGS:
            continue
        elif word in _FIND_VALUED or word in _FIND_PATH_VALUED:
            if index >= len(args):
                unsafe(result, f"find {word} needs a value")
                return result
            if word in _FIND_PATH_VALUED:
                result.paths.append(args[index])
            index += 1
        else:
            unsafe(result, f"find: {word} is not on the safe list")
            return result
    if not result.paths:
        result.paths.append(".")
    return result

