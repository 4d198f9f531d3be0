package agent

import "encoding/json"

// repeatLimit is how many times in a row (in the flat sequence of the
// turn's calls) the same call with the same arguments runs. The next
// identical call is not run: it gets an error result telling the model the
// result will not change. Only if the model persists with one more
// identical call does the turn end.
const repeatLimit = 3

// repeatRefusal is the result of a call refused as a repetition.
const repeatRefusal = "Not run: identical call repeated; the result will not change. Try something else, or ask the user."

// callKey identifies a tool call by name and canonical arguments.
func callKey(name string, input json.RawMessage) string {
	var v any
	if err := json.Unmarshal(input, &v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			input = b
		}
	}
	return name + "\x00" + string(input)
}

// loopGuard detects a model repeating itself within a turn.
type loopGuard struct {
	last  string
	count int
}

// observe records one response's calls in order. It returns the IDs of the
// calls refused as repetitions, and stop (with the call's name) when the
// model repeated a call again after being refused: the turn ends. Any
// different call resets the count.
func (g *loopGuard) observe(calls []*pendingCall) (refused map[string]bool, name string, stop bool) {
	for _, pc := range calls {
		k := callKey(pc.name, pc.input)
		if k == g.last {
			g.count++
		} else {
			g.last, g.count = k, 1
		}
		switch {
		case g.count > repeatLimit+1:
			return nil, pc.name, true
		case g.count > repeatLimit:
			if refused == nil {
				refused = map[string]bool{}
			}
			refused[pc.id] = true
		}
	}
	return refused, "", false
}
