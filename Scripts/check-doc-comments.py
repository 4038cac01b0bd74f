#!/usr/bin/env python3
"""Fails when a public declaration of the given modules has no doc comment of its own.

Usage: check-doc-comments.py SYMBOLGRAPH_DIR MODULE...

Reads MODULE.symbols.json (and MODULE@*.symbols.json, extensions of other modules' types) written by
`swift package dump-symbol-graph --skip-inherited-docs`. Declarations the compiler synthesizes
(no source location, such as `init(rawValue:)` of a raw-value enum) are not the author's to document.
"""
import glob
import json
import os
import sys


def main() -> int:
    directory, modules = sys.argv[1], sys.argv[2:]
    missing = []
    total = 0
    for module in modules:
        paths = [os.path.join(directory, f"{module}.symbols.json")]
        paths += glob.glob(os.path.join(directory, f"{module}@*.symbols.json"))
        for path in paths:
            with open(path, encoding="utf-8") as handle:
                graph = json.load(handle)
            for symbol in graph["symbols"]:
                if symbol.get("accessLevel") not in ("public", "open") or "location" not in symbol:
                    continue
                total += 1
                if symbol.get("docComment", {}).get("lines"):
                    continue
                location = symbol["location"]
                uri = location["uri"].removeprefix("file://")
                line = location["position"]["line"] + 1
                missing.append(f"{os.path.relpath(uri)}:{line}: {'.'.join(symbol['pathComponents'])}")
    for entry in missing:
        print(f"undocumented public declaration: {entry}", file=sys.stderr)
    print(f"doc comments: {total - len(missing)} of {total} public declarations documented")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
