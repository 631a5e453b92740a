// User: roles and traits. Credentials (password hash, WebAuthn devices) are runtime state kept
// by auth in the backend, never part of the resource.
import { type Static, Type } from "@sinclair/typebox";
import { baseStatusProperties } from "./meta.ts";
import { StringMap } from "./schema-kit.ts";

export const UserSpecSchema = Type.Object(
  {
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 253 })),
    traits: Type.Optional(StringMap(Type.Array(Type.String({ maxLength: 1024 })))),
    local_login: Type.Optional(Type.Boolean({ default: true })),
    disabled: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type UserSpec = Static<typeof UserSpecSchema>;

export const UserStatusSchema = Type.Object({ ...baseStatusProperties }, { additionalProperties: false });
export type UserStatus = Static<typeof UserStatusSchema>;
