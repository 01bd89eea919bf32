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

// TestExportedIdentifiersDocumented fails when an exported identifier of
// any package of the module has no doc comment, or a package has no
// package comment.
func TestExportedIdentifiersDocumented(t *testing.T) {
	for _, dir := range packageDirs(t) {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			hasPkgDoc := false
			for _, f := range pkg.Files {
				hasPkgDoc = hasPkgDoc || f.Doc != nil
				for _, missing := range undocumented(f) {
					t.Errorf("%s: %s has no doc comment", fset.Position(missing.Pos()), missing.Name)
				}
			}
			if !hasPkgDoc {
				t.Errorf("package %s (%s) has no package comment", pkg.Name, dir)
			}
		}
	}
}

// undocumented returns the exported identifiers of f without a doc
// comment: functions, methods of exported types, types, and constants and
// variables (a comment on their group counts).
func undocumented(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedReceiver(d.Recv) {
				continue
			}
			out = append(out, d.Name)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
						out = append(out, s.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
							out = append(out, n)
						}
					}
				}
			}
		}
	}
	return out
}

func exportedReceiver(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
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
			return x.IsExported()
		default:
			return false
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
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, pkg := range pkgs {
			for _, f := range pkg.Files {
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
