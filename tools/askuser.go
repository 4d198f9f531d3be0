package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"acpd/acp"
	"acpd/model"
)

// Asker is an Env that can put a question to the user as a form (ACP
// elicitation/create, form mode); the ask_user tool uses it. An Env that
// is no Asker, or whose client shows no forms, gets the question as the
// agent's message instead, ending the turn (Result.EndTurn).
type Asker interface {
	// AskUser shows message and the form schema to the user, scoped to
	// the call, and returns their answer. It returns ErrCannotAsk when the
	// client shows no forms, and ctx's error once ctx ends (the request is
	// then withdrawn).
	AskUser(ctx context.Context, call *Call, message string, schema acp.ElicitationSchema) (acp.CreateElicitationResponse, error)
	// AskTimeout is how long a question waits for its answer.
	AskTimeout() time.Duration
}

// ErrCannotAsk means the client shows no forms.
var ErrCannotAsk = errors.New("the client shows no forms")

// The form's fields, as claude-agent-acp names those of AskUserQuestion's
// first question: the choices (a single-select enum, or an array for
// multi_select) and the free-text answer beside them.
const (
	AskChoiceField = "question_0"
	AskCustomField = "question_0_custom"
)

// askInput is ask_user's arguments.
type askInput struct {
	Question      string   `json:"question"`
	Choices       []string `json:"choices"`
	AllowFreeText *bool    `json:"allow_free_text"`
	MultiSelect   bool     `json:"multi_select"`
}

// askUserTool is ask_user: a question to the user, with optional choices
// and a free-text answer, as a form where the client shows one, else as the
// agent's message that ends the turn (the answer is the next prompt).
func askUserTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "ask_user",
			Description: "Ask the user a question and wait for the answer, to settle an open point you cannot decide from the code or the request (a choice between approaches, a missing requirement). " +
				"Give choices when there are a few likely answers; the user may also answer in their own words unless allow_free_text is false. " +
				"Ask one clear question per call, and only when the answer changes what you do. When the editor cannot show a form, the question is shown as your message and the turn ends: the answer comes as the user's next message.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"question":{"type":"string","description":"The question, complete and self-contained"},` +
				`"choices":{"type":"array","items":{"type":"string"},"description":"Answers to choose from (optional)"},` +
				`"allow_free_text":{"type":"boolean","description":"Let the user answer in their own words (default true; needs choices when false)"},` +
				`"multi_select":{"type":"boolean","description":"Let the user pick several choices (default false)"}},` +
				`"required":["question"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindOther,
		ReadOnly: true,
		Title: func(in json.RawMessage) string {
			var a askInput
			if json.Unmarshal(in, &a) == nil && strings.TrimSpace(a.Question) != "" {
				return Truncate(strings.Join(strings.Fields(a.Question), " "), 120)
			}
			return "Ask the user"
		},
		Run: runAskUser,
	}
}

func runAskUser(ctx context.Context, env Env, c *Call) Result {
	a, err := DecodeInput[askInput](c.Input)
	if err != nil {
		return Errorf("invalid ask_user arguments: %v", err)
	}
	a.Question = strings.TrimSpace(a.Question)
	var choices []string
	for _, ch := range a.Choices {
		if ch = strings.TrimSpace(ch); ch != "" && !slices.Contains(choices, ch) {
			choices = append(choices, ch)
		}
	}
	free := a.AllowFreeText == nil || *a.AllowFreeText
	switch {
	case a.Question == "":
		return Errorf("invalid ask_user arguments: question is empty")
	case len(choices) == 0 && !free:
		return Errorf("invalid ask_user arguments: give choices, or allow a free-text answer")
	case len(choices) == 0 && a.MultiSelect:
		return Errorf("invalid ask_user arguments: multi_select needs choices")
	}
	env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: new(acp.ToolCallStatusInProgress),
		Content: []acp.ToolCallContent{TextContent(askText(a.Question, choices))}})
	asker, ok := env.(Asker)
	if !ok {
		return askInMessage(a.Question, choices)
	}
	d := asker.AskTimeout()
	if d <= 0 {
		d = DefaultAskTimeout
	}
	actx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := asker.AskUser(actx, c, a.Question, AskForm(choices, free, a.MultiSelect))
	// The card shows the user what became of the question; the text is
	// for the model.
	shown := func(text, card string) Result {
		return Result{Text: text, Content: []acp.ToolCallContent{TextContent(a.Question + "\n\n" + card)}}
	}
	switch {
	case ctx.Err() != nil:
		return Errorf("cancelled by the user")
	case errors.Is(err, ErrCannotAsk):
		return askInMessage(a.Question, choices)
	case actx.Err() != nil:
		return shown(fmt.Sprintf("No answer within %s; the question was withdrawn. Go on without the answer if you can, or ask again in your final message.", waited(d)),
			fmt.Sprintf("No answer within %s.", waited(d)))
	case err != nil:
		return Errorf("the question could not be shown: %v", err)
	case resp.Accept != nil:
		text := AnswerText(resp.Accept.Content)
		return shown(text, strings.Replace(text, "The user answered: ", "Answer: ", 1))
	case resp.Cancel != nil:
		return shown("The user cancelled the question without answering. Do not ask it again; go on without the answer or stop and say what you need.", "Cancelled.")
	}
	return shown("The user declined to answer. Do not ask it again; go on without the answer, choosing a sensible default and saying so.", "Declined.")
}

// DefaultAskTimeout is how long ask_user waits for an answer by default.
const DefaultAskTimeout = 10 * time.Minute

// waited renders a timeout: "10 minutes", "1 minute", else Go's form.
func waited(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "1 minute"
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// askInMessage is the result of a question the client cannot show as a
// form: it becomes the agent's message and the turn ends.
func askInMessage(q string, choices []string) Result {
	return Result{
		Text:    "The question was shown to the user as your message and the turn ends here; their answer comes as their next message. Do not go on until then.",
		Content: []acp.ToolCallContent{TextContent("Asked in the chat: answer in your next message.")},
		EndTurn: askText(q, choices),
	}
}

// askText is a question as text: the question, then its choices as a
// numbered list.
func askText(q string, choices []string) string {
	var b strings.Builder
	b.WriteString(q)
	if len(choices) > 0 {
		b.WriteString("\n")
	}
	for i, ch := range choices {
		fmt.Fprintf(&b, "\n%d. %s", i+1, ch)
	}
	return b.String()
}

// AskForm is ask_user's form, shaped as claude-agent-acp shapes
// AskUserQuestion's: the choices as a titled single-select enum
// (AskChoiceField; an array of titled items for multi), and when free text
// is allowed a string field beside it (AskCustomField, "Other"; the only
// field, "Answer", without choices). Nothing is required, so the user may
// skip.
func AskForm(choices []string, free, multi bool) acp.ElicitationSchema {
	props := map[string]acp.ElicitationPropertySchema{}
	if len(choices) > 0 {
		opts := make([]acp.EnumOption, len(choices))
		for i, ch := range choices {
			opts[i] = acp.EnumOption{Const: ch, Title: ch}
		}
		if multi {
			props[AskChoiceField] = acp.ElicitationPropertySchema{Array: &acp.MultiSelectPropertySchema{Items: acp.MultiSelectItems{Titled: &acp.TitledMultiSelectItems{AnyOf: opts}}}}
		} else {
			props[AskChoiceField] = acp.ElicitationPropertySchema{String: &acp.StringPropertySchema{OneOf: opts}}
		}
		if free {
			props[AskCustomField] = acp.ElicitationPropertySchema{String: &acp.StringPropertySchema{Title: new("Other"),
				Description: new("Type your own answer instead of choosing an option above (optional).")}}
		}
	} else {
		props[AskChoiceField] = acp.ElicitationPropertySchema{String: &acp.StringPropertySchema{Title: new("Answer")}}
	}
	return acp.ElicitationSchema{Type: acp.ElicitationSchemaTypeObject, Properties: props}
}

// AnswerText is what the model is told of an accepted form: the choices
// made and the words typed.
func AnswerText(content map[string]acp.ElicitationContentValue) string {
	var picked []string
	if v, ok := content[AskChoiceField]; ok {
		switch {
		case v.String != nil:
			picked = append(picked, *v.String)
		case v.StringArray != nil:
			picked = append(picked, v.StringArray...)
		}
	}
	typed := ""
	if v, ok := content[AskCustomField]; ok && v.String != nil {
		typed = strings.TrimSpace(*v.String)
	}
	picked = slices.DeleteFunc(picked, func(s string) bool { return strings.TrimSpace(s) == "" })
	choice := strings.Join(picked, ", ")
	switch {
	case choice != "" && typed != "":
		return fmt.Sprintf("The user answered: %s (and wrote: %s)", choice, typed)
	case choice != "":
		return "The user answered: " + choice
	case typed != "":
		return "The user answered: " + typed
	}
	return "The user submitted the form without choosing or writing anything."
}
