<?php
// The identity provider itself: signs assertions (RSA-SHA256) with the harness's key.
$harness = json_decode(file_get_contents(__DIR__ . '/../harness.json'), true);

$metadata['__DYNAMIC:1__'] = [
    'host' => '__DEFAULT__',
    'privatekey' => 'idp.key',
    'certificate' => 'idp.crt',
    'auth' => 'example-userpass',
    'signature.algorithm' => 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    'attributes.NameFormat' => 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
    'saml20.sign.assertion' => true,
    'saml20.sign.response' => $harness['signResponse'],
];
