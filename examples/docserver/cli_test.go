package docserver_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelp: -h prints the flags on standard output and exits 0, as every
// smcp command does; a bad flag is one line on standard error, exit 2.
func TestHelp(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-h")
	cmd.Env = append(os.Environ(), runEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), errOut.String())
	assert.Contains(t, out.String(), "-root")
	assert.Empty(t, errOut.String())

	cmd = exec.Command(os.Args[0], "--nope")
	cmd.Env = append(os.Environ(), runEnv+"=1")
	out.Reset()
	errOut.Reset()
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Empty(t, out.String())
	assert.Equal(t, "smcp-docserver: flag provided but not defined: -nope (run smcp-docserver -h)\n", errOut.String())
}
