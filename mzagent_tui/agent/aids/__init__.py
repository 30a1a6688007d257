"""Aids: checks and notes written while watching small models fail (an answer given before the
work is done, a fix claimed for a file left as it was, the same call made three times). They
advise the model; they never decide what runs. Each should earn its place on the held-out tasks.
"""
