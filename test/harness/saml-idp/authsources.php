<?php
// Users of the test identity provider: exampleauth:UserPass with the users (and their
// attributes) the harness was started with.
$harness = json_decode(file_get_contents(__DIR__ . '/harness.json'), true);

$userpass = ['exampleauth:UserPass'];
foreach ($harness['users'] as $user) {
    $userpass[$user['username'] . ':' . $user['password']] = $user['attributes'];
}

$config = [
    'admin' => ['core:AdminPassword'],
    'example-userpass' => $userpass,
];
