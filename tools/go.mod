module github.com/a2c-smcp/smcp-go/tools

go 1.25.5

tool github.com/atombender/go-jsonschema

require (
	github.com/atombender/go-jsonschema v0.24.1
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/stretchr/testify v1.12.1
	golang.org/x/mod v0.34.0
)

require (
	dario.cat/mergo v1.0.2 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mitchellh/go-wordwrap v1.0.1 // indirect
	github.com/sanity-io/litter v1.5.8 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
