"""How a program's options are declared and an argv is checked against them, for the safe list
(`safe_commands`) and git's own table (`safe_git`)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

TEXT, PATHS = "text", "paths"
ANY = r"(.*)"
"""A carried command that is the whole value (`tar --to-command=CMD`)."""


@dataclass
class Check:
    """What the safe list says about one argv."""

    safe: bool
    why: str = ""
    """Why it is not on the safe list (unknown program, option or subcommand)."""
    concerns: list[str] = field(default_factory=list)
    """Known writes, code runs or system changes: these ask even under an allow rule."""
    paths: list[str] = field(default_factory=list)
    """Operands and option values that name files it reads."""
    operands: list[str] = field(default_factory=list)
    """The path operands alone, without option values: what a recursive read walks
    (`grep -r -f pats` walks `.`, not `pats`)."""
    folders: list[str] = field(default_factory=list)
    """Folders it moves to before working (`git -C A -C B`), each checked like a read; the
    last is where its paths are."""
    hidden: list[str] = field(default_factory=list)
    """Options that run programs no rule can see (`git -c alias.x='!cmd'`): deny rules cannot
    be checked against them, so they ask even in yolo when deny rules exist."""
    options: list[tuple[str, str]] = field(default_factory=list)
    """The options as read, each with its value ("" for a flag), so no later check reads a
    value (`grep -e --exclude=x`) as an option."""


@dataclass(frozen=True)
class Spec:
    flags: frozenset[str] = frozenset()
    """Options without a value (`-l`, `--all`); short ones may be combined (`-la`)."""
    valued: frozenset[str] = frozenset()
    """Options that take a value: `-n 5`, `-n5`, `--lines=5`, `--lines 5`."""
    path_valued: frozenset[str] = frozenset()
    """Options whose value is a file it reads."""
    dangerous: dict[str, str] = field(default_factory=dict)
    """Option -> why it is not read-only."""
    operands: str = PATHS
    text_operands: int = 0
    """Leading operands that are text (a pattern, a filter), not paths."""
    max_operands: int | None = None
    too_many: str = ""
    """Why more operands than max_operands is not read-only."""
    numeric_option: bool = False
    """`-5` means a count (head, tail)."""
    pattern_options: frozenset[str] = frozenset()
    """Options that give the pattern, so the first operand is a path after all (`grep -e P F`)."""


def spec(flags: str = "", valued: str = "", path_valued: str = "", dangerous: dict[str, str] | None = None, **rest: object) -> Spec:
    """A Spec from space-separated option lists (the tables import it as `_s`, to stay one line a program)."""
    return Spec(frozenset(flags.split()), frozenset(valued.split()), frozenset(path_valued.split()), dangerous or {}, **rest)  # type: ignore[arg-type]


def check_with_spec(program: str, spec: Spec, args: list[str]) -> Check:
    result = Check(True)
    operands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            operands.extend(args[index:])
            break
        if not word.startswith("-") or word == "-" or spec.operands == TEXT and not _is_declared(spec, word):
            operands.append(word)
            continue
        if spec.numeric_option and word[1:].isdigit():
            continue
        consumed = _option(program, spec, word, args, index, result)
        if consumed < 0:
            return result
        index += consumed
    # The pattern given by an option, as the program read it: also attached (`-e.`, `-fFILE`) or
    # last in a cluster (`-he.`); then the first operand is a file, not the pattern.
    pattern_given = any(name in spec.pattern_options for name, _ in result.options)
    _operands(program, spec, operands, result, 0 if pattern_given else spec.text_operands)
    return result


def _is_declared(spec: Spec, word: str) -> bool:
    """Whether the program reads `word` as options: a declared name, or short letters that are
    flags up to one that takes the rest of the word as its value (`printf -vPATH`, `date -s2020`)."""
    name = word.split("=", 1)[0]
    if name in spec.flags or name in spec.valued or name in spec.path_valued or name in spec.dangerous:
        return True
    if word.startswith("--"):
        return False
    for letter in word[1:]:
        option = "-" + letter
        if option in spec.valued or option in spec.path_valued or option in spec.dangerous:
            return True
        if option not in spec.flags:
            return False
    return True


def _option(program: str, spec: Spec, word: str, args: list[str], index: int, result: Check) -> int:
    """Read one option word; return how many following words it used, or -1 once unsafe."""
    if word.startswith("--"):
        name, has_value, value = word.partition("=")
        dangerous = [d for d in spec.dangerous if d.startswith("--") and d.startswith(name)]
        if dangerous:
            result.concerns.append(f"{program} {name}: {spec.dangerous[dangerous[0]]}")
            return 0 if has_value or dangerous[0] not in spec.valued else 1
        if name in spec.flags:
            result.options.append((name, value))
            return 0  # GNU rejects a value on a flag; `--color[=WHEN]` is a flag with an optional one
        if name in spec.valued or name in spec.path_valued:
            if not has_value:
                if index >= len(args):
                    return unsafe(result, f"{program} {name} needs a value")
                value = args[index]
            if name in spec.path_valued:
                result.paths.append(value)
            result.options.append((name, value))
            return 0 if has_value else 1
        return unsafe(result, f"{program}: the option {name} is not on the safe list")
    if word in spec.dangerous:
        result.concerns.append(f"{program} {word}: {spec.dangerous[word]}")
        return 0
    if word in spec.flags or word in spec.valued or word in spec.path_valued:
        if word in spec.flags:
            result.options.append((word, ""))
            return 0
        if index >= len(args):
            return unsafe(result, f"{program} {word} needs a value")
        if word in spec.path_valued:
            result.paths.append(args[index])
        result.options.append((word, args[index]))
        return 1
    return _short_cluster(program, spec, word, args, index, result)


def _short_cluster(program: str, spec: Spec, word: str, args: list[str], index: int, result: Check) -> int:
    """`-la`, `-n5`, `-A3`: letters that are flags, the last may be a valued option."""
    letters = word[1:]
    for position, letter in enumerate(letters):
        option = "-" + letter
        if option in spec.dangerous:
            result.concerns.append(f"{program} {option}: {spec.dangerous[option]}")
            return 0
        if option in spec.flags:
            result.options.append((option, ""))
            continue
        if option in spec.valued or option in spec.path_valued:
            attached = letters[position + 1:]
            value = attached or (args[index] if index < len(args) else None)
            if value is None:
                return unsafe(result, f"{program} {option} needs a value")
            if option in spec.path_valued:
                result.paths.append(value)
            result.options.append((option, value))
            return 0 if attached else 1
        return unsafe(result, f"{program}: the option {word} is not on the safe list")
    return 0


def unsafe(result: Check, why: str) -> int:
    result.safe = False
    result.why = why
    return -1


def _operands(program: str, spec: Spec, operands: list[str], result: Check, text_operands: int) -> None:
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        if spec.too_many:
            result.concerns.append(f"{program}: {spec.too_many}")
        else:
            unsafe(result, f"{program} takes no operands here")
        return
    if program == "date" and any(not o.startswith("+") for o in operands):
        result.concerns.append("date with an operand sets the system clock")
        return
    if spec.operands == PATHS:
        result.paths.extend(operands[text_operands:])
        result.operands.extend(operands[text_operands:])


@dataclass(frozen=True)
class Carrier:
    """A program that runs what some of its option values or operands hold, or a bash builtin
    that evaluates a variable name it is given (`printf -v NAME`: a subscript in NAME is
    arithmetic, and arithmetic runs `$(…)`). Read for every program, on the safe list or not: a
    deny rule must see the command carried, and code no rule can see asks even in yolo."""

    commands: dict[str, str] = field(default_factory=dict)
    """Option -> a pattern whose first group, in the option's value, is a command line it runs
    (`tar --to-command=CMD`, `ssh -o ProxyCommand=CMD`, `strace -o '|CMD'`)."""
    code: frozenset[str] = frozenset()
    """Options whose value is code in a language the gate does not read (vim's `-c`, gdb's `-ex`)."""
    names: frozenset[str] = frozenset()
    """Options whose value is a variable name bash evaluates (`printf -v`, `read -a`)."""
    valued: frozenset[str] = frozenset()
    """Its other options known to take a value, so that value is not read as options."""
    optional: frozenset[str] = frozenset()
    """Options whose value is optional, so only ever attached (`man -HBROWSER`, `git grep -OPAGER`)."""
    name_operands: bool = False
    """Its operands are variable names (`read NAME…`)."""
    runs: str | None = None
    """Its operands are a command it runs: from the first one (""), or after this word ("foreach")."""
    plus: bool = False
    """`+CMD` (vi, less) is code, unless it is a line number."""
    bundled: bool = False
    """Its first word may be option letters without a dash, whose values follow (`tar cIf PROG x.tar`)."""
    long_only: bool = False
    """One dash starts a long option too (`gdb -ex CMD`)."""
    getopt: bool = False
    """Options end at the first operand or `--`, as bash's builtins read them. Other programs are
    read to the end: a value the table does not know may have been `--` (`tar -f -- --to-command=…`)."""

    @property
    def options(self) -> frozenset[str]:
        return frozenset(self.commands) | self.code | self.names | self.valued | self.optional


def carrier(commands: dict[str, str] | None = None, code: str = "", names: str = "", valued: str = "", optional: str = "", **rest: object) -> Carrier:
    """A Carrier from space-separated option lists, like `spec`."""
    return Carrier(commands or {}, frozenset(code.split()), frozenset(names.split()), frozenset(valued.split()), frozenset(optional.split()), **rest)  # type: ignore[arg-type]


@dataclass
class Carried:
    """What one argv carries, by a Carrier."""

    commands: list[tuple[str, str]] = field(default_factory=list)
    """(the option, "" for operands; the command line it runs)."""
    code: list[str] = field(default_factory=list)
    """Options whose value is code the gate does not read."""
    names: list[str] = field(default_factory=list)
    """Variable names bash evaluates."""


def carried(table: Carrier, args: list[str]) -> Carried:
    """Read `args` as the program does: `--opt=V`, `--opt V`, `-oV`, `-xoV`, a GNU abbreviation
    (`--to-c=V`), tar's old-style `cIf PROG`."""
    found = Carried()
    index = 0
    if table.bundled and args and not args[0].startswith("-"):
        index = 1
        for letter in args[0]:
            short = "-" + letter
            if short in table.options - table.optional and index < len(args):
                _found(table, short, args[index], found)
                index += 1
    armed = table.runs == ""
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--" and (table.getopt or armed):
            rest = args[index:]
            if armed and rest:
                found.commands.append(("", _command_line(rest)))
            elif table.name_operands:
                found.names.extend(rest)
            break
        if table.plus and word.startswith("+"):
            if word.strip("+") and not word.strip("+").isdigit():
                found.code.append(word)
        elif not word.startswith("-") or word == "-":
            if armed:
                found.commands.append(("", _command_line(args[index - 1:])))
                break
            if word == table.runs:
                armed = True
            elif table.getopt:
                found.names.extend(args[index - 1:] if table.name_operands else [])
                break
        else:
            option, value, used = _option_value(table, word, args[index] if index < len(args) else None)
            index += used
            if option and value is not None:
                _found(table, option, value, found)
    return found


def _option_value(table: Carrier, word: str, following: str | None) -> tuple[str | None, str | None, int]:
    """(the declared option `word` is, its value, 1 when that is the following word)."""
    name, equals, attached = word.partition("=")
    has_value = bool(equals)
    option = name if name in table.options else None
    if option is None and (word.startswith("--") or table.long_only):
        stem = name.lstrip("-")
        # GNU reads an unambiguous prefix; an ambiguous one is read as the riskiest it may be
        matches = sorted((o for o in table.options if len(o.lstrip("-")) > 1 and o.lstrip("-").startswith(stem)), key=lambda o: (o in table.valued, o))
        option = matches[0] if stem and matches else None
    if option is None:  # zip's `-TTcmd`: the longest one-dash option the word starts with
        longest = sorted((o for o in table.options if not o.startswith("--") and len(o) > 2), key=lambda o: (-len(o), o))
        option = next((o for o in longest if word.startswith(o)), None)
        if option is not None:
            has_value, attached = True, word[len(option):].removeprefix("=")
    if option is not None:
        if has_value or option in table.optional:
            return option, attached if has_value else None, 0
        return option, following, 1
    if word.startswith("--"):
        return None, None, 0
    letters = word[1:2] if table.long_only else word[1:]  # a long-only program reads `-write` as one option
    for position, letter in enumerate(letters):
        option = "-" + letter
        if option in table.options:
            rest = word[2 + position:]
            if rest or option in table.optional:
                return option, rest or None, 0
            return option, following, 1
    return None, None, 0


def _found(table: Carrier, option: str, value: str, found: Carried) -> None:
    if option in table.commands:
        match = re.fullmatch(table.commands[option], value, re.DOTALL)
        if match:
            found.commands.append((option, match.group(1)))
    elif option in table.code:
        found.code.append(option)
    elif option in table.names:
        found.names.append(value)


def _command_line(words: list[str]) -> str:
    """Operands run as a command: the first as shell text (`git bisect run` and `git submodule
    foreach` hand a lone argument to the shell), the others as the words they are."""
    return " ".join([words[0], *map(shlex.quote, words[1:])])
