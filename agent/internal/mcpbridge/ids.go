package mcpbridge

import (
	"crypto/rand"
	"encoding/hex"

	"acpd/acp"
)

// textChunk is an agent message of its own holding text.
func textChunk(text string) *acp.ContentChunk {
	id := acp.MessageID(newID("m_"))
	return &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}, MessageID: &id}
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
