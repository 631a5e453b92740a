// Bad input at the gRPC layer, for every RPC at once:
// - Requests that do not decode (wrong wire types, truncated fields, random bytes) are the
//   caller's mistake: INVALID_ARGUMENT. grpc-js answers a deserializer that throws with INTERNAL
//   and no way to change it, so the deserializers are wrapped to hand on a marker instead of
//   throwing, and an interceptor placed after authentication refuses a call carrying it before
//   any handler sees it.
// - Status messages are bounded: a handler quoting a 1 MiB request field in its error would send
//   a grpc-message trailer bigger than any HTTP/2 peer accepts, and the client would see the
//   connection fail (INTERNAL) instead of the status.
import {
  Metadata,
  ServerInterceptingCall,
  type ServerInterceptor,
  ServerListenerBuilder,
  type ServiceDefinition,
  status,
} from "@grpc/grpc-js";

const MALFORMED: unique symbol = Symbol("malformed request");
type Malformed = { [MALFORMED]: true };

const isMalformed = (message: unknown): message is Malformed =>
  typeof message === "object" && message !== null && MALFORMED in message;

/** `definition` with deserializers that return a marker instead of throwing on bad bytes. */
export function guardDecoding<D extends ServiceDefinition>(definition: D): D {
  const out: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(definition)) {
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return method.requestDeserialize(bytes);
        } catch {
          return { [MALFORMED]: true } satisfies Malformed;
        }
      },
    };
  }
  return out as D;
}

/** Longest status message sent (characters); longer ones are cut with an ellipsis. */
export const MAX_STATUS_DETAILS = 1024;

const bounded = (details: string | undefined): string | undefined =>
  details !== undefined && details.length > MAX_STATUS_DETAILS
    ? `${details.slice(0, MAX_STATUS_DETAILS - 1)}…`
    : details;

/**
 * Ends a call whose request did not decode with INVALID_ARGUMENT (see guardDecoding) and bounds
 * the status messages of the calls it wraps.
 */
export const badInputInterceptor: ServerInterceptor = (_method, call) => {
  let refused = false;
  const listener = new ServerListenerBuilder()
    .withOnReceiveMessage((message, next) => {
      if (refused) return;
      if (!isMalformed(message)) {
        next(message);
        return;
      }
      refused = true;
      call.sendStatus({
        code: status.INVALID_ARGUMENT,
        details: "the request message is not a valid protobuf encoding of its type",
        metadata: new Metadata(),
      });
    })
    .withOnReceiveHalfClose((next) => {
      if (!refused) next();
    })
    .build();
  return new ServerInterceptingCall(call, {
    start: (next) => next(listener),
    sendStatus: (s, next) => {
      const details = bounded(s.details);
      next(details === undefined ? s : { ...s, details });
    },
  });
};
