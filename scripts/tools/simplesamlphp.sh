#!/usr/bin/env bash
# Installs SimpleSAMLphp and the PHP command line from Debian, once, and prints the folder
# SimpleSAMLphp serves (its www/) on stdout. test/harness/saml-idp/ runs it with `php -S` and a
# configuration folder of its own as the SAML identity provider of test/sso-saml.test.ts (openssl
# makes its signing keys); the system web server the package pulls in is never started or
# configured. Idempotent, and safe to run in parallel (flock).
set -euo pipefail

www=/usr/share/simplesamlphp/www
packages=(simplesamlphp php-cli php-xml php-mbstring openssl)

installed() {
  [ -e "$www/saml2/idp/SSOService.php" ] && command -v php >/dev/null 2>&1 &&
    command -v openssl >/dev/null 2>&1 && php -m 2>/dev/null | grep -qx dom &&
    php -m 2>/dev/null | grep -qx mbstring
}

if ! installed; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "simplesamlphp: missing; install as root: apt-get install --no-install-recommends ${packages[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  (
    flock 9
    # Another run may have installed it while this one waited for the lock.
    if installed; then exit 0; fi
    echo "simplesamlphp: installing ${packages[*]}" >&2
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  ) 9>/var/lock/svc-platform-simplesamlphp.lock
fi
version=$(dpkg-query -W -f '${Version}' simplesamlphp 2>/dev/null || echo unknown)
echo "simplesamlphp: $version ($www)" >&2
echo "$www"
