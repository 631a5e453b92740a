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

{{/* Labels of one component's objects: pass (list $ "operator"). */}}
{{- define "svc.componentLabels" -}}
{{ include "svc.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
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

{{/* The Secret auth writes the first admin's one-time reset link into. */}}
{{- define "svc.firstAdminSecret" -}}
{{ include "svc.fullname" . }}-first-admin
{{- end }}

{{/* Host of proxy.publicAddr (host:port; a bracketed IPv6 host keeps no brackets). */}}
{{- define "svc.publicHost" -}}
{{- regexReplaceAll ":[0-9]+$" .Values.proxy.publicAddr "" | trimPrefix "[" | trimSuffix "]" -}}
{{- end }}

{{/*
The public host names as a YAML list: the host of proxy.publicAddr, plus "*.<host>" when
application access is on (apps.enabled; each app is one label under the public host, docs/apps.md).
*/}}
{{- define "svc.publicNames" -}}
{{- $host := include "svc.publicHost" . -}}
{{- if .Values.apps.enabled -}}
{{- toYaml (list $host (printf "*.%s" $host)) -}}
{{- else -}}
{{- toYaml (list $host) -}}
{{- end -}}
{{- end }}

{{/* The Secret holding the browser-trusted certificate for the public address ("" when none). */}}
{{- define "svc.publicTlsSecret" -}}
{{- if .Values.tls.existingSecret -}}
{{ .Values.tls.existingSecret }}
{{- else if .Values.tls.certManager.enabled -}}
{{ include "svc.fullname" . }}-public-tls
{{- end -}}
{{- end }}

{{/* "true" in evaluation mode (SQLite inside the auth Pod), "" otherwise. */}}
{{- define "svc.evaluation" -}}
{{- if eq .Values.database.mode "evaluation" }}true{{ end -}}
{{- end }}

{{/* auth replicas: one in evaluation mode (SQLite is one process's file). */}}
{{- define "svc.authReplicas" -}}
{{- if include "svc.evaluation" . }}1{{ else }}{{ .Values.auth.replicas }}{{ end -}}
{{- end }}

{{/* The PostgreSQL Secret, required in postgres mode (the schema says so too). */}}
{{- define "svc.postgresSecret" -}}
{{- required "database.postgres.existingSecret is required: the name of a Secret holding the PostgreSQL URL (docs/install-kubernetes.md), or set database.mode=evaluation" .Values.database.postgres.existingSecret -}}
{{- end }}

{{/*
Scheduling of one component: pass (list $ "proxy" .Values.proxy). nodeSelector, tolerations and
affinity from the component (else the global ones); topology spread by default across nodes and
zones with ScheduleAnyway, so one node or zone going away leaves replicas elsewhere without ever
blocking scheduling on a small cluster.
*/}}
{{- define "svc.scheduling" -}}
{{- $ctx := index . 0 -}}
{{- $component := index . 1 -}}
{{- $v := index . 2 -}}
{{- with ($v.nodeSelector | default $ctx.Values.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($v.tolerations | default $ctx.Values.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($v.affinity | default $ctx.Values.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $v.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml $v.topologySpreadConstraints | nindent 2 }}
{{- else if $ctx.Values.topologySpread.enabled }}
topologySpreadConstraints:
  {{- range $key := list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
  - maxSkew: 1
    topologyKey: {{ $key }}
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "svc.selectorLabels" (list $ctx $component) | nindent 8 }}
    matchLabelKeys: [pod-template-hash]
  {{- end }}
{{- end }}
{{- end }}

{{/* Pod-level settings every component shares. */}}
{{- define "svc.podCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* The svcd configuration file auth and proxy read. It holds no secret. */}}
{{- define "svc.config" -}}
version: 1
cluster_name: {{ .Values.clusterName | quote }}
trust_domain: {{ .Values.trustDomain | default .Values.clusterName | quote }}
log_level: {{ .Values.logLevel | quote }}
auth:
  listen_addr: "0.0.0.0:{{ .Values.auth.port }}"
  advertise_addr: "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}.svc:{{ .Values.auth.port }}"
  diagnostics_addr: "0.0.0.0:{{ .Values.auth.diagnosticsPort }}"
  session_ttl: {{ .Values.auth.sessionTTL | quote }}
  local_login: {{ .Values.auth.localLogin }}
  {{- with .Values.auth.defaultConnector }}
  default_connector: {{ . | quote }}
  {{- end }}
  {{- if .Values.auth.sso.caConfigMap }}
  sso:
    ca_file: "/var/run/svc/sso-ca/{{ .Values.auth.sso.caKey }}"
  {{- end }}
  tls_names:
    - "{{ include "svc.fullname" . }}-auth"
    - "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}"
    - "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}.svc.cluster.local"
  proxy_identity:
    secret_name: "{{ include "svc.proxyIdentitySecret" . }}"
    dns_names:
      - "{{ include "svc.fullname" . }}-proxy"
      - "{{ include "svc.fullname" . }}-proxy.{{ .Release.Namespace }}"
      - "{{ include "svc.fullname" . }}-proxy.{{ .Release.Namespace }}.svc"
      - "{{ include "svc.fullname" . }}-proxy.{{ .Release.Namespace }}.svc.cluster.local"
    ttl: {{ .Values.proxy.identityTTL | quote }}
  {{- with .Values.firstAdmin.user }}
  first_admin:
    user: {{ . | quote }}
    secret_name: "{{ include "svc.firstAdminSecret" $ }}"
  {{- end }}
proxy:
  listen_addr: "0.0.0.0:{{ .Values.proxy.port }}"
  public_addr: {{ .Values.proxy.publicAddr | quote }}
  # The issuer as relying parties spell it: no ":443".
  oidc_issuer_url: "https://{{ .Values.proxy.publicAddr | trimSuffix ":443" }}"
  diagnostics_addr: "0.0.0.0:{{ .Values.proxy.diagnosticsPort }}"
  auth_addr: "{{ include "svc.fullname" . }}-auth.{{ .Release.Namespace }}.svc:{{ .Values.auth.port }}"
  identity_dir: /var/run/svc/identity
  identity_secret: "{{ include "svc.proxyIdentitySecret" . }}"
  {{- if include "svc.publicTlsSecret" . }}
  public_tls:
    cert_file: /var/run/svc/public-tls/tls.crt
    key_file: /var/run/svc/public-tls/tls.key
  {{- end }}
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
  preset_roles: {{ .Values.presetRoles }}
  stale_after: "{{ .Values.staleAfterSeconds }}s"
ca_store:
  type: kubernetes
  namespace: {{ .Release.Namespace | quote }}
  secret_prefix: {{ .Values.operator.caSecretPrefix | quote }}
backend:
{{- if include "svc.evaluation" . }}
  # Evaluation only: one auth replica, state in this Pod's volume.
  type: sqlite
  path: /var/lib/svc/state.db
{{- else }}
  type: postgres
  # The mounted Secret database.postgres.existingSecret; the URL never enters this ConfigMap.
  url_file: /var/run/svc/postgres/url
  {{- with .Values.database.postgres.schema }}
  schema: {{ . | quote }}
  {{- end }}
{{- end }}
{{- end }}
