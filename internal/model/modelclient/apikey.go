package modelclient

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxKeyFile bounds how much of a key file is read; keys are short, so a
// larger file is a mistake (a wrong mount), not a key.
const maxKeyFile = 64 << 10

// LoadAPIKey returns the API key from an environment variable's value or from
// a file (a mounted secret), trimmed of surrounding white space. Setting both
// is an error because it is ambiguous which one wins; setting neither returns
// "" and no error (local servers need no key). The key never appears in an
// error message.
func LoadAPIKey(envValue, filePath string) (string, error) {
	envValue = strings.TrimSpace(envValue)
	if envValue != "" && filePath != "" {
		return "", errors.New("model: both TOOLGATE_REPAIR_API_KEY and TOOLGATE_REPAIR_API_KEY_FILE are set; set only one")
	}
	if filePath == "" {
		return envValue, nil
	}
	f, err := os.Open(filePath)
	if err != nil {
		return "", fmt.Errorf("model: read API key file (TOOLGATE_REPAIR_API_KEY_FILE): %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", fmt.Errorf("model: read API key file %s: %w", filePath, err)
	}
	if len(b) > maxKeyFile {
		return "", fmt.Errorf("model: API key file %s is larger than %d bytes; point TOOLGATE_REPAIR_API_KEY_FILE at the file holding only the key", filePath, maxKeyFile)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", fmt.Errorf("model: API key file %s is empty; write the key into it or unset TOOLGATE_REPAIR_API_KEY_FILE", filePath)
	}
	if strings.ContainsAny(key, "\r\n") {
		return "", fmt.Errorf("model: API key file %s holds more than one line; it must hold only the key", filePath)
	}
	return key, nil
}
