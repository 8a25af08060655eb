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

{{/* Each server pod's first step: its data volume's files dropped from the node's page
  cache before the server starts (dd iflag=nocache count=0: posix_fadvise DONTNEED of
  the whole file, after a sync so dirty pages can go). The page cache outlives a pod, so
  a pod restarted for a cold start (blobrace deletes it through the API) would
  otherwise read its data from memory. The runner's image: its coreutils dd has nocache
  (SeaweedFS's Alpine busybox dd has not). The counts end as the termination message,
  which blobrace reads from the pod's status (server/cold.rs: POD_DROP_CONTAINER). */}}
{{- define "blobrace.dropPageCache" -}}
- name: drop-page-cache
  image: {{ .root.Values.runner.image }}
  imagePullPolicy: {{ .root.Values.runner.imagePullPolicy }}
  command:
    - bash
    - -c
    - |
      set -euo pipefail
      sync
      # The list first: a find that fails fails the drop (a process substitution's
      # status would be lost).
      find {{ .dir }} -type f -print0 > /tmp/files
      files=0 bytes=0
      while IFS= read -r -d '' f; do
        dd if="$f" iflag=nocache count=0 status=none
        files=$((files + 1)) bytes=$((bytes + $(stat -c %s "$f")))
      done < /tmp/files
      echo "files=$files bytes=$bytes dir={{ .dir }}" | tee /dev/termination-log
  terminationMessagePolicy: FallbackToLogsOnError
  # Requests equal to limits: a pod's QoS counts its init containers.
  resources:
    requests: {memory: 32Mi, cpu: 100m}
    limits: {memory: 32Mi, cpu: 100m}
  volumeMounts:
    - name: data
      mountPath: {{ .dir }}
{{- end -}}

{{/* Where a pod runs: a nodeSelector and tolerations, where given. */}}
{{- define "blobrace.placement" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
