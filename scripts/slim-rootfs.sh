#!/usr/bin/env bash
# scripts/slim-rootfs.sh DIR MIRROR SUITE: make a debootstrap minbase root
# file system look like Docker Hub's debian:<suite>-slim, as
# debuerreotype-slimify and debuerreotype-minimizing-config do: no docs, man
# pages or locales (and dpkg told not to install them again), apt told to
# clean its caches, one deb822 sources file pointing at MIRROR.
set -euo pipefail
dir=$1 mirror=$2 suite=$3
[ -d "$dir/etc" ] || { echo "slim-rootfs: $dir is not a root file system" >&2; exit 1; }

mkdir -p "$dir/etc/dpkg/dpkg.cfg.d" "$dir/etc/apt/apt.conf.d"
cat >"$dir/etc/dpkg/dpkg.cfg.d/docker" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
CFG
cat >"$dir/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
echo 'Acquire::Languages "none";' >"$dir/etc/apt/apt.conf.d/docker-no-languages"
echo 'APT::Install-Recommends "false";' >"$dir/etc/apt/apt.conf.d/docker-no-recommends"

find "$dir/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$dir/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$dir/usr/share/man/"* "$dir/usr/share/info/"* "$dir/usr/share/locale/"* "$dir/usr/share/groff/"* \
	"$dir/usr/share/lintian/"* "$dir/var/cache/apt/"*.bin "$dir/var/lib/apt/lists/"* \
	"$dir/var/cache/apt/archives/"*.deb "$dir/var/log/"*.log "$dir/tmp/"* 2>/dev/null || true

rm -f "$dir/etc/apt/sources.list"
cat >"$dir/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
# Machine identity must not be baked into an image.
: >"$dir/etc/machine-id"
rm -f "$dir/var/lib/dbus/machine-id"
echo "debian-$suite-slim stand-in built by redis-variants from $mirror" >"$dir/etc/redis-variants-base"
