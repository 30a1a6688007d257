"""Programs that wait for a person at a keyboard. Commands here get no input (stdin is empty), so
an editor, a pager, a monitor, a REPL or a login would sit until the timeout or exit at once
without doing anything. They are flagged before they run: the user sees it in the dialog, and
the model is told which tool does the job instead.
"""

from __future__ import annotations

from mzagent_tui.agent.safety.commands import Analysis, Part

EDITORS = {"vim", "vi", "nvim", "nano", "emacs", "pico", "micro", "joe", "mcedit", "ne", "kak", "hx", "helix"}
EDITOR_BATCH = {"--batch", "-batch", "-es", "-Es", "-e", "--version", "--help", "-h"}
MONITORS = {"top", "htop", "btop", "atop", "iotop", "nmon", "glances"}
PAGERS = {"less", "more", "most"}
REPLS = {"python", "python3", "ipython", "node", "irb", "lua", "ghci", "R", "sqlite3", "psql", "mysql"}
REPL_BATCH = {"-c", "-m", "-e", "--eval", "-p", "--print", "--version", "-V", "--help", "-h", "-f", "--file", "--command", "--execute"}
REMOTE = {"telnet", "ftp", "sftp"}
TOOLS_INSTEAD = (
    "Commands here get no input, so interactive programs cannot be used. Use read_file to view a file "
    "and write_to_file to change it; otherwise run the program with options that need no input "
    "(for example git commit -m \"message\", top -b -n 1, python3 script.py)."
)


def interactive_reason(analysis: Analysis) -> str:
    """Why the command would wait for a person ("" when it would not)."""
    for part in analysis.parts:
        reason = _part_reason(part)
        if reason:
            return reason
    return ""


def _part_reason(part: Part) -> str:
    words = part.rule_words or part.words
    if not words:
        return ""
    program, args = words[0], words[1:]
    operands = [arg for arg in args if not arg.startswith("-")]
    if program in EDITORS and not EDITOR_BATCH & set(args):
        return f"{program} is an interactive editor"
    if program in MONITORS and not (program == "top" and "-b" in args):
        return f"{program} is an interactive monitor"
    if program == "watch":
        return "watch repeats its command until someone stops it"
    if program in PAGERS and not operands and not part.piped_into:
        return f"{program} without a file waits for a person to page through its input"
    if program in REPLS and not operands and not REPL_BATCH & set(args) and not part.piped_into:
        return f"{program} without a script starts an interactive prompt"
    if program == "ssh" and len(operands) == 1:
        return "ssh without a remote command opens an interactive login"
    if program in REMOTE:
        return f"{program} is an interactive client"
    return _subcommand_reason(program, args)


def _subcommand_reason(program: str, args: list[str]) -> str:
    """Subcommands that open an editor or ask questions unless told not to."""
    sub = args[0] if args else ""
    flags = set(args[1:])
    if program == "git":
        if sub == "commit" and not _commit_message_given(args[1:]):
            return "git commit without -m opens an editor for the message"
        if sub == "rebase" and flags & {"-i", "--interactive"}:
            return "git rebase -i opens an editor"
        if sub in ("add", "checkout", "reset", "stash") and flags & {"-p", "--patch", "-i", "--interactive"}:
            return f"git {sub} {'-p' if flags & {'-p', '--patch'} else '-i'} asks about each change"
    if program in ("npm", "yarn", "pnpm") and sub == "init" and not flags & {"-y", "--yes"}:
        return f"{program} init asks questions unless given -y"
    if program == "crontab" and "-e" in args:
        return "crontab -e opens an editor"
    return ""


def _commit_message_given(args: list[str]) -> bool:
    """-m/-F/-C in any form (`-m x`, `-am x`, `--message=x`), or --no-edit."""
    for arg in args:
        if arg.startswith("--"):
            if arg.split("=", 1)[0] in ("--message", "--file", "--reuse-message", "--no-edit", "--fixup"):
                return True
        elif arg.startswith("-") and set(arg[1:]) & {"m", "F", "C"}:
            return True
    return False
