"""Which files are tests."""

from __future__ import annotations

import re

TEST_FILE = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.\w+$|[^/]*\.(?:test|spec)\.\w+$)")
"""A test file: "the tests in test_x.py fail, fix the code" names it, but the change goes elsewhere."""
