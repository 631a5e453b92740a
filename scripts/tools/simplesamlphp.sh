#!/usr/bin/env bash
# Installs SimpleSAMLphp and the PHP command line from Debian, once, and prints the folder
# SimpleSAMLphp serves (its www/) on stdout. test/harness/saml-idp/ runs it with `php -S` and a
# configuration folder of its own as the SAML identity provider of test/sso-saml.test.ts; the
# system web server the package pulls in is never started or configured.
set -euo pipefail

www=/usr/share/simplesamlphp/www
packages=(simplesamlphp php-cli php-xml php-mbstring)

if [ ! -e "$www/saml2/idp/SSOService.php" ] || ! command -v php >/dev/null 2>&1 ||
  ! php -m 2>/dev/null | grep -qx dom || ! php -m 2>/dev/null | grep -qx mbstring; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "simplesamlphp: missing; install as root: apt-get install --no-install-recommends ${packages[*]}" >&2
    exit 1
  fi
  echo "simplesamlphp: installing ${packages[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Serialised with other apt runs of this repository's scripts.
  (
    flock 9
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  ) 9>/var/lock/svc-platform-apt.lock
fi
version=$(dpkg-query -W -f '${Version}' simplesamlphp 2>/dev/null || echo unknown)
echo "simplesamlphp: $version ($www)" >&2
echo "$www"
