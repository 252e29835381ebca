'use strict';
// The harness: Describe and the episode loop of RunEpisode, with native
// (OpenAI) function calling. Plain objects in the shapes of plugin.proto's
// messages (snake_case field names, 64-bit integers as strings).
//
// The episode protocol (what weft and `weft plugin conformance` rely on):
//   - Env.ListTools, then the opening message from User.Next (given the
//     resumed history, if any); the system message is the request's
//     system_prompt plus the "instructions" setting;
//   - each Generate is one Turn whose prompt is exactly the messages sent;
//     the offered tools go in GenerateRequest.tools;
//   - an answer with tool_calls runs them in order through Env.CallTool
//     (unique call ids; results back to the model as tool messages); an
//     answer with content only goes to the user (User.Next with the
//     canonical messages); an empty answer is a format-error turn, kept out
//     of the canonical messages, with feedback to the model;
//   - limits: max_turns before the generation past it, max_tool_calls
//     before the call past it (unrun calls dropped from the canonical
//     assistant message), turn_timeout_ms over one Generate plus its calls,
//     episode_timeout_ms over everything; deadlines are terminations;
//   - any other host failure ends the episode with termination "failure"
//     and Failure{kind: "<service>_<kind>"}, keeping the partial trajectory.

const { HostError } = require('./weft');

const NAME = 'node-harness';
const VERSION = '0.1.0';
const FORMAT = 'OUTPUT_FORMAT_NATIVE';
const CAPABILITIES = ['parallel_calls', 'resume'];

// Settings: a JSON object; unknown properties are refused. The protocol
// adapter encodes the schema (v2: a Value).
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    instructions: { type: 'string', description: 'Text appended to the system prompt.' },
    max_result_chars: {
      type: 'integer',
      minimum: 0,
      description: 'Longest tool result the model sees, in characters (longer ones are cut with a note); 0 = no limit. The trajectory keeps the full result.',
    },
  },
};

function describe() {
  return { name: NAME, version: VERSION, format: FORMAT, capabilities: CAPABILITIES, settings_schema: SETTINGS_SCHEMA };
}

// parseSettings checks the settings object (already decoded from the
// protocol; undefined = none) strictly: anything but an object with known,
// well-typed properties throws an Error naming the problem (RunEpisode
// then fails with it).
function parseSettings(v) {
  const s = { instructions: '', max_result_chars: 0 };
  if (v === undefined) return s;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${NAME} settings: want a JSON object, got ${JSON.stringify(v)}`);
  for (const [k, val] of Object.entries(v)) {
    switch (k) {
      case 'instructions':
        if (typeof val !== 'string') throw new Error(`${NAME} settings: instructions must be a string`);
        s.instructions = val;
        break;
      case 'max_result_chars':
        if (!Number.isInteger(val) || val < 0) throw new Error(`${NAME} settings: max_result_chars must be a non-negative integer`);
        s.max_result_chars = val;
        break;
      default:
        throw new Error(`${NAME} settings: unknown setting "${k}" (known: instructions, max_result_chars)`);
    }
  }
  return s;
}

// checkHistory validates RunEpisodeRequest.history: user, assistant and
// tool messages only; every tool call has a unique id and a name and is
// answered by a tool message right after its assistant message.
function checkHistory(history) {
  const bad = (i, what) => new Error(`${NAME}: history: message ${i} (${history[i].role}): ${what}`);
  const ids = new Set();
  let open = null; // call id -> answered, of the last assistant message
  let last = -1;
  const unanswered = (before) => {
    for (const c of history[last].tool_calls || []) {
      if (!open.get(c.id)) return bad(last, `tool call "${c.id}" is not answered before message ${before}`);
    }
    return null;
  };
  for (let i = 0; i < history.length; i++) {
    const m = history[i];
    if (m.role !== 'tool' && last >= 0) {
      const err = unanswered(i);
      if (err) throw err;
      open = null;
      last = -1;
    }
    if (m.role !== 'assistant' && (m.tool_calls || []).length > 0) throw bad(i, 'only assistant messages have tool_calls');
    switch (m.role) {
      case 'user':
        break;
      case 'assistant':
        open = new Map();
        last = i;
        for (const c of m.tool_calls || []) {
          if (!c.id) throw bad(i, `tool call ${c.name || '?'} has no id`);
          if (ids.has(c.id)) throw bad(i, `tool call id "${c.id}" is used twice`);
          if (!(c.name || '').trim()) throw bad(i, `tool call "${c.id}" has no name`);
          ids.add(c.id);
          open.set(c.id, false);
        }
        break;
      case 'tool':
        if (last < 0) throw bad(i, 'a tool message must follow the assistant message whose call it answers');
        if (!open.has(m.tool_call_id)) throw bad(i, `answers "${m.tool_call_id}", which the preceding assistant message does not call`);
        if (open.get(m.tool_call_id)) throw bad(i, `tool call "${m.tool_call_id}" is answered twice`);
        open.set(m.tool_call_id, true);
        break;
      case 'system':
        throw bad(i, 'the history holds no system message (the harness renders its own)');
      default:
        throw bad(i, `role "${m.role}" is not user, assistant or tool`);
    }
  }
  if (last >= 0) {
    const err = unanswered(history.length);
    if (err) throw err;
  }
}

// Ended stops the loop with a termination (not a failure).
class Ended {
  constructor(termination) {
    this.termination = termination;
  }
}

const clone = (m) => JSON.parse(JSON.stringify(m));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const toolMessage = (r, content) => ({ role: 'tool', tool_call_id: r.call_id, name: r.name, content });

// runEpisode runs one episode of req (a RunEpisodeRequest whose settings
// are already a JavaScript value) with host (an EpisodeHost) and returns
// {trajectory, hostError}: hostError is the HostError that ended the
// episode (termination "failure"), undefined otherwise. It throws only for
// bad settings or an invalid history, before any host call.
async function runEpisode(req, host) {
  const settings = parseSettings(req.settings);
  const history = req.history || [];
  checkHistory(history);
  const lim = req.limits || {};
  const start = Date.now();
  const epDeadline = Number(lim.episode_timeout_ms) > 0 ? start + Number(lim.episode_timeout_ms) : Infinity;
  const tr = { messages: [], turns: [], termination: '', tool_calls: 0, format_errors: 0 };
  const prompt = [];
  const used = new Set();

  // classify turns a host call's failure into the episode's end: a limit's
  // deadline that has passed is a termination, anything else a failure.
  // The host may report the deadline it was sent a moment before this
  // process's own clock reaches it: a deadline error with a limit due
  // within a second waits for the limit before deciding.
  const classify = async (err, turnDeadline) => {
    if (!(err instanceof HostError)) throw err;
    const due = Math.min(epDeadline, turnDeadline);
    if ((err.kind === 'deadline' || err.kind === 'canceled') && !host.aborted && Number.isFinite(due) && due - Date.now() < 1000) {
      await sleep(Math.max(0, due - Date.now()) + 5);
    }
    if (!host.aborted) {
      if (Date.now() >= epDeadline) return new Ended('episode_deadline');
      if (Date.now() >= turnDeadline) return new Ended('turn_deadline');
    }
    return err;
  };

  // The id base keeps new call ids clear of the history's ("call_<k>_<i>").
  let idBase = 0;
  const run = async () => {
    let tools;
    try {
      tools = (await host.listTools(epDeadline)).tools || [];
    } catch (e) {
      return classify(e, Infinity);
    }
    let system = (req.system_prompt || '').trim();
    if (settings.instructions) system += (system ? '\n\n' : '') + settings.instructions;
    const sys = { role: 'system', content: system };
    tr.messages.push(sys);
    prompt.push(sys);
    idBase = resume(history, tr, prompt, used, settings);

    let opening;
    try {
      opening = await host.userNext(tr.messages.slice(1), epDeadline);
    } catch (e) {
      return classify(e, Infinity);
    }
    if (opening.done) return new Ended('done');
    addUser(tr, prompt, opening.content || '');

    for (let turn = 0; ; turn++) {
      if (Number(lim.max_turns) > 0 && turn >= Number(lim.max_turns)) return new Ended('max_turns');
      if (Date.now() >= epDeadline) return new Ended('episode_deadline');
      const end = await oneTurn(turn, tools);
      if (end) return end;
    }
  };

  // oneTurn runs one generation and what follows; it returns an Ended or a
  // HostError when the episode ends there, else undefined.
  const oneTurn = async (index, tools) => {
    const t0 = Date.now();
    const turnDeadline = Number(lim.turn_timeout_ms) > 0 ? t0 + Number(lim.turn_timeout_ms) : Infinity;
    const dl = Math.min(turnDeadline, epDeadline);
    const t = { index, prompt: prompt.slice(), calls: [], results: [], format_error: '', user_reply: '', duration_ms: 0 };
    tr.turns.push(t);
    try {
      return await turnBody(t, tools, turnDeadline, dl);
    } finally {
      t.duration_ms = Date.now() - t0;
    }
  };

  const turnBody = async (t, tools, turnDeadline, dl) => {
    const greq = { messages: t.prompt, tools, format: FORMAT };
    if (req.sampling) greq.sampling = req.sampling;
    let gr;
    try {
      gr = await host.generate(greq, dl);
    } catch (e) {
      return classify(e, turnDeadline);
    }
    const msg = gr.message || { role: 'assistant' };
    t.response = msg;
    const calls = (msg.tool_calls || []).map((c, i) => ({ id: uniqueId(used, c.id, idBase + t.index, i), name: c.name || '', arguments: c.arguments || '' }));
    t.calls = calls;
    const content = msg.content || '';
    if (calls.length === 0 && content.trim() === '') {
      t.format_error = 'the reply is empty (no tool calls and no content)';
      tr.format_errors++;
      prompt.push({ role: 'assistant', content });
      prompt.push({ role: 'user', content: `Your last reply could not be parsed: ${t.format_error}. Call a tool or reply to the user.` });
      return undefined;
    }
    const canonical = { role: 'assistant', content, tool_calls: calls };
    if (msg.reasoning_content) canonical.reasoning_content = msg.reasoning_content;
    tr.messages.push(canonical);
    prompt.push({ role: 'assistant', content, tool_calls: calls });

    if (calls.length > 0) {
      for (const c of calls) {
        if (Number(lim.max_tool_calls) > 0 && tr.tool_calls >= Number(lim.max_tool_calls)) {
          answeredOnly(canonical, t.results);
          return new Ended('max_tool_calls');
        }
        let cr;
        try {
          cr = await host.callTool({ name: c.name, arguments: c.arguments || '{}', call_id: c.id }, dl);
        } catch (e) {
          answeredOnly(canonical, t.results);
          return classify(e, turnDeadline);
        }
        tr.tool_calls++;
        const r = { call_id: c.id, name: c.name, content: cr.content || '', is_error: !!cr.is_error, ledger_index: String(cr.ledger_index || '0') };
        t.results.push(r);
        tr.messages.push(toolMessage(r, r.content));
        prompt.push(toolMessage(r, clip(r.content, settings.max_result_chars)));
      }
      return undefined;
    }

    let ur;
    try {
      ur = await host.userNext(tr.messages.slice(), epDeadline);
    } catch (e) {
      return classify(e, Infinity);
    }
    t.user_reply = ur.content || '';
    if (ur.done) return new Ended('done');
    addUser(tr, prompt, ur.content || '');
    return undefined;
  };

  const end = await run();
  if (end instanceof Ended) {
    tr.termination = end.termination;
    return { trajectory: tr };
  }
  tr.termination = 'failure';
  return { trajectory: tr, hostError: end };
}

function addUser(tr, prompt, content) {
  const m = { role: 'user', content };
  tr.messages.push(m);
  prompt.push(m);
}

// resume appends the history to the canonical messages and the prompt (the
// prompt as this harness would have rendered it) and returns the id base of
// new calls: past the history's assistant messages and past k of any
// history id "call_<k>_<i>".
function resume(history, tr, prompt, used, settings) {
  let assistants = 0;
  let past = 0;
  for (const h of history) {
    const m = clone(h);
    tr.messages.push(m);
    if (m.role === 'assistant') {
      assistants++;
      for (const c of m.tool_calls || []) {
        used.add(c.id);
        const k = /^call_(\d{1,9})_(\d+)$/.exec(c.id);
        if (k && Number(k[1]) >= past) past = Number(k[1]) + 1;
      }
      prompt.push({ role: 'assistant', content: m.content || '', tool_calls: (m.tool_calls || []).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments || '' })) });
    } else if (m.role === 'tool') {
      prompt.push({ role: 'tool', tool_call_id: m.tool_call_id, name: m.name || '', content: clip(m.content || '', settings.max_result_chars) });
    } else {
      prompt.push(m);
    }
  }
  return Math.max(assistants, past);
}

// uniqueId keeps a model's call id unless it is empty or taken, else gives
// "call_<turn>_<i>" (with a "_<n>" suffix while that is taken too).
function uniqueId(used, id, turn, i) {
  if (!id || used.has(id)) {
    const base = `call_${turn}_${i}`;
    id = base;
    for (let n = 1; used.has(id); n++) id = `${base}_${n}`;
  }
  used.add(id);
  return id;
}

// answeredOnly drops from the canonical assistant message the calls that
// never ran, so that every canonical tool call has its tool message.
function answeredOnly(canonical, results) {
  const ran = new Set(results.map((r) => r.call_id));
  canonical.tool_calls = canonical.tool_calls.filter((c) => ran.has(c.id));
}

// clip cuts a tool result the model sees to max characters (0 = no limit).
function clip(s, max) {
  if (!max || s.length <= max) return s;
  return s.slice(0, max) + `\n[... ${s.length - max} more characters cut by the harness]`;
}

module.exports = { NAME, VERSION, describe, parseSettings, checkHistory, runEpisode, uniqueId, clip };
