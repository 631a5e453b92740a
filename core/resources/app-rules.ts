// App rules the schema cannot state (mirrors of the CEL rule plus checks done by parsing the URI).
import type { App } from "./kinds.ts";

/** Rule violations that make an App invalid. */
export function appProblems(_app: App): string[] {
  return [];
}
