module github.com/a2c-smcp/smcp-go/protocol

go 1.25.5

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/text v0.14.0
)

require (
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
