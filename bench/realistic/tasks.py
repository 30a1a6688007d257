"""Every realistic task, in one list; the split into halves is generalise.half_of (a hash of the id)."""

from __future__ import annotations

from bench.realistic import bugs, changes, questions
from bench.realistic.task import RealisticTask

REALISTIC_TASKS: list[RealisticTask] = [*bugs.TASKS, *changes.TASKS, *questions.TASKS]
