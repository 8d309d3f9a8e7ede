// Package seal makes and checks the gates' seals (call.Seal): each gate that
// passes a call appends an HMAC-SHA256 over what it judged, made with its
// own stage's key, and the execute gate runs only a call whose seals show
// every gate passed exactly these arguments, in order.
//
// Why an HMAC per stage and not a signature: six ed25519 verifications per
// call would cost more than all the gates' own work, while an HMAC key per
// stage, held only by that stage and by execute (which verifies), gives the
// same property against a stolen stage credential: it can forge only its own
// stage's seal, and every other gate still judges the call.
package seal
