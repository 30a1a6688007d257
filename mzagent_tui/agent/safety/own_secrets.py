"""Take the agent's own secrets out of reach of the commands it runs.

Commands get an environment without secrets, but the agent's process still shows the
environment it started with in `/proc/<pid>/environ`, and `--api-key` in `/proc/<pid>/cmdline`:
`od -c /proc/$PPID/environ` read the key. Once settings are read, the values are overwritten in
place in that start-up block (as setproctitle rewrites argv), and the process is made
non-dumpable, which also closes `/proc/<pid>/mem` to other processes of the user. Python's own
`os.environ` and `sys.argv` are copies and keep working.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterable

from mzagent_tui.agent.safety.secrets import KEY_SHAPES, is_secret_variable

PR_SET_DUMPABLE = 4
_STAT_FIELDS = {"arg_start": 48, "arg_end": 49, "env_start": 50, "env_end": 51}


def hide_own_secrets(extra: Iterable[str] = ()) -> int:
    """Overwrite secret values in this process's start-up environment and argv; return how many
    were overwritten. Linux only; elsewhere it does nothing."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0
    # fields[0] is field 3 of proc(5): the state.
    address = {name: int(fields[number - 3]) for name, number in _STAT_FIELDS.items()}
    extra_values = [value.encode() for value in extra if value]
    count = _scrub(address["env_start"], address["env_end"], _environment_spans, extra_values)
    count += _scrub(address["arg_start"], address["arg_end"], _argument_spans, extra_values)
    return count


def _scrub(start: int, end: int, find, extra: list[bytes]) -> int:  # noqa: ANN001 - one of the span finders below
    if not start or end <= start:
        return 0
    block = ctypes.string_at(start, end - start)
    spans = find(block) + [span for value in extra for span in _occurrences(block, value)]
    for offset, length in spans:
        ctypes.memset(start + offset, ord("*"), length)
    return len(spans)


def _environment_spans(block: bytes) -> list[tuple[int, int]]:
    """(offset, length) of each secret value in a NUL-separated `NAME=value` block."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for entry in block.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and value and is_secret_variable(name.decode(errors="replace"), value.decode(errors="replace")):
            spans.append((offset + len(name) + 1, len(value)))
        offset += len(entry) + 1
    return spans


def _is_key_flag(name: bytes) -> bool:
    """`--api-key`, or an abbreviation argparse reads as it (`--api`, `--api-k`)."""
    return len(name) >= len(b"--api") and b"--api-key".startswith(name)


def _argument_spans(block: bytes) -> list[tuple[int, int]]:
    """`--api-key VALUE`, `--api-key=VALUE` (or `--api-k=VALUE`: argparse takes any unambiguous
    abbreviation), and any argument shaped like a key."""
    spans: list[tuple[int, int]] = []
    offset = 0
    after_flag = False
    for argument in block.split(b"\0"):
        name, equals, value = argument.partition(b"=")
        if after_flag and argument:
            spans.append((offset, len(argument)))
        elif equals and _is_key_flag(name):
            spans.append((offset + len(name) + 1, len(value)))
        else:
            spans.extend((offset + m.start(), m.end() - m.start()) for m in KEY_SHAPES.finditer(argument.decode("latin-1")))
        after_flag = _is_key_flag(argument)
        offset += len(argument) + 1
    return spans


def _occurrences(block: bytes, value: bytes) -> list[tuple[int, int]]:
    spans = []
    start = block.find(value)
    while start >= 0:
        spans.append((start, len(value)))
        start = block.find(value, start + len(value))
    return spans
