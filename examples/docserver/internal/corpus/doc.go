// Package corpus generates hostile and large documents for the document
// server's tests and benchmarks: spreadsheets with far-away cells, blank
// rows, merged cells and charts, long sheets, large and semicolon-separated
// CSV files, Markdown with front matter and footnotes, long PDFs, PDFs with
// a CID font or AES-256 encryption, and folders of many files. Everything is
// written from code, so no large file is committed.
package corpus
