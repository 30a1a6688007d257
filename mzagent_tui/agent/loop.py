"""The ReAct loop: ask the model, read its reply, run one tool, report, repeat.

`Agent` holds one conversation over one project. `Agent.run(task)` is blocking and meant for
a worker thread; it reports through events and asks through the approver, so the Textual app
and the headless CLI drive exactly the same code. A follow-up `run` continues the conversation.
"""

from __future__ import annotations

import functools
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mzagent_tui.agent.aids.after_command import AfterCommand
from mzagent_tui.agent.aids.after_write import write_notes
from mzagent_tui.agent.aids.before_write import before_write
from mzagent_tui.agent.aids.completion import CompletionCheck
from mzagent_tui.agent.aids.repeats import Repeats, idle_plan, plan_idle_note, stuck_note
from mzagent_tui.agent.aids.seam import Aids
from mzagent_tui.agent.aids.seen import seen_by, seen_in, unread_overwrite
from mzagent_tui.agent.cancel import Cancelled, CancelToken
from mzagent_tui.agent.config import Settings, discovered_notice, ignored_notice, withheld_notice
from mzagent_tui.agent.events import (
    Action,
    Compacted,
    Error,
    Event,
    FinalAnswer,
    FormatError,
    ModelInfo,
    Notice,
    Observation,
    ReplyFinished,
    StepStarted,
    Stopped,
    StopReason,
    TaskStarted,
    Thought,
    ToolStarted,
    Undone,
    Usage,
)
from mzagent_tui.agent.ground.words import say
from mzagent_tui.agent.hooks.dispatch import Hooks
from mzagent_tui.agent.mcp.attach import McpTools
from mzagent_tui.agent.mentions import mentioned_files
from mzagent_tui.agent.model.compaction import clean_summary, compacted, split, summary_request
from mzagent_tui.agent.model.grammar import final_grammar, reply_grammar
from mzagent_tui.agent.model.instructions import load_instructions
from mzagent_tui.agent.model.llm import ChatClient, ContextOverflow, LLMError, Reply
from mzagent_tui.agent.model.native import NativeCall, assistant_message, flattened, parse_native, tool_message, tool_schemas
from mzagent_tui.agent.model.parsing import ParsedReply, parse_reply, wrap_observation
from mzagent_tui.agent.model.prompt import render_system_prompt
from mzagent_tui.agent.planning import PLAN_MODE_NOTE
from mzagent_tui.agent.report import Report
from mzagent_tui.agent.safety.approval import Policy, PolicyApprover
from mzagent_tui.agent.sessions.history import SessionHistory
from mzagent_tui.agent.sessions.session import Session
from mzagent_tui.agent.task_facts import TaskFacts
from mzagent_tui.agent.tools.background import BackgroundProcesses
from mzagent_tui.agent.tools.context import ToolContext
from mzagent_tui.agent.tools.registry import ToolRegistry, ToolResult
from mzagent_tui.agent.tools.shell import ShellTool
from mzagent_tui.agent.tools.task_list import TaskList
from mzagent_tui.agent.usage import money
from mzagent_tui.agent.user_commands import BACKGROUND, USAGE, message_for_model, run_user_command, typed_command

T = TypeVar("T")
_SHRUNK_RESULT = say("run.shrunk")
_SHRUNK = f"<observation>{_SHRUNK_RESULT}</observation>"
CALL_INTERRUPTED = say("run.call_interrupted")
"""What the model reads of a call cut short by a cancel (a question withdrawn included)."""


@dataclass(frozen=True)
class RunResult:
    reason: StopReason
    message: str
    final_answer: str | None
    steps: int
    exit_code: int | None = None
    """The exit code of a `!command` the user ran (None after a timeout or a cancel)."""


@dataclass
class _Run:
    """What one run of the loop carries from step to step."""

    completion: CompletionCheck
    cancel: CancelToken
    planning: bool
    cost_before: float
    """The session's cost when the run started: the run's own cost is measured from it."""
    format_errors: int = 0
    """Unusable replies in a row."""
    acted: bool = False
    """A call other than read_file succeeded."""
    commands: list[str] = field(default_factory=list)
    """The commands that succeeded, as their arguments' repr."""
    repeats: Repeats = field(default_factory=Repeats)
    stuck_checked: bool = False
    """A stuck run's closing answer went through the answer checks once (the next is taken as it is)."""


@dataclass(frozen=True)
class AgentParts:
    """What an agent works with. `assemble` (agent/assembly.py) is the one place that builds and
    wires them, from the run's configuration, for the app, `mzagent run` and `mzagent acp` alike."""

    settings: Settings
    root: Path
    session: Session
    report: Report
    """Where events go (the meter counts them, the session logs them, the front-end shows them)."""
    policy: Policy
    approver: PolicyApprover
    aids: Aids
    ctx: ToolContext
    shell: ShellTool
    tools: ToolRegistry
    task_list: TaskList
    """The agent's task list; the model replaces it with update_plan, offered per profile."""
    mcp: McpTools
    hooks: Hooks


class Agent:
    def __init__(self, parts: AgentParts) -> None:
        """Made by `assemble`; `resume` then continues a logged session."""
        self.settings, self.root, self.session, self.policy = parts.settings, parts.root, parts.session, parts.policy
        self.meter, self._report = parts.report.meter, parts.report
        self.approver, self.aids, self.ctx, self.shell = parts.approver, parts.aids, parts.ctx, parts.shell
        self.tools, self.task_list, self.mcp, self.hooks = parts.tools, parts.task_list, parts.mcp, parts.hooks
        self.native = parts.settings.native_tools()
        """Tool calls through the API's `tools` (see Settings.protocol); else the XML text format."""
        self._after_command = AfterCommand()
        self._open_call: str | None = None
        """The id of the native tool call whose result the next observation answers."""
        self.messages: list[dict[str, Any]] = []
        self._notes: list[str] = []
        self._completion: CompletionCheck | None = None
        self._compacted = False
        """Compacted since the last request: the meter's fill is stale until the next one."""
        self._window_asked = False
        """The server's model list is read once, at the first task, for the window and for llama.cpp."""
        parts.report.watch(self._watch)

    def resume(self, history: SessionHistory) -> None:
        """Continue a logged session (its log reopened by `assemble`): same conversation, nothing
        re-run; the system prompt is the current one, and undos since are told to the model."""
        self.session.record("resumed")
        self.messages = list(history.messages)
        if self.messages and self.messages[0]["role"] == "system":
            prompt = self._system_prompt()
            self.messages[0] = {"role": "system", "content": prompt}
            self.session.record("message", role="system", content=prompt)
        for undone in history.untold_undos():
            self.tell_undo(undone)
        for message in history.repairs():
            self._add(message)
        if not self.native:
            self.messages = flattened(self.messages)  # native calls from a run with the other protocol, as text
        for event in history.events:
            self.meter.observe(event)
            self.aids.state.seen.update(seen_in(event, self.root))

    @property
    def background(self) -> BackgroundProcesses:
        """The session's background commands: started by the model or `!&`, all stopped by `close`."""
        return self.shell.background

    @functools.cached_property
    def llm(self) -> ChatClient:
        """Made at the first request, so a `!command` alone needs no model endpoint."""
        return ChatClient(self.settings, self.emit)

    def emit(self, event: Event) -> None:
        """Count, log and hand the event to the front-end (see Report)."""
        self._report(event)

    def _watch(self, event: Event) -> None:
        """What the agent itself follows in its events: a request's usage (the meter's fill is
        fresh again) and, during a run, the answer checks' view of the work."""
        if isinstance(event, Usage):
            self._compacted = False
        self.aids.state.observe(event)
        if self._completion is not None:
            self._completion.observe(event)

    def tell_undo(self, event: Undone) -> None:
        """The model must know its file is back to the old content; it is told with the next task."""
        self._notes.append(f"the user {event.describe(self.root)}")

    def run(self, task: str, cancel: CancelToken | None = None) -> RunResult:
        """Work on a task until a final answer or a stop; never raises for model or tool faults."""
        cancel = cancel or CancelToken()
        self.ctx.cancel = cancel
        if (command := typed_command(task)) is not None:
            return self._run_typed(command)
        follow_up = bool(self.messages)
        if self.mcp.register(self.tools, self.ctx) and self.messages and self.messages[0]["role"] == "system":
            self.messages[0] = {"role": "system", "content": self._system_prompt()}  # a resumed conversation learns the new tools
            self.session.record("message", role="system", content=self.messages[0]["content"])
        if not follow_up:
            self._append("system", self._system_prompt())
        planning = self.policy.mode == "plan"
        if planning:
            self._notes.append(PLAN_MODE_NOTE)
        self._completion = completion = CompletionCheck(self.root, task, self.aids)
        self.ctx.facts = completion.facts
        self.ctx.read_only_task = self._read_only_task(completion.facts, planning)
        notes = "".join(say("run.task_note", note=note) for note in self._notes)
        self._notes.clear()
        self._append("user", f"{notes}<question>{task}</question>")
        self.emit(TaskStarted(task, follow_up))
        if not follow_up and self.settings.ignored:
            self.emit(Notice(ignored_notice(self.settings)))
        if not follow_up and self.settings.key_withheld:
            self.emit(Notice(withheld_notice(self.settings)))
        if not follow_up and (found := discovered_notice(self.settings)):
            self.emit(Notice(found))
        if not follow_up and (instructions := load_instructions(self.root)) is not None:
            self.emit(Notice(instructions.notice()))
        if not follow_up and self.ctx.skills.found:
            self.emit(Notice(self.ctx.skills.notice()))
        for notice in self.mcp.take_notices():
            self.emit(Notice(notice))
        if not follow_up and self.ctx.sandbox.mode == "workspace" and not self.ctx.sandbox.available:
            self.emit(Notice(f"No sandbox: {self.ctx.sandbox.unavailable_reason}."))
        if not self._window_asked and (not self.meter.window or self.llm.may_be_llama_cpp()):
            self._window_asked = True
            window = self.llm.probe()
            if window and not self.meter.window:
                self.emit(ModelInfo(window))
        result = self._guarded(functools.partial(self._work, task, completion, cancel, planning))
        self.hooks.run_end(result.reason.value, result.message, result.final_answer)
        self.emit(Stopped(result.reason, result.message, result.steps))
        return result

    def _read_only_task(self, facts: TaskFacts, planning: bool) -> str:
        """Why this task may change no file ("": it may). A task that says to change nothing is
        taken at its word (the `task.no_change` aid): asked to explain and change nothing, the
        bundled model changed the file it was asked about."""
        if not facts.no_change or planning or not self.aids.on("task.no_change"):
            return ""
        self.aids.fired("task.no_change")
        self.emit(Notice("the task says to change nothing: the project is read-only for it"))
        self._notes.append(say("task.no_change"))  # told with the task (the `task.no_change` aid)
        return "the task says to change nothing"

    def _work(self, task: str, completion: CompletionCheck, cancel: CancelToken, planning: bool) -> RunResult:
        self._read_mentions(task)
        return self._loop(completion, cancel, planning)

    def _guarded(self, work: Callable[[], RunResult]) -> RunResult:
        """A bug must end the run cleanly, not the app."""
        try:
            return work()
        except Exception as exc:  # noqa: BLE001
            self.session.record("crash", traceback=traceback.format_exc())
            self.emit(Error(f"internal error: {type(exc).__name__}: {exc}"))
            return RunResult(StopReason.ERROR, f"internal error: {exc}", None, 0)

    def _run_typed(self, command: str) -> RunResult:
        """A `!command` (see user_commands): run for the user, no model asked; the model reads
        what it printed with the next task."""
        if not command.removeprefix(BACKGROUND).strip():
            self.emit(Error(USAGE))
            result = RunResult(StopReason.ERROR, USAGE, None, 0)
        else:
            result = self._guarded(lambda: self._user_command(command))
        self.emit(Stopped(result.reason, result.message, 0))
        return result

    def _user_command(self, command: str) -> RunResult:
        outcome = run_user_command(self.shell, command, self.emit)
        if not self.messages:
            self._append("system", self._system_prompt())
        self._append("user", message_for_model(outcome))
        code = "stopped" if outcome.exit_code is None else f"exit code {outcome.exit_code}"
        if command.startswith(BACKGROUND):
            return RunResult(StopReason.USER_COMMAND, "your command was started in the background", None, 0, outcome.exit_code)
        return RunResult(StopReason.USER_COMMAND, f"your command ended ({code})", None, 0, outcome.exit_code)

    def _read_mentions(self, task: str) -> None:
        """The files the user put in the task with `@` are read before the model's first reply,
        through read_file (its checks, paging, and its question for a secret file), each as a step
        of the model's own; a read that fails is shown to the model too, since the user asked for it."""
        for name in mentioned_files(task):
            self._read_as_step(name, self.tools.call("read_file", [name]))

    def _read_as_step(self, name: str, result: ToolResult) -> None:
        """A read the agent made for the model, shown and kept as the model's own step (and
        counted as one: the file is seen)."""
        self.aids.state.seen.update(seen_by(self.root, "read_file", [name], result))
        self.emit(Action("read_file", [name]))
        self.emit(ToolStarted("read_file"))
        if self.native:
            call = NativeCall(f"mention-{len(self.messages)}", "read_file", json.dumps({"file_path": name}))
            self._add(assistant_message("", call))
            self._open_call = call.id
        else:
            self._append("assistant", say("run.read_first", name=name, quoted=json.dumps(name, ensure_ascii=False)))
        self.emit(Observation("read_file", result.text, result.ok, None, None))
        self._observe(result.text)

    def close(self) -> None:
        """Stop the background commands (and the session's network namespace), the MCP servers,
        and remove the sandbox's private temp folder (at exit, whatever
        was not closed is: a benchmark of a hundred agents in one process kept a hundred)."""
        self.shell.close()
        self.mcp.close()
        self.ctx.sandbox.close()

    def _system_prompt(self) -> str:
        return render_system_prompt(self.root, self.tools, self.settings.lang, native=self.native, skills=self.ctx.skills)

    def _append(self, role: str, content: str) -> None:
        self._add({"role": role, "content": content})

    def _add(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.session.record("message", **message)

    def _observe(self, text: str) -> None:
        """A result for the model: the answer to its open native call, else an <observation>."""
        if self._open_call is not None:
            self._add(tool_message(self._open_call, text))
            self._open_call = None
        else:
            self._append("user", wrap_observation(text))

    def _parse(self, reply: Reply) -> ParsedReply:
        """The reply's decision, in either protocol."""
        signatures = self.tools.signatures()
        if not self.native:
            return parse_reply(reply.text, signatures)
        return parse_native(reply.text, reply.reasoning, reply.tool_calls, signatures)

    def _keep(self, reply: Reply) -> None:
        """The reply joins the conversation (a native one with the call that will be answered)."""
        if not self.native:
            self._append("assistant", reply.text)
            return
        call = reply.tool_calls[0] if reply.tool_calls else None
        self._add(assistant_message(reply.text, call))
        self._open_call = call.id if call is not None else None

    def _show(self, reply: Reply, parsed: ParsedReply) -> None:
        """A reply joins the conversation and is reported, with its thought (the reason the
        approval dialog shows for the next command)."""
        self._keep(reply)
        self.emit(ReplyFinished(reply.text, reply.finish_reason))
        if parsed.thought:
            self.ctx.thought = parsed.thought
            self.emit(Thought(parsed.thought))

    def _loop(self, completion: CompletionCheck, cancel: CancelToken, planning: bool) -> RunResult:
        """Step after step until a final answer or a stop."""
        run = _Run(completion, cancel, planning, self.meter.cost, repeats=Repeats(window=2 * self.settings.stuck_repeats))
        limit = self.settings.max_steps
        for step in range(1, limit + 1):
            if (stop := self._limit_reached(cancel, run.cost_before, step - 1)) is not None:
                return stop
            self.emit(StepStarted(step, limit))
            if (stop := self._step(run, step)) is not None:
                return stop
        return RunResult(StopReason.MAX_STEPS, f"reached the step limit ({limit}) without a final answer; send a follow-up to continue", None, limit)

    def _step(self, run: _Run, step: int) -> RunResult | None:
        """One step: ask, judge the reply, then take a final answer or run one tool and report.
        None: the run goes on."""
        try:
            reply = self._ask_model(run.cancel)
        except Cancelled:
            self._append("assistant", say("run.reply_interrupted"))
            return RunResult(StopReason.CANCELLED, "cancelled by the user", None, step)
        except LLMError as exc:
            self.emit(Error(str(exc)))
            return RunResult(StopReason.ERROR, str(exc), None, step)
        parsed = self._parse(reply)
        self._show(reply, parsed)
        if (problem := self._unusable(reply, parsed)) is not None:
            run.format_errors += 1
            return self._format_error(problem, run.format_errors, step)
        run.format_errors = 0
        if parsed.final_answer is not None:
            return self._answer(run, reply, parsed.final_answer, step)
        return self._act(run, parsed, step)

    def _answer(self, run: _Run, reply: Reply, answer: str, step: int) -> RunResult | None:
        """A final answer ends the run, unless an answer check sends it back (None)."""
        if not run.planning and self._sent_back(run.completion, answer, run.acted, run.commands):
            return None
        if reply.finish_reason == "length":
            self.emit(Notice("the final answer hit the token limit and may be cut off"))
        self.emit(FinalAnswer(answer, plan=run.planning))
        return RunResult(StopReason.FINAL_ANSWER, "final answer", answer, step)

    def _act(self, run: _Run, parsed: ParsedReply, step: int) -> RunResult | None:
        """Run the reply's one tool call and report it with the after-tool aids' notes. The run
        ends here when it was cancelled, or when it is stuck (with a closing answer)."""
        assert parsed.tool is not None
        self.emit(Action(parsed.tool, parsed.args))
        tool, on = parsed.tool, self.aids.on("write.recipe_tabs")
        args, retabbed = self._advice("before-write aids", lambda: before_write(tool, parsed.args, on), (parsed.args, ""))
        refusal = self._advice("before-write aids", lambda: self._unread_overwrite(tool, args), None)
        try:
            result = self._call_tool(parsed.tool, args, refusal)
        except Cancelled:
            self._observe(CALL_INTERRUPTED)
            return RunResult(StopReason.CANCELLED, "cancelled by the user", None, step)
        self.aids.state.seen.update(seen_by(self.root, tool, args, result))
        run.acted = run.acted or (parsed.tool != "read_file" and result.ok)
        if parsed.tool == "run_terminal_command" and result.ok:
            run.commands.append(repr(parsed.args))
        previous = run.repeats.last_tool()
        repeated = run.repeats.call_done(parsed.tool, parsed.args, result.text)
        text, stuck = self._observation(parsed, result, repeated, previous, retabbed)
        self.emit(Observation(parsed.tool, text, result.ok, result.exit_code, result.output_path))
        self._observe(text)
        if run.cancel.cancelled:
            return RunResult(StopReason.CANCELLED, "cancelled by the user", None, step)
        if stuck:
            why = f"the model ran {parsed.tool} with the same arguments and got the same result {self.settings.stuck_repeats} times"
            return self._closing_answer(run, step, why)
        return None

    def _call_tool(self, tool: str, args: list[Any], refusal: str | None = None) -> ToolResult:
        """The tool call between the user's hooks: a before_tool hook that exits 2 blocks it, and
        the model reads the hook's reason instead of a result; an aid's `refusal` is the result."""
        self.emit(ToolStarted(tool))
        if refusal is not None:
            return ToolResult(refusal, ok=False)
        blocked = self.hooks.before_tool(tool, args)
        if blocked is not None:
            return ToolResult(blocked, ok=False)
        result = self.tools.call(tool, args)
        self.hooks.after_tool(tool, args, result)
        return result

    def _unread_overwrite(self, tool: str, args: list[Any]) -> str | None:
        """`write.not_read`'s refusal of this call, if it refuses it."""
        if not self.aids.on("write.not_read"):
            return None
        refusal = unread_overwrite(self.root, self.aids.state.seen, tool, args)
        if refusal is not None:
            self.aids.fired("write.not_read")
        return refusal

    def _limit_reached(self, cancel: CancelToken, cost_before: float, steps: int) -> RunResult | None:
        if cancel.cancelled:
            return RunResult(StopReason.CANCELLED, "cancelled by the user", None, steps)
        spent = self.meter.cost - cost_before
        if self.settings.max_cost and spent >= self.settings.max_cost:
            message = f"the run cost {money(spent)}, reaching the limit of {money(self.settings.max_cost)}; send a follow-up to continue"
            return RunResult(StopReason.MAX_COST, message, None, steps)
        return None

    @staticmethod
    def _unusable(reply: Reply, parsed: ParsedReply) -> str | None:
        """Why the reply cannot be used, or None: the parser's reason, or an action cut off."""
        if parsed.error is None and parsed.is_action and reply.finish_reason == "length":
            return say("run.cut_off")
        return parsed.error

    def _format_error(self, problem: str, count: int, step: int) -> RunResult | None:
        """Tell the model what was wrong with its reply; stop after `max_format_errors` in a row."""
        limit = self.settings.max_format_errors
        self.emit(FormatError(problem, count, limit))
        if count >= limit:
            return RunResult(StopReason.FORMAT_ERRORS, f"the model's reply could not be used {count} times in a row (last: {problem})", None, step)
        again = say("run.again_native") if self.native else say("run.again_xml")
        self._observe(say("run.format_error", problem=problem, again=again))
        return None

    def _sent_back(self, completion: CompletionCheck, answer: str, acted: bool, commands: list[str]) -> bool:
        """The answer checks (aids `answer.*`): True when one found the work not done and the
        model was told so instead of the answer being accepted."""
        reminder = self._advice("answer checks", lambda: completion.reminder(answer, acted, commands), None)
        if reminder is None:
            return False
        self.emit(Notice(f"{reminder.notice}; the model was reminded once"))
        self._observe(reminder.text)
        for path in reminder.files:
            self.aids.state.failed[path.resolve()] = f"the last reminder said {reminder.notice}"
        return True

    def _advice(self, which: str, work: Callable[[], T], otherwise: T) -> T:
        """An aid's answer, or `otherwise` when the aid itself fails: aids only advise, so a bug
        in one is recorded and said once as a notice, and the user's task goes on without it."""
        try:
            return work()
        except Exception as exc:  # noqa: BLE001
            self.session.record("crash", traceback=traceback.format_exc())
            self.emit(Notice(f"the {which} failed ({type(exc).__name__}: {exc}) and were skipped for this step"))
            return otherwise

    def _observation(
        self, parsed: ParsedReply, result: ToolResult, repeated: int, previous: str | None, retabbed: str = "",
    ) -> tuple[str, bool]:
        """The result for the model with the aids' notes, and whether the run is stuck
        (`repeated`: how often the same call got the same result before; `previous`: the tool
        called before this one; `retabbed`: what `write.recipe_tabs` changed in the write)."""
        aids = self.aids
        text = result.text
        if retabbed and result.write is not None:
            text += "\n" + aids.note("write.recipe_tabs", retabbed)
        if result.command is not None:
            command = result.command
            text += self._advice("after-command aids", lambda: self._after_command.notes(self.ctx, aids, command), "")
        if result.write is not None and self._completion is not None:
            wrote, task = result.write, self._completion.task
            text += self._advice("after-write aids", lambda: write_notes(self.ctx, aids, wrote, task), "")
        if result.ok and parsed.tool is not None and idle_plan(parsed.tool, previous):
            text += aids.note("plan.idle", plan_idle_note())
        stuck = repeated + 1 >= self.settings.stuck_repeats and aids.on("stuck")
        if stuck:
            text += aids.note("stuck", stuck_note(self.settings.stuck_repeats))
        for note in parsed.notes:
            self.emit(Notice(note))
            text += say("run.parser_note", note=note)
        return text, stuck

    def _closing_answer(self, run: _Run, step: int, why: str) -> RunResult | None:
        """A stuck run ends with the model's final answer rather than none: one more reply, which
        with a grammar can only be a thought and a final answer. A small model that ran the same
        command three times had usually seen what the task asked about, and said it when asked.
        That answer goes through the answer checks like any other, once: a model stuck toggling
        its task list claims work it never did, and a check that finds it undone sends it back
        to the work (None: the run goes on)."""
        message = f"stuck: {why}"
        self.emit(Notice(f"{message}; the model was asked for its final answer"))
        try:
            reply = self._ask_model(run.cancel, final_only=True)
        except Cancelled:
            self._append("assistant", say("run.reply_interrupted"))
            return RunResult(StopReason.CANCELLED, "cancelled by the user", None, step)
        except LLMError as exc:
            self.emit(Error(str(exc)))
            return RunResult(StopReason.STUCK, message, None, step)
        parsed = self._parse(reply)
        self._show(reply, parsed)
        if parsed.error is not None or parsed.final_answer is None:
            if self._open_call is not None:
                self._observe(say("run.stuck_not_run"))  # a native call must be answered
            return RunResult(StopReason.STUCK, message, None, step)
        if not run.planning and not run.stuck_checked:
            run.stuck_checked = True
            if self._sent_back(run.completion, parsed.final_answer, run.acted, run.commands):
                return None
        self.emit(FinalAnswer(parsed.final_answer, plan=run.planning))
        return RunResult(StopReason.FINAL_ANSWER, f"final answer, after the run was {message}", parsed.final_answer, step)

    def compact(self, cancel: CancelToken | None = None) -> bool:
        """Replace the older steps with the model's summary of them; False when there is too
        little to compact. Raises LLMError or Cancelled like a step does."""
        parts = split(self.messages)
        if parts is None:
            return False
        older, recent = parts
        reply = self.llm.complete(summary_request(flattened(self.messages), flattened(older)), cancel or CancelToken())
        self.emit(ReplyFinished(reply.text, reply.finish_reason))
        summary = clean_summary(reply.text)
        if not summary:
            return False
        self.messages = compacted(self.messages, older, recent, summary)
        self.session.record("compacted", messages=self.messages)
        self._compacted = True
        self.emit(Compacted(summary, len(older)))
        return True

    def _ask_model(self, cancel: CancelToken, final_only: bool = False) -> Reply:
        fill = self.meter.fill
        if fill is not None and fill >= self.settings.compact_at and not self._compacted:
            try:
                self.compact(cancel)
            except LLMError as exc:
                self.emit(Notice(f"the conversation could not be compacted ({exc}); continuing without it"))
        grammar = None
        if self.llm.send_grammar and not self.native:
            grammar = final_grammar() if final_only else reply_grammar(self.tools.signatures(), self.tools.structured())
        tools = tool_schemas(self.tools) if self.native else None
        try:
            return self.llm.complete(self.messages, cancel, grammar, tools)
        except ContextOverflow:
            if not self._shrink_history():
                raise
            self.emit(Notice("the conversation was too long for the model; older observations were shortened"))
            return self.llm.complete(self.messages, cancel, grammar, tools)

    def _shrink_history(self) -> bool:
        """Replace old observations (all but the last two) with a short marker."""
        indexes = [i for i, m in enumerate(self.messages) if m["role"] == "tool" or (m["role"] == "user" and m["content"].startswith("<observation>"))]
        changed = False
        for i in indexes[:-2]:
            shrunk = _SHRUNK if self.messages[i]["role"] == "user" else _SHRUNK_RESULT
            if self.messages[i]["content"] != shrunk:
                self.messages[i] = {**self.messages[i], "content": shrunk}
                changed = True
        return changed
