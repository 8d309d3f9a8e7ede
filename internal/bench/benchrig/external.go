package benchrig

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// The bench applies toolgate's own streams and buckets (the names every
// deployment uses: stages look them up by name), loads the tools bucket,
// and deletes them all when it ends. On a server that already holds any of
// them it would mix its calls into a deployment's and then delete the
// deployment's data, so it refuses such a server outright, empty streams
// included: a bench runs on a nats-server of its own.

// toolgateStream reports whether a stream name is one of toolgate's:
// TOOLGATE_* streams (the bench's ceiling streams among them) and the
// toolgate_* key-value buckets and object stores.
func toolgateStream(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasPrefix(n, "TOOLGATE_") || strings.HasPrefix(n, "KV_TOOLGATE_") || strings.HasPrefix(n, "OBJ_TOOLGATE_")
}

// refuseToolgateStreams fails when the server at url holds any of
// toolgate's streams, naming them and their messages.
func refuseToolgateStreams(ctx context.Context, js jetstream.JetStream, url string) error {
	var found []string
	list := js.ListStreams(ctx)
	for info := range list.Info() {
		if toolgateStream(info.Config.Name) {
			found = append(found, fmt.Sprintf("%s (%d messages)", info.Config.Name, info.State.Msgs))
		}
	}
	if err := list.Err(); err != nil {
		return fmt.Errorf("bench: list the streams of %s: %w", url, err)
	}
	if len(found) > 0 {
		return fmt.Errorf("bench: NATS at %s already holds toolgate's streams %s: the bench would run its calls through them and delete them when it ends, so it runs only on a nats-server without them (one of its own; delete them there first if they are a bench's left behind)", url, strings.Join(found, ", "))
	}
	return nil
}

// deleteToolgateStreams deletes every stream of toolgate's on the server:
// the rig's, since refuseToolgateStreams found none before it began.
func deleteToolgateStreams(ctx context.Context, js jetstream.JetStream) error {
	var names []string
	list := js.StreamNames(ctx)
	for name := range list.Name() {
		if toolgateStream(name) {
			names = append(names, name)
		}
	}
	errs := []error{list.Err()}
	for _, name := range names {
		if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			errs = append(errs, fmt.Errorf("bench: delete stream %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
