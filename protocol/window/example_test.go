package window_test

import (
	"fmt"

	"github.com/a2c-smcp/smcp-go/protocol/window"
)

func ExampleParse() {
	u, err := window.Parse("window://com.example.mcp/dashboard/c%2Fd?priority=90&fullscreen=yes")
	if err != nil {
		panic(err)
	}
	fmt.Println(u.Host, u.Segments, len(u.Segments), u.Priority, u.Fullscreen)
	fmt.Println(u)

	_, err = window.Parse("window://com.example.mcp?priority=101")
	fmt.Println(err)
	// Output:
	// com.example.mcp [dashboard c/d] 2 90 true
	// window://com.example.mcp/dashboard/c%2Fd?priority=90&fullscreen=true
	// 400 BadRequest: invalid window:// URI: priority must be an integer in [0, 100], got "101"
}

func ExampleBuild() {
	fmt.Println(window.Build("com.example.mcp", []string{"A B", "c/d"}, 80, false))
	// Output:
	// window://com.example.mcp/A%20B/c%2Fd?priority=80
}
