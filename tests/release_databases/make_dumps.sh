#!/usr/bin/env bash
# Remake the dumps of databases made by previous releases (tests/test_schema.py loads them).
# Needs the git history (the tests do not): for each release, a worktree of it, then
# make_database.py run with its code on a new SQLite file and on a new PostgreSQL database of a
# throw-away cluster, then `sqlite3 .dump` and `pg_dump` (plain SQL) into this folder, each with a
# header saying how it was made, and the ids the tests look for in RELEASE.DIALECT.json.
# Run from the repository's top: tests/release_databases/make_dumps.sh [RELEASE ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
python=${PYTHON:-$repo/.venv/bin/python}
bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort | tail -1)")
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(1b4918f 3a0b7d8)

work=$(mktemp -d)
chown postgres: "$work"
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$bin/initdb" -D "$work/data" -U app --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
as_pg "$bin/pg_ctl" -D "$work/data" -l "$work/log" -w -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
trap 'as_pg "$bin/pg_ctl" -D "$work/data" -m immediate -w stop >/dev/null; for r in "${releases[@]}"; do git -C "$repo" worktree remove --force "$work/rel-$r" 2>/dev/null || true; done; rm -rf "$work"' EXIT

header() {  # release dialect tool
  cat <<HEAD
-- A checkout database made by the release at commit $1 ($2), with rows in it, for the upgrade
-- tests (tests/test_schema.py). Made by tests/release_databases/make_dumps.sh: that release's own
-- code (tests/release_databases/make_database.py, run in a worktree of commit $1 with its
-- package and test helpers) made the tables at its start-up and the rows through its pages,
-- webhook receiver and commands on its embedded sandbox; then $3 wrote this file.
-- Sessions expire in 2099 (one UPDATE, so that the tests can open them). Ids: $1.$2.json.
HEAD
}

for release in "${releases[@]}"; do
  tree="$work/rel-$release"
  git -C "$repo" worktree add --detach "$tree" "$release" >/dev/null 2>&1
  # SQLite
  db="$work/$release.sqlite3"
  (cd "$tree" && PYTHONPATH="$tree" "$python" "$here/make_database.py" "sqlite:///$db" 2>/dev/null) \
    > "$here/$release.sqlite.json"
  { header "$release" sqlite "sqlite3 .dump ($(sqlite3 --version | cut -d' ' -f1))"; sqlite3 "$db" .dump; } \
    > "$here/$release.sqlite.sql"
  # PostgreSQL
  name="rel_$release"
  as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U app "$name"
  (cd "$tree" && PYTHONPATH="$tree" "$python" "$here/make_database.py" \
     "postgresql+psycopg://app@127.0.0.1:$port/$name" 2>/dev/null) > "$here/$release.postgresql.json"
  { header "$release" postgresql "pg_dump --no-owner --no-privileges ($("$bin/pg_dump" --version))";
    "$bin/pg_dump" --no-owner --no-privileges -h 127.0.0.1 -p "$port" -U app "$name"; } \
    > "$here/$release.postgresql.sql"
  echo "made $release: $(ls "$here/$release".*)"
done
