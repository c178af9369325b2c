package desktop_test

import (
	"fmt"

	"github.com/a2c-smcp/smcp-go/computer/desktop"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func text(s string) []protocol.ResourceContents { return []protocol.ResourceContents{{Text: &s}} }

// Organize renders the windows: the most recently used server first, its
// fullscreen window alone; then the other servers, windows by priority.
func ExampleOrganize() {
	windows := []desktop.Window{
		{Server: "editor", URI: "window://editor/file?priority=10", Contents: text("main.go")},
		{Server: "editor", URI: "window://editor/zen?fullscreen=true", Contents: text("distraction-free")},
		{Server: "shell", URI: "window://shell/log", Contents: text("$ go test\nok")},
		{Server: "shell", URI: "window://shell/status?priority=90", Contents: text("idle")},
		{Server: "shell", URI: "window://shell/empty"}, // no contents: dropped
	}
	for _, d := range desktop.Organize(windows, nil, []string{"shell", "editor"}) {
		fmt.Printf("%q\n", d)
	}
	// Output:
	// "window://editor/zen?fullscreen=true\n\ndistraction-free"
	// "window://shell/status?priority=90\n\nidle"
	// "window://shell/log\n\n$ go test\nok"
}
