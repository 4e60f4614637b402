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


{{/* The setups that would render and then fail at run time are refused here. */}}
{{- define "infrarust.validate" -}}
{{- if and .Values.fleet.enabled (not .Values.fleet.existingSecret) (not .Values.fleet.bundledRedis.enabled) -}}
{{- fail "fleet.enabled=true needs a Redis: set fleet.existingSecret (a Secret with the Redis URL under fleet.urlKey) or fleet.bundledRedis.enabled=true" -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.forwarding.existingSecret) (include "infrarust.sharedForwarding" .) -}}
{{- fail (printf "velocity or BungeeGuard forwarding with replicaCount=%v needs forwarding.existingSecret: without it each pod makes its own secret and the backends refuse the players of all but one (kubectl create secret generic infrarust-forwarding --from-literal=secret=\"$(openssl rand -hex 24)\")" .Values.replicaCount) -}}
{{- end -}}
{{- end -}}

{{/* "true" when the config or a server asks for a forwarding with a secret. */}}
{{- define "infrarust.sharedForwarding" -}}
{{- $re := "(?m)^\\s*(mode|forwarding_mode)\\s*=\\s*\"(velocity|modern|bungee_guard|bungeeguard)\"" -}}
{{- $found := regexMatch $re (toString .Values.config) -}}
{{- range $id, $text := .Values.servers -}}
{{- if regexMatch $re (toString $text) -}}{{- $found = true -}}{{- end -}}
{{- end -}}
{{- if $found -}}true{{- end -}}
{{- end -}}
