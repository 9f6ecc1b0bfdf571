#!/usr/bin/env bash
# Builds (once per version) the Go tools the local control plane needs and prints nothing but progress.
# Usage: hack/build-tools.sh [registry] [etcd] [k8s] [kubectl] [kwok] [helm] [helm3] [argocd] [redis] [aicr] [moto] [kubeconform] [oras] [cosign] [promtool] [yq]
#        (no argument = all)
# Binaries land in $AICR_TOOLS_CACHE/<tool>-<version>/; a tool whose directory exists is not rebuilt.
# Go builds run under `nice` so they leave room for whatever else runs on the machine.
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

# AICR: the CLI and the deployment validator of each version. The module proxy here refuses github.com/NVIDIA/aicr,
# so the public source archive (with vendor/) is used when present: $AICR_THIRD_PARTY_DIR, or ../shared/third-party
# beside the checkout (third_party_dir, below). Elsewhere the normal route applies: `go install github.com/NVIDIA/aicr/cmd/aicr@<version>`.
# The version ldflags matter: without them the CLI says `dev`, writes `version: dev` into recipes and points its
# agent and validator images at :latest.
aicr_meta() { # VERSION -> "commit date archive-sha256"
  case $1 in
    v0.11.1) echo "bc05c6b 2026-03-21T10:02:14Z 8ef754db571739673311b6b2cda31c57cc8f06dd72f67c6b5e1e803cbb70e01c" ;;
    v0.10.16) echo "e07c9e6 2026-03-16T18:00:58Z 08f42f4b26b199da50bc17393dfd65527a3fdc928fd8e1b7abc8724a9f87c866" ;;
    *) log "no build metadata for aicr $1 (add it to aicr_meta)"; return 1 ;;
  esac
}

build_aicr_version() { # OUT VERSION
  local out=$1 v=$2 meta commit date sha tp archive src
  meta=$(aicr_meta "$v"); read -r commit date sha <<<"$meta"
  local ld="-s -w -X github.com/NVIDIA/aicr/pkg/cli.version=${v#v} -X github.com/NVIDIA/aicr/pkg/cli.commit=$commit"
  ld+=" -X github.com/NVIDIA/aicr/pkg/cli.date=$date"
  tp=$(third_party_dir || true); archive="$tp/aicr-$v-src.tar.gz"
  mkdir -p "$out/validators"
  if [[ -n $tp && -f $archive ]]; then
    echo "$sha  $archive" | sha256sum -c --quiet - || { log "checksum mismatch: $archive"; return 1; }
    # One fixed source path for every version, so the second build reuses the first one's compiled packages.
    src="$cache/.src/aicr"
    rm -rf "$src"; mkdir -p "$src"; tar -xzf "$archive" -C "$src"
    (cd "$src" && GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local nice -n 10 go build -trimpath -ldflags "$ld" \
      -o "$out/aicr" ./cmd/aicr)
    (cd "$src" && GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local nice -n 10 go build -trimpath -ldflags "-s -w" \
      -o "$out/validators/deployment" ./validators/deployment)
    # The validator image's WORKDIR /app holds testdata/ (check-nvidia-smi reads testdata/nvidia-smi-verify-pod.yaml).
    mkdir -p "$out/validators/app"; cp -r "$src/validators/deployment/testdata" "$out/validators/app/testdata"
    echo "source: $archive" >"$out/SOURCE"
    rm -rf "$src"
  else
    GOBIN=$out go install -trimpath -ldflags "$ld" "github.com/NVIDIA/aicr/cmd/aicr@$v"
    GOBIN=$out/validators go install -trimpath -ldflags "-s -w" "github.com/NVIDIA/aicr/validators/deployment@$v"
    local mod; mod=$(go env GOMODCACHE)/github.com/!n!v!i!d!i!a/aicr@$v
    mkdir -p "$out/validators/app"; cp -r "$mod/validators/deployment/testdata" "$out/validators/app/testdata"
    echo "source: go install github.com/NVIDIA/aicr@$v" >"$out/SOURCE"
  fi
  "$out/aicr" --version | grep -q "version ${v#v} " || { log "aicr $v reports: $("$out/aicr" --version)"; return 1; }
}
build_aicr_current() { build_aicr_version "$1" "$AICR_VERSION"; }
build_aicr_previous() { build_aicr_version "$1" "$AICR_PREVIOUS_VERSION"; }

# kubeconform, for the chart's tests: it validates rendered objects against JSON schemas taken from the local API
# server's OpenAPI (hack/chart/openapi-schemas.ts), never against downloaded ones.
build_kubeconform() {
  GOBIN=$1 nice -n 10 go install -trimpath -ldflags "-s -w" "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
}
# The oras CLI: tests check pushed images with it, as a user would (`oras manifest fetch`, `oras copy`).
build_oras() {
  GOBIN=$1 nice -n 10 go install -trimpath -ldflags "-s -w" "oras.land/oras/cmd/oras@$ORAS_VERSION"
}

# yq, as the install guide uses it (`helm show values … | yq -r .operator.image`).
build_yq() {
  GOBIN=$1 nice -n 10 go install -trimpath -ldflags "-s -w" "github.com/mikefarah/yq/v4@$YQ_VERSION"
}

# Helm v3 only for Argo CD's repo-server (the version Argo CD pins): in v3 `helm pull oci://` falls back to plain
# HTTP, which the runtime registry on loopback needs, because Argo CD never passes --plain-http. Everything else
# uses helm v4.
build_helm3() {
  GOBIN=$1 nice -n 10 go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM3_VERSION" \
    "helm.sh/helm/v3/cmd/helm@$HELM3_VERSION"
}

# Argo CD's module on the proxy lacks its nested gitops-engine module (module zips leave nested modules out), so the
# source tree is the proxy's module plus that folder. Here the folder comes from a checked archive in the
# third-party directory ($AICR_THIRD_PARTY_DIR, or ../shared/third-party beside the checkout). Elsewhere the whole
# tree comes from a shallow git clone of the release tag, which holds the folder (that route needs GitHub; it is
# not exercised where GitHub is unreachable). The CRDs the harness installs are copied beside the binary.
third_party_dir() {
  local d=${AICR_THIRD_PARTY_DIR:-$here/../../shared/third-party}
  [[ -d $d ]] && (cd "$d" && pwd)
}

argocd_source() {
  local src=$1 archive="" tp dir
  tp=$(third_party_dir || true)
  [[ -n $tp ]] && archive="$tp/argo-cd-gitops-engine-$ARGOCD_VERSION.tar.gz"
  if [[ -n $archive && -f $archive ]]; then
    local sum; sum=$(sha256sum "$archive" | cut -d' ' -f1)
    if [[ $sum != "$ARGOCD_GITOPS_ENGINE_SHA256" ]]; then
      log "$archive: sha256 $sum, expected $ARGOCD_GITOPS_ENGINE_SHA256"; exit 1
    fi
    log "argocd: module from the Go proxy + gitops-engine from $archive"
    dir=$(cd "$src" && go mod download -json "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [[ -n $dir && -d $dir ]] || { log "argocd: go mod download gave no module directory"; exit 1; }
    cp -r "$dir/." "$src/argo-cd"; chmod -R u+w "$src/argo-cd"
    tar -xzf "$archive" -C "$src/argo-cd"
  else
    log "argocd: no third-party archive (${AICR_THIRD_PARTY_DIR:-../shared/third-party}); cloning the $ARGOCD_VERSION tag from GitHub"
    git clone -q --depth 1 --branch "$ARGOCD_VERSION" https://github.com/argoproj/argo-cd.git "$src/argo-cd"
  fi
  [[ -f $src/argo-cd/gitops-engine/go.mod ]] || { log "argocd: gitops-engine/ missing from the source tree"; exit 1; }
}

build_argocd() (
  out=$(cd "$1" && pwd) src=$(mktemp -d "$cache/.argocd-src.XXXX")
  trap 'rm -rf "$src"' EXIT # the source tree is about 100 MB; never left behind, not even by a failed build
  mkdir -p "$src/argo-cd"
  argocd_source "$src"
  p=github.com/argoproj/argo-cd/v3/common
  cd "$src/argo-cd"
  nice -n 10 go build -trimpath -ldflags "-s -w -X $p.version=${ARGOCD_VERSION#v} \
    -X $p.gitTag=$ARGOCD_VERSION -X $p.gitCommit=$ARGOCD_COMMIT -X $p.gitTreeState=clean" -o "$out/argocd" ./cmd
  mkdir -p "$out/crds"
  cp manifests/crds/*.yaml "$out/crds/"
)

# Debian's CNCF distribution registry (plus apache2-utils for `htpasswd -B`, the bcrypt hashes its htpasswd auth
# needs, and tmux, the real terminal `kubectl aicr watch` is tested in); installed from apt when missing.
ensure_registry() {
  local pkgs=()
  command -v docker-registry >/dev/null 2>&1 || [[ -x /usr/bin/docker-registry ]] || pkgs+=(docker-registry)
  command -v htpasswd >/dev/null 2>&1 || pkgs+=(apache2-utils)
  command -v tmux >/dev/null 2>&1 || pkgs+=(tmux)
  if [[ ${#pkgs[@]} -eq 0 ]]; then return; fi
  log "installing Debian ${pkgs[*]}"
  if [[ $(id -u) -ne 0 ]]; then log "${pkgs[*]} missing and not root: run 'sudo apt-get install -y ${pkgs[*]}'"; exit 1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  # The package starts a system service on :5000; the harness runs its own instance on a free port.
  (systemctl disable --now docker-registry >/dev/null 2>&1 || service docker-registry stop >/dev/null 2>&1 || true)
}

# Debian's redis-server for Argo CD's cache; the harness runs its own instance on a free loopback port, never the
# system service.
ensure_redis() {
  command -v redis-server >/dev/null 2>&1 && return
  log "installing Debian redis-server"
  if [[ $(id -u) -ne 0 ]]; then log "redis-server missing and not root: run 'sudo apt-get install -y redis-server'"; exit 1; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  (systemctl disable --now redis-server >/dev/null 2>&1 || service redis-server stop >/dev/null 2>&1 || true)
}

# moto (PyPI), the local AWS emulator the ECR credential refresher's tests run against: a Python venv with only what
# its server mode needs for ECR, STS and IAM (docs/adr/20261202-ecr-local-emulator.md). Wheels, no compiler.
build_moto() {
  local py; py=$(command -v python3) || { log "python3 is needed for moto"; exit 1; }
  "$py" -m venv "$1"
  "$1/bin/pip" install --quiet --disable-pip-version-check --no-input \
    "moto==$MOTO_VERSION" "flask==$MOTO_FLASK_VERSION" "flask-cors==$MOTO_FLASK_CORS_VERSION"
}

# cosign, the signature tool users verify signed evidence with (`cosign verify-blob --key <KMS public key>`).
build_cosign() {
  GOBIN=$1 nice -n 10 go install -trimpath -ldflags "-s -w" "github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION"
}

# promtool, the Prometheus rule checker a platform team runs on the chart's alerts (`promtool check rules`, `promtool
# test rules`). Without service discovery (`remove_all_sd`): rule checks and rule tests use none, and the build then
# leaves out the cloud SDKs. The version ldflags make `promtool --version` name the Prometheus release.
build_promtool() {
  local v=${PROMTOOL_VERSION#v0.} p=github.com/prometheus/common/version
  local release="3.$((${v%%.*} - 300)).${v#*.}" # module v0.316.0 is Prometheus v3.16.0
  GOBIN=$1 nice -n 10 go install -trimpath -tags remove_all_sd \
    -ldflags "-s -w -X $p.Version=$release -X $p.Branch=HEAD -X $p.BuildUser=aicr-operator -X $p.BuildDate=20260101-00:00:00" \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION"
}

want=("$@"); [[ ${#want[@]} -eq 0 ]] && want=(registry redis etcd k8s kubectl kwok helm helm3 argocd aicr moto kubeconform oras cosign promtool yq)
for t in "${want[@]}"; do
  case $t in
    etcd) done_or_build etcd "$ETCD_VERSION" build_etcd ;;
    k8s) done_or_build k8s "$K8S_VERSION" build_k8s ;;
    kubectl) done_or_build kubectl "$K8S_VERSION" build_kubectl ;;
    kwok) done_or_build kwok "$KWOK_VERSION" build_kwok ;;
    helm) done_or_build helm "$HELM_VERSION" build_helm ;;
    aicr)
      done_or_build aicr "$AICR_VERSION" build_aicr_current
      done_or_build aicr "$AICR_PREVIOUS_VERSION" build_aicr_previous
      ;;
    helm3) done_or_build helm "$HELM3_VERSION" build_helm3 ;;
    argocd) done_or_build argocd "$ARGOCD_VERSION" build_argocd ;;
    registry) ensure_registry ;;
    redis) ensure_redis ;;
    moto) done_or_build moto "$MOTO_VERSION" build_moto ;;
    kubeconform) done_or_build kubeconform "$KUBECONFORM_VERSION" build_kubeconform ;;
    oras) done_or_build oras "$ORAS_VERSION" build_oras ;;
    cosign) done_or_build cosign "$COSIGN_VERSION" build_cosign ;;
    promtool) done_or_build promtool "$PROMTOOL_VERSION" build_promtool ;;
    yq) done_or_build yq "$YQ_VERSION" build_yq ;;
    *) log "unknown tool $t"; exit 2 ;;
  esac
done
