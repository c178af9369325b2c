//go:build ignore

// Zero-install bootstrap for the build: `go run mage.go <target>` runs the
// targets of magefile.go without a mage binary on the machine.
package main

import (
	"os"

	"github.com/magefile/mage/mage"
)

func main() { os.Exit(mage.Main()) }
