// Layers in front of the proxy's AuthApi (and the terminal's): a handle that follows whichever
// client is current, and layers that answer some methods themselves (session cache, lock guard,
// inventory copy) and hand every other read to the layer below. JavaScript Proxies: the clients
// are classes with many methods, and no library offers either.
//
// Each Proxy's target is an empty object, never the layer below: V8 checks every answer of a
// `get` trap against the target's own property, and with a layer below as target (itself a Proxy)
// that check walked down every layer on each call.

/** Forwards every property read to whatever `current()` is now (methods bound to it). */
export function forwarding<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get(_target, prop) {
      const target = current();
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * `below` with the properties of `own` answered by the layer: its methods replace `below`'s, and
 * a symbol may name the layer itself (inventoryOf). Every other read goes to `below`, methods
 * bound to it, read at each call (`below` may be a forwarding handle).
 */
export function layered<T extends object>(
  below: T,
  own: { readonly [K in keyof T]?: T[K] } & { readonly [key: symbol]: unknown },
): T {
  const answered = new Map<PropertyKey, unknown>(Reflect.ownKeys(own).map((k) => [k, Reflect.get(own, k)]));
  return new Proxy({} as T, {
    get(_target, prop) {
      if (answered.has(prop)) return answered.get(prop);
      const value: unknown = Reflect.get(below, prop, below);
      return typeof value === "function" ? value.bind(below) : value;
    },
  });
}
