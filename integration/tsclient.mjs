// tsclient is a small MCP client on the official TypeScript SDK, driven by
// the Go integration tests (tsclient_test.go): it connects over stdio to
// the command it is given, optionally lists the tools, makes the calls it
// is given with Client.callTool, and prints one JSON line per call to
// stdout: {"result": CallToolResult} or {"error": {"code", "message"}}.
// Client.callTool validates structuredContent against the tool's
// outputSchema, which the Go SDK client does not; that is what it tests.
//
// With "roots" (file: URIs), it announces the roots capability, answers
// roots/list with them, and makes its calls only once the server has
// asked for them (as an agent's first call comes after the handshake).
//
//   node tsclient.mjs '{"command": "...", "args": [...], "env": {...}, "cwd": "...",
//                       "roots": ["file:///..."],
//                       "listTools": true, "calls": [{"name": "...", "arguments": {...}}]}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: spec.command,
  args: spec.args,
  env: spec.env,
  cwd: spec.cwd,
  stderr: 'inherit',
});
const client = new Client({ name: 'mcpguard-tsclient', version: '1.0.0' },
  spec.roots ? { capabilities: { roots: { listChanged: true } } } : undefined);
let asked;
const rootsAsked = new Promise((resolve) => { asked = resolve; });
if (spec.roots) {
  client.setRequestHandler(ListRootsRequestSchema, () => {
    setTimeout(asked, 100); // the answer is on its way to the server
    return { roots: spec.roots.map((uri) => ({ uri })) };
  });
}
await client.connect(transport);
if (spec.roots) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('the server never asked for roots')), 20000);
  });
  try {
    await Promise.race([rootsAsked, timeout]);
  } finally {
    clearTimeout(timer); // a pending timer keeps node running after close
  }
}
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
