#!/usr/bin/env python3
"""Fails when source files of a crate import each other in a loop.

For every crate under crates/, reads src/**/*.rs, finds the files each one names through
`crate::a::b` paths and `super::` paths (in `use` items or inline), builds the file-level graph and
prints each strongly connected component of more than one file. Exit status 1 when there is any.
A module naming its own descendants (`mod child;`, `pub use child::Item`,
`crate::this::child::Item`) is not an edge: a parent owns its children and re-exports them. A
child reaching back up, or a file reaching across to another branch, is one.

usage: scripts/check-circles.py [CRATE_DIR...]   (default: every crates/*/ with a src/)
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip(text):
    """Source text with comments, string and char literals blanked (lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not re.match(r"[A-Za-z0-9_]", text[i - 1:i] or " "):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}') or a lifetime ('a): blank only the literal.
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Crate:
    def __init__(self, root):
        self.root = root
        self.src = os.path.join(root, "src")
        self.files = {}  # module path tuple -> file
        for dirpath, _, names in os.walk(self.src):
            for name in names:
                if name.endswith(".rs"):
                    path = os.path.join(dirpath, name)
                    self.files[self.module_of(path)] = path
        self.modules = {v: k for k, v in self.files.items()}

    def module_of(self, path):
        rel = os.path.relpath(path, self.src)[:-3].split(os.sep)
        if rel[-1] == "mod" or (len(rel) == 1 and rel[0] in ("lib", "main")):
            rel = rel[:-1]
        return tuple(rel)

    def file_for(self, segments):
        """The file that holds the longest prefix of a module path."""
        for k in range(len(segments), -1, -1):
            f = self.files.get(tuple(segments[:k]))
            if f:
                return f
        return None


def use_paths(tree):
    """Expands a `use` tree (`a::{b, c::{d, e}}`) into its paths (lists of segments)."""
    tree = re.sub(r"\s+", "", tree)

    def expand(s):
        depth, parts, cur = 0, [], ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        res = []
        for p in filter(None, parts):
            if "{" in p:
                head, inner = p.split("{", 1)
                inner = inner[: inner.rfind("}")]
                for sub in expand(inner):
                    res.append(head + sub)
            else:
                res.append(p)
        return res

    return [re.split(r"::", re.sub(r"\bas\b.*$", "", p)) for p in expand(tree)]


def references(crate, path):
    """(module path, line) of every file-level reference made by the file at `path`."""
    text = strip(open(path, encoding="utf-8").read())
    own = crate.modules[path]
    # Inline modules (`mod tests { ... }`) shift what `super::` means inside them.
    inline = []  # (start, end, name)
    for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        inline.append((m.start(), j, m.group(1)))

    def scope_at(pos):
        mods = [name for s, e, name in sorted(inline) if s <= pos < e]
        return list(own) + mods

    def resolve(segs, pos):
        scope = scope_at(pos)
        if segs[0] == "crate":
            return segs[1:]
        if segs[0] == "super":
            k = 0
            while k < len(segs) and segs[k] == "super":
                k += 1
            return scope[: len(scope) - k] + segs[k:]
        return None

    found = []

    def add(segs, pos):
        target = resolve(segs, pos)
        if target is None:
            return
        line = text.count("\n", 0, pos) + 1
        found.append((target, line))

    for m in re.finditer(r"\buse\s+([^;]*);", text):
        for segs in use_paths(m.group(1)):
            if segs and segs[0]:
                add(segs, m.start())
    # Paths outside `use` items: `crate::a::b::item`, `super::item`.
    uses = [(m.start(), m.end()) for m in re.finditer(r"\buse\s+[^;]*;", text)]
    pattern = r"(?<![A-Za-z0-9_:])((?:" + IDENT + r")(?:::" + IDENT + r")+)"
    for m in re.finditer(pattern, text):
        if any(s <= m.start() < e for s, e in uses):
            continue
        segs = m.group(1).split("::")
        if segs[0] in ("crate", "super"):
            add(segs, m.start())
    return found


def owns(parent, child):
    """Whether module `child` lies inside module `parent`."""
    return len(child) > len(parent) and child[: len(parent)] == parent


def graph(crate):
    edges = {}
    for path in crate.modules:
        out = edges.setdefault(path, {})
        for target, line in references(crate, path):
            f = crate.file_for(target)
            if f and f != path and not owns(crate.modules[path], crate.modules[f]):
                out.setdefault(f, line)
    return edges


def components(edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = argv[1:] or sorted(
        os.path.join(here, "crates", d)
        for d in os.listdir(os.path.join(here, "crates"))
        if os.path.isdir(os.path.join(here, "crates", d, "src"))
    )
    circles = 0
    for root in roots:
        crate = Crate(root)
        edges = graph(crate)
        for comp in components(edges):
            circles += 1
            rel = lambda p: os.path.relpath(p, crate.src)
            print(f"{os.path.basename(root)}: circle of {len(comp)} files")
            for f in comp:
                inside = sorted((rel(t), l) for t, l in edges[f].items() if t in comp)
                names = ", ".join(f"{t} (line {l})" for t, l in inside)
                print(f"  {rel(f)} -> {names}")
    if circles:
        print(f"check-circles: {circles} import circle(s)")
        return 1
    print("check-circles: no import circles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
