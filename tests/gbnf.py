"""A recognizer for the GBNF grammars we send to llama.cpp, for tests that run where llama.cpp's
own grammar sampler is not installed (CI installs the prebuilt server, not llama-cpp-python).

GBNF is a context-free grammar over characters: rules of literals, character classes, groups,
alternatives and the repetitions `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`. llama.cpp's sampler keeps
every alternative alive (no lexer, no greedy tokens), so a text is allowed exactly when it is in
the grammar's language; an Earley recognizer over the characters decides that. What this cannot
check is tokenisation (a token that spans a rule's edge): tests/test_grammar.py still runs the
token-by-token checks through llama.cpp where it is installed, and tests/test_local_model.py has
the shipped server parse each grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^"}


@dataclass(frozen=True)
class CharClass:
    negated: bool
    ranges: tuple[tuple[str, str], ...]

    def __contains__(self, char: str) -> bool:
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated


Symbol = str | CharClass
"""A rule's name, or one character from a class (a literal is a class of one character each)."""


class GrammarError(ValueError):
    pass


class _Reader:
    """Reads one rule's right-hand side into productions, adding helper rules for groups and
    repetitions."""

    def __init__(self, text: str, rules: dict[str, list[tuple[Symbol, ...]]], name: str) -> None:
        self.text, self.at, self.rules, self.name = text, 0, rules, name

    def helper(self, productions: list[tuple[Symbol, ...]]) -> str:
        name = f"{self.name}~{len(self.rules)}"
        self.rules[name] = productions
        return name

    def skip_space(self) -> None:
        """Our grammars have no comments, so only white space lies between items."""
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.at] if self.at < len(self.text) else ""

    def char(self) -> str:
        """One character of a literal or class, its escapes read as llama.cpp reads them."""
        char = self.text[self.at]
        self.at += 1
        if char != "\\":
            return char
        code = self.text[self.at]
        self.at += 1
        if code == "x":
            value = int(self.text[self.at : self.at + 2], 16)
            self.at += 2
            return chr(value)
        if code not in ESCAPES:
            raise GrammarError(f"unknown escape \\{code} in {self.name}")
        return ESCAPES[code]

    def alternatives(self) -> list[tuple[Symbol, ...]]:
        found = [self.sequence()]
        while self.peek() == "|":
            self.at += 1
            found.append(self.sequence())
        return found

    def sequence(self) -> tuple[Symbol, ...]:
        items: list[Symbol] = []
        while self.peek() not in ("", "|", ")"):
            items.extend(self.repeated(self.atom()))
        return tuple(items)

    def atom(self) -> tuple[Symbol, ...]:
        start = self.peek()
        if start == '"':
            self.at += 1
            chars: list[Symbol] = []
            while self.text[self.at] != '"':
                chars.append(CharClass(False, ((c := self.char(), c),)))
            self.at += 1
            return tuple(chars)
        if start == "[":
            self.at += 1
            negated = self.text[self.at] == "^"
            self.at += negated
            ranges = []
            while self.text[self.at] != "]":
                low = self.char()
                high = low
                if self.text[self.at] == "-" and self.text[self.at + 1] != "]":
                    self.at += 1
                    high = self.char()
                ranges.append((low, high))
            self.at += 1
            return (CharClass(negated, tuple(ranges)),)
        if start == "(":
            self.at += 1
            inner = self.alternatives()
            if self.peek() != ")":
                raise GrammarError(f"unclosed group in {self.name}")
            self.at += 1
            return (self.helper(inner),)
        match = re.compile(r"[A-Za-z0-9-]+").match(self.text, self.at)
        if not match:
            raise GrammarError(f"unexpected {self.text[self.at : self.at + 10]!r} in {self.name}")
        self.at = match.end()
        return (match.group(),)

    def repeated(self, item: tuple[Symbol, ...]) -> tuple[Symbol, ...]:
        if self.at >= len(self.text) or self.text[self.at] not in "*+?{":
            return item
        mark = self.text[self.at]
        if mark == "*":
            self.at += 1
            return (self.star(item),)
        if mark == "+":
            self.at += 1
            return (*item, self.star(item))
        if mark == "?":
            self.at += 1
            return (self.helper([(), item]),)
        match = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.text, self.at)
        if not match:
            raise GrammarError(f"bad repetition in {self.name}")
        self.at = match.end()
        least = int(match.group(1))
        most = least if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
        head = item * least
        if most is None:
            return (*head, self.star(item))
        optional: tuple[Symbol, ...] = ()
        for _ in range(most - least):
            optional = (self.helper([(), (*item, *optional)]),)
        return (*head, *optional)

    def star(self, item: tuple[Symbol, ...]) -> str:
        name = self.helper([])
        self.rules[name].extend([(), (*item, name)])
        return name


def parse(grammar: str) -> dict[str, list[tuple[Symbol, ...]]]:
    """The rules, each a list of productions; `root` must be among them, and every name used."""
    rules: dict[str, list[tuple[Symbol, ...]]] = {}
    definitions = re.split(r"(?m)^([A-Za-z0-9-]+)\s*::=", grammar)
    if definitions[0].strip():
        raise GrammarError(f"text before the first rule: {definitions[0][:20]!r}")
    for name, body in zip(definitions[1::2], definitions[2::2], strict=True):
        if name in rules:
            raise GrammarError(f"rule {name} is defined twice")
        rules[name] = []
        reader = _Reader(body, rules, name)
        rules[name] = reader.alternatives()
        if reader.peek():
            raise GrammarError(f"unexpected {reader.peek()!r} in {name}")
    used = {s for productions in rules.values() for production in productions for s in production if isinstance(s, str)}
    if "root" not in rules or used - rules.keys():
        raise GrammarError(f"undefined rules: {sorted(used - rules.keys()) or ['root']}")
    return rules


def allows(grammar: str, text: str) -> bool:
    """Whether `text` is in the grammar's language (an Earley recognizer over characters)."""
    rules = parse(grammar)
    nullable: set[str] = set()
    while True:
        more = {name for name, productions in rules.items() if any(all(s in nullable for s in p) for p in productions)}
        if more <= nullable:
            break
        nullable |= more
    Item = tuple[str, int, int, int]  # rule, production, dot, origin
    sets: list[set[Item]] = [set() for _ in range(len(text) + 1)]
    sets[0] = {("root", index, 0, 0) for index in range(len(rules["root"]))}
    for position in range(len(text) + 1):
        pending = list(sets[position])
        while pending:
            name, index, dot, origin = pending.pop()
            production = rules[name][index]
            new: list[Item] = []
            if dot == len(production):
                new = [(n, i, d + 1, o) for n, i, d, o in list(sets[origin]) if d < len(rules[n][i]) and rules[n][i][d] == name]
            elif isinstance(production[dot], str):
                wanted = production[dot]
                new = [(wanted, i, 0, position) for i in range(len(rules[wanted]))]
                if wanted in nullable:
                    new.append((name, index, dot + 1, origin))
            elif position < len(text) and text[position] in production[dot]:
                sets[position + 1].add((name, index, dot + 1, origin))
            for item in new:
                if item not in sets[position]:
                    sets[position].add(item)
                    pending.append(item)
    return any(name == "root" and dot == len(rules[name][index]) and origin == 0 for name, index, dot, origin in sets[len(text)])
