package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/natsproc"
)

var (
	binsOnce sync.Once
	binsDir  string
	binsMap  map[string]string
	binsErr  error
)

func TestMain(m *testing.M) {
	if mib := os.Getenv(rssChildEnv); mib != "" {
		rssChild(mib) // the test binary as the sampler's child process (rss_test.go)
		return
	}
	if os.Getenv(httpChildEnv) != "" {
		httpChild() // the test binary as a stage serving /readyz (procs_test.go)
		return
	}
	code := m.Run()
	if binsDir != "" {
		os.RemoveAll(binsDir)
	}
	os.Exit(code)
}

// testBins builds the stage binaries and nats-server once for every test
// of the package (as `make chaos` builds them into bin/).
func testBins(t *testing.T) map[string]string {
	t.Helper()
	binsOnce.Do(func() {
		if binsDir, binsErr = os.MkdirTemp("", "toolgate-chaos-bin-"); binsErr != nil {
			return
		}
		if binsMap, binsErr = Build(binsDir); binsErr != nil {
			return
		}
		if _, binsErr = natsproc.Build(binsDir); binsErr != nil {
			return
		}
		binsMap, binsErr = LoadBins(binsDir)
		if binsErr == nil && binsMap[NATSServerBin] == "" {
			binsErr = fmt.Errorf("no %s in %s", NATSServerBin, filepath.Clean(binsDir))
		}
	})
	if binsErr != nil {
		t.Fatal(binsErr)
	}
	return binsMap
}
