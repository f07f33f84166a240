#!/usr/bin/env python3
"""The length of each function in a Swift file, for scripts/check-architecture.py (no function in Sources over 80 lines).

A function's length is what a reader scrolls through: from the line of its `func`, `init`, `deinit` or `subscript`
keyword (or a computed property's `var`, or a `willSet` / `didSet` block) to the line of its closing brace,
inclusive; comments and blank lines inside count, its doc comment does not. A nested function counts in its own
length and in the enclosing function's. Braces are matched on the code alone: comments and the contents of string
literals (plain, multi-line and raw, interpolations read as code) are blanked first. Run it alone to list every
function over a limit: scripts/function_lengths.py [LIMIT] [FOLDER...]"""
import pathlib
import re
import sys


def blank_comments_and_strings(text):
    """`text` with comments and string literals' contents replaced by spaces (newlines kept, so lines still count)."""
    out = list(text)
    size = len(text)

    def blank(start, end):
        for index in range(start, end):
            if out[index] != "\n":
                out[index] = " "

    def skip_code(index, interpolation):
        # Code up to the end of the text, or to the `)` that closes an interpolation `\(`.
        depth = 0
        while index < size:
            character = text[index]
            if text.startswith("//", index):
                end = text.find("\n", index)
                end = size if end < 0 else end
                blank(index, end)
                index = end
            elif text.startswith("/*", index):
                level, end = 1, index + 2  # Swift's block comments nest.
                while end < size and level:
                    if text.startswith("/*", end):
                        level, end = level + 1, end + 2
                    elif text.startswith("*/", end):
                        level, end = level - 1, end + 2
                    else:
                        end += 1
                blank(index, end)
                index = end
            elif character == '"' or (character == "#" and re.match(r'#+"', text[index:index + 8])):
                index = skip_string(index)
            elif interpolation and character == "(":
                depth, index = depth + 1, index + 1
            elif interpolation and character == ")":
                if depth == 0:
                    return index + 1
                depth, index = depth - 1, index + 1
            else:
                index += 1
        return index

    def skip_string(index):
        hashes = 0
        while text[index] == "#":
            hashes, index = hashes + 1, index + 1
        multiline = text.startswith('"""', index)
        index += 3 if multiline else 1
        content = index
        closing = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        while index < size:
            if text.startswith(escape, index):
                after = index + len(escape)
                if after < size and text[after] == "(":
                    blank(content, index)
                    index = content = skip_code(after + 1, True)
                    continue
                index = after + 1
                continue
            if text.startswith(closing, index):
                blank(content, index)
                return index + len(closing)
            if text[index] == "\n" and not multiline:
                break
            index += 1
        blank(content, index)
        return index

    skip_code(0, False)
    return "".join(out)


DECLARATION = re.compile(r"(?<![.\w])(func\s+([^\s(<]+)|init[?!]?(?=\s*[(<])|deinit\b|subscript(?=\s*[(<])"
                         r"|var\b|didSet\b|willSet\b)")
# How the next line of a signature can go on: a body, an effect, a return type, a where clause, a parameter list.
CONTINUATION = re.compile(r"\s*(\{|->|throws|rethrows|async|where|,|&|\)|:)")


def function_lengths(text):
    """(name, first line, last line) of each function, initializer, subscript, computed property and observer."""
    code = blank_comments_and_strings(text)
    line_starts = [0] + [index + 1 for index, character in enumerate(code) if character == "\n"]

    def line(index):
        low, high = 0, len(line_starts)
        while low + 1 < high:
            middle = (low + high) // 2
            low, high = (middle, high) if line_starts[middle] <= index else (low, middle)
        return low + 1

    found = []
    for match in DECLARATION.finditer(code):
        body = find_body(code, match)
        if body is None:
            continue
        name = match.group(2) or match.group(1)
        if name == "var":
            # A computed property (`var name: Type {`); `var` in a pattern or a stored property has no such body.
            declaration = re.match(r"var\s+(\w+)\s*:", code[match.start():body])
            if declaration is None:
                continue
            name = declaration.group(1)
        level = 0
        for end in range(body, len(code)):
            level += {"{": 1, "}": -1}.get(code[end], 0)
            if level == 0:
                break
        found.append((name, line(match.start()), line(end)))
    return found


def find_body(code, match):
    """The index of the `{` that opens the declaration's body, or None (a protocol requirement, a stored property)."""
    depth = 0
    for index in range(match.end(), len(code)):
        character = code[index]
        if character in "([":
            depth += 1
        elif character in ")]":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and character == "{":
            return index
        elif depth == 0 and character in "}=;":
            return None
        elif depth == 0 and character == "\n":
            before = code[match.start():index].rstrip()
            if not (before.endswith((",", "->", "&", ":", "(")) or CONTINUATION.match(code, index + 1)):
                return None
    return None


def long_functions(folders, limit):
    """(path, line, name, length) of each function over `limit` lines under `folders`."""
    result = []
    for folder in folders:
        for path in sorted(pathlib.Path(folder).rglob("*.swift")):
            for name, first, last in function_lengths(path.read_text(encoding="utf-8")):
                if last - first + 1 > limit:
                    result.append((path, first, name, last - first + 1))
    return result


if __name__ == "__main__":
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    for path, first, name, length in sorted(long_functions(sys.argv[2:] or ["Sources"], limit), key=lambda r: -r[3]):
        print(f"{path}:{first}: {name} is {length} lines")
