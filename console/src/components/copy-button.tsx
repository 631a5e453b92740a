import { useState } from "preact/hooks";

/** Copies `text` to the clipboard and says so for two seconds. */
export function CopyButton(props: { text: string; label?: string; class?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 2000);
  };
  return (
    <button type="button" class={props.class ?? "secondary copy"} onClick={copy}>
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : (props.label ?? "Copy")}
      <span class="visually-hidden" aria-live="polite">
        {state === "copied" ? "Copied to the clipboard" : ""}
      </span>
    </button>
  );
}
