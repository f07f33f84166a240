#!/usr/bin/env python3
"""The architecture rules `make test` checks on the sources, before the Swift tests:

1. The dependency closures of PassServer, PassPush, PassPublish, PassPreview and PassDiff hold no
   PassBuild; none of them holds OpenSSL (COpenSSL); only PassPreview (its barcodes) and the build (PassBuild,
   Barcodes) of the library targets hold libzint (CZint). Preview and diff reach the build through PassRender's
   API, push the build's certificates through its own APNsIdentityProvider; the command line joins them.
2. Nothing in Sources/ changes the process's working directory (chdir, changeCurrentDirectoryPath).
3. Each output-tree path is spelled in one place: the literals below appear only in
   Sources/WalletTree/TreeLayout.swift (comments, the command line's help examples and lines
   marked `// not a tree path` aside).
4. Every file-system call goes through AtomicFiles (AtomicFileSystem, RegularFile, FileStamp, ...):
   `FileManager` appears only in Sources/AtomicFiles/ and in Sources/ExternalProcess/ (the process
   wrapper, Foundation only: it finds a program on PATH and stages a program's input), comments aside.
5. PassModel does no I/O: its dependency closure holds only HTMLFragments and CLibxml2, libxml2 is imported
   only in Sources/HTMLFragments/, and that wrapper reads from memory: no libxml2 file, descriptor or
   network entry point (htmlReadFile, xmlReadFd, ...), no Foundation.
6. No function, initializer, subscript or computed property in Sources/ is over 80 lines, from its keyword to its
   closing brace (scripts/function_lengths.py says how it counts; run it alone to list them all).

Reads Package.swift through `swift package dump-package`; exits 1 naming each breach."""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
problems = []

package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                                    capture_output=True, text=True).stdout)
dependencies = {}
for target in package["targets"]:
    names = []
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target"):
            if kind in dependency:
                names.append(dependency[kind][0])
    dependencies[target["name"]] = names


def closure(name):
    seen, stack = set(), [name]
    while stack:
        for dependency in dependencies.get(stack.pop(), []):
            if dependency not in seen:
                seen.add(dependency)
                stack.append(dependency)
    return seen


forbidden = {
    "PassServer": {"PassBuild", "Barcodes", "CZint", "COpenSSL"},
    "PassPush": {"PassBuild", "Barcodes", "CZint", "COpenSSL"},
    "PassPublish": {"PassBuild", "Barcodes", "CZint", "COpenSSL"},
    "PassPreview": {"PassBuild", "COpenSSL"},
    "PassDiff": {"PassBuild", "Barcodes", "CZint", "COpenSSL"},
}
for target, names in forbidden.items():
    for name in sorted(closure(target) & names):
        problems.append(f"Package.swift: {target} depends on {name} (through {sorted(closure(target))}); "
                        f"it must reach the tree through WalletTree, and the build through PassRender's API, only")
# libzint: the barcodes of the preview and the build's encodability check, nothing else (the command line and the
# tests link everything).
zint_users = {"PassPreview", "PassBuild", "Barcodes", "passforge"}
for target in package["targets"]:
    name = target["name"]
    if target["type"] in ("regular", "executable") and name not in zint_users and "CZint" in closure(name) \
            and not target.get("path", "").startswith(("Tests", "Benchmarks")):
        problems.append(f"Package.swift: {name} links libzint (CZint); only PassPreview and the build may")

code_lines = []
for path in sorted((ROOT / "Sources").rglob("*.swift")):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        code_lines.append((path.relative_to(ROOT), number, line))

for path, number, line in code_lines:
    if re.search(r"\bchdir\s*\(|changeCurrentDirectoryPath", line):
        problems.append(f"{path}:{number}: changes the working directory; pass a folder instead (ProjectRoot, ExternalProcess)")

# The tree's paths as code spells them; each may appear only in TreeLayout.swift.
tree_literals = [r'"v1/passes', r'"v1/orders', r'"v1/devices', r'"by-token', r'"download/', r'"\.passforge/',
                 r'/v1/passes/\\\(', r'/v1/orders/\\\(', r'\.passforge/state\.json', r'\.passforge/downloads\.csv',
                 r'\.passforge/bundles\.json', r'\.passforge/journal\.json', r'\.passforge/staging', r'indexed-tag"',
                 r'index-locks']
layout = pathlib.Path("Sources/WalletTree/TreeLayout.swift")
for path, number, line in code_lines:
    # The command line's help text shows paths as examples; a line marked `// not a tree path` says why it is none.
    if path == layout or path.parts[1] == "passforge" or "// not a tree path" in line:
        continue
    for literal in tree_literals:
        if re.search(literal, line):
            problems.append(f"{path}:{number}: spells an output-tree path ({literal.replace(chr(92), '')}); use TreeLayout")
            break

# FileManager outside the one file-system target: each caller would grow its own error handling and bounds.
file_system_homes = {"AtomicFiles", "ExternalProcess"}
for path, number, line in code_lines:
    if path.parts[1] not in file_system_homes and re.search(r"\bFileManager\b", line):
        problems.append(f"{path}:{number}: calls FileManager; use AtomicFileSystem (Sources/AtomicFiles), "
                        f"adding the operation there if it is missing")

# PassModel is pure: Apple's rules, no I/O. libxml2 stays inside its wrapper, which parses from memory only.
for name in sorted(closure("PassModel") - {"HTMLFragments", "CLibxml2"}):
    problems.append(f"Package.swift: PassModel depends on {name}; PassModel does no I/O and may depend only on HTMLFragments")
for path, number, line in code_lines:
    in_wrapper = path.parts[1] == "HTMLFragments"
    if not in_wrapper and re.search(r"\bimport\s+CLibxml2\b", line):
        problems.append(f"{path}:{number}: imports CLibxml2; call libxml2 only through HTMLFragments")
    if in_wrapper and re.search(r"\b(html|xml)\w*(File|Fd|IO|Filename|URL)\s*\(|\bimport\s+Foundation\b", line):
        problems.append(f"{path}:{number}: HTMLFragments reads HTML from memory only (htmlReadMemory); no file, "
                        f"descriptor or network entry point of libxml2, no Foundation")

# Long functions: a reader should see one step at a time; split them into named helpers.
sys.path.insert(0, str(ROOT / "scripts"))
from script_loading import load_script  # noqa: E402

for path, number, name, length in load_script("function_lengths").long_functions([ROOT / "Sources"], 80):
    problems.append(f"{path.relative_to(ROOT)}:{number}: {name} is {length} lines, over 80; "
                    f"split it into named helpers")

for problem in problems:
    print(problem, file=sys.stderr)
if problems:
    sys.exit(1)
print("architecture: closures, working directory, tree paths, file-system calls, libxml2 and function lengths "
      "as they should be")
