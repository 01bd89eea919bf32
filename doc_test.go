package acctapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// packageDirs returns the module's package directories (those with Go
// files), skipping testdata and nested modules.
func packageDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if path != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// parseDir parses the Go files of dir — the test files when tests is
// true, the others otherwise — grouped by package name.
func parseDir(t *testing.T, fset *token.FileSet, dir string, tests bool) map[string][]*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") != tests {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[f.Name.Name] = append(pkgs[f.Name.Name], f)
	}
	return pkgs
}

// TestExportedIdentifiersDocumented fails when an exported identifier of
// any package of the module has no doc comment, or a package has no
// package comment. A comment counts only if it has text: a blank // or a
// directive such as //go:noinline alone does not document anything.
func TestExportedIdentifiersDocumented(t *testing.T) {
	for _, dir := range packageDirs(t) {
		fset := token.NewFileSet()
		pkgs := parseDir(t, fset, dir, false)
		for name, files := range pkgs {
			hasPkgDoc := false
			for _, f := range files {
				hasPkgDoc = hasPkgDoc || hasText(f.Doc)
				for _, missing := range undocumented(f) {
					t.Errorf("%s: %s has no doc comment", fset.Position(missing.pos), missing.name)
				}
			}
			if !hasPkgDoc {
				t.Errorf("package %s (%s) has no package comment", name, dir)
			}
		}
	}
}

// hasText reports whether any of the comment groups says something.
// CommentGroup.Text drops directives and is "" for a nil group.
func hasText(groups ...*ast.CommentGroup) bool {
	for _, g := range groups {
		if strings.TrimSpace(g.Text()) != "" {
			return true
		}
	}
	return false
}

// missingDoc is an exported identifier without a doc comment; name is
// qualified by its type for fields and methods ("Type.Field").
type missingDoc struct {
	pos  token.Pos
	name string
}

// undocumented returns the exported identifiers of f without a doc
// comment: functions, methods of exported types, types, constants and
// variables (a comment on their group counts, and so does a trailing line
// comment), the fields of exported struct types and the methods of
// exported interface types (a doc comment or a trailing line comment;
// fields declared together, as in "A, B string", share one). Embedded
// fields are exempt.
func undocumented(f *ast.File) []missingDoc {
	var out []missingDoc
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || hasText(d.Doc) {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil {
				recv, ok := exportedReceiver(d.Recv)
				if !ok {
					continue
				}
				name = recv + "." + name
			}
			out = append(out, missingDoc{d.Name.Pos(), name})
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if !hasText(s.Doc, d.Doc) {
						out = append(out, missingDoc{s.Name.Pos(), s.Name.Name})
					}
					out = append(out, undocumentedMembers(s.Name.Name, s.Type)...)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && !hasText(s.Doc, d.Doc, s.Comment) {
							out = append(out, missingDoc{n.Pos(), n.Name})
						}
					}
				}
			}
		}
	}
	return out
}

// undocumentedMembers returns the exported fields (of a struct type) or
// methods (of an interface type) of the type named typeName that have
// neither a doc comment nor a trailing line comment.
func undocumentedMembers(typeName string, typ ast.Expr) []missingDoc {
	var members *ast.FieldList
	switch x := typ.(type) {
	case *ast.StructType:
		members = x.Fields
	case *ast.InterfaceType:
		members = x.Methods
	default:
		return nil
	}
	var out []missingDoc
	for _, field := range members.List {
		if hasText(field.Doc, field.Comment) {
			continue
		}
		for _, n := range field.Names { // none for an embedded field
			if n.IsExported() {
				out = append(out, missingDoc{n.Pos(), typeName + "." + n.Name})
			}
		}
	}
	return out
}

// exportedReceiver returns the name of the receiver's base type, and
// whether that type is exported.
func exportedReceiver(recv *ast.FieldList) (string, bool) {
	if len(recv.List) == 0 {
		return "", false
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name, x.IsExported()
		default:
			return "", false
		}
	}
}

// TestEveryPackageHasAnExample fails when a library package has no
// runnable Example (a func Example… in a _test.go file with an // Output:
// comment). Commands (package main) are exempt.
func TestEveryPackageHasAnExample(t *testing.T) {
	for _, dir := range packageDirs(t) {
		if strings.HasPrefix(dir, "internal") || strings.HasPrefix(dir, "cmd") {
			continue
		}
		fset := token.NewFileSet()
		found := false
		for _, files := range parseDir(t, fset, dir, true) {
			for _, f := range files {
				for _, decl := range f.Decls {
					fn, ok := decl.(*ast.FuncDecl)
					if !ok || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
						continue
					}
					for _, cg := range f.Comments {
						if cg.Pos() > fn.Body.Pos() && cg.End() <= fn.Body.End() && strings.Contains(cg.Text(), "Output:") {
							found = true
						}
					}
				}
			}
		}
		if !found {
			t.Errorf("package in %s has no runnable Example (with // Output:)", dir)
		}
	}
}
