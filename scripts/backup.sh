#!/usr/bin/env bash
# Backups of the bank's PostgreSQL with pgBackRest: continuous WAL archiving, full and
# incremental base backups, and restore to a point in time into a fresh data directory.
# docs/operations.md ("Backups and restore") says when to run each command and how to
# restore; test/chaos/restore-drill.test.ts runs them all against a cluster of its own.
#
# Run it as the user that owns the cluster (postgres): pgBackRest reads the data directory
# and PostgreSQL's archive_command, which runs as that user, writes to the same repository.
#
#   scripts/backup.sh configure          write the pgBackRest configuration ($BACKUP_CONFIG)
#   scripts/backup.sh postgres-settings  print the postgresql.conf lines that turn archiving on
#   scripts/backup.sh init               create the stanza and check that WAL reaches the repository
#   scripts/backup.sh full|diff|incr     take a base backup of that type
#   scripts/backup.sh check              switch to a new WAL segment, wait until it is archived
#   scripts/backup.sh info [--json]      the backups and the WAL range in the repository
#   scripts/backup.sh expire             drop what the retention no longer keeps
#   scripts/backup.sh restore --to DIR [--time TS | --name POINT | --lsn LSN] [--set LABEL]
#                                        [--archive-off] [--delta]
#       restore into DIR (new or empty) and recover to the target, then promote; without a
#       target, to the end of the archived WAL. --time takes PostgreSQL's timestamp format
#       with its zone ('2026-11-27 14:32:05.123+00'); pgBackRest picks the newest backup
#       that ended before it unless --set names one. --archive-off keeps the restored cluster
#       from archiving into the repository (for drills and inspection copies). --delta
#       restores over the data directory of a stopped cluster (one pg_createcluster made)
#       instead of an empty one.
#
# Settings (environment; configure writes them into the file, the other commands read the file):
#   BACKUP_CONFIG           the configuration file (/etc/pgbackrest.conf: Debian's package makes
#                           it, owned by postgres)
#   BACKUP_STANZA           the stanza's name (bank)
#   BACKUP_PGDATA           the cluster's data directory (required by configure)
#   BACKUP_PGPORT           its port (5432)
#   BACKUP_PGSOCKET         its Unix socket directory (/var/run/postgresql)
#   BACKUP_PGUSER           the database user pgBackRest connects as (postgres)
#   BACKUP_REPO_PATH        the repository: a local directory (/var/lib/pgbackrest), or the
#                           path inside the bucket when BACKUP_S3_BUCKET is set
#   BACKUP_S3_BUCKET, BACKUP_S3_ENDPOINT, BACKUP_S3_REGION, BACKUP_S3_KEY, BACKUP_S3_KEY_SECRET
#                           object storage (S3 or compatible) instead of a local directory
#   BACKUP_CIPHER_PASS      encrypt the repository (aes-256-cbc) with this passphrase
#   BACKUP_RETENTION_FULL   full backups kept (4: four weeks with a weekly full)
#   BACKUP_ARCHIVE_TIMEOUT  PostgreSQL's archive_timeout, seconds (60): the most WAL time
#                           that can be lost with the primary's disk
#   BACKUP_LOG_PATH         pgBackRest's log directory (/var/log/pgbackrest)
#   BACKUP_LOCK_PATH        pgBackRest's lock directory (/tmp/pgbackrest)
#   BACKUP_PROCESS_MAX      parallel processes for backup and restore (2)
set -euo pipefail

config=${BACKUP_CONFIG:-/etc/pgbackrest.conf}
stanza=${BACKUP_STANZA:-bank}

die() {
  echo "backup.sh: $*" >&2
  exit 2
}

command -v pgbackrest >/dev/null 2>&1 ||
  die "pgbackrest is not installed (Debian: apt-get install pgbackrest)"

pgbr() {
  [ -f "$config" ] || die "no configuration at $config: run 'scripts/backup.sh configure' first"
  pgbackrest --config="$config" --stanza="$stanza" "$@"
}

repo_settings() {
  echo "repo1-path=${BACKUP_REPO_PATH:-/var/lib/pgbackrest}"
  if [ -n "${BACKUP_S3_BUCKET:-}" ]; then
    echo "repo1-type=s3"
    echo "repo1-s3-bucket=$BACKUP_S3_BUCKET"
    echo "repo1-s3-endpoint=${BACKUP_S3_ENDPOINT:?BACKUP_S3_ENDPOINT is required with a bucket}"
    echo "repo1-s3-region=${BACKUP_S3_REGION:?BACKUP_S3_REGION is required with a bucket}"
    echo "repo1-s3-key=${BACKUP_S3_KEY:?BACKUP_S3_KEY is required with a bucket}"
    echo "repo1-s3-key-secret=${BACKUP_S3_KEY_SECRET:?BACKUP_S3_KEY_SECRET is required with a bucket}"
  fi
  if [ -n "${BACKUP_CIPHER_PASS:-}" ]; then
    echo "repo1-cipher-type=aes-256-cbc"
    echo "repo1-cipher-pass=$BACKUP_CIPHER_PASS"
  fi
  # Counted in full backups: the differential and incremental ones, and the WAL, that
  # depend on an expired full backup go with it.
  echo "repo1-retention-full=${BACKUP_RETENTION_FULL:-4}"
  echo "repo1-retention-full-type=count"
}

cmd_configure() {
  local pgdata=${BACKUP_PGDATA:?BACKUP_PGDATA (the data directory) is required}
  local log_path=${BACKUP_LOG_PATH:-/var/log/pgbackrest}
  mkdir -p "$(dirname "$config")" "$log_path"
  # The file may hold object-storage keys and the cipher passphrase: its owner's alone. It
  # is written in place: Debian's /etc/pgbackrest.conf belongs to postgres, /etc does not.
  # Made whole before the file is touched, so that a missing setting leaves it as it was.
  local body
  body=$(
    echo "[global]"
    repo_settings
    # A backup starts at once with a fast checkpoint, not at the next scheduled one.
    echo "start-fast=y"
    echo "compress-type=zst"
    echo "process-max=${BACKUP_PROCESS_MAX:-2}"
    echo "log-path=$log_path"
    echo "lock-path=${BACKUP_LOCK_PATH:-/tmp/pgbackrest}"
    echo "log-level-console=warn"
    echo "log-level-file=info"
    echo
    echo "[$stanza]"
    echo "pg1-path=$pgdata"
    echo "pg1-port=${BACKUP_PGPORT:-5432}"
    echo "pg1-socket-path=${BACKUP_PGSOCKET:-/var/run/postgresql}"
    echo "pg1-user=${BACKUP_PGUSER:-postgres}"
  )
  umask 077
  printf '%s\n' "$body" >"$config"
  chmod 0600 "$config"
  echo "wrote $config (stanza $stanza)"
}

cmd_postgres_settings() {
  # wal_level replica is the default; archive_mode needs a restart of the server.
  echo "wal_level = replica"
  echo "archive_mode = on"
  echo "archive_command = 'pgbackrest --config=$config --stanza=$stanza archive-push %p'"
  echo "archive_timeout = ${BACKUP_ARCHIVE_TIMEOUT:-60}"
}

cmd_restore() {
  local to='' target_type='' target='' set='' archive_off='' delta=''
  while [ $# -gt 0 ]; do
    case "$1" in
      --to) to=$2; shift 2 ;;
      --time | --name | --lsn) target_type=${1#--}; target=$2; shift 2 ;;
      --set) set=$2; shift 2 ;;
      --archive-off) archive_off=1; shift ;;
      --delta) delta=1; shift ;;
      *) die "restore: unknown option $1" ;;
    esac
  done
  [ -n "$to" ] || die "restore: --to DIR is required"
  if [ -z "$delta" ] && [ -d "$to" ] && [ -n "$(ls -A "$to")" ]; then
    die "restore: $to is not empty; restore into a new or empty directory (or give --delta)"
  fi
  mkdir -p "$to"
  chmod 0700 "$to"
  local args=(--pg1-path="$to")
  if [ -n "$target_type" ]; then
    # Recovery stops at the target and the restored cluster is promoted, a new timeline.
    args+=(--type="$target_type" --target="$target" --target-action=promote)
  fi
  [ -z "$set" ] || args+=(--set="$set")
  [ -z "$archive_off" ] || args+=(--archive-mode=off)
  [ -z "$delta" ] || args+=(--delta)
  pgbr "${args[@]}" restore
  echo "restored into $to; start PostgreSQL on it to replay the WAL up to the target"
}

command=${1:-}
[ $# -eq 0 ] || shift
case "$command" in
  configure) cmd_configure ;;
  postgres-settings) cmd_postgres_settings ;;
  init)
    pgbr stanza-create
    pgbr check
    ;;
  full | diff | incr) pgbr --type="$command" backup ;;
  check) pgbr check ;;
  info)
    if [ "${1:-}" = --json ]; then pgbr --output=json info; else pgbr info; fi
    ;;
  expire) pgbr expire ;;
  restore) cmd_restore "$@" ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    [ -z "$command" ] || [ "$command" = help ] || exit 2
    ;;
esac
