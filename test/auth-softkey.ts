// A software WebAuthn authenticator for tests (P-256, "none" attestation): it produces real
// attestation and assertion objects that @simplewebauthn/server verifies, so the ceremony is
// exercised end to end without a browser.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";

const b64url = (b: Uint8Array): string => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string): Buffer => createHash("sha256").update(b).digest();

export class SoftKey {
  readonly credentialId = randomBytes(32);
  readonly #key: KeyObject;
  readonly #publicJwk: { x?: string; y?: string };
  counter = 0;

  constructor() {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.#key = pair.privateKey;
    this.#publicJwk = pair.publicKey.export({ format: "jwk" });
  }

  #authData(rpId: string, flags: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  /** RegistrationResponseJSON for PublicKeyCredentialCreationOptionsJSON. */
  register(optionsJson: string, origin: string): string {
    const options = JSON.parse(optionsJson) as { challenge: string; rp: { id: string } };
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(this.#publicJwk.x ?? "", "base64url")],
      [-3, Buffer.from(this.#publicJwk.y ?? "", "base64url")],
    ]);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([
      Buffer.alloc(16),
      idLen,
      this.credentialId,
      Buffer.from(isoCBOR.encode(cose)),
    ]);
    const authData = this.#authData(options.rp.id, 0x01 | 0x04 | 0x40, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ["fmt", "none"],
        ["attStmt", new Map<string, string>()],
        ["authData", authData],
      ]),
    );
    const clientData = JSON.stringify({
      type: "webauthn.create",
      challenge: options.challenge,
      origin,
      crossOrigin: false,
    });
    return JSON.stringify({
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(Buffer.from(clientData)),
        attestationObject: b64url(attestationObject),
        transports: ["usb"],
      },
    });
  }

  /** AuthenticationResponseJSON for PublicKeyCredentialRequestOptionsJSON. */
  assert(optionsJson: string, origin: string, opts: { tamper?: boolean; rpId?: string } = {}): string {
    const options = JSON.parse(optionsJson) as { challenge: string; rpId: string };
    this.counter++;
    const authData = this.#authData(opts.rpId ?? options.rpId, 0x01 | 0x04);
    const clientData = Buffer.from(
      JSON.stringify({ type: "webauthn.get", challenge: options.challenge, origin }),
    );
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientData)]), this.#key);
    if (opts.tamper) signature[signature.length - 1] = (signature[signature.length - 1] ?? 0) ^ 0xff;
    return JSON.stringify({
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
      },
    });
  }
}
