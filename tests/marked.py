"""Processes a test started, found by a marker in their command line (a sleep duration no other
process on the machine uses), never by a name every `sleep` shares."""

from __future__ import annotations

import itertools
import os

import psutil

_counter = itertools.count()


def marker(prefix: int) -> str:
    """A fresh sleep duration: `prefix`, then this process and a counter."""
    return f"{prefix}.{os.getpid() % 100000:05d}{next(_counter) % 1000:03d}"


def alive(mark: str) -> list[psutil.Process]:
    """The marked processes still running (zombies do not count)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if mark in (proc.info["cmdline"] or []) and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found
