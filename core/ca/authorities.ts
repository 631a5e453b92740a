// The cluster's certificate authorities, loaded from a CaKeyStore or created there exactly once.
// Only auth holds this object (it carries private keys); everyone else gets publicMaterial().
import { createPublicKey, type KeyObject } from "node:crypto";
import { SshCertSigner } from "../certs/ssh-cert.ts";
import { formatSshPublicKey, generateSshKeyPair } from "../certs/ssh-keys.ts";
import {
  createRootCa,
  generateEcdsaP256,
  parseCertificatePem,
  parseSpiffeId,
  pemToDers,
  privateKeyFromPem,
  privateKeyToPem,
  type X509Issuer,
} from "../certs/x509.ts";
import type { Clock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import type { JsonObject, JsonValue } from "../json.ts";
import { generateJwtKey, type JwtKey, jwks, jwtKeyFrom, publicJwk, signJwt } from "./jwt.ts";
import type { CaKeyStore } from "./key-store.ts";

export const CA_NAMES = {
  sshUser: "ssh-user-ca",
  sshHost: "ssh-host-ca",
  x509Host: "x509-host-ca",
  spiffe: "spiffe-ca",
  app: "app-ca",
} as const;

export const JWT_SVID_TTL_SECONDS = 300;
export const APP_JWT_TTL_SECONDS = 300;
export const SPIFFE_REFRESH_HINT_SECONDS = 300;

/** What one store entry holds (JSON). Private keys are PKCS8 PEM. */
interface CaRecord {
  version: 1;
  name: string;
  createdAt: string;
  sshKeyPem?: string;
  x509?: { keyPem: string; certPem: string };
  jwtKeyPems?: string[];
}

export interface CertificateAuthoritiesOptions {
  clusterName: string;
  /** SPIFFE trust domain, e.g. the cluster name */
  trustDomain: string;
  clock: Clock;
}

export interface CaPublicMaterial {
  /** OpenSSH public key line for TrustedUserCAKeys */
  sshUserCa: string;
  /** OpenSSH public key line for `@cert-authority` in known_hosts */
  sshHostCa: string;
  hostCaPem: string;
  spiffeCaPem: string;
  spiffeJwks: { keys: JsonObject[] };
  appJwks: { keys: JsonObject[] };
}

function decode(name: string, raw: Uint8Array): CaRecord {
  let rec: unknown;
  try {
    rec = JSON.parse(Buffer.from(raw).toString("utf8"));
  } catch (err) {
    throw new BadParameterError(`stored CA ${name} is not valid JSON`, { cause: err });
  }
  if (typeof rec !== "object" || rec === null || (rec as { version?: unknown }).version !== 1) {
    throw new BadParameterError(`stored CA ${name} has an unknown format`);
  }
  return rec as CaRecord;
}

async function loadOrCreateRecord(
  store: CaKeyStore,
  name: string,
  make: () => Promise<CaRecord>,
): Promise<CaRecord> {
  const existing = await store.get(name);
  if (existing) return decode(name, existing);
  const fresh = await make();
  const outcome = await store.createOnce(name, Buffer.from(JSON.stringify(fresh)));
  if (outcome === "created") return fresh;
  // Another process created it first: use theirs, never ours.
  const winner = await store.get(name);
  if (!winner) throw new BadParameterError(`CA ${name} exists but cannot be read`);
  return decode(name, winner);
}

function need<T>(v: T | undefined, name: string, field: string): T {
  if (v === undefined) throw new BadParameterError(`stored CA ${name} lacks ${field}`);
  return v;
}

function issuerOf(rec: CaRecord): X509Issuer {
  const x = need(rec.x509, rec.name, "x509");
  parseCertificatePem(x.certPem);
  return { certPem: x.certPem, privateKey: privateKeyFromPem(x.keyPem) };
}

export class CertificateAuthorities {
  readonly clusterName: string;
  readonly trustDomain: string;
  readonly sshUserSigner: SshCertSigner;
  readonly sshHostSigner: SshCertSigner;
  readonly hostCa: X509Issuer;
  readonly spiffeCa: X509Issuer;
  /** first key signs; all are published */
  readonly spiffeJwtKeys: readonly JwtKey[];
  readonly appJwtKeys: readonly JwtKey[];
  readonly #clock: Clock;
  readonly #sshUserLine: string;
  readonly #sshHostLine: string;

  private constructor(
    o: CertificateAuthoritiesOptions,
    parts: {
      sshUser: KeyObject;
      sshHost: KeyObject;
      hostCa: X509Issuer;
      spiffeCa: X509Issuer;
      spiffeJwt: JwtKey[];
      appJwt: JwtKey[];
    },
  ) {
    this.clusterName = o.clusterName;
    this.trustDomain = o.trustDomain;
    this.#clock = o.clock;
    this.sshUserSigner = new SshCertSigner(parts.sshUser);
    this.sshHostSigner = new SshCertSigner(parts.sshHost);
    this.#sshUserLine = formatSshPublicKey(
      createPublicKey(parts.sshUser),
      `${o.clusterName} user CA`.replace(/\s+/g, "_"),
    );
    this.#sshHostLine = formatSshPublicKey(
      createPublicKey(parts.sshHost),
      `${o.clusterName} host CA`.replace(/\s+/g, "_"),
    );
    this.hostCa = parts.hostCa;
    this.spiffeCa = parts.spiffeCa;
    this.spiffeJwtKeys = parts.spiffeJwt;
    this.appJwtKeys = parts.appJwt;
  }

  /** Loads every CA from `store`, creating the missing ones once (never overwriting). */
  static async loadOrCreate(
    store: CaKeyStore,
    o: CertificateAuthoritiesOptions,
  ): Promise<CertificateAuthorities> {
    parseSpiffeId(`spiffe://${o.trustDomain}/x`);
    const createdAt = o.clock.now().toISOString();
    const sshRecord = (name: string) => async (): Promise<CaRecord> => ({
      version: 1,
      name,
      createdAt,
      sshKeyPem: privateKeyToPem(generateSshKeyPair("ed25519").privateKey),
    });
    const x509Record = async (name: string, commonName: string, withJwt: boolean): Promise<CaRecord> => {
      const { privateKey } = generateEcdsaP256();
      const certPem = await createRootCa({
        privateKey,
        commonName,
        organization: o.clusterName,
        clock: o.clock,
      });
      return {
        version: 1,
        name,
        createdAt,
        x509: { keyPem: privateKeyToPem(privateKey), certPem },
        ...(withJwt ? { jwtKeyPems: [privateKeyToPem((await generateJwtKey()).privateKey)] } : {}),
      };
    };
    const sshUser = await loadOrCreateRecord(store, CA_NAMES.sshUser, sshRecord(CA_NAMES.sshUser));
    const sshHost = await loadOrCreateRecord(store, CA_NAMES.sshHost, sshRecord(CA_NAMES.sshHost));
    const host = await loadOrCreateRecord(store, CA_NAMES.x509Host, () =>
      x509Record(CA_NAMES.x509Host, `${o.clusterName} host CA`, false),
    );
    const spiffe = await loadOrCreateRecord(store, CA_NAMES.spiffe, () =>
      x509Record(CA_NAMES.spiffe, `${o.clusterName} SPIFFE CA`, true),
    );
    const app = await loadOrCreateRecord(store, CA_NAMES.app, async () => ({
      version: 1,
      name: CA_NAMES.app,
      createdAt,
      jwtKeyPems: [privateKeyToPem((await generateJwtKey()).privateKey)],
    }));
    const jwtKeys = async (rec: CaRecord): Promise<JwtKey[]> => {
      const pems = need(rec.jwtKeyPems, rec.name, "JWT keys");
      if (pems.length === 0) throw new BadParameterError(`stored CA ${rec.name} has no JWT keys`);
      return Promise.all(pems.map((p) => jwtKeyFrom(privateKeyFromPem(p))));
    };
    return new CertificateAuthorities(o, {
      sshUser: privateKeyFromPem(need(sshUser.sshKeyPem, sshUser.name, "ssh key")),
      sshHost: privateKeyFromPem(need(sshHost.sshKeyPem, sshHost.name, "ssh key")),
      hostCa: issuerOf(host),
      spiffeCa: issuerOf(spiffe),
      spiffeJwt: await jwtKeys(spiffe),
      appJwt: await jwtKeys(app),
    });
  }

  get sshUserCaPublicKey(): string {
    return this.#sshUserLine;
  }
  get sshHostCaPublicKey(): string {
    return this.#sshHostLine;
  }

  /** JWKS for JWT-SVIDs (served at /workload-identity/jwt-jwks.json). */
  spiffeJwks(): { keys: JsonObject[] } {
    return jwks(this.spiffeJwtKeys);
  }

  /** JWKS for app-access assertions (served at /workload-identity/app-jwt-jwks.json, `svcctl export --type app-jwt`). */
  appJwks(): { keys: JsonObject[] } {
    return jwks(this.appJwtKeys);
  }

  /** SPIFFE trust bundle (a JWKS with x509-svid and jwt-svid entries) for /v1/webapi/spiffe/bundle.json. */
  spiffeBundle(o: { sequence?: number; refreshHintSeconds?: number } = {}): JsonObject {
    const caDer = pemToDers(this.spiffeCa.certPem)[0] as Buffer;
    const caJwk = createPublicKey(this.spiffeCa.privateKey).export({ format: "jwk" });
    const x509Entry: JsonObject = {
      kty: String(caJwk.kty),
      crv: String(caJwk.crv),
      x: String(caJwk.x),
      y: String(caJwk.y),
      use: "x509-svid",
      x5c: [caDer.toString("base64")],
    };
    const keys: JsonValue[] = [x509Entry, ...this.spiffeJwtKeys.map((k) => publicJwk(k, "jwt-svid"))];
    return {
      keys,
      spiffe_sequence: o.sequence ?? 1,
      spiffe_refresh_hint: o.refreshHintSeconds ?? SPIFFE_REFRESH_HINT_SECONDS,
    };
  }

  /** A JWT-SVID: sub is the SPIFFE ID (in our trust domain), aud required, short exp. */
  async signJwtSvid(o: {
    spiffeId: string;
    audience: string | string[];
    ttlSeconds?: number;
    issuer?: string;
  }): Promise<string> {
    const id = parseSpiffeId(o.spiffeId);
    if (id.trustDomain !== this.trustDomain)
      throw new BadParameterError(`SPIFFE ID is not in trust domain ${this.trustDomain}`);
    const key = this.spiffeJwtKeys[0] as JwtKey;
    return signJwt(
      key,
      {},
      {
        subject: o.spiffeId,
        audience: o.audience,
        ttlSeconds: o.ttlSeconds ?? JWT_SVID_TTL_SECONDS,
        clock: this.#clock,
        ...(o.issuer ? { issuer: o.issuer } : {}),
      },
    );
  }

  /** An app-access assertion (the Svc-Jwt-Assertion header), signed by the App CA's key set. */
  async signAppJwt(o: {
    username: string;
    roles: string[];
    traits?: Record<string, string[]>;
    audience: string;
    ttlSeconds?: number;
  }): Promise<string> {
    const key = this.appJwtKeys[0] as JwtKey;
    return signJwt(
      key,
      { username: o.username, roles: o.roles, traits: o.traits ?? {} },
      {
        subject: o.username,
        audience: o.audience,
        issuer: this.clusterName,
        ttlSeconds: o.ttlSeconds ?? APP_JWT_TTL_SECONDS,
        clock: this.#clock,
      },
    );
  }

  /** Everything that may be shown to anyone (no private keys). */
  publicMaterial(): CaPublicMaterial {
    return {
      sshUserCa: this.sshUserCaPublicKey,
      sshHostCa: this.sshHostCaPublicKey,
      hostCaPem: this.hostCa.certPem,
      spiffeCaPem: this.spiffeCa.certPem,
      spiffeJwks: this.spiffeJwks(),
      appJwks: this.appJwks(),
    };
  }

  /** Keeps private keys out of logs and JSON dumps. */
  toJSON(): JsonObject {
    return { clusterName: this.clusterName, trustDomain: this.trustDomain };
  }
}
