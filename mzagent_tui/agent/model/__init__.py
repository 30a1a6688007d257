"""Talking to the model: the streaming client (`llm`), the system prompt and project instructions,
reading a reply into one decision (`parsing`), native tool calls, the reply grammar, compaction
of long conversations, and the bundled local model (`local`, `llama_server`)."""
