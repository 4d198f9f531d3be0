// Package loopguard detects a model repeating itself within a turn: the
// same tool call (name and canonical JSON arguments) many times in a row.
//
// A Guard sees the turn's calls in the order the model made them. The
// first Limit identical calls in a row run; the next one is refused (its
// result is Refusal, so the model learns the result will not change); one
// more identical call after that ends the turn. Any different call resets
// the count. A Guard is not safe for concurrent use; its zero value is
// ready.
package loopguard

import "encoding/json"

// Limit is how many times in a row the same call with the same arguments
// runs.
const Limit = 3

// Refusal is the result of a call refused as a repetition.
const Refusal = "Not run: identical call repeated; the result will not change. Try something else, or ask the user."

// Verdict is what becomes of one call.
type Verdict int

const (
	// Run: the call runs.
	Run Verdict = iota
	// Refuse: the call does not run; its result is Refusal.
	Refuse
	// Stop: the model repeated the call again after being refused; the
	// turn ends.
	Stop
)

// Guard counts identical calls in a row.
type Guard struct {
	last  string
	count int
}

// Observe records the next call of the turn and says what becomes of it.
func (g *Guard) Observe(name string, input json.RawMessage) Verdict {
	k := key(name, input)
	if k == g.last {
		g.count++
	} else {
		g.last, g.count = k, 1
	}
	switch {
	case g.count > Limit+1:
		return Stop
	case g.count > Limit:
		return Refuse
	}
	return Run
}

// key identifies a tool call by name and canonical arguments.
func key(name string, input json.RawMessage) string {
	var v any
	if err := json.Unmarshal(input, &v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			input = b
		}
	}
	return name + "\x00" + string(input)
}
