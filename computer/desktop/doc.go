// Package desktop is the Computer's Desktop (https://github.com/a2c-smcp/smcp-go/blob/main/spec/desktop.md#desktop).
//
// The Desktop collects the window:// resources of every MCP server that
// declares resources.subscribe, caches each window's contents and keeps the
// cache current like the Finder: resources/list_changed re-lists and diffs
// the URI sets (reading only new windows, emitting nothing when the set is
// unchanged), resources/updated re-reads the one window. Changes are reported
// once per burst through WithOnChange, from which the Computer emits
// server:update_desktop.
//
// Organize renders and orders the windows for client:get_desktop: servers by
// the tool-call history, windows by priority, one fullscreen window per
// server, cut to desktop_size.
package desktop
