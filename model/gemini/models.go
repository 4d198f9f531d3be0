package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"acpd/model"
)

// maxModelPages bounds how many pages of the model list Models reads.
const maxModelPages = 20

// Models lists the models that can generate content, with
// GET {BaseURL}/v1beta/models (all pages). Tools, Images and Audio are set
// for Gemini models except the text-to-speech, image-generation,
// embedding and live ones (the API does not report these capabilities);
// Reasoning comes from the model's "thinking" flag.
func (b *Backend) Models(ctx context.Context) ([]model.ModelInfo, error) {
	var out []model.ModelInfo
	token := ""
	for range maxModelPages {
		q := url.Values{"pageSize": {"1000"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		raw, err := b.c.Get(ctx, "/models?"+q.Encode(), 32<<20)
		if err != nil {
			return nil, err
		}
		page, next, err := parseModels(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		token = next
	}
	return out, nil
}

// parseModels reads one page of {"models":[...],"nextPageToken":...}.
func parseModels(raw []byte) ([]model.ModelInfo, string, error) {
	var list struct {
		Models *[]*struct {
			Name                       string   `json:"name"`
			DisplayName                string   `json:"displayName"`
			InputTokenLimit            int      `json:"inputTokenLimit"`
			OutputTokenLimit           int      `json:"outputTokenLimit"`
			SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
			Thinking                   bool     `json:"thinking"`
		} `json:"models"`
		NextPageToken string `json:"nextPageToken"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, "", fmt.Errorf("gemini: models: not a Gemini model list: %w", err)
	}
	if list.Models == nil {
		if strings.TrimSpace(string(raw)) == "{}" {
			return nil, "", nil // a project without models
		}
		return nil, "", errors.New(`gemini: models: not a Gemini model list (want {"models":[...]})`)
	}
	var out []model.ModelInfo
	for i, m := range *list.Models {
		if m == nil || !strings.HasPrefix(m.Name, "models/") || len(m.Name) == len("models/") {
			return nil, "", fmt.Errorf("gemini: models: entry %d has no models/ name", i)
		}
		if !slices.Contains(m.SupportedGenerationMethods, "generateContent") &&
			!slices.Contains(m.SupportedGenerationMethods, "streamGenerateContent") {
			continue // embedding, AQA, Imagen, Veo ...
		}
		id := strings.TrimPrefix(m.Name, "models/")
		info := model.ModelInfo{
			ID:              id,
			Name:            m.DisplayName,
			ContextWindow:   max(m.InputTokenLimit, 0),
			MaxOutputTokens: max(m.OutputTokenLimit, 0),
			Reasoning:       m.Thinking,
		}
		if multimodal(id) {
			info.Tools, info.Images, info.Audio = true, true, true
		}
		out = append(out, info)
	}
	return out, list.NextPageToken, nil
}

// multimodal reports whether a model id names a Gemini chat model, which
// takes tools, images and audio.
func multimodal(id string) bool {
	if _, ok := version(id); !ok {
		return false
	}
	for _, s := range []string{"-tts", "image", "embedding", "-live", "native-audio"} {
		if strings.Contains(id, s) {
			return false
		}
	}
	return true
}
