// Small TypeBox helpers that keep every schema inside the Kubernetes structural-schema subset:
// string enums as one `{type: string, enum}` (not an anyOf of literals) and maps as
// `additionalProperties` (not TypeBox's patternProperties), so the CRD generator can emit the
// schema as it is.
import {
  FormatRegistry,
  Kind,
  type SchemaOptions,
  type Static,
  type TObject,
  type TRecord,
  type TSchema,
  type TString,
  type TUnsafe,
  Type,
  TypeRegistry,
} from "@sinclair/typebox";

const STRING_ENUM = "SvcStringEnum";

if (!TypeRegistry.Has(STRING_ENUM)) {
  TypeRegistry.Set(STRING_ENUM, (schema: { enum?: unknown[] }, value) => {
    return typeof value === "string" && Array.isArray(schema.enum) && schema.enum.includes(value);
  });
}

// RFC 3339 date-time with a mandatory zone, the form Kubernetes uses for timestamps.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has("date-time")) {
  FormatRegistry.Set("date-time", (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));
}

/** A string restricted to the given values; Static type is the union of them. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, [Kind]: STRING_ENUM, type: "string", enum: [...values] });
}

/** An object used as a map from string keys to `value` (Kubernetes: additionalProperties). */
export function StringMap<V extends TSchema>(value: V, options: SchemaOptions = {}): TRecord<TString, V> {
  const schema: TObject = Type.Object({}, { ...options, additionalProperties: value });
  return schema as unknown as TRecord<TString, V>;
}

/** A CEL rule for the CRD (x-kubernetes-validations); runtime validation mirrors it in JS. */
export interface CelRule {
  rule: string;
  message: string;
}

export function cel(...rules: CelRule[]): { "x-kubernetes-validations": CelRule[] } {
  return { "x-kubernetes-validations": rules };
}

export type { Static };
