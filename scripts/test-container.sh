#!/usr/bin/env bash
# `npm run test:container`: builds the real image from the Dockerfile, unchanged, with Podman, runs it and checks
# that it starts as an unprivileged user, answers /health and a chat call, prints the first key, keeps its data
# in the /data volume across a new container, and exits 0 on SIGTERM.
#
# No image can be pulled here, so the base images the Dockerfile's FROM lines name are made locally: a minimal
# Debian bookworm root filesystem (debootstrap; the build one with python3, make and g++ as node:20-bookworm has)
# with this machine's Node 20 and npm copied into /usr/local and a `node` user (uid 1000), as the official images
# have. Their environment adds two npm settings because nodejs.org and GitHub are unreachable from this
# machine: node-gyp reads Node's headers from /usr/local, and better-sqlite3 compiles without trying to
# download a prebuilt binary; and when this machine trusts an extra certificate authority (NODE_EXTRA_CA_CERTS,
# a TLS-inspecting proxy in front of the registry), the images trust it too.
#
# Needs root, podman, runc, debootstrap and curl (.ci/run installs them). The root filesystems are cached in
# $OMNIGATE_CONTAINER_CACHE (default /var/tmp/omnigate-container).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

for command in podman runc debootstrap curl; do
  command -v "$command" >/dev/null || { echo "test-container: $command is not installed (apt-get install -y podman runc debootstrap curl)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo 'test-container: run as root (rootful Podman, debootstrap)' >&2; exit 1; }

cache=${OMNIGATE_CONTAINER_CACHE:-/var/tmp/omnigate-container}
mkdir -p "$cache"
# In the cache's file system, so the root filesystems can be hard-linked rather than copied.
work=$(mktemp -d "$cache/run-XXXXXX")
tag=omnigate-test:$$
name=omnigate-test-$$
volume=omnigate-test-data-$$

# Podman as it works here: no default ulimits (the sandbox refuses them), cgroupfs, runc.
cat >"$work/containers.conf" <<'EOF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
EOF
export CONTAINERS_CONF="$work/containers.conf"
podman() { command podman --runtime runc "$@"; }

cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  podman rmi -f "$tag" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "test-container: FAIL: $*" >&2; podman logs "$name" 2>&1 | tail -40 >&2 || true; exit 1; }
step() { echo "test-container: [$(($(date +%s) - started)) s] $*"; }

# The Debian mirror this machine's apt uses (deb822 `URIs:` or a one-line `deb` entry), not its security mirror.
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
  grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -1 | tr -d ' ' || true)
mirror=${mirror:-http://deb.debian.org/debian}

rootfs() { # <dir> [packages]: a cached debootstrap --variant=minbase bookworm
  if [ ! -d "$cache/$1" ]; then
    step "debootstrap $1 from $mirror"
    rm -rf "$cache/$1.tmp"
    debootstrap --variant=minbase ${2:+--include=$2} bookworm "$cache/$1.tmp" "$mirror" >"$work/$1.log" 2>&1 ||
      { tail -20 "$work/$1.log" >&2; fail "debootstrap $1"; }
    mv "$cache/$1.tmp" "$cache/$1"
  fi
}
rootfs bookworm-minbase
rootfs bookworm-build python3,make,g++

# What both base images add to their root filesystem: Node and npm in /usr/local, the `node` user.
node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
[ "$(node -p 'process.versions.node.split(".")[0]')" = 20 ] || fail "this machine's node is not Node 20"
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")

import_base() { # <rootfs dir> <image name>
  # A hard-linked copy of the cached root filesystem (instant), changed only by adding files or replacing them.
  local root="$work/root-$1"
  cp -al "$cache/$1" "$root"
  mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules" "$root/usr/local/include" "$root/home/node"
  cp "$node_prefix/bin/node" "$root/usr/local/bin/node"
  cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
  cp -a "$node_prefix/include/node" "$root/usr/local/include/node"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  for file in passwd group; do
    cp "$root/etc/$file" "$work/$file" && rm "$root/etc/$file" && mv "$work/$file" "$root/etc/$file"
  done
  echo 'node:x:1000:1000::/home/node:/bin/bash' >>"$root/etc/passwd"
  echo 'node:x:1000:' >>"$root/etc/group"
  chown 1000:1000 "$root/home/node"
  local changes=()
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then
    # This machine reaches the npm registry through a proxy with its own certificate authority.
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp "$NODE_EXTRA_CA_CERTS" "$root/usr/local/share/ca-certificates/host-extra.crt"
    changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-extra.crt')
  fi
  step "podman import $2"
  tar --numeric-owner -C "$root" -c . |
    podman import -q "${changes[@]}" \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV npm_config_nodedir=/usr/local' \
      --change 'ENV npm_config_build_from_source=better-sqlite3' \
      --change 'CMD ["node"]' - "$2" >/dev/null
}
import_base bookworm-build docker.io/library/node:20-bookworm
import_base bookworm-minbase docker.io/library/node:20-bookworm-slim

step "podman build (the Dockerfile as it is)"
podman build --network host --pull=never -t "$tag" -f Dockerfile . >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; fail 'podman build'; }

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
run() { podman run -d --name "$name" -p "127.0.0.1:$port:8080" -v "$volume:/data" "$tag" >/dev/null; }
wait_healthy() {
  for _ in $(seq 1 240); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ]; then return 0; fi
    [ "$(podman inspect -f '{{.State.Running}}' "$name")" = true ] || fail 'the container exited before answering /health'
    sleep 0.5
  done
  fail '/health did not answer 200 within 120 s'
}
chat() { # <key>: prints the HTTP status of a chat completion
  curl -s -o "$work/chat.json" -w '%{http_code}' "http://127.0.0.1:$port/v1/chat/completions" -H "authorization: Bearer $1" \
    -H 'content-type: application/json' -d '{"model":"local:chat","messages":[{"role":"user","content":"Hello from the container test"}]}'
}
stop_cleanly() { # SIGTERM to PID 1, as `docker stop` sends it: the server must drain and exit 0
  podman kill --signal TERM "$name" >/dev/null
  local code
  code=$(timeout 60 podman wait "$name") || fail 'the container did not stop within 60 s of SIGTERM'
  [ "$code" = 0 ] || fail "exit code $code after SIGTERM"
  podman logs "$name" 2>&1 | grep -q '"msg":"stopped"' || fail 'no "stopped" log line after SIGTERM'
}

step "first start"
run
wait_healthy
uid=$(podman exec "$name" sh -c "awk '/^Uid:/ {print \$2}' /proc/1/status")
[ "$uid" != 0 ] || fail 'the server (PID 1) runs as root'
[ "$(podman exec "$name" id -un "$uid")" = node ] || fail "the server runs as uid $uid, not node"
podman exec "$name" sh -c 'test ! -w /app' || fail '/app is writable by the server'
key=$(podman logs "$name" 2>&1 | grep -A2 'No API key existed' | grep -oE 'og-[A-Za-z0-9_-]+' | head -1)
[ -n "$key" ] || fail 'the first start printed no key'
status=$(chat "$key")
[ "$status" = 200 ] || fail "chat with the printed key answered $status: $(cat "$work/chat.json")"
grep -q '"object":"chat.completion"' "$work/chat.json" || fail "not a chat completion: $(cat "$work/chat.json")"
[ "$(chat og-not-a-key)" = 401 ] || fail 'a wrong key was not refused with 401'
stop_cleanly

step "second container on the same /data volume"
podman rm "$name" >/dev/null
run
wait_healthy
if podman logs "$name" 2>&1 | grep -q 'No API key existed'; then fail 'a second key was made: /data did not keep the first'; fi
status=$(chat "$key")
[ "$status" = 200 ] || fail "the first key answered $status after the restart"
podman exec "$name" sh -c 'ls /data' | grep -q . || fail '/data is empty'
stop_cleanly

step "passed in $(($(date +%s) - started)) s"
