module github.com/a2c-smcp/smcp-go/dpekit

go 1.25.5
