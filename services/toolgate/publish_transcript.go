package main

import (
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/internal/provider"
)

// transcriptEvents splits a recorded stream for publishing: its events, and
// the Toolgate-End reason of a recording cut short. A JSON array (Gemini's
// streamGenerateContent without alt=sse) whose connection was cut sends its
// complete elements, then the end marker with the reason, so toolgate
// settles the response as unfinished at once instead of at its idle timeout
// (nothing of an unfinished stream runs); never a fragment of an element.
// Any other broken transcript, or a cut one with no complete element, is an
// error and nothing is sent.
func transcriptEvents(data []byte) (events [][]byte, cut string, err error) {
	events, err = provider.SplitTranscript(data)
	if errors.Is(err, provider.ErrCutTranscript) && len(events) > 0 {
		return events, err.Error(), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("publish: %w", err)
	}
	return events, "", nil
}
