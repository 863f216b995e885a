// tsrouting is an MCP client on the official TypeScript SDK that records
// what server-chosen routing reaches application code: the requestId of
// each roots/list request the server sends (extra.requestId) and the
// method of each notification that has no handler of its own (the
// fallback notification handler). It calls one tool, waits briefly for
// the server's messages, and prints {"result", "requestIds", "methods"}.
//
//   node tsrouting.mjs '{"command": "...", "args": [...], "env": {...}, "tool": "..."}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: 'inherit' });
const client = new Client({ name: 'mcpguard-tsrouting', version: '1.0.0' }, { capabilities: { roots: {} } });
const requestIds = [];
const methods = [];
client.setRequestHandler(ListRootsRequestSchema, (_req, extra) => {
  requestIds.push(String(extra.requestId));
  return { roots: [] };
});
client.fallbackNotificationHandler = async (n) => {
  methods.push(n.method);
};
await client.connect(transport);
let result;
try {
  result = await client.callTool({ name: spec.tool, arguments: {} });
} catch (e) {
  result = { error: String(e.message ?? e) };
}
await new Promise((resolve) => setTimeout(resolve, 500));
process.stdout.write(JSON.stringify({ result, requestIds, methods }) + '\n');
await client.close();
