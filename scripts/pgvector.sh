#!/usr/bin/env bash
# Build and install the pgvector extension into the machine's PostgreSQL, so the
# vectorstore battery's migration can `CREATE EXTENSION vector`.
#
# Debian bookworm ships no postgresql-NN-pgvector package, so this builds pgvector from
# Debian's own *source* package (`pgvector`, in trixie's main archive; PostgreSQL
# licence) against bookworm's postgresql-server-dev-NN. The source is fetched with apt
# from a private, source-only apt list (nothing is added to /etc/apt), so the packages
# the machine installs keep coming from bookworm only; apt checks the tarball against the
# signed Sources index.
#
# Idempotent: does nothing when the extension is already installed. Needs root (or sudo)
# for apt-get and `make install`. Without network access to the Debian archive it fails;
# the battery still works then (the migration falls back to a double precision[] column
# searched exactly in SQL).
set -euo pipefail

PGVECTOR_SUITE="${PGVECTOR_SUITE:-trixie}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    as_root=(sudo)
fi

major="$(ls /usr/lib/postgresql | sort -n | tail -1)"
pg_config="/usr/lib/postgresql/${major}/bin/pg_config"
if [ -f "/usr/share/postgresql/${major}/extension/vector.control" ]; then
    exit 0
fi

"${as_root[@]}" apt-get install -y --no-install-recommends \
    "postgresql-server-dev-${major}" build-essential >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt drops to the _apt user for downloads
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
cat >"$work/sources.list" <<LIST
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian ${PGVECTOR_SUITE} main
LIST
apt_private=(
    -o "Dir::Etc::SourceList=$work/sources.list"
    -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache"
)
(
    cd "$work"
    apt-get "${apt_private[@]}" update >/dev/null
    apt-get "${apt_private[@]}" source --download-only pgvector >/dev/null 2>&1
    tar xzf pgvector_*.orig.tar.gz
    cd pgvector-*/
    # OPTFLAGS="" builds for any x86-64 (the default adds -march=native).
    make -j"$(nproc)" PG_CONFIG="$pg_config" OPTFLAGS="" >/dev/null
    "${as_root[@]}" make install PG_CONFIG="$pg_config" >/dev/null
)
echo "pgvector installed into PostgreSQL ${major}"
