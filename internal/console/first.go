package console

import (
	"fmt"
	"path/filepath"

	"github.com/toolgate/toolgate/internal/secrets"
)

// TokenFile is the token file `toolgate up` keeps in its secrets
// directory, and where `toolgate console` looks for one there.
const TokenFile = "console-tokens"

// FirstOperator is the name of the operator whose token `toolgate up`
// makes: it is recorded with that token's decisions.
const FirstOperator = "operator"

// EnsureTokenFile returns the path of dir's token file, making it first
// when it does not exist: one operator, FirstOperator, with a random token
// (mode 0600, in a 0700 directory, as the NATS passwords beside it). An
// existing file is kept as it is, lines added to it included.
func EnsureTokenFile(dir string) (string, error) {
	if _, err := secrets.Ensure(dir, TokenFile, firstTokens); err != nil {
		return "", fmt.Errorf("console: %w", err)
	}
	return filepath.Join(dir, TokenFile), nil
}

func firstTokens() ([]byte, error) {
	pw, err := secrets.Random(16)()
	if err != nil {
		return nil, err
	}
	return []byte("# The operator console's access tokens, one `<role> <name> <token>` a line\n" +
		"# (roles viewer, approver, operator). toolgate up made the first; add a line\n" +
		"# per person, and restart the console (a changed file ends every session).\n" +
		string(Operator) + " " + FirstOperator + " " + string(pw)), nil
}
