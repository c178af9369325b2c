package server

import "github.com/redis/go-redis/v9"

// The cluster state in Redis (README.md, Cluster mode). Every key carries
// the hash tag {smcp}, so that the scripts below, which touch several keys,
// run on one Redis Cluster slot too. Values are JSON written by nodes and
// validated by every node that reads them (cluster.go, decodeEntry).
//
//	{smcp}:nodes              set of node ids that registered
//	{smcp}:lease:<node>       the node's lease, expires unless renewed
//	{smcp}:name:<name>        {"node","sid","role","name","office","version","ext"} of the session holding name
//	{smcp}:office:<office>    hash sid → the same entry
//	{smcp}:held:<node>        hash sid → same entry, the sessions a node holds
//
// A session of a node whose lease has expired counts as gone in every
// check, before any node has reaped it.

// joinScript admits a session to an office atomically: the name check, the
// one-Agent check and the office size are decided in one step, so two nodes
// admitting the same name at the same instant cannot both succeed. A
// Computer switching offices leaves its old office in the same step.
//
// ARGV: prefix, node, sid, role, name, office, max office size, old office
// ("" when none), old name, the entry as JSON (the same node, sid, role,
// name and office, and the session's version and extensions; cluster.go,
// entry). Returns "ok" or the refusal's kind.
var joinScript = redis.NewScript(`
local p, node, sid, role, name, office = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local maxSize, oldOffice, oldName = tonumber(ARGV[7]), ARGV[8], ARGV[9]
local function alive(n) return redis.call('EXISTS', p .. 'lease:' .. n) == 1 end
local function decode(s)
  local ok, e = pcall(cjson.decode, s)
  if ok and type(e) == 'table' and type(e.node) == 'string' and type(e.sid) == 'string' then return e end
  return nil
end
if not alive(node) then return 'no_lease' end
local cur = redis.call('GET', p .. 'name:' .. name)
if cur then
  local e = decode(cur)
  if e and e.sid ~= sid and alive(e.node) then
    if e.role == 'computer' and role == 'computer' and e.office == office then return 'computer_in_office' end
    return 'name_taken'
  end
end
local members = redis.call('HGETALL', p .. 'office:' .. office)
local n = 0
for i = 1, #members, 2 do
  local e = decode(members[i + 1])
  if members[i] ~= sid and e and alive(e.node) then
    n = n + 1
    if role == 'agent' and e.role == 'agent' then return 'room_full' end
  end
end
if n >= maxSize then return 'office_full' end
if oldOffice ~= '' then
  redis.call('HDEL', p .. 'office:' .. oldOffice, sid)
  local old = redis.call('GET', p .. 'name:' .. oldName)
  if old then
    local e = decode(old)
    if e and e.sid == sid then redis.call('DEL', p .. 'name:' .. oldName) end
  end
end
local entry = ARGV[10]
redis.call('SET', p .. 'name:' .. name, entry)
redis.call('HSET', p .. 'office:' .. office, sid, entry)
redis.call('HSET', p .. 'held:' .. node, sid, entry)
return 'ok'
`)

// leaveScript removes a session from its office and frees its name when it
// still holds it. ARGV: prefix, node, sid, name, office.
var leaveScript = redis.NewScript(`
local p, node, sid, name, office = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
redis.call('HDEL', p .. 'office:' .. office, sid)
redis.call('HDEL', p .. 'held:' .. node, sid)
local cur = redis.call('GET', p .. 'name:' .. name)
if cur then
  local ok, e = pcall(cjson.decode, cur)
  if ok and type(e) == 'table' and e.sid == sid then redis.call('DEL', p .. 'name:' .. name) end
end
return 'ok'
`)

// lookupScript reads, in one step, the entries holding some names and
// whether their nodes' leases are live, and whether some nodes' leases are
// live: {entry or false, 0|1} per name, then 0|1 per node. ARGV: prefix,
// the number of names, the names, the node ids.
var lookupScript = redis.NewScript(`
local p, n = ARGV[1], tonumber(ARGV[2])
local out = {}
for i = 3, 2 + n do
  local cur = redis.call('GET', p .. 'name:' .. ARGV[i])
  local live = 0
  if cur then
    local ok, e = pcall(cjson.decode, cur)
    if ok and type(e) == 'table' and type(e.node) == 'string' then live = redis.call('EXISTS', p .. 'lease:' .. e.node) end
  else
    cur = false
  end
  table.insert(out, cur)
  table.insert(out, live)
end
for i = 3 + n, #ARGV do
  table.insert(out, redis.call('EXISTS', p .. 'lease:' .. ARGV[i]))
end
return out
`)

// membersScript lists an office's entries whose node is live, and whether
// the office has any entry at all. ARGV: prefix, office.
var membersScript = redis.NewScript(`
local p = ARGV[1]
local members = redis.call('HGETALL', p .. 'office:' .. ARGV[2])
local out = {}
for i = 1, #members, 2 do
  local ok, e = pcall(cjson.decode, members[i + 1])
  if ok and type(e) == 'table' and type(e.node) == 'string' and redis.call('EXISTS', p .. 'lease:' .. e.node) == 1 then
    table.insert(out, members[i + 1])
  end
end
return out
`)

// heartbeatScript renews the node's lease and reports whether the cluster
// still knew the node (0: Redis lost its state, or the node was reaped
// while it could not reach Redis; the node then registers its sessions
// again). It also returns the registered nodes whose lease has expired.
// ARGV: prefix, node, lease in ms.
var heartbeatScript = redis.NewScript(`
local p, node = ARGV[1], ARGV[2]
local known = redis.call('SISMEMBER', p .. 'nodes', node)
redis.call('SADD', p .. 'nodes', node)
redis.call('SET', p .. 'lease:' .. node, '1', 'PX', tonumber(ARGV[3]))
local dead = {}
local live = 0
for _, n in ipairs(redis.call('SMEMBERS', p .. 'nodes')) do
  if redis.call('EXISTS', p .. 'lease:' .. n) == 1 then live = live + 1 else table.insert(dead, n) end
end
return {known, live, dead}
`)

// reapScript frees what a node whose lease has expired held, once: the
// caller that removes it from the node set gets its entries back (to tell
// the offices), every other caller gets nothing. With a live lease nothing
// happens. ARGV: prefix, node, force ("1": the node itself is releasing).
var reapScript = redis.NewScript(`
local p, node = ARGV[1], ARGV[2]
if ARGV[3] ~= '1' and redis.call('EXISTS', p .. 'lease:' .. node) == 1 then return {} end
if ARGV[3] == '1' then redis.call('DEL', p .. 'lease:' .. node) end
if redis.call('SREM', p .. 'nodes', node) == 0 and ARGV[3] ~= '1' then return {} end
local held = redis.call('HGETALL', p .. 'held:' .. node)
local out = {}
for i = 1, #held, 2 do
  local sid, raw = held[i], held[i + 1]
  local ok, e = pcall(cjson.decode, raw)
  if ok and type(e) == 'table' and type(e.office) == 'string' and type(e.name) == 'string' then
    redis.call('HDEL', p .. 'office:' .. e.office, sid)
    local cur = redis.call('GET', p .. 'name:' .. e.name)
    if cur then
      local ok2, c = pcall(cjson.decode, cur)
      if ok2 and type(c) == 'table' and c.sid == sid then redis.call('DEL', p .. 'name:' .. e.name) end
    end
  end
  table.insert(out, raw)
end
redis.call('DEL', p .. 'held:' .. node)
return out
`)
