package genclient

import "encoding/json"

// contentWire is the content of an answer of any of the four APIs, decoded
// only when a request captures it (accuracy mode): not on the hot path.
type contentWire struct {
	TextOutput *string `json:"text_output"`
	OutputIDs  []int64 `json:"output_ids"`
	Choices    []struct {
		Text    string       `json:"text"`
		Delta   *chatContent `json:"delta"`
		Message *chatContent `json:"message"`
	} `json:"choices"`
}

type chatContent struct {
	Content string `json:"content"`
}

// answerContent is an answer's text and output ids (nil where it has
// none). scanAnswer has already found data to be one JSON object.
func answerContent(data []byte) (text []byte, ids []int64) {
	var w contentWire
	if json.Unmarshal(data, &w) != nil {
		return nil, nil
	}
	if w.TextOutput != nil {
		text = append(text, *w.TextOutput...)
	}
	for _, c := range w.Choices {
		text = append(text, c.Text...)
		if c.Delta != nil {
			text = append(text, c.Delta.Content...)
		}
		if c.Message != nil {
			text = append(text, c.Message.Content...)
		}
	}
	return text, w.OutputIDs
}
