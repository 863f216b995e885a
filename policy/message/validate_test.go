package message

import (
	"bytes"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/segmentio/asm/ascii"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// validatorSeeds are lines that probe every way the validator and the
// strict decoder could disagree: each grammar rule, each UTF-8 and escape
// rule, duplicates spelled differently, depth, and the envelope shapes the
// fast path takes.
var validatorSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":"/a"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"task":{"ttl":60000}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","t\u0061sk":{},"arguments":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x","task":{}}}`,
	`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hi\nthere"}]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
	`{"params":{"name":"x","arguments":{}},"method":"tools/call","id":7,"jsonrpc":"2.0"}`,
	`{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" }`,
	"{\"jsonrpc\":\"2.0\",\r\"id\":1,\"method\":\"ping\"}",
	`{"a":1,"a":2}`,
	`{"a":1,"\u0061":2}`,
	`{"\u00e9":1,"é":2}`,
	`{"a":{"b":1},"b":{"b":1}}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k3":7}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k17":7}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k\u0033":7}`,
	`{"k0":{"a":1,"b":{"a":1}},"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":{"k16":1,"k0":2}}`,
	`{"a":"\ud800"}`, `{"a":"\udc00"}`, `{"a":"\ud800\udc00"}`, `{"a":"\ud800\ud800"}`, `{"a":"\ud800\u0041"}`, `{"a":"\uD83D\uDE00"}`,
	"{\"a\":\"\xff\"}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xef\xbf\xbd\"}", "{\"a\":\"\xf4\x90\x80\x80\"}",
	"{\"a\":\"\x7f\"}", "{\"a\":\"\x1f\"}", "{\"a\":\"\t\"}",
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"a":"\/\b\f\n\r\t\"\\"}`,
	`{"a":-0}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1E+9}`, `{"a":-}`, `{"a":1.5e-3}`, `{"a":-12.0E05}`,
	`{"a":tru}`, `{"a":true}`, `{"a":nul}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[]}`, `{"a":{}}`, `{"a":{,}}`, `{"a":1,}`, `{,"a":1}`,
	`{"a":1} x`, `{"a":1} `, `{"a":1}}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":"b"`, `{"a`, `{`,
	`{"x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`,
	`{"x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","argumentſ":{"p":"/etc"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method\u0000":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"x","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}`,
	// The names of MemberSet: spelled out, escaped, nested, past a small
	// object's sixteen members, or only in values and longer names.
	`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"a":{"method":"roots/list"}},"resultType":"input_required"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"inputRequest\u0073":{}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","icons":[{"src":"https://x/i.png"}]}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","\u0075ri":"https://x/"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":"uri icons inputRequests","uris":1,"icon":2,"inputRequest":3,"Uri":4}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"o":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"uri":17}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"inputResponses":{"k":{"roots":[]}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"input\u0052esponses":{}}}`,
}

// longStringSeeds put each byte the string scan must stop at (escapes, a
// quote, controls, DEL, UTF-8 good and bad, the end of the line) before,
// at and past the points where str hands on to vectorScan and where
// its window ends, so that the fuzzers start from every path.
func longStringSeeds() []string {
	var out []string
	ats := []int{31, 40, 127, 128, 129, 136, 255, 256, 383, 384, 385, 640, 900}
	for _, edge := range []int{vectorAfter, vectorAfter + vectorWindow, vectorAfter + 2*vectorWindow} {
		ats = append(ats, edge-8, edge-1, edge, edge+1, edge+8)
	}
	for _, at := range ats {
		pre := strings.Repeat("a", at)
		for _, special := range []string{`\n`, `\"`, `\u00e9`, `\ud800`, `\q`, "\x7f", "\x1f", "\x00", "é", "\xff", "\xed\xa0\x80", `"`, ""} {
			out = append(out, `{"a":"`+pre+special+strings.Repeat("b", 300)+`"}`)
		}
		out = append(out, `{"a":"`+pre, `{"a":"`+pre+`"`, `{"a":"`+pre+`\`, `{"`+pre+`":1,"`+pre+`":2}`)
	}
	return out
}

// decodedMembers lists an object's members as the strict decoder reads
// them: unescaped name and raw value.
func decodedMembers(t *testing.T, obj []byte) (names []string, values []string) {
	d := jsontext.NewDecoder(bytes.NewReader(obj))
	if _, err := d.ReadToken(); err != nil {
		t.Fatal(err)
	}
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		name := tok.String()
		v, err := d.ReadValue()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		values = append(values, string(v))
	}
	return names, values
}

// allStringsPlain reports whether every string in a valid JSON text,
// member names included, decodes to printable ASCII, tab, LF and CR only.
func allStringsPlain(t *testing.T, b []byte) bool {
	d := jsontext.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.ReadToken()
		if err == io.EOF {
			return true
		}
		if err != nil {
			t.Fatal(err)
		}
		if tok.Kind() != '"' {
			continue
		}
		for _, c := range []byte(tok.String()) {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c >= 0x7F {
				return false
			}
		}
	}
}

func spanMembers(line []byte, spans []span) (names []string, values []string) {
	for _, s := range spans {
		names = append(names, unquote(s.name(line)))
		values = append(values, string(s.value(line)))
	}
	return names, values
}

// strictValid is the oracle: go-json-experiment's strict decoder (default
// options: no duplicate names, valid UTF-8) plus the depth limit.
func strictValid(b []byte) bool {
	d := jsontext.NewDecoder(bytes.NewReader(b))
	if _, err := d.ReadValue(); err != nil {
		return false
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return false
	}
	return scanShape(b).depth <= MaxDepth
}

// FuzzValidate holds the validator equal to the strict decoder on every
// input that starts with '{', and its records equal to what the decoder
// reads.
func FuzzValidate(f *testing.F) {
	for _, s := range append(validatorSeeds, longStringSeeds()...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && b[0] == '{' {
			checkValidator(t, b)
		}
	})
}

// checkValidator holds one validator pass over b (which starts with '{')
// to the strict decoder: the same verdict, and on a valid line the same
// whitespace, plain-text and member records.
func checkValidator(t *testing.T, b []byte) {
	v := validate(b)
	defer v.release()
	val := &v.res
	if want := strictValid(b); val.ok != want {
		t.Fatalf("validate(%q).ok = %v, strict decoder says %v", b, val.ok, want)
	}
	if !val.ok {
		return
	}
	compact := jsontext.Value(bytes.Clone(b))
	if err := compact.Compact(); err != nil {
		t.Fatal(err)
	}
	if val.whitespace != !bytes.Equal(compact, b) {
		t.Fatalf("validate(%q).whitespace = %v", b, val.whitespace)
	}
	if val.textPlain && !allStringsPlain(t, b) {
		t.Fatalf("validate(%q).textPlain, but a string holds a character other than printable ASCII, tab, LF, CR", b)
	}
	wantNames, wantValues := decodedMembers(t, b)
	if !val.topOver {
		gotNames, gotValues := spanMembers(b, val.top[:val.nTop])
		if !reflect.DeepEqual(gotNames, wantNames) || !reflect.DeepEqual(gotValues, wantValues) {
			t.Fatalf("validate(%q) recorded %q %q, decoder read %q %q", b, gotNames, gotValues, wantNames, wantValues)
		}
	}
	for i, name := range wantNames {
		if name != "params" || wantValues[i][0] != '{' || val.paramsOver {
			continue
		}
		wn, wv := decodedMembers(t, []byte(wantValues[i]))
		gn, gv := spanMembers(b, val.params[:val.nParams])
		if !reflect.DeepEqual(gn, wn) || !reflect.DeepEqual(gv, wv) {
			t.Fatalf("validate(%q) recorded params %q %q, decoder read %q %q", b, gn, gv, wn, wv)
		}
	}
}

// FuzzParseFast holds the fast path to the slow one: whatever parseFast
// accepts, the jsontext path accepts as the same message.
func FuzzParseFast(f *testing.F) {
	for _, s := range append(validatorSeeds, longStringSeeds()...) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkFastPath)
}

// checkFastPath holds parseFast to the jsontext path on b: a line it takes
// is read by the slow path as the same message; a line it leaves, it
// leaves the message zero.
func checkFastPath(t *testing.T, b []byte) {
	fast := new(Message)
	if !parseFast(fast, b, new(validator)) {
		if !reflect.DeepEqual(*fast, Message{}) {
			t.Fatalf("parseFast(%q) fell back but left %+v", b, *fast)
		}
		return
	}
	slow, err := parse(b)
	if err != nil {
		t.Fatalf("parseFast accepted %q; the strict path refuses it: %v", b, err)
	}
	if want := rawjson.ScanEscapes(fast.Raw); fast.Escapes() != want {
		t.Fatalf("parseFast(%q): escapes %+v, rawjson.ScanEscapes %+v", b, fast.Escapes(), want)
	}
	if want := membersOf(t, fast.Raw); fast.Members() != want {
		t.Fatalf("parseFast(%q): members %b, every member name read by jsontext %b", b, fast.Members(), want)
	}
	if in := MembersIn(fast.Raw, fast.Escapes()); fast.Members()&^in != 0 {
		t.Fatalf("parseFast(%q): members %b, not all in MembersIn's %b", b, fast.Members(), in)
	}
	fast.TextPlain, fast.escapes, fast.members, fast.passRead = false, rawjson.Escapes{}, 0, false
	if !reflect.DeepEqual(normalized(fast), normalized(slow)) {
		t.Fatalf("parseFast(%q) = %+v, slow path = %+v", b, *fast, *slow)
	}
}

// membersOf is the reference of the parser's MemberSet: the names of it
// that member names of b have, at any depth, as jsontext reads them.
func membersOf(t *testing.T, b []byte) MemberSet {
	var set MemberSet
	d := jsontext.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.ReadToken()
		if err == io.EOF {
			return set
		}
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if _, n := d.StackIndex(d.StackDepth()); tok.Kind() == '"' && n%2 == 1 {
			if k, _ := d.StackIndex(d.StackDepth()); k == '{' {
				set |= memberOf([]byte(tok.String()))
			}
		}
	}
}

// normalized drops the difference between a nil and an empty slice, and
// the validator ParseInto keeps for the next message.
func normalized(m *Message) Message {
	c := *m
	c.v = nil
	for _, v := range []*jsontext.Value{&c.ID, &c.Params, &c.Result, &c.Error, &c.Arguments, &c.RequestID, &c.InputResponses} {
		if *v != nil && len(*v) == 0 {
			*v = jsontext.Value{}
		}
	}
	c.Raw = bytes.Clone(c.Raw)
	return c
}

// TestValidatorSeeds runs the fuzz properties over the seeds and checks
// that the fast path takes the ordinary messages (it would be no use if it
// fell back on them).
func TestValidatorSeeds(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":"/a"}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hi\nthere"}]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
		`{"params":{"name":"x","arguments":{}},"method":"tools/call","id":7,"jsonrpc":"2.0"}`,
		`{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" }`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	} {
		m := new(Message)
		if !parseFast(m, []byte(s), new(validator)) {
			t.Errorf("parseFast(%s) fell back to the slow path", s)
			continue
		}
		if !m.TextPlain {
			t.Errorf("parseFast(%s): TextPlain false for plain ASCII", s)
		}
	}
	for _, s := range []string{`{"a":"é"}`, `{"a":"\u0041"}`, "{\"a\":\"\x7f\"}", `{"a":"\f"}`} {
		v := validate([]byte(s))
		val := v.res
		v.release()
		if !val.ok || val.textPlain {
			t.Errorf("validate(%s): ok=%v textPlain=%v, want ok and not plain", s, val.ok, val.textPlain)
		}
	}
}

// TestParseMemoryManyMembers: a hostile 16 MiB object of two million tiny
// members must not cost more than the relay's memory bound (3x the message
// + 32 MiB) to check for duplicate names; copying every name into a map
// cost 25x.
func TestParseMemoryManyMembers(t *testing.T) {
	b := []byte(`{"jsonrpc":"2.0","id":1,"result":{`)
	for i := 0; len(b) < 16<<20; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"', 'k')
		b = strconv.AppendInt(b, int64(i), 36)
		b = append(b, `":0`...)
	}
	b = append(b, "}}"...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var m Message
	err := ParseInto(&m, b)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if used, bound := after.TotalAlloc-before.TotalAlloc, uint64(3*len(b)+32<<20); used > bound {
		t.Fatalf("parsing a %d-byte object of tiny members allocated %d bytes, over %d", len(b), used, bound)
	}
	// The same object with its last member repeated (escaped) is refused.
	dup := append(bytes.Clone(b[:len(b)-2]), `,"\u006b0":1}}`...)
	if err := ParseInto(&m, dup); err == nil {
		t.Fatal("a duplicate name among two million members was not refused")
	}
}

// grammarPieces are the fragments FuzzValidateGrammar builds lines from:
// mostly well-formed JSON pieces, so that the fuzzer reaches the deep cases
// (escaped duplicates, surrogate pairs, nesting, numbers) random bytes
// rarely form, plus a few that break the grammar.
var grammarPieces = []string{
	`{`, `}`, `[`, `]`, `,`, `:`, ` `, "\t", "\r\n",
	`"a"`, `"b"`, `"\u0061"`, `"\u0062"`, `"a\"b"`, `"\\"`, `"\/"`, `"é"`, `"\u00e9"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, "\"\xed\xa0\x80\"", "\"\xff\"", "\"\x7f\"", "\"\x01\"",
	`"\b"`, `"\f"`, `"\x"`, `"\u12"`, `0`, `-0`, `12`, `01`, `1.5`, `1.`, `1e5`, `1E-2`, `-`, `true`, `false`, `null`, `tru`,
	`"jsonrpc"`, `"2.0"`, `"id"`, `"method"`, `"params"`, `"result"`, `"error"`, `"name"`, `"arguments"`, `"tools/call"`,
	`"k0"`, `"k1"`, `"k2"`, `"k3"`, `"k4"`, `"k5"`, `"k6"`, `"k7"`, `"k8"`, `"k9"`, `"kA"`, `"kB"`, `"kC"`, `"kD"`, `"kE"`, `"kF"`, `"kG"`, `"k\u0030"`,
}

// FuzzValidateGrammar is FuzzValidate and FuzzParseFast on lines
// assembled from grammar pieces: each input byte picks the next piece.
func FuzzValidateGrammar(f *testing.F) {
	f.Add([]byte{0, 9, 10, 12, 10, 9, 14, 10, 26, 1})
	f.Add([]byte{0, 9, 10, 42, 5, 9, 10, 43, 1})
	f.Fuzz(func(t *testing.T, picks []byte) {
		b := []byte{'{'}
		for _, p := range picks {
			b = append(b, grammarPieces[int(p)%len(grammarPieces)]...)
		}
		checkValidator(t, b)
		checkFastPath(t, b)
	})
}

// FuzzParseIntoReused parses two lines into one Message, as the relay's
// loops do, and holds the second result to a fresh Parse of that line: what
// ParseInto keeps from the last message (a tool name to reuse) must never
// show through. The seeds are names that read alike only before unescaping.
func FuzzParseIntoReused(f *testing.F) {
	call := func(name string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`)
	}
	f.Add(call(`a\\\\b`), call(`a\\b`))
	f.Add(call(`a\\b`), call(`a\\\\b`))
	f.Add(call(`run`), call(`r\u0075n`))
	f.Add(call(`r\u0075n`), call(`run`))
	f.Add(call(`echo`), call(`echo`))
	f.Add(call(`echo`), []byte(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"echo"}}`))
	f.Add(call(`echo`), []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var m Message
		_ = ParseInto(&m, first)
		err := ParseInto(&m, second)
		fresh, ferr := Parse(second)
		if (err == nil) != (ferr == nil) {
			t.Fatalf("after %q, ParseInto(%q) err %v; fresh Parse err %v", first, second, err, ferr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(normalized(&m), normalized(fresh)) {
			t.Fatalf("after %q, ParseInto(%q) = %+v; fresh Parse = %+v", first, second, m, *fresh)
		}
	})
}

// FuzzVectorScan holds vectorScan to what str relies on: what it skips,
// from i to where it stops, is string content that the 8-byte scan would
// have accepted (printable ASCII, simple escapes, no unescaped quote), with
// the same escaped and plain-text findings; where it reports the end, the
// byte before is the closing quote. It also holds ascii.ValidPrint, whose
// vector code it trusts, to the byte-wise definition.
func FuzzVectorScan(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 300)+`"`), 0)
	f.Add([]byte(strings.Repeat("a", 255)+"\x7f"+strings.Repeat("a", 300)), 3)
	f.Add([]byte(strings.Repeat(strings.Repeat("x", 79)+`\n`, 8)+`"`), 0)
	f.Add([]byte(strings.Repeat("a", 254)+`\"`+strings.Repeat("b", 10)+`"`), 0)
	f.Add([]byte(strings.Repeat("a", 255)+`\n"`), 0)
	f.Add([]byte(strings.Repeat("a", 255)+`\`), 0)
	f.Add([]byte(`\b\f\t\/\\\"\u0041"`), 0)
	f.Add([]byte(strings.Repeat(`\"`, 200)+`"`), 1)
	f.Add([]byte(strings.Repeat("a", 600)+"é"), 7)
	f.Fuzz(func(t *testing.T, b []byte, i int) {
		if i < 0 || i > len(b) {
			return
		}
		v := &validator{b: b}
		v.res.textPlain = true
		next, escaped, closed, _ := v.vectorScan(i)
		if next < i || next > len(b) {
			t.Fatalf("vectorScan(%q, %d) = %d, out of range", b, i, next)
		}
		body := b[i:next]
		if closed {
			if next == i || b[next-1] != '"' {
				t.Fatalf("vectorScan(%q, %d) closed at %d, not after a quote", b, i, next)
			}
			body = b[i : next-1]
		}
		wantEscaped, wantPlain := false, true
		for k := 0; k < len(body); k++ {
			switch c := body[k]; {
			case c == '"':
				t.Fatalf("vectorScan(%q, %d) = %d skips an unescaped quote at %d", b, i, next, i+k)
			case c < 0x20 || c > 0x7E:
				t.Fatalf("vectorScan(%q, %d) = %d skips byte %#x at %d", b, i, next, c, i+k)
			case c == '\\':
				if k+1 >= len(body) || !strings.ContainsRune(`"\/nrtbf`, rune(body[k+1])) {
					t.Fatalf("vectorScan(%q, %d) = %d skips an escape it does not check at %d", b, i, next, i+k)
				}
				wantEscaped = true
				wantPlain = wantPlain && body[k+1] != 'b' && body[k+1] != 'f'
				k++
			}
		}
		if escaped != wantEscaped || v.res.textPlain != wantPlain {
			t.Fatalf("vectorScan(%q, %d): escaped %v, plain %v; the skipped text says %v, %v", b, i, escaped, v.res.textPlain, wantEscaped, wantPlain)
		}
		want := true
		for _, c := range b {
			want = want && c >= 0x20 && c <= 0x7E
		}
		if got := ascii.ValidPrint(b); got != want {
			t.Fatalf("ascii.ValidPrint(%q) = %v, want %v", b, got, want)
		}
	})
}
