package config_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/a2c-smcp/smcp-go/computer/config"
)

// Load reads a config in the Python SDK's format; Resolve fills its
// ${input:ID} placeholders.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "computer.json")
	_ = os.WriteFile(path, []byte(`{
	  "servers": {
	    "files": {"type": "stdio", "server_parameters": {"command": "mcp-files", "args": ["--root", "${input:ROOT}"]}}
	  },
	  "inputs": [{"id": "ROOT", "type": "promptString", "description": "Folder to serve", "default": "/srv/docs"}]
	}`), 0o600)

	cfg, err := config.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	servers, err := cfg.Resolve(context.Background(), config.WithPrompter(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	s := servers[0]
	fmt.Println(s.Name(), s.Type(), s.Stdio.ServerParameters.Args)
	// Output: files stdio [--root /srv/docs]
}
