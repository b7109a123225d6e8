#!/bin/sh
# slurm_cluster.sh start|stop DIR: a one-node Slurm cluster on this machine
# for the sharding test (tests/run/t6150-shards-under-slurm-and-mpi.c): munged (when none runs),
# slurmctld and slurmd, with their configuration, state, spool, logs and
# pids in DIR. `start` prints the SLURM_CONF to use and waits until the node
# is idle; `stop` stops, by the pids it saved, only what `start` started.
# Needs root and Debian's slurm-wlm and munge (scripts/deps.sh test).
set -eu
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: slurm_cluster.sh start|stop DIR" >&2; exit 2; }

stop() {
    for p in slurmd slurmctld munged; do
        f=$dir/$p.started
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
}

if [ "$cmd" = stop ]; then
    stop
    exit 0
fi
[ "$cmd" = start ] || { echo "slurm_cluster.sh: unknown command '$cmd'" >&2; exit 2; }
for t in slurmctld slurmd srun munged; do
    command -v $t >/dev/null 2>&1 || [ -x /usr/sbin/$t ] ||
        { echo "slurm_cluster.sh: $t is not installed (apt-get install slurm-wlm munge)" >&2; exit 3; }
done
[ "$(id -u)" -eq 0 ] || { echo "slurm_cluster.sh: needs root" >&2; exit 3; }
mkdir -p "$dir/state" "$dir/spool"
host=$(hostname -s)

# munge: a key, and a daemon when none answers
if ! munge -n >/dev/null 2>&1; then
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null
    fi
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    chown munge:munge /run/munge /var/lib/munge /var/log/munge
    su -s /bin/sh munge -c /usr/sbin/munged
    i=0
    until munge -n >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 100 ] || { echo "slurm_cluster.sh: munged did not start" >&2; exit 1; }
        sleep 0.1
    done
    cat /run/munge/munged.pid > "$dir/munged.started"
fi

# two free ports for the daemons
ports=$(python3 -c 'import socket
ps = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ps.append(s)
print(" ".join(str(s.getsockname()[1]) for s in ps))')
set -- $ports
cat > "$dir/slurm.conf" <<CONF
ClusterName=servelab-test
SlurmctldHost=$host
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -c -f "$SLURM_CONF" > "$dir/slurmctld.out" 2>&1 &
echo $! > "$dir/slurmctld.started"
slurmd -D -f "$SLURM_CONF" > "$dir/slurmd.out" 2>&1 &
echo $! > "$dir/slurmd.started"
i=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
    i=$((i + 1))
    if [ $i -ge 300 ]; then
        echo "slurm_cluster.sh: the node did not come up idle; the end of the logs:" >&2
        tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 2>/dev/null || true
        stop
        exit 1
    fi
    sleep 0.1
done
echo "$SLURM_CONF"
