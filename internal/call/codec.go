package call

import "github.com/toolgate/toolgate/internal/wirejson"

func (e *Envelope) encode() ([]byte, error) {
	return wirejson.Marshal(envelopeJSON{(*envelopeFields)(e), exactB64(e.RawArguments), exactB64(e.Text)})
}

func (e *Envelope) decode(data []byte) error {
	if isHop(data) {
		return e.decodeHop(data)
	}
	w := envelopeJSON{envelopeFields: (*envelopeFields)(e)}
	if err := wirejson.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := fromB64(&e.RawArguments, w.RawArgumentsB64, "raw_arguments_b64"); err != nil {
		return err
	}
	return fromB64(&e.Text, w.TextB64, "text_b64")
}
