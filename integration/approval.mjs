// approval is a client on the official TypeScript SDK that answers
// mcpguard's approval prompts (action: ask) with its elicitation handler,
// driven by approval_test.go. It connects over stdio to the command it is
// given, declares form elicitation unless told not to, answers the
// prompts in the order given ({action, decision}, or "never": wait until
// the prompt is withdrawn), makes the calls in order and prints one JSON
// object: {"calls": [{result} | {error}], "prompts": [message...],
// "withdrawn": N}.
//
//   node approval.mjs '{"command": "...", "args": [...], "env": {...},
//                       "elicitation": true, "answers": [...], "calls": [...]}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: spec.command,
  args: spec.args,
  env: spec.env,
  stderr: 'inherit',
});
const capabilities = spec.elicitation ? { elicitation: { form: {} } } : {};
const client = new Client({ name: 'mcpguard-approval', version: '1.0.0' }, { capabilities });
const out = { calls: [], prompts: [], withdrawn: 0 };
const answers = [...(spec.answers ?? [])];
if (spec.elicitation) {
  client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
    out.prompts.push(req.params.message);
    const answer = answers.shift() ?? { action: 'decline' };
    if (answer === 'never') {
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
      out.withdrawn++;
      return { action: 'cancel' };
    }
    const res = { action: answer.action };
    if (answer.decision) {
      res.content = { decision: answer.decision };
    }
    return res;
  });
}
await client.connect(transport);
for (const call of spec.calls) {
  try {
    out.calls.push({ result: await client.callTool({ name: call.name, arguments: call.arguments }) });
  } catch (e) {
    out.calls.push({ error: { code: e.code ?? null, message: String(e.message ?? e) } });
  }
}
// A withdrawn prompt's abort reaches the handler on a later tick.
await new Promise((resolve) => setTimeout(resolve, 200));
process.stdout.write(JSON.stringify(out) + '\n');
await client.close();
