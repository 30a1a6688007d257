"""Tools the model can call. Built-in and custom tools are plain Python callables; their name,
signature and docstring become the description in the system prompt."""
