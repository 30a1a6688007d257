"""Every realistic task, in one list; the split into halves is generalise.half_of (a hash of the id)."""

from __future__ import annotations

from bench.realistic import bugs, changes, data, questions, scoped, tests_pass, tooling
from bench.realistic.task import RealisticTask

REALISTIC_TASKS: list[RealisticTask] = [*bugs.TASKS, *changes.TASKS, *questions.TASKS, *data.TASKS, *tests_pass.TASKS, *tooling.TASKS, *scoped.TASKS]
