module github.com/a2c-smcp/smcp-go/examples

go 1.25.5
