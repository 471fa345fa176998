package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/skbtrace/skbtrace/internal/golden"
)

// grammarTypes are the g* types of grammar.go, each of which descent.go
// transliterates.
var grammarTypes = []any{gScript{}, gProbe{}, gSpec{}, gBlock{}, gStmt{}, gIf{}, gFor{}, gWhile{}, gUnroll{}, gExpr{},
	gBinary{}, gOpArg{}, gUnary{}, gCast{}, gPostfix{}, gSelector{}, gPrimary{}, gParen{}, gElem{}, gTypeOf{}}

// TestGrammarUnchanged keeps the grammar descent.go was written for in
// testdata/grammar.golden: participle's EBNF of it, and every field with
// its tag. When grammar.go changes, this file changes: descent.go must
// change the same way (and FuzzDescent then checks it does).
func TestGrammarUnchanged(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "lookahead %d\n\n%s\n", lookahead, parser().String())
	for _, v := range grammarTypes {
		ty := reflect.TypeOf(v)
		fmt.Fprintf(&b, "\n%s\n", ty.Name())
		for i := range ty.NumField() {
			f := ty.Field(i)
			fmt.Fprintf(&b, "\t%s %s", f.Name, f.Type)
			if tag := f.Tag.Get("parser"); tag != "" {
				fmt.Fprintf(&b, " %s", tag)
			}
			b.WriteByte('\n')
		}
	}
	golden.Compare(t, "testdata/grammar.golden", []byte(b.String()))
}

// corpus is every script the tests hold: the parser's and checker's
// golden inputs, the bad-input and bpftrace corpora, the scripts shipped,
// and the fuzzer's corpus of FuzzParseCheck.
func corpus(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, g := range []string{"testdata/parse/*.st", "../check/testdata/*/*.st", "../scripts/*.st",
		"../test/vm/testdata/*/*.bt", "../cmd/skbtrace/testdata/*/*.st", "../cmd/skbtrace/testdata/*/*.bt"} {
		files, _ := filepath.Glob(g)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = string(b)
		}
	}
	// bpftrace-corpus.txt: entries after "%%" lines.
	b, err := os.ReadFile("../cmd/skbtrace/testdata/bpftrace-corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	for i, entry := range strings.Split(string(b), "\n%%")[1:] {
		_, text, _ := strings.Cut(entry, "\n")
		out[fmt.Sprintf("bpftrace-corpus.txt#%d", i)] = text
	}
	fuzz, _ := filepath.Glob("../check/testdata/fuzz/FuzzParseCheck/*")
	for _, f := range fuzz {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, arg, _ := strings.Cut(string(b), "\n")
		arg = strings.TrimSpace(arg)
		text, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(arg, "string("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = text
	}
	if len(out) < 800 {
		t.Fatalf("only %d scripts in the corpus", len(out))
	}
	return out
}

// FuzzDescent compares descent with participle on every range Parse
// parses: descent accepts exactly what participle accepts, with the same
// tree. Its seeds, which go test runs, are the whole test corpus.
func FuzzDescent(f *testing.F) {
	for _, text := range corpus(f) {
		f.Add(text)
	}
	// Branches that fail just within and just beyond participle's
	// lookahead: the cast fails at its 4th token and the parenthesis is
	// tried, or at its 5th and the parse stops there.
	f.Add("BEGIN { $x = (uint32 * * 3); }")
	f.Add("BEGIN { $x = (uint32 * * * 3); }")
	// sizeof and offsetof failing at each of their parts.
	for _, e := range []string{"sizeof", "sizeof + 1", "sizeof(struct)", "sizeof(struct x *", "offsetof(x, )",
		"offsetof(struct a, b.)", "offsetof(struct a, b.c.d)", "offsetof(struct a b)", "sizeof(uint8 * 2)", "sizeof(x)(1)"} {
		f.Add("BEGIN { $x = " + e + "; }")
	}
	// Tuples, records and loops failing at each of their parts.
	for _, e := range []string{"(1, 2", "(1,,)", "(,)", "(a=1, 2)", "(a=, b=2)", "(a==1, b)", "$t.0.1", "$t.", "$t.0x", "(a=1)(2)"} {
		f.Add("BEGIN { $x = " + e + "; }")
	}
	for _, s := range []string{"for", "for (", "for ($i", "for ($i :", "for ($i : 0..", "for ($i : 0..5", "for ($i : 0..5)",
		"for $i : 0 .. 5 {}", "for ($kv : @m) {}", "for ($kv : @m[1]) {}", "for $i : 0..5) {}", "for ($i 0..5) {}", "break", "continue;", "break 1",
		"while", "while (", "while (1", "while (1)", "while (1) {", "while 1 {}", "unroll", "unroll(", "unroll(3", "unroll(3)", "unroll 3 {}", "return", "return 1"} {
		f.Add("BEGIN { " + s + " }")
	}
	f.Fuzz(func(t *testing.T, text string) { compareParsers(t, "fuzz.st", text) })
}

// compareParsers compares descent with participle on the ranges Parse
// would parse in text.
func compareParsers(t *testing.T, name, text string) {
	t.Helper()
	src := &Source{Name: name, Text: text}
	text, macros := preprocess(src, stripShebang(text), &Diagnostics{Src: src})
	for _, ch := range scan(src, text, &Diagnostics{Src: src}) {
		// The pieces Parse falls back to after an error, too.
		for _, r := range append([]chunk{ch}, splitAtProbeLines(text, ch)[1:]...) {
			rp := &rangeParser{src: src, text: text, macros: macros}
			want, werr := lexer.Upgrade(rp.lexer(r))
			var wantTree *gScript
			if werr == nil {
				wantTree, werr = parser().ParseFromLexer(want)
			}
			toks, lerr := appendTokens(nil, rp.lexer(r))
			var got *gScript
			ok := false
			if lerr == nil {
				d := descent{toks: toks, nodes: &descentNodes{}}
				got, ok = d.parseScript()
			}
			switch {
			case ok && werr != nil:
				t.Errorf("%s %q: descent accepts it, participle says %v", name, text[r.start:r.end], werr)
			case !ok && werr == nil:
				t.Errorf("%s %q: participle accepts it, descent does not", name, text[r.start:r.end])
			case ok && !reflect.DeepEqual(got, wantTree):
				t.Errorf("%s %q: the trees differ:\n%s", name, text[r.start:r.end], treeDiff(got, wantTree))
			}
		}
	}
}

// treeDiff shows the two trees.
func treeDiff(got, want *gScript) string {
	return fmt.Sprintf("descent:\n%s\nparticiple:\n%s", treeString(got), treeString(want))
}

// treeString writes a g* tree one field a line.
func treeString(v any) string {
	var b strings.Builder
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				b.WriteString("nil\n")
				return
			}
			walk(v.Elem(), depth)
		case reflect.Slice:
			fmt.Fprintf(&b, "[%d] (nil %v)\n", v.Len(), v.IsNil())
			for i := range v.Len() {
				fmt.Fprintf(&b, "%s- ", strings.Repeat("  ", depth+1))
				walk(v.Index(i), depth+1)
			}
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[lexer.Position]() {
				fmt.Fprintf(&b, "%+v\n", v.Interface())
				return
			}
			fmt.Fprintf(&b, "%s\n", v.Type().Name())
			for i := range v.NumField() {
				fmt.Fprintf(&b, "%s%s: ", strings.Repeat("  ", depth+1), v.Type().Field(i).Name)
				walk(v.Field(i), depth+1)
			}
		default:
			fmt.Fprintf(&b, "%q\n", fmt.Sprint(v.Interface()))
		}
	}
	walk(reflect.ValueOf(v), 0)
	return b.String()
}
