// tsclient is a small MCP client on the official TypeScript SDK, driven by
// the Go integration tests (tsclient_test.go): it connects over stdio to
// the command it is given, optionally lists the tools, makes the calls it
// is given with Client.callTool, and prints one JSON line per call to
// stdout: {"result": CallToolResult} or {"error": {"code", "message"}}.
// Client.callTool validates structuredContent against the tool's
// outputSchema, which the Go SDK client does not; that is what it tests.
//
//   node tsclient.mjs '{"command": "...", "args": [...], "env": {...},
//                       "listTools": true, "calls": [{"name": "...", "arguments": {...}}]}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: spec.command,
  args: spec.args,
  env: spec.env,
  stderr: 'inherit',
});
const client = new Client({ name: 'mcpguard-tsclient', version: '1.0.0' });
await client.connect(transport);
if (spec.listTools) {
  await client.listTools();
}
for (const call of spec.calls) {
  let out;
  try {
    out = { result: await client.callTool({ name: call.name, arguments: call.arguments }) };
  } catch (e) {
    out = { error: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
await client.close();
