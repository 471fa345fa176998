#!/usr/bin/env bash
# web-config.sh DIR: the credentials that daemonset.yaml's --metrics needs,
# made in DIR (new, or empty):
#   ca.crt, ca.key       a CA of your own, kept here to sign the next
#                        certificate (ca.key goes into no Secret);
#   tls.crt, tls.key     the metrics server's certificate, for the name
#                        "skbtrace" (Prometheus checks it against that name,
#                        serverName in the PodMonitor, since the pods listen
#                        on the nodes' addresses, which no certificate names);
#   password             the scrape password of user "skbtrace";
#   web-config.yml       skbtrace's --web.config.file (exporter-toolkit's
#                        format, as node_exporter's): TLS with tls.crt and
#                        tls.key, basic auth with the password's bcrypt hash;
#   web-config-secret.yaml  Secret skbtrace-web-config for the pods:
#                        web-config.yml, tls.crt, tls.key;
#   scrape-secret.yaml   Secret skbtrace-scrape for Prometheus: ca.crt,
#                        username, password.
# Then: kubectl apply -f DIR/web-config-secret.yaml -f DIR/scrape-secret.yaml
# Needs openssl, and htpasswd (Debian's apache2-utils) or Python's bcrypt.
set -euo pipefail
umask 077
if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
mkdir -p "$dir"
if [ -n "$(ls -A "$dir")" ]; then
	echo "$0: $dir is not empty: give a new directory" >&2
	exit 1
fi
cd "$dir"

# The CA (10 years) and the server's certificate (2 years), P-256 keys.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
	-subj "/CN=skbtrace metrics CA" -keyout ca.key -out ca.crt 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-subj "/CN=skbtrace" -keyout tls.key -out tls.csr 2>/dev/null
printf '%s\n' "subjectAltName=DNS:skbtrace" "extendedKeyUsage=serverAuth" \
	"basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" >tls.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 730 \
	-extfile tls.ext -out tls.crt 2>/dev/null
rm -f tls.csr tls.ext ca.srl

# The password, and its bcrypt hash (cost 10) for basic_auth_users.
password=$(openssl rand -hex 24)
printf '%s' "$password" >password
if command -v htpasswd >/dev/null; then
	hash=$(printf '%s' "$password" | htpasswd -niBC 10 skbtrace | cut -d: -f2-)
elif python3 -c 'import bcrypt' 2>/dev/null; then
	hash=$(printf '%s' "$password" | python3 -c 'import bcrypt, sys; print(bcrypt.hashpw(sys.stdin.buffer.read(), bcrypt.gensalt(10)).decode())')
else
	echo "$0: no htpasswd (apt-get install apache2-utils) nor Python's bcrypt to hash the password" >&2
	exit 1
fi

cat >web-config.yml <<EOF
# skbtrace --metrics :9464 --web.config.file web-config.yml: TLS with this
# directory's tls.crt and tls.key, and scrapes only as user skbtrace.
tls_server_config:
  cert_file: tls.crt
  key_file: tls.key
basic_auth_users:
  skbtrace: '$hash'
EOF

# Secrets, their files as stringData.
indent() { sed 's/^/    /' "$1"; }
{
	printf '%s\n' "apiVersion: v1" "kind: Secret" "metadata:" "  name: skbtrace-web-config" "  namespace: skbtrace" \
		"  labels:" "    app.kubernetes.io/name: skbtrace" "type: Opaque" "stringData:"
	for f in web-config.yml tls.crt tls.key; do
		printf '  %s: |\n' "$f"
		indent "$f"
	done
} >web-config-secret.yaml
{
	printf '%s\n' "apiVersion: v1" "kind: Secret" "metadata:" "  name: skbtrace-scrape" "  namespace: skbtrace" \
		"  labels:" "    app.kubernetes.io/name: skbtrace" "type: Opaque" "stringData:" "  ca.crt: |"
	indent ca.crt
	printf '%s\n' "  username: skbtrace" "  password: '$password'"
} >scrape-secret.yaml
echo "made in $dir: kubectl apply -f $dir/web-config-secret.yaml -f $dir/scrape-secret.yaml"
