#!/usr/bin/env bash
# Refreshes variants/catalogue/redis-hashes.txt, the built-in catalogue of
# Redis releases, from Redis's published hashes (needs github.com; the
# machines of this project cannot reach it, so a session copies the file
# from a fetched snapshot instead). Debian's pool fallbacks are a table in
# variants/catalogue.go (sha256 of pool/main/r/redis/redis_<v>.orig.tar.gz).
set -euo pipefail
cd "$(dirname "$0")/.."
url=https://raw.githubusercontent.com/redis/redis-hashes/master/README
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
curl -fsSL "$url" -o "$tmp"
{ echo "# Copied verbatim below the next two lines from github.com/redis/redis-hashes, file README,"
  echo "# on $(date -u +%F). Refresh: scripts/update-redis-hashes.sh"
  cat "$tmp"; } > variants/catalogue/redis-hashes.txt
grep -c '^hash' variants/catalogue/redis-hashes.txt
