// Input hygiene shared by the handlers.

/** True when `s` holds a C0 control character or DEL (never valid in names we store or log). */
export function hasControlChars(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}
