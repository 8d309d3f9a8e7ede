package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// outcome is one message of TOOLGATE_RESULTS: a call's result, or the
// result of a response that yielded no call.
type outcome struct {
	call     *pipeline.Result
	response *wire.ResponseResult
}

// decodeOutcome tells a call's result (it has a call_id) from a
// response's; a message of neither shape is an error.
func decodeOutcome(data []byte) (outcome, error) {
	var probe struct {
		CallID     string `json:"call_id"`
		ResponseID string `json:"response_id"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return outcome{}, fmt.Errorf("a result that is not JSON: %w", err)
	}
	if probe.CallID != "" {
		var r pipeline.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return outcome{}, err
		}
		return outcome{call: &r}, nil
	}
	if probe.ResponseID == "" {
		return outcome{}, errors.New("a result with neither call_id nor response_id")
	}
	var r wire.ResponseResult
	if err := json.Unmarshal(data, &r); err != nil {
		return outcome{}, err
	}
	return outcome{response: &r}, nil
}

// resultsConsumer is an ordered consumer of every stored result of
// responseID, whatever its tenant (streams.ResultsOfIn), in results stream
// ref, from the first after stream sequence after (0: from the first).
func resultsConsumer(ctx context.Context, js jetstream.JetStream, ref streams.ResultsStreamRef, responseID string, after uint64) (jetstream.Consumer, error) {
	st, err := js.Stream(ctx, ref.Name)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "stream "+ref.Name)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.ResultsOfIn(ref.P, responseID)}}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	c, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "results of "+responseID)
	}
	return c, nil
}

// resultsStreams are the results streams that exist (streams.ResultsStreams):
// a response's results are in its partition's, whatever this process's P.
func resultsStreams(ctx context.Context, js jetstream.JetStream) ([]streams.ResultsStreamRef, error) {
	refs, err := streams.ResultsStreams(ctx, js)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "stream "+streams.StreamResults)
	}
	return refs, nil
}

// outcomes reads the outcomes stored for responseID now, in every results
// stream: its calls' results in the order they ended, and the response's
// own result, if any. seqs holds, per results stream, the stream sequence
// of the last one read there (absent: none), where a follower carries on.
// A message that is not a result is skipped with a note on stderr.
func (rd *reader) outcomes(responseID string) (calls []pipeline.Result, resp *wire.ResponseResult, seqs map[string]uint64, err error) {
	refs, err := resultsStreams(rd.ctx, rd.js)
	if err != nil {
		return nil, nil, nil, err
	}
	seqs = map[string]uint64{}
	for _, ref := range refs {
		c, err := resultsConsumer(rd.ctx, rd.js, ref, responseID, 0)
		if err != nil {
			return nil, nil, nil, err
		}
		for {
			batch, err := c.FetchNoWait(256)
			if err != nil {
				return nil, nil, nil, cmdutil.ExplainNATS(err, "results of "+responseID)
			}
			n := 0
			for m := range batch.Messages() {
				n++
				if md, err := m.Metadata(); err == nil {
					seqs[ref.Name] = md.Sequence.Stream
				}
				o, err := decodeOutcome(m.Data())
				switch {
				case err != nil:
					fmt.Fprintf(os.Stderr, "toolgate: %s: skipped: %v\n", cmdutil.Printable(m.Subject()), err)
				case o.call != nil:
					calls = append(calls, *o.call)
				default:
					resp = o.response
				}
			}
			if err := batch.Error(); err != nil {
				return nil, nil, nil, cmdutil.ExplainNATS(err, "results of "+responseID)
			}
			if n == 0 {
				break
			}
		}
	}
	return calls, resp, seqs, nil
}
