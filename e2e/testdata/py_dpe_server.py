"""A small DPE document server written with the official MCP Python SDK.

It is the example of docs/dpe-server-python.md and the third-party server the
end-to-end tests run behind a real Computer. It serves the *.txt files of a
folder as dpe:// documents over stdio:

    python py_dpe_server.py --root DIR [--host py.docs] [--no-subscribe-patch]

A file is one document: its first line is the title, lines "----" separate
pages, blank lines separate paragraphs, and each paragraph is one text
element. The folder is polled every 0.2 s: a new or removed file sends
notifications/resources/list_changed, an edited one
notifications/resources/updated for every subscribed URI of that document.

Errors are the protocol's codes with data: 4201 unknown document (or
another host), 4202 page out of range, 4203 unknown element, 4204 invalid
dpe:// URI.
"""

import argparse
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import McpError

MIME = "application/json"
CATEGORIES = {"heading", "text", "table", "list", "code", "link", "image", "separator", "chart", "formula"}


def fail(code, message, **data):
    raise McpError(types.ErrorData(code=code, message=message, data=data))


class Library:
    """The documents of the folder, re-read when a file changes."""

    def __init__(self, root: Path, host: str):
        self.root, self.host = root, host
        self.docs = {}  # doc_ref -> document
        self.stamps = {}  # doc_ref -> (mtime_ns, size)

    def scan(self):
        """Re-reads changed files; returns (added or removed?, updated refs)."""
        seen, updated, listed = {}, [], False
        for path in sorted(self.root.glob("*.txt")):
            st = path.stat()
            ref = path.stem
            seen[ref] = (st.st_mtime_ns, st.st_size)
            if self.stamps.get(ref) != seen[ref]:
                if ref in self.docs:
                    updated.append(ref)
                else:
                    listed = True
                self.docs[ref] = self.load(path, ref, st.st_mtime)
        for ref in list(self.docs):
            if ref not in seen:
                del self.docs[ref]
                listed = True
        self.stamps = seen
        return listed, updated

    def load(self, path: Path, ref: str, mtime: float):
        text = path.read_text(encoding="utf-8")
        title, _, body = text.partition("\n")
        pages = []
        for p, chunk in enumerate(body.split("\n----\n")):
            paras = [" ".join(b.split()) for b in chunk.split("\n\n") if b.strip()]
            pages.append([
                {"element_id": f"p{p}-{i}", "category": "text", "summary": para[:120], "content": {"text": para}}
                for i, para in enumerate(paras)
            ])
        return {
            "doc_ref": ref,
            "title": title.strip() or ref,
            "file_uri": path.resolve().as_uri(),
            "file_type": "txt",
            "pages": pages,
            "last_modified": datetime.fromtimestamp(mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }

    def uri(self, ref: str, rest: str = "") -> str:
        return f"dpe://{self.host}/{quote(ref, safe='')}{rest}"

    def meta(self, d):
        return {
            "doc_ref": d["doc_ref"], "uri": self.uri(d["doc_ref"]), "file_uri": d["file_uri"],
            "file_type": d["file_type"], "title": d["title"], "page_count": len(d["pages"]),
            "summary": (d["pages"][0][0]["content"]["text"][:200] if d["pages"] and d["pages"][0] else ""),
            "last_modified": d["last_modified"],
        }


def parse(uri: str, host: str):
    """Splits a dpe:// URI into (doc_ref, kind, arg, query), failing 4201/4204."""
    parts = urlsplit(uri)
    if parts.scheme != "dpe" or not parts.netloc:
        fail(4204, "not a dpe:// URI", uri=uri, reason="scheme")
    if parts.netloc != host:
        fail(4201, f"no documents of host {parts.netloc!r} here", uri=uri, host=parts.netloc)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if query.get("format", "json") not in ("json", "markdown", "text"):
        fail(4204, "format must be json, markdown or text", uri=uri, reason="format")
    for c in filter(None, query.get("categories", "").split(",")):
        if c not in CATEGORIES:
            fail(4204, f"unknown category {c!r}", uri=uri, reason="categories")
    segs = [unquote(s) for s in parts.path.split("/")[1:]] if parts.path else []
    if not segs:
        return None, "catalog", None, query
    if len(segs) == 1:
        return segs[0], "document", None, query
    if len(segs) == 3 and segs[1] == "pages" and segs[2].isdigit():
        return segs[0], "page", int(segs[2]), query
    if len(segs) == 3 and segs[1] == "elements" and segs[2]:
        return segs[0], "element", segs[2], query
    fail(4204, "the path names no DPE level", uri=uri, reason="path")


def build(lib: Library, subscribe_patch: bool):
    server = Server("py-dpe-server", version="0.1.0")
    subscriptions = {}  # session -> set of subscribed URIs

    @server.list_resources()
    async def list_resources():
        subscriptions.setdefault(server.request_context.session, set())
        return [
            types.Resource(uri=f"dpe://{lib.host}", name="catalog", title="Document catalog", mimeType=MIME)
        ] + [
            types.Resource(uri=lib.uri(ref), name=f"{d['title']} [{ref}]", title=d["title"], mimeType=MIME)
            for ref, d in sorted(lib.docs.items())
        ]

    @server.list_resource_templates()
    async def list_templates():
        return [
            types.ResourceTemplate(uriTemplate=f"dpe://{lib.host}/{{doc_ref}}/pages/{{page_index}}", name="page", mimeType=MIME),
            types.ResourceTemplate(uriTemplate=f"dpe://{lib.host}/{{doc_ref}}/elements/{{element_id}}", name="element", mimeType=MIME),
        ]

    @server.subscribe_resource()
    async def subscribe(uri):
        subscriptions.setdefault(server.request_context.session, set()).add(str(uri))

    @server.unsubscribe_resource()
    async def unsubscribe(uri):
        subscriptions.get(server.request_context.session, set()).discard(str(uri))

    @server.read_resource()
    async def read(uri):
        raw = str(uri)
        ref, kind, arg, query = parse(raw, lib.host)
        if kind == "catalog":
            docs = [lib.meta(d) for _, d in sorted(lib.docs.items())]
            body = {"documents": docs, "total_count": len(docs)}
        else:
            d = lib.docs.get(ref)
            if d is None:
                fail(4201, f"document {ref!r} not found", uri=raw, doc_ref=ref)
            if kind == "document":
                body = lib.meta(d)
            elif kind == "page":
                if arg >= len(d["pages"]):
                    fail(4202, f"page {arg} out of range", uri=raw, doc_ref=ref, page_index=arg, page_count=len(d["pages"]))
                cats = set(filter(None, query.get("categories", "").split(",")))
                els = [e for e in d["pages"][arg] if not cats or e["category"] in cats]
                body = {"page_index": arg, "doc_ref": ref, "uri": lib.uri(ref, f"/pages/{arg}"), "element_count": len(els), "elements": els}
            else:
                for p, els in enumerate(d["pages"]):
                    for e in els:
                        if e["element_id"] == arg:
                            body = dict(e, doc_ref=ref, page_index=p, uri=lib.uri(ref, f"/elements/{arg}"))
                            break
                    else:
                        continue
                    break
                else:
                    fail(4203, f"element {arg!r} not found", uri=raw, doc_ref=ref, element_id=arg)
        return [ReadResourceContents(content=json.dumps(body, ensure_ascii=False), mime_type=MIME)]

    async def watch():
        while True:
            await anyio.sleep(0.2)
            listed, updated = lib.scan()
            if not listed and not updated:
                continue
            for session, uris in list(subscriptions.items()):
                try:
                    if listed:
                        await session.send_resource_list_changed()
                    for uri in sorted(uris):
                        try:
                            ref = parse(uri, lib.host)[0]
                        except McpError:
                            continue  # not a URI of ours
                        if ref is None or ref in updated:  # the catalog, or a changed document
                            await session.send_resource_updated(uri)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the session ended
                    subscriptions.pop(session, None)

    options = server.create_initialization_options(NotificationOptions(resources_changed=True))
    if subscribe_patch:
        # mcp 1.15's low-level Server declares resources.subscribe=false even
        # with a subscribe handler: declare it, or the Finder cannot rely on
        # resources/updated.
        options.capabilities.resources.subscribe = True
    return server, options, watch


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--host", default="py.docs")
    ap.add_argument("--no-subscribe-patch", action="store_true")
    args = ap.parse_args()
    lib = Library(Path(args.root), args.host)
    lib.scan()
    server, options, watch = build(lib, not args.no_subscribe_patch)
    async with stdio_server() as (read_stream, write_stream):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await server.run(read_stream, write_stream, options)
            tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
