// Package examples holds runnable programs built on smcp-go: the document
// server (docserver) and the one-command quickstart.
package examples
