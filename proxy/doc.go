// Package proxy owns the relay between an agent and one MCP server over
// stdio: framing, the id spaces of both directions, the server process and
// its lifetime. It decides nothing itself: every verdict and every rewrite
// comes from the policy session.
//
// The relay forwards only what went through message.Parse and the policy
// session: a line from the agent reaches the server only as the compact
// bytes of a strictly parsed message that Session.Ingress allowed, and a
// line from the server reaches the agent only as the bytes Session.Egress
// returned. There is no other path from one side to the other. It must
// never forward a line it could not parse, never block one direction on
// the other, and never leave a request without an answer: when the server
// dies, every request in flight gets a JSON-RPC error at once.
//
// # The process
//
// The server runs from its argv (no shell) in its own process group.
// SIGINT and SIGTERM are forwarded to the group. SIGHUP reloads the
// policy (Config.Reload) and is not forwarded: most servers die of it
// (Node's default), and a reload must not end the session. When the agent
// closes stdin the server's stdin is closed, what it still writes is
// drained, and after a grace period the group gets SIGTERM, then SIGKILL.
// Run returns the server's status (128+N for signal N, 127 when it could
// not be started).
//
// # Why the loops look the way they do
//
// Each direction is one goroutine that reads a batch of lines, judges
// each, and writes the batch. The choices below are invisible to users
// but measured (integration/bench and the Benchmark* functions here):
//
//   - Requests in flight live in a ring indexed by their integer id
//     (pending.go), with a map only for string ids and for an id whose slot
//     another request holds: the two loops add and take on two threads for
//     every call, and a hash map scattered a pipelined batch over cache
//     lines that each missed on the other core. FuzzPending holds the table
//     to a plain map with colliding ids.
//   - mcpguard runs with at least three Ps (GOMAXPROCS, unless the user
//     set it, procs.go). Its two loops spend their time blocked in read(2);
//     with as many Ps as loops the runtime's sysmon retakes their Ps on
//     every 20 µs tick.
//   - Each loop passes through the scheduler every 16 batches
//     (runtime.Gosched): a loop that only ever blocks in read(2) looks to
//     sysmon like a goroutine running forever, which it would preempt every
//     10 ms, taking its P out of the read.
//   - On Linux the pipes to the server are blocking with 1 MiB buffers
//     (platform_linux.go), and a loop yields the CPU after a batch of more
//     than one line so the peer can write more before the next read.
package proxy
