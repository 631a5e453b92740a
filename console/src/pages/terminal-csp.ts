// xterm.js writes its dynamic CSS (theme colours, cell size, font size, scrollbar) into <style>
// elements it creates, which the console's CSP (style-src 'self', no 'unsafe-inline') blocks, so
// the terminal would lose its colours and layout. While xterm builds its DOM, its <style>
// elements are swapped for inert <template> elements, and their text is mirrored into
// constructable style sheets (document.adoptedStyleSheets: CSSOM, which the CSP allows). Its
// DOM renderer also sets per-cell colours with setAttribute("style", ...) (24-bit colours, the
// selection): while a terminal is open, such calls go through element.style.cssText (CSSOM, the
// same declarations). Neither weakens the policy against injected markup, which never goes
// through these functions.

/** Runs `build` (term.open and the first fit) with xterm's styles made CSP-safe until dispose. */
export function withCspSafeStyles<T>(
  container: HTMLElement,
  build: () => T,
): { result: T; dispose: () => void } {
  const sheets = new Map<Element, CSSStyleSheet>();
  const sync = (): void => {
    for (const el of container.querySelectorAll("template[data-xterm-style]")) {
      let sheet = sheets.get(el);
      if (!sheet) {
        sheet = new CSSStyleSheet();
        sheets.set(el, sheet);
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
      }
      sheet.replaceSync(el.textContent ?? "");
    }
    for (const [el, sheet] of sheets) {
      if (el.isConnected) continue;
      sheets.delete(el);
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
    }
  };
  const observer = new MutationObserver(sync);
  observer.observe(container, { subtree: true, childList: true, characterData: true });

  const original = document.createElement;
  document.createElement = function createElement(
    this: Document,
    tag: string,
    options?: ElementCreationOptions,
  ): HTMLElement {
    if (tag.toLowerCase() !== "style") return original.call(this, tag, options);
    const stand = original.call(this, "template");
    stand.dataset["xtermStyle"] = "";
    return stand;
  } as typeof document.createElement;
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function setStyleSafely(this: Element, name: string, value: string): void {
    if (name.toLowerCase() === "style" && this instanceof HTMLElement) this.style.cssText = value;
    else setAttribute.call(this, name, value);
  };
  let result: T;
  try {
    result = build();
  } finally {
    document.createElement = original;
  }
  sync();
  return {
    result,
    dispose: () => {
      Element.prototype.setAttribute = setAttribute;
      observer.disconnect();
      const gone = new Set(sheets.values());
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => !gone.has(s));
      sheets.clear();
    },
  };
}
