"""The realistic suite: tasks of the kinds users bring (bug reports, options, renames, questions,
conversions, tests to make pass, scripts, build files), each with a checker that runs the result,
a reference solution and near misses (see task.py). `python -m bench.realistic validate` checks
the checkers; `python bench/generalise.py run --suite realistic ...` runs the agent on them."""
