// Package docserver serves a folder of real files as dpe:// documents: the
// document server behind the binary smcp-docserver (cmd/smcp-docserver) and
// the quickstart. It is a dpekit.Provider; NewServer wraps it in a
// dpekit.Server (spec/finder.md, Writing a DPE server).
//
// The folder is served recursively; hidden files and folders, editor
// backups ("name~", "#name#") and swap or temporary files are ignored.
//
//	Markdown (.md, .markdown)   goldmark with GitHub's extensions; one page per
//	                            top-level section (below); heading, text, list,
//	                            code, table, link, image, separator elements
//	CSV (.csv)                  pages of at most RowsPerPage (100) data rows
//	                            and CellsPerPage (20,000) cells,
//	                            each one table element under the file's header
//	                            row; the delimiter (, ; tab |) is sniffed
//	XLSX (.xlsx, .xlsm)         excelize, streamed; pages of at most RowsPerPage
//	                            non-blank rows and CellsPerPage cells per sheet,
//	                            each a table element;
//	                            formulas flagged in its metadata (has_formulas,
//	                            formula_cells, formulas), merged values filled
//	                            in, charts as chart elements
//	PDF (.pdf)                  ledongthuc/pdf; one page per PDF page, one text
//	                            element per paragraph (by line spacing)
//	any other UTF-8 text        one page holding one text element
//
// Markdown sections: the top level is the shallowest heading level, except
// when the document opens with a single heading of that level (its title,
// "# Report") followed by deeper ones; then the sections are the next level
// ("## …"), the title names the document and the first page, which holds the
// introduction. A section's heading is its page title; deeper headings are
// heading elements; a paragraph is a text element followed by one link or
// image element per link or image it holds.
//
// Binary files without a known extension are skipped silently; a .md or
// .csv file that is not UTF-8 (a binary file so named, a Latin-1 file) is
// listed as unavailable with the reason (the offset of its first NUL or
// invalid byte); files that fail to parse are skipped with a warning;
// neither stops the server, and a file is tried again when it changes. Each
// parse has a Budget of time and cells (WithParseBudget); a file over it, or
// over MaxFileSize (MaxTextSize for Markdown and text), is listed as
// unavailable — page_count 0, keyword "unavailable", the reason as summary —
// and logged.
//
// # Confinement
//
// Every file is opened through an os.Root of the folder: "..", a symbolic
// link leading out of it (made before or while serving, or swapped in for a
// served file) and an absolute link target are never followed.
//
// # Document metadata
//
// title (the Markdown title heading, the PDF's or workbook's Title property,
// else the file name without extension), file_type (the extension, "txt"
// when none), page_count, keywords (section titles, CSV headers, sheet names,
// the PDF's or workbook's Keywords), summary (the first paragraph, or a
// description of the table or workbook), last_modified (the file's
// modification time, RFC 3339 in UTC), file_uri (file:// URI of the absolute
// path).
//
// # doc_ref
//
// A document's doc_ref is derived from its path relative to the folder by
// DocRef: "reports/q3.md" becomes "reports~q3.md"; paths with other
// characters get a readable stem and a hash ("Q3 report.md" becomes
// "Q3_report.md~~" followed by 12 hex digits). doc_refs are stable, unique,
// made of URL-unreserved characters only, and always one dpe:// path segment.
//
// # Changes
//
// Files are watched with fsnotify, new folders included. A new file is
// reported as added (resources/list_changed), a deleted or renamed one as
// removed, an edited one as updated (resources/updated to the sessions
// subscribed to it); each path is debounced (WithDebounce) so an editor's
// burst of writes is one change.
//
// # Memory
//
// Every document's metadata and page index stay in memory; its pages and
// elements stay only for the WithCacheDocuments (--cache-docs, default 64)
// most recently read documents, in an LRU (hashicorp/golang-lru). An evicted
// document is parsed again when a page or an element of it is read, and any
// file is re-parsed when its modification time or size changes. Cataloguing
// 1,000 Markdown notes retains about 1 MB with the default against 6 MB
// keeping them all (BenchmarkScanMarkdown1000/retained). BenchmarkCorpus
// measures the large documents (2-core machine, one run): a catalog of 1,000
// mixed files in 55 ms at 29 MB peak RSS; a 50,000-row × 15-column sheet in
// 1.8 s at 77 MB (26 MB kept); a 200-page PDF in 0.3 s at 31 MB; a 12 MB,
// 100,000-row CSV in 0.1 s at 77 MB (33 MB kept); a workbook with a value in
// XFD1048576 in 68 ms at 26 MB.
package docserver
