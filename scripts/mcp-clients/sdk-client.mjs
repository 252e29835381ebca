// The MCP TypeScript SDK's Client against weft's retail module, over
// Streamable HTTP (`weft serve`) and stdio (`weft mcp`). Run by
// scripts/mcp-clients.sh, which copies this file into build/npm so that its
// imports resolve against the pinned packages there.
//
//   node sdk-client.mjs [--http URL] [--stdio -- COMMAND ARGS...]
//
// For each transport given: tools/list has the 16 retail tools, a read
// returns the seed data of examples/data/tau2-retail/db.json, an unknown user
// is a tool error (isError, not a protocol error), a write is seen by a later
// read in the same session, and a new session starts again from the seed.
// Prints one line per check and exits 1 on any mismatch.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const RETAIL_TOOLS = [
  "calculate",
  "cancel_pending_order",
  "exchange_delivered_order_items",
  "find_user_id_by_email",
  "find_user_id_by_name_zip",
  "get_item_details",
  "get_order_details",
  "get_product_details",
  "get_user_details",
  "list_all_product_types",
  "modify_pending_order_address",
  "modify_pending_order_items",
  "modify_pending_order_payment",
  "modify_user_address",
  "return_delivered_order_items",
  "transfer_to_human_agents",
];

// Seed values, from examples/data/tau2-retail/db.json.
const ORDER_ID = "#W4817420";
const ORDER_USER = "ava_moore_2033";
const ORDER_TOTAL = 1380.79;
const ORDER_TRACKING = "490313116609";
const USER_EMAIL = "ava.moore6020@example.com";
const USER_ADDRESS1 = "996 Cedar Street";
const NEW_ADDRESS = {
  address1: "12 Oak Street",
  address2: "Apt 3",
  city: "Austin",
  state: "TX",
  country: "USA",
  zip: "73301",
};

let passed = 0;
let failed = 0;

class Mismatch extends Error {}

function expect(cond, what) {
  if (!cond) throw new Mismatch(what);
}

function usage(msg) {
  console.error(`sdk-client: ${msg}`);
  console.error("usage: node sdk-client.mjs [--http URL] [--stdio -- COMMAND ARGS...]");
  process.exit(2);
}

function parseArgs(argv) {
  const targets = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--http") {
      if (i + 1 >= argv.length) usage("--http needs a URL");
      targets.push({ name: "http", url: argv[++i] });
    } else if (a === "--stdio") {
      const rest = argv.slice(i + 1);
      if (rest[0] === "--") rest.shift();
      if (rest.length === 0) usage("--stdio needs a command");
      targets.push({ name: "stdio", command: rest[0], args: rest.slice(1) });
      break;
    } else {
      usage(`unknown argument ${JSON.stringify(a)}`);
    }
  }
  if (targets.length === 0) usage("give --http and/or --stdio");
  return targets;
}

// A connected client for target; for stdio, the server's stderr is kept and
// printed only when a check fails.
async function connect(target) {
  const client = new Client({ name: "weft-sdk-client", version: "1.0.0" });
  let transport;
  let stderr = "";
  if (target.url) {
    transport = new StreamableHTTPClientTransport(new URL(target.url));
  } else {
    transport = new StdioClientTransport({
      command: target.command,
      args: target.args,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
  }
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

async function close(conn) {
  // Over HTTP, end the MCP session on the server (DELETE) before closing.
  if (conn.transport instanceof StreamableHTTPClientTransport) {
    await conn.transport.terminateSession().catch(() => {});
  }
  await conn.client.close();
}

// Whether address has exactly want's fields and values, in any order.
function sameAddress(address, want) {
  const keys = Object.keys(address ?? {}).sort();
  return (
    JSON.stringify(keys) === JSON.stringify(Object.keys(want).sort()) && keys.every((k) => address[k] === want[k])
  );
}

function text(result) {
  const t = (result.content ?? []).find((c) => c.type === "text");
  return t ? t.text : "";
}

function json(result, what) {
  expect(!result.isError, `${what}: unexpected tool error: ${text(result)}`);
  const s = text(result);
  try {
    return JSON.parse(s);
  } catch {
    throw new Mismatch(`${what}: text content is not JSON: ${s.slice(0, 200)}`);
  }
}

async function check(target, name, fn) {
  try {
    const detail = await fn();
    passed++;
    console.log(`ok    ${target.name}: ${name}${detail ? ` (${detail})` : ""}`);
  } catch (err) {
    failed++;
    console.log(`FAIL  ${target.name}: ${name}: ${err instanceof Mismatch ? err.message : err?.stack ?? err}`);
  }
}

async function run(target) {
  let conn;
  await check(target, "connect and initialize", async () => {
    conn = await connect(target);
    const caps = conn.client.getServerCapabilities();
    expect(caps?.tools, `server capabilities have no tools: ${JSON.stringify(caps)}`);
    const v = conn.client.getServerVersion();
    return `server ${v?.name} ${v?.version}`;
  });
  if (!conn) return;
  try {
    await check(target, "tools/list", async () => {
      const { tools } = await conn.client.listTools();
      const names = tools.map((t) => t.name).sort();
      expect(
        JSON.stringify(names) === JSON.stringify(RETAIL_TOOLS),
        `tools/list: got ${names.length} tools ${JSON.stringify(names)}, want ${JSON.stringify(RETAIL_TOOLS)}`,
      );
      for (const t of tools) {
        expect(t.inputSchema?.type === "object", `tool ${t.name}: inputSchema.type is not "object"`);
      }
      return `${tools.length} tools`;
    });

    await check(target, `get_order_details ${ORDER_ID}`, async () => {
      const res = await conn.client.callTool({ name: "get_order_details", arguments: { order_id: ORDER_ID } });
      const order = json(res, "get_order_details");
      expect(order.order_id === ORDER_ID, `order_id = ${JSON.stringify(order.order_id)}, want ${ORDER_ID}`);
      expect(order.user_id === ORDER_USER, `user_id = ${JSON.stringify(order.user_id)}, want ${ORDER_USER}`);
      expect(order.status === "delivered", `status = ${JSON.stringify(order.status)}, want "delivered"`);
      expect(order.items?.length === 5, `${order.items?.length} items, want 5`);
      const paid = order.payment_history?.[0]?.amount;
      expect(paid === ORDER_TOTAL, `payment_history[0].amount = ${paid}, want ${ORDER_TOTAL}`);
      const tracking = order.fulfillments?.[0]?.tracking_id?.[0];
      expect(tracking === ORDER_TRACKING, `tracking id = ${tracking}, want ${ORDER_TRACKING}`);
      return `${order.user_id}, ${order.status}, ${paid}`;
    });

    await check(target, "tool error for an unknown user", async () => {
      const res = await conn.client.callTool({ name: "get_user_details", arguments: { user_id: "no_such_user_0000" } });
      expect(res.isError === true, `isError = ${res.isError}, want true; content ${JSON.stringify(res.content)}`);
      const msg = text(res);
      expect(/not found/i.test(msg), `error text ${JSON.stringify(msg)} does not say "not found"`);
      return JSON.stringify(msg);
    });

    await check(target, "modify_user_address, then get_user_details sees it", async () => {
      const before = json(
        await conn.client.callTool({ name: "get_user_details", arguments: { user_id: ORDER_USER } }),
        "get_user_details",
      );
      expect(before.email === USER_EMAIL, `email = ${JSON.stringify(before.email)}, want ${USER_EMAIL}`);
      expect(
        before.address?.address1 === USER_ADDRESS1,
        `seed address1 = ${JSON.stringify(before.address?.address1)}, want ${USER_ADDRESS1}`,
      );
      const mod = json(
        await conn.client.callTool({
          name: "modify_user_address",
          arguments: { user_id: ORDER_USER, ...NEW_ADDRESS },
        }),
        "modify_user_address",
      );
      expect(
        sameAddress(mod.address, NEW_ADDRESS),
        `modify_user_address returned address ${JSON.stringify(mod.address)}, want ${JSON.stringify(NEW_ADDRESS)}`,
      );
      const after = json(
        await conn.client.callTool({ name: "get_user_details", arguments: { user_id: ORDER_USER } }),
        "get_user_details",
      );
      expect(
        sameAddress(after.address, NEW_ADDRESS),
        `get_user_details after the change: address ${JSON.stringify(after.address)}, want ${JSON.stringify(NEW_ADDRESS)}`,
      );
      return `${USER_ADDRESS1} -> ${after.address.address1}`;
    });
  } finally {
    if (failed > 0 && conn.stderr()) {
      console.log(`--- ${target.name}: server stderr\n${conn.stderr().trimEnd()}`);
    }
    await close(conn);
  }

  // A new MCP session (a new weft process over stdio) starts from the seed.
  await check(target, "a new session starts from the seed", async () => {
    const fresh = await connect(target);
    try {
      const user = json(
        await fresh.client.callTool({ name: "get_user_details", arguments: { user_id: ORDER_USER } }),
        "get_user_details",
      );
      expect(
        user.address?.address1 === USER_ADDRESS1,
        `new session sees address1 ${JSON.stringify(user.address?.address1)}, want the seed's ${USER_ADDRESS1}`,
      );
      return user.address.address1;
    } finally {
      await close(fresh);
    }
  });
}

const targets = parseArgs(process.argv.slice(2));
// Bound the whole run: a hung server must fail the test, not stall it.
const watchdog = setTimeout(() => {
  console.log(`FAIL  sdk-client: no result after 120s (${passed} passed, ${failed} failed so far)`);
  process.exit(1);
}, 120_000);
watchdog.unref();

for (const t of targets) {
  await run(t);
}
console.log(`sdk-client: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
