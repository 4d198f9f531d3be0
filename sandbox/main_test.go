package sandbox

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	Init()
	attacker()
	goleak.VerifyTestMain(m)
}
