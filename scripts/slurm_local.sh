#!/usr/bin/env bash
# A one-node SLURM cluster on loopback, for trying and testing tomacs sweeps on SLURM (submitit).
#
#   scripts/slurm_local.sh install   apt-get slurm-wlm + munge (only if sbatch is missing; needs root)
#   scripts/slurm_local.sh start     munged + slurmctld + slurmd on 127.0.0.1, partition `debug`
#   scripts/slurm_local.sh status    prints "running" (exit 0) or "stopped" (exit 1)
#   scripts/slurm_local.sh stop      cancels the cluster's jobs, stops the three daemons this script started
#   scripts/slurm_local.sh env       prints the line to paste into a shell: export SLURM_CONF=...
#
# Everything lives in $TOMACS_SLURM_DIR (default /tmp/tomacs-slurm): slurm.conf, a private munge key and
# socket, state, logs and pid files; /etc/slurm and any system munged are left alone, so it can sit beside
# a real installation. Clients find it through SLURM_CONF=$TOMACS_SLURM_DIR/slurm.conf (sbatch, squeue,
# scancel; jobs inherit it). Daemons are started directly (no systemd, works in a container), as root,
# bound to 127.0.0.1 only (CommunicationParameters=NoInAddrAny), with no cgroups (proctrack/linuxproc,
# task/none) and no accounting (sacct fails; submitit logs a warning and watches for result files).
set -euo pipefail

DIR=${TOMACS_SLURM_DIR:-/tmp/tomacs-slurm}
CTLD_PORT=${TOMACS_SLURM_CTLD_PORT:-16817}
SLURMD_PORT=${TOMACS_SLURM_SLURMD_PORT:-16818}
CONF=$DIR/slurm.conf
SOCK=$DIR/munge/munge.socket

die() { echo "slurm_local.sh: $*" >&2; exit 1; }

alive() { # pid file -> 0 if its process runs
    [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

cmd_install() {
    if command -v sbatch >/dev/null && command -v slurmctld >/dev/null && command -v munged >/dev/null; then
        echo "slurm and munge already installed ($(slurmctld -V))"
        return
    fi
    [[ $(id -u) -eq 0 ]] || die "installing needs root: sudo $0 install"
    export DEBIAN_FRONTEND=noninteractive
    local log
    log=$(mktemp)
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge; } >"$log" 2>&1; then
        cat "$log" >&2
        die "apt-get could not install slurm-wlm and munge"
    fi
    rm -f "$log"
    echo "installed $(slurmctld -V) and munge"
}

write_conf() {
    local spec cpus mem
    spec=$(slurmd -C | head -1)
    cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$spec")
    mem=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$spec")
    [[ -n $cpus && -n $mem ]] || die "could not read CPUs/RealMemory from 'slurmd -C': $spec"
    cat >"$CONF" <<EOF
# Written by tomacs scripts/slurm_local.sh: one node on loopback, partition debug.
ClusterName=tomacs-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=10
MinJobAge=300
Waittime=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

cmd_start() {
    [[ $(id -u) -eq 0 ]] || die "the daemons run as root here: sudo $0 start"
    command -v slurmctld >/dev/null || die "slurm is not installed: $0 install"
    if cmd_status >/dev/null; then
        echo "already running ($CONF)"
        return
    fi
    cmd_stop >/dev/null 2>&1 || true
    mkdir -p "$DIR"/{state,spool,log,munge}
    chmod 700 "$DIR/munge"
    [[ -s $DIR/munge/munge.key ]] || { head -c 1024 /dev/urandom >"$DIR/munge/munge.key"; chmod 400 "$DIR/munge/munge.key"; }
    write_conf
    munged --force --socket="$SOCK" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munged.pid" \
        --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
    export SLURM_CONF=$CONF
    slurmctld -c   # -c: forget the jobs of an earlier run (they would hold the node until their time limit)
    slurmd -N localhost
    local deadline=$((SECONDS + 60))
    until sinfo -h -o %T -n localhost 2>/dev/null | grep -qx idle; do
        if ((SECONDS > deadline)); then
            tail -n 5 "$DIR"/log/*.log >&2
            die "node not idle after 60 s (logs in $DIR/log)"
        fi
        sleep 0.5
    done
    echo "running: partition debug on localhost (127.0.0.1:$CTLD_PORT); export SLURM_CONF=$CONF"
}

cmd_status() {
    if alive "$DIR/munged.pid" && alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid"; then
        echo running
        return 0
    fi
    echo stopped
    return 1
}

cmd_stop() {
    # Cancel this cluster's jobs first and let them end while the daemons still run: a job step
    # (srun) whose daemons vanish waits for them forever. Then SIGTERM to all three at once (each
    # takes ~2 s to exit), SIGKILL after 10 s.
    local f pid pids=() jobs
    if alive "$DIR/slurmctld.pid"; then
        export SLURM_CONF=$CONF
        jobs=$(squeue -h -o %A 2>/dev/null || true)
        if [[ -n $jobs ]]; then
            # shellcheck disable=SC2086
            scancel $jobs 2>/dev/null || true
            for _ in $(seq 150); do [[ -z $(squeue -h -o %A 2>/dev/null) ]] && break; sleep 0.1; done
        fi
    fi
    for f in slurmd slurmctld munged; do
        [[ -s $DIR/$f.pid ]] || continue
        pid=$(cat "$DIR/$f.pid")
        kill -0 "$pid" 2>/dev/null && kill "$pid" && pids+=("$pid")
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    done
    rm -f "$DIR"/{slurmd,slurmctld,munged}.pid
    echo stopped
}

case ${1:-} in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    *) die "usage: $0 install|start|stop|status|env" ;;
esac
