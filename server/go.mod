module github.com/a2c-smcp/smcp-go/server

go 1.25.5
