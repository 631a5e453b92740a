// The keys behind each CA type, one CaKeyStore entry per key. Entries are created once and never
// overwritten: a rotation adds a new entry (e.g. "ssh-user-ca-g2") instead of replacing the old.
import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { SshCertSigner } from "../certs/ssh-cert.ts";
import { formatSshPublicKey, generateSshKeyPair, sshFingerprint } from "../certs/ssh-keys.ts";
import {
  createRootCa,
  generateEcdsaP256,
  parseCertificatePem,
  privateKeyFromPem,
  privateKeyToPem,
  type X509Issuer,
} from "../certs/x509.ts";
import type { Clock } from "../clock.ts";
import { BadParameterError } from "../errors.ts";
import { generateJwtKey, type JwtKey, jwtKeyFrom, publicJwk } from "./jwt.ts";
import type { CaKeyStore } from "./key-store.ts";
import type { CaType } from "./rotation.ts";

export const CA_NAMES = {
  sshUser: "ssh-user-ca",
  sshHost: "ssh-host-ca",
  x509Host: "x509-host-ca",
  spiffe: "spiffe-ca",
  app: "app-ca",
} as const;

/** The entry each CA type started with (the SPIFFE X.509 CA and the JWT-SVID keys share one). */
export const BASE_ENTRY: Record<CaType, string> = {
  user_ssh: CA_NAMES.sshUser,
  host_ssh: CA_NAMES.sshHost,
  host_x509: CA_NAMES.x509Host,
  spiffe: CA_NAMES.spiffe,
  jwt: CA_NAMES.spiffe,
  app: CA_NAMES.app,
};

/** Store entry of generation `n` (n ≥ 2) of a CA type's key. */
export function entryFor(type: CaType, generation: number): string {
  const prefix = type === "jwt" ? "jwt-svid-ca" : BASE_ENTRY[type];
  return `${prefix}-g${generation}`;
}

/** What one store entry holds (JSON). Private keys are PKCS8 PEM. */
export interface CaRecord {
  version: 1;
  name: string;
  createdAt: string;
  sshKeyPem?: string;
  x509?: { keyPem: string; certPem: string };
  jwtKeyPems?: string[];
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

export async function readRecord(store: CaKeyStore, name: string): Promise<CaRecord | undefined> {
  const raw = await store.get(name);
  return raw ? decode(name, raw) : undefined;
}

export async function loadOrCreateRecord(
  store: CaKeyStore,
  name: string,
  make: () => Promise<CaRecord>,
): Promise<CaRecord> {
  const existing = await readRecord(store, name);
  if (existing) return existing;
  const fresh = await make();
  const outcome = await store.createOnce(name, Buffer.from(JSON.stringify(fresh)));
  if (outcome === "created") return fresh;
  // Another process created it first: use theirs, never ours.
  const winner = await readRecord(store, name);
  if (!winner) throw new BadParameterError(`CA ${name} exists but cannot be read`);
  return winner;
}

function need<T>(v: T | undefined, name: string, field: string): T {
  if (v === undefined) throw new BadParameterError(`stored CA ${name} lacks ${field}`);
  return v;
}

interface KeyBase {
  entry: string;
  createdAt: string;
}
export interface SshKey extends KeyBase {
  kind: "ssh";
  privateKey: KeyObject;
  signer: SshCertSigner;
  /** OpenSSH public key line */
  line: string;
  fingerprint: string;
}
export interface X509Key extends KeyBase {
  kind: "x509";
  issuer: X509Issuer;
  fingerprint: string;
}
export interface JwtKeys extends KeyBase {
  kind: "jwt";
  /** the first signs */
  keys: JwtKey[];
}
export type CaKeyMaterial = SshKey | X509Key | JwtKeys;

export type KindOf<T extends CaType> = T extends "user_ssh" | "host_ssh"
  ? SshKey
  : T extends "host_x509" | "spiffe"
    ? X509Key
    : JwtKeys;

export function kindOf(type: CaType): CaKeyMaterial["kind"] {
  if (type === "user_ssh" || type === "host_ssh") return "ssh";
  if (type === "host_x509" || type === "spiffe") return "x509";
  return "jwt";
}

export function spkiFingerprint(key: KeyObject): string {
  return createHash("sha256")
    .update(createPublicKey(key).export({ format: "der", type: "spki" }))
    .digest("hex");
}

export interface KeySetNaming {
  clusterName: string;
  clock: Clock;
}

function sshComment(type: CaType, clusterName: string): string {
  return `${clusterName} ${type === "user_ssh" ? "user" : "host"} CA`.replace(/\s+/g, "_");
}

function x509CommonName(type: CaType, clusterName: string, generation: number): string {
  const base = `${clusterName} ${type === "spiffe" ? "SPIFFE" : "host"} CA`;
  // Distinct subjects per generation, so TLS stacks never pick the wrong issuer by name.
  return generation > 1 ? `${base} ${generation}` : base;
}

/** Reads the key of `type` held by `rec`. */
export async function materialFrom(type: CaType, rec: CaRecord, o: KeySetNaming): Promise<CaKeyMaterial> {
  const base = { entry: rec.name, createdAt: rec.createdAt };
  switch (kindOf(type)) {
    case "ssh": {
      const privateKey = privateKeyFromPem(need(rec.sshKeyPem, rec.name, "ssh key"));
      return {
        ...base,
        kind: "ssh",
        privateKey,
        signer: new SshCertSigner(privateKey),
        line: formatSshPublicKey(createPublicKey(privateKey), sshComment(type, o.clusterName)),
        fingerprint: sshFingerprint(privateKey),
      };
    }
    case "x509": {
      const x = need(rec.x509, rec.name, "x509");
      parseCertificatePem(x.certPem);
      const privateKey = privateKeyFromPem(x.keyPem);
      return {
        ...base,
        kind: "x509",
        issuer: { certPem: x.certPem, privateKey },
        fingerprint: spkiFingerprint(privateKey),
      };
    }
    case "jwt": {
      const pems = need(rec.jwtKeyPems, rec.name, "JWT keys");
      if (pems.length === 0) throw new BadParameterError(`stored CA ${rec.name} has no JWT keys`);
      return {
        ...base,
        kind: "jwt",
        keys: await Promise.all(pems.map((p) => jwtKeyFrom(privateKeyFromPem(p)))),
      };
    }
  }
}

/** A fresh record holding one new key of `type` (what a rotation's init adds). */
export async function freshRecord(
  type: CaType,
  name: string,
  generation: number,
  o: KeySetNaming,
  withJwt = false,
): Promise<CaRecord> {
  const createdAt = o.clock.now().toISOString();
  switch (kindOf(type)) {
    case "ssh":
      return {
        version: 1,
        name,
        createdAt,
        sshKeyPem: privateKeyToPem(generateSshKeyPair("ed25519").privateKey),
      };
    case "x509": {
      const { privateKey } = generateEcdsaP256();
      const certPem = await createRootCa({
        privateKey,
        commonName: x509CommonName(type, o.clusterName, generation),
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
    }
    case "jwt":
      return {
        version: 1,
        name,
        createdAt,
        jwtKeyPems: [privateKeyToPem((await generateJwtKey()).privateKey)],
      };
  }
}

/** The published form of a key: the CaKey rows of ListCertAuthorities (one per JWT key). */
export function publishedKeys(m: CaKeyMaterial): { fingerprint: string; publicKey: string }[] {
  switch (m.kind) {
    case "ssh":
      return [{ fingerprint: m.fingerprint, publicKey: m.line }];
    case "x509":
      return [{ fingerprint: m.fingerprint, publicKey: m.issuer.certPem }];
    case "jwt":
      return m.keys.map((k) => ({
        fingerprint: spkiFingerprint(k.privateKey),
        publicKey: JSON.stringify(publicJwk(k)),
      }));
  }
}
