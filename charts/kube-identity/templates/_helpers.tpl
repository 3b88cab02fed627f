{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "kube-identity.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* Resource name prefix: the release name, suffixed with the chart name unless it already has it. */}}
{{- define "kube-identity.fullname" -}}
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
{{- end }}

{{- define "kube-identity.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* Labels that select the controller pods; never change them after install (selectors are immutable). */}}
{{- define "kube-identity.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kube-identity.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}

{{- define "kube-identity.labels" -}}
helm.sh/chart: {{ include "kube-identity.chart" . }}
{{ include "kube-identity.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kube-identity
{{- end }}

{{- define "kube-identity.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kube-identity.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end }}

{{/* The Secret holding the signing CA, or "" when the controller runs without one. */}}
{{- define "kube-identity.caSecretName" -}}
{{- if .Values.ca.existingSecret -}}
{{- .Values.ca.existingSecret -}}
{{- else if .Values.ca.generate -}}
{{- printf "%s-ca" (include "kube-identity.fullname" .) -}}
{{- end -}}
{{- end }}

{{- define "kube-identity.image" -}}
{{- $repository := required "image.repository is required: no kube-identity image is published. Build one with `make image` (kube-identity:dev), then `kind load docker-image kube-identity:dev` for kind, or push it to your registry and set image.repository and image.tag" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end }}

{{/* The controller configuration file: chart-derived keys, overridden by .Values.config. */}}
{{- define "kube-identity.config" -}}
{{- $cfg := dict "logLevel" .Values.logLevel "metricsBindAddress" (printf ":%d" (int .Values.metrics.port)) "clusterSigningDuration" .Values.signing.duration -}}
{{- $_ := set $cfg "leaderElect" .Values.leaderElection.enabled -}}
{{- $_ = set $cfg "metricsSecure" .Values.metrics.secure.enabled -}}
{{- if and .Values.metrics.secure.enabled .Values.metrics.secure.certSecret -}}
{{- $_ = set $cfg "metricsCertPath" "/etc/kube-identity/metrics-certs" -}}
{{- end -}}
{{- if .Values.leaderElection.enabled -}}
{{- $_ = set $cfg "leaderElectionId" .Values.leaderElection.leaseName -}}
{{- $_ = set $cfg "leaderElectionLeaseDuration" .Values.leaderElection.leaseDuration -}}
{{- $_ = set $cfg "leaderElectionRenewDeadline" .Values.leaderElection.renewDeadline -}}
{{- $_ = set $cfg "leaderElectionRetryPeriod" .Values.leaderElection.retryPeriod -}}
{{- end -}}
{{- if include "kube-identity.caSecretName" . -}}
{{- $_ = set $cfg "clusterSigningCertFile" "/etc/kube-identity/ca/tls.crt" -}}
{{- $_ = set $cfg "clusterSigningKeyFile" "/etc/kube-identity/ca/tls.key" -}}
{{- end -}}
{{- with .Values.signing.customSigners -}}
{{- $_ = set $cfg "customSigners" (join ";" .) -}}
{{- end -}}
{{- with .Values.servingApprover -}}
{{- if .enabled -}}
{{- $_ = set $cfg "approveKubeletServing" true -}}
{{- $_ = set $cfg "kubeletServingDnsRegex" .dnsRegex -}}
{{- $_ = set $cfg "kubeletServingAllowedIpRanges" (join "," .allowedIpRanges) -}}
{{- $_ = set $cfg "kubeletServingRequireNodeAddresses" .requireNodeAddresses -}}
{{- $_ = set $cfg "kubeletServingMaxPendingPerNode" (int .maxPendingPerNode) -}}
{{- $_ = set $cfg "kubeletServingDryRun" .dryRun -}}
{{- $_ = set $cfg "kubeletServingDeny" .deny -}}
{{- $_ = set $cfg "kubeletServingBypassDnsResolution" .bypassDnsResolution -}}
{{- $_ = set $cfg "clusterDomain" .clusterDomain -}}
{{- $_ = set $cfg "serviceClusterIpRange" .serviceClusterIpRange -}}
{{- end -}}
{{- end -}}
{{- toYaml (mergeOverwrite $cfg .Values.config) -}}
{{- end }}

{{/* Refuse combinations that cannot work, before anything is applied. */}}
{{- define "kube-identity.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicaCount > 1 requires leaderElection.enabled: true (otherwise every replica signs and approves)" -}}
{{- end -}}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.service.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled requires metrics.service.enabled" -}}
{{- end -}}
{{- end }}
