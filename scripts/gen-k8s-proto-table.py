#!/usr/bin/env python3
"""Generates sandbox/src/proto/k8s-fields.txt: the protobuf field table of Kubernetes'
built-in API types, which the sandbox uses to read request bodies sent as
`application/vnd.kubernetes.protobuf`.

Sources (Git repositories, read with `git show`, so bare clones do):
  kubernetes/api                       every built-in group (k8s.io.api.*)
  kubernetes/apimachinery              meta/v1, runtime, resource.Quantity, intstr
  kubernetes/apiextensions-apiserver   CustomResourceDefinition (optional)
  kubernetes/kube-aggregator           APIService (optional)

What is taken from where:
  generated.proto  message names, field numbers, wire types, repeated/map, the message a
                   field holds (the wire facts);
  the Go types     (the package's *.go files beside generated.proto) each field's JSON
                   name and the JSON facts the API server's Go structs add: a pointer
                   (the field is either absent or set, zero included), `omitempty`,
                   `omitzero`, an embedded struct whose fields are inlined, `json:"-"`.
  register.go      the API group a package serves (`const GroupName`).

The API server decodes a protobuf body into its Go structs and encodes JSON from them;
the sandbox works on JSON, so it needs the same JSON: which is why the Go side matters.

Regenerate (from the repository root) after moving the sandbox to a new Kubernetes minor:
  python3 scripts/gen-k8s-proto-table.py \\
      --api DIR@v0.34.10 --apimachinery DIR@v0.34.10 \\
      --apiextensions DIR@v0.34.10 --aggregator DIR@v0.34.9 \\
      > sandbox/src/proto/k8s-fields.txt
(the defaults are the mirrors under /work/.mirror at those tags).

Output format (one record a line, fields separated by one space):
  p ALIAS PACKAGE      a proto package; the lines after it, up to the next `p`, are its
  g GROUP VERSION      it holds the types of this API group (`-` for the core group)
  m NAME [KIND]        a message; KIND names a message whose JSON form is not an object
                       of its fields (time, microtime, duration, quantity, intorstring,
                       rawjson, list, orbool, orarray, orstringarray)
  N JSON TYPE MODES    a field: number, JSON name (`.` for an inlined struct), type, and
                       MODES: r repeated, p pointer, o omitempty, z omitzero, i inlined,
                       x never in JSON, `-` none of them
TYPE is a scalar (string bytes bool int32 int64 double), a message (`Name` in the same
package, `ALIAS.Name` in another), or a map `KEY>VALUE`.
"""

import argparse
import os
import re
import subprocess
import sys

MIRROR = "/work/.mirror"

# Messages whose Go type marshals JSON itself (MarshalJSON), by what the JSON is.
SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "time",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "microtime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "duration",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "rawjson",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "rawjson",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "quantity",
    "k8s.io.apimachinery.pkg.api.resource.QuantityValue": "quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
}
for _v in ("v1", "v1beta1"):
    _p = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions." + _v
    SPECIAL[_p + ".JSON"] = "rawjson"
    SPECIAL[_p + ".JSONSchemaPropsOrBool"] = "orbool"
    SPECIAL[_p + ".JSONSchemaPropsOrArray"] = "orarray"
    SPECIAL[_p + ".JSONSchemaPropsOrStringArray"] = "orstringarray"

# Messages that are wire helpers, never a field of an API object.
SKIP = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Timestamp",
}

SCALARS = {"string", "bytes", "bool", "int32", "int64", "double"}

ALIAS_PREFIXES = [
    "k8s.io.api.",
    "k8s.io.apimachinery.pkg.apis.",
    "k8s.io.apimachinery.pkg.",
    "k8s.io.apiextensions_apiserver.pkg.apis.",
    "k8s.io.kube_aggregator.pkg.apis.",
]


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def alias_of(package):
    for prefix in ALIAS_PREFIXES:
        if package.startswith(prefix):
            return package[len(prefix):].replace(".", "/")
    raise SystemExit(f"no alias rule for package {package}")


# ---- generated.proto ---------------------------------------------------------------

FIELD_RE = re.compile(
    r"^(optional|repeated|required)\s+(\S+)\s+(\w+)\s*=\s*(\d+)\s*;$"
)
MAP_RE = re.compile(r"^map<\s*(\S+)\s*,\s*(\S+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;$")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0].strip() for line in text.splitlines())


def parse_proto(text):
    """(package, go_package, [(message, [field dict])])"""
    package = go_package = None
    messages = []
    current = None
    for line in strip_comments(text).splitlines():
        if not line:
            continue
        if m := re.match(r"^package\s+([\w.]+);$", line):
            package = m.group(1)
        elif m := re.match(r'^option\s+go_package\s*=\s*"([^"]+)";$', line):
            go_package = m.group(1)
        elif m := re.match(r"^message\s+(\w+)\s*\{$", line):
            if current is not None:
                raise SystemExit(f"nested message {m.group(1)} in {package}")
            current = (m.group(1), [])
        elif line == "}":
            messages.append(current)
            current = None
        elif current is not None and (m := FIELD_RE.match(line)):
            label, typ, name, num = m.groups()
            current[1].append(
                {"num": int(num), "proto_name": name, "type": typ, "repeated": label == "repeated", "map": None}
            )
        elif current is not None and (m := MAP_RE.match(line)):
            key, value, name, num = m.groups()
            current[1].append(
                {"num": int(num), "proto_name": name, "type": None, "repeated": False, "map": (key, value)}
            )
        elif current is not None and line.startswith("option "):
            continue
        elif line.startswith(("syntax", "import", "option")):
            continue
        else:
            raise SystemExit(f"unexpected line in {package}: {line!r}")
    return package, go_package, messages


# ---- Go types ----------------------------------------------------------------------

TAG_RE = re.compile(r'(\w+):"([^"]*)"')


def parse_go(texts):
    """Struct fields with a protobuf tag, per struct; named slice types; types defined
    as another package's struct (`type List metav1.List`), as (import path, name)."""
    structs = {}
    slices = set()
    defined = {}
    for text in texts:
        imports = dict(
            (alias or path.rsplit("/", 1)[-1], path)
            for alias, path in re.findall(r'^\s*(\w+)?\s*"(k8s\.io/[^"]+)"\s*$', text, re.M)
        )
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i].split("//", 1)[0].rstrip()
            if m := re.match(r"^type\s+(\w+)\s+struct\s*\{\s*$", line):
                fields, i = parse_struct_body(lines, i + 1)
                structs[m.group(1)] = fields
                continue
            if m := re.match(r"^type\s+(\w+)\s+struct\s*\{\s*\}\s*$", line):
                structs[m.group(1)] = []
            elif m := re.match(r"^type\s+(\w+)\s+\[\]\S+\s*$", line):
                slices.add(m.group(1))
            elif m := re.match(r"^type\s+(\w+)\s+(\w+)\.(\w+)\s*$", line):
                if m.group(2) in imports:
                    defined[m.group(1)] = (imports[m.group(2)], m.group(3))
            i += 1
    return structs, slices, defined


def parse_struct_body(lines, i):
    fields = []
    depth = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        stripped = raw.strip()
        if stripped.startswith("//") or not stripped:
            continue
        tag = None
        if "`" in stripped:
            before, tag, _ = stripped.split("`", 2)
        else:
            before = stripped.split("//", 1)[0]
        before = before.strip()
        if before.endswith("{"):
            depth += 1
            continue
        if before.startswith("}"):
            if depth == 0:
                return fields, i
            depth -= 1
            continue
        if depth > 0 or tag is None:
            continue
        tags = dict(TAG_RE.findall(tag))
        if "protobuf" not in tags:
            continue
        parts = before.split()
        if len(parts) == 1:
            go_name, go_type, embedded = parts[0].lstrip("*").split(".")[-1], parts[0], True
        elif len(parts) == 2:
            go_name, go_type, embedded = parts[0], parts[1], False
        else:
            raise SystemExit(f"cannot read struct field {stripped!r}")
        pb = tags["protobuf"].split(",")
        if len(pb) < 2 or not pb[1].isdigit():
            continue
        fields.append(
            {
                "num": int(pb[1]),
                "go_name": go_name,
                "go_type": go_type,
                "embedded": embedded,
                "json": tags.get("json"),
            }
        )
    raise SystemExit("unterminated struct")


def go_files(repo, ref, directory):
    names = git(repo, "ls-tree", "--name-only", f"{ref}:{directory}").split()
    keep = [
        n
        for n in names
        if n.endswith(".go")
        and not n.endswith("_test.go")
        and not n.startswith("zz_generated")
        and n not in ("generated.pb.go", "types_swagger_doc_generated.go")
    ]
    return {n: git(repo, "show", f"{ref}:{directory}/{n}") for n in keep}


def group_name(files):
    for text in files.values():
        if m := re.search(r'^\s*(?:const\s+)?GroupName\s*=\s*"([^"]*)"', text, re.M):
            return m.group(1)
    for text in files.values():
        if m := re.search(r"^// \+groupName=(\S*)", text, re.M):
            return m.group(1)
    return None


# ---- assembling --------------------------------------------------------------------


def modes(proto_field, go_field):
    out = ""
    if proto_field["repeated"]:
        out += "r"
    json_tag = go_field["json"]
    if json_tag is None:
        json_name, opts = go_field["go_name"], []
    else:
        json_name, *opts = json_tag.split(",")
    if json_name == "-" and not opts:
        return "-", "x"
    if go_field["go_type"].startswith("*"):
        out += "p"
    if "omitempty" in opts:
        out += "o"
    if "omitzero" in opts:
        out += "z"
    if json_name == "":
        if not go_field["embedded"]:
            json_name = go_field["go_name"]
        else:
            out += "i"
            json_name = "."
    return json_name, out or "-"


def type_ref(typ, package, aliases):
    if typ in SCALARS:
        return typ
    if typ.startswith("."):
        full = typ[1:]
    else:
        full = f"{package}.{typ}"
    pkg, _, name = full.rpartition(".")
    if pkg == package:
        return name
    if pkg not in aliases:
        raise SystemExit(f"{package}: type {typ} from a package not read")
    return f"{aliases[pkg]}.{name}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--api", default=f"{MIRROR}/kubernetes+api/repo@v0.34.10")
    ap.add_argument("--apimachinery", default=f"{MIRROR}/kubernetes+apimachinery/repo@v0.34.10")
    ap.add_argument(
        "--apiextensions", default=f"{MIRROR}/kubernetes+apiextensions-apiserver/repo@v0.34.10"
    )
    ap.add_argument("--aggregator", default=f"{MIRROR}/kubernetes+kube-aggregator/repo@v0.34.9")
    args = ap.parse_args()

    sources = [
        ("k8s.io/apimachinery/", args.apimachinery, True),
        ("k8s.io/api/", args.api, True),
        ("k8s.io/apiextensions-apiserver/", args.apiextensions, False),
        ("k8s.io/kube-aggregator/", args.aggregator, False),
    ]
    packages = []  # (package, group, version, messages, structs, slices)
    by_import = {}
    pending_defined = []
    for module, spec, required in sources:
        repo, _, ref = spec.rpartition("@")
        if not os.path.isdir(repo):
            if required:
                raise SystemExit(f"{repo} is not there")
            print(f"skipping {module}: {repo} is not there", file=sys.stderr)
            continue
        protos = [
            p
            for p in git(repo, "ls-tree", "-r", "--name-only", ref).split()
            if p.endswith("/generated.proto") and "testapigroup" not in p and "/testing/" not in p
        ]
        for path in sorted(protos):
            package, go_package, messages = parse_proto(git(repo, "show", f"{ref}:{path}"))
            if not messages:
                continue
            directory = os.path.dirname(path)
            if go_package != module + directory:
                raise SystemExit(f"{path}: go_package {go_package} is not {module}{directory}")
            files = go_files(repo, ref, directory)
            structs, slices, defined = parse_go(files.values())
            group = group_name(files) if directory.split("/")[-1].startswith("v") else None
            version = directory.split("/")[-1]
            packages.append((package, group, version, messages, structs, slices))
            by_import[go_package] = structs
            pending_defined.append((structs, defined))
    for structs, defined in pending_defined:
        for name, (path, target) in defined.items():
            if path in by_import and target in by_import[path]:
                structs.setdefault(name, by_import[path][target])

    aliases = {p[0]: alias_of(p[0]) for p in packages}
    if len(set(aliases.values())) != len(aliases):
        raise SystemExit("two packages share an alias")

    out = [
        "# The protobuf field table of Kubernetes' built-in API types (wire facts: field",
        "# numbers, types, JSON names). Generated by scripts/gen-k8s-proto-table.py from",
        "# generated.proto and the Go types of kubernetes/api, apimachinery,",
        "# apiextensions-apiserver and kube-aggregator; do not edit, regenerate.",
    ]
    problems = []
    for package, group, version, messages, structs, slices in packages:
        out.append(f"p {aliases[package]} {package}")
        if group is not None:
            out.append(f"g {group or '-'} {version}")
        for name, fields in messages:
            full = f"{package}.{name}"
            if full in SKIP:
                continue
            kind = SPECIAL.get(full)
            if kind is None and name in slices:
                if [f["proto_name"] for f in fields] != ["items"] or not fields[0]["repeated"]:
                    problems.append(f"{full}: a named slice that is not `repeated items = 1`")
                kind = "list"
            out.append(f"m {name} {kind}" if kind else f"m {name}")
            go_fields = {f["num"]: f for f in structs.get(name, [])}
            if kind is None and name not in structs:
                problems.append(f"{full}: no Go struct")
                continue
            for f in fields:
                if kind is not None:
                    json_name, mode = f["proto_name"], ("r" if f["repeated"] else "-")
                else:
                    g = go_fields.get(f["num"])
                    if g is None:
                        problems.append(f"{full}.{f['proto_name']} = {f['num']}: no Go field")
                        continue
                    json_name, mode = modes(f, g)
                if f["map"]:
                    key, value = f["map"]
                    if key != "string":
                        problems.append(f"{full}.{f['proto_name']}: map key {key}")
                    typ = f"{key}>{type_ref(value, package, aliases)}"
                else:
                    typ = type_ref(f["type"], package, aliases)
                out.append(f"{f['num']} {json_name} {typ} {mode}")
    if problems:
        raise SystemExit("\n".join(problems))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
