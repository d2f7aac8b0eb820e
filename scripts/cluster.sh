#!/bin/sh
# cluster.sh — a Redis Cluster of three primaries and three replicas on
# 127.0.0.1, every node with amq-redis.so loaded (docs/cluster.md).
#
# usage: scripts/cluster.sh start DIR [PORT]   six nodes on PORT .. PORT+5
#                                             (default 7100), one directory
#                                             each under DIR, then
#                                             `redis-cli --cluster create`
#        scripts/cluster.sh stop DIR          stop them by their PIDs
# env:   AMQ_REDIS_MODULE  the module (default build/modules/redis/amq-redis.so)
set -eu

usage() {
    echo "usage: scripts/cluster.sh start DIR [PORT] | stop DIR" >&2
    exit 2
}

[ $# -ge 2 ] || usage
CMD=$1
DIR=$2

case $CMD in
start)
    PORT=${3:-7100}
    MODULE=${AMQ_REDIS_MODULE:-build/modules/redis/amq-redis.so}
    [ -f "$MODULE" ] || {
        echo "cluster.sh: no module at $MODULE (make redis builds it)" >&2
        exit 2
    }
    case $MODULE in
    /*) ;;
    *) MODULE="$(pwd)/$MODULE" ;;
    esac
    mkdir -p "$DIR"
    addrs=""
    for i in 0 1 2 3 4 5; do
        p=$((PORT + i))
        d="$DIR/$p"
        mkdir -p "$d"
        redis-server --port "$p" --bind 127.0.0.1 --dir "$d" \
            --cluster-enabled yes --cluster-config-file nodes.conf \
            --cluster-node-timeout 2000 --save "" --appendonly no \
            --logfile server.log --pidfile "$(cd "$d" && pwd)/pid" \
            --daemonize yes --loadmodule "$MODULE"
        addrs="$addrs 127.0.0.1:$p"
    done
    for i in 0 1 2 3 4 5; do
        p=$((PORT + i))
        n=0
        until redis-cli -p "$p" ping >/dev/null 2>&1; do
            n=$((n + 1))
            [ $n -lt 100 ] || {
                echo "cluster.sh: the node on port $p did not start" \
                    "(see $DIR/$p/server.log)" >&2
                exit 1
            }
            sleep 0.1
        done
    done
    # shellcheck disable=SC2086
    redis-cli --cluster create $addrs --cluster-replicas 1 --cluster-yes \
        >"$DIR/create.log" 2>&1 || {
        echo "cluster.sh: redis-cli --cluster create failed" \
            "(see $DIR/create.log)" >&2
        exit 1
    }
    n=0
    until redis-cli -p "$PORT" cluster info | grep -q "cluster_state:ok"; do
        n=$((n + 1))
        [ $n -lt 300 ] || {
            echo "cluster.sh: the cluster did not reach state ok" >&2
            exit 1
        }
        sleep 0.1
    done
    echo "cluster of 3 primaries and 3 replicas on 127.0.0.1:$PORT-$((PORT + 5))"
    ;;
stop)
    for f in "$DIR"/*/pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        n=0
        while kill -0 "$pid" 2>/dev/null && [ $n -lt 100 ]; do
            n=$((n + 1))
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
    ;;
*) usage ;;
esac
