"""The model's words: every refusal and note the model reads, by name, as a template with fields.

One place to read and change what the model is told, as mini-swe-agent keeps its templates in one
config: code names a message and gives its fields (`say("edit.same", rel=rel)`), and this module
words it. The texts are exact: the bundled small model's benchmark was measured with them, so a
change of wording is a change of behaviour. Fields are `str.format` fields (`{rel}`, `{url!r}`,
`{size:,}`); `tests/test_words.py` checks that every name the code uses is here, that every call
gives exactly a template's fields, and that no template is left unused.

Only English: `--lang zh` translates the system prompt (`model/prompt.py`, English and Chinese side
by side), and no refusal or note has a Chinese text yet. It is on the ground floor because code on
every floor speaks to the model: the file helpers under the tools, undo, the tools, the loop.
"""

from __future__ import annotations

from functools import cache
from string import Formatter

WORDS: dict[str, str] = {
    # A call the registry cannot make, or a tool's refusal or failure (tools/registry.py).
    "call.no_such_tool": "Error: there is no tool named '{name}'. Available tools: {tools}.{hint}",
    "call.use_a_command": " For anything else (renaming, moving, listing, deleting) use run_terminal_command with a shell command.",
    "call.arguments": "Error: {name} takes {takes}; it was called with {count} argument(s).{joined}",
    "call.join_pieces": " Its {param} is one string: join the pieces into one.",
    "call.join_pieces_as": " Its {param} is one string: join the pieces into one, as in {call}",
    "call.refused": "Error: {error}",
    "call.failed": "Error: {name} failed: {kind}: {error}",
    # The path a tool is given (tools/paths.py, ground/beneath.py).
    "path.not_string": "the path must be a string, got {kind}",
    "path.empty": "the path is empty",
    "path.nul": "the path contains a NUL byte",
    "path.too_long": "the path is longer than {limit} characters",
    "path.unresolved": "cannot resolve {raw!r}: {error}",
    "path.outside": "{raw!r} is outside the project folder {root}; only files inside it can be used",
    "path.leaves": "{relative!r} leaves the project folder",
    "path.file_in_the_way": "{blocking} is a file, not a folder, so nothing can be put or found inside it; nothing was read or written",
    "path.swapped": "{relative} changed while it was being opened (a folder or file was replaced by a link); nothing was read or written",
    # read_file, write_to_file and edit_file (tools/files.py).
    "file.not_regular": "{rel} is not a regular file (a device, FIFO or socket); it cannot be read or written",
    "read.start_line": "start_line must be a whole number, 1 or more",
    "read.binary": "{rel} is a binary file ({size} bytes); only text files can be read",
    "read.skill_file": "cannot read {shown}: {error}",
    "read.secret_refused": "the user did not allow reading {rel} (it may hold secrets)",
    "read.credential_refused": (
        "the user did not allow reading {rel}: it looks like it holds a credential ({what}), so its content "
        "was withheld. Do not read it another way; go on without it, or say in your final answer what you need"
    ),
    "read.not_utf8": (
        "{rel} is not UTF-8 text (byte 0x{byte:02x} at offset {offset} of a block); "
        "it may use another encoding such as latin-1 or GBK"
    ),
    "write.not_a_string": "{name} must be a string, got {kind}",
    "write.folder": "{rel} is a folder (it already exists); give the path of a file inside it",
    "write.not_read": (
        "nothing was written: {rel} already exists and you have not read it. write_to_file replaces the whole "
        "file, so call read_file({quoted}) first, then write_to_file with its whole new content"
    ),
    "write.read_only_task": (
        "nothing was written to {rel}: {why}, so no file is changed in this task. "
        "Answer in words; say in your final answer what you would change, if anything"
    ),
    "write.no_folder": "cannot create the folder for {rel}: {error}",
    "write.changed_meanwhile": "{rel} changed while the edit waited, so nothing was written; read it again and redo the edit",
    "write.too_big": "content is {size} bytes, more than the {limit} byte limit",
    "write.planted_refused": (
        "the user did not allow writing {rel} ({planted}).{note} "
        "Write the change somewhere else or explain in the final answer what is needed"
    ),
    "write.refused": (
        "the user did not allow this write to {rel}, so nothing was written.{note} "
        "Do not write it again unchanged; change your approach or explain in the final answer what is needed"
    ),
    "write.refusal_note": " Their reason: {reason}.",
    "write.invalid_character": "content has a character that is not valid text at position {position}",
    "write.swapped": "{rel} changed while it was being opened (it was replaced by a link); nothing was written",
    "write.cannot_open": "cannot open {rel}: {error}",
    "edit.missing": "{missing} Nothing was edited; to create a file, use write_to_file",
    "edit.folder": "{rel} is a folder; give the path of a file inside it",
    "edit.same": "old_text and new_text are the same, so {rel} would not change; nothing was edited",
    "edit.too_big": "{rel} is more than {limit} bytes; it cannot be edited",
    "edit.binary": "{rel} is a binary file; only text files can be edited",
    "edit.not_utf8": "{rel} is not UTF-8 text; it cannot be edited",
    "edit.many": (
        "old_text occurs {count} times in {rel} (at lines {lines}), so nothing was edited. "
        "Make old_text longer, with the lines around it, so that it matches only the place to change"
    ),
    "edit.not_found": (
        "old_text was not found in {rel}, so nothing was edited. It must match the file exactly, "
        "indentation and line breaks included; read_file shows the current text"
    ),
    "edit.not_found.swapped": (
        "{not_found}. But new_text is in {rel}: the two may be swapped. old_text (the second argument) is the text "
        "the file has now, new_text (the third) is what replaces it; to add at the end, give \"\" as old_text"
    ),
    "edit.not_found.add_at_end": "{not_found}. To add at the end of the file instead, give \"\" as old_text",
    "edit.not_found.closest": "{not_found}. The closest line is line {number}: {line}",
    # update_plan (tools/task_list.py).
    "plan.not_a_list": "update_plan takes a list of steps, not {kind}; write it as update_plan({example})",
    "plan.too_many": "the list has {count} steps; keep it to {limit} at most by joining small ones",
    "plan.step_not_an_object": 'step {number} is {kind}; each step is an object such as {{"step": "Run the tests", "status": "pending"}}',
    "plan.step_unknown_keys": 'step {number} has {keys}; a step has only "step" and "status"',
    "plan.step_no_text": 'step {number} needs "step": the text of the step, a non-empty string',
    "plan.step_too_long": "step {number} is {length} characters long; write each step in at most {limit}",
    "plan.step_status": "step {number} has status {status!r}; use {statuses}",
    "plan.many_in_progress": "steps {named} are in_progress; only one step is in_progress at a time (mark the others pending or done)",
    # run_terminal_command and the background commands (tools/shell.py, tools/background.py).
    "command.empty": "the command is empty",
    "command.nul": "the command contains a NUL byte",
    "command.too_long": "the command is longer than {limit} characters; write a script file and run that",
    "background.unknown": "there is no background command {process_id!r} (background commands: {known})",
    "background.session_ended": "the session has ended: no background command starts now",
    # web_fetch (tools/web.py).
    "fetch.no_url": "web_fetch needs a URL such as https://docs.python.org/3/library/json.html",
    "fetch.failed": "could not fetch {url}: {error}",
    "fetch.redirects": "more than {limit} redirects from {url}",
    "fetch.not_http": "{url!r} is not an http or https URL",
    "fetch.credentials": "a URL with a user name or password is not fetched",
    "fetch.refused": "fetching from {host} was not allowed{note}",
    "fetch.refusal_note": ": {reason}",
    "fetch.not_text": "{url} is {kind} ({size:,} bytes), not a page of text",
    # A tool server's tool (mcp/tools.py).
    "mcp.schema": "the arguments for {tool} do not fit its schema: {problem}. {details}",
    # Putting back what a command changed (tools/planted.py, tools/git_entries.py, sessions/undo.py).
    "put_back.not_a_file_before": "it was not a regular file before the command, so it cannot be made again",
    "put_back.content_not_kept": "its content before the command was not kept (unreadable or too large)",
    "put_back.no_longer_a_file": "it is no longer a regular file",
    "put_back.folder_lost": "the command's one was removed, but the folder it replaced cannot be made again (its content was not saved)",
    "undo.outside": "{folder} is outside the project",
    "undo.link": "{name} is a link now",
    # The loop (loop.py): a task's notes, a reply it cannot use, a call cut short, context made room in.
    "run.task_note": "Note: {note}.\n",
    "run.parser_note": "\nNote: {note}.",
    "run.format_error": "Format error: {problem}. {again}",
    "run.again_native": "Call one tool, or answer in plain text when the task is done.",
    "run.again_xml": "Reply again with a <thought> and then one <action> or a <final_answer>.",
    "run.cut_off": (
        "your reply was cut off at the token limit, so the action was not run; "
        "write a shorter reply (split a big file into several smaller writes)"
    ),
    "run.call_interrupted": "The user stopped the run during this call, so it did not finish. This was an interruption, not a refusal.",
    "run.reply_interrupted": "[reply interrupted by the user]",
    "run.stuck_not_run": "Not run: the run stopped here, because it was stuck.",
    "run.shrunk": "[removed to fit the context window; run the tool again if you need it]",
    "run.read_first": "<thought>I need to read {name} first.</thought>\n<action>read_file({quoted})</action>",
    "task.no_change": (
        "the task says to change nothing, so the project is read-only for this task: read files and run commands "
        "to find the answer, then answer in words"
    ),
    # Plan mode (planning.py).
    "plan_mode.note": (
        "plan mode is on for this task: find out what you need (read files, run read-only commands) but change nothing, "
        "since writes and other commands are refused, and the commands that run see the project read-only. Your final answer is the plan: the numbered steps you would take, "
        "naming the files and commands; the user reads it and may run it"
    ),
    "plan_mode.carry_out": "Carry out this plan, which the user approved:\n\n{plan}",
    # The aids' notes after a call (aids/repeats.py).
    "aid.stuck": (
        "\nNote: you have now done exactly this {repeats} times with the same result, and it will not change. "
        "Stop calling tools: give your final answer now from what you have seen, and say what is left undone, if anything."
    ),
    "aid.plan_idle": (
        "\nNote: the task list changed, but no work was done since its last update: marking a step done does not do it. "
        "Do the first step that is not done now, with another tool, and update the list after the work."
    ),
    # The answer checks: what the model is reminded of when its final answer came too soon (aids/completion.py).
    "answer.missing.again_one": (
        "Reminder: the task also asks for {names}, which does not exist yet. Create "
        "it now with write_to_file, or give your final answer again if the task does not need it."
    ),
    "answer.missing.again_many": (
        "Reminder: the task also asks for {names}, which do not exist yet. Create "
        "each now with write_to_file, or give your final answer again if the task does not need them."
    ),
    "answer.missing.one": (
        "Reminder: the task asks for {names}, but no such file exists in the project. If the task needs it, "
        "create it now with write_to_file (the result goes into the file, not only into your answer); "
        "otherwise give your final answer again."
    ),
    "answer.missing.many": (
        "Reminder: the task asks for {names}, but none of these files exists in the project. If the task needs them, "
        "create each now with write_to_file (the results go into the files, not only into your answer); "
        "otherwise give your final answer again."
    ),
    "write.recipe_tabs": (
        "Note: make runs a recipe line only when it starts with a tab, and lines {lines} of what you wrote for {rel} "
        "started with spaces; they were written with a tab."
    ),
    "write.same": "Nothing written: {rel} already holds exactly this content ({lines}, {size} bytes).",
    "aid.same_found_wrong": (
        "Note: since it last changed, {said}. The same content again changes nothing: write different content that fixes that."
    ),
    "aid.same_broken": (
        "Note: that content is from your earlier write. Writing it again changes nothing: what is said above is still so. "
        "Write different content that fixes it."
    ),
    "aid.same_stubs": (
        "Note: that content is from your earlier write, and {stubs} still only {raise_} NotImplementedError: not implemented yet. "
        "Writing it again changes nothing: write different content that fixes it."
    ),
    "aid.same_done": (
        "Note: that content is from your earlier write, so that step is done: go on with the task, or give the final answer if nothing is left."
    ),
    "aid.same_unchanged": "Note: the file did not change. Write something different if a change is needed.",
    "write.unread": (
        "Note: the task names {names}, which you have not read yet: the change it asks for may belong there. "
        "Read it before you write again."
    ),
    "answer.unchanged": (
        "Reminder: the task asks to write or change {names}, but it is exactly as it was when the task started, "
        "so the task is not done yet{stub_note}. {how}{run_tests}"
    ),
    "answer.unchanged.stub": "; {name} still raises NotImplementedError",
    "answer.unchanged.append": "Call write_to_file with its lines kept and your addition at the end, in place of {addition}:\n{call}",
    "answer.unchanged.read": "You have read {names} already: call write_to_file now with the whole new content.",
    "answer.unchanged.change_now": "Make the change now: read the file if you need to, then write_to_file with the whole new content.",
    "answer.run_tests_first": " No test has run in this task: run the tests in {file} first to see what fails, with {call}",
    "answer.claimed": (
        "Reminder: your answer says you changed something, but no file was written{nothing_run} "
        "in this task. If a change is needed, make it now (write_to_file writes the whole file); "
        "otherwise give your final answer again."
    ),
    "answer.claimed.nothing_run": " and no command was run",
    "answer.idle": (
        "Reminder: the task asks you to do something, but so far you have only read: nothing was written and no "
        "command was run. Do the work now (write_to_file, run_terminal_command), then answer; or say in your final "
        "answer why nothing needs doing."
    ),
    "answer.command": (
        "Reminder: the task names the command {command}, and it has not run successfully since your last change. "
        "Run exactly that command now and read its output before you give your final answer (fix what it shows "
        "first, if it fails): {call}"
    ),
    "answer.unasked": (
        "Reminder: the task asks you not to change anything, but these files are changed or new: {files}. "
        "Put each changed file back exactly as it was and remove the new ones, then answer in words only.{back}"
    ),
    "answer.unasked.back": " To put {file} back: {call}",
    "answer.computed": (
        "Reminder: the task asks what the code computes, and you answered without running {ran}. Do not work it "
        "out in your head: run the code (the script itself, or a short script such as {example} that prints the "
        "value), then give the number it printed in your final answer."
    ),
    "answer.computed.the_code": "the code",
    "answer.computed.anything": "anything",
    # A path that does not exist (tools/nearby.py).
    "missing.target": (
        "{wanted} does not exist. It is the file the task asks you to create, so there is nothing in it to read or use yet: "
        "work out its content from the other files, then write it with write_to_file(\"{wanted}\", ...)."
    ),
    "missing.project_name": (
        "{project} is the name of the project folder itself, the current folder of every command and the start "
        "of every relative path: leave {project}/ out of paths, and write . for the folder itself.{inside}"
    ),
    "missing.project_name.inside": " {wanted} is {inside}.",
    "missing.closest": "{wanted} does not exist. Closest existing paths: {paths}.",
    "missing.nothing_near": "{wanted} does not exist. No similar path exists in the project; the files are listed in the system prompt, or list them with ls.",
}
"""Every message by name. A name's first part is where it is said (the tool or the point of the run)."""


@cache
def fields_of(name: str) -> frozenset[str]:
    """The fields a message needs: the names in its template's braces."""
    return frozenset(field for _, field, _, _ in Formatter().parse(WORDS[name]) if field is not None)


def say(name: str, /, **fields: object) -> str:
    """The message `name` with its fields filled in. Exactly its fields: a missing one would be a
    KeyError deep in a refusal, an extra one a sign the code and the words went apart."""
    wanted = fields_of(name)
    if set(fields) != wanted:
        raise TypeError(f"{name} takes the fields {sorted(wanted)}, given {sorted(fields)}")
    return WORDS[name].format(**fields)
