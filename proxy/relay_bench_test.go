package proxy

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// BenchmarkRelayCall is the user-space work of one relayed tools/call
// under the baseline policy, without the pipes: the ingress loop's parse,
// judgement, bookkeeping and buffered write of the request, and the egress
// loop's of the reply. The messages are integration/bench's echo call
// (256 bytes of arguments) and its reply, with a new id each call.
func BenchmarkRelayCall(b *testing.B) {
	r := &relay{
		cfg:      Config{Policy: policy.Baseline()},
		log:      eventlog.Nop(),
		session:  policy.Baseline().NewSession(),
		pending:  newPendingTable(),
		toAgent:  newLineWriter(io.Discard),
		toServer: newLineWriter(io.Discard),
	}
	text := strings.Repeat("x", 245)
	var req, resp []byte
	var in, out message.Message
	b.ReportAllocs()
	id := 0
	for b.Loop() {
		id++
		req = strconv.AppendInt(append(req[:0], `{"jsonrpc":"2.0","id":`...), int64(id), 10)
		req = append(append(append(req, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...), text...), `"}}}`...)
		resp = strconv.AppendInt(append(resp[:0], `{"jsonrpc":"2.0","id":`...), int64(id), 10)
		resp = append(append(append(resp, `,"result":{"content":[{"type":"text","text":"`...), text...), `"}]}}`...)
		if err := message.ParseInto(&in, req); err != nil {
			b.Fatal(err)
		}
		r.fromAgent(&in)
		if err := message.ParseInto(&out, resp); err != nil {
			b.Fatal(err)
		}
		r.fromServer(&out)
	}
	if r.pending.n != 0 {
		b.Fatalf("%d requests left in flight", r.pending.n)
	}
}
