<?php
// The service provider under test (the proxy): its entity id and ACS URL, the NameID taken from
// the user's uid attribute, and, when the harness has its certificate, signed AuthnRequests
// required.
$harness = json_decode(file_get_contents(__DIR__ . '/../harness.json'), true);

$sp = [
    'AssertionConsumerService' => [[
        'Binding' => 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
        'Location' => $harness['acsUrl'],
    ]],
    'NameIDFormat' => 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
    'simplesaml.nameidattribute' => 'uid',
    'simplesaml.attributes' => true,
];
if ($harness['spCertificate'] !== null) {
    $sp['validate.authnrequest'] = true;
    $sp['certData'] = $harness['spCertificate'];
}
$metadata[$harness['spEntityId']] = $sp;
