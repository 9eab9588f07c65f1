#!/usr/bin/env bash
# scripts/daemons.sh: the record of the daemons set-up starts, one file a
# daemon in $STATE/pids/<name>.pid. Only a recorded daemon (its pid alive
# and its command the daemon's) is ever restarted by set-up or stopped by
# `make clean-state`; one already running (the user's, another checkout's)
# is left as it is. Sourced by setup.sh; run as
#   bash scripts/daemons.sh stop-all STATE
# it stops every recorded daemon of STATE.

# daemon_bin is the command name (/proc/PID/comm) of a recorded daemon.
daemon_bin() { case $1 in registry) echo docker-registry ;; *) echo "$1" ;; esac; }

# started NAME PID: record a daemon set-up started.
started() { mkdir -p "$STATE/pids" && echo "$2" >"$STATE/pids/$1.pid"; }

# ours NAME: the recorded daemon is running.
ours() {
	local pid
	pid=$(cat "$STATE/pids/$1.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(daemon_bin "$1")" ]
}

# stop_ours NAME: stop the recorded daemon (SIGTERM, up to 30 s); false
# when there is none running.
stop_ours() {
	local pid
	ours "$1" || return 1
	pid=$(cat "$STATE/pids/$1.pid")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	rm -f "$STATE/pids/$1.pid"
}

# stop_all_ours: stop every recorded daemon, saying which.
stop_all_ours() {
	local f name
	for f in "$STATE"/pids/*.pid; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .pid)
		if ours "$name"; then
			echo "stopping $name (pid $(cat "$f")), which set-up started"
			stop_ours "$name"
		fi
		rm -f "$f"
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	case ${1:-} in
	stop-all)
		STATE=${2:?usage: daemons.sh stop-all STATE}
		stop_all_ours
		;;
	*)
		echo "usage: daemons.sh stop-all STATE" >&2
		exit 2
		;;
	esac
fi
