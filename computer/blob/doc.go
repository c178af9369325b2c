// Package blob holds a Computer's binary sideband of protocol 0.4
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md#blobs):
// the Spool, where the binary content of tool results too large to travel
// inline waits for client:get_blob, and the Landing, where client:put_blob
// uploads arrive.
//
// # Blobs out
//
// Spool.Mint moves every binary content item of a CallToolResult (the data
// of an image or audio block, the blob of an embedded resource) whose
// decoded size is above the inline budget (32 KiB, WithInlineBudget) to the
// spool, as the 0.4 reference Computers do: the inline bytes become "", and
// the item's _meta gets a2c_blob_handle, a2c_total_size and a2c_sha256.
// Items above the mint cap (100 MiB, WithMintCap, the references' cap) or
// that are not valid base64 stay inline.
//
// A large item need not reach Mint inline: package mcpclient decodes it
// from the MCP server's answer as it arrives straight into the spool
// (Spool.Stage: each write takes its room, bounded by the mint cap and the
// spool's bound; Staged.Commit), and leaves in the item's place a reference
// that Mint claims for the office (Inline puts the bytes back for a 0.2.0
// session). A staged blob is served to nobody before it is claimed, spared
// by eviction, and dropped after a minute if never claimed.
//
// Spool.Read answers client:get_blob: stateless chunks addressed by
// offset, at most 256 KiB each (MaxChunkBytes), with eof, sha256, mime_type
// and total_size. A handle is 32 bytes of crypto/rand, served only to the
// office it was minted for, for its lifetime (WithLifetime, 15 minutes).
// Refusals are 4018 "Blob not accessible" with details.reason:
// invalid_handle (not a handle of this spool's form), forbidden (another
// office), gone (expired, evicted, or never minted by this process), range
// (an offset beyond the blob).
//
// The spool is bounded: its bytes on disk never exceed WithMaxBytes (1 GiB);
// a blob that would pass the bound evicts the oldest ones first, which then
// answer gone. Its directory is the spool's own: emptied when the spool
// opens (what a previous process left), refused while another live spool
// holds it (an open spool keeps its marker flock'ed), and removed when it
// closes. Without a directory, a spool is a new directory of its process
// under DefaultBase ($TMPDIR/smcp-spool-<uid>), and opening one removes
// there what spools of ended processes left, killed ones included (the
// kernel drops a dead process's lock), never a live one's.
//
// # Blobs in
//
// Landing.Put answers client:put_blob. An upload is a run of chunks in
// order; the first has no upload_id and declares total_size, sha256 and
// optionally name_hint. Chunks are written to a part file inside the
// landing root (confined with os.Root, so neither a name nor a symlink
// leads outside it); the last one, checked against the declared size and
// hash, is renamed to "<upload_id>_<sanitised name_hint>" and its answer
// carries landing_path. Refusals are 4019 with the references' messages
// and details.reason: forbidden (no landing root: "landing root not
// configured"), invalid_declaration, too_large, busy, invalid_upload,
// range, integrity, io_error. An upload idle longer than its lifetime
// (WithUploadIdle, 120 s) is dropped and its part file removed by the
// Landing's own goroutine.
package blob
