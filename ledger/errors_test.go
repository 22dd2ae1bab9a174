package ledger

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strconv"
	"strings"
	"testing"
)

// notRules are the package's exported errors that no tx fails by: the tx
// builder's, which reports a wallet's own shortfall.
var notRules = map[string]bool{"ErrCannotBalance": true}

// TestEveryErrorHasARule: each exported Err… variable of the package is a
// rule with a code and a class, so a rule added without one fails here,
// and codes are distinct.
func TestEveryErrorHasARule(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, f := range pkgs["ledger"].Files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Err") || !name.IsExported() || notRules[name.Name] {
						continue
					}
					found++
					text, ok := sentinelText(vs, i)
					if !ok {
						t.Errorf("%s: not an errors.New(\"…\") this test can read", name.Name)
						continue
					}
					rule, ok := ruleWorded(text)
					if !ok || rule.Code() == "" || rule.Class() == 0 {
						t.Errorf("%s (%q) has no rule with a code and a class in errors.go", name.Name, text)
					}
				}
			}
		}
	}
	if found != NumRules {
		t.Errorf("%d rule errors declared, %d rules", found, NumRules)
	}
	codes := map[string]bool{}
	for i, r := range Rules() {
		if codes[r.Code()] {
			t.Errorf("code %q used twice", r.Code())
		}
		codes[r.Code()] = true
		if back, ok := RuleByCode(r.Code()); !ok || back != r || r.Index() != i {
			t.Errorf("RuleByCode(%q) = %+v, %v; want rule %d", r.Code(), back, ok, i)
		}
		if got, ok := RuleOf(fmt.Errorf("tx 3: %w: detail", r.Err())); !ok || got != r {
			t.Errorf("RuleOf(wrapped %q) = %+v, %v", r.Code(), got, ok)
		}
	}
	if _, ok := RuleOf(ErrCannotBalance); ok {
		t.Error("ErrCannotBalance is a rule")
	}
}

// sentinelText is the text of the errors.New declaring the i-th name of vs.
func sentinelText(vs *ast.ValueSpec, i int) (string, bool) {
	if i >= len(vs.Values) {
		return "", false
	}
	call, ok := vs.Values[i].(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	text, err := strconv.Unquote(lit.Value)
	return text, err == nil
}

// ruleWorded is the rule whose sentinel says text.
func ruleWorded(text string) (Rule, bool) {
	for _, r := range Rules() {
		if r.Err().Error() == text {
			return r, true
		}
	}
	return Rule{}, false
}
