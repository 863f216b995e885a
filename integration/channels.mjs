// channels is an MCP client on the official TypeScript SDK that declares
// sampling, elicitation (form and URL mode) and roots, records every
// request the server makes of it (what the agent really receives), answers
// each, and makes the calls it is given. It prints one JSON object:
// {"calls": [{"result"} | {"error"}], "received": [{"method", "params"}],
//  "prompt": {"error"} | {"result"}}.
//
//   node channels.mjs '{"command": "...", "args": [...], "env": {...},
//                       "calls": [{"name", "arguments"}], "prompt": {"name", "arguments"}}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: spec.command, args: spec.args, env: spec.env, stderr: 'inherit',
});
const client = new Client({ name: 'mcpguard-channels', version: '1.0.0' }, {
  capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} },
});
const received = [];
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  received.push({ method: req.method, params: req.params });
  return { role: 'assistant', model: 'stand-in', content: { type: 'text', text: 'sampled' } };
});
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  received.push({ method: req.method, params: req.params });
  if (req.params.mode === 'url') return { action: 'accept' };
  return { action: 'accept', content: spec.elicitAnswer ?? { name: 'Ada' } };
});
client.setRequestHandler(ListRootsRequestSchema, async (req) => {
  received.push({ method: req.method, params: req.params });
  return { roots: [] };
});
await client.connect(transport);
const out = { calls: [], received };
if (spec.listTools) {
  out.icons = (await client.listTools()).tools.filter((t) => t.icons).map((t) => ({ name: t.name, icons: t.icons }));
}
for (const call of spec.calls ?? []) {
  try {
    out.calls.push({ result: await client.callTool({ name: call.name, arguments: call.arguments }) });
  } catch (e) {
    out.calls.push({ error: { code: e.code ?? null, message: String(e.message ?? e) } });
  }
}
if (spec.prompt) {
  try {
    out.prompt = { result: await client.getPrompt(spec.prompt) };
  } catch (e) {
    out.prompt = { error: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
await client.close();
