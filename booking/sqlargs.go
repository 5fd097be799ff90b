package booking

import (
	"fmt"
	"sync"
)

// Statements with many parameters are written with @name placeholders, for
// reading; pgx.NamedArgs would rewrite such a statement on every call,
// which for Book's large statement costs more than the statement's own
// encoding. positional rewrites each distinct text once, and caches it.

type compiledSQL struct {
	sql   string   // with $1, $2, ...
	names []string // the name of each $n
}

var compiled sync.Map // statement text -> *compiledSQL

// positional returns sql with its @name placeholders as $n, and args in
// that order. A name used twice is one parameter. It panics on a name
// without a value: a programming error, found by any test of the statement.
func positional(sql string, args map[string]any) (string, []any) {
	c, ok := compiled.Load(sql)
	if !ok {
		c, _ = compiled.LoadOrStore(sql, compile(sql))
	}
	cs := c.(*compiledSQL)
	out := make([]any, len(cs.names))
	for i, n := range cs.names {
		v, ok := args[n]
		if !ok {
			panic(fmt.Sprintf("booking: no value for @%s", n))
		}
		out[i] = v
	}
	return cs.sql, out
}

func compile(sql string) *compiledSQL {
	var b []byte
	var names []string
	index := map[string]int{}
	ident := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(sql); i++ {
		if sql[i] != '@' || i+1 >= len(sql) || !ident(sql[i+1]) {
			b = append(b, sql[i])
			continue
		}
		j := i + 1
		for j < len(sql) && ident(sql[j]) {
			j++
		}
		name := sql[i+1 : j]
		n, ok := index[name]
		if !ok {
			names = append(names, name)
			n = len(names)
			index[name] = n
		}
		b = fmt.Appendf(b, "$%d", n)
		i = j - 1
	}
	return &compiledSQL{sql: string(b), names: names}
}
