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

{{/*
A controller's Deployment (and its PodDisruptionBudget): aicr-<app>, except the controller that holds the operator's AWS
identity (ServiceAccount aicr-operator), whose Deployment is aicr-operator: the install guide's
`kubectl -n aicr-system rollout status deployment/aicr-operator` waits for the controller that writes the ECR token the
guide checks next. Argument: the app name.
*/}}
{{- define "aicr-operator.deployment" -}}
{{- if eq . "ecr-credential-refresher" -}}aicr-operator{{- else -}}aicr-{{ . }}{{- end -}}
{{- end -}}

{{/* Selector labels of one controller's pods. Argument: the app name. */}}
{{- define "aicr-operator.selector" -}}
app.kubernetes.io/name: aicr-operator
app.kubernetes.io/component: {{ . }}
{{- end -}}

{{/*
A controller's image: the controller's own image when its digest or tag is set (one controller upgraded on its own),
else operator.image (one image for every controller: the release's image by digest, or an ECR copy of it), else the
controller's repository at the chart's appVersion. Argument: dict root, c (the controller's values).
*/}}
{{- define "aicr-operator.image" -}}
{{- $operator := .root.Values.operator | default dict -}}
{{- if .c.image.digest -}}
{{- printf "%s@%s" .c.image.repository .c.image.digest -}}
{{- else if .c.image.tag -}}
{{- printf "%s:%s" .c.image.repository .c.image.tag -}}
{{- else if $operator.image -}}
{{- $operator.image -}}
{{- else -}}
{{- printf "%s:%s" .c.image.repository .root.Chart.AppVersion -}}
{{- end -}}
{{- end -}}

{{/*
The AICR image: aicr.image, else ghcr.io/nvidia/aicr:<aicr.version> pinned by the digest aicr.digests lists for that
version (tag and digest: a runtime pulls by the digest), else by its tag alone.
*/}}
{{- define "aicr-operator.aicrImage" -}}
{{- $digest := get (.Values.aicr.digests | default dict) .Values.aicr.version -}}
{{- if .Values.aicr.image -}}
{{- .Values.aicr.image -}}
{{- else if $digest -}}
{{- printf "ghcr.io/nvidia/aicr:%s@%s" .Values.aicr.version $digest -}}
{{- else -}}
{{- printf "ghcr.io/nvidia/aicr:%s" .Values.aicr.version -}}
{{- end -}}
{{- end -}}

{{/* The registry prefix without oci:// (Argo CD's form). */}}
{{- define "aicr-operator.registryHostPath" -}}
{{- trimSuffix "/" (trimPrefix "oci://" .Values.registry.repository) -}}
{{- end -}}

{{/* Whether the pinned AICR can sign evidence with a KMS key (v1.1.0 or later). */}}
{{- define "aicr-operator.aicrCanSign" -}}
{{- if semverCompare ">=1.1.0-0" .Values.aicr.version -}}true{{- end -}}
{{- end -}}
