"""A custom tool for tests: a plain function, loaded as `tests.custom_tools:word_count`."""


def word_count(text: str) -> str:
    """Count the words in a text."""
    return f"{len(text.split())} words"
