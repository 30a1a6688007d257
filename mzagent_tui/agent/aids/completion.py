"""Before a final answer is accepted: is the work the task asked for there?

Small models often answer "I wrote x.py" without writing it, put the result in the answer instead
of the file the task named, claim a fix that left the file as it was, or leave a Python file that
no longer compiles. Each of these gets one reminder per task (an observation), never more, so a
model that is right after all is not held up for long. The checks are about what the task says
and what is on disk, not about any particular task.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.events import Action, Event, FileChanged, Observation
from mzagent_tui.agent.model.parsing import call_source
from mzagent_tui.agent.tools.syntax_check import syntax_problem, without_trailing_commas
from mzagent_tui.agent.task_facts import TaskFacts
from mzagent_tui.agent.aids.test_files import TEST_FILE
from mzagent_tui.agent.aids.definitions import imported_from, removed_definitions
from mzagent_tui.agent.aids.moves import modules_beside
from mzagent_tui.agent.tools.paths import relative
from mzagent_tui.agent.aids.renames import has_word, replace_word
from mzagent_tui.agent.tools.shell import failing_tests
from mzagent_tui.agent.aids.undefined import new_undefined_names, sibling_imports, undefined_note

FILE_NAME = re.compile(r"(?<![\w./-])[\w./-]{1,200}\.(?=[0-9]{0,7}[A-Za-z])[A-Za-z0-9]{1,8}\b")
"""A file name in prose. Matches start only where a name can start, and are bounded: the old
unbounded pattern backtracked from every position, 48 s for a 100 KB task, hours for 1 MB. The
extension has a letter: "VERSION = '2.0'" names no file."""
CHANGE_CLAIM = re.compile(r"\b(fixed|updated|changed|modified|edited|created|added|wrote|renamed|replaced)\b", re.IGNORECASE)
WRITING_VERB = re.compile(
    r"\b(create|write|save|put|store|record|append|add|generate|produce|export|dump|fix|update|change|modify|edit|"
    r"correct|implement|rewrite|set|bump|repair|replace|remove|delete|insert|sort|convert|translate|format|reformat|"
    r"refactor|increase|decrease|increment|reorder|swap|uppercase|lowercase|capitali[sz]e|comment|uncomment|indent)\w*\b",
    re.IGNORECASE,
)
CLAIM_VERB = re.compile(f"{WRITING_VERB.pattern}|{CHANGE_CLAIM.pattern}", re.IGNORECASE)
TEST_COMMAND = re.compile(r"test|\btox\b|\bnox\b|\bmake\s+check\b", re.IGNORECASE)
"""A command that runs tests, by its words: pytest, unittest, test_x.py, npm test, go test, tox, make check."""
ABOUT_RUNNING = re.compile(r"\b(fail|pass|print|output|crash|exit|return|raise|throw)(?:s|es|ed|ing)?\b", re.IGNORECASE)
"""Words of a question whose answer is what running something gives ("Which test fails?")."""
PASSING = re.compile(r"\bpass(?:es|ing)?\b", re.IGNORECASE)
FAILING = re.compile(r"\bfail(?:s|ing|ed)?\b", re.IGNORECASE)
"""With PASSING: a task that wants tests to pass ("make test_x.py pass", "the tests fail: fix
the code"), not one that only asks about them ("find out which test fails")."""
QUESTION = re.compile(r"\?\s*$|^\s*(which|what|how|does|do|is|are|why)\b", re.IGNORECASE)
ANSWER_REQUEST = re.compile(
    r"^\s*(?:please\s+)?(tell|show|list|find|count|explain|describe|summari[sz]e|give|report|check|look|read|say|name|compare)\b",
    re.IGNORECASE,
)
"""A task worded as an order that only asks for an answer ("Tell me the port", "List the files")."""
ASKS_FOR_CHANGE = re.compile(WRITING_VERB.pattern.replace(r")\w*\b", r")(?:e?s|e?d|ing)?\b"), re.IGNORECASE)
"""The same verbs as whole words ("set", not "setup.ini" or "settings"), for a task read as a whole."""
VERB_WINDOW = 12
"""A file is a target when a writing verb comes at most this many words before it, in its clause."""
_CLAUSE_END = re.compile(r"[.!?;\n](?:\s|$)")
"""A colon does not end a clause: "I created two modules: alpha.py and beta.py"."""
_ASIDE = re.compile(r"\([^()]*\)")
"""A note in brackets between a source and its link: "convert a.json (a list of objects) to a.csv"."""
_LIST_JOIN = re.compile(r"\s*(?:,|,?\s+and|,?\s+or)\s*", re.IGNORECASE)
"""What stands between two names of one list ("alpha.py, beta.py and gamma.py"): the second shares the first's verb."""
TESTS_OF = re.compile(r"\btests?(?:\s+cases)?\s+(?:for|of)\s+(?:the\s+)?(?:\w+\s+(?:in|from)\s+)?$", re.IGNORECASE)
"""What comes before a file whose tests a task asks for ("tests for tally.py", "test cases of f in x.py")."""
ANSWERABLE = ("unnamed",)
"""Checks another answer can satisfy with no tool call: the only ones left to a stuck run's closing answer."""
STUB = "raise NotImplementedError"
"""What a function left to fill in says."""
SOURCE_LINKS = ("to", "into", "as")
"""The words between a source file and the file made from it."""
ADDING = re.compile(r"\b(add|append|insert)(?:s|ed|ing)?\b", re.IGNORECASE)
KEPT_SHARE = 0.5
"""A task that only adds to a file should leave at least this share of its earlier lines."""
AT_END = re.compile(r"\b(?:append\w*|(?:at|to) the (?:end|bottom))\b", re.IGNORECASE)
ELSEWHERE = re.compile(r"\b(?:above|below|before|after|top|beginning|start|between|under|insert\w*)\b", re.IGNORECASE)
"""Where an addition goes when not at the end ("add a line above x", "insert ...")."""
LINE_FILES = {".csv", ".tsv", ".txt", ".md", ".rst", ".log", ""}
"""Files whose additions go at the end unless the task says otherwise (rows, lines, list items, sections)."""
ADDITION = "NEW TEXT"
"""The place of the model's own lines in the write a reminder shows."""
PROMISE = re.compile(
    r"(?:^|(?<=[.!?:;])\s+)(?:(?:now|next|then|so),?\s+)?(?:I will|I'll|I am going to|I'm going to|let me|let's)\b(?!\s+(?:not|know|be)\b)"
    r"|(?:\.\.\.|\u2026)\s*$",
    re.IGNORECASE,
)
"""A final answer that announces a step instead of reporting it ("I will fix ledger.py", "Converting it...");
not a courtesy ("Let me know if…", "I'll be glad to…")."""
SENTENCE_END = re.compile(r"[.!?]\s+|\n")
ABOUT_LAYOUT = re.compile(r"\b(docstring|comment|format|indent|whitespace|style|lint|pep ?8|document|typo|spell)\w*", re.IGNORECASE)
"""Words of a task whose change may leave a Python file's code as it was."""
_TOKEN = r"(?:\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|`[^`\n]{1,80}`|[\w.-]{0,79}\w)"
REPLACING = re.compile(
    rf"\b(?:replace|rename)\s+(?:(?:all|every|each)\s+)?(?:(?:the|its)\s+)?"
    rf"(?:(?:word|text|string|name|function|method|class|variable|constant|key|field|value|heading|title)s?\s+)?"
    rf"(?P<old>{_TOKEN})(?:\s+in\s+{_TOKEN})?\s+(?:with|to|by|into)\s+(?:the\s+(?:word|text|string|name)\s+)?(?P<new>{_TOKEN})",
    re.IGNORECASE,
)
"""A task that swaps one word for another ("replace the word foo with bar", "rename total to sum_all",
"rename load in store.py to load_rows")."""
RENAMED_AS = re.compile(
    rf"(?P<old>{_TOKEN})(?:\s+in\s+{_TOKEN})?\s+(?:should|must|is\s+to|needs\s+to)\s+(?:now\s+)?be\s+"
    rf"(?:called|named|renamed(?:\s+to)?)\s+(?P<new>{_TOKEN})",
    re.IGNORECASE,
)
"""The same swap said of the name ("the function shout in speech.py should be called yell");
not of a file ("the output should be called report.log")."""
MAKES = re.compile(rf"\bmake\s+(?P<name>{FILE_NAME.pattern})(?::|\s+(?!executable\b|runnable\b)[a-z])", re.IGNORECASE)
"""A file a task asks to behave otherwise ("make banner.py print it", "make app.py import it from
there"), or to be made ("make listing.txt: a sorted list of…"): the change goes in it. Not a test
file ("make test_x.py pass": the code it tests changes), not its mode ("make run.sh executable")."""
CONVERTING = re.compile(
    rf"\b(?:convert|turn|transform|export)\w*\s+(?P<source>{FILE_NAME.pattern})(?:\s*\([^()]*\))?\s+(?:to|into|as)\s+"
    rf"(?:a\s+\w+\s+(?:file\s+)?(?:named\s+|called\s+)?)?(?P<target>{FILE_NAME.pattern})",
    re.IGNORECASE,
)
"""A task that makes one data file from another ("convert scores.json (a list) to scores.csv")."""
TABLE_FILES = {".csv", ".tsv"}
MAX_PARSED_BYTES = 1_000_000
MAX_QUOTED_BYTES = 4000
"""A file's earlier content is quoted in a reminder up to this size."""
TEXT_SUFFIXES = frozenset({"", ".txt", ".md", ".csv", ".tsv", ".log", ".list"})
"""Files whose content an answer may list line for line (not code, where an answer's snippet is
an excerpt)."""
_LIST_MARKER = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_ANSWER_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def task_targets(task: str) -> list[str]:
    """Files the task asks to create or change: "save the output to report.md", "fix money.py".

    Only the words since the previous file name count, so in "create upper.md from the lines of
    notes.md" the target is upper.md and not notes.md; and a file followed by "to" or "into"
    and another file is where the content comes from ("convert a.csv to b.json": b.json). A file
    the task makes do something else is changed too (MAKES).
    """
    made = [found["name"] for found in MAKES.finditer(task) if not TEST_FILE.search(found["name"])]
    return list(dict.fromkeys([*_names_after(task, WRITING_VERB), *made]))


def claimed_files(answer: str) -> list[str]:
    """Files an answer says it made or changed ("I wrote report.md"), not every dotted name in it
    ("os.path.join is a function")."""
    return _names_after(answer, CLAIM_VERB)


def _names_after(text: str, verbs: re.Pattern[str]) -> list[str]:
    """File names with one of the verbs at most VERB_WINDOW words before them, in their clause,
    and the names listed right after one of them ("create alpha.py and beta.py")."""
    names = []
    since = 0
    listed = False
    matches = list(FILE_NAME.finditer(text))
    for index, match in enumerate(matches):
        gap = text[since : match.start()]
        before = _CLAUSE_END.split(gap)[-1]
        after = text[match.end() : matches[index + 1].start()] if index + 1 < len(matches) else ""
        if " ".join(_ASIDE.sub(" ", after).split()).lower() in SOURCE_LINKS:
            continue  # the verb before a source is the verb of the file made from it
        if TESTS_OF.search(gap):
            since = match.end()
            listed = False
            continue  # "write tests for tally.py": the tests are made, tally.py is what they test
        listed = (listed and _LIST_JOIN.fullmatch(gap) is not None) or verbs.search(" ".join(before.split()[-VERB_WINDOW:])) is not None
        if listed:
            names.append(match.group())
        since = match.end()
    return list(dict.fromkeys(names))


def _json_without_trailing_commas(path: Path, data: bytes) -> str | None:
    """A JSON file's text (`data`, already read) without its trailing commas, when that is all
    that is wrong with it and it is short enough to quote."""
    if path.suffix.lower() != ".json" or len(data) > MAX_QUOTED_BYTES:
        return None
    return without_trailing_commas(data.decode(errors="replace"))


def listed_lines(answer: str, keep_markers: bool = False) -> list[str]:
    """The lines an answer lists: a fenced block's, or those after its first line ending in a
    colon; list markers ("- ", "1. ") taken off unless `keep_markers` (a Markdown file keeps them)
    or some line has none."""
    fenced = _ANSWER_FENCE.search(answer)
    if fenced is not None:
        lines = fenced.group(1).splitlines()
    else:
        all_lines = answer.splitlines()
        start = next((number for number, line in enumerate(all_lines) if line.rstrip().endswith(":")), None)
        lines = all_lines[start + 1:] if start is not None else []
    lines = [line.rstrip() for line in lines if line.strip()]
    if not keep_markers and lines and all(_LIST_MARKER.match(line.lstrip()) for line in lines):
        lines = [_LIST_MARKER.sub("", line.lstrip()) for line in lines]
    return lines


def _is_stub(path: Path) -> bool:
    try:
        return path.is_file() and STUB in path.read_text(errors="replace")
    except OSError:
        return False


def _line_count(path: Path) -> int | None:
    try:
        return len(path.read_bytes().splitlines()) if path.is_file() else None
    except OSError:
        return None


def _code_of(path: Path) -> str | None:
    """A Python file's code without its docstrings, comments and layout (a dump of its syntax
    tree); None for another kind of file, a big one, or one that does not parse."""
    try:
        if path.suffix != ".py" or not path.is_file() or path.stat().st_size > MAX_PARSED_BYTES:
            return None
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _short_text(path: Path, limit: int = MAX_QUOTED_BYTES) -> str | None:
    """A file's text when it is short enough to quote in a reminder (or to search, with a higher `limit`)."""
    try:
        if path.stat().st_size > limit:
            return None
        return path.read_text(errors="replace")
    except OSError:
        return None


def _records(path: Path) -> int | None:
    """How many records a data file holds: the items of a JSON list, the rows of a CSV or TSV after
    its header; None for another kind of file, or one that cannot be read as one."""
    text = _short_text(path, MAX_PARSED_BYTES)
    if text is None:
        return None
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        return len(data) if isinstance(data, list) else None
    if suffix in TABLE_FILES:
        return max(len([line for line in text.splitlines() if line.strip()]) - 1, 0)
    return None


def _unquoted(token: str) -> str:
    return token[1:-1] if len(token) > 1 and token[0] == token[-1] and token[0] in "\"'`" else token


def _has_word(text: str | None, word: str) -> bool:
    """Whether `text` holds `word` as a whole word (not "total" in "subtotal")."""
    return text is not None and has_word(text, word)


def append_call(name: str, old: str) -> str:
    """The write_to_file call that keeps `old` and adds at its end. Told "keep the earlier lines", a
    small model drops them or copies the reminder's own words into the file; a call to copy it keeps."""
    if old and not old.endswith("\n"):
        old += "\n"
    return call_source("write_to_file", [name, f"{old}{ADDITION}\n"])


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


@dataclass(frozen=True)
class Reminder:
    """What a check found: a line for the user, the observation for the model, and the files it
    says are not right yet (the same content written to one again is not "a step done")."""

    notice: str
    text: str
    files: tuple[Path, ...] = ()


def read_task(root: Path, task: str) -> TaskFacts:
    """What the task's words name and ask (see TaskFacts), for the project at `root`."""
    def inside(name: str) -> bool:
        return (root / name).resolve().is_relative_to(root)

    named = list(dict.fromkeys(FILE_NAME.findall(task)))
    asks_for_change = ASKS_FOR_CHANGE.search(FILE_NAME.sub(" ", task)) is not None
    targets = [name for name in task_targets(task) if inside(name)]
    existing = [name for name in named if inside(name) and (root / name).is_file()]
    tested = TESTS_OF.search(task[: task.find(existing[0])]) is not None if len(existing) == 1 else False
    if not targets and len(existing) == 1 and asks_for_change and not TEST_FILE.search(existing[0]) and not tested:
        targets = existing  # "f in x.py gives wrong results. Fix the formula": the one file it names
    renames: list[tuple[str, str]] = []
    for found in [*REPLACING.finditer(task), *RENAMED_AS.finditer(task)]:
        pair = (_unquoted(found["old"]), _unquoted(found["new"]))
        holding = [name for name in named if inside(name) and _has_word(_short_text(root / name, MAX_PARSED_BYTES), pair[0])]
        names_a_file = FILE_NAME.fullmatch(pair[0]) or (found.re is RENAMED_AS and FILE_NAME.fullmatch(pair[1]))
        if holding and not _has_word(pair[1], pair[0]) and not names_a_file:
            renames.append(pair)
    return TaskFacts(tuple(named), tuple(targets), frozenset(existing), asks_for_change, tuple(renames))


@dataclass
class CompletionCheck:
    """One task's checks: created when the task starts, fed the run's events, asked at each final answer."""

    root: Path
    task: str
    aids: Aids = field(default_factory=Aids)
    """Each check is the aid `answer.<kind>`: switched off there, it is skipped."""
    facts: TaskFacts = field(init=False)
    """What the task's words name and ask, read once."""
    before: dict[str, str | None] = field(default_factory=dict)
    before_lines: dict[str, int | None] = field(default_factory=dict)
    before_code: dict[str, str | None] = field(default_factory=dict)
    """Each Python target's code when the task started, without docstrings, comments and layout."""
    written: set[Path] = field(default_factory=set)
    given: set[str] = field(default_factory=set)
    originals: dict[Path, Path | None] = field(default_factory=dict)
    """The backup of each written file's content before the run's first write to it (None: the run created it)."""
    ran: bool = False
    """The model ran a command in this run (whether or not it succeeded)."""
    tests_ran: bool = False
    """The model ran a command that runs tests in this run."""
    gone: list[str] = field(default_factory=list)
    """Files the task names that a command removed since the last observation (see gone_note)."""
    gone_content: dict[str, str] = field(default_factory=dict)
    """The digest of each of those files' last content, from its backup."""
    created_now: dict[str, Path] = field(default_factory=dict)
    """The files the last action created, by the digest of their content: where a gone file went."""
    failing: list[str] = field(default_factory=list)
    """The failing tests the commands of this run reported (unittest's "test_x", pytest's
    "test_m.py::Case::test_x"), kept when a later run passed: asked which test fails, a small model
    fixed the code instead and answered that it had."""
    read: set[Path] = field(default_factory=set)
    """Files the model read in this run: a reminder about one of them need not send it to read again."""
    model_wrote: set[Path] = field(default_factory=set)
    """Files the model wrote with write_to_file or edit_file (not those a command changed, such as caches)."""
    broken: set[Path] = field(default_factory=set)
    """Files already reminded of as not parsing: one reminder per file is enough."""
    stubs: list[str] = field(default_factory=list)
    """Targets that raised NotImplementedError when the task started: stubs the task asks to fill in."""
    last_tool: str = ""
    last_command: str = ""
    failed_run: tuple[str, list[str]] | None = None
    """The last command that reported failing tests, and their names."""
    tests_failing: bool = False
    """The last test command failed with failing tests (a test command that succeeds clears it)."""
    changed_since_failure: list[Path] = field(default_factory=list)
    """Files the model wrote after `failed_run` with no test command run since (a test run's own
    changes, such as __pycache__, are not among them)."""
    last_missing: set[str] | None = None
    """The files the last reminder about missing files named: it is given again only when some of
    them were made since and some are still missing (a model made one of two modules and answered)."""

    def __post_init__(self) -> None:
        self.facts = read_task(self.root, self.task)
        targets = self.facts.targets
        self.before = {name: _digest(self.root / name) for name in targets}
        self.stubs = [name for name in targets if _is_stub(self.root / name)]
        self.before_lines = {name: _line_count(self.root / name) for name in targets}
        self.before_code = {name: _code_of(self.root / name) for name in targets}

    def _may_go(self, name: str) -> bool:
        """The task itself moves or deletes the file ("rename old.txt to new.txt", "delete tmp.log")."""
        return re.search(rf"\b(?:rename|move|delete|remove|mv|rm)\s+(?:the\s+file\s+)?{re.escape(name)}", self.task, re.IGNORECASE) is not None

    def gone_note(self) -> str | None:
        """Said right after a command removed a file the task names and does not move or delete: told
        to rename a function in util.py, a small model ran `mv util.py util_old.py` and went on."""
        if not self.gone:
            return None
        moves = {name: self.created_now[self.gone_content[name]] for name in self.gone if self.gone_content.get(name) in self.created_now}
        if len(self.gone) == 1 and moves:
            name, there = next(iter(moves.items()))
            there_rel = relative(self.root, there)
            self.gone = []
            return (
                f"{name}, which the task names, is gone now: the command moved it to {there_rel}. The task asks to change what "
                f"is in {name}, not to move or rename the file: put it back with "
                f"{call_source('run_terminal_command', [f'mv {shlex.quote(there_rel)} {shlex.quote(name)}'])}, then change "
                "its content if the task asks for that."
            )
        names, self.gone = ", ".join(self.gone), []
        return (
            f"{names}, which the task names, is gone now. The task asks to change what is in it, not to delete, move or "
            "rename the file: put it back under its name, with its content changed if the task asks for that."
        )

    def _inside(self, name: str) -> bool:
        path = (self.root / name).resolve()
        return path.is_relative_to(self.root)

    def observe(self, event: Event) -> None:
        if isinstance(event, FileChanged) and event.deleted:
            gone = [name for name in self.facts.named if self._inside(name) and (self.root / name).resolve() == Path(event.path).resolve()]
            for name in gone:
                if name in self.facts.existed and not self._may_go(name):
                    self.gone.append(name)
                    digest = _digest(Path(event.backup)) if event.backup else None
                    if digest is not None:
                        self.gone_content[name] = digest
        if isinstance(event, FileChanged) and event.created and event.sha256:
            self.created_now[event.sha256] = Path(event.path)
        if isinstance(event, Action):
            self.last_tool = event.tool
            self.created_now = {}
        written_by_model = self.last_tool in ("write_to_file", "edit_file")
        if isinstance(event, FileChanged) and written_by_model and self.failed_run is not None and Path(event.path) not in self.changed_since_failure:
            self.changed_since_failure.append(Path(event.path))
        if isinstance(event, FileChanged) and not event.deleted:
            self.written.add(Path(event.path))
            self.originals.setdefault(Path(event.path), Path(event.backup) if event.backup else None)
        if isinstance(event, Action) and event.tool in ("read_file", "write_to_file", "edit_file") and event.args and isinstance(event.args[0], str):
            try:
                path = (self.root / event.args[0]).resolve()
            except (OSError, ValueError):  # a NUL byte or an overlong name: the tool refuses it, nothing was read or written
                return
            (self.read if event.tool == "read_file" else self.model_wrote).add(path)
        if isinstance(event, Action) and event.tool == "run_terminal_command":
            self.ran = True
            command = str(event.args[0]) if event.args else ""
            self.last_command = command
            self.tests_ran = self.tests_ran or TEST_COMMAND.search(command) is not None
            if TEST_COMMAND.search(command) or (self.failed_run is not None and command == self.failed_run[0]):
                self.changed_since_failure = []
        if isinstance(event, Observation) and event.tool == "run_terminal_command" and not event.ok:
            failed = failing_tests(event.text)
            self.failing += [name for name in failed if name not in self.failing]
            if failed:
                self.failed_run = (self.last_command, failed)
                self.tests_failing = True
        if isinstance(event, Observation) and event.tool == "run_terminal_command" and event.ok and TEST_COMMAND.search(self.last_command):
            self.tests_failing = False

    def reminder(self, answer: str, acted: bool, commands: list[str], kinds: Collection[str] | None = None) -> Reminder | None:
        """What is not done yet, or None to accept the answer; `kinds` limits the checks run.

        A file a successful command named may be gone on purpose (`mv`, `rm`): it is not missing.
        """
        checks = (
            ("missing", lambda: self._missing(answer, commands)),
            ("empty", self._empty),
            ("records", self._records_lost),
            ("shrunk", self._shrunk),
            ("compile", self._broken_file),
            ("undefined", self._undefined_names),
            ("failing", self._tests_still_failing),
            ("unchanged", lambda: self._unchanged(answer, acted)),
            ("answer only", lambda: self._answer_not_in_file(answer)),
            ("lost", self._lost_definitions),
            ("importers", self._importers_broken),
            ("stub", self._still_a_stub),
            ("same code", self._same_code),
            ("retest", self._tests_not_run_again),
            ("absolute", self._absolute_path),
            ("unrun", self._not_run),
            ("idle", self._idle),
            ("error", lambda: self._only_an_error(answer)),
            ("promise", lambda: self._promise(answer)),
            ("unnamed", lambda: self._failing_not_named(answer)),
        )
        for kind, check in checks:
            if kinds is not None and kind not in kinds:
                continue
            if kind in self.given and kind != "missing":  # _missing itself says when to remind again
                continue
            if not self.aids.on(f"answer.{kind}"):
                continue
            found = check()
            if found is not None:
                self.aids.fired(f"answer.{kind}")
                self.given.add(kind)
                return found
        return None

    def _missing(self, answer: str, commands: list[str]) -> Reminder | None:
        claimed = [name for name in claimed_files(answer) if name in self.facts.named]
        missing = [
            name for name in dict.fromkeys([*self.facts.targets, *claimed])
            if self._inside(name) and not (self.root / name).exists() and not any(name in command for command in commands)
            and not self._written_elsewhere(name)
        ]
        if not missing or (self.last_missing is not None and not set(missing) < self.last_missing):
            return None
        again = self.last_missing is not None
        self.last_missing = set(missing)
        names = ", ".join(missing)
        if again:
            one = len(missing) == 1
            return Reminder(
                f"the task still asks for {names}",
                f"Reminder: the task also asks for {names}, which {'does' if one else 'do'} not exist yet. Create "
                f"{'it' if one else 'each'} now with write_to_file, or give your final answer again if the task does not need "
                f"{'it' if one else 'them'}.",
            )
        if len(missing) == 1:
            return Reminder(
                f"the task asks for {names}, which does not exist",
                f"Reminder: the task asks for {names}, but no such file exists in the project. If the task needs it, "
                "create it now with write_to_file (the result goes into the file, not only into your answer); "
                "otherwise give your final answer again.",
            )
        return Reminder(
            f"the task asks for {names}, which do not exist",
            f"Reminder: the task asks for {names}, but none of these files exists in the project. If the task needs them, "
            "create each now with write_to_file (the results go into the files, not only into your answer); "
            "otherwise give your final answer again.",
        )

    def _written_elsewhere(self, name: str) -> bool:
        """A bare file name the run wrote in some folder: "a package kit with alpha.py" is
        kit/alpha.py."""
        return "/" not in name and any(path.name == name for path in self.written)

    def _records_lost(self) -> Reminder | None:
        """A conversion whose result holds fewer records than its source: told that the CSV it had
        to make was missing, a small model wrote the header row alone and answered."""
        for found in CONVERTING.finditer(self.task):
            source, target = found["source"], found["target"]
            if not (self._inside(source) and self._inside(target)):
                continue
            had = _records(self.root / source)
            has = _records(self.root / target)
            if had is None or has is None or has >= had:
                continue
            return Reminder(
                f"{target} holds {has} of the {had} records of {source}",
                f"Reminder: {source} holds {had} records, but {target} holds {has}. The conversion needs every record of "
                f"{source} in {target}. Write {target} again with all of them (write_to_file with the whole content), "
                "or give your final answer again if it is right as it is.",
                (self.root / target,),
            )
        return None

    def _empty(self) -> Reminder | None:
        """A target the run left empty (created empty, or emptied): the result never got into it."""
        empty = []
        for name in self.facts.targets:
            path = self.root / name
            try:
                if not path.is_file() or path.stat().st_size >= 4096:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if not data.strip() and hashlib.sha256(data).hexdigest() != self.before[name]:
                empty.append(name)
        if not empty:
            return None
        names = ", ".join(empty)
        return Reminder(
            f"the task asks to write into {names}, which is empty",
            f"Reminder: the task asks to write into {names}, but it is empty. Put the result into it now with "
            "write_to_file (the whole content), or give your final answer again if it should be empty.",
        )

    def _shrunk(self) -> Reminder | None:
        """A task that adds to a file, after which most of the file's earlier lines are gone:
        write_to_file replaced the whole file with the addition alone."""
        if not ADDING.search(self.task):
            return None
        for name in self.facts.targets:
            earlier = self.before_lines[name]
            now = _line_count(self.root / name)
            if earlier and earlier >= 3 and now is not None and now < earlier * KEPT_SHARE:
                old = self._original_text(self.root / name)
                if old is not None and self._adds_at_end(name):
                    how = f" Write it again with the earlier lines kept, your addition in place of {ADDITION}:\n{append_call(name, old)}"
                elif old is not None:
                    how = f" Its content before this task was:\n{old}\nWrite it again with all of its earlier content plus the addition."
                else:
                    how = "\nWrite it again with all of its earlier content plus the addition."
                return Reminder(
                    f"the task adds to {name}, which lost most of its lines",
                    f"Reminder: the task asks to add to {name}, but it now has {now} lines where it had {earlier}: "
                    f"write_to_file replaces the whole file.{how}",
                    (self.root / name,),
                )
        return None

    def _adds_at_end(self, name: str) -> bool:
        """The task adds to a file, at its end: said so, or said nowhere else for a file of lines
        ("add a row to ledger.csv"; in code, "add a parameter" goes elsewhere). Its reminders then
        show the write that keeps the old lines, with the model's own at the end."""
        if ADDING.search(self.task) is None:
            return False
        return AT_END.search(self.task) is not None or (ELSEWHERE.search(self.task) is None and Path(name).suffix.lower() in LINE_FILES)

    def _original_text(self, path: Path) -> str | None:
        """A written file's content before the run's first write to it, when it is short enough to
        quote: the model, told to keep the earlier lines, read the file again and found them gone."""
        backup = self.originals.get(path)
        return _short_text(backup) if backup is not None else None

    def _unchanged(self, answer: str, acted: bool) -> Reminder | None:
        unchanged = [
            name for name in self.facts.targets
            if self.before[name] is not None and _digest(self.root / name) == self.before[name] and self.root / name not in self.broken
        ]
        if unchanged:
            names = ", ".join(unchanged)
            stubs = [name for name in unchanged if name in self.stubs]  # unchanged: as they were when the stubs were found
            stub_note = f"; {stubs[0]} still raises NotImplementedError" if stubs else ""
            old = _short_text(self.root / unchanged[0]) if len(unchanged) == 1 and self._adds_at_end(unchanged[0]) else None
            if old is not None:
                how = f"Call write_to_file with its lines kept and your addition at the end, in place of {ADDITION}:\n{append_call(unchanged[0], old)}"
            elif all((self.root / name).resolve() in self.read for name in unchanged):
                how = f"You have read {names} already: call write_to_file now with the whole new content."
            else:
                how = "Make the change now: read the file if you need to, then write_to_file with the whole new content."
            return Reminder(
                f"the task asks to change {names}, which is unchanged",
                f"Reminder: the task asks to write or change {names}, but it is exactly as it was when the task started, "
                f"so the task is not done yet{stub_note}. {how}{self._run_tests_first()}",
            )
        if not acted and CHANGE_CLAIM.search(answer) and FILE_NAME.search(self.task):
            return Reminder(
                "the answer claims a change, but nothing was written or run",
                f"Reminder: your answer says you changed something, but no file was written{'' if self.ran else ' and no command was run'} "
                "in this task. If a change is needed, make it now (write_to_file writes the whole file); "
                "otherwise give your final answer again.",
            )
        return None

    def _run_tests_first(self) -> str:
        """For a reminder that the code is unchanged, when the task names a test file and no test has
        run yet: the command that shows what fails. Told the tests in a file fail, a small model read
        only the code, found it right, and rewrote it unchanged three times."""
        tests = [name for name in self.facts.existed if TEST_FILE.search(name) and name.endswith(".py")]
        if self.tests_ran or len(tests) != 1:
            return ""
        text = _short_text(self.root / tests[0], MAX_PARSED_BYTES) or ""
        module = tests[0].removesuffix(".py").replace("/", ".")
        command = f"python3 -m unittest {module}" if "import unittest" in text and module.isidentifier() else f"python3 -m pytest -q {shlex.quote(tests[0])}"
        return (
            f" No test has run in this task: run the tests in {tests[0]} first to see what fails, with "
            f"{call_source('run_terminal_command', [command])}"
        )

    def _answer_not_in_file(self, answer: str) -> Reminder | None:
        """The answer lists lines ("The names are:\nred.png\nblue.png") that the one text file the
        task asks for holds none of, and it holds fewer lines than that: a small model wrote the
        name of a temporary file into listing.txt and gave the list it was asked to write there
        only in its answer."""
        if len(self.facts.targets) != 1 or Path(self.facts.targets[0]).suffix.lower() not in TEXT_SUFFIXES:
            return None
        name = self.facts.targets[0]
        text = _short_text(self.root / name, MAX_PARSED_BYTES)
        lines = listed_lines(answer, keep_markers=Path(name).suffix.lower() == ".md")
        if text is None or len(lines) < 2:
            return None
        held = {line.strip() for line in text.splitlines() if line.strip()}
        if len(held) >= len(lines) or any(line.strip() in held for line in lines):
            return None  # a file longer than the list is more likely described by it than missing it
        shown = ", ".join(lines[:3]) + (", …" if len(lines) > 3 else "")
        holds = f"holds {text.strip()!r}" if 0 < len(text) <= 200 else "is empty" if not text.strip() else "holds other lines"
        return Reminder(
            f"the answer lists lines that {name} does not hold",
            f"Reminder: your answer lists {len(lines)} lines ({shown}), but {name}, where the task wants the result, "
            f"{holds}: none of those lines is in it. If they are the result, send this call:\n"
            f"{call_source('write_to_file', [name, chr(10).join(lines) + chr(10)])}\n"
            f"Otherwise fix {name} and give your final answer again.",
            (self.root / name,),
        )

    def _failing_not_named(self, answer: str) -> Reminder | None:
        """A question about tests answered without the failing tests the test runs named: a small
        model ran the tests three times, then quoted an assertion and had its two sides the wrong way round."""
        if not self.failing or not QUESTION.search(self.task) or not re.search(r"\btests?\b", self.task, re.IGNORECASE):
            return None
        if any(name.rpartition("::")[2] in answer for name in self.failing):
            return None
        names = ", ".join(self.failing)
        return Reminder(
            f"the test runs named failing {names}, which the answer does not",
            f"Reminder: the test runs in this task reported these failing tests: {names}. Your answer does not name them. "
            "Answer the question again with what those runs showed.",
        )

    def _rewritten_losses(self) -> list[tuple[Path, str, list[str]]]:
        """(file, its name in the project, what it no longer defines) for each Python file the run
        rewrote that lost definitions since the task started: what both the lost-definition and
        the importer checks start from."""
        losses = []
        for path in sorted(self.written):
            backup = self.originals.get(path)
            earlier = _short_text(backup, MAX_PARSED_BYTES) if backup is not None else None
            now = _short_text(path, MAX_PARSED_BYTES)
            if earlier is None or now is None:
                continue
            rel = path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)
            removed = removed_definitions(rel, earlier.encode(), now.encode())
            if removed:
                losses.append((path, rel, removed))
        return losses

    def _lost_definitions(self) -> Reminder | None:
        """A Python file the run rewrote that no longer defines a function, class or constant it had,
        which the task does not name: told at the write, a small model renamed one function, dropped the other
        and answered. The file's earlier content is quoted so that it can be written back whole."""
        for path, name, removed in self._rewritten_losses():
            lost = [gone for gone in removed if not any(_has_word(self.task, part) for part in gone.split("."))]
            backup = self.originals.get(path)
            if not lost:
                continue
            names = ", ".join(lost)
            quoted = _short_text(backup)
            how = f" Its content before this task was:\n{quoted}\n" if quoted is not None else " "
            return Reminder(
                f"{name} no longer defines {names}, which the task does not remove",
                f"Reminder: {name} no longer defines {names}, which it defined when the task started, and the task does not "
                f"ask to remove {'it' if len(lost) == 1 else 'them'}. write_to_file replaces the whole file.{how}"
                f"Write {name} again with {names} kept and your change made, or give your final answer again if {names} should be gone.",
                (path,),
            )
        return None

    def _importers_broken(self) -> Reminder | None:
        """A module the run rewrote no longer defines a name that a module beside it still imports
        from it: asked to rename greet "in hello.py and in every file that uses it", a small model
        renamed it in hello.py and answered, one.py and two.py still importing greet. With the
        task's rename, the first importer's write is shown."""
        for path, rel, removed in self._rewritten_losses():
            lost = set(removed)
            importers = [
                (sibling, sorted(name for name, module in imported_from(source).items() if module == path.stem and name in lost))
                for sibling, source in modules_beside(path)
            ]
            importers = [(sibling, names) for sibling, names in importers if names]
            if not importers:
                continue
            beside = [(str(PurePosixPath(rel).parent / sibling.name), names) for sibling, names in importers]
            said = "; ".join(f"{name} imports {', '.join(names)}" for name, names in beside)
            first, names = beside[0]
            renamed = [(old, new) for old, new in self.facts.renames if old in names]
            text = _short_text(importers[0][0])
            how = "Change those imports and the uses that go with them (write_to_file with each whole file), or put the names back."
            if renamed and text is not None:
                for old, new in renamed:
                    text = replace_word(text, old, new)
                    if old == path.stem:  # hello.py's hello: the module keeps its name
                        text = re.sub(rf"^(\s*from\s+){re.escape(new)}(\s+import\b)", rf"\g<1>{path.stem}\g<2>", text, flags=re.MULTILINE)
                then = f" (then do the same in {', '.join(name for name, _ in beside[1:])})" if len(beside) > 1 else ""
                how = f"Send this call, which makes the task's rename in {first}{then}:\n{call_source('write_to_file', [first, text])}"
            return Reminder(
                f"modules beside {rel} import names it no longer defines",
                f"Reminder: {rel} no longer defines what modules beside it import from it ({said}), so importing them "
                f"fails with ImportError. {how}",
                tuple(sibling for sibling, _ in importers),
            )
        return None

    def _still_a_stub(self) -> Reminder | None:
        """A stub the task asks to fill in still raises NotImplementedError: it cannot be done, whatever
        the answer says, so this is said even after the reminder about an unchanged file."""
        left = [name for name in self.stubs if _is_stub(self.root / name)]
        if not left:
            return None
        names = ", ".join(left)
        return Reminder(
            f"{names} still raises NotImplementedError",
            f"Reminder: {names} still raises NotImplementedError, so it is not implemented yet. Call write_to_file "
            "with the whole file, the function's code in place of raise NotImplementedError.",
        )

    def _same_code(self) -> Reminder | None:
        """A Python target that was rewritten, but only its docstrings, comments or layout changed:
        a small model "fixed" a bug by adding a docstring that described the bug. Not said when the
        task is about docstrings, comments or layout."""
        if ABOUT_LAYOUT.search(self.task):
            return None
        for name in self.facts.targets:
            code = self.before_code[name]
            if code is None or _digest(self.root / name) == self.before[name] or _code_of(self.root / name) != code:
                continue
            how = "You have read it: call write_to_file now" if (self.root / name).resolve() in self.read else "Read it and call write_to_file"
            return Reminder(
                f"{name} was rewritten, but its code is the same",
                f"Reminder: the task asks to change {name}, but its code is the same as when the task started: only "
                "docstrings, comments or layout changed, so it behaves exactly as before. Compare what the code does "
                f"with what the task asks for. {how} with the code itself changed.{self._run_tests_first()}",
                (self.root / name,),
            )
        return None

    def _tests_not_run_again(self) -> Reminder | None:
        """Tests failed, files changed, and no test command ran since: a small model wrote a fix
        and answered "the tests are now passing" without running them (they were not)."""
        if self.failed_run is None or not self.changed_since_failure:
            return None
        command, failed = self.failed_run
        changed = ", ".join(str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path) for path in self.changed_since_failure)
        return Reminder(
            f"tests failed, {changed} changed since, and the tests were not run again",
            f"Reminder: when you last ran the tests, these failed: {', '.join(failed)}. You changed {changed} after that "
            "and have not run them again, so whether they pass now is not known. Run them again:\n"
            f"{call_source('run_terminal_command', [command])}\n"
            "If they pass, give your final answer; if not, fix the code.",
        )

    def _tests_still_failing(self) -> Reminder | None:
        """The last test run failed, nothing was written since, and the task asks for a change: a
        small model saw three tests fail and answered "the tests should pass now"."""
        if not self.tests_failing or self.failed_run is None or self.changed_since_failure:
            return None
        wants_passing = PASSING.search(self.task) is not None or (self.facts.asks_for_change and FAILING.search(self.task) is not None)
        if not wants_passing or QUESTION.search(self.task):
            return None  # "which test fails?": the failing tests are the answer
        command, failed = self.failed_run
        return Reminder(
            "the tests failed when last run, and nothing changed since",
            f"Reminder: when the tests last ran ({command}), these failed: {', '.join(failed)}, and no file was written "
            "since, so they still fail. Fix the code (each failure shows what the test expected and what it got), run "
            "the tests again, then answer; or say in your final answer why they cannot pass.",
        )

    def _absolute_path(self) -> Reminder | None:
        """A file the run wrote holds the project's absolute path (`cd /home/me/proj` in a script):
        it breaks when the project is copied, cloned or run from elsewhere. The write said so; a
        small model reads past a note, so the answer waits for it once."""
        for path in sorted(self.model_wrote):
            try:
                text = path.read_text(errors="replace") if path.is_file() and path.stat().st_size < 1_000_000 else ""
            except OSError:
                continue
            lines = [f"line {number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1) if str(self.root) in line]
            if not lines:
                continue
            rel = path.relative_to(self.root) if path.is_relative_to(self.root) else path
            return Reminder(
                f"{rel} holds the project's absolute path",
                f"Reminder: {rel}, which this task wrote, contains the project's absolute path ({self.root}) in "
                f"{'; '.join(lines[:3])}. Commands already run in the project folder, and the project may be copied or moved: "
                f"call write_to_file with the whole {rel} again, the path made relative (or a `cd` to it left out), "
                "or say in your final answer why it must stay.",
            )
        return None

    def _not_run(self) -> Reminder | None:
        """A question about what running something gives ("Which test fails?", "What does app.py
        print?") answered without running anything: the answer is a guess from reading."""
        if self.ran or self.facts.asks_for_change or not QUESTION.search(self.task) or not ABOUT_RUNNING.search(self.task):
            return None
        return Reminder(
            "the question is about running something, and nothing was run",
            "Reminder: the question is about what happens when something runs, and no command was run in this task, "
            "so the answer is a guess. Run it with run_terminal_command and answer from its output.",
        )

    def _idle(self) -> Reminder | None:
        """A task about a project file that asks for work ("Make the tests in test_x.py pass")
        answered after only reading: nothing was written and nothing was run. A question, an order
        that asks for an answer ("Tell me the port"), or a task naming no file ("hello") may be
        answered by reading alone. A task with a target file has the checks above instead."""
        if self.facts.targets or self.ran or self.model_wrote or self.written or QUESTION.search(self.task) or ANSWER_REQUEST.search(self.task):
            return None
        if not any(self._inside(name) and (self.root / name).exists() for name in self.facts.named):
            return None
        return Reminder(
            "the task asks for work, and nothing was written or run",
            "Reminder: the task asks you to do something, but so far you have only read: nothing was written and no "
            "command was run. Do the work now (write_to_file, run_terminal_command), then answer; or say in your final "
            "answer why nothing needs doing.",
        )

    def _undefined_names(self) -> Reminder | None:
        """A Python file the model wrote that uses names it never defines or imports (and did not
        before the run): told so by the write, a small model answered that app.py prints VERSION."""
        for path in sorted(self.model_wrote):
            original = self.originals.get(path)
            try:
                now = path.read_bytes() if path.suffix == ".py" and path.is_file() else None
                before = original.read_bytes() if now is not None and original is not None and original.is_file() else None
            except OSError:
                continue
            rel = str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)
            names = new_undefined_names(rel, before, now) if now is not None else {}
            if names:
                note = undefined_note(rel, names, now.decode(errors="replace"), sibling_imports(path, names))
                return Reminder(f"{rel} uses names it never defines or imports", "Reminder: " + note.removeprefix("Note: "), (path,))
        return None

    def _broken_file(self) -> Reminder | None:
        """A Python, JSON, TOML, INI or shell file the run wrote that does not parse; or one the task
        names, when the task asks for a change ("x.json is not valid JSON. Fix it"), not when it
        only asks about it ("what is wrong with broken.py?")."""
        named = {self.root / name for name in self.facts.named if self._inside(name)} if self.facts.asks_for_change else set()
        for path in sorted(self.written | named):
            try:
                original = self.originals.get(path)
                before = original.read_bytes() if original is not None and original.is_file() else None
                data = path.read_bytes() if path.is_file() else None
            except OSError:
                continue
            problem = syntax_problem(path.name, data, before) if data is not None else None
            if problem is None:
                continue
            self.broken.add(path)
            rel = path.relative_to(self.root) if path.is_relative_to(self.root) else path
            how = "which this task wrote" if path in self.written else "which the task names"
            known = path.resolve() in self.read | self.model_wrote
            inside = path.resolve().is_relative_to(self.root.resolve())  # never quote a file a link leads out to
            fixed = _json_without_trailing_commas(path, data) if known and inside else None
            if fixed is not None:
                return Reminder(
                    f"{rel} does not parse",
                    f"Reminder: {rel}, {how}, does not parse: {problem}. Send this call, which removes only those commas:\n"
                    f"{call_source('write_to_file', [str(rel), fixed])}",
                )
            fix = f"You have read it: call write_to_file with the whole fixed {rel}" if known else "Fix it"
            return Reminder(
                f"{rel} does not parse",
                f"Reminder: {rel}, {how}, does not parse: {problem}. {fix}, or say in your final answer why it is left so.",
            )
        return None

    @staticmethod
    def _promise(answer: str) -> Reminder | None:
        """An answer that says what the model is about to do: nothing runs after a final answer."""
        found = PROMISE.search(answer)
        if found is None:
            return None
        ends = [end.end() for end in SENTENCE_END.finditer(answer, 0, found.start() + 1)]
        after = SENTENCE_END.search(answer, found.end())
        sentence = answer[ends[-1] if ends else 0:after.start() + 1 if after else len(answer)].strip()
        if len(sentence) > 160:
            sentence = sentence[:160] + "…"
        return Reminder(
            "the answer announces a step instead of reporting it",
            f"Reminder: your final answer says what you are about to do (\"{sentence}\"), but a final answer ends the "
            "task and nothing runs after it. Do that step now with a tool call, then answer with what you did.",
        )

    @staticmethod
    def _only_an_error(answer: str) -> Reminder | None:
        if not answer.startswith("Error:"):
            return None
        return Reminder(
            "the answer only repeats an error",
            "Reminder: your final answer only repeats an error message; the task is not done. "
            "Try another way (run_terminal_command can rename, move, list and delete), or explain what blocks you.",
        )
