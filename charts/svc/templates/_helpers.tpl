{{/* Chart name. */}}
{{- define "svc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Object name prefix: the release name, plus the chart name unless the release name has it. */}}
{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: svc
{{- end }}

{{/* Selector labels of one component: pass (list $ "operator"). */}}
{{- define "svc.selectorLabels" -}}
{{- $ctx := index . 0 -}}
app.kubernetes.io/name: {{ include "svc.name" $ctx }}
app.kubernetes.io/instance: {{ $ctx.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "svc.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The Secret auth writes the proxy's TLS identity into and the proxy mounts. */}}
{{- define "svc.proxyIdentitySecret" -}}
{{ include "svc.fullname" . }}-proxy-identity
{{- end }}

{{/* The svcd configuration file. The PostgreSQL URL is a placeholder that auth's init container
replaces from the Secret; the proxy never opens the backend, so it keeps the placeholder. */}}
{{- define "svc.config" -}}
version: 1
cluster_name: {{ .Values.clusterName | quote }}
log_level: {{ .Values.logLevel | quote }}
auth:
  listen_addr: "0.0.0.0:{{ .Values.auth.port }}"
  advertise_addr: "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}.svc:{{ .Values.auth.port }}"
  diagnostics_addr: "0.0.0.0:{{ .Values.auth.diagnosticsPort }}"
  session_ttl: {{ .Values.auth.sessionTTL | quote }}
  tls_names:
    - "{{ include "svc.fullname" . }}-auth"
    - "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}"
    - "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}.svc.cluster.local"
  proxy_identity:
    secret_name: "{{ include "svc.proxyIdentitySecret" . }}"
    dns_names:
      - "{{ include "svc.fullname" . }}-proxy"
      - "{{ include "svc.fullname" . }}-proxy.{{ .Release.Namespace }}.svc"
    ttl: {{ .Values.proxy.identityTTL | quote }}
proxy:
  listen_addr: "0.0.0.0:{{ .Values.proxy.port }}"
  public_addr: {{ .Values.proxy.publicAddr | quote }}
  oidc_issuer_url: "https://{{ .Values.proxy.publicAddr }}"
  diagnostics_addr: "0.0.0.0:{{ .Values.proxy.diagnosticsPort }}"
  auth_addr: "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}.svc:{{ .Values.auth.port }}"
  identity_dir: /var/run/svc/identity
  {{- with .Values.proxy.trustedProxies }}
  trusted_proxies:
    {{- toYaml . | nindent 4 }}
  {{- end }}
client_tools:
  min_version: {{ .Values.clientTools.minVersion | quote }}
  recommended_version: {{ .Values.clientTools.recommendedVersion | quote }}
source:
  type: kubernetes
  namespace: {{ .Release.Namespace | quote }}
ca_store:
  type: kubernetes
  namespace: {{ .Release.Namespace | quote }}
  secret_prefix: {{ .Values.operator.caSecretPrefix | quote }}
backend:
  type: postgres
  url: "postgres://url-from-secret.invalid/svc"
{{- end }}
