// pinsclient is an MCP client on the official TypeScript SDK for the pin
// tests (pins_test.go): it connects over stdio to the command it is given,
// lists every page of tools, prompts, resources and resource templates,
// makes the tool calls, prompt gets and resource reads it is given, and
// prints one JSON object: the instructions, the names and URIs listed, and
// for each call {"result": ...} or {"error": {"code", "message"}}.
//
//   node pinsclient.mjs '{"command": "...", "args": [...], "env": {...},
//     "relist": true, "calls": [{"name": "...", "arguments": {...}}], "prompts": ["..."], "reads": ["..."]}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: 'inherit' });
const client = new Client({ name: 'mcpguard-pinsclient', version: '1.0.0' });
await client.connect(transport);

async function all(list, key) {
  const out = [];
  let cursor;
  do {
    const page = await list(cursor === undefined ? {} : { cursor });
    out.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

async function outcome(f) {
  try {
    return { result: await f() };
  } catch (e) {
    return { error: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}

const caps = client.getServerCapabilities() ?? {};
const out = { instructions: client.getInstructions() ?? null, tools: [], prompts: [], resources: [], templates: [], calls: [], gets: [], reads: [] };
if (caps.tools) out.tools = (await all((p) => client.listTools(p), 'tools')).map((t) => t.name);
if (caps.prompts) out.prompts = (await all((p) => client.listPrompts(p), 'prompts')).map((p) => p.name);
if (caps.resources) {
  out.resources = (await all((p) => client.listResources(p), 'resources')).map((r) => r.uri);
  out.templates = (await all((p) => client.listResourceTemplates(p), 'resourceTemplates')).map((r) => r.uriTemplate);
}
if (spec.relist) {
  // A second listing in the same session: a server that changes between
  // lists shows it here.
  out.relist = {
    tools: (await all((p) => client.listTools(p), 'tools')).map((t) => t.name),
    prompts: caps.prompts ? (await all((p) => client.listPrompts(p), 'prompts')).map((p) => p.name) : [],
    resources: caps.resources ? (await all((p) => client.listResources(p), 'resources')).map((r) => r.uri) : [],
  };
}
for (const call of spec.calls ?? []) out.calls.push(await outcome(() => client.callTool({ name: call.name, arguments: call.arguments ?? {} })));
for (const name of spec.prompts ?? []) out.gets.push(await outcome(() => client.getPrompt({ name, arguments: { who: 'you' } })));
for (const uri of spec.reads ?? []) out.reads.push(await outcome(() => client.readResource({ uri })));
process.stdout.write(JSON.stringify(out) + '\n');
await client.close();
