#!/bin/sh
# Starts Redis as Tessera's recipes run it (docker-compose.yml, deploy/k8s/redis.yaml; the
# integration tests run this same script): the users of users.acl, each with the SHA-256 of its
# password, the default user off; with TESSERA_REDIS_TLS_DIR, TLS only.
#   REDIS_<USER>_PASSWORD   for each USER of VAULT, GATEWAY, ADMIN, FIELDS and INBOUND: that user's password,
#                           at least 32 characters; or
#   REDIS_<USER>_PASSWORD_SHA256  its SHA-256 in hex (sha256sum), which is all Redis keeps:
#                           deploy/k8s and docker-compose.yml give Redis only these, so no service's
#                           password is in the Redis container
#   TESSERA_REDIS_RUN_DIR   a private, writable directory for the generated ACL (default /run/tessera-redis)
#   TESSERA_REDIS_TLS_DIR   tls.crt, tls.key and ca.crt of the server (npm run certs: .tessera/certs/redis);
#                           set: plaintext is off and TLS listens on TESSERA_REDIS_PORT (default 6379)
# Other arguments are passed to redis-server. Passwords never appear in a command line or log.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
run_dir=${TESSERA_REDIS_RUN_DIR:-/run/tessera-redis}

sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# Each user's password digest, into VAULT_DIGEST, GATEWAY_DIGEST, ADMIN_DIGEST, FIELDS_DIGEST and INBOUND_DIGEST.
for user in VAULT GATEWAY ADMIN FIELDS INBOUND; do
  eval "password=\${REDIS_${user}_PASSWORD:-}; digest=\${REDIS_${user}_PASSWORD_SHA256:-}"
  if [ -n "$password" ] && [ -n "$digest" ]; then
    echo "start.sh: set REDIS_${user}_PASSWORD or REDIS_${user}_PASSWORD_SHA256, not both" >&2
    exit 78
  elif [ -n "$digest" ]; then
    # Redis takes lower-case hex only.
    digest=$(printf '%s' "$digest" | tr 'A-F' 'a-f')
    case $digest in *[!0-9a-f]*) digest=invalid ;; esac
    if [ "${#digest}" -ne 64 ]; then
      echo "start.sh: REDIS_${user}_PASSWORD_SHA256 must be the 64 hex digits of sha256sum of the password" >&2
      exit 78
    fi
  elif [ "${#password}" -lt 32 ]; then
    echo "start.sh: REDIS_${user}_PASSWORD must be set to at least 32 characters (or REDIS_${user}_PASSWORD_SHA256 to its digest)" >&2
    exit 78
  else
    digest=$(sha "$password")
  fi
  eval "${user}_DIGEST=\$digest"
done
unset password digest

umask 077
mkdir -p "$run_dir"
# An emptyDir (Kubernetes) belongs to root: its mode cannot be changed, and need not be.
chmod 700 "$run_dir" 2>/dev/null || true
# Redis's ACL files have no comments: they are dropped. Only hex digests go into sed, so a
# password may contain any character.
sed -e '/^#/d' -e '/^[[:space:]]*$/d' \
  -e "s/^user tessera-vault on /user tessera-vault on #$VAULT_DIGEST /" \
  -e "s/^user tessera-gateway on /user tessera-gateway on #$GATEWAY_DIGEST /" \
  -e "s/^user tessera-admin on /user tessera-admin on #$ADMIN_DIGEST /" \
  -e "s/^user tessera-fields on /user tessera-fields on #$FIELDS_DIGEST /" \
  -e "s/^user tessera-inbound on /user tessera-inbound on #$INBOUND_DIGEST /" \
  "$here/users.acl" >"$run_dir/users.acl"

set -- --aclfile "$run_dir/users.acl" "$@"
if [ -n "${TESSERA_REDIS_TLS_DIR:-}" ]; then
  tls=$TESSERA_REDIS_TLS_DIR
  if [ "$(id -u)" = 0 ]; then
    # Docker: the bind-mounted key belongs to the host's user; Redis (uid 999) gets its own copy.
    mkdir -p "$run_dir/tls"
    cp "$tls/tls.crt" "$tls/tls.key" "$tls/ca.crt" "$run_dir/tls/"
    tls=$run_dir/tls
  fi
  # Clients authenticate with their ACL password; TLS protects it and the records in transit.
  set -- --port 0 --tls-port "${TESSERA_REDIS_PORT:-6379}" --tls-cert-file "$tls/tls.crt" --tls-key-file "$tls/tls.key" \
    --tls-ca-cert-file "$tls/ca.crt" --tls-auth-clients no "$@"
fi

if [ "$(id -u)" = 0 ] && command -v docker-entrypoint.sh >/dev/null 2>&1; then
  # The redis image started as root: its entrypoint fixes /data's owner and drops to the redis user.
  chown -R redis:redis "$run_dir"
  exec docker-entrypoint.sh redis-server "$@"
fi
exec redis-server "$@"
