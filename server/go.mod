module github.com/a2c-smcp/smcp-go/server

go 1.26.0

require (
	github.com/a2c-smcp/smcp-go/protocol v0.1.0
	github.com/a2c-smcp/smcp-go/sio v0.1.0
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875
	github.com/gorilla/websocket v1.5.3
	github.com/prometheus/client_golang v1.25.0
	github.com/prometheus/client_model v0.6.3
	github.com/realclientip/realclientip-go v1.0.0
	github.com/redis/go-redis/v9 v9.18.0
	github.com/stretchr/testify v1.12.1
	github.com/vmihailenco/msgpack/v5 v5.4.1
	github.com/zishang520/socket.io/adapters/adapter/v3 v3.0.2
	github.com/zishang520/socket.io/adapters/redis/v3 v3.0.2
	github.com/zishang520/socket.io/parsers/engine/v3 v3.0.5
	github.com/zishang520/socket.io/parsers/socket/v3 v3.0.5
	github.com/zishang520/socket.io/servers/engine/v3 v3.0.5
	github.com/zishang520/socket.io/servers/socket/v3 v3.0.5
	github.com/zishang520/socket.io/v3 v3.0.5
	golang.org/x/time v0.16.0
)

require (
	github.com/andybalholm/brotli v1.2.4 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/dunglas/httpsfv v1.1.1 // indirect
	github.com/gookit/color v1.6.1 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/quic-go/quic-go v0.62.0 // indirect
	github.com/quic-go/webtransport-go v0.13.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/xo/terminfo v1.2.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	resty.dev/v3 v3.0.0-rc.4 // indirect
)
