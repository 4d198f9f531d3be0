package provider_test

import (
	"context"
	"fmt"
	"iter"

	"acpd/config"
	"acpd/model"
	"acpd/model/provider"
)

// echoBackend answers every request with the model id and the text of the
// last message.
type echoBackend struct{ greeting string }

func (e echoBackend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		last := req.Messages[len(req.Messages)-1].Text()
		if yield(model.Event{Type: model.EventText, Text: e.greeting + " " + req.Model + ": " + last}, nil) {
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		}
	}
}

// A Go program adds its own dialect with Register; providers whose
// configuration names the dialect are then built by the factory.
func ExampleRegister() {
	provider.Register("echo", func(name string, p config.Provider, env func(string) string) (model.Backend, error) {
		return echoBackend{greeting: p.Headers["greeting"]}, nil
	})

	reg := provider.New(provider.Options{
		Config: &config.Config{Providers: map[string]config.Provider{
			"parrot": {Dialect: "echo", Headers: map[string]string{"greeting": "hello from"}},
		}},
		Getenv: func(string) string { return "" },
	})
	defer reg.Close()

	backend, info, err := reg.Resolve("parrot/polly-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &model.Request{Model: info.ID, Messages: []model.Message{
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "hi"}}},
	}}
	for ev, err := range backend.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Type == model.EventText {
			fmt.Println(ev.Text)
		}
	}
	// Output: hello from polly-1: hi
}
