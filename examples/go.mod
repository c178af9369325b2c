module github.com/a2c-smcp/smcp-go/examples

go 1.26.0

require (
	github.com/a2c-smcp/smcp-go/agent v0.1.0
	github.com/a2c-smcp/smcp-go/computer v0.1.0
	github.com/a2c-smcp/smcp-go/dpekit v0.1.0
	github.com/a2c-smcp/smcp-go/inspector v0.1.0
	github.com/a2c-smcp/smcp-go/protocol v0.1.0
	github.com/a2c-smcp/smcp-go/server v0.1.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/ledongthuc/pdf v0.0.0-20260907135840-6c8c28e0e8a0
	github.com/mark3labs/mcp-go v1.2.1
	github.com/stretchr/testify v1.12.1
	github.com/xuri/excelize/v2 v2.10.1
	github.com/yuin/goldmark v1.8.7
	go.abhg.dev/goldmark/frontmatter v0.2.0
)

require (
	github.com/andybalholm/brotli v1.2.4 // indirect
	github.com/dunglas/httpsfv v1.1.1 // indirect
	github.com/gookit/color v1.6.1 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/quic-go/quic-go v0.62.0 // indirect
	github.com/quic-go/webtransport-go v0.13.0 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/xo/terminfo v1.2.0 // indirect
	github.com/zishang520/socket.io/parsers/engine/v3 v3.0.5 // indirect
	github.com/zishang520/socket.io/parsers/socket/v3 v3.0.5 // indirect
	github.com/zishang520/socket.io/servers/engine/v3 v3.0.5 // indirect
	github.com/zishang520/socket.io/servers/socket/v3 v3.0.5 // indirect
	github.com/zishang520/socket.io/v3 v3.0.5 // indirect
	golang.org/x/term v0.47.0 // indirect
	resty.dev/v3 v3.0.0-rc.4 // indirect
)

require (
	github.com/BurntSushi/toml v1.2.1 // indirect
	github.com/a2c-smcp/smcp-go/sio v0.1.0 // indirect
	github.com/aymerick/douceur v0.2.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gorilla/css v1.0.1 // indirect
	github.com/microcosm-cc/bluemonday v1.0.27 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/realclientip/realclientip-go v1.0.0 // indirect
	github.com/redis/go-redis/v9 v9.18.0 // indirect
	github.com/richardlehane/mscfb v1.0.6 // indirect
	github.com/richardlehane/msoleps v1.0.6 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/tiendc/go-deepcopy v1.7.2 // indirect
	github.com/xuri/efp v0.0.1 // indirect
	github.com/xuri/nfp v0.0.2-0.20250530014748-2ddeb826f9a9 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	github.com/zishang520/socket.io/adapters/adapter/v3 v3.0.2 // indirect
	github.com/zishang520/socket.io/adapters/redis/v3 v3.0.2 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
