// JSON schemas shared by the routes (TypeBox: one definition gives the validator, the response
// serializer, the OpenAPI document and the TypeScript type).
import { type TSchema, Type } from "@sinclair/typebox";

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: "machine-readable code, e.g. bad_parameter, not_authenticated" }),
      message: Type.String(),
    }),
  },
  { description: "The one error body of the web API" },
);

/** Response entries for the error statuses a route can answer. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = ErrorBody;
  return out;
}

/**
 * The errors every route may answer: bad input (400), a body too large or not JSON (413, 415), a
 * URL or request head too long (414, 431), our own failure (500), auth unreachable (503).
 * test/proxy-errors.test.ts walks the OpenAPI document to hold every route to this.
 */
export const commonErrors = [400, 413, 414, 415, 431, 500, 503];

export const Timestamp = Type.String({ format: "date-time", description: "RFC 3339" });

// One paging policy with gRPC (docs/web-api.md "Lists and paging"): refused, never clamped.
export const DEFAULT_LIMIT = 50;
export const Limit = Type.Integer({
  minimum: 1,
  maximum: 500,
  default: DEFAULT_LIMIT,
  description: "page size, 1..500, default 50 (0, negative or above 500: 400 bad_parameter)",
});
/** The gRPC field is an int32: a larger offset would wrap around instead of failing. */
export const MAX_OFFSET = 2_147_483_647;
export const Offset = Type.Integer({
  minimum: 0,
  maximum: MAX_OFFSET,
  default: 0,
  description: `items to skip, 0..${MAX_OFFSET}, default 0 (outside: 400 bad_parameter)`,
});

/** WebAuthn option objects are produced by @simplewebauthn/server in auth and passed through. */
export const WebAuthnRequestOptions = Type.Object(
  { challenge: Type.String(), rpId: Type.Optional(Type.String()) },
  { additionalProperties: true, description: "PublicKeyCredentialRequestOptionsJSON" },
);
export const WebAuthnCreationOptions = Type.Object(
  { challenge: Type.String(), rp: Type.Object({ id: Type.Optional(Type.String()), name: Type.String() }) },
  { additionalProperties: true, description: "PublicKeyCredentialCreationOptionsJSON" },
);

const Attachment = Type.Union([Type.Literal("platform"), Type.Literal("cross-platform")]);
const Transport = Type.Union(
  ["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"].map((t) => Type.Literal(t)),
);

/** The challenge ids auth hands out and accepts (server/auth/webauthn.ts). */
export const ChallengeId = Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" });

/** For routes that take a session: OpenAPI security requirement. */
export const sessionSecurity: { security: Array<Record<string, string[]>> } = {
  security: [{ bearer: [] }, { cookie: [] }],
};

const B64Url = Type.String({ minLength: 1, maxLength: 16_384, pattern: "^[A-Za-z0-9_-]+={0,2}$" });

/** What a browser's PublicKeyCredential.toJSON() gives for navigator.credentials.get(). */
export const AssertionCredential = Type.Object(
  {
    id: B64Url,
    rawId: B64Url,
    type: Type.Literal("public-key"),
    response: Type.Object(
      {
        clientDataJSON: B64Url,
        authenticatorData: B64Url,
        signature: B64Url,
        userHandle: Type.Optional(Type.String({ maxLength: 1024 })),
      },
      { additionalProperties: true },
    ),
    clientExtensionResults: Type.Object({}, { additionalProperties: true }),
    authenticatorAttachment: Type.Optional(Attachment),
  },
  { additionalProperties: false },
);

/** What a browser's PublicKeyCredential.toJSON() gives for navigator.credentials.create(). */
export const AttestationCredential = Type.Object(
  {
    id: B64Url,
    rawId: B64Url,
    type: Type.Literal("public-key"),
    response: Type.Object(
      {
        clientDataJSON: B64Url,
        attestationObject: B64Url,
        transports: Type.Optional(Type.Array(Transport, { maxItems: 8 })),
      },
      { additionalProperties: true },
    ),
    clientExtensionResults: Type.Object({}, { additionalProperties: true }),
    authenticatorAttachment: Type.Optional(Attachment),
  },
  { additionalProperties: false },
);

export const Jwk = Type.Object(
  {
    kty: Type.String(),
    kid: Type.Optional(Type.String()),
    use: Type.Optional(Type.String()),
    alg: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: "public JSON Web Key" },
);
export const JwkSet = Type.Object({ keys: Type.Array(Jwk) });
