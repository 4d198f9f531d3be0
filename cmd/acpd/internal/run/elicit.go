package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"acpd/acp"
)

// QuestionRecord is one question of a Result: a form the agent asked the
// user to fill in (ask_user, or an MCP server's form it forwarded).
type QuestionRecord struct {
	Message string `json:"message"`
	// Action is accepted, declined or cancelled.
	Action string `json:"action"`
	// Answer is the accepted form's content, by field.
	Answer map[string]acp.ElicitationContentValue `json:"answer,omitempty"`
	// By is who answered: answers (the --answers file), user (on the
	// terminal), policy (--approve none) or no-terminal (nobody to ask).
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

// maxAnswersBytes bounds an --answers file.
const maxAnswersBytes = 1 << 20

// answerFile is an --answers file: a JSON object of answers by question,
// or one answer per line, used in order.
type answerFile struct {
	byQuestion map[string]json.RawMessage // the JSON form; "*" answers any other

	mu    sync.Mutex
	lines []string // the line form, those not used yet
}

// loadAnswers reads an --answers file. A file starting with "{" is a JSON
// object whose keys are questions (the form's message; "*" for any other)
// and whose values are a string (a choice, its number, or words of one's
// own), an array of strings (several choices), an object of the form's
// fields, or null (decline). Any other file is one answer per line (blank
// lines and lines starting with "#" skipped), each read as a string.
func loadAnswers(file string) (*answerFile, error) {
	b, err := readSmallFile(file, maxAnswersBytes)
	if err != nil {
		return nil, err
	}
	a := &answerFile{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(t, &a.byQuestion); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for q, v := range a.byQuestion {
			var x any
			_ = json.Unmarshal(v, &x)
			switch x := x.(type) {
			case nil, string, map[string]any:
			case []any:
				for _, e := range x {
					if _, ok := e.(string); !ok {
						return nil, fmt.Errorf("%s: the answer to %q: an array holds strings (choices)", file, q)
					}
				}
			default:
				return nil, fmt.Errorf("%s: the answer to %q is a %T; want a string, an array of strings, an object of fields or null", file, q, x)
			}
		}
		return a, nil
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			a.lines = append(a.lines, l)
		}
	}
	if len(a.lines) == 0 {
		return nil, fmt.Errorf("%s holds no answer", file)
	}
	return a, nil
}

// next returns the answer to the question message, if the file has one:
// the JSON form's answer to it (or "*"), else the next unused line.
func (a *answerFile) next(message string) (json.RawMessage, bool) {
	if a.byQuestion != nil {
		if v, ok := a.byQuestion[message]; ok {
			return v, true
		}
		for q, v := range a.byQuestion {
			if strings.TrimSpace(q) == strings.TrimSpace(message) {
				return v, true
			}
		}
		v, ok := a.byQuestion["*"]
		return v, ok
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.lines) == 0 {
		return nil, false
	}
	l := a.lines[0]
	a.lines = a.lines[1:]
	v, _ := json.Marshal(l)
	return v, true
}

var (
	declineResponse = acp.CreateElicitationResponse{Decline: &acp.CreateElicitationResponseDecline{}}
	cancelResponse  = acp.CreateElicitationResponse{Cancel: &acp.CreateElicitationResponseCancel{}}
)

// elicit answers elicitation/create (client.Options.Elicit): from the
// --answers file, else on the terminal; declined under --approve none or
// without a terminal, saying so, so a run never hangs on a question.
func (r *runner) elicit(ctx context.Context, req acp.CreateElicitationRequest) (acp.CreateElicitationResponse, error) {
	schema := req.Form.RequestedSchema
	r.mu.Lock()
	cancelled := r.cancelled
	r.mu.Unlock()
	if cancelled {
		r.logQuestion(req.Message, cancelResponse, "policy", "the turn was cancelled")
		return cancelResponse, nil
	}
	if r.answers != nil {
		if a, ok := r.answers.next(req.Message); ok {
			content, err := formContent(schema, a)
			if err != nil {
				r.notice(fmt.Sprintf("acpd run: declined the agent's question %q: the answer in --answers does not fit: %v", oneLine(req.Message), err))
				r.logQuestion(req.Message, declineResponse, "answers", err.Error())
				return declineResponse, nil
			}
			res := declineResponse
			if content != nil {
				res = acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{Content: content}}
			}
			r.logQuestion(req.Message, res, "answers", "")
			return res, nil
		}
	}
	switch {
	case r.flags.approve == approveNone:
		r.notice(fmt.Sprintf("acpd run: declined the agent's question %q: --approve none (answer it with --answers FILE)", oneLine(req.Message)))
		r.logQuestion(req.Message, declineResponse, "policy", "--approve none")
		return declineResponse, nil
	case !r.askTTY:
		r.notice(fmt.Sprintf("acpd run: declined the agent's question %q: stdin is not a terminal to ask on (answer it with --answers FILE)", oneLine(req.Message)))
		r.logQuestion(req.Message, declineResponse, "no-terminal", "stdin is not a terminal")
		return declineResponse, nil
	}
	res, err := r.askForm(ctx, req.Message, schema)
	if err == nil {
		r.logQuestion(req.Message, res, "user", "")
	}
	return res, err
}

// logQuestion logs how a question was answered and records it for
// --output json.
func (r *runner) logQuestion(message string, res acp.CreateElicitationResponse, by, reason string) {
	rec := QuestionRecord{Message: message, Action: "declined", By: by, Reason: reason}
	switch {
	case res.Accept != nil:
		rec.Action, rec.Answer = "accepted", res.Accept.Content
	case res.Cancel != nil:
		rec.Action = "cancelled"
	}
	r.log.Info("question", "message", oneLine(message), "action", rec.Action, "by", by, "reason", reason)
	r.mu.Lock()
	r.questions = append(r.questions, rec)
	r.mu.Unlock()
}

// errQuestionCancelled: the turn was cancelled while a question waited.
var errQuestionCancelled = errors.New("cancelled")

// askForm asks a form on the terminal, one line per answer: a form of
// choices and free text (ask_user's) in one line, any other field by
// field. An empty line, or the end of input, declines.
func (r *runner) askForm(ctx context.Context, message string, schema acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
	r.askMu.Lock()
	defer r.askMu.Unlock()
	tty, err := r.openTTY()
	if err != nil {
		r.log.Warn("cannot read the terminal; declining", "err", err)
		return declineResponse, nil
	}
	lines := []string{"? " + strings.TrimSpace(message)}
	choice, text, simple := formShape(schema)
	readAnswer := func(prompt string) (string, *acp.CreateElicitationResponse, error) {
		fmt.Fprint(r.stderr, prompt)
		l, err := readLine(ctx, tty, r.cancel)
		switch {
		case errors.Is(err, errQuestionCancelled):
			fmt.Fprintln(r.stderr)
			return "", &cancelResponse, nil
		case errors.Is(err, io.EOF):
			fmt.Fprintln(r.stderr, "\nacpd run: end of input; declining")
			return "", &declineResponse, nil
		case err != nil:
			fmt.Fprintln(r.stderr)
			return "", nil, err
		}
		return strings.TrimSpace(l), nil, nil
	}
	if simple {
		var hint string
		if choice != "" {
			_, titles, multi := choicesOf(schema.Properties[choice])
			for i, t := range titles {
				lines = append(lines, fmt.Sprintf("  %d) %s", i+1, oneLine(t)))
			}
			hint = "a number"
			if multi {
				hint = "numbers separated by commas"
			}
			if text != "" {
				hint += ", or your own words"
			}
		} else {
			hint = "your answer"
		}
		resume := r.out.pause(lines)
		defer resume()
		for {
			l, res, err := readAnswer("answer (" + hint + "; an empty line declines): ")
			if res != nil || err != nil {
				return derefOr(res), err
			}
			if l == "" {
				return declineResponse, nil
			}
			content, err := textContent(schema, choice, text, l)
			if err != nil {
				fmt.Fprintln(r.stderr, "  "+err.Error())
				continue
			}
			return acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{Content: content}}, nil
		}
	}
	resume := r.out.pause(append(lines, "  (one field at a time; an empty line leaves a field out, or declines when it is required)"))
	defer resume()
	content := map[string]acp.ElicitationContentValue{}
	for _, k := range sortedKeys(schema.Properties) {
		p := schema.Properties[k]
		title, desc, kind := describe(k, p)
		if desc != "" {
			fmt.Fprintf(r.stderr, "  %s\n", oneLine(desc))
		}
		if _, titles, _ := choicesOf(p); len(titles) > 0 {
			for i, t := range titles {
				fmt.Fprintf(r.stderr, "    %d) %s\n", i+1, oneLine(t))
			}
		}
		for {
			l, res, err := readAnswer(fmt.Sprintf("  %s (%s): ", oneLine(title), kind))
			if res != nil || err != nil {
				return derefOr(res), err
			}
			if l == "" {
				if slices.Contains(schema.Required, k) {
					return declineResponse, nil
				}
				break
			}
			v, err := fieldValue(p, l)
			if err != nil {
				fmt.Fprintln(r.stderr, "  "+err.Error())
				continue
			}
			content[k] = v
			break
		}
	}
	return acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{Content: content}}, nil
}

func derefOr(r *acp.CreateElicitationResponse) acp.CreateElicitationResponse {
	if r == nil {
		return acp.CreateElicitationResponse{}
	}
	return *r
}

// readLine reads one line from the terminal; cancel closing ends it with
// errQuestionCancelled, the end of input with io.EOF.
func readLine(ctx context.Context, tty *ttyReader, cancel <-chan struct{}) (string, error) {
	for {
		if i := bytes.IndexByte(tty.line, '\n'); i >= 0 {
			l := string(tty.line[:i])
			tty.line = tty.line[i+1:]
			return strings.TrimRight(l, "\r"), nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-cancel:
			return "", errQuestionCancelled
		case b, ok := <-tty.chunks:
			if !ok {
				return "", io.EOF
			}
			tty.line = append(tty.line, b...)
		}
	}
}

// formShape finds a form answered in one line: at most one field of
// choices and at most one plain text field (ask_user's question_0 and
// question_0_custom, or a form of one field). simple is false for any
// other form.
func formShape(s acp.ElicitationSchema) (choice, text string, simple bool) {
	for _, k := range sortedKeys(s.Properties) {
		p := s.Properties[k]
		_, titles, _ := choicesOf(p)
		switch {
		case len(titles) > 0 && choice == "":
			choice = k
		case len(titles) == 0 && p.String != nil && text == "":
			text = k
		default:
			return "", "", false
		}
	}
	return choice, text, choice != "" || text != ""
}

// choicesOf lists a field's choices (values and titles) and whether
// several may be chosen; none for a field without choices.
func choicesOf(p acp.ElicitationPropertySchema) (values, titles []string, multi bool) {
	switch {
	case p.String != nil && len(p.String.OneOf) > 0:
		for _, o := range p.String.OneOf {
			values, titles = append(values, o.Const), append(titles, cmpOr(o.Title, o.Const))
		}
	case p.String != nil && len(p.String.Enum) > 0:
		values, titles = p.String.Enum, p.String.Enum
	case p.Array != nil && p.Array.Items.Titled != nil:
		for _, o := range p.Array.Items.Titled.AnyOf {
			values, titles = append(values, o.Const), append(titles, cmpOr(o.Title, o.Const))
		}
		multi = true
	case p.Array != nil && p.Array.Items.String != nil:
		values, titles, multi = p.Array.Items.String.Enum, p.Array.Items.String.Enum, true
	}
	return values, titles, multi
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pick matches an answer to one of the choices: its value or title
// (ignoring case), or its number.
func pick(values, titles []string, s string) (string, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(values) {
		return values[n-1], true
	}
	for i := range values {
		if strings.EqualFold(s, values[i]) || strings.EqualFold(s, titles[i]) {
			return values[i], true
		}
	}
	return "", false
}

// textContent is a one-line answer to a simple form (formShape): choices
// when it names them, else the words in the text field.
func textContent(s acp.ElicitationSchema, choice, text, answer string) (map[string]acp.ElicitationContentValue, error) {
	if choice != "" {
		values, titles, multi := choicesOf(s.Properties[choice])
		if v, ok := pick(values, titles, answer); ok && !multi {
			return map[string]acp.ElicitationContentValue{choice: {String: &v}}, nil
		}
		if multi {
			var picked []string
			for part := range strings.SplitSeq(answer, ",") {
				v, ok := pick(values, titles, part)
				if !ok {
					picked = nil
					break
				}
				picked = append(picked, v)
			}
			if picked != nil {
				return map[string]acp.ElicitationContentValue{choice: {StringArray: picked}}, nil
			}
		}
		if text == "" {
			return nil, fmt.Errorf("%q is none of the choices (%s)", answer, strings.Join(titles, ", "))
		}
	}
	return map[string]acp.ElicitationContentValue{text: {String: &answer}}, nil
}

// formContent is an --answers answer as the form's content; nil content
// (and no error) declines: null, or an empty string.
func formContent(s acp.ElicitationSchema, answer json.RawMessage) (map[string]acp.ElicitationContentValue, error) {
	var x any
	if err := json.Unmarshal(answer, &x); err != nil {
		return nil, err
	}
	switch x := x.(type) {
	case nil:
		return nil, nil
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, nil
		}
		choice, text, simple := formShape(s)
		if !simple {
			return nil, fmt.Errorf("the form has the fields %s: answer it with an object of them", strings.Join(sortedKeys(s.Properties), ", "))
		}
		return textContent(s, choice, text, strings.TrimSpace(x))
	case []any:
		choice, _, simple := formShape(s)
		if _, _, multi := choicesOf(s.Properties[choice]); !simple || choice == "" || !multi {
			return nil, errors.New("an array answers a question that takes several choices")
		}
		v, err := fieldValue(s.Properties[choice], x)
		if err != nil {
			return nil, err
		}
		return map[string]acp.ElicitationContentValue{choice: v}, nil
	case map[string]any:
		content := map[string]acp.ElicitationContentValue{}
		for k, v := range x {
			p, ok := s.Properties[k]
			if !ok {
				return nil, fmt.Errorf("the form has no field %q (it has %s)", k, strings.Join(sortedKeys(s.Properties), ", "))
			}
			cv, err := fieldValue(p, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			content[k] = cv
		}
		for _, k := range s.Required {
			if _, ok := content[k]; !ok {
				return nil, fmt.Errorf("the required field %q has no answer", k)
			}
		}
		return content, nil
	}
	return nil, fmt.Errorf("a %T is no answer", x)
}

// fieldValue converts v (a JSON value, or a line typed) to the value of
// field p.
func fieldValue(p acp.ElicitationPropertySchema, v any) (acp.ElicitationContentValue, error) {
	values, titles, multi := choicesOf(p)
	s, isString := v.(string)
	switch {
	case multi:
		var items []any
		switch v := v.(type) {
		case []any:
			items = v
		case string:
			for part := range strings.SplitSeq(v, ",") {
				items = append(items, part)
			}
		default:
			return acp.ElicitationContentValue{}, errors.New("want choices")
		}
		var picked []string
		for _, it := range items {
			is, _ := it.(string)
			c, ok := pick(values, titles, is)
			if !ok {
				return acp.ElicitationContentValue{}, fmt.Errorf("%v is none of the choices (%s)", it, strings.Join(titles, ", "))
			}
			picked = append(picked, c)
		}
		return acp.ElicitationContentValue{StringArray: picked}, nil
	case len(values) > 0:
		c, ok := pick(values, titles, s)
		if !isString || !ok {
			return acp.ElicitationContentValue{}, fmt.Errorf("%v is none of the choices (%s)", v, strings.Join(titles, ", "))
		}
		return acp.ElicitationContentValue{String: &c}, nil
	case p.String != nil:
		if !isString {
			return acp.ElicitationContentValue{}, errors.New("want text")
		}
		return acp.ElicitationContentValue{String: &s}, nil
	case p.Boolean != nil:
		b, ok := v.(bool)
		if isString {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "y", "yes", "true":
				b, ok = true, true
			case "n", "no", "false":
				b, ok = false, true
			}
		}
		if !ok {
			return acp.ElicitationContentValue{}, errors.New("want yes or no")
		}
		return acp.ElicitationContentValue{Boolean: &b}, nil
	case p.Number != nil, p.Integer != nil:
		f, ok := v.(float64)
		if isString {
			var err error
			f, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
			ok = err == nil
		}
		if !ok {
			return acp.ElicitationContentValue{}, errors.New("want a number")
		}
		if p.Number != nil {
			return acp.ElicitationContentValue{Number: &f}, nil
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return acp.ElicitationContentValue{}, errors.New("want a whole number")
		}
		n := int64(f)
		return acp.ElicitationContentValue{Integer: &n}, nil
	}
	return acp.ElicitationContentValue{}, errors.New("this field's type is not supported")
}

// describe is a field's title, description and what to type.
func describe(key string, p acp.ElicitationPropertySchema) (title, desc, kind string) {
	var t, d *string
	switch {
	case p.String != nil:
		t, d, kind = p.String.Title, p.String.Description, "text"
	case p.Boolean != nil:
		t, d, kind = p.Boolean.Title, p.Boolean.Description, "yes/no"
	case p.Number != nil:
		t, d, kind = p.Number.Title, p.Number.Description, "a number"
	case p.Integer != nil:
		t, d, kind = p.Integer.Title, p.Integer.Description, "a whole number"
	case p.Array != nil:
		t, d, kind = p.Array.Title, p.Array.Description, "numbers separated by commas"
	}
	if _, titles, multi := choicesOf(p); len(titles) > 0 && !multi {
		kind = "a number"
	}
	title = key
	if t != nil && *t != "" {
		title = *t
	}
	if d != nil {
		desc = *d
	}
	return title, desc, kind
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
