// Package dpe implements dpe:// URIs and the rendering of DPE content
// (Document → Page → Element) of the Finder subsystem
// (spec/finder.md, dpe URIs, Element categories and Markdown rendering).
//
// A dpe:// URI addresses one of four levels:
//
//	Level 0: dpe://host                        the document catalog
//	Level 1: dpe://host/doc-ref                document metadata (+ page index)
//	Level 2: dpe://host/doc-ref/pages/{N}      one page and its elements
//	Level 3: dpe://host/doc-ref/elements/{ID}  one element in full
//
// [Parse] applies the spec's eight validation rules; a failure is a
// *protocol.Error with code 4204 (protocol.CodeInvalidDPEURI) whose details
// are {"uri", "rule" (1..8), "reason"}.
//
// # Decisions on points the spec leaves open
//
// The spec's rules are applied literally; where the spec is silent the parser
// takes the strict reading that still accepts every URI of the spec and of
// the conformance vectors. Each rejection is attributed to the rule of the
// component it concerns:
//
//   - Scheme and host are case-insensitive (RFC 3986 §3.1, §3.2.2) and are
//     normalised to lower case: "DPE://Com.Example" has Host "com.example".
//     A URI without a scheme, or with another scheme, breaks rule 1.
//   - "dpe:" not followed by "//" and a host breaks rule 2, as does a host
//     with userinfo ("u@h"), a port ("h:80"), percent-encoding or any
//     character outside letters, digits, '-', '.', '_' and '~': the host is an
//     MCP server id, not a network address.
//   - The path is split on '/' before decoding, so "elements/sheet1%2FA1" has
//     the element id "sheet1/A1". A doc-ref is exactly one segment and is
//     followed by nothing, "pages/N" or "elements/ID"; anything else, an
//     empty segment (a trailing slash after the doc-ref or the sub-path, "//"),
//     malformed percent-encoding, a decoded value that is not UTF-8, or an
//     unencoded space, control character or one of " < > \ ^ ` { | } breaks rule 3.
//     A doc-ref or element id that is a dot-segment ("." or "..", encoded or
//     not) breaks rule 3: RFC 3986 normalisation would remove it, and a
//     server mapping ids to files must never see one.
//     "dpe://host/" (a lone slash) is Level 0. Unencoded non-ASCII letters are
//     accepted (IRI style) and percent-encoded by [URI.String].
//   - A page index is ASCII digits (no sign, no percent-encoding); leading
//     zeros are accepted and dropped by [URI.String]. Page index and offset
//     must be at most 2^31-1.
//   - A fragment ("#...") breaks rule 3: it cannot reach the document
//     server, and an unencoded '#' in an element id would otherwise silently
//     address another element.
//   - The query is decoded like application/x-www-form-urlencoded ('+' is a
//     space; a malformed %-escape is kept literally, as WHATWG URL and
//     Python's parse_qs do). Parameter names and values are case-sensitive:
//     "format=JSON" breaks rule 4 and "Format=json" is an unknown parameter.
//   - A known parameter (format, depth, offset, limit, categories) that is
//     present must be valid even when empty ("format=" breaks rule 4, a bare
//     "format" too) and may appear only once; a repeated one breaks its rule.
//     Integers are ASCII digits only ("1.0", "+1", " 1" are rejected).
//     categories is split on ',' after decoding; an empty item or a space
//     around an item breaks rule 8; duplicates are accepted.
//   - Unknown parameters are accepted, kept in [URI.Query] and written back
//     by [URI.String]. Known parameters are validated whatever the level they
//     are sent to (the spec lists where each applies, servers ignore the rest).
//   - [URI.String] is canonical: lower-case scheme and host, doc-ref and
//     element id escaped except for RFC 3986 unreserved characters, the query
//     in the order depth, offset, limit, categories, format, then unknown
//     names sorted, values escaped except for unreserved characters and ','.
//     Every URI of the spec's examples is already canonical.
//
// # Rendering
//
// The renderers implement spec/finder.md, Markdown rendering.
//
// Markdown follows the spec's table and templates literally: a field the
// content lacks (or holds as null, a list or an object) is written as
// nothing, a number or boolean as its JSON text:
//
//	heading      "#" × level (1..6; below 1 is 1, above 6 is 6) + " " + text
//	text         the text as is (paragraph breaks kept; leading and trailing
//	             line breaks dropped)
//	table        a Markdown table: '|' in a cell is written "\|", a line break
//	             "<br>"; rows shorter than the widest row (or the headers) are
//	             padded; without headers the header row is empty; a cell that
//	             is a number, boolean or null is its JSON text (null empty)
//	list         "1. ", "2. ", … when ordered, "- " otherwise; continuation
//	             lines of an item are indented under it; an item that is a
//	             list nests under the item before it; an object item is its
//	             "text" with its own "items" nested under it
//	code         a ``` fence with the language (a longer fence when the code
//	             holds a run of three or more backticks)
//	chart        "[图表: {title}] {data_summary}"
//	image        "![{alt}]({url})" with a url, else "[图片: {description}]"
//	link         "[{text}]({url})"
//	formula      "$ {expression} $"
//	any other    "[{category}: {summary}]" (pivot_table included)
//
// A table with no cell and a list with no item fall back to the last rule.
// Elements are separated by a blank line; a text element that renders to
// nothing is skipped. conformance/dpe_render.json pins every byte.
//
// Plain text carries the same information without Markdown syntax: heading
// and text as their text, tables as tab-separated lines (headers first; tabs
// and line breaks in a cell become spaces), lists with the same "1. " / "- "
// markers, code as is, charts and other categories as in Markdown, an image
// as "[图片: {alt}] {url}", a link as "{text} ({url})" (just the url when the
// text is empty or equal to it, just the text without a url), a formula as
// its expression.
package dpe
