module github.com/a2c-smcp/smcp-go/e2e

go 1.25.5
