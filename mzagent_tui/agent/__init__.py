"""The agent core. Nothing in this package may import Textual: the headless CLI and the
app are two front-ends over it, and a test checks that a headless run never loads Textual."""
