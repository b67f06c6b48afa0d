{{- define "mg.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mg.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "mg.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "mg.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component (gateway, worker-media, ...): pass (dict "ctx" $ "component" "gateway"). */}}
{{- define "mg.selector" -}}
app.kubernetes.io/name: {{ include "mg.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "mg.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "mg.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "mg.fullname" .)) -}}
{{- end -}}

{{/* Task-queue name of a worker queue (the worker-queue contract). */}}
{{- define "mg.taskQueue" -}}
{{- if eq .queue "media" -}}{{ .ctx.Values.temporal.taskQueue }}{{- else -}}{{ printf "%s-%s" .ctx.Values.temporal.taskQueue .queue }}{{- end -}}
{{- end -}}

{{/* The environment every process gets: the ConfigMap, the Secret, the catalogue file. */}}
{{- define "mg.envFrom" -}}
- configMapRef:
    name: {{ include "mg.fullname" . }}-config
- secretRef:
    name: {{ include "mg.secretName" . }}
{{- end -}}

{{- define "mg.catalogueEnv" -}}
{{- if .Values.catalogue.existingConfigMap }}
- name: CATALOGUE_FILE
  value: /etc/model-gateway/catalogue/{{ .Values.catalogue.key }}
{{- end }}
{{- end -}}

{{- define "mg.volumes" -}}
- name: tmp
  emptyDir: {}
{{- with .Values.temporal.tls.clientCertSecret }}
- name: temporal-tls-client
  secret:
    secretName: {{ . }}
    items:
      - { key: tls.crt, path: tls.crt }
      - { key: tls.key, path: tls.key }
{{- end }}
{{- with .Values.temporal.tls.caSecret }}
- name: temporal-tls-ca
  secret:
    secretName: {{ . }}
    items:
      - { key: ca.crt, path: ca.crt }
{{- end }}
{{- if .Values.catalogue.existingConfigMap }}
- name: catalogue
  configMap:
    name: {{ .Values.catalogue.existingConfigMap }}
{{- end }}
{{- end -}}

{{- define "mg.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if .Values.temporal.tls.clientCertSecret }}
- name: temporal-tls-client
  mountPath: /etc/model-gateway/temporal-tls/client
  readOnly: true
{{- end }}
{{- if .Values.temporal.tls.caSecret }}
- name: temporal-tls-ca
  mountPath: /etc/model-gateway/temporal-tls/ca
  readOnly: true
{{- end }}
{{- if .Values.catalogue.existingConfigMap }}
- name: catalogue
  mountPath: /etc/model-gateway/catalogue
  readOnly: true
{{- end }}
{{- end -}}


{{/* Where batch lines go (GATEWAY_INTERNAL_URL): gateway.internalUrl, else the gateway Service's cluster DNS name and port. */}}
{{- define "mg.gatewayInternalUrl" -}}
{{- .Values.gateway.internalUrl | default (printf "http://%s-gateway.%s.svc:%v" (include "mg.fullname" .) .Release.Namespace .Values.gateway.service.port) -}}
{{- end -}}
