package proxy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxMethods is the most methods one type of this package may have, its
// embedded types' counted in: a part a newcomer can read at once.
const maxMethods = 40

// No part of the proxy grows back into a receiver for everything: each type's
// method set (declared, plus what an embedded type of this package brings)
// stays within maxMethods.
func TestNoMethodSetOverTheBar(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	declared := map[string]int{}
	embeds := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					declared[typeName(d.Recv.List[0].Type)]++
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, field := range st.Fields.List {
						if len(field.Names) == 0 {
							embeds[ts.Name.Name] = append(embeds[ts.Name.Name], typeName(field.Type))
						}
					}
				}
			}
		}
	}
	if declared["Proxy"] == 0 || declared["core"] == 0 {
		t.Fatalf("the count found no methods of Proxy or core: %v", declared)
	}
	for name, n := range declared {
		for _, e := range embeds[name] {
			n += declared[e]
		}
		if n > maxMethods {
			t.Errorf("%s has %d methods (with what it embeds), over %d: give a part of it a type of its own", name, n, maxMethods)
		}
	}
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return typeName(t.X)
	}
	return ""
}
