module github.com/a2c-smcp/smcp-go/computer

go 1.25.5
