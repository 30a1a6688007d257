"""The generalisation suite: hand-written small tasks plus a HumanEval slice, split by a hash of
the task id into a tuning half and a held-out half (see bench/generalise.py)."""
