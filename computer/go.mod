module github.com/a2c-smcp/smcp-go/computer

go 1.26.0

require (
	github.com/mark3labs/mcp-go v1.2.1
	github.com/prometheus/client_golang v1.25.0
	github.com/sosodev/duration v1.4.0
	github.com/stretchr/testify v1.12.1
	github.com/zishang520/socket.io/servers/socket/v3 v3.0.5
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/term v0.47.0
)

require github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect

require (
	github.com/andybalholm/brotli v1.2.4 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dunglas/httpsfv v1.1.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gookit/color v1.6.1 // indirect
	github.com/gorilla/websocket v1.5.3
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/quic-go/quic-go v0.62.0 // indirect
	github.com/quic-go/webtransport-go v0.13.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/xo/terminfo v1.2.0 // indirect
	github.com/zishang520/socket.io/parsers/engine/v3 v3.0.5 // indirect
	github.com/zishang520/socket.io/parsers/socket/v3 v3.0.5 // indirect
	github.com/zishang520/socket.io/servers/engine/v3 v3.0.5 // indirect
	github.com/zishang520/socket.io/v3 v3.0.5
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	github.com/a2c-smcp/smcp-go/protocol v0.1.0
	github.com/a2c-smcp/smcp-go/sio v0.1.0
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/text v0.42.0 // indirect
)
