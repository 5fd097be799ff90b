package i18n

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// reasonCalls are the functions whose argument at the index is a key of
// the catalogue: why a field was refused (the core's constructors) and
// what the front ends say through it.
var reasonCalls = map[string]int{
	"Invalid": 1, "invalid": 1, "unknown": 1, "rejected": 1, "add": 1, "New": 0, "tr": 0, "conflict": 0, "tooLate": 0, "invalidSet": 0, "t": 0,
}

// Every key the code writes has Russian words: a missing translation fails
// here, not on a page. The keys are found in the source (every call of a
// reason constructor with a literal), so a new reason is covered.
func TestEveryKeyInTheCodeIsTranslated(t *testing.T) {
	fset := token.NewFileSet()
	var keys, missing int
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
				if x, ok := fn.X.(*ast.Ident); name == "New" && (!ok || x.Name != "i18n") {
					return true // errors.New and the like
				}
			}
			i, ok := reasonCalls[name]
			if !ok || len(call.Args) <= i || name == "tr" && f.Name.Name != "importer" {
				return true // (the bot's tr reads its own messages, by id)
			}
			if name == "New" && f.Name.Name != "i18n" {
				if _, ok := call.Fun.(*ast.Ident); ok {
					return true // another package's own New
				}
			}
			lit, ok := call.Args[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			key, err := strconv.Unquote(lit.Value)
			if err != nil || key == "" {
				return true
			}
			keys++
			if !Has("ru", key) {
				missing++
				t.Errorf("%s: %q has no Russian words", fset.Position(lit.Pos()), key)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if keys < 100 {
		t.Fatalf("found only %d keys in the code: the walk missed the reasons", keys)
	}
	t.Logf("%d keys written by the code, %d without Russian", keys, missing)
}

var verbRE = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// A translation takes the arguments its key does.
func TestTranslationsTakeTheKeysArguments(t *testing.T) {
	for _, lang := range Languages[1:] {
		for _, key := range Keys(lang) {
			tr := catalogue[lang][key]
			if k, v := len(verbRE.FindAllString(key, -1)), len(verbRE.FindAllString(tr, -1)); k != v {
				t.Errorf("%s %q -> %q: %d arguments, not %d", lang, key, tr, v, k)
			}
			if strings.TrimSpace(tr) == "" {
				t.Errorf("%s %q is empty", lang, key)
			}
		}
	}
	for name, label := range fields {
		if !Has("ru", label) {
			t.Errorf("field %s: its label %q has no Russian words", name, label)
		}
	}
}

func TestTextIn(t *testing.T) {
	why := New("shift %s-%s is longer than %d hours", "08:00", "+03:00", 16)
	if got := why.In("ru"); got != "смена 08:00-+03:00 длиннее 16 часов — похоже на ошибку" {
		t.Errorf("ru: %q", got)
	}
	if got := why.Error(); got != "shift 08:00-+03:00 is longer than 16 hours" {
		t.Errorf("en: %q", got)
	}
	if got := Field("2026-03-08 shifts[2]").In("ru"); got != "2026-03-08: Смены" {
		t.Errorf("a field with a prefix: %q", got)
	}
	if got := Field("client.phone").In("ru"); got != "Телефон" {
		t.Errorf("client.phone: %q", got)
	}
	if got := New("no service %q in this salon", "Маникюр").In("ru"); got != "в салоне нет услуги «Маникюр»" {
		t.Errorf("%%q: %q", got)
	}
}
