// Two validators: query strings and path params arrive as text and are coerced ("50" -> 50);
// JSON bodies are not coerced, so a number where a string belongs is a 400. Neither removes
// unknown properties: a schema with additionalProperties false refuses them.
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? "array" : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  return ({ schema, httpPart }) => {
    const ajv = httpPart === "body" ? strict : coercing;
    return ajv.compile(schema as object);
  };
}
