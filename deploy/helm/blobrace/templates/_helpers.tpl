{{- define "blobrace.name" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "blobrace.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Requests equal to limits: every pod has its cap, Guaranteed. */}}
{{- define "blobrace.resources" -}}
resources:
  requests:
    memory: {{ .Values.cap.memory | quote }}
    cpu: {{ .Values.cap.cpus | quote }}
  limits:
    memory: {{ .Values.cap.memory | quote }}
    cpu: {{ .Values.cap.cpus | quote }}
{{- end -}}

{{- define "blobrace.password" -}}
{{- $secret := lookup "v1" "Secret" .root.Release.Namespace (printf "%s-passwords" (include "blobrace.name" .root)) -}}
{{- if .value -}}
{{ .value | b64enc }}
{{- else if and $secret (index $secret.data .key) -}}
{{ index $secret.data .key }}
{{- else -}}
{{ randAlphaNum 24 | b64enc }}
{{- end -}}
{{- end -}}
