"""How a program's options are declared and an argv is checked against them, for the safe list
(`safe_commands`) and git's own table (`safe_git`)."""

from __future__ import annotations

from dataclasses import dataclass, field

TEXT, PATHS = "text", "paths"


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
    pattern_given = False
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
        if word.split("=", 1)[0] in spec.pattern_options:
            pattern_given = True
        if spec.numeric_option and word[1:].isdigit():
            continue
        consumed = _option(program, spec, word, args, index, result)
        if consumed < 0:
            return result
        index += consumed
    _operands(program, spec, operands, result, 0 if pattern_given else spec.text_operands)
    return result


def _is_declared(spec: Spec, word: str) -> bool:
    name = word.split("=", 1)[0]
    return name in spec.flags or name in spec.valued or name in spec.dangerous


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
