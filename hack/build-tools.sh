#!/usr/bin/env bash
# Builds (once per version) the Go tools the local control plane needs and prints nothing but progress.
# Usage: hack/build-tools.sh [registry] [etcd] [k8s] [kubectl] [kwok] [helm] [moto]   (no argument = all)
# Binaries land in $AICR_TOOLS_CACHE/<tool>-<version>/; a tool whose directory exists is not rebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/versions.env
source "$here/tools/versions.env"
cache=${AICR_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aicr-operator/bin}
mkdir -p "$cache"
export CGO_ENABLED=0 GOFLAGS=-mod=mod

log() { printf '[build-tools] %s\n' "$*" >&2; }

# done_or_build NAME VERSION FUNC: runs FUNC into a temp dir, then moves it into place atomically.
done_or_build() {
  local name=$1 version=$2 fn=$3 dest="$cache/$1-$2"
  if [[ -f "$dest/.complete" ]]; then log "$name $version cached at $dest"; return; fi
  local tmp; tmp=$(mktemp -d "$cache/.$name-$version.XXXX")
  local start=$SECONDS
  log "building $name $version (cold build; cached afterwards)"
  "$fn" "$tmp"
  touch "$tmp/.complete"
  rm -rf "$dest"; mv "$tmp" "$dest"
  log "built $name $version in $((SECONDS - start))s"
}

build_etcd() {
  (cd "$here/tools/etcd" && go build -trimpath -ldflags "-s -w" -o "$1/etcd" go.etcd.io/etcd/server/v3)
}

# The version ldflags matter: kwok and Argo CD parse `--version`, and without them it reads v0.0.0-master.
k8s_ldflags() {
  local v=$K8S_VERSION minor; minor=$(echo "$v" | cut -d. -f2)
  local p=k8s.io/component-base/version c=k8s.io/client-go/pkg/version
  echo "-s -w -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean" \
    "-X $p.buildDate=2026-01-01T00:00:00Z -X $c.gitVersion=$v -X $c.gitMajor=1 -X $c.gitMinor=$minor"
}

# One `go build` for the three so their shared packages compile once.
build_k8s() {
  (cd "$here/tools/k8s" && go build -trimpath -ldflags "$(k8s_ldflags)" -o "$1/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
}

build_kubectl() {
  (cd "$here/tools/k8s" && go build -trimpath -ldflags "$(k8s_ldflags)" -o "$1/kubectl" k8s.io/kubernetes/cmd/kubectl)
}

build_kwok() {
  GOBIN=$1 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  # The stage configs (fast node/pod lifecycle) ship inside the module; keep a copy beside the binary.
  local mod; mod=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION
  cp -r "$mod/kustomize/stage" "$1/stage"; chmod -R u+w "$1/stage"
}

build_helm() {
  GOBIN=$1 go install -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
}

# Debian's CNCF distribution registry (plus apache2-utils for `htpasswd -B`, the bcrypt hashes its htpasswd auth
# needs); installed from apt when missing.
ensure_registry() {
  local pkgs=()
  command -v docker-registry >/dev/null 2>&1 || [[ -x /usr/bin/docker-registry ]] || pkgs+=(docker-registry)
  command -v htpasswd >/dev/null 2>&1 || pkgs+=(apache2-utils)
  if [[ ${#pkgs[@]} -eq 0 ]]; then return; fi
  log "installing Debian ${pkgs[*]}"
  if [[ $(id -u) -ne 0 ]]; then log "${pkgs[*]} missing and not root: run 'sudo apt-get install -y ${pkgs[*]}'"; exit 1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  # The package starts a system service on :5000; the harness runs its own instance on a free port.
  (systemctl disable --now docker-registry >/dev/null 2>&1 || service docker-registry stop >/dev/null 2>&1 || true)
}

# moto (PyPI), the local AWS emulator the ECR credential refresher's tests run against: a Python venv with only what
# its server mode needs for ECR, STS and IAM (docs/adr/20261202-ecr-local-emulator.md). Wheels, no compiler.
build_moto() {
  local py; py=$(command -v python3) || { log "python3 is needed for moto"; exit 1; }
  "$py" -m venv "$1"
  "$1/bin/pip" install --quiet --disable-pip-version-check --no-input \
    "moto==$MOTO_VERSION" "flask==$MOTO_FLASK_VERSION" "flask-cors==$MOTO_FLASK_CORS_VERSION"
}

want=("$@"); [[ ${#want[@]} -eq 0 ]] && want=(registry etcd k8s kubectl kwok helm moto)
for t in "${want[@]}"; do
  case $t in
    etcd) done_or_build etcd "$ETCD_VERSION" build_etcd ;;
    k8s) done_or_build k8s "$K8S_VERSION" build_k8s ;;
    kubectl) done_or_build kubectl "$K8S_VERSION" build_kubectl ;;
    kwok) done_or_build kwok "$KWOK_VERSION" build_kwok ;;
    helm) done_or_build helm "$HELM_VERSION" build_helm ;;
    registry) ensure_registry ;;
    moto) done_or_build moto "$MOTO_VERSION" build_moto ;;
    *) log "unknown tool $t"; exit 2 ;;
  esac
done
