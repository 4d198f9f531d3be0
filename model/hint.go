package model

// Hint tells the user what to do about the error, in a few words that
// follow its message ("...: check the provider's API key").
func (e *Error) Hint() string {
	switch e.Kind {
	case ErrAuth:
		return "check the provider's API key"
	case ErrQuota:
		return "the provider reports the account's quota or credit is exhausted; check billing, or switch model"
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrNetwork:
		return "the provider is unavailable or overloaded; try again in a moment, or switch model"
	case ErrContextOverflow:
		return "the conversation no longer fits the model's context window; start a new session or use /compact"
	case ErrReplay:
		return "the replay script does not cover this request"
	}
	return "the provider rejected the request"
}
