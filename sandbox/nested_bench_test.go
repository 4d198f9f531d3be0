package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkNestedGits measures the search for nested repositories in a
// root of 10 × 10 × 10 × 10 directories (the search's whole depth, 11,110
// directories) holding 10 repositories.
func BenchmarkNestedGits(b *testing.B) {
	root := b.TempDir()
	for i := range 10 {
		for j := range 10 {
			for k := range 10 {
				for l := range 10 {
					if err := os.MkdirAll(filepath.Join(root, fmt.Sprint(i), fmt.Sprint(j), fmt.Sprint(k), fmt.Sprint(l)), 0o755); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		if err := os.Mkdir(filepath.Join(root, fmt.Sprint(i), "0", ".git"), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if n := len(nestedGits(root)); n != 10 {
			b.Fatalf("%d repositories found", n)
		}
	}
}
