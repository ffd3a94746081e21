{{/*
The chart name, shortened to 63 characters: Kubernetes label values stop there.
*/}}
{{- define "__NAME__.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name used for objects: the release name, plus the chart name unless the
release name already contains it.
*/}}
{{- define "__NAME__.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The chart label value: name and version.
*/}}
{{- define "__NAME__.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels on every object.
*/}}
{{- define "__NAME__.labels" -}}
helm.sh/chart: {{ include "__NAME__.chart" . }}
{{ include "__NAME__.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Labels that select this release's pods; they must never change after install.
*/}}
{{- define "__NAME__.selectorLabels" -}}
app.kubernetes.io/name: {{ include "__NAME__.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The service account the pods run as.
*/}}
{{- define "__NAME__.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "__NAME__.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
