module github.com/a2c-smcp/smcp-go/sio

go 1.26.0

require (
	github.com/a2c-smcp/smcp-go/protocol v0.1.0
	github.com/gorilla/websocket v1.5.3
	github.com/zishang520/socket.io/parsers/engine/v3 v3.0.5
	github.com/zishang520/socket.io/servers/engine/v3 v3.0.5
	github.com/zishang520/socket.io/servers/socket/v3 v3.0.5
	github.com/zishang520/socket.io/v3 v3.0.5
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/quic-go/quic-go v0.62.0 // indirect
	github.com/quic-go/webtransport-go v0.13.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/zishang520/socket.io/parsers/socket/v3 v3.0.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

require (
	github.com/andybalholm/brotli v1.2.4 // indirect
	github.com/dunglas/httpsfv v1.1.1 // indirect
	github.com/gookit/color v1.6.1 // indirect
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/stretchr/testify v1.12.1
	github.com/vmihailenco/msgpack/v5 v5.4.1
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/xo/terminfo v1.2.0 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)
