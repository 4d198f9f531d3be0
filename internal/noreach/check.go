package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// allowUnsafe lists the files (slash-separated, relative to the module root)
// that may import "unsafe", with the reason.
var allowUnsafe = map[string]string{
	"internal/procgroup/group_windows.go": "the job object API takes its structures by pointer (unsafe.Pointer, unsafe.Sizeof)",
	"sandbox/seccomp_linux.go":            "seccomp(2) takes the filter program by pointer (unsafe.Pointer to a sock_fprog)",
	"sandbox/seccomp_linux_test.go":       "the test calls the filtered syscalls (keyctl, io_uring_setup, ioctl) with pointer arguments",
}

// check returns one finding per offending place in the .go files under root.
func check(root string) ([]string, error) {
	var findings []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// bin and dist at the root are build outputs (the Windows
			// tests' overlay, the release archives), not the module's code.
			top := filepath.Dir(path) == filepath.Clean(root) && (name == "bin" || name == "dist")
			if path != root && (top || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		findings = append(findings, checkFile(fset, filepath.ToSlash(rel), f)...)
		return nil
	})
	return findings, err
}

func checkFile(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	report := func(pos token.Pos, format string, args ...any) {
		p := fset.Position(pos)
		out = append(out, fmt.Sprintf("%s:%d:%d: %s", rel, p.Line, p.Column, fmt.Sprintf(format, args...)))
	}
	reflectName := ""
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		switch path {
		case "unsafe":
			if _, ok := allowUnsafe[rel]; !ok {
				report(imp.Pos(), `imports "unsafe"`)
			}
		case "reflect":
			reflectName = "reflect"
			if imp.Name != nil {
				reflectName = imp.Name.Name
			}
		}
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				report(c.Pos(), "//go:linkname reaches into another package")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch name := sel.Sel.Name; {
		case name == "UnsafePointer", name == "UnsafeAddr":
			report(sel.Sel.Pos(), "reflect's %s makes a writable pointer out of any value", name)
		case name == "NewAt" && isIdent(sel.X, reflectName):
			report(sel.Sel.Pos(), "reflect.NewAt makes a writable pointer out of any address")
		case name == "FieldByName" && len(call.Args) == 1:
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if field, err := strconv.Unquote(lit.Value); err == nil && !isExported(field) {
					report(lit.Pos(), "FieldByName(%s) looks up an unexported field", lit.Value)
				}
			}
		}
		return true
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && name != "" && id.Name == name
}

func isExported(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}
