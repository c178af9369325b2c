module github.com/a2c-smcp/smcp-go/agent

go 1.25.5
