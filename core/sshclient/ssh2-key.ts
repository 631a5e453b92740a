// ssh2 reads OpenSSH, PKCS#1 and SEC1 private keys but not PKCS#8 (Node's only Ed25519 export),
// so every private key handed to ssh2 goes through here as an openssh-key-v1 PEM.
import { createPrivateKey, type KeyObject } from "node:crypto";
import { encodeOpenSshPrivateKey } from "../certs/ssh-keys.ts";
import { BadParameterError } from "../errors.ts";

const OPENSSH_PEM = /^-----BEGIN OPENSSH PRIVATE KEY-----/;

/** A private key (KeyObject, or PEM in OpenSSH, PKCS#8, PKCS#1 or SEC1 form) -> a PEM ssh2 can parse. */
export function ssh2PrivateKey(privateKey: KeyObject | string): string {
  if (typeof privateKey === "string") {
    const text = privateKey.trim();
    if (OPENSSH_PEM.test(text)) return `${text}\n`;
    let key: KeyObject;
    try {
      key = createPrivateKey(text);
    } catch (err) {
      throw new BadParameterError("privateKey is not a readable private key PEM", { cause: err });
    }
    return encodeOpenSshPrivateKey(key);
  }
  if (privateKey.type !== "private") throw new BadParameterError("privateKey must be a private key");
  return encodeOpenSshPrivateKey(privateKey);
}
