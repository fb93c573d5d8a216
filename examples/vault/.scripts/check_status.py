#!/usr/bin/env python3
"""An example vault check: every note under Projects/ should say where it stands.

mdvault discovers scripts named check_*.py in .scripts/, asks each one to --describe itself,
then runs it with --vault-path and --json and reads the findings it prints. This one reports a
`missing_status` warning for each project note without a `status:` frontmatter line.
"""

import argparse
import hashlib
import json
import os
import sys

DECLARATION = {
    "schema": 2,
    "check": "project_status",
    "title": "Project status",
    "description": "Notes under Projects/ without a `status:` frontmatter line.",
    "order": 50,
}


def has_status(text):
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return False
    for line in lines[1:]:
        if line.strip() == "---":
            return False
        if line.startswith("status:") and line[len("status:"):].strip():
            return True
    return False


def findings(root):
    found = []
    projects = os.path.join(root, "Projects")
    for dirpath, dirnames, filenames in os.walk(projects):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith(".md"):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            with open(full, encoding="utf-8", errors="replace") as f:
                if has_status(f.read()):
                    continue
            found.append({
                "id": hashlib.sha256(f"project_status\0{rel}".encode()).hexdigest()[:16],
                "severity": "warning",
                "code": "missing_status",
                "message": "a project note without `status:`; add one such as `status: planning`",
                "path": rel,
            })
    return found


def main():
    parser = argparse.ArgumentParser(description=DECLARATION["description"])
    parser.add_argument("--describe", action="store_true")
    parser.add_argument("--vault-path")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.describe:
        print(json.dumps(DECLARATION))
        return 0
    if not args.vault_path:
        parser.error("--vault-path is required")
    found = findings(args.vault_path)
    if args.json:
        print(json.dumps(dict(DECLARATION, findings=found), indent=2))
    else:
        for f in found:
            print(f"{f['path']}: {f['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
