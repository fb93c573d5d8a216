"""Drive mdvault's MCP server with the official Python SDK (the `mcp` package).

    python tests/mcp_client.py http URL KEY        # streamable HTTP, bearer KEY
    python tests/mcp_client.py stdio MDVAULT ARG...  # spawn `MDVAULT ARG...` (e.g. mcp --vault ...)

The client connects in its default mode, which first probes `server/discover` and falls back
to `initialize`; then it lists the tools and calls search, read, map and patch (one patch that
works and one that is refused); then it lists the resources to the last cursor, reads a note, a
PDF (text and original), an image and a missing note, lists the templates and completes a vault
and a path; then it lists the prompts and gets each, and asks for log messages at `warning`
(both ways: `logging/setLevel`, and the per-request `_meta` opt-in) so the refused patch
arrives as one. It prints one JSON object describing what it saw, which the
Rust integration test (`tests/integration/mcp_sdk.rs`) checks. Exit status 0 unless the SDK
itself failed.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import ResourceTemplateReference
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def text_of(result):
    return "\n".join(getattr(block, "text", "") for block in result.content)


def contents_of(result):
    return [
        {
            "uri": c.uri,
            "mime_type": c.mime_type,
            "text": getattr(c, "text", None),
            "blob": getattr(c, "blob", None),
        }
        for c in result.contents
    ]


async def resources(client):
    pages, listed, cursor = 0, [], None
    while True:
        page = await client.list_resources(cursor=cursor)
        pages += 1
        listed += [{"uri": r.uri, "name": r.name, "mime_type": r.mime_type, "size": r.size} for r in page.resources]
        cursor = page.next_cursor
        if not cursor:
            break
    reads = {}
    for key, uri in [
        ("note", "mdvault://fixture/Home/Boiler.md"),
        ("pdf", "mdvault://fixture/Home/Utilities/Files/2026-05-02%20Nordlicht%20-%20Contract.pdf"),
        ("pdf_original", "mdvault://fixture/Home/Utilities/Files/2026-05-02%20Nordlicht%20-%20Contract.pdf?original"),
        ("image", "mdvault://fixture/Home/boiler.png"),
    ]:
        reads[key] = contents_of(await client.read_resource(uri))
    try:
        await client.read_resource("mdvault://fixture/Home/No%20such%20note.md")
        missing = None
    except MCPError as e:
        missing = {"code": e.error.code, "message": e.error.message}
    templates = await client.list_resource_templates()
    template = ResourceTemplateReference(uri=templates.resource_templates[0].uri_template)
    vault = await client.complete(template, {"name": "vault", "value": "fix"})
    path = await client.complete(template, {"name": "path", "value": "home/b"}, {"vault": "fixture"})
    return {
        "pages": pages,
        "listed": listed,
        "reads": reads,
        "missing": missing,
        "templates": [t.uri_template for t in templates.resource_templates],
        "complete_vault": vault.completion.values,
        "complete_path": {
            "values": path.completion.values,
            "total": path.completion.total,
            "has_more": path.completion.has_more,
        },
    }


async def exercise(client):
    tools = await client.list_tools()
    search = await client.call_tool("vault_search", {"query": "boiler cold pressure", "k": 3})
    read = await client.call_tool("vault_read", {"path": "Home/Boiler.md", "section": "Settings"})
    outline = await client.call_tool("vault_map", {"path": "Home/Boiler.md"})
    patch = await client.call_tool(
        "vault_patch",
        {
            "path": "Home/Boiler.md",
            "target": "Settings",
            "operation": "append",
            "content": "Checked by the Python SDK driver.",
        },
    )
    refused = await client.call_tool(
        "vault_patch",
        {"path": "Home/Boiler.md", "target": "No such heading", "operation": "replace", "content": "x"},
    )
    prompts = await client.list_prompts()
    got = {}
    for name, arguments in [
        ("daily_review", {}),
        ("file_document", {"path": "Home/Boiler.md"}),
        ("maintenance_pass", {}),
        ("note_from_template", {"template": "Meeting", "title": "Kickoff"}),
    ]:
        prompt = await client.get_prompt(name, arguments)
        got[name] = "\n".join(getattr(m.content, "text", "") for m in prompt.messages)
    try:
        await client.get_prompt("no_such_prompt", {})
        got["unknown"] = None
    except Exception as e:  # the SDK raises the server's invalid-params error
        got["unknown"] = str(e)
    return {
        "protocol_version": client.protocol_version,
        "server_name": client.server_info.name if client.server_info else None,
        "tools": sorted(tool.name for tool in tools.tools),
        "search": {"error": bool(search.is_error), "text": text_of(search)},
        "read": {"error": bool(read.is_error), "text": text_of(read)},
        "map": {"error": bool(outline.is_error), "text": text_of(outline)},
        "patch": {"error": bool(patch.is_error), "text": text_of(patch)},
        "refused": {"error": bool(refused.is_error), "text": text_of(refused)},
        "resources": await resources(client),
        "prompts": sorted(p.name for p in prompts.prompts),
        "prompt_texts": got,
    }


async def main(argv):
    if len(argv) >= 3 and argv[0] == "http":
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {argv[2]}"})
        server = streamable_http_client(argv[1], http_client=http)
    elif len(argv) >= 2 and argv[0] == "stdio":
        # The SDK starts the child with a minimal environment; settings travel as MDVAULT_*.
        env = {k: v for k, v in os.environ.items() if k.startswith("MDVAULT_")}
        server = StdioServerParameters(command=argv[1], args=argv[2:], env=env)
    else:
        sys.exit(__doc__)
    logs = []

    async def on_log(params):
        logs.append({"level": params.level, "logger": params.logger, "data": params.data})

    async with Client(server, logging_callback=on_log, log_level="warning") as client:
        try:
            await client.set_logging_level("warning")
            set_level = None
        except Exception as e:  # a connection whose protocol has no logging/setLevel
            set_level = str(e)
        report = await exercise(client)
    report["set_level_error"] = set_level
    report["logs"] = logs
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
