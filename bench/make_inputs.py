#!/usr/bin/env python3
"""Benchmark inputs: N chart packages repacked from the corpus with new versions, and a
synthetic index.yaml of a given size. Deterministic, so runs are comparable."""
import gzip, io, os, random, sys, tarfile

def repack(corpus, out, count):
    os.makedirs(out, exist_ok=True)
    sources = sorted(os.path.join(corpus, "charts", f) for f in os.listdir(os.path.join(corpus, "charts")) if f.endswith(".tgz"))
    blobs = []
    for src in sources:
        with tarfile.open(src) as tar:
            members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]
        blobs.append(members)
    for i in range(count):
        members = blobs[i % len(blobs)]
        version = f"{i // 100}.{i % 100}.{i % 7}"
        name = None
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
            for m, data in members:
                if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml"):
                    name = m.name.split("/")[0]
                    lines = [l if not l.startswith("version:") else f"version: {version}" for l in data.decode().splitlines()]
                    data = ("\n".join(lines) + "\n").encode()
                    m.size = len(data)
                tar.addfile(m, io.BytesIO(data) if data is not None else None)
        with open(os.path.join(out, f"{name}-{version}.tgz"), "wb") as f:
            f.write(buf.getvalue())

def synthetic_index(path, megabytes):
    rnd = random.Random(42)
    out = ["apiVersion: v1", "entries:"]
    size = 0
    chart = 0
    while size < megabytes * 1024 * 1024:
        name = f"chart-{chart:04d}"
        out.append(f"  {name}:")
        for major in range(3, -1, -1):
            for minor in range(12, -1, -1):
                for patch in (2, 1, 0):
                    v = f"{major}.{minor}.{patch}" + ("-rc.1" if rnd.random() < 0.1 else "")
                    digest = "%064x" % rnd.getrandbits(256)
                    entry = [
                        "  - apiVersion: v2",
                        f"    appVersion: {major}.{minor}.{patch + 10}",
                        '    created: "2024-05-01T10:00:00.123456789Z"',
                        f"    description: A synthetic chart number {chart} used to measure how fast an index loads and resolves",
                        f"    digest: {digest}",
                        "    home: https://example.com/charts",
                        "    keywords:\n    - bench\n    - synthetic",
                        "    maintainers:\n    - email: team@example.com\n      name: team",
                        f"    name: {name}",
                        "    sources:\n    - https://github.com/example/charts",
                        "    type: application",
                        f"    urls:\n    - https://charts.example.com/{name}-{v}.tgz",
                        f"    version: {v}",
                    ]
                    text = "\n".join(entry)
                    out.append(text)
                    size += len(text) + 1
        chart += 1
    out.append('generated: "2024-05-01T10:00:00Z"')
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return chart

def small(out, count, prefix="svc"):
    """COUNT small charts (a Chart.yaml with typical metadata and one template each)."""
    os.makedirs(out, exist_ok=True)
    for i in range(count):
        name, version = f"{prefix}{i:05d}", f"1.{i % 10}.0"
        files = {
            f"{name}/Chart.yaml": (
                f"apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"2.{i % 7}.1\"\n"
                f"description: Service {i} of a benchmark repository\ntype: application\n"
                "home: https://example.com\nkeywords:\n- bench\nmaintainers:\n- name: team\n  email: team@example.com\n"
            ),
            f"{name}/values.yaml": "replicas: 1\n",
            f"{name}/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
        }
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
            for path, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(path)
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
        with open(os.path.join(out, f"{name}-{version}.tgz"), "wb") as f:
            f.write(buf.getvalue())

if __name__ == "__main__":
    if sys.argv[1] == "packages":
        repack(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "small":
        small(sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
    else:
        print(synthetic_index(sys.argv[2], int(sys.argv[3])))
