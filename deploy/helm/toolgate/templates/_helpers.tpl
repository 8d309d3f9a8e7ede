{{/*
The stage table, as internal/gen reads it from streams.Table: each stage's
input stream and the seal key files it mounts (seal.Needed: its own; execute
every sealing stage's). deploy/helm_equal_test.go fails when it drifts from
the kustomize base.
*/}}
{{- define "toolgate.stageTable" -}}
accumulate: {stream: TOOLGATE_IN, sealKeys: [seal-accumulate.key]}
parse: {stream: TOOLGATE_GATES, sealKeys: [seal-parse.key]}
validate: {stream: TOOLGATE_GATES, sealKeys: [seal-validate.key]}
business: {stream: TOOLGATE_GATES, sealKeys: [seal-business.key]}
policy: {stream: TOOLGATE_GATES, sealKeys: [seal-policy.key]}
repair: {stream: TOOLGATE_GATES, sealKeys: [seal-repair.key]}
execute: {stream: TOOLGATE_GATES, exec: true, sealKeys: [seal-accumulate.key, seal-repair.key, seal-parse.key, seal-validate.key, seal-business.key, seal-policy.key]}
{{- end }}

{{/* The NATS server's users: nats.accounts (toolgate authz render) or the
default files/nats-accounts.conf. */}}
{{- define "toolgate.natsAccounts" -}}
{{ .Values.nats.accounts | default (.Files.Get "files/nats-accounts.conf") }}
{{- end }}

{{/* The password variables the accounts file reads (TOOLGATE_NATS_PASSWORD_<USER>):
the keys of the Secret toolgate-nats-users. */}}
{{- define "toolgate.natsPasswordVars" -}}
{{- regexFindAll "[$]TOOLGATE_NATS_PASSWORD_[A-Z0-9_]+" (include "toolgate.natsAccounts" .) -1 | uniq | toJson | replace "$" "" -}}
{{- end }}

{{/* Labels Helm adds to every object's metadata (not to selectors or pods). */}}
{{- define "toolgate.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The image every toolgate container runs. */}}
{{- define "toolgate.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end }}

{{/* Secret names: yours (secrets.existing) or the chart's. */}}
{{- define "toolgate.secret.natsUsers" -}}
{{ .Values.secrets.existing.natsUsers | default "toolgate-nats-users" }}
{{- end }}
{{- define "toolgate.secret.sealKeys" -}}
{{ .Values.secrets.existing.sealKeys | default "toolgate-seal-keys" }}
{{- end }}
{{- define "toolgate.secret.execSigning" -}}
{{ .Values.secrets.existing.execSigning | default "toolgate-exec-signing" }}
{{- end }}
{{- define "toolgate.secret.credentials" -}}
{{ .Values.secrets.existing.credentials | default "toolgate-credentials" }}
{{- end }}

{{/* TOOLGATE_NATS_URL: the bundled cluster's or yours. */}}
{{- define "toolgate.natsURL" -}}
{{- if .Values.nats.deploy -}}
nats://nats.{{ .Release.Namespace }}.svc:4222
{{- else -}}
{{- required "nats.url is required with nats.deploy false (e.g. nats://nats.messaging.svc:4222)" .Values.nats.url -}}
{{- end -}}
{{- end }}

{{/* TOOLGATE_REDIS_URL: the bundled node's or yours. */}}
{{- define "toolgate.redisURL" -}}
{{- if .Values.redis.deploy -}}
redis://redis.{{ .Release.Namespace }}.svc:6379/0
{{- else -}}
{{- required "redis.url is required with redis.deploy false (e.g. redis://redis.example:6379/0)" .Values.redis.url -}}
{{- end -}}
{{- end }}

{{/* The ports of a URL's hosts, as JSON (args: url, default port): each
of a comma-separated list, nats://a:4222,nats://b:4223 as NATS takes them
or redis-sentinel://h1:26379,h2:26379/MASTER as toolgate's Redis does. */}}
{{- define "toolgate.urlPorts" -}}
{{- $ports := list -}}
{{- range splitList "," (index . 0) -}}
{{- $host := regexReplaceAll "^[a-z][a-z0-9+.-]*://" . "" -}}
{{- $host = regexReplaceAll "^[^/?#]*@" $host "" -}}
{{- $host = regexReplaceAll "[/?#].*$" $host "" -}}
{{- $port := regexFind ":[0-9]+$" $host | trimPrefix ":" -}}
{{- if not (or $port (index $ 1)) }}{{ fail (printf "%q: no port" $host) }}{{ end -}}
{{- $ports = append $ports (int ($port | default (index $ 1))) -}}
{{- end -}}
{{- $ports | uniq | toJson -}}
{{- end }}

{{/* The NATS monitoring endpoint KEDA asks for consumer lag. */}}
{{- define "toolgate.natsMonitoring" -}}
{{- if .Values.nats.monitoringEndpoint -}}
{{ .Values.nats.monitoringEndpoint }}
{{- else if .Values.nats.deploy -}}
nats.{{ .Release.Namespace }}.svc:8222
{{- else -}}
{{- fail "nats.monitoringEndpoint is required with nats.deploy false and autoscaling.mode keda (host:port of your NATS monitoring)" -}}
{{- end -}}
{{- end }}

{{/* A generated secret value: the one in the cluster if the Secret exists
(an upgrade keeps it), else a fresh one. Args: existing data (map or nil),
key, fresh value. */}}
{{- define "toolgate.keep" -}}
{{- $data := index . 0 -}}
{{- $key := index . 1 -}}
{{- if and $data (hasKey $data $key) -}}
{{ index $data $key }}
{{- else -}}
{{ index . 2 | b64enc }}
{{- end -}}
{{- end }}

{{/* 32 random bytes in hex: randAlphaNum draws from crypto/rand; its sha256
is 256 uniform bits. */}}
{{- define "toolgate.randHex" -}}
{{ randAlphaNum 64 | sha256sum }}
{{- end }}
