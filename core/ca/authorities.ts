// The cluster's certificate authorities, loaded from a CaKeyStore or created there exactly once.
// Only auth holds this object (it carries private keys); everyone else gets publicMaterial().
// Each CA type is a key set that rotates in phases (core/ca/rotation.ts): the signer objects
// below are stable and always sign with the key the current phase names, so code that captured
// `cas.sshUserSigner` or `cas.hostCa` at start follows a rotation without being rebuilt.
import { createPublicKey } from "node:crypto";
import { SSH_USER_CERT_TTL_SECONDS } from "../certs/key-ids.ts";
import { type SshCertificate, type SshCertificateRequest, SshCertSigner } from "../certs/ssh-cert.ts";
import { parseSpiffeId, pemToDers, TLS_CLIENT_TTL_SECONDS, type X509Issuer } from "../certs/x509.ts";
import type { Clock } from "../clock.ts";
import { parseDuration } from "../duration.ts";
import { BadParameterError } from "../errors.ts";
import type { JsonObject, JsonValue } from "../json.ts";
import { MAX_CERT_TTL } from "../resources/agent-identity.ts";
import { type JwtKey, jwks, publicJwk, signJwt } from "./jwt.ts";
import { CA_NAMES, type KindOf } from "./key-set.ts";
import { type KeySet, loadKeySet, type PhaseChange, type RotateRequest } from "./key-set-state.ts";
import type { CaKeyStore } from "./key-store.ts";
import type { CaType, Phase } from "./rotation.ts";
import type { RotationStateStore } from "./rotation-store.ts";

export { CA_NAMES };

export const JWT_SVID_TTL_SECONDS = 300;
/** The longest JWT-SVID auth signs (server/auth/spiffe.ts caps requests here). */
export const JWT_SVID_MAX_TTL_SECONDS = 3600;
export const APP_JWT_TTL_SECONDS = 300;
export const SPIFFE_REFRESH_HINT_SECONDS = 300;
/** X.509 SVIDs are capped at a day (server/auth/spiffe.ts). */
export const SPIFFE_SVID_MAX_TTL_SECONDS = 24 * 3600;

export interface CertificateAuthoritiesOptions {
  clusterName: string;
  /** SPIFFE trust domain, e.g. the cluster name */
  trustDomain: string;
  clock: Clock;
  /** where the rotation phases live (default: memory, lost on restart) */
  rotationStore?: RotationStateStore;
  /** node certificate lifetime (auth.node_cert_ttl): bounds host CA certificates */
  nodeCertTtlSeconds?: number;
  /** overrides of the longest certificate lifetime per CA type (defaultLifetimes) */
  lifetimes?: Partial<Record<CaType, number>>;
}

/** The longest lifetime of anything each CA signs: how long an old key's certificates outlive a switch. */
export function defaultLifetimes(nodeCertTtlSeconds: number): Record<CaType, number> {
  const bot = parseDuration(MAX_CERT_TTL) / 1000;
  return {
    user_ssh: Math.max(SSH_USER_CERT_TTL_SECONDS, bot),
    host_ssh: nodeCertTtlSeconds,
    host_x509: Math.max(nodeCertTtlSeconds, TLS_CLIENT_TTL_SECONDS, bot),
    spiffe: SPIFFE_SVID_MAX_TTL_SECONDS,
    jwt: JWT_SVID_MAX_TTL_SECONDS,
    app: APP_JWT_TTL_SECONDS,
  };
}

export interface CaPublicMaterial {
  /** OpenSSH public key line for TrustedUserCAKeys (the key that signs now) */
  sshUserCa: string;
  /** OpenSSH public key line for `@cert-authority` in known_hosts (the key that signs now) */
  sshHostCa: string;
  hostCaPem: string;
  spiffeCaPem: string;
  /** every trusted key, the signing one first (several during a rotation) */
  sshUserCas: string[];
  sshHostCas: string[];
  hostCaPems: string[];
  spiffeCaPems: string[];
  spiffeJwks: { keys: JsonObject[] };
  appJwks: { keys: JsonObject[] };
}

/** An SshCertSigner that signs with whichever key the CA's phase names at the time of the call. */
class PhasedSshSigner extends SshCertSigner {
  readonly #current: () => SshCertSigner;
  constructor(current: () => SshCertSigner, initialKey: ConstructorParameters<typeof SshCertSigner>[0]) {
    super(initialKey);
    this.#current = current;
  }
  override get publicKeyBlob(): Buffer {
    return this.#current().publicKeyBlob;
  }
  override sign(req: SshCertificateRequest): SshCertificate {
    return this.#current().sign(req);
  }
}

/** An X509Issuer whose fields follow the phase. issueLeaf reads both before its first await. */
function phasedIssuer(current: () => X509Issuer): X509Issuer {
  return {
    get certPem() {
      return current().certPem;
    },
    get privateKey() {
      return current().privateKey;
    },
  };
}

export class CertificateAuthorities {
  readonly clusterName: string;
  readonly trustDomain: string;
  readonly sshUserSigner: SshCertSigner;
  readonly sshHostSigner: SshCertSigner;
  readonly hostCa: X509Issuer;
  readonly spiffeCa: X509Issuer;
  /** every CA type's keys and rotation phase; rotate(), reload() and status() live there */
  readonly keySet: KeySet;
  readonly #clock: Clock;

  private constructor(o: CertificateAuthoritiesOptions, keySet: KeySet) {
    this.clusterName = o.clusterName;
    this.trustDomain = o.trustDomain;
    this.#clock = o.clock;
    this.keySet = keySet;
    this.sshUserSigner = new PhasedSshSigner(
      () => this.#signing("user_ssh").signer,
      this.#signing("user_ssh").privateKey,
    );
    this.sshHostSigner = new PhasedSshSigner(
      () => this.#signing("host_ssh").signer,
      this.#signing("host_ssh").privateKey,
    );
    this.hostCa = phasedIssuer(() => this.#signing("host_x509").issuer);
    this.spiffeCa = phasedIssuer(() => this.#signing("spiffe").issuer);
  }

  #signing<T extends CaType>(type: T): KindOf<T> {
    return this.keySet.signing(type);
  }
  #trusted<T extends CaType>(type: T): KindOf<T>[] {
    return this.keySet.trusted(type);
  }

  /** Loads every CA from `store`, creating the missing ones once (never overwriting), and the rotation phases. */
  static async loadOrCreate(
    store: CaKeyStore,
    o: CertificateAuthoritiesOptions,
  ): Promise<CertificateAuthorities> {
    parseSpiffeId(`spiffe://${o.trustDomain}/x`);
    const keySet = await loadKeySet(store, o, defaultLifetimes);
    return new CertificateAuthorities(o, keySet);
  }

  // ---- rotation (delegated to the key set) ----------------------------------------------------

  /** Every CA type with its phase and keys (public material only). */
  status() {
    return this.keySet.status();
  }
  /** `fn` runs after any phase or key change, including one another replica made. */
  onChange(fn: () => void): () => void {
    return this.keySet.onChange(fn);
  }
  phase(type: CaType): Phase {
    return this.keySet.state(type).phase;
  }
  /** A manual phase change or the start of an automatic rotation (compare-and-swap on the state). */
  rotate(r: RotateRequest): Promise<PhaseChange> {
    return this.keySet.rotate(r);
  }
  /** Re-reads the rotation state (another replica's change); true when it changed. */
  reload(): Promise<boolean> {
    return this.keySet.reload();
  }
  /** Automatic mode: moves every CA whose phase is due. */
  advanceDue(who?: string): Promise<PhaseChange[]> {
    return this.keySet.advanceDue(who);
  }

  // ---- what is trusted ------------------------------------------------------------------------

  /** Every user CA key line to trust (TrustedUserCAKeys), the signing one first. */
  trustedUserCaKeys(): string[] {
    return this.#trusted("user_ssh").map((k) => k.line);
  }
  /** Every host CA key line to trust (`@cert-authority`), the signing one first. */
  trustedHostCaKeys(): string[] {
    return this.#trusted("host_ssh").map((k) => k.line);
  }
  /** Every host X.509 CA certificate to trust (TLS between services, nodes and auth). */
  trustedHostCaPems(): string[] {
    return this.#trusted("host_x509").map((k) => k.issuer.certPem);
  }
  /** Every SPIFFE X.509 CA certificate to trust. */
  trustedSpiffeCaPems(): string[] {
    return this.#trusted("spiffe").map((k) => k.issuer.certPem);
  }

  get sshUserCaPublicKey(): string {
    return this.#signing("user_ssh").line;
  }
  get sshHostCaPublicKey(): string {
    return this.#signing("host_ssh").line;
  }

  /** JWT-SVID keys: the first signs, all are published. */
  get spiffeJwtKeys(): readonly JwtKey[] {
    return this.#trusted("jwt").flatMap((k) => k.keys);
  }
  /** App-access JWT keys: the first signs, all are published. */
  get appJwtKeys(): readonly JwtKey[] {
    return this.#trusted("app").flatMap((k) => k.keys);
  }

  /** JWKS for JWT-SVIDs (served at /workload-identity/jwt-jwks.json). */
  spiffeJwks(): { keys: JsonObject[] } {
    return jwks(this.spiffeJwtKeys);
  }

  /** JWKS for app-access assertions (served at /workload-identity/app-jwt-jwks.json, `svcctl export --type app-jwt`). */
  appJwks(): { keys: JsonObject[] } {
    return jwks(this.appJwtKeys);
  }

  /**
   * SPIFFE trust bundle (a JWKS with x509-svid and jwt-svid entries) for /v1/webapi/spiffe/bundle.json.
   * Every trusted CA is in it; spiffe_sequence grows with every phase change of either SPIFFE CA.
   */
  spiffeBundle(o: { sequence?: number; refreshHintSeconds?: number } = {}): JsonObject {
    const x509Entries: JsonValue[] = this.#trusted("spiffe").map((k) => {
      const caDer = pemToDers(k.issuer.certPem)[0] as Buffer;
      const caJwk = createPublicKey(k.issuer.privateKey).export({ format: "jwk" });
      return {
        kty: String(caJwk.kty),
        crv: String(caJwk.crv),
        x: String(caJwk.x),
        y: String(caJwk.y),
        use: "x509-svid",
        x5c: [caDer.toString("base64")],
      };
    });
    const keys: JsonValue[] = [...x509Entries, ...this.spiffeJwtKeys.map((k) => publicJwk(k, "jwt-svid"))];
    const sequence = this.keySet.state("spiffe").sequence + this.keySet.state("jwt").sequence - 1;
    return {
      keys,
      spiffe_sequence: o.sequence ?? sequence,
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
      sshUserCas: this.trustedUserCaKeys(),
      sshHostCas: this.trustedHostCaKeys(),
      hostCaPems: this.trustedHostCaPems(),
      spiffeCaPems: this.trustedSpiffeCaPems(),
      spiffeJwks: this.spiffeJwks(),
      appJwks: this.appJwks(),
    };
  }

  /** Keeps private keys out of logs and JSON dumps. */
  toJSON(): JsonObject {
    return { clusterName: this.clusterName, trustDomain: this.trustDomain };
  }
}
