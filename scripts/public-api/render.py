#!/usr/bin/env python3
"""Prints a crate's public API, one sorted line per item, from rustdoc's JSON output.

Usage: render.py CRATE.json > api/CRATE.txt   (scripts/public-api.sh runs it)

What is listed, each under the public path a user writes (re-exports from private modules are
followed; an item public at several paths gets its full entry at the shortest one and a
`pub use ALIAS = PATH` line at the others):
- modules, structs, enums, unions, traits, type aliases, constants, statics, macros;
- functions and methods with their signatures (generics, bounds, where clauses);
- public struct fields, enum variants (with their fields), trait items;
- `#[non_exhaustive]`, and structs that have private fields;
- impls of traits, including the auto traits (`Send`, `Sync`, `Unpin`, ...) rustdoc works out,
  with their associated types; blanket impls (`impl<T> From<T> for T`, ...) are left out.
Types are printed with the path where they are defined (`alloc::string::String`), so the
listing does not change with the way a type is imported.
"""

import json
import sys

# rustdoc JSON format versions this script has been checked against (rustc 1.95 writes 57).
KNOWN_FORMATS = {57}

STABLE_AUTO_TRAITS = {
    "core::marker::Send",
    "core::marker::Sync",
    "core::marker::Unpin",
    "core::panic::unwind_safe::UnwindSafe",
    "core::panic::unwind_safe::RefUnwindSafe",
}


def die(msg):
    sys.stderr.write(f"render.py: {msg}\n")
    sys.exit(1)


class Renderer:
    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.paths = doc["paths"]
        self.crate = self.index[str(doc["root"])]["name"]
        self.where = {}  # item id -> list of public paths (tuples)
        self.lines = set()  # (sort key, line)
        self.seen_impls = set()

    # ---- where each item is public --------------------------------------------------------

    def walk_module(self, mod_id, path, stack):
        if mod_id in stack:
            return
        stack = stack | {mod_id}
        for child in self.index[str(mod_id)]["inner"]["module"]["items"]:
            self.walk_item(child, path, None, stack)

    def walk_item(self, item_id, parent, rename, stack):
        item = self.index.get(str(item_id))
        if item is None:
            return
        kind, inner = next(iter(item["inner"].items()))
        if kind == "use":
            target = inner["id"]
            local = target is not None and str(target) in self.index
            if inner["is_glob"]:
                if local and "module" in self.index[str(target)]["inner"]:
                    self.walk_module(target, parent, stack)
                elif local and "enum" in self.index[str(target)]["inner"]:
                    for v in self.index[str(target)]["inner"]["enum"]["variants"]:
                        self.add_path(v, parent + (self.index[str(v)]["name"],))
                else:
                    self.emit(parent, 0, f"pub use {'::'.join(parent)}::* = {inner['source']}::*")
            elif local:
                self.walk_item(target, parent, inner["name"], stack)
            else:
                alias = parent + (inner["name"],)
                self.emit(alias, 0, f"pub use {'::'.join(alias)} = {self.path_of(target, inner['source'])}")
            return
        if kind == "impl" or item["name"] is None:
            return
        path = parent + (rename or item["name"],)
        self.add_path(item_id, path)
        if kind == "module":
            self.walk_module(item_id, path, stack)

    def add_path(self, item_id, path):
        self.where.setdefault(item_id, [])
        if path not in self.where[item_id]:
            self.where[item_id].append(path)

    def canonical(self, item_id):
        paths = self.where.get(item_id)
        return min(paths, key=lambda p: (len(p), p)) if paths else None

    def path_of(self, item_id, written=""):
        """The path to print for a type or trait: where it is public in this crate, else where
        rustdoc says it is defined, else as written."""
        if item_id is not None:
            p = self.canonical(item_id)
            if p:
                return "::".join(p)
            summary = self.paths.get(str(item_id))
            if summary:
                return "::".join(summary["path"])
        return written

    # ---- output ---------------------------------------------------------------------------

    def emit(self, owner, group, line):
        self.lines.add((("::".join(owner)), group, line))

    def run(self):
        self.walk_module(self.doc["root"], (self.crate,), frozenset())
        # The root module itself.
        self.where.pop(self.doc["root"], None)
        self.emit((self.crate,), 0, f"pub mod {self.crate}")
        # By path, traits last, so that an impl is listed under its type (the ids rustdoc gives
        # change from run to run; the paths do not).
        def order(kv):
            return ("trait" in self.index[str(kv[0])]["inner"], self.canonical(kv[0]))

        for item_id, paths in sorted(self.where.items(), key=order):
            canon = self.canonical(item_id)
            for p in paths:
                if p != canon:
                    self.emit(p, 0, f"pub use {'::'.join(p)} = {'::'.join(canon)}")
            self.item(item_id, canon)
        return [line for _, _, line in sorted(self.lines)]

    def item(self, item_id, path):
        item = self.index[str(item_id)]
        kind, inner = next(iter(item["inner"].items()))
        name = "::".join(path)
        attrs = "#[non_exhaustive] " if "non_exhaustive" in item.get("attrs", []) else ""
        if kind == "module":
            self.emit(path, 0, f"pub mod {name}")
        elif kind in ("struct", "union"):
            g = inner["generics"]
            head = f"{attrs}pub {kind} {name}{self.params(g)}"
            sk = inner.get("kind", {"plain": {"fields": inner.get("fields", []),
                                              "has_stripped_fields": inner.get("has_stripped_fields")}})
            if sk == "unit":
                self.emit(path, 0, f"{head}{self.where_clause(g)};")
            elif "tuple" in sk:
                fields = ", ".join("_" if f is None else "pub " + self.ty(self.field_type(f)) for f in sk["tuple"])
                self.emit(path, 0, f"{head}({fields}){self.where_clause(g)};")
            else:
                plain = sk["plain"]
                private = " { /* private fields */ }" if plain["has_stripped_fields"] else ""
                self.emit(path, 0, f"{head}{self.where_clause(g)}{private}")
                for f in plain["fields"]:
                    fi = self.index[str(f)]
                    self.emit(path, 1, f"pub {name}::{fi['name']}: {self.ty(fi['inner']['struct_field'])}")
            self.impls(inner["impls"], path)
        elif kind == "enum":
            g = inner["generics"]
            stripped = " { /* private variants */ }" if inner["has_stripped_variants"] else ""
            self.emit(path, 0, f"{attrs}pub enum {name}{self.params(g)}{self.where_clause(g)}{stripped}")
            for v in inner["variants"]:
                self.variant(v, name, path)
            self.impls(inner["impls"], path)
        elif kind == "variant":  # a variant re-exported by a glob
            self.emit(path, 0, f"pub use {name} = {self.path_of(item_id)}")
        elif kind == "function":
            self.emit(path, 0, self.function(name, inner))
        elif kind == "trait":
            g = inner["generics"]
            bounds = ": " + self.bounds(inner["bounds"]) if inner["bounds"] else ""
            unsafe = "unsafe " if inner["is_unsafe"] else ""
            auto = "auto " if inner["is_auto"] else ""
            self.emit(path, 0, f"pub {unsafe}{auto}trait {name}{self.params(g)}{bounds}{self.where_clause(g)}")
            for ti in inner["items"]:
                self.assoc(ti, name, path, 1)
            self.impls(inner["implementations"], path)
        elif kind == "type_alias":
            g = inner["generics"]
            self.emit(path, 0, f"pub type {name}{self.params(g)}{self.where_clause(g)} = {self.ty(inner['type'])}")
        elif kind == "constant":
            self.emit(path, 0, f"pub const {name}: {self.ty(inner['type'])}")
        elif kind == "static":
            mut = "mut " if inner["is_mutable"] else ""
            self.emit(path, 0, f"pub static {mut}{name}: {self.ty(inner['type'])}")
        elif kind == "macro":
            self.emit(path, 0, f"pub macro {name}!")
        elif kind == "proc_macro":
            self.emit(path, 0, f"pub proc_macro {name}! ({inner['kind']})")
        elif kind == "trait_alias":
            self.emit(path, 0, f"pub trait {name} = {self.bounds(inner['params'])}")
        else:
            self.emit(path, 0, f"pub {kind} {name}")

    def field_type(self, f):
        return self.index[str(f)]["inner"]["struct_field"]

    def variant(self, v, enum_name, enum_path):
        vi = self.index[str(v)]
        inner = vi["inner"]["variant"]
        vk = inner["kind"]
        name = f"{enum_name}::{vi['name']}"
        disc = f" = {inner['discriminant']['expr']}" if inner.get("discriminant") else ""
        if vk == "plain":
            self.emit(enum_path, 1, f"pub {name}{disc}")
        elif "tuple" in vk:
            fields = ", ".join("_" if f is None else self.ty(self.field_type(f)) for f in vk["tuple"])
            self.emit(enum_path, 1, f"pub {name}({fields}){disc}")
        else:
            st = vk["struct"]
            names = ", ".join(self.index[str(f)]["name"] for f in st["fields"])
            if st["has_stripped_fields"]:
                names = f"{names}, .." if names else ".."
            self.emit(enum_path, 1, f"pub {name} {{ {names} }}{disc}")
            for f in st["fields"]:
                fi = self.index[str(f)]
                self.emit(enum_path, 1, f"pub {name}::{fi['name']}: {self.ty(fi['inner']['struct_field'])}")

    def assoc(self, item_id, owner_name, owner_path, group, context=""):
        item = self.index.get(str(item_id))
        if item is None:
            return
        kind, inner = next(iter(item["inner"].items()))
        name = f"{owner_name}::{item['name']}"
        if kind == "function":
            self.emit(owner_path, group, self.function(name, inner) + context)
        elif kind == "assoc_const":
            default = f" = {inner['value']}" if inner.get("value") else ""
            self.emit(owner_path, group, f"pub const {name}: {self.ty(inner['type'])}{default}")
        elif kind == "assoc_type":
            g = inner["generics"]
            bounds = ": " + self.bounds(inner["bounds"]) if inner["bounds"] else ""
            default = f" = {self.ty(inner['type'])}" if inner.get("type") else ""
            self.emit(owner_path, group,
                      f"pub type {name}{self.params(g)}{bounds}{self.where_clause(g)}{default}")
        else:
            self.emit(owner_path, group, f"pub {kind} {name}")

    def impls(self, impl_ids, owner_path):
        for impl_id in impl_ids:
            if impl_id in self.seen_impls:
                continue
            self.seen_impls.add(impl_id)
            item = self.index.get(str(impl_id))
            if item is None:
                continue
            imp = item["inner"]["impl"]
            if imp.get("blanket_impl") is not None:
                continue
            if imp["is_synthetic"] and self.path_of(imp["trait"]["id"]) not in STABLE_AUTO_TRAITS:
                continue  # Freeze, UnsafeUnpin: unstable, and they come and go with the toolchain
            if imp["trait"] is None:
                owner = "::".join(owner_path)
                g = imp["generics"]
                context = ""
                if g["params"] or g["where_predicates"]:
                    context = f"  // impl{self.params(g)} {self.ty(imp['for'])}{self.where_clause(g)}"
                for ai in imp["items"]:
                    sub = self.index.get(str(ai))
                    if sub is not None and sub["visibility"] == "public":
                        self.assoc(ai, owner, owner_path, 2, context)
                continue
            g = imp["generics"]
            unsafe = "unsafe " if imp["is_unsafe"] else ""
            neg = "!" if imp["is_negative"] else ""
            line = (f"{unsafe}impl{self.params(g)} {neg}{self.path(imp['trait'])} for "
                    f"{self.ty(imp['for'])}{self.where_clause(g)}")
            assoc = []
            for ai in imp["items"]:
                sub = self.index.get(str(ai))
                if sub is None:
                    continue
                kind, inner = next(iter(sub["inner"].items()))
                if kind == "assoc_type" and inner.get("type"):
                    assoc.append(f"type {sub['name']} = {self.ty(inner['type'])};")
                elif kind == "assoc_const":
                    assoc.append(f"const {sub['name']}: {self.ty(inner['type'])};")
            if assoc:
                line += " { " + " ".join(sorted(assoc)) + " }"
            self.emit(owner_path, 4 if imp["is_synthetic"] else 3, line)

    # ---- signatures -------------------------------------------------------------------------

    def function(self, name, f):
        h = f["header"]
        quals = ""
        if h["is_const"]:
            quals += "const "
        if h["is_async"]:
            quals += "async "
        if h["is_unsafe"]:
            quals += "unsafe "
        abi = h["abi"]
        if abi != "Rust":
            quals += f'extern "{abi if isinstance(abi, str) else next(iter(abi))}" '
        g = f["generics"]
        return f"pub {quals}fn {name}{self.params(g)}{self.sig(f['sig'])}{self.where_clause(g)}"

    def sig(self, sig):
        args = []
        for i, (arg, t) in enumerate(sig["inputs"]):
            if i == 0 and arg == "self":
                if t == {"generic": "Self"}:
                    args.append("self")
                    continue
                br = t.get("borrowed_ref")
                if br and br["type"] == {"generic": "Self"}:
                    lt = br["lifetime"] + " " if br["lifetime"] else ""
                    args.append(f"&{lt}{'mut ' if br['is_mutable'] else ''}self")
                    continue
            args.append(f"{arg}: {self.ty(t)}")
        if sig.get("is_c_variadic"):
            args.append("...")
        out = f" -> {self.ty(sig['output'])}" if sig.get("output") is not None else ""
        return f"({', '.join(args)}){out}"

    def params(self, g):
        out = []
        for p in g["params"]:
            kind, k = next(iter(p["kind"].items()))
            if kind == "lifetime":
                out.append(p["name"] + (": " + " + ".join(k["outlives"]) if k["outlives"] else ""))
            elif kind == "type":
                if k.get("is_synthetic"):
                    continue
                s = p["name"]
                if k["bounds"]:
                    s += ": " + self.bounds(k["bounds"])
                if k.get("default") is not None:
                    s += " = " + self.ty(k["default"])
                out.append(s)
            elif kind == "const":
                s = f"const {p['name']}: {self.ty(k['type'])}"
                if k.get("default") is not None:
                    s += f" = {k['default']}"
                out.append(s)
        return f"<{', '.join(out)}>" if out else ""

    def hrtb(self, params):
        names = [p["name"] for p in params or []]
        return f"for<{', '.join(names)}> " if names else ""

    def where_clause(self, g):
        preds = []
        for w in g["where_predicates"]:
            kind, p = next(iter(w.items()))
            if kind == "bound_predicate":
                if not p["bounds"]:
                    continue
                preds.append(f"{self.hrtb(p.get('generic_params'))}{self.ty(p['type'])}: {self.bounds(p['bounds'])}")
            elif kind == "lifetime_predicate":
                preds.append(f"{p['lifetime']}: {' + '.join(p['outlives'])}")
            elif kind == "eq_predicate":
                preds.append(f"{self.ty(p['lhs'])} == {self.term(p['rhs'])}")
        return f" where {', '.join(preds)}" if preds else ""

    def bounds(self, bounds):
        out = []
        for b in bounds:
            kind, v = next(iter(b.items())) if isinstance(b, dict) else (b, None)
            if kind == "trait_bound":
                mod = {"none": "", "maybe": "?", "maybe_const": "[const] "}.get(v["modifier"], "")
                out.append(f"{self.hrtb(v.get('generic_params'))}{mod}{self.path(v['trait'])}")
            elif kind == "outlives":
                out.append(v)
            elif kind == "use":
                args = [a if isinstance(a, str) else next(iter(a.values())) for a in v]
                out.append(f"use<{', '.join(args)}>")
            else:
                out.append(str(kind))
        return " + ".join(out)

    def path(self, p):
        return self.path_of(p.get("id"), p.get("path", p.get("name", ""))) + self.args(p.get("args"))

    def args(self, a):
        if not a:
            return ""
        kind, v = next(iter(a.items())) if isinstance(a, dict) else (a, None)
        if kind == "angle_bracketed":
            parts = []
            for arg in v["args"]:
                if arg == "infer":
                    parts.append("_")
                    continue
                ak, av = next(iter(arg.items()))
                if ak == "lifetime":
                    parts.append(av)
                elif ak == "type":
                    parts.append(self.ty(av))
                elif ak == "const":
                    parts.append(av.get("expr", "_"))
            for c in v["constraints"]:
                bk, bv = next(iter(c["binding"].items()))
                lhs = c["name"] + self.args(c.get("args"))
                parts.append(f"{lhs} = {self.term(bv)}" if bk == "equality" else f"{lhs}: {self.bounds(bv)}")
            return f"<{', '.join(parts)}>" if parts else ""
        if kind == "parenthesized":
            out = f" -> {self.ty(v['output'])}" if v.get("output") is not None else ""
            return f"({', '.join(self.ty(t) for t in v['inputs'])}){out}"
        if kind == "return_type_notation":
            return "(..)"
        return ""

    def term(self, t):
        kind, v = next(iter(t.items()))
        return self.ty(v) if kind == "type" else v.get("expr", "_")

    def ty(self, t):
        if t is None:
            return "()"
        if isinstance(t, str):
            return "_" if t == "infer" else t
        kind, v = next(iter(t.items()))
        if kind == "resolved_path":
            return self.path(v)
        if kind in ("generic", "primitive"):
            return v
        if kind == "borrowed_ref":
            lt = v["lifetime"] + " " if v["lifetime"] else ""
            return f"&{lt}{'mut ' if v['is_mutable'] else ''}{self.ty(v['type'])}"
        if kind == "raw_pointer":
            return f"*{'mut' if v['is_mutable'] else 'const'} {self.ty(v['type'])}"
        if kind == "tuple":
            inner = ", ".join(self.ty(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if kind == "slice":
            return f"[{self.ty(v)}]"
        if kind == "array":
            return f"[{self.ty(v['type'])}; {v['len']}]"
        if kind == "pat":
            return self.ty(v["type"])
        if kind == "impl_trait":
            return f"impl {self.bounds(v)}"
        if kind == "dyn_trait":
            parts = [self.hrtb(pt.get("generic_params")) + self.path(pt["trait"]) for pt in v["traits"]]
            if v.get("lifetime"):
                parts.append(v["lifetime"])
            return "dyn " + " + ".join(parts)
        if kind == "function_pointer":
            h = v["header"]
            quals = ("unsafe " if h["is_unsafe"] else "")
            if h["abi"] != "Rust":
                abi = h["abi"]
                quals += f'extern "{abi if isinstance(abi, str) else next(iter(abi))}" '
            return f"{self.hrtb(v.get('generic_params'))}{quals}fn{self.sig(v['sig'])}"
        if kind == "qualified_path":
            self_ty = self.ty(v["self_type"])
            tr = v.get("trait")
            base = f"<{self_ty} as {self.path(tr)}>" if tr else self_ty
            return f"{base}::{v['name']}{self.args(v.get('args'))}"
        die(f"unknown type kind {kind!r} (a rustdoc JSON format this script does not know?)")


def main():
    if len(sys.argv) != 2:
        die("usage: render.py CRATE.json")
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read {sys.argv[1]}: {e}")
    version = doc.get("format_version")
    if version not in KNOWN_FORMATS:
        sys.stderr.write(f"render.py: warning: rustdoc JSON format {version}, checked against "
                         f"{sorted(KNOWN_FORMATS)}; if the listing looks wrong, update this script\n")
    try:
        lines = Renderer(doc).run()
    except (KeyError, TypeError, AttributeError, StopIteration) as e:
        die(f"unexpected rustdoc JSON (format {version}): {type(e).__name__}: {e}")
    sys.stdout.write("".join(line + "\n" for line in lines))


if __name__ == "__main__":
    main()
