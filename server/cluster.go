package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"
	clusteradapter "github.com/zishang520/socket.io/adapters/adapter/v3"
	sioredis "github.com/zishang520/socket.io/adapters/redis/v3"
	"github.com/zishang520/socket.io/adapters/redis/v3/adapter"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// DefaultNodeLease is how long a cluster node holds its sessions without
// renewing its lease in Redis (README.md, Cluster mode).
const DefaultNodeLease = 10 * time.Second

// WithRedis makes the Server one node of a cluster whose state and
// messages go through the Redis server at url ("redis://host:port/db",
// Redis ≥ 7 for sharded Pub/Sub): names, roles and offices are kept in
// Redis, notify:* reach office members on every node, and client:* reach a
// Computer on any node (README.md, Cluster mode). Without it the Server is
// a single node and no Redis code runs.
func WithRedis(url string) Option {
	return func(c *config) error {
		opt, err := redis.ParseURL(url)
		if err != nil {
			// The parser's error may quote the URL, password included.
			return errors.New("WithRedis: not a Redis URL: want redis://[:password@]host:port/db")
		}
		// RESP2, whatever the URL asks: over RESP3, go-redis v9.18 drops a
		// Pub/Sub message now and then when one arrives split across reads
		// (redis/go-redis#3839; one in 2,000 under concurrent publishing
		// here), and the adapter's messages between nodes are Pub/Sub.
		// RESP2 has no push notifications: nothing else changes for the
		// commands the cluster uses.
		opt.Protocol = 2
		c.redis = opt
		return nil
	}
}

// WithNodeLease sets how long a cluster node's sessions outlive its last
// heartbeat (default 10 s): when a node stops, the others free its names,
// tell its offices and fail the requests routed to its Computers within
// about this time. The heartbeat runs every third of it.
func WithNodeLease(d time.Duration) Option {
	return func(c *config) error {
		if d < 300*time.Millisecond {
			return fmt.Errorf("WithNodeLease: %v is under 300ms", d)
		}
		c.nodeLease = d
		return nil
	}
}

const (
	keyPrefix      = "{smcp}:"
	channelPrefix  = "smcp"
	clusterEvent   = "smcp:cluster" // server-side messages between nodes
	redisOpTimeout = 3 * time.Second
	maxFieldLen    = 256 // names and office ids (schema maxLength)
)

var nodeIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// cluster is a node's link to the others. Nothing in it holds Server.mu
// while talking to Redis.
type cluster struct {
	s      *Server
	node   string
	lease  time.Duration
	rdb    *redis.Client
	ctx    context.Context // ends on Close or kill
	cancel context.CancelFunc
	wg     sync.WaitGroup
	peers  atomic.Int64
	pub    *publisher

	adapter *answerAdapter // the namespace's adapter, once start has run
	answers *redis.PubSub  // this node's answer channel (answerAdapter)
	reqSeq  atomic.Uint64  // request ids between nodes (requestID)
	// remote holds the calls routed to other nodes by their request id,
	// guarded by Server.mu; a call leaves it when it is finished.
	remote map[string]*call

	recountMu    sync.Mutex  // one recount at a time
	recountAgain atomic.Bool // a node started since the last recount began
	up           atomic.Bool // the last Redis operation succeeded

	adapterErrs everySecond // the adapter's error lines
	publishErrs everySecond // the publisher's error lines
	answerErrs  everySecond // the answer channel's error lines

	mu      sync.Mutex
	pending []entry // releases that failed while Redis was unreachable

	ackMarks []ackMark // the loop's marks of the namespace's ack ids (sweepAcks)
}

// ackMark is the namespace's next ack id at one heartbeat.
type ackMark struct {
	at time.Time
	id uint64
}

// entry is one session in the cluster state.
type entry struct {
	Node   string        `json:"node"`
	Sid    string        `json:"sid"`
	Role   protocol.Role `json:"role"`
	Name   string        `json:"name"`
	Office string        `json:"office"`
	// Version is the protocol version the session shows in
	// server:list_room (session.displayVersion): its generation is the
	// session's. Ext are a Computer's declared extensions, nil when it
	// declared none (generation.go).
	Version string   `json:"version,omitempty"`
	Ext     []string `json:"ext,omitzero"`
}

// gen is the generation of the entry's session.
func (e *entry) gen() protocol.Generation {
	if v, err := protocol.ParseVersion(e.Version); err == nil {
		if g, ok := protocol.GenerationOf(v); ok {
			return g
		}
	}
	return protocol.DefaultGeneration
}

// maxEntryLen bounds an entry read from Redis: four fields of maxFieldLen
// and 64 declared extensions of 64 bytes, with room for the JSON.
const maxEntryLen = 4*maxFieldLen + 64*(64+3) + 256

// extensionPattern is what a declared extension is (schema/enter_office_req.json).
var extensionPattern = regexp.MustCompile(`^client:[a-z_]{1,57}$`)

// decodeEntry validates an entry read from Redis as strictly as a client's
// request: another node is trusted no more than a client.
func decodeEntry(raw string) (*entry, error) {
	if len(raw) > maxEntryLen {
		return nil, errors.New("entry too long")
	}
	var e entry
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return nil, err
	}
	switch {
	case !nodeIDPattern.MatchString(e.Node):
		return nil, errors.New("bad node id")
	case e.Sid == "" || len(e.Sid) > 64:
		return nil, errors.New("bad sid")
	case e.Role != protocol.RoleAgent && e.Role != protocol.RoleComputer:
		return nil, errors.New("bad role")
	case e.Name == "" || len(e.Name) > maxFieldLen || e.Office == "" || len(e.Office) > maxFieldLen:
		return nil, errors.New("bad name or office")
	case len(e.Version) > 64 || len(e.Ext) > 64:
		return nil, errors.New("bad version or extensions")
	}
	if e.Version != "" {
		if _, err := protocol.ParseVersion(e.Version); err != nil {
			return nil, errors.New("bad version")
		}
	}
	for _, x := range e.Ext {
		if !extensionPattern.MatchString(x) {
			return nil, errors.New("bad extension")
		}
	}
	return &e, nil
}

// newCluster connects to Redis, registers the node's lease and returns
// the adapter builder for the Socket.IO server.
func newCluster(s *Server) (*cluster, socket.AdapterConstructor, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	cl := &cluster{s: s, node: hex.EncodeToString(b[:]), lease: s.cfg.nodeLease, rdb: redis.NewClient(s.cfg.redis), remote: map[string]*call{}}
	cl.ctx, cl.cancel = context.WithCancel(context.Background())
	ctx, cancel := context.WithTimeout(cl.ctx, redisOpTimeout)
	defer cancel()
	if _, err := cl.heartbeat(ctx); err != nil {
		_ = cl.rdb.Close()
		cl.cancel()
		return nil, nil, fmt.Errorf("WithRedis: %w", err)
	}
	rc := sioredis.NewRedisClient(cl.ctx, cl.rdb)
	_ = rc.On("error", func(args ...any) {
		// At most one line a second: the adapter's receive loops report
		// every failed read while Redis is unreachable.
		if len(args) > 0 && cl.ctx.Err() == nil && cl.adapterErrs.allow() {
			s.log.Warn("redis adapter error", "error", fmt.Sprint(args[0]))
		}
	})
	opts := adapter.DefaultShardedRedisAdapterOptions()
	opts.SetChannelPrefix(channelPrefix)
	// Static: two channels per node whatever the number of offices (and
	// the node's answer channel, cluster.receiveAnswers). The
	// default dynamic mode opens one subscription (one Redis connection on
	// a standalone Redis) per office a node has members in, which clients
	// would control.
	opts.SetSubscriptionMode(sioredis.StaticSubscriptionMode)
	cl.pub = &publisher{rdb: cl.rdb, ctx: cl.ctx, fail: func(err error) {
		if cl.ctx.Err() != nil {
			return
		}
		if !errors.Is(err, errPublishCongested) {
			_ = cl.note(err)
		}
		if cl.publishErrs.allow() {
			cl.s.log.Warn("cluster messages not sent", "error", err.Error())
		}
	}}
	return cl, &answerAdapterBuilder{redis: rc, opts: opts, pub: cl.pub}, nil
}

// answerAdapter is the library's sharded Redis adapter with these changes
// (spec/decisions.md, Cluster mode: cross-node request path), made through
// the prototype hook the adapter offers (it publishes through its
// prototype's DoPublish and DoPublishResponse).
//
// A routed request (routeRemote, the Server's only cross-node emit with
// acknowledgement) is the adapter's own BROADCAST message with a request id,
// published by the Server itself (publishRequest) with an id of its own
// (cluster.requestID): every node's adapter delivers it to its clients in
// the Computer's room as it does any broadcast with acknowledgement. The
// node that reached the Computer answers, as the adapter does, with a
// client count and the Computer's ack (BROADCAST_CLIENT_COUNT, BROADCAST_ACK),
// but to the requesting node's answer channel (answerChannel), which that
// node reads in its own loop (cluster.receiveAnswers) and matches to the call
// by its id, instead of the adapter's response channel: the adapter's
// receive loop copies each message twice more and decodes it into generic
// values before looking the request up, and keeps every request it sent,
// with a timer, until the request's timeout has passed, answered or not.
//
// A request's JSON text crosses as a MessagePack extension value (nodeJSON)
// and a Computer's answer as the JSON text the Computer sent, as a
// MessagePack binary string, instead of that text inlined in the adapter's
// JSON message: nothing decodes either into generic values for the Server to
// encode again. The library's decoder reads MessagePack messages too (it
// tells them from JSON by their first byte); the receiving node checks that
// every such value is one JSON value before relaying it (nodeJSON,
// fromNode). Every node of a cluster must run this version.
//
// A node that reached the Computer holds its client count for countDelay
// and drops it if the answer is published meanwhile: the requesting node
// relays the answer without it, and needs the counts only to know when no
// node has the Computer, or that a slow one was reached. That is one
// message less per request, and the answer no longer waits behind the
// count's round trip.
//
// Messages are handed to the node's publisher, which sends them in order,
// in as few round trips as possible (cluster_publish.go): routed requests
// and the answers to other nodes' requests without making the caller wait
// for Redis; the others (notifications, room changes, server-side messages)
// before the call returns, as the library does, so that what a client does
// next cannot overtake them. Those are encoded as the library encodes them
// (JSON; MessagePack only for binary data, which SMCP never carries and the
// Server refuses, left to the library), to the same channels: the
// namespace's main channel, and the requester's response channel.
type answerAdapter struct {
	adapter.ShardedRedisAdapter
	pub     *publisher
	channel string // the namespace's main channel

	mu   sync.Mutex
	held map[string]*time.Timer // counts held by request id (holdCount)

	answered atomic.Pointer[func(to, id string)] // called as a Computer's answer to a routed request leaves (Server.remoteAnswerSent)
}

// nodeRequestPrefix starts the request ids of routed requests (requestID):
// their counts and acks go to the requester's answer channel. The library's
// own ids are hexadecimal.
const nodeRequestPrefix = "smcp-"

// answerChannel is the channel the node whose adapter has uid reads the
// answers to its routed requests on (cluster.receiveAnswers).
func (a *answerAdapter) answerChannel(uid clusteradapter.ServerId) string {
	return a.channel + string(uid) + "#answers#"
}

// publishRequest publishes a routed request to every node: the adapter's
// BROADCAST of packet to room, with the request id id.
func (a *answerAdapter) publishRequest(id string, packet *parser.Packet, room socket.Room) error {
	_, err := a.PublishAndReturnOffset(&clusteradapter.ClusterMessage{
		Type: clusteradapter.BROADCAST,
		Data: &clusteradapter.BroadcastMessage{
			Packet:    packet,
			RequestId: &id,
			Opts:      &clusteradapter.PacketOptions{Rooms: []socket.Room{room}},
		},
	})
	return err
}

func (a *answerAdapter) DoPublish(m *clusteradapter.ClusterMessage) (clusteradapter.Offset, error) {
	if parser.HasBinary(m.Data) {
		return a.ShardedRedisAdapter.DoPublish(m)
	}
	if d, ok := m.Data.(*clusteradapter.BroadcastMessage); ok && m.Type == clusteradapter.BROADCAST && d.RequestId != nil && d.Packet != nil {
		// A routed request: its answer is awaited.
		if args, ok := d.Packet.Data.([]any); ok {
			packet := *d.Packet
			packet.Data = toNode(args)
			data := *d
			data.Packet = &packet
			msg := *m
			msg.Data = &data
			payload, err := encodeMsgpack(&msg, 256)
			if err != nil {
				return "", fmt.Errorf("failed to encode message: %w", err)
			}
			return "", a.pub.publish(a.channel, payload)
		}
	}
	payload, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("failed to encode message: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	return "", a.pub.publishWait(ctx, a.channel, payload)
}

func (a *answerAdapter) DoPublishResponse(to clusteradapter.ServerId, r *clusteradapter.ClusterResponse) error {
	if d, ok := r.Data.(*clusteradapter.BroadcastClientCount); ok && r.Type == clusteradapter.BROADCAST_CLIENT_COUNT && d.ClientCount > 0 {
		if a.holdCount(d.RequestId, func() { _ = a.publishResponse(to, r) }) {
			return nil
		}
	}
	if d, ok := r.Data.(*clusteradapter.BroadcastAck); ok && r.Type == clusteradapter.BROADCAST_ACK {
		a.dropCount(d.RequestId)
		if f := a.answered.Load(); f != nil && strings.HasPrefix(d.RequestId, nodeRequestPrefix) {
			(*f)(string(to), d.RequestId)
		}
	}
	return a.publishResponse(to, r)
}

// countDelay is how long a node holds the client count of a request it
// delivered before publishing it: the answer usually comes first, and then
// the count is never sent.
const countDelay = 250 * time.Millisecond

// maxHeldCounts bounds the counts held at once; past it they are published
// at once.
const maxHeldCounts = 1 << 16

// holdCount keeps a positive count for countDelay, then publish runs it,
// unless the answer was published first; false if too many are held.
func (a *answerAdapter) holdCount(id string, publish func()) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.held) >= maxHeldCounts {
		return false
	}
	if a.held == nil {
		a.held = map[string]*time.Timer{}
	}
	a.held[id] = time.AfterFunc(countDelay, func() {
		a.mu.Lock()
		_, ok := a.held[id]
		delete(a.held, id)
		a.mu.Unlock()
		if ok {
			publish()
		}
	})
	return true
}

func (a *answerAdapter) dropCount(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.held[id]; ok {
		t.Stop()
		delete(a.held, id)
	}
}

func (a *answerAdapter) publishResponse(to clusteradapter.ServerId, r *clusteradapter.ClusterResponse) error {
	channel := a.channel + string(to) + "#"
	var payload []byte
	var err error
	switch d := r.Data.(type) {
	case *clusteradapter.BroadcastAck:
		if r.Type != clusteradapter.BROADCAST_ACK {
			break
		}
		if strings.HasPrefix(d.RequestId, nodeRequestPrefix) {
			channel = a.answerChannel(to)
		}
		size := 128
		packet := make([]any, len(d.Packet))
		for i, v := range d.Packet {
			if raw, ok := v.(json.RawMessage); ok {
				v = []byte(raw) // a binary string: fromNode checks it
				size += len(raw) + 8
			}
			packet[i] = v
		}
		r.Data = &clusteradapter.BroadcastAck{RequestId: d.RequestId, Packet: packet}
		payload, err = encodeMsgpack(r, size)
	case *clusteradapter.BroadcastClientCount:
		if strings.HasPrefix(d.RequestId, nodeRequestPrefix) {
			channel = a.answerChannel(to)
		}
	}
	if payload == nil && err == nil {
		if parser.HasBinary(r.Data) {
			return a.ShardedRedisAdapter.DoPublishResponse(to, r)
		}
		payload, err = json.Marshal(r)
	}
	if err != nil {
		return fmt.Errorf("failed to encode response: %w", err)
	}
	return a.pub.publish(channel, payload)
}

// encodeMsgpack encodes v in MessagePack, as the library does, into a
// buffer of size bytes to begin with: an answer is encoded without growing
// its buffer several times.
func encodeMsgpack(v any, size int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size))
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(buf)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// answerAdapterBuilder builds an answerAdapter for a namespace.
type answerAdapterBuilder struct {
	redis *sioredis.RedisClient
	opts  adapter.ShardedRedisAdapterOptionsInterface
	pub   *publisher
}

func (b *answerAdapterBuilder) New(nsp socket.Namespace) socket.Adapter {
	inner := adapter.MakeShardedRedisAdapter()
	// The channel names of the library's sharded adapter.
	a := &answerAdapter{ShardedRedisAdapter: inner, pub: b.pub, channel: channelPrefix + "#" + nsp.Name() + "#"}
	inner.Prototype(a)
	inner.SetRedis(b.redis)
	inner.SetOpts(b.opts)
	inner.Construct(nsp)
	return a
}

// nodeJSON is the JSON text of a routed request crossing nodes inside the
// adapter's MessagePack message as an extension value of its own (type
// nodeJSONExt), so that the Computer's node gets the text itself, never
// decoded into generic values and encoded again (wireEncoder writes it
// unchanged). Decoding one checks that it is exactly one JSON value: a node
// is trusted no more than a client. A message that fails is dropped, as the
// library drops any message it cannot decode, and counted: the heartbeat
// logs the count (nodeJSONRefused).
type nodeJSON []byte

// nodeJSONExt is nodeJSON's MessagePack extension type; the library's
// adapter registers none.
const nodeJSONExt = 83

// nodeJSONRefused counts the nodeJSON values that were not one JSON value.
var nodeJSONRefused atomic.Int64

func init() { msgpack.RegisterExt(nodeJSONExt, (*nodeJSON)(nil)) }

func (j *nodeJSON) MarshalMsgpack() ([]byte, error) { return *j, nil }

func (j *nodeJSON) UnmarshalMsgpack(b []byte) error {
	if !validJSON(b) {
		nodeJSONRefused.Add(1)
		return errors.New("a JSON text from another node is not one JSON value")
	}
	*j = append((*j)[:0], b...)
	return nil
}

// MarshalJSON writes the text as it is, should the library's JSON encoder
// meet it.
func (j nodeJSON) MarshalJSON() ([]byte, error) { return j, nil }

// nodeCaller is the caller of a routed request crossing nodes, its last
// argument: the version of the Agent's generation, the office and name of
// the Computer it is for, and whether the Agent wrote a
// protocol.CallerVersionMember itself. The Computer's node never writes it
// to the socket: its encoder (wireEncoder.relayed) drops it and, when that
// Computer is an smcp-go one (Server.callerAware), gives the request the
// member, as the Agent's node does for a Computer of its own (withCaller).
// It crosses as a MessagePack extension value (nodeCallerExt) holding its
// JSON text.
type nodeCaller struct {
	Version string `json:"v"`
	Office  string `json:"o"`
	Name    string `json:"n"`
	Forged  bool   `json:"f,omitempty"`
	// Progress is set when the request asked for its progress
	// (cluster_progress.go).
	Progress *nodeProgress `json:"p,omitempty"`
}

// nodeCallerExt is nodeCaller's MessagePack extension type.
const nodeCallerExt = 84

func init() { msgpack.RegisterExt(nodeCallerExt, (*nodeCaller)(nil)) }

func (n *nodeCaller) MarshalMsgpack() ([]byte, error) { return json.Marshal(n) }

func (n *nodeCaller) UnmarshalMsgpack(b []byte) error {
	var v nodeCaller
	if len(b) > 6*maxFieldLen || json.Unmarshal(b, &v) != nil {
		return errors.New("a request's caller from another node is unreadable")
	}
	if _, err := protocol.ParseGeneration(v.Version); err != nil || v.Office == "" || v.Name == "" || len(v.Office) > maxFieldLen || len(v.Name) > maxFieldLen ||
		(v.Progress != nil && !v.Progress.valid()) {
		return errors.New("a request's caller from another node is invalid")
	}
	*n = v
	return nil
}

// add returns payload, the request as it crossed, with
// protocol.CallerVersionMember naming the caller's generation.
func (n *nodeCaller) add(payload any) any {
	g, err := protocol.ParseGeneration(n.Version)
	if err != nil {
		return payload
	}
	var raw []byte
	switch v := payload.(type) {
	case *nodeJSON:
		raw = *v
	case json.RawMessage:
		raw = v
	}
	if raw != nil && !n.Forged {
		if out, ok := appendCaller(raw, g); ok {
			return out
		}
	}
	var m map[string]any
	if raw != nil {
		_ = json.Unmarshal(raw, &m)
	} else {
		m, _ = payload.(map[string]any)
	}
	if m == nil {
		return payload
	}
	m = maps.Clone(m)
	m[protocol.CallerVersionMember] = g.String()
	b, err := json.Marshal(m)
	if err != nil {
		return payload
	}
	return json.RawMessage(b)
}

// toNode returns args with every json.RawMessage as a nodeJSON.
func toNode(args []any) []any {
	out := make([]any, len(args))
	for i, v := range args {
		if raw, ok := v.(json.RawMessage); ok {
			j := nodeJSON(raw)
			v = &j
		}
		out[i] = v
	}
	return out
}

// fromNode reads the values of a Computer's answer relayed by another node
// (answerAdapter): each must be a binary string holding one JSON value.
// Raw values come from a Computer on this node (wireParser), as is.
func fromNode(args []any) ([]any, bool) {
	out := make([]any, len(args))
	for i, v := range args {
		switch v := v.(type) {
		case json.RawMessage:
			out[i] = v
		case []byte:
			if !validJSON(v) {
				return nil, false
			}
			out[i] = json.RawMessage(v)
		default:
			return nil, false
		}
	}
	return out, true
}

// start subscribes to the other nodes' messages and runs the heartbeat.
func (cl *cluster) start() error {
	a, ok := cl.s.nsp.Adapter().(*answerAdapter)
	if !ok {
		return errors.New("the namespace's adapter is not the cluster's")
	}
	cl.adapter = a
	answered := cl.s.remoteAnswerSent
	a.answered.Store(&answered)
	if err := cl.s.nsp.On(clusterEvent, cl.onMessage); err != nil {
		return err
	}
	ctx, cancel := cl.op()
	defer cancel()
	cl.answers = cl.rdb.SSubscribe(cl.ctx, a.answerChannel(a.Uid()))
	if _, err := cl.answers.Receive(ctx); err != nil { // the subscription's confirmation
		_ = cl.answers.Close()
		return fmt.Errorf("WithRedis: %w", err)
	}
	cl.wg.Add(2)
	go cl.loop()
	go cl.receiveAnswers()
	// The others count this node at once, not at their next heartbeat.
	cl.publish(msgHello, map[string]any{})
	return nil
}

// spawn runs fn on a goroutine the cluster owns (close waits for it), unless
// the cluster is closing.
func (cl *cluster) spawn(fn func()) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.ctx.Err() != nil {
		return
	}
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		fn()
	}()
}

func (cl *cluster) op() (context.Context, context.CancelFunc) {
	return context.WithTimeout(cl.ctx, redisOpTimeout)
}

// note records whether Redis answered; the first failure and the recovery
// are logged once each.
func (cl *cluster) note(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		if !cl.up.Swap(true) {
			cl.s.log.Info("cluster state reachable", "node", cl.node)
		}
		return nil
	}
	if cl.up.Swap(false) && cl.ctx.Err() == nil {
		cl.s.log.Warn("cluster state unreachable", "node", cl.node, "error", err.Error())
	}
	return err
}

// heartbeat renews the lease; it returns the expired nodes, and re-registers
// the local sessions when the cluster had lost this node.
func (cl *cluster) heartbeat(ctx context.Context) ([]string, error) {
	res, err := heartbeatScript.Run(ctx, cl.rdb, []string{keyPrefix + "nodes"}, keyPrefix, cl.node, cl.lease.Milliseconds()).Slice()
	if cl.note(err) != nil {
		return nil, err
	}
	if len(res) != 3 {
		return nil, errors.New("heartbeat: unexpected answer")
	}
	known, _ := res[0].(int64)
	live, _ := res[1].(int64)
	cl.peers.Store(live)
	var dead []string
	if list, ok := res[2].([]any); ok {
		for _, d := range list {
			if id, ok := d.(string); ok && nodeIDPattern.MatchString(id) && id != cl.node {
				dead = append(dead, id)
			}
		}
	}
	if known == 0 && cl.s.nsp != nil {
		cl.resync(ctx)
	}
	return dead, nil
}

// recount runs a heartbeat now, to count the live nodes again after a node
// said it started (routeRemote relies on the count to know when no node has
// a Computer): one at a time, and once more after it when another node
// started meanwhile.
func (cl *cluster) recount() {
	if cl.recountAgain.Swap(true) {
		return // a recount that has not started its count yet will see it
	}
	cl.spawn(func() {
		cl.recountMu.Lock()
		defer cl.recountMu.Unlock()
		if !cl.recountAgain.Swap(false) {
			return
		}
		ctx, cancel := cl.op()
		defer cancel()
		_, _ = cl.heartbeat(ctx)
	})
}

// sawPeers raises the number of live nodes to n when more nodes than that
// answered a request; the next heartbeat counts them again.
func (cl *cluster) sawPeers(n int64) {
	for {
		old := cl.peers.Load()
		if old >= n || cl.peers.CompareAndSwap(old, n) {
			return
		}
	}
}

// loop renews the lease every third of it, retries failed releases, and
// reaps the nodes whose lease expired.
func (cl *cluster) loop() {
	defer cl.wg.Done()
	t := time.NewTicker(cl.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-cl.ctx.Done():
			return
		case <-t.C:
		}
		if n := nodeJSONRefused.Swap(0); n > 0 {
			cl.s.log.Warn("cluster messages refused: a relayed request was not one JSON value", "count", n)
		}
		ctx, cancel := cl.op()
		dead, err := cl.heartbeat(ctx)
		if err == nil {
			cl.retryPending(ctx)
			for _, d := range dead {
				cl.reap(ctx, d, false)
			}
			cl.checkTargets(ctx)
		}
		cancel()
		cl.sweepAcks(time.Now())
	}
}

// sweepAcks drops, from the library's ack table of every Computer session
// of this node, the entries of requests whose deadline has passed on any
// node (spec/decisions.md, Limits against hostile clients). A request from
// another node reaches its Computer as the adapter's broadcast with
// acknowledgement, whose ack the library keeps until the Computer answers
// or disconnects; nothing on this node knows the request's deadline, so a
// Computer that never answers would keep one entry per request for as long
// as it stays. Ack ids grow with time (one counter per namespace): at every
// heartbeat the loop notes the next one, and an entry with an id below a
// mark taken longer ago than the longest deadline a request can have, plus
// a lease, belongs to a request every node has given up on. The calls
// routed on this node drop their entry themselves (emitCall).
func (cl *cluster) sweepAcks(now time.Time) {
	s := cl.s
	cl.ackMarks = append(cl.ackMarks, ackMark{at: now, id: s.nsp.Ids()})
	age := max(s.cfg.requestTimeout, s.cfg.maxToolTimeout+s.cfg.toolCallMargin) + cl.lease
	var below uint64
	for len(cl.ackMarks) > 0 && now.Sub(cl.ackMarks[0].at) >= age {
		below = cl.ackMarks[0].id
		cl.ackMarks = cl.ackMarks[1:]
	}
	if below == 0 {
		return
	}
	s.mu.Lock()
	var socks []*socket.Socket
	for _, sess := range s.sessions {
		if sess.role == protocol.RoleComputer {
			socks = append(socks, sess.sock)
		}
	}
	s.mu.Unlock()
	for _, sock := range socks {
		acks := sock.Acks()
		acks.Range(func(id uint64, _ socket.Ack) bool {
			if id < below {
				acks.Delete(id)
			}
			return true
		})
	}
}

// checkTargets fails the requests in flight to Computers of nodes whose
// lease has expired, whichever node reaps them: one lookup script per
// heartbeat for every call routed to another node (none on the request's
// path). A call's target is recorded the first time its name is found on a
// Computer of the call's office; from then on its node's lease is checked.
// A Computer that is not found (it left, or its node was reaped first) is
// left to the server-side messages (computer_gone, computer_lost) and to
// the call's timer.
func (cl *cluster) checkTargets(ctx context.Context) {
	s := cl.s
	byName := map[string][]*call{}
	byNode := map[string][]*call{}
	s.mu.Lock()
	for c := range s.calls {
		switch {
		case c.computer != nil:
		case c.remoteNode != "":
			byNode[c.remoteNode] = append(byNode[c.remoteNode], c)
		default:
			byName[c.computerName] = append(byName[c.computerName], c)
		}
	}
	s.mu.Unlock()
	names := slices.Sorted(maps.Keys(byName))
	nodes := slices.Sorted(maps.Keys(byNode))
	for len(names) > 0 || len(nodes) > 0 {
		n, m := min(len(names), lookupBatch), min(len(nodes), lookupBatch)
		found, live, err := cl.lookup(ctx, names[:n], nodes[:m])
		if err != nil {
			return
		}
		var down []string
		s.mu.Lock()
		for i, name := range names[:n] {
			e := found[i].e
			for _, c := range byName[name] {
				if c.done || e == nil || e.Office != c.office || e.Role != protocol.RoleComputer {
					continue
				}
				c.remoteNode, c.remoteSid = e.Node, e.Sid
				if !found[i].alive {
					down = append(down, e.Node)
				}
			}
		}
		s.mu.Unlock()
		for i, node := range nodes[:m] {
			if !live[i] {
				down = append(down, node)
			}
		}
		for _, node := range down {
			s.failNode(node)
		}
		names, nodes = names[n:], nodes[m:]
	}
}

// lookupBatch bounds the names and nodes one lookup script reads.
const lookupBatch = 256

// reap frees a node's sessions; the node that wins the reap tells their
// offices (notify:leave_office reaches members on every node).
func (cl *cluster) reap(ctx context.Context, node string, self bool) {
	force := "0"
	if self {
		force = "1"
	}
	raws, err := reapScript.Run(ctx, cl.rdb, []string{keyPrefix + "nodes"}, keyPrefix, node, force).StringSlice()
	if cl.note(err) != nil || len(raws) == 0 {
		return
	}
	if !self {
		cl.s.log.Warn("node lease expired: its sessions are freed", "node", node, "sessions", len(raws))
	}
	for _, raw := range raws {
		e, err := decodeEntry(raw)
		if err != nil {
			cl.s.log.Warn("invalid cluster entry ignored", "node", node, "error", err.Error())
			continue
		}
		if self {
			continue // a closing node tells its offices itself
		}
		p := map[string]any{"office_id": e.Office}
		if e.Role == protocol.RoleComputer {
			p["computer"] = e.Name
			// The requests in flight to it fail here and on every node
			// (a node that misses the message finds the lease expired
			// at its next heartbeat, checkTargets).
			cl.s.failLost(node, e.Sid, e.Name, e.Office)
			cl.publish(msgLost, map[string]any{"sid": e.Sid, "name": e.Name, "office": e.Office, "dead": node})
		} else {
			p["agent"] = e.Name
		}
		if err := cl.s.nsp.To(socket.Room(e.Office)).Emit(protocol.NotifyLeaveOffice, p); err != nil {
			cl.s.log.Warn("leave broadcast failed", "office_id", e.Office, "error", err.Error())
		}
	}
}

// join runs the atomic admission; it returns the refusal or nil.
func (cl *cluster) join(sess *session, role protocol.Role, name, office, oldOffice, oldName string, ext []string) *protocol.Error {
	ctx, cancel := cl.op()
	defer cancel()
	raw, err := json.Marshal(entry{Node: cl.node, Sid: sess.id, Role: role, Name: name, Office: office, Version: sess.displayVersion(), Ext: ext})
	if err != nil {
		return protocol.NewInternal("cluster entry: %v", err)
	}
	res, err := joinScript.Run(ctx, cl.rdb, []string{keyPrefix + "name:" + name}, keyPrefix, cl.node, sess.id, string(role), name, office, cl.s.cfg.maxOfficeSize, oldOffice, oldName, string(raw)).Text()
	if cl.note(err) != nil {
		return protocol.NewUnavailable("cluster state unreachable; try again")
	}
	switch res {
	case "ok":
		return nil
	case "computer_in_office":
		return protocol.NewForbidden("a computer named %q is already in office %q", name, office)
	case "name_taken":
		return protocol.NewForbidden("name %q is already registered by another session", name)
	case "room_full":
		return protocol.NewRoomFull("office %q already has an agent", office)
	case "office_full":
		return protocol.NewOfficeFull("office %q has reached its maximum of %d members", office, cl.s.cfg.maxOfficeSize)
	case "no_lease":
		return protocol.NewUnavailable("this node's lease has expired; try again")
	}
	return protocol.NewInternal("unexpected cluster answer")
}

// release removes a session from the cluster state; when Redis cannot be
// reached it is retried by the heartbeat.
func (cl *cluster) release(e entry) {
	ctx, cancel := cl.op()
	defer cancel()
	if err := cl.note(leaveScript.Run(ctx, cl.rdb, []string{keyPrefix + "name:" + e.Name}, keyPrefix, cl.node, e.Sid, e.Name, e.Office).Err()); err != nil {
		cl.mu.Lock()
		cl.pending = append(cl.pending, e)
		cl.mu.Unlock()
	}
}

func (cl *cluster) retryPending(context.Context) {
	cl.mu.Lock()
	p := cl.pending
	cl.pending = nil
	cl.mu.Unlock()
	for _, e := range p {
		cl.release(e)
	}
}

// located is a lookup's answer for one name: the session holding it on
// any node (nil: none), and whether that node's lease is live.
type located struct {
	e     *entry
	alive bool
}

// lookup finds the sessions holding names on any node, and whether the
// leases of nodes are live, in one Redis round trip.
func (cl *cluster) lookup(ctx context.Context, names, nodes []string) ([]located, []bool, error) {
	args := make([]any, 0, 2+len(names)+len(nodes))
	args = append(args, keyPrefix, len(names))
	for _, n := range names {
		args = append(args, n)
	}
	for _, n := range nodes {
		args = append(args, n)
	}
	res, err := lookupScript.Run(ctx, cl.rdb, []string{keyPrefix + "nodes"}, args...).Slice()
	if cl.note(err) != nil {
		return nil, nil, err
	}
	if len(res) != 2*len(names)+len(nodes) {
		return nil, nil, errors.New("lookup: unexpected answer")
	}
	found := make([]located, len(names))
	for i, name := range names {
		raw, ok := res[2*i].(string)
		if !ok {
			continue
		}
		e, err := decodeEntry(raw)
		if err != nil {
			cl.s.log.Warn("invalid cluster entry ignored", "name", clip(name, 64), "error", err.Error())
			continue
		}
		n, _ := res[2*i+1].(int64)
		found[i] = located{e, n == 1}
	}
	live := make([]bool, len(nodes))
	for i := range nodes {
		n, _ := res[2*len(names)+i].(int64)
		live[i] = n == 1
	}
	return found, live, nil
}

// lookupName finds the session holding name on any node.
func (cl *cluster) lookupName(name string) (*entry, bool, error) {
	ctx, cancel := cl.op()
	defer cancel()
	found, _, err := cl.lookup(ctx, []string{name}, nil)
	if err != nil {
		return nil, false, err
	}
	return found[0].e, found[0].alive, nil
}

// members lists an office's live sessions on every node.
func (cl *cluster) members(office string) ([]*entry, error) {
	ctx, cancel := cl.op()
	defer cancel()
	raws, err := membersScript.Run(ctx, cl.rdb, []string{keyPrefix + "office:" + office}, keyPrefix, office).StringSlice()
	if cl.note(err) != nil {
		return nil, err
	}
	var out []*entry
	for _, raw := range raws {
		e, err := decodeEntry(raw)
		if err != nil {
			cl.s.log.Warn("invalid cluster entry ignored", "office_id", clip(office, 64), "error", err.Error())
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// resync registers every local session again after the cluster lost this
// node (Redis restarted empty, or the node was reaped while cut off). A
// session whose name or office seat was taken meanwhile is disconnected:
// its client reconnects and joins again under the rules.
func (cl *cluster) resync(context.Context) {
	s := cl.s
	s.mu.Lock()
	var local []*session
	for _, sess := range s.sessions {
		if sess.office != "" {
			local = append(local, sess)
		}
	}
	s.mu.Unlock()
	s.log.Warn("cluster had lost this node: registering its sessions again", "node", cl.node, "sessions", len(local))
	for _, sess := range local {
		sess.opMu.Lock() // not while the session joins, leaves or goes
		s.mu.Lock()
		role, name, office, closed, ext := sess.role, sess.name, sess.office, sess.closed, sess.extensions
		s.mu.Unlock()
		var err *protocol.Error
		if !closed && office != "" {
			err = cl.join(sess, role, name, office, "", "", ext)
		}
		sess.opMu.Unlock()
		if err != nil {
			s.log.Warn("session could not be registered again: disconnecting it", "sid", sess.id, "name", name, "office_id", office, "code", int(err.Code), "reason", err.Message)
			sess.sock.Disconnect(true)
		}
	}
}

// requestID returns a new id for a routed request (answerAdapter).
func (cl *cluster) requestID() string {
	return nodeRequestPrefix + strconv.FormatUint(cl.reqSeq.Add(1), 36)
}

// receiveAnswers reads this node's answer channel: the other nodes' counts
// and Computers' acks for the requests this node routed to them
// (answerAdapter), each handed to its call on this goroutine.
func (cl *cluster) receiveAnswers() {
	defer cl.wg.Done()
	for {
		m, err := cl.answers.ReceiveMessage(cl.ctx)
		if err != nil {
			if cl.ctx.Err() != nil || errors.Is(err, redis.ErrClosed) {
				return
			}
			// Redis unreachable: go-redis subscribes again on the next
			// call; not in a tight loop.
			if cl.answerErrs.allow() {
				cl.s.log.Warn("cluster answer channel unreadable", "error", err.Error())
			}
			select {
			case <-cl.ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		cl.onAnswer(m.Payload)
	}
}

// nodeAnswer is a message on a node's answer channel: the adapter's
// BROADCAST_CLIENT_COUNT or BROADCAST_ACK (ClusterResponse) in MessagePack,
// the ack's values as binary strings (answerAdapter.publishResponse).
type nodeAnswer struct {
	Nsp  string                     `msgpack:"nsp"`
	Type clusteradapter.MessageType `msgpack:"type"`
	Data struct {
		RequestID   string   `msgpack:"requestId"`
		ClientCount uint64   `msgpack:"clientCount"`
		Packet      [][]byte `msgpack:"packet"`
		Progress    []byte   `msgpack:"progress,omitempty"` // a progressAnswer's report (cluster_progress.go)
	} `msgpack:"data"`
}

// onAnswer validates a message from the answer channel as it would a
// client's (spec/decisions.md, Cluster mode: trust), and hands it to the
// call it answers; one for a call that is over (answered, timed out) is
// dropped.
func (cl *cluster) onAnswer(payload string) {
	var m nodeAnswer
	// Read from the string itself: the answer's text is copied once, into
	// the value relayed to the Agent. Reset also clears the options a
	// pooled decoder may carry.
	dec := msgpack.GetDecoder()
	dec.Reset(strings.NewReader(payload))
	err := dec.Decode(&m)
	msgpack.PutDecoder(dec)
	switch {
	case err != nil:
	case m.Nsp != cl.s.nsp.Name():
		err = errors.New("another namespace")
	case m.Type != clusteradapter.BROADCAST_CLIENT_COUNT && m.Type != clusteradapter.BROADCAST_ACK && m.Type != progressAnswer:
		err = fmt.Errorf("unknown type %d", m.Type)
	}
	if err != nil {
		if cl.answerErrs.allow() {
			cl.s.log.Warn("cluster message refused on the answer channel", "error", err.Error())
		}
		return
	}
	cl.s.mu.Lock()
	c := cl.remote[m.Data.RequestID]
	cl.s.mu.Unlock()
	if c == nil {
		return
	}
	if m.Type == clusteradapter.BROADCAST_CLIENT_COUNT {
		cl.s.remoteCounted(c, m.Data.ClientCount)
		return
	}
	if m.Type == progressAnswer {
		cl.onProgress(c, m.Data.Progress)
		return
	}
	args := make([]any, len(m.Data.Packet))
	for i, v := range m.Data.Packet {
		args[i] = v
	}
	cl.s.remoteAnswered(c, args)
}

// message kinds between nodes.
const (
	msgGone  = "computer_gone" // a Computer session ended: fail requests in flight to it
	msgLost  = "computer_lost" // a reaped node held this Computer: fail requests in flight to it
	msgHello = "node_started"  // a node joined the cluster: count the live nodes again
)

// publish tells the other nodes something; best effort (a node that misses
// it still sees the Computer gone through the Redis state and timeouts).
func (cl *cluster) publish(kind string, fields map[string]any) {
	fields["type"] = kind
	fields["node"] = cl.node
	if err := cl.s.nsp.ServerSideEmit(clusterEvent, fields); err != nil {
		cl.s.log.Warn("cluster message not sent", "type", kind, "error", err.Error())
	}
}

// onMessage validates a message from another node before acting on it.
func (cl *cluster) onMessage(args ...any) {
	var m map[string]any
	if len(args) == 1 {
		m, _ = args[0].(map[string]any)
	}
	kind, _ := m["type"].(string)
	node, _ := m["node"].(string)
	if m == nil || !nodeIDPattern.MatchString(node) {
		cl.s.log.Warn("cluster message refused: malformed", "args", len(args))
		return
	}
	if kind == msgHello {
		cl.recount()
		return
	}
	if kind != msgGone && kind != msgLost {
		cl.s.log.Warn("cluster message refused: unknown type", "type", clip(kind, 32), "from", node)
		return
	}
	sid, _ := m["sid"].(string)
	name, _ := m["name"].(string)
	office, _ := m["office"].(string)
	dead, _ := m["dead"].(string)
	if sid == "" || len(sid) > 64 || name == "" || len(name) > maxFieldLen || office == "" || len(office) > maxFieldLen ||
		(kind == msgLost && !nodeIDPattern.MatchString(dead)) {
		cl.s.log.Warn("cluster message refused: bad fields", "type", kind, "from", node)
		return
	}
	if kind == msgLost {
		cl.s.failLost(dead, sid, name, office)
		return
	}
	cl.s.failRemote(matchTarget(node, sid, name, office), func(c *call) *protocol.Error {
		return computerGone(c)
	})
}

// matchTarget matches the calls routed to the Computer session sid of node:
// by session once the call's target is known (checkTargets), else by the
// Computer's name in the call's office.
func matchTarget(node, sid, name, office string) func(*call) bool {
	return func(c *call) bool {
		if c.remoteSid != "" {
			return c.remoteSid == sid && c.remoteNode == node
		}
		return c.computerName == name && c.office == office
	}
}

// ready pings Redis.
func (cl *cluster) ready(ctx context.Context) error {
	if err := cl.note(cl.rdb.Ping(ctx).Err()); err != nil {
		return protocol.NewUnavailable("cluster state unreachable")
	}
	return nil
}

// close releases the node's sessions in Redis and stops the heartbeat;
// the adapter is closed with the Socket.IO server, then the client.
func (cl *cluster) close(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisOpTimeout)
	defer cancel()
	cl.pub.flush(rctx) // what the node told the others before closing
	cl.mu.Lock()
	cl.cancel()
	cl.mu.Unlock()
	if cl.answers != nil {
		_ = cl.answers.Close() // ends receiveAnswers
	}
	cl.wg.Wait()
	cl.pub.flush(rctx) // a batch sent meanwhile ends with cl.ctx
	cl.reap(rctx, cl.node, true)
}

func (cl *cluster) closeClient() { _ = cl.rdb.Close() }
