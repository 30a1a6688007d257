// A second ACP client for the tests: the official TypeScript SDK (@agentclientprotocol/sdk)
// starts `python -m mzagent_tui acp` and drives it through one scenario, as an editor would.
//
// Usage: node client.mjs SCENARIO PROJECT   (the agent's model comes from MZAGENT_* in the
// environment, set by tests/test_acp_ts.py to its scripted server; ACP_PYTHON names the python).
// Every message the agent sends is checked against the protocol's JSON schema, the SDK's own,
// and kept in arrival order; a scenario asserts on that order, never after waiting for quiet.
// Prints one JSON line with what the Python side checks; exits 1 with the reason on a failure.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const require = createRequire(import.meta.url);
const schema = require("@agentclientprotocol/sdk/schema/v1/schema.json");

const EXIT_WAIT_MS = 20_000;
const STEP_WAIT_MS = 60_000;

const ajv = new Ajv2020({ strict: false, allErrors: true });
const integer = (min, max) => ({ type: "number", validate: (n) => Number.isInteger(n) && n >= min && n <= max });
ajv.addFormat("uint16", integer(0, 0xffff));
ajv.addFormat("uint32", integer(0, 0xffffffff));
ajv.addFormat("uint64", integer(0, Number.MAX_SAFE_INTEGER));
ajv.addFormat("int32", integer(-0x80000000, 0x7fffffff));
ajv.addFormat("int64", integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
ajv.addFormat("double", { type: "number", validate: Number.isFinite });
ajv.addFormat("uri", { type: "string", validate: (s) => URL.canParse(s) });
ajv.addSchema(schema, "acp");

/** The schema's definition of what a message from the agent carries, by method. */
const RESPONSES = {
  initialize: "InitializeResponse",
  authenticate: "AuthenticateResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/prompt": "PromptResponse",
  "session/set_mode": "SetSessionModeResponse",
};
const AGENT_REQUESTS = { "session/request_permission": "RequestPermissionRequest" };
const AGENT_NOTIFICATIONS = { "session/update": "SessionNotification" };

function problemsWith(definition, value, where) {
  const validate = ajv.getSchema(`acp#/$defs/${definition}`);
  if (validate(value)) return [];
  return [`${where} is not a valid ${definition}: ${ajv.errorsText(validate.errors)}`];
}

/** Both directions of the connection, recorded in order; every incoming message validated. */
class Wire {
  log = [];
  problems = [];
  #methods = new Map();

  outgoing(message) {
    if ("id" in message && "method" in message) this.#methods.set(message.id, message.method);
    this.log.push({ dir: "out", message });
  }

  incoming(message) {
    this.log.push({ dir: "in", message });
    this.problems.push(...this.#check(message));
  }

  #check(message) {
    if (message.jsonrpc !== "2.0") return [`not JSON-RPC 2.0: ${JSON.stringify(message)}`];
    if ("method" in message) {
      const table = "id" in message ? AGENT_REQUESTS : AGENT_NOTIFICATIONS;
      const definition = table[message.method];
      if (!definition) return [`the agent sent ${message.method}, which a client does not offer`];
      return problemsWith(definition, message.params, message.method);
    }
    const method = this.#methods.get(message.id);
    if ("error" in message) return problemsWith("Error", message.error, `the error for ${method}`);
    const definition = RESPONSES[method];
    return definition ? problemsWith(definition, message.result, `the response to ${method}`) : [];
  }

  /** Incoming messages from position `from` on. */
  received(from = 0) {
    return this.log.slice(from).filter((entry) => entry.dir === "in").map((entry) => entry.message);
  }

  get length() {
    return this.log.length;
  }

  responseIndex(id) {
    return this.log.findIndex((e) => e.dir === "in" && e.message.id === id && !("method" in e.message));
  }
}

/** The agent's side of one connection: its process, the SDK connection and what came in. */
class Peer {
  constructor(answers) {
    this.answers = [...answers];
    this.wire = new Wire();
    this.updates = [];
    this.permissions = [];
    this.held = [];
  }

  async start(project) {
    this.project = project;
    this.child = spawn(process.env.ACP_PYTHON ?? "python3", ["-m", "mzagent_tui", "acp"], { stdio: ["pipe", "pipe", "inherit"] });
    this.exited = once(this.child, "exit");
    const base = acp.ndJsonStream(Writable.toWeb(this.child.stdin), Readable.toWeb(this.child.stdout));
    const writer = base.writable.getWriter();
    const wire = this.wire;
    const stream = {
      writable: new WritableStream({
        write: (message) => {
          wire.outgoing(message);
          return writer.write(message);
        },
        close: () => writer.close(),
        abort: (reason) => writer.abort(reason),
      }),
      readable: base.readable.pipeThrough(new TransformStream({
        transform(message, controller) {
          wire.incoming(message);
          controller.enqueue(message);
        },
      })),
    };
    const app = acp
      .client({ name: "mzagent-tests" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => this.#answer(params))
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
      });
    this.connection = app.connect(stream);
    // an agent that dies fails the requests still waiting, instead of leaving them to hang
    this.exited.then(([code, signal]) => this.connection.close(new Error(`the agent exited (${code ?? signal})`)));
    this.agent = this.connection.agent;
    this.init = await this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "mzagent-tests", version: "1" },
    });
    return this;
  }

  #answer(params) {
    this.permissions.push(params);
    const answer = this.answers.shift() ?? "reject";
    if (answer === "hold") {
      return new Promise((resolve) => this.held.push(resolve));
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  }

  /** A request whose error is the expected result: the RequestError. */
  async refused(method, params) {
    try {
      await this.agent.request(method, params);
    } catch (error) {
      assert.ok(error instanceof acp.RequestError, `${method}: ${error}`);
      return error;
    }
    assert.fail(`${method} with ${JSON.stringify(params)} was accepted`);
  }

  async newSession() {
    const response = await this.agent.request(acp.methods.agent.session.new, { cwd: this.project, mcpServers: [] });
    return response.sessionId;
  }

  prompt(sessionId, text) {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  /** Wait for the first incoming message (from position `from` on) that `test` accepts. */
  async until(test, from = 0) {
    const deadline = Date.now() + STEP_WAIT_MS;
    for (;;) {
      const found = this.wire.received(from).find(test);
      if (found) return found;
      assert.ok(Date.now() < deadline, "the awaited message never came");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async close() {
    this.connection.close();
    this.child.stdin.end();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const timer = setTimeout(() => this.child.kill("SIGKILL"), EXIT_WAIT_MS);
      await this.exited;
      clearTimeout(timer);
    }
    assert.deepEqual(this.wire.problems, [], "every message from the agent fits the schema");
  }
}

async function withPeer(project, answers, body) {
  const peer = await new Peer(answers).start(project);
  try {
    return await body(peer);
  } finally {
    await peer.close();
  }
}

/** What the messages say about tool calls, in order: [what, id, status]. */
function callTrace(messages) {
  const trace = [];
  for (const message of messages) {
    if (message.method === "session/request_permission") {
      trace.push(["permission", message.params.toolCall.toolCallId, message.params.toolCall.status ?? null]);
    } else if (message.method === "session/update" && ["tool_call", "tool_call_update"].includes(message.params.update.sessionUpdate)) {
      trace.push([message.params.update.sessionUpdate, message.params.update.toolCallId, message.params.update.status ?? null]);
    }
  }
  return trace;
}

/** Each tool call as a conforming client holds it: a field an update carries replaces the old one. */
function foldCalls(messages) {
  const calls = new Map();
  for (const message of messages) {
    let update;
    if (message.method === "session/request_permission") update = message.params.toolCall;
    else if (message.method === "session/update" && ["tool_call", "tool_call_update"].includes(message.params.update.sessionUpdate)) update = message.params.update;
    else continue;
    const call = calls.get(update.toolCallId) ?? { statuses: [], content: [] };
    if (update.status != null) {
      call.status = update.status;
      call.statuses.push(update.status);
    }
    if (update.content != null) call.content = update.content;
    calls.set(update.toolCallId, call);
  }
  return calls;
}

const STATUS_RANK = { pending: 0, in_progress: 1, completed: 2, failed: 2 };

function assertForward(calls) {
  for (const [id, call] of calls) {
    const ranks = call.statuses.map((status) => STATUS_RANK[status]);
    assert.deepEqual(ranks, [...ranks].sort(), `${id} went back: ${call.statuses.join(" → ")}`);
  }
}

function messageText(messages, kind) {
  return messages
    .filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === kind)
    .map((m) => m.params.update.content.text)
    .join("");
}

const scenarios = {
  async initialize(project) {
    return withPeer(project, [], async (peer) => {
      const init = peer.init;
      assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
      assert.equal(init.agentInfo.name, "mzagent");
      assert.equal(init.agentCapabilities.loadSession, true);
      assert.notEqual(init.agentCapabilities.promptCapabilities?.image, true, "image is not advertised");
      assert.deepEqual(init.authMethods ?? [], []);
      const session = await peer.agent.buildSession(project).start();
      assert.ok(session.sessionId);
      assert.equal(session.modes.currentModeId, "ask");
      session.dispose();
      return { sessionId: session.sessionId };
    });
  },

  async "prompt-allow"(project) {
    return withPeer(project, ["allow"], async (peer) => {
      const session = await peer.agent.buildSession(project).start();
      const response = await session.prompt("make out.txt");
      assert.equal(response.stopReason, "end_turn");
      const seen = [];
      for (let message = await session.nextUpdate(); message.kind !== "stop"; message = await session.nextUpdate()) seen.push(message.update);
      session.dispose();
      const received = peer.wire.received();
      const [call] = foldCalls(received).values();
      assert.deepEqual(callTrace(received).map(([what, , status]) => [what, status]), [
        ["tool_call", "pending"], ["tool_call_update", "in_progress"], ["permission", null], ["tool_call_update", null], ["tool_call_update", "completed"],
      ]);
      const done = received.filter((m) => m.params?.update?.status === "completed").at(-1).params.update;
      assert.deepEqual(Object.keys(done.rawOutput).sort(), ["exit_code", "output"], "rawOutput is an object");
      assert.equal(done.rawOutput.exit_code, 0);
      const [permission] = peer.permissions;
      assert.deepEqual(permission.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
      assert.equal(permission.toolCall.title, "Run `echo hi > out.txt`");
      const diff = call.content.find((c) => c.type === "diff");
      assert.deepEqual([diff.path, diff.oldText ?? null, diff.newText], [`${project}/out.txt`, null, "hi\n"]);
      assert.match(call.content.at(-1).content.text, /^Command succeeded \(exit code 0\)/);
      assert.equal(messageText(received, "agent_message_chunk"), "wrote out.txt");
      assert.deepEqual(seen.map((u) => u.sessionUpdate), received.filter((m) => m.method === "session/update").map((m) => m.params.update.sessionUpdate), "the SDK's session queue got every update, in order");
      return { stopReason: response.stopReason };
    });
  },

  async "prompt-reject"(project) {
    return withPeer(project, ["reject"], async (peer) => {
      const sessionId = await peer.newSession();
      const response = await peer.prompt(sessionId, "touch made.txt");
      const received = peer.wire.received();
      assert.equal(response.stopReason, "end_turn");
      assert.deepEqual(callTrace(received).map(([what, , status]) => [what, status]), [["tool_call", "pending"], ["tool_call_update", "in_progress"], ["permission", null], ["tool_call_update", "failed"]]);
      assert.match([...foldCalls(received).values()][0].content.at(-1).content.text, /rejected/);
      assert.equal(messageText(received, "agent_message_chunk"), "I did not");
      return { stopReason: response.stopReason };
    });
  },

  async "write-diff"(project) {
    return withPeer(project, [], async (peer) => {
      const sessionId = await peer.newSession();
      const response = await peer.prompt(sessionId, "set x to 2");
      const received = peer.wire.received();
      const calls = foldCalls(received);
      assertForward(calls);
      const write = [...calls.values()][1];
      assert.deepEqual(write.statuses, ["pending", "in_progress", "completed"]);
      assert.deepEqual(write.content, [
        { type: "diff", path: `${project}/a.py`, oldText: "x = 1\n", newText: "x = 2\n" },
        { type: "content", content: { type: "text", text: "File written: a.py (overwrote, 1 line, 6 bytes)." } },
      ]);
      assert.deepEqual(peer.permissions, []);
      return { stopReason: response.stopReason };
    });
  },

  async cancel(project) {
    return withPeer(project, ["allow", "hold"], async (peer) => {
      const sessionId = await peer.newSession();
      // mid-command: the command is killed, its call closed, then the prompt answers
      let from = peer.wire.length;
      const running = peer.prompt(sessionId, "wait a while");
      await peer.until((m) => m.method === "session/request_permission", from); // answered "allow" as it is read
      await peer.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      const first = await running;
      assert.equal(first.stopReason, "cancelled");
      const midCommand = callTrace(peer.wire.received(from)).map(([what, , status]) => [what, status]);
      assert.deepEqual(midCommand.at(-1), ["tool_call_update", "failed"]);
      // while asking: the client answers the open question "cancelled", as the spec asks
      from = peer.wire.length;
      const asking = peer.prompt(sessionId, "touch never.txt");
      await peer.until((m) => m.method === "session/request_permission", from);
      await peer.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      peer.held.shift()({ outcome: { outcome: "cancelled" } });
      const second = await asking;
      assert.equal(second.stopReason, "cancelled");
      const whileAsking = callTrace(peer.wire.received(from)).map(([what, , status]) => [what, status]);
      assert.deepEqual(whileAsking, [["tool_call", "pending"], ["tool_call_update", "in_progress"], ["permission", null], ["tool_call_update", "failed"]]);
      return { stopReasons: [first.stopReason, second.stopReason] };
    });
  },

  async load(project) {
    const sessionId = await withPeer(project, [], async (peer) => {
      const id = await peer.newSession();
      assert.equal((await peer.prompt(id, "what do the notes say?")).stopReason, "end_turn");
      return id;
    });
    return withPeer(project, [], async (peer) => {
      const request = peer.agent.request(acp.methods.agent.session.load, { cwd: project, sessionId, mcpServers: [] });
      const loaded = await request;
      const heard = peer.updates.length; // what the SDK had handed over when the response resolved
      const atResponse = peer.wire.length;
      assert.equal(loaded.modes.currentModeId, "ask");
      const replay = peer.wire.received().filter((m) => m.method === "session/update");
      assert.ok(replay.length > 0, "no replayed update came before the load response");
      assert.equal(heard, replay.length, "every replayed update reached the client before the response");
      assert.deepEqual(replay[0].params.update, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "what do the notes say?" } });
      assert.equal(messageText(replay, "agent_message_chunk"), "the notes say hello");
      const [call] = foldCalls(replay).values();
      assert.equal(call.status, "completed");
      const response = await peer.prompt(sessionId, "and now?");
      const turn = peer.wire.received(atResponse).filter((m) => m.method === "session/update");
      const turnKinds = turn.map((m) => m.params.update.sessionUpdate);
      assert.ok(!turnKinds.includes("user_message_chunk") && !turnKinds.includes("tool_call"), "nothing replayed came after the response, and the live prompt is not echoed");
      assert.equal(messageText(turn, "agent_message_chunk"), "still hello");
      return { replayed: replay.map((m) => m.params.update.sessionUpdate), stopReason: response.stopReason };
    });
  },

  async "set-mode"(project) {
    return withPeer(project, ["allow"], async (peer) => {
      const session = await peer.agent.buildSession(project).start();
      assert.deepEqual(session.modes.availableModes.map((m) => m.id), ["ask", "auto-safe", "plan", "yolo"]);
      const unknown = await peer.refused(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "trusted" });
      assert.equal(unknown.code, -32602);
      await peer.agent.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "auto-safe" });
      const response = await session.prompt("go");
      session.dispose();
      const received = peer.wire.received();
      assert.deepEqual(peer.permissions.map((p) => p.toolCall.title), ["Run `touch made.txt`"], "ls ran without asking, touch asked");
      const modes = received.filter((m) => m.params?.update?.sessionUpdate === "current_mode_update").map((m) => m.params.update.currentModeId);
      assert.deepEqual(modes, ["auto-safe"]);
      assertForward(foldCalls(received));
      return { stopReason: response.stopReason };
    });
  },

  async plan(project) {
    return withPeer(project, [], async (peer) => {
      const sessionId = await peer.newSession();
      const response = await peer.prompt(sessionId, "add a --verbose flag");
      const plans = peer.wire.received().filter((m) => m.params?.update?.sessionUpdate === "plan").map((m) => m.params.update.entries);
      assertForward(foldCalls(peer.wire.received()));
      return { plans, stopReason: response.stopReason };
    });
  },

  async "bad-input"(project) {
    return withPeer(project, [], async (peer) => {
      const codes = {};
      codes.relativeCwd = (await peer.refused(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] })).code;
      codes.unknownSession = (await peer.refused(acp.methods.agent.session.prompt, { sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }] })).code;
      codes.loadUnknown = (await peer.refused(acp.methods.agent.session.load, { cwd: project, sessionId: "no-such-session", mcpServers: [] })).code;
      codes.authenticate = (await peer.refused(acp.methods.agent.authenticate, { methodId: "oauth" })).code;
      codes.unknownMethod = (await peer.refused("session/frobnicate", { sessionId: "x" })).code;
      codes.missingPrompt = (await peer.refused(acp.methods.agent.session.prompt, { sessionId: "x" })).code;
      const sessionId = await peer.newSession();
      const image = await peer.refused(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] });
      codes.image = image.code;
      assert.match(JSON.stringify(image.data), /image/);
      codes.emptyPrompt = (await peer.refused(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "  " }] })).code;
      const response = await peer.prompt(sessionId, "are you still there?");
      assert.equal(messageText(peer.wire.received(), "agent_message_chunk"), "still fine");
      return { codes, stopReason: response.stopReason };
    });
  },
};

async function main() {
  const [name, project] = process.argv.slice(2);
  const scenario = scenarios[name];
  if (!scenario || !project) {
    console.error(`usage: node client.mjs {${Object.keys(scenarios).join("|")}} PROJECT`);
    process.exit(2);
  }
  const result = await scenario(project);
  console.log(JSON.stringify(result));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
