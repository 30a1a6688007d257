"""Before a final answer is accepted: is the work the task asked for there?

Small models often answer "I wrote x.py" without writing it, claim a fix that left the file as it
was, leave a Python file using names it never defines, or answer a task that asks for work after
only reading. Each of these gets one reminder per task (an observation), never more, so a model
that is right after all is not held up for long. The checks are about what the task says
and what is on disk, not about any particular task.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from mzagent_tui.agent.aids.removed import removed_note, removed_parts
from mzagent_tui.agent.aids.renamed import leftovers, rename_note, renames_in
from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.aids.test_files import TEST_FILE
from mzagent_tui.agent.aids.undefined import new_undefined_names, sibling_imports, undefined_note
from mzagent_tui.agent.events import Action, Event, FileChanged, Observation
from mzagent_tui.agent.filelist import project_files
from mzagent_tui.agent.ground.call_syntax import call_source
from mzagent_tui.agent.ground.words import say
from mzagent_tui.agent.task_facts import TaskFacts

FILE_NAME = re.compile(r"(?<![\w./-])(?:[\w./-]{1,200}\.(?=[0-9]{0,7}[A-Za-z])[A-Za-z0-9]{1,8}\b|(?<!every )(?<!each )(?<!all )(?<!any )(?<!ending in )(?<!ending with )(?<!end in )(?<!end with )\.[a-z][a-z0-9_-]{1,30}\b(?![/.\w-]|\s+files\b))")
"""A file name in prose. Matches start only where a name can start, and are bounded: the old
unbounded pattern backtracked from every position, 48 s for a 100 KB task, hours for 1 MB. The
extension has a letter: "VERSION = '2.0'" names no file. A dot-file alone is one too ("into a
.env file", ".gitignore"), not an ending ("every .tmp file", "files ending in .tmp", ".log
files"). Without it, "copy the values from defaults.ini into a .env file" had defaults.ini as
the file to change, and the reminder had the model overwrite its source."""
CHANGE_CLAIM = re.compile(r"\b(fixed|updated|changed|modified|edited|created|added|wrote|renamed|replaced)\b", re.IGNORECASE)
WRITING_VERB = re.compile(
    r"\b(create|write|save|put|store|record|append|add(?!ress)|generate|produce|export|dump|fix|update|change|modify|edit|"
    r"correct|implement|rewrite|set|bump|repair|replace|remove|delete|insert|sort|convert|translate|format|reformat|"
    r"refactor|increase|decrease|increment|reorder|swap|uppercase|lowercase|capitali[sz]e|comment|uncomment|indent)\w*\b",
    re.IGNORECASE,
)
CLAIM_VERB = re.compile(f"{WRITING_VERB.pattern}|{CHANGE_CLAIM.pattern}", re.IGNORECASE)
TEST_COMMAND = re.compile(r"test|\btox\b|\bnox\b|\bmake\s+check\b", re.IGNORECASE)
"""A command that runs tests, by its words: pytest, unittest, test_x.py, npm test, go test, tox, make check."""
QUESTION = re.compile(r"\?\s*$|^\s*(which|what|how|does|do|is|are|why)\b(?![.\w/-])", re.IGNORECASE)
ANSWER_REQUEST = re.compile(
    r"^\s*(?:please\s+)?(tell|show|list|find|count|explain|describe|summari[sz]e|give|report|check|look|read|say|name|compare)\b(?![.\w/-])",
    re.IGNORECASE,
)
"""A task worded as an order that only asks for an answer ("Tell me the port", "List the files"),
not a file named like one ("grades_report.py crashes on …")."""
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
STUB = "raise NotImplementedError"
"""What a function left to fill in says."""
SOURCE_LINK = re.compile(r"(?:to|into|as)(?: (?:a|an|the))?(?: new)?", re.IGNORECASE)
"""The words between a source file and the file made from it ("a.csv to b.json", "defaults.ini
into a .env file")."""
ADDING = re.compile(r"\b(add|append|insert)(?:s|ed|ing)?\b", re.IGNORECASE)
AT_END = re.compile(r"\b(?:append\w*|(?:at|to) the (?:end|bottom))\b", re.IGNORECASE)
ELSEWHERE = re.compile(r"\b(?:above|below|before|after|top|beginning|start|between|under|insert\w*)\b", re.IGNORECASE)
"""Where an addition goes when not at the end ("add a line above x", "insert ...")."""
LINE_FILES = {".csv", ".tsv", ".txt", ".md", ".rst", ".log", ""}
"""Files whose additions go at the end unless the task says otherwise (rows, lines, list items, sections)."""
ADDITION = "NEW TEXT"
"""The place of the model's own lines in the write a reminder shows."""
MAKES = re.compile(rf"\bmake\s+(?P<name>{FILE_NAME.pattern})(?::|\s+(?!executable\b|runnable\b)[a-z])", re.IGNORECASE)
"""A file a task asks to behave otherwise ("make banner.py print it", "make app.py import it from
there"), or to be made ("make listing.txt: a sorted list of…"): the change goes in it. Not a test
file ("make test_x.py pass": the code it tests changes), not its mode ("make run.sh executable")."""
NAMED_COMMAND = re.compile(r"`(?P<command>[^`\n]{2,200})`")
"""A command the task quotes in backticks: "make `./tally.py data.txt` work", "what does `make stats` print?"."""
RUNNERS = frozenset({
    "bash", "sh", "zsh", "python", "python3", "pytest", "make", "npm", "npx", "node", "yarn", "pnpm", "go", "cargo",
    "ruby", "perl", "php", "java", "deno", "bun", "uv", "poetry", "tox", "nox", "just", "cmake", "ctest",
})
"""First words that make a quoted text a command to run (besides a path to a project file), when
something follows them: `python` alone names the language, `python3 summary.py` a command."""
ALONE = frozenset({"make", "pytest", "tox", "nox", "just", "ctest"})
"""Runners that are a whole command by themselves."""
NOT_TO_RUN = re.compile(r"\b(?:don'?t|do\s+not|never|without|instead\s+of|no\s+longer)\W+(?:\w+\W+){0,3}$", re.IGNORECASE)
"""Words before a quoted command that say it is not to be run ("do not run `make deploy`")."""
COMPUTED = re.compile(
    r"\b(?:prints?|outputs?|returns?|computes?|calculates?|gives?|value|result|total|sum|count|average|mean|"
    r"how\s+many|how\s+much|what\s+number)\b",
    re.IGNORECASE,
)
"""A question about what code works out: "what does ledger.py print for March?", "how many rows does load() keep?"."""
NO_CHANGE = re.compile(
    r"\b(?:(?:don'?t|do\s+not|without|never|no\s+need\s+to)\s+(?:\w+\s+){0,2}?(?:chang|modif|edit|touch|fix|writ|rewrit)\w*"
    r"|no\s+(?:\w+\s+)?(?:changes|edits|modifications)"
    r"|(?:just|only)\s+(?:explain|tell|answer|describe))\b",
    re.IGNORECASE,
)
"""A task that wants an answer and no change: "explain why, don't fix it", "just tell me", "no
code changes please"."""
NOT_A_VALUE = re.compile(r"^\s*(?:which|where|why|explain|describe)\b", re.IGNORECASE)
"""Questions about the code itself ("which function returns the path?"), answered by reading."""
A_NUMBER = re.compile(r"\b(?:number|how\s+(?:many|much|long|often)|in\s+total|seconds|minutes|percent\w*)\b", re.IGNORECASE)
"""What makes a question a value question even when it starts with "which": "which bucket number
does order A-17 land in?" is answered by running bucket_of, not by reading it."""
CALLED = re.compile(r"\b([A-Za-z_]\w{2,})\s*\(")
DEFINED = re.compile(r"^def\s+([A-Za-z]\w*)\s*\(", re.MULTILINE)
CODE_FILE = re.compile(r"\.(?:py|sh|js|mjs|ts|rb|pl|php|go|rs|java|c|cc|cpp|awk|sql)$")
MAX_PARSED_BYTES = 1_000_000
MAX_QUOTED_BYTES = 4000
"""A file's earlier content is quoted in a reminder up to this size."""


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
        if SOURCE_LINK.fullmatch(" ".join(_ASIDE.sub(" ", after).split())):
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


def _is_stub(path: Path) -> bool:
    try:
        return path.is_file() and STUB in path.read_text(errors="replace")
    except OSError:
        return False


def named_commands(root: Path, task: str) -> list[str]:
    """Commands the task quotes for running: the user's own words for what must work ("so that
    `./tally.py data.txt` works") or what to report ("what does `python3 summary.py` print?"). A
    quoted text counts when it starts with a runner (`make`, `python3`, ...) or with a path to a
    file of the project (`./tool.py`, `scripts/bundle.sh`), and nothing before it says not to run it."""
    found = []
    for match in NAMED_COMMAND.finditer(task):
        words = match["command"].split()
        if not words or NOT_TO_RUN.search(task[: match.start()]):
            continue
        if words[0] in ALONE or (words[0] in RUNNERS and len(words) > 1) or _project_file(root, words[0]):
            found.append(" ".join(words))
    return list(dict.fromkeys(found))


def _project_file(root: Path, word: str) -> bool:
    """`./tool.py`, `scripts/bundle.sh`: a path (not a bare name, which reads as prose) to a file of the project."""
    if "/" not in word:
        return False
    path = (root / word).resolve()
    return path.is_relative_to(root) and path.is_file()


def _content(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _short_text(path: Path, limit: int = MAX_QUOTED_BYTES) -> str | None:
    """A file's text when it is short enough to quote in a reminder (or to search, with a higher `limit`)."""
    try:
        if path.stat().st_size > limit:
            return None
        return path.read_text(errors="replace")
    except OSError:
        return None


def append_call(name: str, old: str) -> str:
    """The write_to_file call that keeps `old` and adds at its end. Told "keep the earlier lines", a
    small model drops them or copies the reminder's own words into the file; a call to copy it keeps."""
    if old and not old.endswith("\n"):
        old += "\n"
    return call_source("write_to_file", [name, f"{old}{ADDITION}\n"])


def _digest(path: Path) -> str | None:
    """The content and the permission bits: `chmod +x` is the change "make ./tool.py work" needs."""
    try:
        return f"{hashlib.sha256(path.read_bytes()).hexdigest()} {path.stat().st_mode & 0o7777:o}" if path.is_file() else None
    except OSError:
        return None


@dataclass(frozen=True)
class Reminder:
    """What a check found: a line for the user, the observation for the model, and the files it
    says are not right yet (the same content written to one again is not "a step done")."""

    notice: str
    text: str
    files: tuple[Path, ...] = ()


REPORTED = re.compile(r"\b(?:I|we|they|he|she|someone|somebody|my\s+\w+)\s+(?:just\s+|recently\s+|have\s+|had\s+|'ve\s+)?\w+ed\b", re.IGNORECASE)
"""What someone did, told as the story of a bug ("We added a new student to roster.txt and now
grades_report.py fails"): its verb asks for nothing. A small model was sent back to change roster.txt."""
ABBREVIATION = re.compile(r"[A-Za-z]\.[A-Za-z]")
""""e.g", "i.e": a letter, a dot, a letter is shorthand, not a file to make."""


def _could_be_made(root: Path, name: str) -> bool:
    """A name the task asks for that does not exist is a file to make, unless it is shorthand
    ("e.g") or a module path ("wordcount.entry:main" where wordcount/entry.py is): both were files a
    small model was told to create."""
    if (root / name).exists():
        return True
    module = name.replace(".", "/")
    return ABBREVIATION.fullmatch(name) is None and not (root / f"{module}.py").is_file() and not (root / module).is_dir()


EVERYTHING = re.compile(
    r"^(?!without)\S+\s+\S+\s+(?:\w+\s+)?(?:anything|any\s+(?:code|files?)|the\s+code|nothing)\b|^(?:just|only)\b|^no\b", re.IGNORECASE,
)
"""A "no change" that covers the whole task ("don't change anything", "no code changes", "just
explain"), unlike "don't touch the tests", which limits a change, or "without changing anything",
which limits a fix."""
FRAME = re.compile(r'^\s*File "(?P<path>[^"\n]{1,300})", line \d+', re.MULTILINE)
LIBRARY_FRAME = re.compile(r"^<|[/\\](?:site-packages|dist-packages|lib/python\d[\d.]*)[/\\]")


def failing_frames(root: Path, task: str) -> list[str]:
    """The project files of a traceback pasted into the task, outermost first. A traceback from
    the user's machine names their paths ("/home/ines/work/notes_app.py"): the project file is the
    longest end of the path that is one ("notes_app.py"). Library frames are not the project's."""
    found = []
    for match in FRAME.finditer(task):
        path = match["path"]
        if LIBRARY_FRAME.search(path):
            continue
        parts = Path(path).parts
        for start in range(len(parts)):
            name = Path(*parts[start:])
            if not name.is_absolute() and (root / name).is_file() and (root / name).resolve().is_relative_to(root):
                found.append(name.as_posix())
                break
    return list(dict.fromkeys(found))


def _runs(command: str, code: list[str]) -> bool:
    """Whether a command runs one of these files of code: names it (`python3 freight.py`) or its
    module (`python3 -c "from shipping import cost; ..."`). A small model summed an order's prices
    with `python3 -c "import json; ..."` and answered that, never running the shipping code."""
    return any(name in command or re.search(rf"\b{re.escape(Path(name).stem)}\b", command) for name in code)


def read_task(root: Path, task: str) -> TaskFacts:
    """What the task's words name and ask (see TaskFacts), for the project at `root`."""
    def inside(name: str) -> bool:
        return (root / name).resolve().is_relative_to(root)

    named = list(dict.fromkeys(FILE_NAME.findall(task)))
    wanted = REPORTED.sub(" ", NO_CHANGE.sub(" ", task))  # "explain it, don't change app.py", "we added diya to roster.txt": no target
    asks_for_change = ASKS_FOR_CHANGE.search(FILE_NAME.sub(" ", wanted)) is not None
    targets = [name for name in task_targets(wanted) if inside(name)]
    existing = [name for name in named if inside(name) and (root / name).is_file()]
    targets = [name for name in targets if _could_be_made(root, name)]
    if not targets and (asks_for_change or not QUESTION.search(task)):  # a traceback pasted with "it should show n/a instead"
        targets = failing_frames(root, task)[-1:]
    tested = TESTS_OF.search(task[: task.find(existing[0])]) is not None if len(existing) == 1 else False
    if not targets and len(existing) == 1 and asks_for_change and not TEST_FILE.search(existing[0]) and not tested:
        targets = existing  # "f in x.py gives wrong results. Fix the formula": the one file it names
    no_change = any(EVERYTHING.search(task[found.start() : found.end() + 20]) for found in NO_CHANGE.finditer(task)) and bool(
        "?" in task or ANSWER_REQUEST.search(task) or not asks_for_change
    )
    if no_change:
        targets = []  # "which addresses does it reject? Don't change anything": a question, whatever its verbs
    return TaskFacts(tuple(named), tuple(targets), frozenset(existing), no_change)


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
    written: set[Path] = field(default_factory=set)
    given: set[str] = field(default_factory=set)
    originals: dict[Path, Path | None] = field(default_factory=dict)
    """The backup of each written file's content before the run's first write to it (None: the run created it)."""
    ran: bool = False
    """The model ran a command in this run (whether or not it succeeded)."""
    ran_commands: list[str] = field(default_factory=list)
    """Those commands, to tell running the project's code from running `python3 -c` on its data."""
    tests_ran: bool = False
    """The model ran a command that runs tests in this run."""
    read: set[Path] = field(default_factory=set)
    """Files the model read in this run: a reminder about one of them need not send it to read again."""
    model_wrote: set[Path] = field(default_factory=set)
    """Files the model wrote with write_to_file or edit_file (not those a command changed, such as caches)."""
    stubs: list[str] = field(default_factory=list)
    """Targets that raised NotImplementedError when the task started: stubs the task asks to fill in."""
    proven: set[str] = field(default_factory=set)
    """Those of them that ran successfully since the last change to a file."""
    running: str = ""
    """The command of the last run_terminal_command action, until its observation says how it went."""
    last_left: int | None = None
    """How many places of an old name the last rename reminder showed: it is given again while
    the model makes progress (fewer places), not when it stopped making any."""
    last_missing: set[str] | None = None
    """The files the last reminder about missing files named: it is given again only when some of
    them were made since and some are still missing (a model made one of two modules and answered)."""

    def __post_init__(self) -> None:
        self.facts = read_task(self.root, self.task)
        targets = self.facts.targets
        self.before = {name: _digest(self.root / name) for name in targets}
        self.stubs = [name for name in targets if _is_stub(self.root / name)]

    def _commands(self) -> list[str]:
        """The commands the task quotes for running (named_commands), read again each time: a
        script the task asks for ("make `./count_errors.sh server.log` print …") is one once made."""
        return named_commands(self.root, self.task)

    def _inside(self, name: str) -> bool:
        path = (self.root / name).resolve()
        return path.is_relative_to(self.root)

    def observe(self, event: Event) -> None:
        if isinstance(event, FileChanged) and not any(named in self.running for named in self._commands()):
            self.proven.clear()  # what ran before a change does not show that the changed code works (its own output files do not count)
        if isinstance(event, Observation) and event.tool == "run_terminal_command" and self.running:
            if event.ok:
                self.proven.update(named for named in self._commands() if named in self.running)
            self.running = ""
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
            self.ran_commands.append(command)
            self.tests_ran = self.tests_ran or TEST_COMMAND.search(command) is not None
            self.running = " ".join(command.split())

    def reminder(self, answer: str, acted: bool, commands: list[str]) -> Reminder | None:
        """What is not done yet, or None to accept the answer.

        A file a successful command named may be gone on purpose (`mv`, `rm`): it is not missing.
        """
        checks = (
            ("missing", lambda: self._missing(answer, commands)),
            ("undefined", self._undefined_names),
            ("removed", self._removed_code),
            ("renamed", self._old_name_left),
            ("command", self._named_command_unproven),  # before "unchanged": its output shows what is wrong (a missing execute bit)
            ("unasked", self._changed_unasked),
            ("computed", self._computed_by_guess),
            ("unchanged", lambda: self._unchanged(answer, acted)),
            ("idle", self._idle),
        )
        for kind, check in checks:
            if kind in self.given and kind not in ("missing", "renamed"):  # these say themselves when to remind again
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
            return Reminder(f"the task still asks for {names}", say("answer.missing.again_one", names=names) if one else say("answer.missing.again_many", names=names))
        if len(missing) == 1:
            return Reminder(f"the task asks for {names}, which does not exist", say("answer.missing.one", names=names))
        return Reminder(f"the task asks for {names}, which do not exist", say("answer.missing.many", names=names))

    def _written_elsewhere(self, name: str) -> bool:
        """A bare file name the run wrote in some folder: "a package kit with alpha.py" is
        kit/alpha.py."""
        return "/" not in name and any(path.name == name for path in self.written)

    def _adds_at_end(self, name: str) -> bool:
        """The task adds to a file, at its end: said so, or said nowhere else for a file of lines
        ("add a row to ledger.csv"; in code, "add a parameter" goes elsewhere). Its reminders then
        show the write that keeps the old lines, with the model's own at the end."""
        if ADDING.search(self.task) is None:
            return False
        return AT_END.search(self.task) is not None or (ELSEWHERE.search(self.task) is None and Path(name).suffix.lower() in LINE_FILES)

    def _unchanged(self, answer: str, acted: bool) -> Reminder | None:
        unchanged = [
            name for name in self.facts.targets
            if self.before[name] is not None and _digest(self.root / name) == self.before[name]
        ]
        if unchanged:
            names = ", ".join(unchanged)
            stubs = [name for name in unchanged if name in self.stubs]  # unchanged: as they were when the stubs were found
            stub_note = say("answer.unchanged.stub", name=stubs[0]) if stubs else ""
            old = _short_text(self.root / unchanged[0]) if len(unchanged) == 1 and self._adds_at_end(unchanged[0]) else None
            if old is not None:
                how = say("answer.unchanged.append", addition=ADDITION, call=append_call(unchanged[0], old))
            elif all((self.root / name).resolve() in self.read for name in unchanged):
                how = say("answer.unchanged.read", names=names)
            else:
                how = say("answer.unchanged.change_now")
            return Reminder(
                f"the task asks to change {names}, which is unchanged",
                say("answer.unchanged", names=names, stub_note=stub_note, how=how, run_tests=self._run_tests_first()),
            )
        if not acted and CHANGE_CLAIM.search(answer) and FILE_NAME.search(self.task):
            return Reminder(
                "the answer claims a change, but nothing was written or run",
                say("answer.claimed", nothing_run="" if self.ran else say("answer.claimed.nothing_run")),
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
        return say("answer.run_tests_first", file=tests[0], call=call_source("run_terminal_command", [command]))

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
            say("answer.idle"),
        )

    def _removed_code(self) -> Reminder | None:
        """A Python file the model rewrote lost a function, a constant or its main block that the
        task does not name, compared with the file as the run found it."""
        for path in sorted(self.model_wrote):
            original = self.originals.get(path)
            if path.suffix != ".py" or original is None:
                continue
            try:
                before, now = original.read_bytes(), path.read_bytes()
            except OSError:
                continue
            parts = removed_parts(before, now, self.task)
            if parts:
                rel = str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)
                return Reminder(f"the rewrite of {rel} removed code the task did not name", removed_note(rel, parts), (path,))
        return None

    def _old_name_left(self) -> Reminder | None:
        """The task renames something, and the old name is still in the project's files (or the
        old file is still there): answered after the first file of several."""
        for rename in renames_in(self.task):
            places = leftovers(self.root, rename)
            if not places:
                continue
            if self.last_left is not None and len(places) >= self.last_left:
                return None
            self.last_left = len(places)
            return Reminder(f"the task renames {rename.old}, which is still used in {len(places)} places", rename_note(self.root, rename, places))
        return None

    def _named_command_unproven(self) -> Reminder | None:
        """The task quotes a command that must work, or whose output it asks about, and it has not
        run successfully since the last change: a small model checked `./x.py` with `python3 x.py`
        (the missing execute bit stayed missing), or answered what a script prints by guessing."""
        unproven = [command for command in self._commands() if command not in self.proven]
        if not unproven:
            return None
        command = unproven[0]
        return Reminder(
            f"the task names `{command}`, which has not run successfully since the last change",
            say("answer.command", command=command, call=call_source("run_terminal_command", [command])),
        )

    def _changed_unasked(self) -> Reminder | None:
        """The task says to change nothing, and files the run found are changed (or new files
        written by the model): the user asked for an explanation and got an edit."""
        if not NO_CHANGE.search(self.task) or self.facts.targets or ASKS_FOR_CHANGE.search(FILE_NAME.sub(" ", NO_CHANGE.sub(" ", self.task))):
            return None  # "fix it without changing its output": a change, with a limit
        changed = sorted(path for path, original in self.originals.items() if original is not None and _content(path) != _content(original))
        made = sorted(path for path in self.model_wrote if path in self.originals and self.originals[path] is None and path.exists())
        paths = [*changed, *made]
        if not paths:
            return None
        rels = [str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path) for path in paths]
        first_original = self.originals[changed[0]] if changed else None
        old = _short_text(first_original) if first_original is not None else None
        back = say("answer.unasked.back", file=rels[0], call=call_source("write_to_file", [rels[0], old])) if old is not None else ""
        return Reminder(
            "the task asks for no change, and files were changed",
            say("answer.unasked", files=", ".join(rels), back=back),
            tuple(paths),
        )

    def _computed_by_guess(self) -> Reminder | None:
        """A question about what a file of code computes, answered without running anything: a
        small model worked the number out in its head, and contradicted its own thought. The task
        may name no file ("how long does fetch() sleep?"): the project's code is what computes it."""
        code = sorted(name for name in self.facts.existed if CODE_FILE.search(name)) or self._project_code()
        value = COMPUTED.search(self.task) or A_NUMBER.search(self.task)
        asks = (QUESTION.search(self.task) or ANSWER_REQUEST.search(self.task)) and value and (not NOT_A_VALUE.search(self.task) or A_NUMBER.search(self.task))
        if not code or not asks or any(_runs(command, code) for command in self.ran_commands):
            return None
        example = self._example_call(code) or code[0]
        return Reminder(
            "a question about what the code computes was answered without running it",
            say("answer.computed", ran=say("answer.computed.the_code") if self.ran else say("answer.computed.anything"), example=example),
        )

    def _project_code(self) -> list[str]:
        """The Python files of the project, for a question that names none, at most a few hundred looked at."""
        return sorted(name for name in project_files(self.root)[:500] if name.endswith(".py") and not TEST_FILE.search(name))

    def _example_call(self, code: list[str]) -> str | None:
        """`python3 -c "from buckets import bucket_of; print(bucket_of(...))"`: the function the task
        names (or the file's first), in the first file that defines it. A bare "import buckets; ..."
        left a small model to guess the rest, and it guessed the answer instead."""
        wanted = CALLED.findall(self.task) + [word.strip("`'\"") for word in self.task.split()]
        for name in code:
            module = name.removesuffix(".py").replace("/", ".")
            if not name.endswith(".py") or not all(part.isidentifier() for part in module.split(".")):
                continue
            defined = DEFINED.findall(_short_text(self.root / name, MAX_PARSED_BYTES) or "")
            chosen = next((word for word in wanted if word in defined), None)
            if chosen is not None:
                return f'python3 -c "from {module} import {chosen}; print({chosen}(...))"'
        first = code[0]
        if first.endswith(".py") and Path(first).stem.isidentifier() and "/" not in first:
            return f'python3 -c "import {Path(first).stem}; ..."'
        return None

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
            if now is None:
                continue
            rel = str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)
            names = new_undefined_names(rel, before, now)
            if names:
                note = undefined_note(rel, names, now.decode(errors="replace"), sibling_imports(path, names))
                return Reminder(f"{rel} uses names it never defines or imports", "Reminder: " + note.removeprefix("Note: "), (path,))
        return None


