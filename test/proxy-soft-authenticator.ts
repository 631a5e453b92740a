// A software WebAuthn authenticator for tests: P-256 key, `none` attestation, real CBOR
// attestation objects and real ECDSA assertions, plus knobs to misbehave (tamper, wrong origin,
// stale counter) so the server's refusals can be proven.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";

const b64u = (b: Uint8Array): string => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string): Buffer => createHash("sha256").update(b).digest();

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface AssertOptions {
  /** origin written into clientDataJSON (default: the authenticator's origin) */
  origin?: string;
  /** use this signature counter instead of the next one */
  counter?: number;
  /** flip a bit of the signature after signing */
  tamperSignature?: boolean;
}

export class SoftAuthenticator {
  readonly origin: string;
  readonly credentialId: Buffer = randomBytes(16);
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  counter = 0;

  constructor(origin: string) {
    this.origin = origin;
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.#privateKey = privateKey;
    this.#publicKey = publicKey;
  }

  #cosePublicKey(): Uint8Array {
    const jwk = this.#publicKey.export({ format: "jwk" });
    if (!jwk.x || !jwk.y) throw new Error("P-256 key without coordinates");
    const cose = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x, "base64url")],
      [-3, Buffer.from(jwk.y, "base64url")],
    ]);
    return isoCBOR.encode(cose);
  }

  /** navigator.credentials.create() */
  register(options: PublicKeyCredentialCreationOptionsJSON): RegistrationResponseJSON {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const clientData = Buffer.from(
      JSON.stringify({
        type: "webauthn.create",
        challenge: options.challenge,
        origin: this.origin,
        crossOrigin: false,
      }),
    );
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([FLAG_UP | FLAG_UV | FLAG_AT]),
      u32(this.counter),
      Buffer.alloc(16), // AAGUID: none
      idLen,
      this.credentialId,
      this.#cosePublicKey(),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ["fmt", "none"],
        ["attStmt", new Map<string, string>()],
        ["authData", new Uint8Array(authData)],
      ]),
    );
    return {
      id: b64u(this.credentialId),
      rawId: b64u(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64u(clientData),
        attestationObject: b64u(attestationObject),
        transports: ["usb"],
      },
      clientExtensionResults: {},
    };
  }

  /** navigator.credentials.get() */
  assert(options: PublicKeyCredentialRequestOptionsJSON, o: AssertOptions = {}): AuthenticationResponseJSON {
    const rpId = options.rpId ?? new URL(this.origin).hostname;
    if (o.counter === undefined) this.counter += 1;
    const counter = o.counter ?? this.counter;
    const clientData = Buffer.from(
      JSON.stringify({
        type: "webauthn.get",
        challenge: options.challenge,
        origin: o.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
    const authData = Buffer.concat([sha256(rpId), Buffer.from([FLAG_UP | FLAG_UV]), u32(counter)]);
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientData)]), this.#privateKey);
    if (o.tamperSignature) signature[signature.length - 1] = (signature[signature.length - 1] ?? 0) ^ 0x01;
    return {
      id: b64u(this.credentialId),
      rawId: b64u(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64u(clientData),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
      },
      clientExtensionResults: {},
    };
  }
}
