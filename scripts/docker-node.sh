#!/usr/bin/env bash
# A second Docker engine beside the host's own, as a second node (docs/architecture.md "Nodes and placement"):
# its own data root, exec root, socket and pid file under DIR, and no iptables rules (published ports go through
# the engine's userland proxy). Used by .ci/run and by test/docker/nodes.test.ts.
#   scripts/docker-node.sh start DIR   starts it unless it answers already; waits until it does
#   scripts/docker-node.sh stop DIR    stops the one whose pid DIR/docker.pid holds; waits until it has exited,
#                                      then removes what it left on the host (its mounts, its bridge)
#   scripts/docker-node.sh address DIR makes its bridge unless it is there; prints the bridge's IPv4 address
#   scripts/docker-node.sh start DIR --tls CERTDIR PORT
#                                      as start, and also listens on tcp://<bridge address>:PORT with mutual TLS
#                                      (dockerd --tlsverify; CERTDIR holds ca.pem, server-cert.pem, server-key.pem,
#                                      as `gsh node add --make-certs` makes them): an address of this machine only;
#                                      a last argument --live-restore keeps its containers running while it is away
#   scripts/docker-node.sh halt DIR    stops only the engine (a restart: containers of a --live-restore engine
#                                      keep running, its bridge and mounts stay for them); stop cleans up after
#
# Its containers get a bridge of their own, named and numbered from DIR. Not --bridge=none: an engine started
# with it deletes the host's default bridge docker0 as it starts, cutting off the first engine's containers.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a folder}
sock="unix://$dir/docker.sock"
answers() { docker -H "$sock" version >/dev/null 2>&1; }
hash=$(printf '%s' "$dir" | md5sum | cut -c1-8)
bridge="gsh${hash}"                               # at most 15 characters (IFNAMSIZ)

make_bridge() {
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    # A /24 of 172.31/16 from the folder's name, the next free one if another bridge (another engine) has it.
    third=$((16#${hash:0:2}))
    while ip -o -4 addr show | grep -q " 172\.31\.$third\."; do third=$(((third + 1) % 256)); done
    subnet="172.31.$third.1/24"
    ip link add "$bridge" type bridge
    ip addr add "$subnet" dev "$bridge"
    ip link set "$bridge" up
  fi
}
bridge_address() { ip -o -4 addr show dev "$bridge" | awk '{print $4}' | cut -d/ -f1 | head -1; }

case "$cmd" in
  address)
    make_bridge
    bridge_address
    ;;
  start)
    mkdir -p "$dir"
    tls=()
    if [ "${3:-}" = "--tls" ]; then
      certs=${4:?--tls CERTDIR PORT}
      port=${5:?--tls CERTDIR PORT}
      [ "${6:-}" = "--live-restore" ] && tls+=(--live-restore)
    fi
    answers && exit 0
    make_bridge
    if [ -n "${certs:-}" ]; then
      tls+=(--tlsverify --tlscacert "$certs/ca.pem" --tlscert "$certs/server-cert.pem" --tlskey "$certs/server-key.pem"
        -H "tcp://$(bridge_address):$port")
    fi
    dockerd --data-root "$dir/root" --exec-root "$dir/exec" -H "$sock" --pidfile "$dir/docker.pid" \
      --bridge="$bridge" --iptables=false "${tls[@]}" >>"$dir/dockerd.log" 2>&1 </dev/null &
    for _ in $(seq 1 120); do answers && exit 0; sleep 0.5; done
    echo "the engine at $sock did not answer; its log:" >&2
    tail -20 "$dir/dockerd.log" >&2
    exit 1
    ;;
  stop | halt)
    if [ -f "$dir/docker.pid" ]; then
      pid=$(cat "$dir/docker.pid")
      if kill "$pid" 2>/dev/null; then
        for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$pid" 2>/dev/null || true
      fi
    fi
    [ "$cmd" = halt ] && exit 0
    # The engine leaves its network namespace mounted under its exec root; deepest first.
    { grep " $dir/" /proc/mounts || true; } | awk '{print $2}' | sort -r | xargs -r umount -l
    ip link del "$bridge" 2>/dev/null || true
    ;;
  *)
    echo "usage: $0 start DIR [--tls CERTDIR PORT [--live-restore]] | stop DIR | halt DIR | address DIR" >&2
    exit 2
    ;;
esac
