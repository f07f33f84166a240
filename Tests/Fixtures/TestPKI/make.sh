#!/bin/sh
# Makes the fixed certificates of Tests/Support/TestPKI (see README.md here): the unit targets start no process,
# so they read these instead of running openssl. Valid for 100 years (36500 days). Run from this folder.
set -eu
days=36500
passType=pass.com.example.test
orderType=order.com.example.test
team=ABCDE12345
password='correct horse'
rm -f ./*.pem ./*.key ./*.p12 ./*.der ./*.srl
openssl req -x509 -newkey rsa:2048 -nodes -keyout root.key -out root.pem -days $days \
  -subj "/CN=passforge Test Root/O=passforge tests" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
openssl req -newkey rsa:2048 -nodes -keyout wwdr.key -out wwdr.csr -subj "/CN=passforge Test WWDR/OU=G4/O=passforge tests"
printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' > ca.ext
openssl x509 -req -in wwdr.csr -CA root.pem -CAkey root.key -CAcreateserial -out wwdr.pem -days $days -extfile ca.ext
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' > leaf.ext
for type in $passType $orderType; do
  base="$type-$team-false"
  openssl req -newkey rsa:2048 -nodes -keyout "$base.key" -out "$base.csr" \
    -subj "/UID=$type/CN=Pass Type ID: $type/OU=$team/O=passforge tests/C=US"
  openssl x509 -req -in "$base.csr" -CA wwdr.pem -CAkey wwdr.key -CAcreateserial -out "$base.pem" \
    -days $days -extfile leaf.ext
  openssl pkcs8 -topk8 -in "$base.key" -out "$base.enc.key" -passout "pass:$password" -v2 aes-256-cbc
  openssl pkcs12 -export -in "$base.pem" -inkey "$base.key" -certfile wwdr.pem -out "$base.p12" \
    -passout "pass:$password"
  openssl x509 -in "$base.pem" -outform DER -out "$base.der"
  rm "$base.csr"
done
# The APNs mock's TLS server certificate, signed by the root.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout apns-server.key -out apns-server.csr \
  -subj "/CN=localhost/O=passforge tests"
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > apns-server.ext
openssl x509 -req -in apns-server.csr -CA root.pem -CAkey root.key -CAcreateserial -out apns-server.pem \
  -days $days -extfile apns-server.ext
# A client certificate shaped like the pass leaf, from an unrelated root: the mock must refuse it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout foreign-root.key \
  -out foreign-root.pem -days $days -subj "/CN=Some Other Root/O=elsewhere" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout foreign-client.key \
  -out foreign-client.csr -subj "/UID=$passType/CN=Pass Type ID: $passType/OU=$team/O=passforge tests/C=US"
openssl x509 -req -in foreign-client.csr -CA foreign-root.pem -CAkey foreign-root.key -CAcreateserial \
  -out foreign-client.pem -days $days -extfile leaf.ext
rm -f ./*.csr ./*.ext
