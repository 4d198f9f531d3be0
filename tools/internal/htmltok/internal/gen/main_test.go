package main

import (
	"bytes"
	"os"
	"testing"
)

// TestUpToDate: entity.go is what gen makes of the x/net/html that go.mod
// requires.
func TestUpToDate(t *testing.T) {
	src, err := sourceFile()
	if err != nil {
		t.Skip(err)
	}
	want, err := generate(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../entity.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("entity.go is out of date: go generate acpd/tools/internal/htmltok")
	}
}
