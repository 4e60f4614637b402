#!/bin/sh
# Regenerates deploy/testdata/helm-*.yaml with a real helm, so helm_test.go can
# check that its own renderer (used where helm is not installed) agrees with helm.
#   go install helm.sh/helm/v3/cmd/helm@v3.21.4 && sh deploy/helm/golden.sh
set -eu
cd "$(dirname "$0")/../.."
helm=${HELM:-helm}
"$helm" lint deploy/helm/infrarust
# A fixed, public placeholder key, so no generated key lands in the repository.
key=golden-placeholder-not-a-real-key
"$helm" template mc deploy/helm/infrarust -n minecraft --set admin.apiKey=$key > deploy/testdata/helm-default.yaml
"$helm" template mc deploy/helm/infrarust -n minecraft --set admin.apiKey=$key \
    --set discovery.namespace='*' --set metrics.serviceMonitor.enabled=true \
    --set-string servers.lobby='domains = ["lobby.example.com"]' \
    --set config='[rate_limit]
enabled = true' > deploy/testdata/helm-options.yaml
echo "golden files written with $("$helm" version --short)"
