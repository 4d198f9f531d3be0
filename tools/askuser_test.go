package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"acpd/acp"
	"acpd/permissions"
)

// askEnv is a testEnv whose user answers ask_user's forms with answer
// (nil: never, until the request is withdrawn).
type askEnv struct {
	*testEnv
	answer  func(message string, schema acp.ElicitationSchema) (acp.CreateElicitationResponse, error)
	timeout time.Duration
	asked   int
}

func (e *askEnv) AskUser(ctx context.Context, c *Call, message string, schema acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
	e.asked++
	if e.answer == nil {
		<-ctx.Done()
		return acp.CreateElicitationResponse{}, ctx.Err()
	}
	return e.answer(message, schema)
}

func (e *askEnv) AskTimeout() time.Duration { return e.timeout }

func accept(content map[string]acp.ElicitationContentValue) func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
	return func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
		return acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{Content: content}}, nil
	}
}

func str(s string) acp.ElicitationContentValue { return acp.ElicitationContentValue{String: &s} }

// TestAskUserAnswers: each answer of the form reaches the model as a
// sentence of its own: the choice, the words typed, a decline, a cancel,
// and a client that fails.
func TestAskUserAnswers(t *testing.T) {
	t.Parallel()
	in := `{"question":"Which database?","choices":["Postgres","SQLite"]}`
	tests := []struct {
		name   string
		in     string
		answer func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error)
		want   string
		isErr  bool
	}{
		{name: "choice", in: in, answer: accept(map[string]acp.ElicitationContentValue{AskChoiceField: str("SQLite")}), want: "The user answered: SQLite"},
		{name: "typed", in: in, answer: accept(map[string]acp.ElicitationContentValue{AskCustomField: str(" DuckDB ")}), want: "The user answered: DuckDB"},
		{name: "both", in: in, answer: accept(map[string]acp.ElicitationContentValue{AskChoiceField: str("SQLite"), AskCustomField: str("in memory")}), want: "The user answered: SQLite (and wrote: in memory)"},
		{name: "multi", in: `{"question":"Which?","choices":["a","b","c"],"multi_select":true}`,
			answer: accept(map[string]acp.ElicitationContentValue{AskChoiceField: {StringArray: []string{"a", "c"}}}), want: "The user answered: a, c"},
		{name: "empty", in: in, answer: accept(nil), want: "without choosing or writing anything"},
		{name: "decline", in: in, answer: func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
			return acp.CreateElicitationResponse{Decline: &acp.CreateElicitationResponseDecline{}}, nil
		}, want: "The user declined to answer."},
		{name: "cancel", in: in, answer: func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
			return acp.CreateElicitationResponse{Cancel: &acp.CreateElicitationResponseCancel{}}, nil
		}, want: "The user cancelled"},
		{name: "failed", in: in, answer: func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
			return acp.CreateElicitationResponse{}, errors.New("boom")
		}, want: "could not be shown: boom", isErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &askEnv{testEnv: newTestEnv(t, permissions.ModeAsk), answer: tc.answer}
			res := askRun(t, t.Context(), e, tc.in)
			if res.IsError != tc.isErr || !strings.Contains(res.Text, tc.want) || res.EndTurn != "" {
				t.Fatalf("result = %+v, want %q (error %v)", res, tc.want, tc.isErr)
			}
			if e.asked != 1 {
				t.Fatalf("asked %d times", e.asked)
			}
			if !tc.isErr && (len(res.Content) != 1 || !strings.Contains(res.Content[0].Content.Content.Text.Text, "?\n\n")) {
				t.Errorf("card %+v, want the question and its outcome", res.Content)
			}
		})
	}
}

// askRun runs ask_user in env (an Env, or an Asker) with the input in.
func askRun(t *testing.T, ctx context.Context, env Env, in string) Result {
	t.Helper()
	return askUserTool().Run(ctx, env, &Call{ID: "call-ask", Name: "ask_user", Input: json.RawMessage(in)})
}

// TestAskUserTimeout: the question waits AskTimeout, then the model is
// told nobody answered and the request is withdrawn.
func TestAskUserTimeout(t *testing.T) {
	t.Parallel()
	e := &askEnv{testEnv: newTestEnv(t, permissions.ModeAsk), timeout: time.Millisecond}
	res := askRun(t, t.Context(), e, `{"question":"Still there?"}`)
	if res.IsError || !strings.HasPrefix(res.Text, "No answer within 1ms") {
		t.Fatalf("result = %+v", res)
	}
	if waited(10*time.Minute) != "10 minutes" || waited(time.Minute) != "1 minute" {
		t.Errorf("waited: %q, %q", waited(10*time.Minute), waited(time.Minute))
	}
}

// TestAskUserCancelled: a turn cancelled while the question waits fails
// the call.
func TestAskUserCancelled(t *testing.T) {
	t.Parallel()
	e := &askEnv{testEnv: newTestEnv(t, permissions.ModeAsk), timeout: time.Hour}
	ctx, cancel := context.WithCancel(t.Context())
	e.answer = func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
		cancel()
		return acp.CreateElicitationResponse{}, context.Canceled
	}
	mustFail(t, askRun(t, ctx, e, `{"question":"Now?"}`), "cancelled by the user")
}

// TestAskUserInMessage: without forms (an Env that is no Asker, or a
// client that shows none) the question, with its numbered choices, ends
// the turn as the agent's message, and the model is told so.
func TestAskUserInMessage(t *testing.T) {
	t.Parallel()
	in := `{"question":"Which database?","choices":["Postgres","SQLite"]}`
	want := "Which database?\n\n1. Postgres\n2. SQLite"
	plain := newTestEnv(t, permissions.ModeAsk)
	noForms := &askEnv{testEnv: newTestEnv(t, permissions.ModeAsk), answer: func(string, acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
		return acp.CreateElicitationResponse{}, ErrCannotAsk
	}}
	for _, env := range []Env{plain, noForms} {
		res := askRun(t, t.Context(), env, in)
		if res.IsError || res.EndTurn != want || !strings.Contains(res.Text, "the turn ends here") {
			t.Fatalf("result = %+v", res)
		}
	}
	if res := askRun(t, t.Context(), plain, in); len(res.Content) != 1 || !strings.Contains(res.Content[0].Content.Content.Text.Text, "answer in your next message") {
		t.Errorf("card %+v", res.Content)
	}
	ups := plain.recordedUpdates()
	if len(ups) != 2 || len(ups[0].Content) != 1 || ups[0].Content[0].Content.Content.Text.Text != want {
		t.Fatalf("updates = %+v, want the question shown on the card", ups)
	}
}

// TestAskForm: the form is claude-agent-acp's shape for one question:
// titled choices (an array for multi-select) and an optional "Other" text
// field, nothing required; without choices a single text field.
func TestAskForm(t *testing.T) {
	t.Parallel()
	var got []acp.ElicitationSchema
	e := &askEnv{testEnv: newTestEnv(t, permissions.ModeAsk), answer: func(msg string, s acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
		if msg != "Pick?" {
			t.Errorf("message = %q", msg)
		}
		got = append(got, s)
		return acp.CreateElicitationResponse{Decline: &acp.CreateElicitationResponseDecline{}}, nil
	}}
	for _, in := range []string{
		`{"question":"Pick?","choices":["a"," a ","b"]}`,
		`{"question":"Pick?","choices":["a","b"],"multi_select":true,"allow_free_text":false}`,
		`{"question":"Pick?"}`,
	} {
		mustOK(t, askRun(t, t.Context(), e, in))
	}
	wire := make([]string, len(got))
	for i, s := range got {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		wire[i] = string(b)
	}
	want := []string{
		`{"properties":{"question_0":{"type":"string","oneOf":[{"const":"a","title":"a"},{"const":"b","title":"b"}]},"question_0_custom":{"type":"string","description":"Type your own answer instead of choosing an option above (optional).","title":"Other"}},"type":"object"}`,
		`{"properties":{"question_0":{"type":"array","items":{"anyOf":[{"const":"a","title":"a"},{"const":"b","title":"b"}]}}},"type":"object"}`,
		`{"properties":{"question_0":{"type":"string","title":"Answer"}},"type":"object"}`,
	}
	for i := range want {
		if i >= len(wire) || wire[i] != want[i] {
			t.Errorf("form %d:\n got %v\nwant %s", i, wire, want[i])
		}
	}
}

// TestAskUserInvalid: a question without text, or that allows no answer,
// fails without asking.
func TestAskUserInvalid(t *testing.T) {
	t.Parallel()
	e := &askEnv{testEnv: newTestEnv(t, permissions.ModeAsk)}
	for _, tc := range []struct{ in, want string }{
		{`{"question":"  "}`, "question is empty"},
		{`{"question":"Q","allow_free_text":false}`, "give choices"},
		{`{"question":"Q","multi_select":true}`, "multi_select needs choices"},
		{`{"question":"Q","header":"a"}`, `unknown argument "header"`},
	} {
		mustFail(t, askRun(t, t.Context(), e, tc.in), tc.want)
	}
	if e.asked != 0 {
		t.Fatalf("asked %d times", e.asked)
	}
}
