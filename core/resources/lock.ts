// Lock: from now until `expires` (or until removed) its target is refused everywhere: a user, a
// role (every identity holding it), a bot, a node (logins to it and its own calls to auth) or one
// certificate by its key id. Created by admins (`svcctl lock add`, kubectl) and by auth itself
// (a stolen bot credential); docs/locks.md.
import { type Static, Type } from "@sinclair/typebox";
import { baseStatusProperties, TimestampSchema } from "./meta.ts";
import { cel } from "./schema-kit.ts";

/** The target fields; exactly one is set (CEL rule below, mirrored in rules.ts). */
export const LOCK_TARGET_FIELDS = ["user", "role", "bot", "node", "key_id"] as const;
export type LockTargetField = (typeof LOCK_TARGET_FIELDS)[number];

const name = () => Type.String({ minLength: 1, maxLength: 253 });

export const LockTargetSchema = Type.Object(
  {
    user: Type.Optional(name()),
    role: Type.Optional(name()),
    bot: Type.Optional(name()),
    node: Type.Optional(name()),
    /** A certificate's key id, as sshd logs it (user:<name>:session:<ref>, bot:<name>:gen:<n>). */
    key_id: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  },
  {
    additionalProperties: false,
    ...cel({
      rule: "[has(self.user), has(self.role), has(self.bot), has(self.node), has(self.key_id)].filter(x, x).size() == 1",
      message: "a lock target names exactly one of user, role, bot, node, key_id",
    }),
  },
);
export type LockTargetSpec = Static<typeof LockTargetSchema>;

export const LockSpecSchema = Type.Object(
  {
    target: LockTargetSchema,
    /** Shown to whoever is refused; never a secret. */
    message: Type.Optional(Type.String({ maxLength: 1024 })),
    /** RFC 3339; absent: until the Lock is removed. */
    expires: Type.Optional(TimestampSchema),
    /** Who created it ("auth" for locks auth creates itself); absent for applied manifests. */
    created_by: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);
export type LockSpec = Static<typeof LockSpecSchema>;

export const LockStatusSchema = Type.Object({ ...baseStatusProperties }, { additionalProperties: false });
export type LockStatus = Static<typeof LockStatusSchema>;

/** The one target field a Lock sets, or a reason it does not set exactly one. */
export function lockTargetField(target: LockTargetSpec): LockTargetField | string {
  const set = LOCK_TARGET_FIELDS.filter((f) => target[f] !== undefined);
  if (set.length === 1 && set[0]) return set[0];
  return "spec.target: names exactly one of user, role, bot, node, key_id";
}
