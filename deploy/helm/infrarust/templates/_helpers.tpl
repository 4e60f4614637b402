{{/* The release's name, as every object is called. */}}
{{- define "infrarust.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "infrarust.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Labels that select the proxy's pods. */}}
{{- define "infrarust.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "infrarust.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "infrarust.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "infrarust.adminSecret" -}}
{{- default (printf "%s-admin" (include "infrarust.fullname" .)) .Values.admin.existingSecret -}}
{{- end -}}

{{/* Cluster-wide discovery needs a ClusterRole. */}}
{{- define "infrarust.clusterWide" -}}
{{- if and .Values.discovery.enabled (eq .Values.discovery.namespace "*") -}}true{{- end -}}
{{- end -}}

{{/* infrarust.toml: the chart's keys, then the operator's. */}}
{{- define "infrarust.config" -}}
bind = "0.0.0.0:25565"
servers_dir = "/etc/infrarust/servers"
shutdown_timeout = "{{ .Values.shutdownTimeoutSeconds }}s"
shutdown_delay = "{{ .Values.shutdownDelaySeconds }}s"

{{- if .Values.fleet.enabled }}

[fleet]
# Each proxy's id is its host name: the pod's name.
{{- if .Values.fleet.existingSecret }}
redis = "file:/run/secrets/fleet/{{ .Values.fleet.urlKey }}"
{{- else if .Values.fleet.bundledRedis.enabled }}
redis = "env:INFRARUST_REDIS_URL"
{{- end }}
{{- end }}

[web]
data_dir = "/data"
metrics_public = {{ .Values.web.metricsPublic }}
requests_per_minute = {{ .Values.web.requestsPerMinute }}
{{- if .Values.discovery.enabled }}

[kubernetes]
namespace = {{ .Values.discovery.namespace | quote }}
label_selector = {{ .Values.discovery.labelSelector | quote }}
{{- end }}
{{- with .Values.config }}

{{ . }}
{{- end }}
{{- end -}}
