package config

import (
	"strings"
	"testing"
)

// BenchmarkLoadLargeProjectFile measures the worst case a hostile project
// file can cause: a file of maximum size with a key on every line.
func BenchmarkLoadLargeProjectFile(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("instructions = \"x\"\npermissions.rules = [\n")
	for sb.Len() < maxFileBytes-100 {
		sb.WriteString("{action=\"deny\",tool=\"t\"},\n")
	}
	sb.WriteString("]\n")
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		c := defaults()
		if err := loadProject(&c, "/p/.acpd/config.toml", data); err != nil {
			b.Fatal(err)
		}
	}
}
