"""Under CI=true a machine without the sandbox fails the security tests instead of skipping them,
so a suite that never ran its walls cannot come back green."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = '''
from tests.conftest import requires_sandbox

@requires_sandbox(99)
def test_needs_a_kernel_from_the_future():
    pass

@requires_sandbox(0)
def test_needs_nothing():
    pass
'''


@pytest.mark.parametrize(("ci", "outcome"), [("true", "1 passed, 1 error"), ("", "1 passed, 1 skipped")])
def test_a_missing_wall_fails_only_under_ci(ci: str, outcome: str) -> None:
    root = Path(__file__).resolve().parent.parent
    probe = root / "tests" / f"test_probe_walls_{os.getpid()}.py"
    probe.write_text(PROBE)
    try:
        env = {**os.environ, "CI": ci}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", str(probe)],
            cwd=root, env=env, capture_output=True, text=True, timeout=120,
        )
    finally:
        probe.unlink()
    assert outcome in done.stdout, done.stdout[-2000:]
