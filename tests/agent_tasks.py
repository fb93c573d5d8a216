"""Replay a scripted sequence of MCP tool calls with the official Python SDK (the `mcp` package).

    python tests/agent_tasks.py URL KEY STEPS.json

STEPS.json is a list of {"tool": name, "args": {...}}. A string argument may contain
`{{N:REGEX}}`, replaced by the first group REGEX finds in the text of step N's answer, so a
step can paste what an earlier answer said (a path, a section) the way an agent would. Prints
one JSON list, per step: {"tool", "error", "text"}. The Rust test
`tests/integration/agent_tasks.rs` writes the steps and checks the answers and the disk.
"""

import asyncio
import json
import re
import sys

from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

PASTE = re.compile(r"\{\{(\d+):(.+?)\}\}")


def text_of(result):
    return "\n".join(getattr(block, "text", "") for block in result.content)


def pasted(value, done):
    if isinstance(value, str):
        def one(m):
            found = re.search(m.group(2), done[int(m.group(1))]["text"])
            if not found:
                raise SystemExit(f"step {m.group(1)} has no match for {m.group(2)!r} in:\n{done[int(m.group(1))]['text']}")
            return found.group(1)

        return PASTE.sub(one, value)
    if isinstance(value, dict):
        return {k: pasted(v, done) for k, v in value.items()}
    if isinstance(value, list):
        return [pasted(v, done) for v in value]
    return value


async def main(argv):
    url, key, steps_file = argv
    with open(steps_file, encoding="utf-8") as f:
        steps = json.load(f)
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    done = []
    async with Client(streamable_http_client(url, http_client=http)) as client:
        for step in steps:
            result = await client.call_tool(step["tool"], pasted(step["args"], done))
            done.append({"tool": step["tool"], "error": bool(result.is_error), "text": text_of(result)})
    print(json.dumps(done))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
