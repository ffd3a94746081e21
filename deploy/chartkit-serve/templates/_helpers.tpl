{{/* The chart's name, or nameOverride. */}}
{{- define "chartkit-serve.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The objects' name: fullnameOverride, else the release name with the chart's name
unless the release name has it already. Kubernetes names stop at 63 characters. */}}
{{- define "chartkit-serve.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "chartkit-serve.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "chartkit-serve.selectorLabels" -}}
app.kubernetes.io/name: {{ include "chartkit-serve.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "chartkit-serve.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "chartkit-serve.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "chartkit-serve.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "chartkit-serve.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Where the packages are: the bucket, or the volume's mount. */}}
{{- define "chartkit-serve.storage" -}}
{{- if .Values.s3.enabled }}
{{- if not .Values.s3.bucket }}
{{- fail "s3.enabled needs s3.bucket" }}
{{- end }}
{{- printf "s3://%s" .Values.s3.bucket }}{{ with .Values.s3.prefix }}/{{ . }}{{ end }}
{{- else -}}
/data
{{- end }}
{{- end }}
