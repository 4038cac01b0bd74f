#!/usr/bin/env bash
# Makes a fresh test CA and two server certificates in directory $1:
#   ca.pem                       the CA the tests trust
#   server.pem / server.key      SAN DNS:localhost, IP:127.0.0.1, IP:::1 (signed by the CA)
#   wronghost.pem / wronghost.key SAN DNS:wrong.example (signed by the CA)
set -euo pipefail
dir=$1
cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout ca.key -out ca.pem -subj "/CN=CableReactive Test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
issue() {
    local name=$1 san=$2
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$name.key" -out "$name.csr" -subj "/CN=$name" 2>/dev/null
    printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' \
        "$san" > "$name.ext"
    openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -out "$name.pem" -extfile "$name.ext" 2>/dev/null
}
issue server "DNS:localhost,IP:127.0.0.1,IP:::1"
issue wronghost "DNS:wrong.example"
