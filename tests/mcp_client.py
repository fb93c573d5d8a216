"""Drive mdvault's MCP server with the official Python SDK (the `mcp` package).

    python tests/mcp_client.py http URL KEY        # streamable HTTP, bearer KEY
    python tests/mcp_client.py stdio MDVAULT ARG...  # spawn `MDVAULT ARG...` (e.g. mcp --vault ...)

The client connects in its default mode, which first probes `server/discover` and falls back
to `initialize`; then it lists the tools and calls search, read, map and patch (one patch that
works and one that is refused); then it lists the resources to the last cursor, reads a note, a
PDF (text and original), an image and a missing note, lists the templates and completes a vault
and a path, and a prompt's arguments (a template's name, a heading); then it lists the prompts and gets each, and asks for log messages at `warning`
(both ways: `logging/setLevel`, and the per-request `_meta` opt-in) so the refused patch
arrives as one; then it calls every tool that declares an `outputSchema`. The SDK validates
each successful result's `structuredContent` against the tool's `outputSchema` by itself (and
raises when it is missing or does not fit); the driver checks it again with `jsonschema`'s
validator for the schema's own draft, and records an error result that carries structured
content. It prints one JSON object describing what it saw, which the Rust integration test
(`tests/integration/mcp_sdk.rs`) checks. Exit status 0 unless the SDK itself failed.
"""

import asyncio
import json
import os
import sys

import jsonschema
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference
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
    # A prompt's own argument, and a heading from the note its `path` names (ref/prompt).
    template_name = await client.complete(
        PromptReference(name="note_from_template"), {"name": "template", "value": "mee"}
    )
    heading = await client.complete(
        PromptReference(name="file_document"),
        {"name": "section", "value": "sett"},
        {"path": "Home/Boiler.md"},
    )
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
        "complete_prompt_template": template_name.completion.values,
        "complete_prompt_heading": heading.completion.values,
    }


# Every tool that declares an outputSchema, called with arguments that succeed on the fixture
# vault (writes under SDK/, so the notes the other checks read are left alone).
TYPED_CALLS = [
    ("vault_search", {"query": "boiler pressure", "k": 2}),
    ("vault_list", {"path": "Home"}),
    ("vault_map", {"path": "Home/Boiler.md"}),
    ("vault_status", {}),
    ("vault_expiries", {"untracked": True}),
    ("vault_callouts", {}),
    ("vault_tags", {}),
    ("vault_tags", {"tag": "renewal"}),
    ("vault_tag_rename", {"from": "renewal", "to": "renewals", "dry_run": True}),
    ("vault_maintenance", {}),
    ("vault_maintenance", {"list_only": True}),
    ("vault_grep", {"pattern": "bar", "limit": 3}),
    ("vault_links", {"path": "Home/Boiler.md"}),
    ("vault_reindex", {}),
    ("vault_create_folder", {"path": "SDK/Empty"}),
    ("vault_delete_folder", {"path": "SDK/Empty"}),
    ("vault_write", {"path": "SDK/Typed.md", "content": "---\ntitle: Typed\n---\n# Typed\n\nbody\n"}),
    ("vault_append", {"path": "SDK/Typed.md", "content": "- one"}),
    ("vault_set_body", {"path": "SDK/Typed.md", "content": "# Typed\n\nnew body\n"}),
    ("vault_set_frontmatter", {"path": "SDK/Typed.md", "key": "rating", "value": 4}),
    ("vault_set_frontmatter", {"path": "SDK/Typed.md", "key": "tags", "add": ["a", "b"]}),
    ("vault_replace_text", {"path": "SDK/Typed.md", "find": "new body", "replace": "newer"}),
    ("vault_patch", {"path": "SDK/Typed.md", "target": "Typed", "operation": "append", "content": "x"}),
    ("vault_move", {"source": "SDK/Typed.md", "destination": "SDK/Moved.md"}),
    ("vault_delete", {"path": "SDK/Moved.md"}),
]


async def typed(client, schemas):
    """Each typed call: whether it failed, and what its structured content made of the schema."""
    seen = []
    for name, args in TYPED_CALLS:
        entry = {"tool": name}
        try:
            result = await client.call_tool(name, args)
        except Exception as e:  # the SDK's own validation refused the result
            entry["sdk_error"] = str(e)
            seen.append(entry)
            continue
        entry["error"] = bool(result.is_error)
        entry["structured"] = result.structured_content is not None
        schema = schemas.get(name)
        if schema is None:
            entry["problem"] = "no outputSchema"
        elif result.structured_content is not None:
            validator = jsonschema.validators.validator_for(schema)
            validator.check_schema(schema)
            errors = [e.message for e in validator(schema).iter_errors(result.structured_content)]
            if errors:
                entry["problem"] = "; ".join(errors)
        if entry["error"]:
            entry["text"] = text_of(result)
        seen.append(entry)
    return seen


async def exercise(client):
    tools = await client.list_tools()
    schemas = {t.name: t.output_schema for t in tools.tools if t.output_schema is not None}
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
        "refused": {
            "error": bool(refused.is_error),
            "text": text_of(refused),
            "structured": refused.structured_content is not None,
        },
        "resources": await resources(client),
        "prompts": sorted(p.name for p in prompts.prompts),
        "prompt_texts": got,
        "output_schemas": sorted(schemas),
        "typed": await typed(client, schemas),
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
