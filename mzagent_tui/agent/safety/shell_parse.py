"""Read a shell command with a real bash grammar (tree-sitter-bash) and fail closed.

The result is a list of simple commands: their assignments, words and redirections, each word
reduced to its literal value after quote removal. Only an explicit list of node types is
understood; anything else (substitutions, expansions, control flow, subshells, here-documents,
syntax errors) becomes a problem of the command it belongs to, and a command with a problem is
never run without asking. Text the grammar skips (a line continuation splitting a word, where
tree-sitter and bash disagree) is a problem too: every byte between the nodes we accept must be
blank or a separator.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

import tree_sitter
import tree_sitter_bash

MAX_DEPTH = 4
"""Nested `bash -c` / `eval` scripts analysed; deeper ones ask."""

_STATEMENT_GAP = re.compile(r"[ \t\n;&|]*")
_WORD_GAP = re.compile(r"[ \t]*")
_SEPARATORS = {";", "&", "&&", "||", "|", "|&", "\n"}

# Node types that are not understood, named the way the dialog says it.
_NOT_UNDERSTOOD = {
    "command_substitution": "command substitution $( ) or backticks",
    "process_substitution": "process substitution <( ) or >( )",
    "simple_expansion": "a variable ($NAME)",
    "expansion": "a parameter expansion ${ }",
    "arithmetic_expansion": "arithmetic expansion $(( ))",
    "ansi_c_string": "an ANSI-C string $'…'",
    "translated_string": "a translated string $\"…\"",
    "brace_expression": "brace expansion { }",
    "subshell": "a subshell ( )",
    "compound_statement": "a group { }",
    "if_statement": "control flow (if)",
    "for_statement": "control flow (for)",
    "c_style_for_statement": "control flow (for)",
    "while_statement": "control flow (while/until)",
    "case_statement": "control flow (case)",
    "function_definition": "a function definition",
    "heredoc_redirect": "a here-document (<<)",
    "herestring_redirect": "a here-string (<<<)",
    "test_command": "a test [ ] or [[ ]]",
    "declaration_command": "a declaration (export, declare, local, readonly)",
    "unset_command": "unset",
    "ERROR": "text that is not valid shell syntax",
}


@dataclass
class Word:
    """One shell word. `text` is its value when `literal`, else the source text."""

    text: str
    literal: bool = True
    glob: bool = False
    """It has an unquoted `*`, `?` or `[`: bash would expand it against the file system."""
    why: str = ""
    """What is not literal about it."""


@dataclass
class Redirect:
    operator: str
    """`>`, `>>`, `<`, `&>`, `>&`, `<&`, `>|`, `&>>`."""
    target: Word
    descriptor: str = ""


@dataclass
class SimpleCommand:
    text: str
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    piped_into: bool = False
    """It reads the output of the command before it (`a | b`)."""
    problems: list[str] = field(default_factory=list)


@dataclass
class Script:
    commands: list[SimpleCommand]
    problems: list[str]
    """Problems of the whole text (syntax errors, skipped text) not tied to one command."""


@functools.cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(source: str) -> Script:
    data = source.encode("utf-8", errors="surrogatepass")
    tree = _parser().parse(data)
    reader = _Reader(data)
    root = tree.root_node
    reader.statements(root)
    if root.has_error and not any("not valid shell syntax" in p for p in reader.problems):
        reader.problems.append("text that is not valid shell syntax")
    return Script(reader.commands, reader.problems)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.commands: list[SimpleCommand] = []
        self.problems: list[str] = []

    def text(self, node: tree_sitter.Node) -> str:
        return self.data[node.start_byte: node.end_byte].decode("utf-8", errors="replace")

    def gap(self, start: int, end: int, pattern: re.Pattern[str]) -> str | None:
        """The problem with the text between two accepted nodes, or None when it is blank."""
        between = self.data[start:end].decode("utf-8", errors="replace")
        if pattern.fullmatch(between):
            return None
        if "\\\n" in between:
            return "a line continuation (backslash-newline)"
        return f"text the parser skipped ({between.strip()[:20]!r})"

    # Statements ---------------------------------------------------------------------------

    def statements(self, node: tree_sitter.Node, piped: bool = False) -> None:
        """program, list and pipeline: statements joined by separators."""
        position = node.start_byte
        first = True
        for child in node.children:
            problem = self.gap(position, child.start_byte, _STATEMENT_GAP)
            if problem:
                self.problems.append(problem)
            position = child.end_byte
            if not child.is_named:
                if child.type not in _SEPARATORS:
                    self.problems.append(f"the operator {child.type!r}")
                continue
            self.statement(child, piped=piped or (node.type == "pipeline" and not first))
            first = False
        problem = self.gap(position, node.end_byte, _STATEMENT_GAP)
        if problem:
            self.problems.append(problem)

    def statement(self, node: tree_sitter.Node, piped: bool) -> None:
        kind = node.type
        if kind == "comment":
            return
        if kind in ("list", "pipeline"):
            self.statements(node, piped)
            return
        if kind == "negated_command":
            inner = [c for c in node.children if c.is_named]
            if len(inner) == 1:
                self.statement(inner[0], piped)
            else:
                self.unknown(node, piped)
            return
        if kind == "command":
            self.commands.append(self.command(node, piped))
            return
        if kind == "test_command" and (test := self.single_bracket_test(node, piped)) is not None:
            self.commands.append(test)
            return
        if kind == "redirected_statement":
            self.redirected(node, piped)
            return
        if kind in ("variable_assignment", "variable_assignments"):
            command = SimpleCommand(self.text(node), piped_into=piped)
            assignments = [node] if kind == "variable_assignment" else [c for c in node.children if c.is_named]
            for item in assignments:
                self.assignment(item, command)
            self.commands.append(command)
            return
        self.unknown(node, piped)

    def unknown(self, node: tree_sitter.Node, piped: bool) -> None:
        reason = _NOT_UNDERSTOOD.get(node.type, f"a shell construct not understood ({node.type})")
        self.commands.append(SimpleCommand(self.text(node), piped_into=piped, problems=[reason]))

    def redirected(self, node: tree_sitter.Node, piped: bool) -> None:
        body = node.child_by_field_name("body")
        if body is not None and body.type in ("list", "pipeline"):
            # tree-sitter-bash hangs `a && b 2>&1` and `a | b > f` on the whole list; in bash
            # a list takes no redirection, so they are the last command's.
            before = len(self.commands)
            self.statements(body, piped)
            if len(self.commands) == before:
                self.unknown(node, piped)
                return
            command = self.commands[-1]
            command.text = f"{command.text} {self.data[body.end_byte:node.end_byte].decode('utf-8', errors='replace').strip()}"
        elif body is not None and body.type == "test_command" and (test := self.single_bracket_test(body, piped)) is not None:
            command = test
            command.text = self.text(node)
            self.commands.append(command)
        elif body is None or body.type != "command":
            self.unknown(body or node, piped)
            if body is not None:
                self.commands[-1].text = self.text(node)
            return
        else:
            command = self.command(body, piped)
            command.text = self.text(node)
            self.commands.append(command)
        position = body.end_byte
        for child in node.children[1:]:
            problem = self.gap(position, child.start_byte, _WORD_GAP)
            if problem:
                command.problems.append(problem)
            position = child.end_byte
            self.redirect(child, command)

    def single_bracket_test(self, node: tree_sitter.Node, piped: bool) -> SimpleCommand | None:
        """`[ -f x ]` is the `test` builtin, words and all, so it is read as `test -f x`. Not
        `[[ ]]`: its `-eq` evaluates its operands as arithmetic, and `a[$(cmd)]` runs cmd."""
        text = self.data[node.start_byte: node.end_byte]
        if not (text.startswith((b"[ ", b"[\t")) and text.endswith((b" ]", b"\t]"))):
            return None
        reader = _Reader(b"test " + text[1:-1])
        root = _parser().parse(reader.data).root_node
        reader.statements(root)
        if root.has_error or reader.problems or len(reader.commands) != 1:
            return None
        command = reader.commands[0]
        command.text, command.piped_into = self.text(node), piped
        return command

    # Simple commands ---------------------------------------------------------------------

    def command(self, node: tree_sitter.Node, piped: bool) -> SimpleCommand:
        command = SimpleCommand(self.text(node), piped_into=piped)
        position = node.start_byte
        previous_was_word = False
        for child in node.children:
            problem = self.gap(position, child.start_byte, _WORD_GAP)
            if problem:
                command.problems.append(problem)
            is_word = child.type not in ("variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect")
            if is_word and previous_was_word and child.start_byte == position:
                # Two words with nothing between them are one word to bash (`"a"\`b`): fail closed.
                command.problems.append("a word the parser split in two")
            previous_was_word = is_word
            position = child.end_byte
            kind = child.type
            if kind == "variable_assignment":
                self.assignment(child, command)
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child, command)
            elif kind == "command_name":
                named = [c for c in child.children if c.is_named]
                if len(named) != 1:
                    command.problems.append("a command name that is not one word")
                    command.words.append(Word(self.text(child), literal=False, why="a command name that is not one word"))
                else:
                    command.words.append(self.word(named[0]))
            else:
                command.words.append(self.word(child))
        for word in command.words:
            if not word.literal:
                command.problems.append(word.why)
        return command

    def assignment(self, node: tree_sitter.Node, command: SimpleCommand) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None or name_node.type != "variable_name":
            command.problems.append("an assignment that is not understood")
            return
        name = self.text(name_node)
        rest = self.data[name_node.end_byte: node.end_byte].decode("utf-8", errors="replace")
        if not rest.startswith("="):
            command.problems.append(f"an assignment to {name} that is not understood ({rest[:3]!r})")
            return
        if value_node is None:
            value = Word("")
        else:
            value = self.word(value_node)
            if value.literal and re.search(r"(^|:)~", self.text(value_node)):
                value = Word(self.text(value_node), literal=False, why="a ~ in an assignment")
        if not value.literal:
            command.problems.append(value.why)
        command.assignments.append((name, value))

    def redirect(self, node: tree_sitter.Node, command: SimpleCommand) -> None:
        if node.type != "file_redirect":
            command.problems.append(_NOT_UNDERSTOOD.get(node.type, node.type))
            return
        descriptor = ""
        operator = ""
        targets: list[tree_sitter.Node] = []
        for child in node.children:
            if child.type == "file_descriptor":
                descriptor = self.text(child)
            elif not child.is_named:
                operator += child.type
            else:
                targets.append(child)
        if len(targets) != 1:
            command.problems.append("a redirection whose target is not one word")
            return
        target = self.word(targets[0])
        if not target.literal:
            command.problems.append(target.why)
        command.redirects.append(Redirect(operator, target, descriptor))

    # Words ---------------------------------------------------------------------------------

    def word(self, node: tree_sitter.Node) -> Word:
        """The literal value of an argument node, or a non-literal Word saying why."""
        source = self.text(node)
        kind = node.type
        if kind == "concatenation":
            pieces = [c for c in node.children]
            position = node.start_byte
            values: list[str] = []
            glob = False
            first_text = self.text(pieces[0]) if pieces else ""
            if first_text.startswith("~") and "/" not in first_text and len(pieces) > 1:
                return Word(source, literal=False, why="a home-folder expansion followed by quotes")
            for index, piece in enumerate(pieces):
                if piece.start_byte != position or not piece.is_named:
                    return Word(source, literal=False, why="a word that is not understood")
                position = piece.end_byte
                value = self.piece(piece, first=index == 0)
                if not value.literal:
                    return Word(source, literal=False, why=value.why)
                values.append(value.text)
                glob = glob or value.glob
            if position != node.end_byte:
                return Word(source, literal=False, why="a word that is not understood")
            return Word("".join(values), glob=glob)
        return self.piece(node, first=True)

    def piece(self, node: tree_sitter.Node, first: bool) -> Word:
        source = self.text(node)
        kind = node.type
        if kind == "word":
            return _unquoted(source, first)
        if kind == "number":
            return Word(source) if re.fullmatch(r"-?[0-9]+", source) else Word(source, literal=False, why="a number that is not plain digits")
        if kind == "raw_string":
            return Word(source[1:-1])
        if kind == "string":
            return self.double_quoted(node, source)
        if kind in _NOT_UNDERSTOOD:
            return Word(source, literal=False, why=_NOT_UNDERSTOOD[kind])
        if kind == "$":
            return Word(source, literal=False, why="a translated string $\"…\"")
        return Word(source, literal=False, why=f"a word that is not understood ({kind})")

    def double_quoted(self, node: tree_sitter.Node, source: str) -> Word:
        for child in node.children:
            if child.is_named and child.type != "string_content":
                return Word(source, literal=False, why=_NOT_UNDERSTOOD.get(child.type, f"{child.type} inside quotes"))
        inner = source[1:-1]
        if "\\\n" in inner:
            return Word(source, literal=False, why="a line continuation (backslash-newline)")
        if "`" in inner.replace("\\`", ""):
            return Word(source, literal=False, why="command substitution $( ) or backticks")
        return Word(re.sub(r'\\([\\"$`])', r"\1", inner))


def _unquoted(source: str, first: bool) -> Word:
    """Quote removal for an unquoted word: backslash escapes, globs, braces, a leading tilde."""
    out: list[str] = []
    glob = False
    index = 0
    while index < len(source):
        char = source[index]
        if char == "\\":
            if index + 1 >= len(source):
                return Word(source, literal=False, why="a trailing backslash")
            if source[index + 1] == "\n":
                return Word(source, literal=False, why="a line continuation (backslash-newline)")
            out.append(source[index + 1])
            index += 2
            continue
        if char in "{}":
            return Word(source, literal=False, why="brace expansion { }")
        if char in " \t\n":
            # bash ends a word here; tree-sitter sometimes does not (`echo \n\\;`): fail closed
            return Word(source, literal=False, why="a word with an unquoted blank or line break")
        if char in "*?[":
            glob = True
        if char == "~" and index > 0 and source[index - 1] in "=:":
            return Word(source, literal=False, why="a ~ after = or :")
        if char in "$`":
            return Word(source, literal=False, why="an expansion that is not understood")
        out.append(char)
        index += 1
    value = "".join(out)
    if first and source.startswith("~"):
        head, _, tail = value.partition("/")
        if head != "~":
            return Word(source, literal=False, why=f"a home-folder expansion ({head})")
        home = os.environ.get("HOME", "")
        if not home:
            return Word(source, literal=False, why="~ without a HOME")
        value = home + ("/" + tail if "/" in value else "")
    return Word(value, glob=glob)
