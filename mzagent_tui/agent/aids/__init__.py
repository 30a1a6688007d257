"""Aids: checks and notes written while watching small models fail (a write that drops a
definition, an answer given before the work is done, a test file copied over the code). They
advise the model; they never decide what runs. Each should earn its place on the held-out tasks.
"""
