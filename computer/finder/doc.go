// Package finder is the Computer's Finder (spec/finder.md, Organizer and Update
// mechanism).
//
// The Aggregator keeps a cache of protocol.DPEDocumentSummary built from the
// dpe:// resources of every MCP server (one that does not declare
// resources.subscribe is aggregated too, with a warning): cold aggregation
// lists each server's resources and reads every Level 1 with bounded
// concurrency, publishing documents as they are read, within a time budget
// (WithBuildBudget); resources/list_changed re-lists and diffs the URI sets
// (reading only new documents, and those the budget left unread, emitting
// nothing when nothing changed); resources/updated re-reads the one
// document, or every document for the catalog URI, or re-lists for a
// document not listed. All of it runs in the background, each document
// read on its own, so that a slow or hanging document delays only itself.
// Every WithRevalidation period (one minute by default) every listing and
// every Level 1 is read again, so that a change no notification announced
// is seen within the period plus one round of reads (spec/finder.md,
// Update mechanism; spec/decisions.md, Computer). Changes are reported once
// per burst through WithOnChange, from which the Computer emits
// server:update_finder; a read that changes nothing reports nothing. Query
// answers fit the payload limit (WithMaxAnswerBytes).
//
// Organize is organize_finder (spec/finder.md, Organizer):
// filter invalid URIs, keywords and file type; order servers by the
// tool-call history; order each server's documents by last_modified
// descending as instants; page with offset/limit and count total_count after
// filtering. Aggregator.Query applies it to the cache, whose instants and
// lower-cased fields are computed once per document and whose per-server
// order is kept sorted, so a query only walks the filtered documents.
package finder
