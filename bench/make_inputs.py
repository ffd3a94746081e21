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

# Words for the web view's charts: names, descriptions and keywords drawn from these, so a
# search for one of them matches a share of the repository, as on a real one.
WEB_WORDS = (
    "redis postgres mysql kafka nginx grafana prometheus loki tempo vault consul etcd minio "
    "elastic keycloak harbor argo flux istio linkerd envoy traefik jenkins gitea mongodb "
    "rabbitmq nats cassandra clickhouse memcached zookeeper airflow spark superset jupyter "
    "sentry jaeger fluentd vector thanos cortex mimir opensearch wordpress ghost matomo"
).split()
WEB_KINDS = "operator exporter gateway proxy agent server worker cache backup dashboard ui api".split()
WEB_TEAMS = "Ada Lovelace,Grace Hopper,Alan Turing,Edsger Dijkstra,Barbara Liskov,Ken Thompson,Rob Pike,Margaret Hamilton".split(",")

def web_readme(name, description, rnd):
    """A README of a few KB: the sections and parameter table a typical chart carries."""
    rows = "\n".join(
        f"| `{key}` | {rnd.choice(WEB_WORDS)} setting for the {rnd.choice(WEB_KINDS)} | `{rnd.randint(0, 500)}` |"
        for key in ("replicaCount", "image.repository", "image.tag", "image.pullPolicy", "service.type",
                    "service.port", "ingress.enabled", "ingress.className", "ingress.hosts", "resources.limits.cpu",
                    "resources.limits.memory", "autoscaling.enabled", "autoscaling.minReplicas",
                    "autoscaling.maxReplicas", "nodeSelector", "tolerations", "affinity", "podAnnotations",
                    "persistence.enabled", "persistence.size", "metrics.enabled", "metrics.serviceMonitor.enabled")
    )
    prose = " ".join(rnd.choice(WEB_WORDS + WEB_KINDS + ["the", "and", "with", "for", "a", "to"]) for _ in range(120))
    return f"""# {name}

{description}

## TL;DR

```console
helm repo add example https://charts.example.com
helm install my-release example/{name}
```

## Introduction

This chart bootstraps a {name} deployment on a [Kubernetes](https://kubernetes.io) cluster
using the [Helm](https://helm.sh) package manager. {prose}

## Prerequisites

- Kubernetes 1.23+
- Helm 3.8.0+
- PV provisioner support in the underlying infrastructure

## Installing the chart

To install the chart with the release name `my-release`:

```console
helm install my-release example/{name} --set replicaCount=2
```

> **Tip**: List all releases using `helm list`

## Parameters

| Name | Description | Value |
| ---- | ----------- | ----- |
{rows}

## Upgrading

### To 2.0.0

Persistence is *on* by default; set `persistence.enabled=false` to keep the old behaviour.
See the [changelog](https://github.com/example/charts/blob/main/{name}/CHANGELOG.md).
"""

WEB_VALUES = """replicaCount: {replicas}
image:
  repository: registry.example.com/{name}
  tag: "{app}"
  pullPolicy: IfNotPresent
service:
  type: ClusterIP
  port: {port}
ingress:
  enabled: false
  className: ""
  hosts:
    - host: {name}.example.local
      paths:
        - path: /
          pathType: ImplementationSpecific
resources:
  limits:
    cpu: 500m
    memory: 256Mi
autoscaling:
  enabled: false
  minReplicas: 1
  maxReplicas: 10
persistence:
  enabled: true
  size: 8Gi
metrics:
  enabled: false
nodeSelector: {{}}
tolerations: []
affinity: {{}}
"""

WEB_TEMPLATES = {
    "templates/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
  labels:
    app.kubernetes.io/name: {{ .Chart.Name }}
spec:
  replicas: {{ .Values.replicaCount }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ .Chart.Name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ .Chart.Name }}
    spec:
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          ports:
            - containerPort: {{ .Values.service.port }}
          resources: {{- toYaml .Values.resources | nindent 12 }}
""",
    "templates/service.yaml": """apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
spec:
  type: {{ .Values.service.type }}
  ports:
    - port: {{ .Values.service.port }}
  selector:
    app.kubernetes.io/name: {{ .Chart.Name }}
""",
    "templates/NOTES.txt": """Get the address of {{ .Chart.Name }}:
  kubectl get svc {{ .Release.Name }}-{{ .Chart.Name }} --namespace {{ .Release.Namespace }}
""",
}

def web(out, count):
    """COUNT distinct charts as a repository behind a web view sees them: metadata with
    description, keywords and maintainers, a README of a few KB, values.yaml, three
    templates; every 5th chart has 2 versions and every 11th 3, every 50th is deprecated.
    Prints the number of packages."""
    rnd = random.Random(34)
    os.makedirs(out, exist_ok=True)
    packages = 0
    for i in range(count):
        first, kind = WEB_WORDS[i % len(WEB_WORDS)], WEB_KINDS[(i // len(WEB_WORDS)) % len(WEB_KINDS)]
        name = f"{first}-{kind}-{i:04d}"
        keywords = sorted({first, kind, *rnd.sample(WEB_WORDS, 2)})
        maintainers = rnd.sample(WEB_TEAMS, rnd.randint(1, 3))
        description = (f"{first.capitalize()} {kind} for Kubernetes, with {rnd.choice(WEB_WORDS)} integration "
                       f"and {rnd.choice(WEB_WORDS)} metrics")
        readme = web_readme(name, description, rnd)
        versions = 3 if i % 11 == 0 else 2 if i % 5 == 0 else 1
        for minor in range(versions):
            version, app = f"1.{minor}.{i % 10}", f"{2 + minor}.{i % 13}.{i % 3}"
            chart_yaml = (
                f"apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"{app}\"\n"
                f"description: {description}\ntype: application\n"
                f"home: https://{first}.example.com\nicon: https://{first}.example.com/icon.svg\n"
                f"sources:\n- https://github.com/example/{name}\n"
                "keywords:\n" + "".join(f"- {k}\n" for k in keywords) +
                "maintainers:\n" + "".join(
                    f"- name: {m}\n  email: {m.split()[0].lower()}@example.com\n" for m in maintainers) +
                ("deprecated: true\n" if i % 50 == 7 else "")
            )
            files = {
                "Chart.yaml": chart_yaml,
                "values.yaml": WEB_VALUES.format(replicas=1 + minor, name=name, app=app, port=8000 + i % 1000),
                "README.md": readme,
                **WEB_TEMPLATES,
            }
            buf = io.BytesIO()
            with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=6) as gz, \
                    tarfile.open(fileobj=gz, mode="w") as tar:
                for path, text in files.items():
                    data = text.encode()
                    info = tarfile.TarInfo(f"{name}/{path}")
                    info.size = len(data)
                    info.mode = 0o644
                    tar.addfile(info, io.BytesIO(data))
            with open(os.path.join(out, f"{name}-{version}.tgz"), "wb") as f:
                f.write(buf.getvalue())
            packages += 1
    print(packages)

if __name__ == "__main__":
    if sys.argv[1] == "packages":
        repack(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "web":
        web(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "small":
        small(sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
    else:
        print(synthetic_index(sys.argv[2], int(sys.argv[3])))
