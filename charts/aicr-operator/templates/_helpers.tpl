{{/* Labels every object of the chart carries. */}}
{{- define "aicr-operator.labels" -}}
app.kubernetes.io/part-of: aicr-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The controllers the chart runs: values key → app name. */}}
{{- define "aicr-operator.controllers" -}}
resolver: resolver
registryMirror: registry-mirror
planner: planner
approvalGuard: approval-guard
stepExecutor: step-executor
ecrCredentialRefresher: ecr-credential-refresher
validationGate: validation-gate
{{- end -}}

{{/*
A controller's ServiceAccount: the one that needs AWS is aicr-operator (the seed's IRSA / Pod Identity subject); the
validation-gate's aicr-validation-gate also needs it (KMS) when validation.signingKey is set.
*/}}
{{- define "aicr-operator.serviceAccount" -}}
{{- if eq . "ecr-credential-refresher" -}}aicr-operator{{- else -}}aicr-{{ . }}{{- end -}}
{{- end -}}

{{/* Selector labels of one controller's pods. Argument: the app name. */}}
{{- define "aicr-operator.selector" -}}
app.kubernetes.io/name: aicr-operator
app.kubernetes.io/component: {{ . }}
{{- end -}}

{{/*
A controller's image: operator.image when set (one image for every controller), else the controller's repository
at its digest, else at its tag (default the chart's appVersion). Argument: dict root, c (the controller's values).
*/}}
{{- define "aicr-operator.image" -}}
{{- $operator := .root.Values.operator | default dict -}}
{{- if $operator.image -}}
{{- $operator.image -}}
{{- else if .c.image.digest -}}
{{- printf "%s@%s" .c.image.repository .c.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .c.image.repository (.c.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The AICR image: aicr.image, else ghcr.io/nvidia/aicr:<aicr.version>. */}}
{{- define "aicr-operator.aicrImage" -}}
{{- .Values.aicr.image | default (printf "ghcr.io/nvidia/aicr:%s" .Values.aicr.version) -}}
{{- end -}}

{{/* The registry prefix without oci:// (Argo CD's form). */}}
{{- define "aicr-operator.registryHostPath" -}}
{{- trimSuffix "/" (trimPrefix "oci://" .Values.registry.repository) -}}
{{- end -}}

{{/* Whether the pinned AICR can sign evidence with a KMS key (v1.1.0 or later). */}}
{{- define "aicr-operator.aicrCanSign" -}}
{{- if semverCompare ">=1.1.0-0" .Values.aicr.version -}}true{{- end -}}
{{- end -}}
