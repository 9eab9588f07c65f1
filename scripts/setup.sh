#!/usr/bin/env bash
# scripts/setup.sh: bring every real part redis-variants needs up on this
# machine, idempotently. Installs Debian packages, builds buildkitd (and
# buildctl) at the buildkit version go.mod pins, starts dockerd, a local
# Distribution registry and buildkitd when they do not already answer, seeds
# debian:{bookworm,trixie}-slim stand-ins when Docker Hub cannot be reached,
# and fills the content-addressed source cache.
#
# State and logs live in one folder: $RV_STATE (default .state under the repo).
# Environment:
#   RV_STATE        state folder (default: <repo>/.state)
#   RV_REGISTRY     local registry host:port (default 127.0.0.1:5000)
#   RV_MIN_FREE_MB  refuse to start with less free disk (default 8000)
#   RV_SKIP_APT=1   do not install Debian packages
#   RV_SEED_SUITES  Debian suites to seed as debian:<suite>-slim (default "bookworm trixie")
#   RV_SEED_ARM64   suites whose debian:<suite>-slim also gets an arm64 image, for
#                   platform: linux/arm64 variants (default "bookworm"; "" for none)
#   RV_SEED_OFFICIAL  official references to rebuild into the local registry under
#                   Docker Hub's name when Docker Hub cannot be reached (default "official")
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${RV_STATE:-$ROOT/.state}
case $STATE in /*) ;; *) STATE=$ROOT/$STATE ;; esac
REGISTRY=${RV_REGISTRY:-127.0.0.1:5000}
MIN_FREE_MB=${RV_MIN_FREE_MB:-8000}
BUILDKIT_SOCK=/run/buildkit/buildkitd.sock
DOCKER_SOCK=/var/run/docker.sock
LOGS=$STATE/logs
BIN=$STATE/bin
SEED_SUITES=${RV_SEED_SUITES:-bookworm trixie}
SEED_ARM64=${RV_SEED_ARM64-bookworm}

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# Debian packages set-up installs when they are missing.
PKGS=(docker.io runc containerd iptables debootstrap docker-registry redis-server redis-tools
	tcl procps util-linux iproute2 curl ca-certificates xz-utils chromium binutils
	gcc libc6-dev # gcc: the SBOM and gate tests compile their ELF and LD_PRELOAD fixtures
	qemu-user-static) # arm64 variants: their binaries run under emulation in the build, verify and the arm64 base's set-up

# What is missing or not answering; set-up and its check ask alike.
missing_packages() {
	local p
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
	done
}
docker_up() { curl -sf --unix-socket "$DOCKER_SOCK" http://localhost/_ping; }
registry_up() { curl -sf "http://$REGISTRY/v2/"; }
buildkit_up() { "$BIN/buildctl" --addr "unix://$BUILDKIT_SOCK" debug workers; }

# RV_SETUP_CHECK=1 (make setup-check): say what set-up would install, start
# and register on this host, and change nothing; exit 0 when it would
# change nothing, 1 when it would.
if [ "${RV_SETUP_CHECK:-}" = 1 ]; then
	todo=0
	would() { say "would $*"; todo=1; }
	mapfile -t missing < <(missing_packages)
	if [ ${#missing[@]} -gt 0 ]; then would "install Debian packages (apt-get, as root): ${missing[*]}"; else say "Debian packages: all installed"; fi
	if docker_up >/dev/null 2>&1; then
		say "dockerd answers at $DOCKER_SOCK: used as it is"
	else
		would "start dockerd (data $STATE/docker, socket $DOCKER_SOCK, the local registry as its Docker Hub mirror)"
	fi
	if registry_up >/dev/null 2>&1; then
		say "a registry answers at $REGISTRY: used as it is"
	else
		would "start a Distribution registry at $REGISTRY (data $STATE/registry)"
	fi
	if [ -S "$BUILDKIT_SOCK" ] && { ! [ -x "$BIN/buildctl" ] || buildkit_up >/dev/null 2>&1; }; then
		say "buildkitd answers at $BUILDKIT_SOCK: used as it is"
	else
		would "build buildkitd from the Go module proxy into $BIN and start it (root $STATE/buildkit/root, socket $BUILDKIT_SOCK)"
	fi
	if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
		would "mount binfmt_misc and register qemu-aarch64 (arm64 builds)"
	fi
	say "state and logs go to $STATE; base images, the official image and sources are seeded there and in the registry when missing"
	exit "$todo"
fi

mkdir -p "$STATE" "$LOGS" "$BIN" "$STATE/locks"

# One set-up at a time.
# (fd 9 is closed for the daemons started below, so they do not hold it.)
exec 9>"$STATE/locks/setup.lock"
if ! flock -n 9; then
	die "another set-up is running (pid $(cat "$STATE/locks/setup.pid" 2>/dev/null || echo '?')); wait for it or kill it"
fi
echo $$ >"$STATE/locks/setup.pid"

# Enough disk for images, BuildKit's cache and Redis builds.
free_mb=$(df -Pm "$STATE" | awk 'NR==2{print $4}')
if [ "${free_mb:-0}" -lt "$MIN_FREE_MB" ]; then
	die "not enough free disk in $STATE: ${free_mb} MB free, need ${MIN_FREE_MB} MB (free space, or set RV_MIN_FREE_MB)"
fi

[ "$(id -u)" = 0 ] || die "set-up must run as root (it starts dockerd and buildkitd)"

# --- Debian packages -------------------------------------------------------
if [ "${RV_SKIP_APT:-}" != 1 ]; then
	mapfile -t missing < <(missing_packages)
	if [ ${#missing[@]} -gt 0 ]; then
		say "installing Debian packages: ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >"$LOGS/apt.log" 2>&1 || { tail -20 "$LOGS/apt.log" >&2; die "apt-get update failed (log: $LOGS/apt.log)"; }
		apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$LOGS/apt.log" 2>&1 ||
			{ tail -20 "$LOGS/apt.log" >&2; die "apt-get install ${missing[*]} failed (log: $LOGS/apt.log)"; }
	fi
fi
for c in dockerd containerd runc docker-registry debootstrap iptables; do
	command -v "$c" >/dev/null || die "$c is missing after install; install Debian's package providing it"
done

# --- user-mode emulation --------------------------------------------------
# An arm64 variant is cross-compiled, but its build runs its binaries
# (redis-server --version, a PGO training), verify runs its suite and its
# image, and the arm64 base is bootstrapped: all under qemu, through
# binfmt_misc. The entry must carry the F flag (qemu opened when it is
# registered) to work inside containers, which do not hold qemu; Debian's
# qemu-user-static ships such entries in /usr/lib/binfmt.d, registered here
# by hand because no systemd runs them. Where the kernel refuses, arm64
# variants fail with that reason and everything else goes on.
BINFMT=/proc/sys/fs/binfmt_misc
emulation() {
	[ -e "$BINFMT/register" ] || mount -t binfmt_misc binfmt_misc "$BINFMT" 2>/dev/null || {
		say "binfmt_misc cannot be mounted here: arm64 variants cannot be built or verified"
		return 1
	}
	local conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	[ -f "$conf" ] || { say "no $conf (qemu-user-static): arm64 variants cannot be built or verified"; return 1; }
	if [ -e "$BINFMT/qemu-aarch64" ] && ! grep -q '^flags: .*F' "$BINFMT/qemu-aarch64"; then
		echo -1 >"$BINFMT/qemu-aarch64" # registered without F (by another tool): again, with it
	fi
	if [ ! -e "$BINFMT/qemu-aarch64" ]; then
		grep -v '^#' "$conf" >"$BINFMT/register" 2>/dev/null || {
			say "registering qemu-aarch64 with binfmt_misc failed: arm64 variants cannot be built or verified"
			return 1
		}
	fi
	grep -q '^enabled' "$BINFMT/qemu-aarch64" && say "arm64 binaries run under qemu ($(sed -n 's/^interpreter //p' "$BINFMT/qemu-aarch64"), flags $(sed -n 's/^flags: //p' "$BINFMT/qemu-aarch64"))"
}
emulation || SEED_ARM64=""

# --- background work: Go binaries and base root file systems ---------------
# Compiling buildkitd (CPU) and debootstrapping the base images (network,
# dpkg) do not depend on each other or on the daemons, so they run beside
# the daemons' start-up; each writes its own log, and its output stays there.
declare -A BG_PID BG_LOG
bg() { # name log command...
	local name=$1 log=$2
	shift 2
	("$@") >"$log" 2>&1 </dev/null 9>&- &
	BG_PID[$name]=$!
	BG_LOG[$name]=$log
}
join() { # name: wait for a background step; its failure ends set-up
	local name=$1
	[ -n "${BG_PID[$name]:-}" ] || return 0
	if ! wait "${BG_PID[$name]}"; then
		tail -20 "${BG_LOG[$name]}" >&2
		die "$name failed (log: ${BG_LOG[$name]})"
	fi
	unset "BG_PID[$name]"
}
# a set-up that stops early leaves nothing of its own running
trap 'for p in "${BG_PID[@]}"; do kill -- "$p" 2>/dev/null || true; done' EXIT

BK_VERSION=$(cd "$ROOT" && go list -m -f '{{.Version}}' github.com/moby/buildkit 2>"$LOGS/go-list.log") ||
	{ tail -20 "$LOGS/go-list.log" >&2; die "reading buildkit's version from go.mod failed (log: $LOGS/go-list.log)"; }
stale() { # name: the binary is missing or not at go.mod's buildkit version
	! { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/$1.version" 2>/dev/null)" = "$BK_VERSION" ]; }
}
build_if_stale() { # name pkg
	local out=$BIN/$1 stamp=$BIN/$1.version
	stale "$1" || return 0
	echo "building $1 $BK_VERSION from the Go module proxy"
	(cd "$ROOT" && go build -trimpath -ldflags "-X github.com/moby/buildkit/version.Version=$BK_VERSION" -o "$out.tmp" "$2")
	mv "$out.tmp" "$out"
	echo "$BK_VERSION" >"$stamp"
}
build_buildkit() {
	build_if_stale buildkitd github.com/moby/buildkit/cmd/buildkitd
	build_if_stale buildctl github.com/moby/buildkit/cmd/buildctl
}
build_tool() {
	(cd "$ROOT" && go build -o "$BIN/redis-variants.tmp" ./cmd/redis-variants)
	mv "$BIN/redis-variants.tmp" "$BIN/redis-variants"
	# the static load generator a PGO build's training runs, next to it
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN/redis-loadgen.tmp" ./loadgen/cmd/redis-loadgen)
	mv "$BIN/redis-loadgen.tmp" "$BIN/redis-loadgen"
	# the SBOM generator an attested push runs inside BuildKit (static: it
	# runs alone in its image)
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN/redis-variants-sbom.tmp" ./cmd/redis-variants-sbom)
	mv "$BIN/redis-variants-sbom.tmp" "$BIN/redis-variants-sbom"
}
if stale buildkitd || stale buildctl; then
	say "building buildkitd and buildctl $BK_VERSION in the background (log $LOGS/go-build-buildkit.log)"
fi
bg "building buildkitd" "$LOGS/go-build-buildkit.log" build_buildkit
bg "building redis-variants" "$LOGS/go-build-tool.log" build_tool

# --- daemons -----------------------------------------------------------------
# A daemon this set-up starts is recorded in $STATE/pids/<name>.pid; only
# such a daemon is ever restarted here or stopped by `make clean-state`. One
# that was already running (the user's, or another checkout's) is used as it
# is, and set-up says what it would have changed.
# shellcheck source=daemons.sh
source "$ROOT/scripts/daemons.sh"
port_owner() { ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:((\("[^"]*"\).*/\1/p' | head -1; }

wait_for() { # name seconds logfile command...
	local name=$1 secs=$2 log=$3
	shift 3
	for _ in $(seq $((secs * 5))); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		if [ -n "${PID:-}" ] && ! kill -0 "$PID" 2>/dev/null; then
			tail -25 "$log" >&2
			die "$name exited while starting (log: $log)"
		fi
		sleep 0.2
	done
	tail -25 "$log" >&2
	die "$name did not answer within ${secs}s (log: $log)"
}

# Docker Hub reachable? If not, the local registry stands in as its mirror,
# for Docker Engine (registry-mirrors) and BuildKit alike: a Docker Hub name
# (debian:bookworm-slim, redis:7.0.15) resolves from it as it would online.
HUB=0
if curl -s -m 5 -o /dev/null https://registry-1.docker.io/v2/; then HUB=1; fi
MIRROR_FLAGS=()
[ "$HUB" = 1 ] || MIRROR_FLAGS=(--registry-mirror "http://$REGISTRY")

docker_mirrored() { # the running dockerd has the mirror this machine needs
	[ "$HUB" = 1 ] || curl -sf --unix-socket "$DOCKER_SOCK" http://localhost/info | grep -q "\"http://$REGISTRY/\""
}
if docker_up >/dev/null 2>&1 && ! docker_mirrored; then
	if stop_ours dockerd; then
		say "restarting dockerd, which this set-up started (it has no registry mirror for Docker Hub names)"
		for _ in $(seq 150); do docker_up >/dev/null 2>&1 || break; sleep 0.2; done
	else
		say "using the running dockerd, which this set-up did not start, as it is: it has no registry mirror for Docker Hub names, so images the references pull by Docker Hub name are rebuilt from their recipes (add --registry-mirror http://$REGISTRY to it to pull them through the local registry)"
	fi
fi
if docker_up >/dev/null 2>&1; then
	say "dockerd answers"
else
	say "starting dockerd (data $STATE/docker, log $LOGS/dockerd.log)"
	mkdir -p "$STATE/docker"
	rm -f /var/run/docker.pid
	PID=$(setsid dockerd --data-root "$STATE/docker" --host "unix://$DOCKER_SOCK" \
		--insecure-registry "$REGISTRY" "${MIRROR_FLAGS[@]}" --pidfile /var/run/docker.pid \
		>"$LOGS/dockerd.log" 2>&1 </dev/null 9>&- & echo $!)
	started dockerd "$PID"
	wait_for dockerd 60 "$LOGS/dockerd.log" docker_up
	PID=
fi

if registry_up >/dev/null 2>&1; then
	say "registry answers at $REGISTRY"
else
	port=${REGISTRY##*:}
	owner=$(port_owner "$port")
	[ -z "$owner" ] || die "port $port is taken by $owner, which is not a registry; stop it or set RV_REGISTRY=127.0.0.1:<free port>"
	say "starting registry at $REGISTRY (data $STATE/registry, log $LOGS/registry.log)"
	mkdir -p "$STATE/registry/data"
	cat >"$STATE/registry/config.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $STATE/registry/data}
  delete: {enabled: true}
http: {addr: $REGISTRY}
EOF
	PID=$(setsid docker-registry serve "$STATE/registry/config.yml" >"$LOGS/registry.log" 2>&1 </dev/null 9>&- & echo $!)
	started registry "$PID"
	wait_for registry 30 "$LOGS/registry.log" registry_up
	PID=
fi


# --- base images -----------------------------------------------------------
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -1)
[ -n "$mirror" ] || mirror=$(awk '/^deb / && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
rootfs() { # suite [arch]: a slim root file system as one tar, $STATE/rootfs/<suite>[-<arch>].tar
	local suite=$1 arch=${2:-} dir=$STATE/rootfs/$1${2:+-$2}
	rm -rf "$dir" "$dir.tar"
	mkdir -p "$dir"
	# a foreign architecture's second stage runs its maintainer scripts under qemu
	debootstrap --variant=minbase ${arch:+--arch="$arch"} "$suite" "$dir" "$mirror"
	bash "$ROOT/scripts/slim-rootfs.sh" "$dir" "$mirror" "$suite"
	tar --numeric-owner -C "$dir" -cf "$dir.tar.tmp" .
	mv "$dir.tar.tmp" "$dir.tar"
	rm -rf "$dir"
}
SEED=() SEED_A64=()
if [ "$HUB" = 1 ]; then
	say "Docker Hub answers: base images are pulled from it"
else
	for suite in $SEED_SUITES; do
		# (an image or, once an arm64 image joined it, an index)
		if curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json' \
			"http://$REGISTRY/v2/library/debian/manifests/$suite-slim"; then
			say "debian:$suite-slim is in the local registry"
			continue
		fi
		say "seeding debian:$suite-slim from $mirror with debootstrap in the background (log $LOGS/debootstrap-$suite.log)"
		bg "debootstrap $suite" "$LOGS/debootstrap-$suite.log" rootfs "$suite"
		SEED+=("$suite")
	done
	for suite in $SEED_ARM64; do
		# an amd64 image seeded now replaces the tag: its arm64 image goes too
		if [[ " ${SEED[*]} " != *" $suite "* ]] && curl -sf -H 'Accept: application/vnd.oci.image.index.v1+json' \
			"http://$REGISTRY/v2/library/debian/manifests/$suite-slim" | grep -q '"architecture":"arm64"'; then
			say "debian:$suite-slim has an arm64 image in the local registry"
			continue
		fi
		say "seeding debian:$suite-slim for arm64 with debootstrap under qemu in the background (log $LOGS/debootstrap-$suite-arm64.log)"
		bg "debootstrap $suite arm64" "$LOGS/debootstrap-$suite-arm64.log" rootfs "$suite" arm64
		SEED_A64+=("$suite")
	done
fi

mkdir -p "$STATE/buildkit"
{
	echo "root = \"$STATE/buildkit/root\""
	echo '[grpc]'
	echo "  address = [\"unix://$BUILDKIT_SOCK\"]"
	echo '[worker.oci]'
	echo '  enabled = true'
	echo '  gc = true'
	echo '  gckeepstorage = "30GB"'
	echo '[worker.containerd]'
	echo '  enabled = false'
	echo "[registry.\"$REGISTRY\"]"
	echo '  http = true'
	echo '  insecure = true'
	if [ "$HUB" = 0 ]; then
		echo '[registry."docker.io"]'
		echo "  mirrors = [\"$REGISTRY\"]"
	fi
} >"$STATE/buildkit/buildkitd.toml.new"
cfg_changed=1
cmp -s "$STATE/buildkit/buildkitd.toml.new" "$STATE/buildkit/buildkitd.toml" && cfg_changed=0
mv "$STATE/buildkit/buildkitd.toml.new" "$STATE/buildkit/buildkitd.toml"

join "building buildkitd"
if buildkit_up >/dev/null 2>&1 && { [ "$cfg_changed" = 0 ] || ! ours buildkitd; }; then
	if [ "$cfg_changed" = 1 ]; then
		say "using the running buildkitd, which this set-up did not start, as it is (this set-up's configuration, $STATE/buildkit/buildkitd.toml, is not applied to it)"
	else
		say "buildkitd answers"
	fi
else
	if [ "$cfg_changed" = 1 ] && stop_ours buildkitd; then
		say "restarted buildkitd, which this set-up started (configuration changed)"
	fi
	say "starting buildkitd $BK_VERSION (root $STATE/buildkit/root, log $LOGS/buildkitd.log)"
	mkdir -p "$(dirname "$BUILDKIT_SOCK")"
	rm -f "$BUILDKIT_SOCK"
	PID=$(setsid "$BIN/buildkitd" --config "$STATE/buildkit/buildkitd.toml" \
		>"$LOGS/buildkitd.log" 2>&1 </dev/null 9>&- & echo $!)
	started buildkitd "$PID"
	wait_for buildkitd 60 "$LOGS/buildkitd.log" buildkit_up
	PID=
fi

join "building redis-variants"
RV=$BIN/redis-variants
for suite in "${SEED[@]}"; do
	join "debootstrap $suite"
	"$RV" seed-base --registry "$REGISTRY" --tar "$STATE/rootfs/$suite.tar" --ref "$REGISTRY/library/debian:$suite-slim" --suite "$suite" ||
		die "pushing debian:$suite-slim failed"
	rm -f "$STATE/rootfs/$suite.tar"
done
# after the amd64 images: each arm64 image joins its suite's tag as an index
for suite in "${SEED_A64[@]}"; do
	join "debootstrap $suite arm64"
	"$RV" seed-base --registry "$REGISTRY" --tar "$STATE/rootfs/$suite-arm64.tar" --ref "$REGISTRY/library/debian:$suite-slim" --suite "$suite" --arch arm64 ||
		die "pushing debian:$suite-slim for arm64 failed"
	rm -f "$STATE/rootfs/$suite-arm64.tar"
done

# --- sources -----------------------------------------------------------------
say "filling the source cache ($STATE/cache/sources)"
(cd "$ROOT" && "$RV" fetch --state "$STATE" -f "${RV_FILE:-variants.yaml}") || die "filling the source cache failed"

# --- the official image, offline -------------------------------------------
# With no Docker Hub, the official reference's recipe is rebuilt once and
# placed in the local registry under Docker Hub's name (library/redis:7.0.15),
# so that the reference is pulled through the mirror as it would be online.
if [ "$HUB" = 0 ]; then
	say "placing the rebuilt official image in the local registry (${RV_SEED_OFFICIAL:-official})"
	(cd "$ROOT" && "$RV" seed-official --state "$STATE" --registry "$REGISTRY" -f "${RV_FILE:-variants.yaml}" \
		--only "${RV_SEED_OFFICIAL:-official}") >"$LOGS/seed-official.log" 2>&1 ||
		{ tail -20 "$LOGS/seed-official.log" >&2; die "seeding the official image failed (log: $LOGS/seed-official.log)"; }
	tail -1 "$LOGS/seed-official.log" | sed 's/^/setup: /'
fi

say "ready in $(elapsed)s: dockerd unix://$DOCKER_SOCK, buildkitd unix://$BUILDKIT_SOCK, registry $REGISTRY"
# how long set-up took, for the time split `run` prints when it follows (make run)
elapsed | cut -d. -f1 > "$STATE/logs/setup.seconds"
