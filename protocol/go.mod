module github.com/a2c-smcp/smcp-go/protocol

go 1.25.5

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/text v0.14.0
)
